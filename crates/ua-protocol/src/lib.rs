//! Pure data shared by every unixagent crate that talks about a conversation
//! with a model.
//!
//! - [`agent`]: the agent's events and inputs, one stream each, which the
//!   terminal renders for a person and `--json` writes as NDJSON.
//! - [`conversation`]: the canonical conversation, shaped like Anthropic
//!   content blocks (text, provider-stamped thinking, `tool_use`,
//!   `tool_result` with text and image parts). Provider adapters translate
//!   it to and from their wire formats.
//! - [`event`]: what a streaming model call yields, already decoded from
//!   any wire format, and [`event::TurnBuilder`] which folds those events
//!   back into an assistant [`conversation::Message`].
//! - [`journal`]: the lines of a session journal, from which every model
//!   call can be rebuilt exactly and a session resumed: summaries, command
//!   intents, checkpoints.
//! - [`tool`]: the single `shell` tool the model is given, its input, and the
//!   pure `output_mode = "final"` filter.
//! - [`text`] and [`time`]: small pure helpers (wildcards, UTC dates) that
//!   the crates above share.
//!
//! This crate deliberately does no I/O, knows no provider, and has no
//! internal dependencies: it is the bottom of the dependency graph.
//!
//! ```
//! use ua_protocol::conversation::{Block, Message};
//! use ua_protocol::event::{StreamEvent, TurnBuilder};
//! use ua_protocol::tool::{OutputMode, final_output};
//!
//! let mut turn = TurnBuilder::default();
//! turn.push(&StreamEvent::TextDelta("hello ".into()));
//! turn.push(&StreamEvent::TextDelta("world".into()));
//! let message: Message = turn.finish();
//! assert_eq!(message.content, vec![Block::text("hello world")]);
//!
//! assert_eq!(final_output("10%\r50%\r100%\n"), "100%\n");
//! assert_eq!(OutputMode::default(), OutputMode::Full);
//! ```

pub mod agent;
pub mod conversation;
pub mod event;
pub mod journal;
pub mod text;
pub mod time;
pub mod tool;
