//! The crate's error type. Every message names the offending field (or file) and the reason,
//! so that the CLI can print it on one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A field of a spec, problem file or genome has a bad value.
    #[error("{field}: {reason}")]
    Field { field: String, reason: String },
    /// A file could not be read or written. (The I/O error is part of the message rather than
    /// a `source`, so that chained printing does not repeat it.)
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A file's content is malformed; `location` is e.g. `line 3` or a field path.
    #[error("{}: {location}: {reason}", path.display())]
    Parse {
        path: PathBuf,
        location: String,
        reason: String,
    },
    /// Something in a file is wrong as a whole (e.g. an imported graph is disconnected).
    #[error("{}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Field {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }

    pub fn parse(
        path: impl Into<PathBuf>,
        location: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Error::Parse {
            path: path.into(),
            location: location.into(),
            reason: reason.into(),
        }
    }

    /// Places a field error under a table of the problem file (`dims` -> `topology.dims`);
    /// other errors pass unchanged.
    pub(crate) fn prefix_field(self, table: &str) -> Self {
        match self {
            Error::Field { field, reason } => Error::Field {
                field: format!("{table}.{field}"),
                reason,
            },
            other => other,
        }
    }

    /// Attach a file to an error that was raised while interpreting that file's content.
    pub(crate) fn in_file(self, path: impl Into<PathBuf>) -> Self {
        match self {
            Error::Field { field, reason } => Error::Parse {
                path: path.into(),
                location: field,
                reason,
            },
            other => other,
        }
    }
}
