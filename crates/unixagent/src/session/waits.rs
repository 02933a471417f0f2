//! The futures the session loop's `select!` waits on for its optional
//! sources (the task board, the keyboard, the children's reports, batch
//! input, a write that did not fit, a deadline): each is pending forever
//! while its source is absent, which disables its branch.

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use ua_store::board::watch::TaskChange;

use super::board::TaskBoard;
use super::children::Children;
use super::front::Batch;
use crate::keyboard::Keys;

/// The board's next changes; `None` when its watcher has stopped (the
/// branch is disabled without a board).
pub(super) async fn board_changed(board: &mut Option<TaskBoard>) -> Option<Vec<TaskChange>> {
    match board {
        Some(b) => b.changed().await,
        None => std::future::pending().await,
    }
}

/// The next keystrokes (the branch is disabled when there is no keyboard).
pub(super) async fn read_keys(keys: &mut Option<crate::keyboard::Keyboard>) -> Keys<'_> {
    match keys {
        Some(k) => k.read().await,
        None => std::future::pending().await,
    }
}

/// The next child report that changed (the branch is disabled without a
/// watch).
pub(super) async fn changed_child(children: &mut Option<Children>) -> (std::path::PathBuf, bool) {
    match children {
        Some(c) => c.changed().await,
        None => std::future::pending().await,
    }
}

/// The next batch input line (the branch is disabled without one).
pub(super) async fn next_line(batch: &mut Option<Batch>) -> Option<String> {
    match batch {
        Some(b) => b.next_line().await,
        None => std::future::pending().await,
    }
}

/// Waits until the queued-write descriptor can take bytes.
pub(super) async fn writable(
    writer: &Option<AsyncFd<OwnedFd>>,
) -> std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>> {
    match writer {
        Some(w) => w.writable().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until the deadline, if there is one.
pub(super) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
