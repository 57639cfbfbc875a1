//! Writing what fabricopt builds in formats other tools read, and SVG plots.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

pub mod plot;
pub mod routes;
pub mod topology;

/// Writes `contents` to a temporary file next to `path`, then renames it over `path`, so that
/// readers never see a half-written file.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
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
