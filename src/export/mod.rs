//! Writing what fabricopt builds in formats other tools read, and SVG plots.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};

pub mod plot;
pub mod routes;
pub mod topology;

/// Writes `contents` to a temporary file next to `path`, then renames it over `path`, so that
/// readers never see a half-written file. The first write into a directory also removes the
/// temporary files that killed runs left there ([`remove_stale_temporaries`]).
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    static CLEANED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let Some(name) = path.file_name() else {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "is not a file name to write to".into(),
        });
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    {
        let mut cleaned = CLEANED.lock().unwrap_or_else(PoisonError::into_inner);
        if !cleaned.iter().any(|d| d == dir) {
            remove_stale_temporaries(dir);
            cleaned.push(dir.to_path_buf());
        }
    }
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Removes the temporary files of [`write_atomically`] (`.<name>.<pid>.<n>.tmp`) in `dir`
/// whose writer is no longer running: a run killed between creating and renaming one leaves
/// it behind. A file of a live process (or, where process ids cannot be checked, any file
/// younger than a day) is left alone. Best effort: failures are ignored. Returns how many
/// files were removed.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = temporary_writer_pid(&name.to_string_lossy()) else {
            continue;
        };
        if writer_may_be_alive(pid, &entry) {
            continue;
        }
        if std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a `.<name>.<pid>.<n>.tmp` file name.
fn temporary_writer_pid(file_name: &str) -> Option<u32> {
    let inner = file_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = inner.rsplitn(3, '.');
    let counter = parts.next()?;
    let pid = parts.next()?;
    let _name = parts.next().filter(|n| !n.is_empty())?;
    counter.parse::<usize>().ok()?;
    pid.parse().ok()
}

fn writer_may_be_alive(pid: u32, entry: &std::fs::DirEntry) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc/self");
    if proc_root.exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    const DAY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < DAY)
}
