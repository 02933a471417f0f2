//! A child's report to the session that started it.
//!
//! A session exports `UNIXAGENT_CHILDREN` into its shell: a private
//! directory in its task board, which it watches (see
//! `session::children`). A child agent started from that shell, admitted
//! or not, makes one file there at admission and appends to it, one
//! `write(2)` per line: a [`Header`] (its pid and instruction), then its
//! own NDJSON events as its session draws them. The file stays open for
//! the child's whole life and closes with the process, however it ends,
//! so the parent hears of a `kill -9` too (the kernel's close
//! notification, with no `result` line before it).
//!
//! Why the board: a child usually runs inside its parent's sandbox, where
//! unixagent's data directory is hidden except for the session's board,
//! the one hole the sandbox leaves writable; and nothing is left in the
//! temporary directories. Names start with a dot, which the board's own
//! watcher and readers pass by. Like the board, a report is a record for
//! the parent, not a security boundary: a command that may write the board
//! may write a report too, and the parent only shows and journals it.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use ua_protocol::agent::AgentEvent;

/// The variable naming the directory a session's children report to.
pub const CHILDREN_ENV: &str = "UNIXAGENT_CHILDREN";

/// The first line of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"child"`: tells the header from the events after it.
    pub report: String,
    pub pid: u32,
    /// The instruction given to `-c`; empty for one read from stdin.
    pub instruction: String,
    /// In the foreground of the parent's terminal, where the parent
    /// draws its progress.
    #[serde(default)]
    pub in_front: bool,
}

impl Header {
    /// The header, if `line` is one.
    pub fn parse(line: &str) -> Option<Header> {
        serde_json::from_str::<Header>(line).ok().filter(|h| h.report == "child")
    }
}

/// This process's report file, when it is a child of a watching session.
static REPORT: OnceLock<File> = OnceLock::new();

/// Makes this child's report in the directory its parent watches, if the
/// environment names one. A report that cannot be made is no reason not
/// to run: the parent then shows the command's output only.
pub fn open(instruction: &str, in_front: bool) {
    let Some(dir) = std::env::var_os(CHILDREN_ENV).filter(|d| Path::new(d).is_absolute()) else { return };
    let pid = std::process::id();
    let name = format!(".{pid}-{}.ndjson", std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_nanos()));
    let Ok(mut file) = OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(Path::new(&dir).join(name))
    else {
        return;
    };
    let header = Header { report: "child".into(), pid, instruction: instruction.to_string(), in_front };
    let Ok(mut line) = serde_json::to_string(&header) else { return };
    line.push('\n');
    if file.write_all(line.as_bytes()).is_ok() {
        let _ = REPORT.set(file);
    }
}

/// Appends one event to the report, if there is one.
pub fn event(e: &AgentEvent) {
    if let Some(mut f) = REPORT.get() {
        let _ = f.write_all(e.to_line().as_bytes());
    }
}
