//! Batch mode: the session driven by input lines instead of keys. With
//! `--json` its agent events are NDJSON on stdout; for `#` lines on a pipe
//! (see `crate::pipe`) they are plain text, nobody is asked anything, and
//! the pipe hears each turn's exit status.
//!
//! Lines arrive through a channel: read from stdin on a thread (see
//! [`spawn_reader`]) or handed over by the pipe. Instructions and shell lines wait in one queue and run
//! in order, each when the shell shows a fresh prompt: an instruction
//! starts a turn, a shell line is typed into the shell. Approvals answer
//! the question on screen; a question nobody answers in
//! `batch.approval_timeout_secs`, or one asked after stdin closed, is a
//! denial. When stdin has closed and everything queued has run, the run
//! ends with exactly one `result` line, as it does on SIGTERM or SIGINT
//! (cancelled) and when the shell exits.

use std::collections::VecDeque;
use std::io::BufRead;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use ua_protocol::agent::{AgentEvent, Approval, Input, Line, RunStatus, TokenUsage};

use crate::agent::question::Reply;
use crate::agent::turn::{Answer, End};
use crate::session::driver::Input as TurnInput;
use crate::session::outbox::TurnEnd;
use crate::session::{BatchInput, BatchOptions};

/// Something waiting for the shell's next fresh prompt.
#[derive(Debug)]
enum Pending {
    Instruction(String),
    Shell(String),
}

/// What the shell's next fresh prompt runs.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::session) enum Next {
    /// Start a turn.
    Instruction(String),
    /// Type this line into the shell.
    Shell(Vec<u8>),
    /// Nothing can come any more: the run ends.
    Finish,
    /// Nothing yet.
    Wait,
}

/// What an input line comes to.
#[derive(Debug, PartialEq)]
pub(in crate::session) enum Read {
    /// For the turn.
    Input(TurnInput),
    /// Run what waits next (the shell is idle, or no turn runs).
    Next,
    /// Not taken, with why (an `error` event of kind `input`).
    Refused(String),
    /// Queued for later, or nothing to do.
    Nothing,
}

/// Batch mode's state.
#[derive(Debug)]
pub(in crate::session) struct Batch {
    pending: VecDeque<Pending>,
    /// The input lines, until they end.
    lines: Option<mpsc::UnboundedReceiver<String>>,
    /// stdin is still open.
    input_open: bool,
    approval_timeout: Duration,
    /// When the question on screen is refused for want of an answer.
    approval_deadline: Option<Instant>,
    /// The shell is at a fresh prompt with nothing of ours running.
    idle: bool,
    /// Summed over the run's turns.
    usage: TokenUsage,
    commands: u32,
    /// How the last turn ended, as (status, exit code).
    last: Option<(RunStatus, i32)>,
    /// The `result` line was written.
    finished: bool,
    /// Plain text, and where each turn's exit status goes (see
    /// [`BatchOptions::plain`]).
    plain: Option<std::sync::mpsc::Sender<i32>>,
}

impl Batch {
    pub(in crate::session) fn new(opts: BatchOptions) -> Self {
        let lines = match opts.input {
            BatchInput::None => None,
            BatchInput::Stdin => Some(spawn_reader()),
            BatchInput::Lines(rx) => Some(rx),
        };
        Self {
            pending: opts.first.into_iter().map(Pending::Instruction).collect(),
            input_open: lines.is_some(),
            lines,
            approval_timeout: opts.approval_timeout,
            approval_deadline: None,
            idle: false,
            usage: TokenUsage::default(),
            commands: 0,
            last: None,
            finished: false,
            plain: opts.plain,
        }
    }

    /// Whether a question can wait for an answer: only an NDJSON reader
    /// whose input is open can give one.
    pub(in crate::session) fn can_ask(&self) -> bool {
        self.plain.is_none() && self.input_open
    }

    /// Events go out as NDJSON (not plain text for a pipe).
    pub(in crate::session) fn ndjson(&self) -> bool {
        self.plain.is_none()
    }

    /// Input lines may still come.
    pub(in crate::session) fn reading(&self) -> bool {
        self.lines.is_some()
    }

    /// The next input line, or `None` when the input ended (the branch is
    /// off when there is no input).
    pub(in crate::session) async fn next_line(&mut self) -> Option<String> {
        match &mut self.lines {
            Some(rx) => rx.recv().await,
            None => std::future::pending().await,
        }
    }

    /// When the question on screen is refused for want of an answer.
    pub(in crate::session) fn deadline(&self) -> Option<Instant> {
        self.approval_deadline
    }

    /// One input line. `asking`: the id of the proposal a question waits
    /// on; `turn_running`: a turn is under way.
    pub(in crate::session) fn read(&mut self, line: &str, asking: Option<String>, turn_running: bool) -> Read {
        match Line::parse(line) {
            Line::Input(Input::Instruction { text }) => self.push(Pending::Instruction(text)),
            Line::Shell(text) => self.push(Pending::Shell(text)),
            Line::Input(Input::Approval { id, decision }) => {
                if asking.as_deref() != Some(id.as_str()) {
                    return Read::Refused(format!(
                        "no command with id {id} is waiting for an approval; the approval was ignored"
                    ));
                }
                self.approval_deadline = None;
                Read::Input(match decision {
                    Approval::Allow => TurnInput::Answer(Answer::Run),
                    // The session grant the terminal's `a` gives.
                    Approval::AllowAlways => TurnInput::Reply(Reply::RunAndAllowCommand),
                    Approval::Deny => TurnInput::Answer(Answer::Deny("the approver said no".into())),
                })
            }
            Line::Input(Input::Steer { text }) if asking.is_some() => Read::Input(TurnInput::Steer(text)),
            Line::Input(Input::Steer { text }) => {
                // Outside a question the new direction replaces the
                // running turn: it ends, and a turn with the new text (and
                // the conversation so far) starts next.
                self.pending.push_front(Pending::Instruction(text.clone()));
                if turn_running { Read::Input(TurnInput::Steer(text)) } else { Read::Next }
            }
            Line::Input(Input::Cancel) => Read::Input(TurnInput::Stop),
            Line::Invalid(message) => Read::Refused(message),
        }
    }

    fn push(&mut self, p: Pending) -> Read {
        self.pending.push_back(p);
        if self.idle { Read::Next } else { Read::Nothing }
    }

    /// The input ended: nobody can answer a question any more. `asking`:
    /// a question waits.
    pub(in crate::session) fn closed(&mut self, asking: bool) -> Read {
        self.lines = None;
        self.input_open = false;
        self.approval_deadline = None;
        if asking {
            Read::Input(TurnInput::Answer(Answer::Deny("approval is needed and the approver's input is closed".into())))
        } else if self.idle {
            Read::Next
        } else {
            Read::Nothing
        }
    }

    /// Asked about a command: wait for an approval, but not forever.
    pub(in crate::session) fn asked(&mut self, now: Instant) -> Option<TurnInput> {
        if !self.input_open {
            return Some(TurnInput::Answer(Answer::Deny(
                "approval is needed and the approver's input is closed".into(),
            )));
        }
        self.approval_deadline = Some(now + self.approval_timeout);
        None
    }

    /// The approval deadline passed: the question waiting (`asking`) is
    /// refused.
    pub(in crate::session) fn on_deadline(&mut self, now: Instant, asking: bool) -> Option<TurnInput> {
        if self.approval_deadline.is_none_or(|d| d > now) {
            return None;
        }
        self.approval_deadline = None;
        let secs = self.approval_timeout.as_secs();
        asking.then(|| TurnInput::Answer(Answer::Deny(format!("no approval arrived within {secs} s"))))
    }

    /// A turn ended: remember how, for the `result` line.
    pub(in crate::session) fn turn_ended(&mut self, t: &TurnEnd) {
        let status = match &t.end {
            End::Answered => RunStatus::Ok,
            End::Failed(_) | End::StepLimit => RunStatus::Error,
            End::Stopped => RunStatus::Cancelled,
        };
        self.last = Some((status, t.status));
        self.usage.add(&t.usage);
        self.commands += u32::try_from(t.steps).unwrap_or(u32::MAX);
        self.approval_deadline = None;
        if let Some(tx) = &self.plain {
            let _ = tx.send(t.status);
        }
    }

    /// The shell shows a fresh prompt and no turn runs: what waits next.
    /// The instruction given with `-c`, when nothing came before it: it
    /// starts while the shell still starts (as a one-shot's does).
    pub(in crate::session) fn take_first(&mut self) -> Option<String> {
        let Some(Pending::Instruction(_)) = self.pending.front() else { return None };
        match self.next() {
            Next::Instruction(text) => Some(text),
            _ => None,
        }
    }

    pub(in crate::session) fn next(&mut self) -> Next {
        match self.pending.pop_front() {
            Some(Pending::Instruction(text)) => {
                self.idle = false;
                Next::Instruction(text)
            }
            Some(Pending::Shell(line)) => {
                self.idle = false;
                let mut bytes = line.into_bytes();
                bytes.push(b'\r');
                Next::Shell(bytes)
            }
            None if !self.input_open => Next::Finish,
            None => {
                self.idle = true;
                Next::Wait
            }
        }
    }

    /// A signal ends the run: nothing queued runs.
    pub(in crate::session) fn drop_pending(&mut self) {
        self.pending.clear();
    }

    /// The `result` line (for NDJSON) and the exit code, the first time
    /// only. `forced` is how the run ended when it did not end by itself
    /// (a signal, the shell exiting).
    pub(in crate::session) fn finish(&mut self, forced: Option<(RunStatus, i32)>) -> Option<(Option<AgentEvent>, i32)> {
        if std::mem::replace(&mut self.finished, true) {
            return None;
        }
        let (status, exit_code) = forced.or(self.last).unwrap_or((RunStatus::Ok, 0));
        let event = self.plain.is_none().then_some(AgentEvent::Result {
            status,
            exit_code,
            usage: self.usage,
            commands: self.commands,
        });
        Some((event, exit_code))
    }
}

/// Reads stdin line by line on a thread of its own (a blocking read must
/// not hold the loop); the channel closes at end of input.
pub(in crate::session) fn spawn_reader() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
