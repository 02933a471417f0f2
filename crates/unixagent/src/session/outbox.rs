//! What the turn driver asks the world to do, in the order it asked.
//!
//! The driver never writes to the terminal or the shell and never calls
//! back into the session: each of its methods pushes [`Out`] values here,
//! and the event loop carries them out after the call, in order (see
//! `Session::carry_out`). Front ends draw the events and the chrome; the
//! shell executor takes the shell's part.

use std::collections::VecDeque;
use std::time::Duration;

use ua_protocol::agent::{AgentEvent, RunStatus, TokenUsage};
use ua_protocol::event::Usage;

use crate::agent::turn::{End, Proposal};

/// One thing to carry out.
#[derive(Debug)]
pub(crate) enum Out {
    /// An event of the agent's stream, for every front end.
    Event(AgentEvent),
    /// Drawn by a terminal front end only.
    Chrome(Chrome),
    /// For the shell executor.
    Shell(ShellOp),
    /// Open the person's editor on this command; its text comes back as
    /// the answer (`Driver::edited`).
    Edit(String),
    /// The turn is over.
    TurnEnded(TurnEnd),
}

/// What a terminal draws beside the event stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Chrome {
    /// Waiting on the model or the gate: the spinner starts.
    Spin,
    /// The wait is over: the spinner stops and its line is cleared.
    Settle,
    /// The turn is over: the spinner stops (the footer takes its line).
    StopSpinner,
    /// A fresh line before the shell, a command or the editor writes.
    HandOver,
    /// Where the cursor is after others wrote to the terminal.
    LineStart(bool),
    /// The dim line closing a turn; `descendants`: what child agents that
    /// ended during it used (`+N`).
    Footer { usage: Usage, commands: usize, elapsed: Duration, descendants: TokenUsage },
    /// The question under a proposal, again (the editor failed).
    Question { strong: bool },
    /// What was typed at the question.
    Echo(String),
    /// What the shell said about a command line it never ran.
    Text(String),
    /// A line the person must not miss (a task entered `blocked`), drawn
    /// at the start of a line.
    Alert(String),
    /// The task board's counts, beside the footer closing a turn.
    BoardFooter(String),
}

/// What the turn asks of the shell executor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ShellOp {
    /// A turn starts at the prompt its instruction was typed at.
    TurnStarted,
    /// Type this approved command at the next fresh prompt.
    Run(Proposal),
    /// Ctrl+C for the command running, followed up until the prompt is back.
    Interrupt,
    /// Give the shell back with a fresh prompt; the turn waits.
    Pause,
    /// The paused turn goes on.
    Resume,
    /// Nothing runs: ask the shell for a fresh prompt.
    FreshPrompt,
    /// The turn is ending: nothing waits to run any more.
    TurnEnding,
}

/// How a turn ended, for whoever runs the session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnEnd {
    pub end: End,
    /// What a run that ends with this turn exits with.
    pub status: i32,
    pub usage: TokenUsage,
    /// Commands it ran.
    pub steps: usize,
    pub last_exit: Option<i32>,
}

impl TurnEnd {
    /// The `result` event of a run that ends with this turn.
    pub(crate) fn result(&self) -> AgentEvent {
        let status = match &self.end {
            End::Answered => RunStatus::Ok,
            End::Failed(_) | End::StepLimit => RunStatus::Error,
            End::Stopped => RunStatus::Cancelled,
        };
        AgentEvent::Result {
            status,
            exit_code: self.status,
            usage: self.usage,
            commands: u32::try_from(self.steps).unwrap_or(u32::MAX),
        }
    }
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

    pub(crate) fn chrome(&mut self, chrome: Chrome) {
        self.push(Out::Chrome(chrome));
    }

    pub(crate) fn shell(&mut self, op: ShellOp) {
        self.push(Out::Shell(op));
    }

    /// The oldest item not carried out yet.
    pub(crate) fn pop(&mut self) -> Option<Out> {
        self.items.pop_front()
    }
}
