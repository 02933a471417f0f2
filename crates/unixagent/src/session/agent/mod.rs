//! The agent's side of the session: it drives a [`Turn`] from the event
//! loop, talks to the model, asks the human, and runs approved commands in
//! the shell.
//!
//! The shell's output is routed by [`View`] while a turn runs. The prompt
//! the shell redraws after each command, and the echo of the commands the
//! agent types, are hidden: the user already sees the command on the
//! proposal line, and a prompt in the middle of the agent's answer would
//! only confuse. What a command prints (between its `133;C` and `133;D`)
//! is shown as it comes and captured for the model. When the turn ends the
//! shell is asked for a fresh prompt, and output is shown again from its
//! `133;A` on.
//!
//! This file holds the agent side's state and the turn itself (starting
//! it, the model call and its stream, applying the turn's effects, ending
//! it). The rest of `impl Session` for the agent is split by what it
//! touches: `gating` (the safety pipeline), `asking` (the person),
//! `runner` (the shell) and `records` (journal and audit).

mod asking;
mod gating;
mod model;
mod records;
mod runner;
mod summary;

pub(super) use gating::Gatekeeper;
pub(super) use model::{ModelCall, ModelWake};
pub(super) use records::Records;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;
use ua_backend::error::BackendError;
use ua_backend::provider::{Fallback, Provider, Request};
use ua_backend::tokens::estimate_message;
use ua_context::fit::fit;
use ua_context::prompt::{ContextSnapshot, frame_tool_output};
use ua_context::secrets::redact_secrets;
use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::event::StreamEvent;
use ua_protocol::journal::{DecisionOutcome, JournalEntry, TurnEndReason};
use ua_protocol::tool::shell_tool;
use ua_store::journal::Journal;
use ua_term::keys::{Key, KeyDecoder};

use super::executor::{After, Finished, Routed};
use super::{AgentOptions, Session};
use crate::agent::ConfirmMode;
use crate::agent::asking::Asking;
use crate::agent::backend::Built;
use crate::agent::confirm::{self, Situation};
use crate::agent::events;
use crate::agent::gate::{Gated, Policy};
use crate::agent::question::{Reply, Step};
use crate::agent::render::{Renderer, SPINNER_FRAME};
use crate::agent::turn::{Answer, Effect, End, Outcome, Proposal, Turn, Verdict};
use ua_policy::gate::Request as PolicyRequest;
use ua_policy::grants::Grants;
use ua_protocol::agent::{AgentEvent, CommandStatus, GateDecision};

/// Two Ctrl+C within this long end the turn at once.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(1);

pub(super) struct AgentSide {
    opts: AgentOptions,
    /// `-c '# …'`: the session ends with the first turn.
    oneshot: bool,
    /// The one-shot instruction, until the first prompt starts it.
    oneshot_pending: Option<String>,
    /// Whether a human can answer questions.
    can_ask: bool,
    pub(super) editing: Option<oneshot::Receiver<Result<String, String>>>,
    history: Vec<Message>,
    turn: Option<Turn>,
    pub(super) render: Renderer,
    spin_at: Option<Instant>,
    started: Instant,
    /// Effects waiting to be carried out (see `apply`).
    effects: std::collections::VecDeque<Effect>,
    applying: bool,
    /// The question, a pause and the plan.
    asking: Asking,
    keys: KeyDecoder,
    last_interrupt: Option<Instant>,
    /// The safety pipeline, its pending decision and the grants.
    pub(super) gate: Gatekeeper,
    /// The current instruction (hooks and the judge see it).
    instruction: Option<String>,
    /// The shell's state when the current instruction was given.
    snapshot: ContextSnapshot,
    turn_no: u32,
    /// The provider, the call in flight, its limits and the budget.
    pub(super) model: ModelCall,
    /// Where the current turn's messages begin in the conversation.
    turn_start: usize,
    /// The journal, the index and the audit log.
    pub(super) records: Records,
    /// The shell runs in the kernel sandbox: its rules and the proxy's
    /// decisions, to say when a command ran into them.
    pub(super) sandbox: Option<SandboxWatch>,
    /// Why agent commands may not run at all in this session (the sandbox
    /// asked for could not be applied); each instruction is answered with
    /// it.
    pub(super) blocked: Option<String>,
}

/// What a sandboxed session knows of its sandbox.
#[derive(Debug)]
pub(in crate::session) struct SandboxWatch {
    pub rules: ua_sandbox::Rules,
    pub decisions: tokio::sync::mpsc::UnboundedReceiver<ua_sandbox::proxy::Decision>,
}

impl SandboxWatch {
    /// The proxy's decisions since the last call.
    pub fn decisions(&mut self) -> Vec<ua_sandbox::proxy::Decision> {
        let mut out = Vec::new();
        while let Ok(d) = self.decisions.try_recv() {
            out.push(d);
        }
        out
    }
}

impl std::fmt::Debug for AgentSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSide").field("turn", &self.turn).field("model", &self.model).finish_non_exhaustive()
    }
}

impl AgentSide {
    pub(super) fn new(
        opts: AgentOptions,
        oneshot: Option<String>,
        colour: bool,
        out_tty: bool,
        stdin_tty: bool,
        width: u16,
        records: Records,
    ) -> Self {
        let model = ModelCall::new(opts.backend.clone());
        let gate = Gatekeeper::new(opts.confirm, opts.judge.clone(), opts.policy_layers.clone());
        Self {
            opts,
            can_ask: stdin_tty,
            oneshot: oneshot.is_some(),
            oneshot_pending: oneshot,
            editing: None,
            history: Vec::new(),
            turn: None,
            render: Renderer::new(colour, width, out_tty),
            spin_at: None,
            started: Instant::now(),
            effects: std::collections::VecDeque::new(),
            applying: false,
            asking: Asking::default(),
            keys: KeyDecoder::new(),
            last_interrupt: None,
            gate,
            instruction: None,
            snapshot: ContextSnapshot::default(),
            turn_no: 0,
            model,
            sandbox: None,
            blocked: None,
            records,
            turn_start: 0,
        }
    }

    /// Whether keystrokes belong to the agent rather than the shell.
    pub(super) fn takes_keys(&self) -> bool {
        self.turn.is_some() && !self.asking.paused()
    }

    pub(super) fn oneshot(&self) -> bool {
        self.oneshot
    }

    /// The spinner's next frame.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.spin_at
    }
}

/// The operating system and kernel release, as `linux 6.1.0-18-amd64`.
fn os_release() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{} {}", std::env::consts::OS, release.trim()).trim().to_string()
}

/// The result of a spawned task, once.
pub(super) async fn join_once<T>(
    task: &mut Option<tokio::task::JoinHandle<T>>,
) -> Option<Result<T, tokio::task::JoinError>> {
    match task {
        Some(t) => {
            let v = t.await;
            *task = None;
            Some(v)
        }
        None => std::future::pending().await,
    }
}

/// The value of a one-shot channel, once.
pub(super) async fn recv_once<T>(rx: &mut Option<oneshot::Receiver<T>>) -> Option<T> {
    match rx {
        Some(r) => {
            let v = r.await.ok();
            *rx = None;
            v
        }
        None => std::future::pending().await,
    }
}

impl Session {
    fn show(&mut self, text: &str) {
        if text.is_empty() || self.json() {
            return;
        }
        if self.exec.plain() {
            let plain = text.replace("\r\n", "\n");
            self.proxy.write_out(plain.as_bytes());
        } else {
            self.proxy.write_out(text.as_bytes());
        }
    }

    pub(super) fn write_err(&mut self, msg: &str) {
        let line = if self.exec.plain() { format!("{msg}\n") } else { format!("\r\n{msg}\r\n") };
        let _ = crate::terminal::write_all(std::os::fd::AsFd::as_fd(&std::io::stderr()), line.as_bytes());
    }

    /// One event of the agent's stream, drawn by the renderer.
    pub(super) fn emit(&mut self, event: AgentEvent) {
        if self.json() {
            // One line per event, written whole and at once: a reader
            // never sees half a line, and nothing waits in a buffer.
            self.proxy.write_events(event.to_line().as_bytes());
            return;
        }
        let out = self.agent.render.event(&event);
        self.show(&out);
    }

    /// Carries out what the parts asked for, in order.
    fn flush_out(&mut self) {
        while let Some(out) = self.out.pop() {
            match out {
                crate::session::outbox::Out::Event(e) => self.emit(e),
            }
        }
    }

    /// A short line for the person (a notice event).
    fn notice(&mut self, text: impl Into<String>) {
        self.emit(AgentEvent::Notice { text: text.into() });
    }

    /// Starts a turn for an instruction typed at the prompt (or given to
    /// `-c`).
    pub(super) fn start_turn(&mut self, text: &str) {
        if self.agent.turn.is_some() {
            if self.agent.asking.paused() {
                self.resume(text);
            }
            return;
        }
        if text.trim().is_empty() {
            // A lone `#` with nothing paused: just a fresh prompt.
            self.proxy.fresh_prompt();
            return;
        }
        if let Some(why) = self.agent.blocked.clone() {
            self.agent.render.set_line_start(true);
            self.emit(AgentEvent::Error {
                message: format!("agent commands do not run here: {why}"),
                kind: "sandbox".into(),
            });
            self.proxy.fresh_prompt();
            return;
        }
        self.agent.render.set_line_start(true);
        self.agent.started = Instant::now();
        let user_commands = self.proxy.take_commands();
        let cwd = self.proxy.cwd();
        for c in &user_commands {
            // Redacted like everything the model is shown of them: the
            // journal is readable from the session (`$UNIXAGENT_JOURNAL`),
            // and a password inside a JSON string, its quotes escaped, is
            // harder to find than on the command line it came from.
            self.journal(JournalEntry::UserCommand {
                command: redact_secrets(&c.command).into_owned(),
                cwd: Some(cwd.clone()),
                exit_code: c.exit_code,
                output: redact_secrets(&c.output).into_owned(),
            });
        }
        self.agent.snapshot = ContextSnapshot {
            cwd,
            os: os_release(),
            shell: self.proxy.shell_path().display().to_string(),
            env: ua_context::env::allowed_env(&self.agent.opts.include_env, std::env::vars()),
            recent_output_lines: self.proxy.recent_lines(self.agent.opts.terminal_lines),
            user_commands,
        };
        self.agent.turn_no += 1;
        self.agent.model.new_turn();
        // Load while the model thinks, so the first proposal does not wait.
        self.agent.gate.preload();
        self.journal(JournalEntry::Instruction { turn: self.agent.turn_no, text: text.to_string() });
        self.agent.instruction = Some(text.to_string());
        let history = std::mem::take(&mut self.agent.history);
        self.agent.turn_start = history.len();
        let instruction = vec![Block::text(text)];
        let (turn, effects) = Turn::start(history, instruction, self.agent.opts.limits);
        self.agent.turn = Some(turn);
        // The shell still shows the prompt the instruction was typed at.
        self.exec.turn_started();
        self.apply(effects);
    }

    /// Carries out a turn's effects, and the effects those lead to, in
    /// order. Carrying one out can yield more (a run that fails at once
    /// ends the command, which may end the turn): those join the queue,
    /// and the outermost call works through it, so effects never nest.
    fn apply(&mut self, effects: Vec<Effect>) {
        self.agent.effects.extend(effects);
        if self.agent.applying {
            return;
        }
        self.agent.applying = true;
        while let Some(effect) = self.agent.effects.pop_front() {
            match effect {
                Effect::Call => self.call(),
                Effect::Text(text) => self.emit(AgentEvent::Text { text }),
                Effect::Thinking(text) => self.emit(AgentEvent::Thinking { text }),
                Effect::Gate(p) => {
                    self.show_plan();
                    self.start_gate(p);
                }
                Effect::Ask(p, v) => {
                    let more = self.ask(&p, &v);
                    self.agent.effects.extend(more);
                }
                Effect::Notice(text) => self.notice(text),
                Effect::Run(p, v) => {
                    if !self.agent.asking.running(&p) {
                        let rule = self.decided_by();
                        self.emit(events::command(&p, &v, GateDecision::Allow, rule));
                    }
                    self.run_command(p);
                }
                Effect::Done(end) => self.end_turn(end),
            }
            self.emit_settled();
        }
        self.agent.applying = false;
    }

    /// Reports the results the turn settled since the last time.
    fn emit_settled(&mut self) {
        let settled = self.agent.turn.as_mut().map(Turn::take_settled).unwrap_or_default();
        for s in settled {
            self.emit(events::result(s));
        }
    }

    /// The rule, hook, grant or mode behind the last gate decision.
    fn decided_by(&self) -> Option<String> {
        self.agent.gate.decided_by()
    }

    fn turn_input(&mut self, f: impl FnOnce(&mut Turn) -> Vec<Effect>) -> Vec<Effect> {
        match self.agent.turn.as_mut() {
            Some(t) => f(t),
            None => Vec::new(),
        }
    }

    /// In plan mode, shows every command of a new answer before the first
    /// is gated.
    fn show_plan(&mut self) {
        let Some(turn) = self.agent.turn.as_ref() else { return };
        if let Some(text) = self.agent.asking.plan(turn, self.agent.gate.confirm()) {
            self.notice(text);
        }
    }

    fn call(&mut self) {
        let provider = self.agent.model.begin();
        self.agent.spin_at = Some(Instant::now());
        let Some(provider) = provider else { return };
        if let Some(message) = self.agent.model.exhausted() {
            let effects = self.turn_input(|t| t.stream_ended(Err(message)));
            self.apply(effects);
            return;
        }
        let Some(turn) = self.agent.turn.as_ref() else { return };
        let tools = vec![shell_tool()];
        let budget = self.agent.model.prompt_budget(&provider, &tools);
        let history = turn.messages();
        let fitted = fit(&self.agent.snapshot, history, budget, estimate_message);
        // Outgrown: earlier turns become one summary rather than being
        // left out without a trace (once a turn; if that fails, they are).
        let outgrown = fitted.as_ref().map_or(true, |f| !f.omitted.is_empty());
        if outgrown && self.agent.turn_start > 1 && self.agent.model.try_summary() {
            self.start_summary(&provider, budget);
            return;
        }
        let fitted = match fitted {
            Ok(f) => f,
            Err(e) => {
                let message = format!("{e}; start a new session or configure a model with a larger context window");
                let effects = self.turn_input(|t| t.stream_ended(Err(message)));
                self.apply(effects);
                return;
            }
        };
        let appended = self.agent.records.appended(history);
        let call = self.agent.model.next_call();
        let first_call = self.agent.turn_no == 1 && call == 1;
        self.journal(JournalEntry::ModelRequest {
            turn: self.agent.turn_no,
            call,
            backend: provider.name().to_string(),
            model: provider.model().to_string(),
            system: fitted.system.clone(),
            messages_appended: appended,
            omitted: fitted.omitted.clone(),
            tools: first_call.then(|| tools.clone()),
            purpose: ua_protocol::journal::CallPurpose::Conversation,
        });
        let request = Request { system: fitted.system, messages: fitted.messages, tools, max_tokens: None };
        self.agent.model.stream(&provider, request);
    }

    pub(super) fn on_backend_built(&mut self, built: Option<Result<Built, String>>) {
        let built = built.unwrap_or_else(|| Err("setting up the model backend failed unexpectedly".into()));
        match self.agent.model.on_built(built) {
            Ok((warnings, pending)) => {
                for w in warnings {
                    self.notice(w);
                }
                if pending {
                    self.call();
                }
            }
            Err(message) => {
                let effects = self.turn_input(|t| t.stream_ended(Err(message)));
                self.apply(effects);
            }
        }
    }

    pub(super) fn on_model_event(&mut self, event: Option<Result<StreamEvent, BackendError>>) {
        if self.agent.model.summarising() {
            self.on_summary_event(event);
            return;
        }
        let effects = match event {
            Some(Ok(ev)) => {
                if let Some(warning) = self.agent.model.on_event(&ev) {
                    self.notice(warning);
                }
                self.turn_input(|t| t.event(ev))
            }
            Some(Err(e)) => {
                // Something did not fit (the conversation, or the answer
                // beside it) and nothing is on screen yet: ask again within
                // the limits the server stated, trimming or lowering
                // max_tokens, and say so when it is news.
                if let Some(recovery) = self.agent.model.on_error(&e) {
                    if let Some(line) = recovery.notice() {
                        self.notice(line);
                    }
                    self.call();
                    return;
                }
                self.journal(JournalEntry::Error { turn: Some(self.agent.turn_no), message: e.to_string() });
                self.agent.model.set_error(e.kind());
                let effects = self.turn_input(|t| t.stream_ended(Err(e.to_string())));
                self.journal_response();
                effects
            }
            None => {
                self.agent.model.end_stream();
                let effects = self.turn_input(|t| t.stream_ended(Ok(())));
                self.journal_response();
                effects
            }
        };
        if !self.agent.model.streaming() {
            self.agent.spin_at = None;
            let out = self.agent.render.clear();
            self.show(&out);
        }
        self.apply(effects);
    }

    /// A turn is under way.
    pub(super) fn turn_running(&self) -> bool {
        self.agent.turn.is_some()
    }

    /// Whether a question can be answered at all (batch mode: while stdin
    /// is open).
    pub(super) fn set_can_ask(&mut self, can: bool) {
        self.agent.can_ask = can;
    }

    pub(super) fn cancel_turn(&mut self) {
        self.agent.model.cancel();
        self.agent.gate.abort();
        self.agent.asking.close();
        let effects = self.turn_input(|t| t.cancel());
        self.apply(effects);
    }

    fn end_turn(&mut self, end: End) {
        self.agent.spin_at = None;
        self.agent.model.end_stream();
        self.agent.asking.close();
        let (ends_line, rest) = self.exec.turn_ending();
        if let Some(ends_line) = ends_line {
            // Ended while a command ran: its output may have left the
            // cursor mid-line.
            self.agent.render.set_line_start(ends_line);
        }
        if !rest.is_empty() {
            self.proxy.write_out(rest.as_bytes());
        }
        self.emit_settled();
        let Some(turn) = self.agent.turn.take() else { return };
        match &end {
            End::Failed(message) => {
                let kind = self.agent.model.take_error_kind().unwrap_or_else(|| "turn".into());
                self.emit(AgentEvent::Error { message: message.clone(), kind });
            }
            End::StepLimit => {
                self.notice(format!("stopped: this turn ran {} commands, its limit", self.agent.opts.limits.max_steps))
            }
            End::Answered | End::Stopped => {}
        }
        let elapsed = self.agent.started.elapsed();
        let out = self.agent.render.footer(&turn.usage(), turn.steps(), elapsed);
        self.show(&out);
        let reason = match &end {
            End::Answered => TurnEndReason::Answered,
            End::Stopped => TurnEndReason::Stopped,
            End::Failed(_) => TurnEndReason::Failed,
            End::StepLimit => TurnEndReason::StepLimit,
        };
        let (usage, steps) = (turn.usage(), turn.steps());
        self.agent.turn = Some(turn);
        self.journal_response();
        let turn = self.agent.turn.take();
        self.journal(JournalEntry::TurnEnd {
            turn: self.agent.turn_no,
            reason,
            usage,
            commands: u32::try_from(steps).unwrap_or(u32::MAX),
            cost_micros: self
                .agent
                .model
                .model()
                .and_then(|m| self.agent.opts.pricing.get(m))
                .map(|price| price.micros(&usage)),
        });
        self.journal_checkpoint();
        let Some(turn) = turn else { return };
        let status = end.exit_status(turn.last_exit());
        let tokens = turn.usage();
        let summary = ua_protocol::agent::TokenUsage { input: tokens.input_tokens, output: tokens.output_tokens };
        let (last_exit, steps) = (turn.last_exit(), turn.steps());
        self.agent.history = turn.into_messages();
        if self.batch.is_some() {
            self.batch_turn_ended(&end, last_exit, summary, steps);
            // Hidden as before; the next fresh prompt runs what waits.
            self.exec.turn_over(After::Batch, &mut self.proxy);
            return;
        }
        if self.agent.oneshot {
            self.exit_now = Some(status);
            return;
        }
        // Ask the shell for a fresh prompt: an empty line runs nothing
        // and keeps `$?`. A command still running draws one when it ends.
        self.exec.turn_over(After::Shell, &mut self.proxy);
    }
}
