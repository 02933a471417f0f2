//! Session storage for unixagent.
//!
//! - [`session`]: session directories under
//!   `$XDG_DATA_HOME/unixagent/sessions/<id>/` (0700, files 0600), ids that
//!   sort by creation time, and `meta.json`.
//! - [`journal`]: the append-only `journal.jsonl` writer, which keeps
//!   going after a full disk, and a reader that tolerates a torn last line
//!   and skips (and reports) corrupt ones.
//! - [`rebuild`]: the conversation and every model call rebuilt from the
//!   journal, exactly as sent.
//! - [`fold`]: the fold behind both, as a value fed entries: summaries,
//!   calls that stay out of the conversation, and a `tool_result` for every
//!   `tool_use` (the journaled one, or one saying the command's outcome is
//!   unknown or that it never ran).
//! - [`checkpoint`]: where the live conversation starts, written at each
//!   turn boundary into the journal and `checkpoint.json`, so that
//! - [`resume`] reopens a session reading from there, in time bounded by
//!   the conversation rather than by the journal.
//! - [`index`]: `sessions/index.jsonl`, one small record per session event,
//!   appended by every running session under a shared `flock` and compacted
//!   under an exclusive one; folded into one summary per session for
//!   listing sessions, finding the latest in a directory and totalling
//!   usage without opening a journal. Rebuildable from the journals.
//! - [`board`]: the task board, `sessions/<id>/board/`: task files with
//!   flat frontmatter, claims and moves as renames that any number of
//!   processes may race on, and a watcher that reports state changes.
//! - [`spool`]: the session directory of a child that cannot write the
//!   data directory (inside its parent's sandbox), kept in its parent's
//!   report directory, and its import, checked as untrusted input.
//!
//! The line format itself ([`ua_protocol::journal`]) is pure data in
//! `ua-protocol`. This crate does not decide what to journal or when, does
//! not write summaries (a model call does), does not trim conversations to
//! a token budget (that is `ua-context`), and does not print sessions,
//! usage or the board (that is the binary).
//!
//! ```
//! use ua_protocol::conversation::Message;
//! use ua_protocol::journal::{CallPurpose, JournalEntry};
//! use ua_store::journal::{Journal, SyncPolicy, read_journal};
//! use ua_store::rebuild::reconstruct_call;
//! use ua_store::session::{SessionDir, SessionMeta};
//!
//! # fn main() -> Result<(), ua_store::StoreError> {
//! # let tmp = std::env::temp_dir().join(format!("ua-store-doc-{}", std::process::id()));
//! let meta = SessionMeta {
//!     id: String::new(),
//!     created_ms: 0,
//!     pid: std::process::id(),
//!     shell: "/bin/bash".into(),
//!     cwd: "/tmp".into(),
//!     version: "0.1.0".into(),
//!     parent: None,
//!     trace_id: None,
//!     trace_parent: None,
//!     parent_command: None,
//!     depth: 0,
//! };
//! let session = SessionDir::create(&tmp, meta)?;
//! let mut journal = Journal::open(session.journal_path(), SyncPolicy::default())?;
//! journal.append(&JournalEntry::ModelRequest {
//!     turn: 1,
//!     call: 1,
//!     backend: "anthropic".into(),
//!     model: "claude-sonnet-4-5".into(),
//!     system: "You are unixagent.".into(),
//!     messages_appended: vec![Message::user_text("list the big files")],
//!     omitted: vec![],
//!     tools: None,
//!     purpose: CallPurpose::Conversation,
//! })?;
//! journal.checkpoint()?;
//!
//! let contents = read_journal(&session.journal_path())?;
//! let call = reconstruct_call(contents.entries(), 1, 1).expect("journaled above");
//! assert_eq!(call.messages, vec![Message::user_text("list the big files")]);
//!
//! let resumed = ua_store::resume::load(session.path())?;
//! assert!(resumed.report.used_checkpoint());
//! assert_eq!(resumed.conversation, vec![Message::user_text("list the big files")]);
//! assert_eq!(resumed.next_turn, 2);
//! # std::fs::remove_dir_all(&tmp).ok();
//! # Ok(())
//! # }
//! ```

pub mod board;
pub mod checkpoint;
mod error;
pub mod fold;
pub mod index;
pub mod journal;
mod reader;
pub mod rebuild;
pub mod resume;
pub mod session;
pub mod spool;

pub use error::StoreError;
