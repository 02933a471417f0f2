//! Front ends: what draws the agent's stream for someone, and where the
//! turn's inputs come from.
//!
//! Every front end consumes the same [`AgentEvent`] stream (and, for a
//! terminal, the [`Chrome`] drawn beside it) through [`FrontEnd`], and
//! hands the turn driver the same `Input`s. A terminal session renders with
//! [`TerminalFront`] and reads [`KeyInput`]; `--json` renders with
//! [`NdjsonFront`] and reads lines through [`Batch`]; `#` lines on a pipe
//! render plain text and read lines. A new front end (an editor speaking
//! the Agent Client Protocol, a fold view of a child agent) is one more
//! implementation of the trait and one more input source.

mod batch;
mod keys;
mod ndjson;
mod terminal;

pub(in crate::session) use batch::{Batch, Next, Read};
pub(in crate::session) use keys::KeyInput;
pub(in crate::session) use ndjson::NdjsonFront;
pub(in crate::session) use terminal::TerminalFront;

use tokio::time::Instant;
use ua_protocol::agent::AgentEvent;

use super::outbox::Chrome;

/// Draws the agent's stream. What it returns is written to stdout by the
/// event loop; a front end does no I/O of its own.
pub(in crate::session) trait FrontEnd: std::fmt::Debug {
    /// One event of the agent's stream.
    fn event(&mut self, event: &AgentEvent) -> String;

    /// Terminal chrome; nothing by default.
    fn chrome(&mut self, _chrome: &Chrome) -> String {
        String::new()
    }

    /// Whether stdout carries this front end's lines only (NDJSON): then
    /// none of the shell's output goes there, and a reader that went away
    /// stops the lines but not the session.
    fn lines_only(&self) -> bool {
        false
    }

    /// The next frame of something animated (the spinner), if any.
    fn deadline(&self) -> Option<Instant> {
        None
    }

    /// Draws the frame due at `now`.
    fn tick(&mut self, _now: Instant) -> String {
        String::new()
    }

    /// The terminal is this wide now.
    fn resize(&mut self, _width: u16) {}
}
