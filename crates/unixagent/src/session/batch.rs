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

use super::{BatchInput, BatchOptions, Session};
use crate::agent::turn::{Answer, End};

/// Something waiting for the shell's next fresh prompt.
#[derive(Debug)]
enum Pending {
    Instruction(String),
    Shell(String),
}

/// Batch mode's state.
#[derive(Debug)]
pub(super) struct Batch {
    pending: VecDeque<Pending>,
    /// stdin is still open (the lines arrive through `Session::batch_rx`).
    pub(super) input_open: bool,
    approval_timeout: Duration,
    /// When the question on screen is refused for want of an answer.
    pub(super) approval_deadline: Option<Instant>,
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
    /// The batch state and the channel its input lines arrive on.
    pub(super) fn new(opts: BatchOptions) -> (Self, Option<mpsc::UnboundedReceiver<String>>) {
        let rx = match opts.input {
            BatchInput::None => None,
            BatchInput::Stdin => Some(spawn_reader()),
            BatchInput::Lines(rx) => Some(rx),
        };
        let batch = Self {
            pending: opts.first.into_iter().map(Pending::Instruction).collect(),
            input_open: rx.is_some(),
            approval_timeout: opts.approval_timeout,
            approval_deadline: None,
            idle: false,
            usage: TokenUsage::default(),
            commands: 0,
            last: None,
            finished: false,
            plain: opts.plain,
        };
        (batch, rx)
    }

    /// Whether a question can wait for an answer: only an NDJSON reader
    /// whose input is open can give one.
    pub(super) fn can_ask(&self) -> bool {
        self.plain.is_none() && self.input_open
    }
}

/// Reads stdin line by line on a thread of its own (a blocking read must
/// not hold the loop); the channel closes at end of input.
pub(super) fn spawn_reader() -> mpsc::UnboundedReceiver<String> {
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

/// The next input line, or `None` when stdin closed (the branch is off when
/// there is no input).
pub(super) async fn next_line(input: &mut Option<mpsc::UnboundedReceiver<String>>) -> Option<String> {
    match input {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

impl Session {
    /// Batch mode writing NDJSON: nothing but event lines on stdout.
    pub(super) fn json(&self) -> bool {
        self.batch.as_ref().is_some_and(|b| b.plain.is_none())
    }

    /// One input line, or the end of input (`None`).
    pub(super) fn on_batch_line(&mut self, line: Option<String>) {
        let Some(line) = line else { return self.on_batch_input_closed() };
        match Line::parse(&line) {
            Line::Input(Input::Instruction { text }) => self.batch_push(Pending::Instruction(text)),
            Line::Shell(text) => self.batch_push(Pending::Shell(text)),
            Line::Input(Input::Approval { id, decision }) => {
                if self.asking_id().as_deref() != Some(id.as_str()) {
                    self.emit(AgentEvent::Error {
                        message: format!(
                            "no command with id {id} is waiting for an approval; the approval was ignored"
                        ),
                        kind: "input".into(),
                    });
                    return;
                }
                if let Some(b) = self.batch.as_mut() {
                    b.approval_deadline = None;
                }
                match decision {
                    Approval::Allow => self.answer_question(Answer::Run),
                    Approval::Deny => self.answer_question(Answer::Deny("the approver said no".into())),
                }
            }
            Line::Input(Input::Steer { text }) => {
                if self.asking_id().is_some() {
                    self.answer_question(Answer::Steer(text));
                } else {
                    // Outside a question the new direction replaces the
                    // running turn: it ends, and a turn with the new text
                    // (and the conversation so far) starts next.
                    if let Some(b) = self.batch.as_mut() {
                        b.pending.push_front(Pending::Instruction(text));
                    }
                    if self.turn_running() {
                        self.stop_turn();
                    } else {
                        self.batch_next();
                    }
                }
            }
            Line::Input(Input::Cancel) => self.stop_turn(),
            Line::Invalid(message) => self.emit(AgentEvent::Error { message, kind: "input".into() }),
        }
    }

    fn batch_push(&mut self, p: Pending) {
        let Some(b) = self.batch.as_mut() else { return };
        b.pending.push_back(p);
        if b.idle {
            self.batch_next();
        }
    }

    /// stdin closed: nobody can answer a question any more.
    fn on_batch_input_closed(&mut self) {
        self.set_can_ask(false);
        self.batch_rx = None;
        let Some(b) = self.batch.as_mut() else { return };
        b.input_open = false;
        b.approval_deadline = None;
        let idle = b.idle;
        if self.asking_id().is_some() {
            self.answer_question(Answer::Deny("approval is needed and the approver's input is closed".into()));
        } else if idle {
            self.batch_next();
        }
    }

    /// Asked about a command: wait for an approval, but not forever.
    pub(super) fn batch_asked(&mut self) {
        let closed = self.batch.as_ref().is_some_and(|b| !b.input_open);
        if closed {
            self.answer_question(Answer::Deny("approval is needed and the approver's input is closed".into()));
        } else if let Some(b) = self.batch.as_mut() {
            b.approval_deadline = Some(Instant::now() + b.approval_timeout);
        }
    }

    /// The approval deadline passed.
    pub(super) fn batch_deadline(&mut self, now: Instant) {
        let Some(b) = self.batch.as_mut() else { return };
        if b.approval_deadline.is_some_and(|d| d <= now) {
            b.approval_deadline = None;
            let secs = b.approval_timeout.as_secs();
            if self.asking_id().is_some() {
                self.answer_question(Answer::Deny(format!("no approval arrived within {secs} s")));
            }
        }
    }

    /// A turn ended: remember how, for the `result` line.
    pub(super) fn batch_turn_ended(&mut self, end: &End, last_exit: Option<i32>, usage: TokenUsage, steps: usize) {
        let Some(b) = self.batch.as_mut() else { return };
        let status = match end {
            End::Answered => RunStatus::Ok,
            End::Failed(_) | End::StepLimit => RunStatus::Error,
            End::Stopped => RunStatus::Cancelled,
        };
        b.last = Some((status, end.exit_status(last_exit)));
        b.usage.input += usage.input;
        b.usage.output += usage.output;
        b.commands += u32::try_from(steps).unwrap_or(u32::MAX);
        b.approval_deadline = None;
        if let Some(tx) = &b.plain {
            let _ = tx.send(end.exit_status(last_exit));
        }
    }

    /// The shell shows a fresh prompt and no turn runs: run what waits
    /// next, or end the run when nothing can come any more.
    pub(super) fn batch_next(&mut self) {
        if self.turn_running() {
            return;
        }
        let Some(b) = self.batch.as_mut() else { return };
        match b.pending.pop_front() {
            Some(Pending::Instruction(text)) => {
                b.idle = false;
                self.start_turn(&text);
            }
            Some(Pending::Shell(line)) => {
                b.idle = false;
                let mut bytes = line.into_bytes();
                bytes.push(b'\r');
                self.proxy.line_ended();
                self.proxy.send(&bytes);
            }
            None if !b.input_open => self.batch_finish(None),
            None => b.idle = true,
        }
    }

    /// Writes the `result` line once and ends the run with its exit code.
    /// `forced` is how the run ended when it did not end by itself (a
    /// signal, the shell exiting).
    pub(super) fn batch_finish(&mut self, forced: Option<(RunStatus, i32)>) {
        let Some(b) = self.batch.as_mut() else { return };
        if b.finished {
            return;
        }
        b.finished = true;
        let (status, exit_code) = forced.or(b.last).unwrap_or((RunStatus::Ok, 0));
        if b.plain.is_none() {
            let event = AgentEvent::Result { status, exit_code, usage: b.usage, commands: b.commands };
            self.emit(event);
        }
        self.exit_now = Some(exit_code);
    }

    /// Ends the running turn now; a command it runs gets Ctrl+C.
    fn stop_turn(&mut self) {
        if self.turn_running() {
            self.interrupt_command();
            self.cancel_turn();
        }
    }

    /// SIGTERM or SIGINT: the running turn is cancelled and the run ends.
    pub(super) fn batch_signal(&mut self) {
        if let Some(b) = self.batch.as_mut() {
            b.pending.clear();
        }
        self.stop_turn();
        self.batch_finish(Some((RunStatus::Cancelled, 130)));
    }

    /// The shell exited before the run ended (an `exit` line, a crash).
    pub(super) fn batch_shell_exited(&mut self, code: i32) {
        let status = if self.turn_running() { RunStatus::Error } else { RunStatus::Ok };
        if self.turn_running() {
            self.cancel_turn();
        }
        self.batch_finish(Some((status, code)));
    }
}
