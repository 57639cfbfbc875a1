//! Writing files safely: output paths checked before the work, every write atomic (temporary
//! file, fsync, rename), and the temporaries of killed runs removed. Every module that
//! writes a file goes through here.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};

/// Checks, before any work, that [`write_atomically`] will be able to write `path`: it is not a
/// folder, its folder exists and takes new files. The check creates and removes a probe file
/// of the kind the write itself creates, so permissions, read-only mounts and a file standing
/// where a folder should be are all caught.
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::File {
            path: path.to_path_buf(),
            reason,
        })
    };
    if path.is_dir() {
        return fail("is a folder, not a file to write to".into());
    }
    if path.file_name().is_none() {
        return fail("is not a file name to write to".into());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.exists() {
        return fail(format!("folder {} does not exist", dir.display()));
    }
    if !dir.is_dir() {
        return fail(format!("{} is not a folder", dir.display()));
    }
    probe(dir).or_else(|e| fail(format!("cannot write in {}: {e}", dir.display())))
}

/// Checks, before any work, that `dir` is a folder that takes new files, or that it can be
/// created (`create_dir_all`): its nearest existing ancestor is a folder that takes new files.
pub(crate) fn check_dir_writable(dir: &Path) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::File {
            path: dir.to_path_buf(),
            reason,
        })
    };
    let mut existing = dir;
    while !existing.as_os_str().is_empty() && !existing.exists() {
        existing = existing.parent().unwrap_or(Path::new(""));
    }
    let existing = if existing.as_os_str().is_empty() {
        Path::new(".")
    } else {
        existing
    };
    if !existing.is_dir() {
        return fail(format!("{} is not a folder", existing.display()));
    }
    probe(existing).or_else(|e| fail(format!("cannot write in {}: {e}", existing.display())))
}

/// Creates and removes a temporary file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let tmp = dir.join(format!(
        ".fabricopt-write-check.{}.{}.tmp",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    std::fs::remove_file(&tmp)
}

static PROBES: AtomicUsize = AtomicUsize::new(0);

/// Writes `contents` to a temporary file next to `path`, then renames it over `path`, so that
/// readers never see a half-written file. The first write into a directory also removes the
/// temporary files that killed runs left there ([`remove_stale_temporaries`]).
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomically_with(path, |w| w.write_all(contents))
}

/// [`write_atomically`] with the contents streamed by `write` into a buffered writer of the
/// temporary file, so that a large file (a 1,024-router table's CSV is 500 MB) is never held in
/// memory whole.
pub(crate) fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    // Under MPI only rank 0 writes (src/cluster/): the other ranks compute the same contents.
    if !crate::cluster::is_root() {
        return Ok(());
    }
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
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, f);
        write(&mut buffered)?;
        let f = buffered.into_inner().map_err(|e| e.into_error())?;
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
pub(crate) fn remove_stale_temporaries(dir: &Path) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_are_checked_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        assert!(check_writable(&dir.path().join("new.svg")).is_ok());
        assert!(check_writable(&file).is_ok());
        let err = check_writable(&dir.path().join("missing/x.svg"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let err = check_writable(&file.join("x.svg")).unwrap_err().to_string();
        assert!(err.contains("is not a folder"), "{err}");
        let err = check_writable(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is a folder"), "{err}");
        // Folders: existing, or creatable below an existing folder, not below a file.
        assert!(check_dir_writable(dir.path()).is_ok());
        assert!(check_dir_writable(&dir.path().join("a/b/c")).is_ok());
        let err = check_dir_writable(&file.join("a")).unwrap_err().to_string();
        assert!(err.contains("is not a folder"), "{err}");
        // The probe files are gone.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }
}
