//! The one error type of session storage.

use std::io;
use std::path::PathBuf;

/// Something went wrong storing or reading a session. Every message is one
/// sentence a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Neither `$XDG_DATA_HOME` nor `$HOME` is set to an absolute path.
    /// Fatal for this start: set one of them.
    #[error("cannot find a data directory: set XDG_DATA_HOME or HOME to an absolute path")]
    NoDataDir,

    /// A directory or file could not be created or opened. Fatal for the
    /// session being created; retryable once the cause is fixed.
    #[error("cannot create {path}: {source}; check that the directory is writable")]
    Create { path: PathBuf, source: io::Error },

    /// A file could not be read. Retryable.
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },

    /// `meta.json` is not valid. Fatal for that session directory.
    #[error("{path} is not valid session metadata ({source}); the session cannot be resumed")]
    Meta { path: PathBuf, source: serde_json::Error },

    /// Appending to the journal failed (disk full, I/O error). Retryable:
    /// the writer stays usable and the next append tries again. `repeated`
    /// is true when the previous append failed too, so a caller can show
    /// the problem once rather than on every line.
    #[error(
        "cannot write the session journal {path}: {source}; unixagent goes on without it until space or access returns"
    )]
    JournalWrite { path: PathBuf, source: io::Error, repeated: bool },

    /// The checkpoint side file could not be replaced. Retryable and
    /// harmless: the journal holds the checkpoint line, and resuming finds
    /// it by scanning from the end instead.
    #[error("cannot write {path}: {source}; resuming this session will take a little longer")]
    Checkpoint { path: PathBuf, source: io::Error },

    /// The session index could not be updated: disk full, an I/O error, or
    /// another process held it too long. Retryable, and never fatal to a
    /// session: the journal keeps the facts and a reindex restores them.
    #[error(
        "cannot update the session index {path}: {source}; sessions go on, and a reindex rebuilds it from the journals"
    )]
    IndexWrite { path: PathBuf, source: io::Error },

    /// A session directory could not be removed, or was not removed
    /// because it does not look like one. Retryable once the cause is fixed.
    #[error("cannot remove the session directory {path}: {source}; check it and remove it by hand if it is unwanted")]
    Remove { path: PathBuf, source: io::Error },
}

impl StoreError {
    /// True for failures worth showing: the first of a run of journal
    /// write failures, and every other error.
    pub fn should_report(&self) -> bool {
        !matches!(self, StoreError::JournalWrite { repeated: true, .. })
    }
}
