//! What can go wrong with a task board.

use std::io;
use std::path::PathBuf;

/// A board operation that did not happen. Every message is one sentence
/// a person (or the agent) can act on.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// The board's directory does not exist. Fatal for this command: the
    /// session was started without one, or it was removed.
    #[error("there is no task board at {path}; start a unixagent session, or pick one with --session ID")]
    NoBoard { path: PathBuf },

    /// No task has this id. Fatal for this command.
    #[error("there is no task {id} on the board; `unixagent board` lists the tasks")]
    NoSuchTask { id: u32 },

    /// The task exists but cannot be claimed now: it is not in `todo`, or
    /// what it depends on is not done. Retryable later.
    #[error("task {id} cannot be claimed: {why}")]
    NotReady { id: u32, why: String },

    /// Nothing on the board can be claimed. Retryable later.
    #[error("no task is ready to claim ({why})")]
    NoneReady { why: String },

    /// A task file's frontmatter cannot be read. Fatal for that task until
    /// a person fixes the file; unixagent never rewrites it.
    #[error("{}:{line}: {message}; fix the file by hand (unixagent leaves it as it is)", path.display())]
    Broken { path: PathBuf, line: usize, message: String },

    /// Another process moved or claimed the task at the same moment.
    /// Retryable: look at the board again.
    #[error("task {id} was moved by another process meanwhile ({why}); look at the board and try again")]
    Conflict { id: u32, why: String },

    /// The request itself is wrong (a block without a reason, a dependency
    /// that is not on the board, an empty title). Fatal until changed.
    #[error("{0}")]
    Invalid(String),

    /// Reading or writing a board file failed. Retryable once the cause is
    /// fixed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: io::Error },
}

impl BoardError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> BoardError {
        let path = path.into();
        move |source| BoardError::Io { action, path, source }
    }

    /// A short name for the kind of failure (`--json` output, scripts).
    pub fn kind(&self) -> &'static str {
        match self {
            BoardError::NoBoard { .. } => "no_board",
            BoardError::NoSuchTask { .. } => "no_such_task",
            BoardError::NotReady { .. } => "not_ready",
            BoardError::NoneReady { .. } => "none_ready",
            BoardError::Broken { .. } => "broken_file",
            BoardError::Conflict { .. } => "conflict",
            BoardError::Invalid(_) => "invalid",
            BoardError::Io { .. } => "io",
        }
    }
}
