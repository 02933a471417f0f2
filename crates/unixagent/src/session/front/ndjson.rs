//! `--json`: each event of the agent's stream as one JSON line on stdout
//! (see `docs/ndjson.md`). Terminal chrome has no line of its own.

use ua_protocol::agent::AgentEvent;

use super::FrontEnd;

/// Writes the agent's events as NDJSON.
#[derive(Debug, Default)]
pub(in crate::session) struct NdjsonFront;

impl FrontEnd for NdjsonFront {
    fn event(&mut self, event: &AgentEvent) -> String {
        // One line per event, written whole and at once: a reader never
        // sees half a line, and nothing waits in a buffer.
        event.to_line()
    }

    fn lines_only(&self) -> bool {
        true
    }
}
