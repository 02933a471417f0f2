//! What the turn driver is handed: the options turns run under, the
//! shell's side of an instruction, a front end's input, and what wakes it
//! up.

use ua_context::prompt::UserCommand;
use ua_term::keys::Key;

use super::{GateDone, ModelWake};
use crate::agent::question::Reply;
use crate::agent::turn::{Answer, Limits};

/// How turns run (from the session's options).
#[derive(Debug, Clone)]
pub(in crate::session) struct TurnOptions {
    pub limits: Limits,
    /// Environment variables the model may see (names or globs).
    pub include_env: Vec<String>,
    /// Lines of recent terminal output sent with an instruction.
    pub terminal_lines: usize,
    /// Prices by model, so each turn's cost goes into the journal.
    pub pricing: std::collections::BTreeMap<String, crate::config::Price>,
    /// `[telemetry]`: when a typed command carries its trace context.
    pub telemetry: crate::trace::export::TelemetryConfig,
    /// The shell commands are typed into (how an assignment is spelled).
    pub shell: std::path::PathBuf,
}

/// What the shell's side knows when an instruction arrives.
#[derive(Debug, Default)]
pub(in crate::session) struct TurnContext {
    pub cwd: String,
    pub shell: String,
    pub recent_lines: Vec<String>,
    /// The commands the user ran since the last instruction.
    pub user_commands: Vec<UserCommand>,
    /// The shell's markers work: without them commands are refused.
    pub markers: bool,
    /// The session has a task board: the system prompt says how to use it.
    pub board: bool,
    /// The board's active tasks, for the first instruction after a resume.
    pub active_tasks: Option<String>,
}

/// What a front end tells the turn. The keyboard and an NDJSON reader
/// produce the same values: a key at the question comes to the same
/// [`Answer`] as an approval line.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::session) enum Input {
    /// A key typed at the question (or, with none open, Ctrl+C).
    Key(Key),
    /// The person's editor closed: the edited command, or why there is none.
    Edited(Option<Result<String, String>>),
    /// An answer to the question on screen (an approval read from NDJSON).
    Answer(Answer),
    /// A reply to the question on screen that may carry a grant (an
    /// "allow always" from an editor is the terminal's `a`).
    Reply(Reply),
    /// New directions: at a question they answer it; otherwise the turn
    /// ends, for the session to start one with them.
    Steer(String),
    /// End the turn now (Ctrl+C).
    Cancel,
    /// End the turn now; a command running gets Ctrl+C first.
    Stop,
}

/// What woke the driver up.
#[derive(Debug)]
pub(in crate::session) enum Wake {
    Model(ModelWake),
    /// A gate decision (boxed: it carries the whole request and decision).
    Gated(Option<Result<Box<GateDone>, tokio::task::JoinError>>),
}

/// The operating system and kernel release, as `linux 6.1.0-18-amd64`.
pub(super) fn os_release() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{} {}", std::env::consts::OS, release.trim()).trim().to_string()
}
