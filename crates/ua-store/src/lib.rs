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
//! - [`index`]: `sessions/index.jsonl`, one small record per session event,
//!   appended by every running session under a shared `flock` and compacted
//!   under an exclusive one; folded into one summary per session for
//!   listing sessions, finding the latest in a directory and totalling
//!   usage without opening a journal. Rebuildable from the journals.
//!
//! The line format itself ([`ua_protocol::journal`]) is pure data in
//! `ua-protocol`. This crate does not decide what to journal or when,
//! does not trim conversations to a token budget (that is `ua-context`),
//! and does not print sessions or usage (that is the binary).
//!
//! ```
//! use ua_protocol::conversation::Message;
//! use ua_protocol::journal::JournalEntry;
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
//! })?;
//!
//! let contents = read_journal(&session.journal_path())?;
//! let call = reconstruct_call(contents.entries(), 1, 1).expect("journaled above");
//! assert_eq!(call.messages, vec![Message::user_text("list the big files")]);
//! # std::fs::remove_dir_all(&tmp).ok();
//! # Ok(())
//! # }
//! ```

mod error;
pub mod index;
pub mod journal;
pub mod rebuild;
pub mod session;

pub use error::StoreError;
