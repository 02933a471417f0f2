//! What the session's parts ask the world to do, in the order they asked.
//!
//! A part never writes to the terminal or the shell itself and never calls
//! back into the session: it pushes [`Out`] values here, and the event
//! loop carries them out after each call, in order.

use std::collections::VecDeque;

use ua_protocol::agent::AgentEvent;

/// One thing to carry out.
#[derive(Debug)]
pub(crate) enum Out {
    /// An event of the agent's stream, for the front end.
    Event(AgentEvent),
}

/// The queue of [`Out`]s, drained by the event loop.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    items: VecDeque<Out>,
}

impl Outbox {
    pub(crate) fn push(&mut self, out: Out) {
        self.items.push_back(out);
    }

    /// An event of the agent's stream.
    pub(crate) fn event(&mut self, event: AgentEvent) {
        self.push(Out::Event(event));
    }

    /// A short line for the person (a notice event).
    pub(crate) fn notice(&mut self, text: impl Into<String>) {
        self.event(AgentEvent::Notice { text: text.into() });
    }

    /// The oldest item not carried out yet.
    pub(crate) fn pop(&mut self) -> Option<Out> {
        self.items.pop_front()
    }
}
