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
mod records;
mod runner;
mod summary;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::oneshot;
use tokio::time::Instant;
use ua_backend::error::{BackendError, ErrorKind};
use ua_backend::limits::CallLimits;
use ua_backend::provider::{EventStream, Fallback, Provider, Request};
use ua_backend::tokens::{BudgetStatus, SessionBudget, estimate_message, estimate_prompt};
use ua_context::fit::{fit, retry_budget};
use ua_context::prompt::{ContextSnapshot, frame_tool_output};
use ua_context::secrets::redact_secrets;
use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::event::{StopReason, StreamEvent, Usage};
use ua_protocol::journal::{DecisionOutcome, JournalEntry, TurnEndReason};
use ua_protocol::tool::shell_tool;
use ua_store::journal::Journal;
use ua_term::keys::{Key, KeyDecoder};

use super::{AgentOptions, Session};
use crate::agent::ConfirmMode;
use crate::agent::backend::{self, Built};
use crate::agent::capture::Capture;
use crate::agent::confirm::{self, Situation};
use crate::agent::events;
use crate::agent::gate::{self, Gated, Policy};
use crate::agent::question::{Question, Reply, Step};
use crate::agent::render::{Renderer, SPINNER_FRAME};
use crate::agent::turn::{Answer, Effect, End, Outcome, Proposal, Turn, Verdict};
use ua_policy::gate::Request as PolicyRequest;
use ua_policy::grants::{Grant, Grants};
use ua_protocol::agent::{AgentEvent, CommandStatus, GateDecision};

/// Command output bound for a file or pipe is held until its line ends,
/// or until this much has come without one.
const PLAIN_LINE_MAX: usize = 64 * 1024;

/// Two Ctrl+C within this long end the turn at once.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(1);

/// How often an interrupted agent command's terminal is looked at until
/// the prompt is back, and for how long at most (see [`Interrupting`]).
const INTERRUPT_CHECK: Duration = Duration::from_millis(20);
const INTERRUPT_WATCH: Duration = Duration::from_secs(5);
/// A Ctrl+C typed at the shell's line editor that brought no prompt in
/// this long was lost: type it again.
const INTERRUPT_LOST: Duration = Duration::from_millis(300);

/// Where the shell's output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    /// Straight to the terminal: no turn is running.
    Shell,
    /// Hidden: prompts and the echo of the agent's commands.
    Hidden,
    /// Shown and captured: an agent command's output.
    Command,
    /// Hidden until the next prompt starts, then [`View::Shell`].
    UntilPrompt,
}

/// A command typed into the shell and not finished yet.
#[derive(Debug)]
struct Running {
    proposal: Proposal,
    capture: Capture,
    /// Bytes before `133;C`: the echo, or the shell's complaint when the
    /// line never ran (a syntax error).
    before_start: Vec<u8>,
    started: bool,
    timeout_at: Instant,
    timed_out: bool,
    began: Instant,
}

/// Ctrl+C was typed for an agent command and the shell's prompt is not
/// back yet.
///
/// A Ctrl+C reaches whatever holds the terminal when the kernel reads it.
/// Typed just as the shell starts the command, it reaches the shell, and
/// the command then runs on uninterrupted; typed just after the line
/// editor took a key, bash 5.2 can leave it pending without dropping the
/// line. A person presses Ctrl+C again; batch mode has nobody at the
/// keyboard. So until the prompt is back (our markers say so), a job that
/// takes the terminal gets SIGINT once, a command the shell runs itself
/// gets Ctrl+C once it has started, and a Ctrl+C the line editor ignored is
/// typed again.
#[derive(Debug)]
struct Interrupting {
    /// The job that held the terminal last: it has had its SIGINT.
    signalled: Option<ua_term::pty::Job>,
    /// The command had started (`133;C`) when Ctrl+C was last typed.
    started_then: bool,
    /// It has started by now.
    started: bool,
    typed_at: Instant,
    check_at: Instant,
    give_up: Instant,
}

pub(super) struct AgentSide {
    opts: AgentOptions,
    /// `-c '# …'`: the session ends with the first turn.
    oneshot: bool,
    /// The one-shot instruction, until the first prompt starts it.
    oneshot_pending: Option<String>,
    /// Whether a human can answer questions.
    can_ask: bool,
    /// Output goes to a file or pipe: plain `\n` line ends.
    pub(super) plain_output: bool,
    /// Command output on its way to a file or pipe, escapes removed.
    plain_text: ua_context::clean::TerminalText,
    /// The last, unfinished line of command output bound for a file or
    /// pipe (see `route_in_turn`).
    plain_held: Vec<u8>,
    provider: Option<Arc<Fallback>>,
    pub(super) building: Option<oneshot::Receiver<Result<Built, String>>>,
    pub(super) editing: Option<oneshot::Receiver<Result<String, String>>>,
    /// A model call waits for the backend to be built.
    call_pending: bool,
    history: Vec<Message>,
    turn: Option<Turn>,
    pub(super) stream: Option<EventStream>,
    pub(super) render: Renderer,
    spin_at: Option<Instant>,
    started: Instant,
    view: View,
    /// The shell shows a fresh, empty prompt.
    shell_ready: bool,
    waiting_run: Option<Proposal>,
    running: Option<Running>,
    /// Effects waiting to be carried out (see `apply`).
    effects: std::collections::VecDeque<Effect>,
    applying: bool,
    /// The question on screen, while the agent waits for the person.
    asking: Option<Question>,
    /// The proposal (id, command) whose line is on screen.
    shown: Option<(String, String)>,
    /// The verdict of the proposal being asked about, to ask again.
    asked: Option<Verdict>,
    /// Esc at a question gave the shell back; the turn waits.
    paused: bool,
    /// The answer (call number, commands) whose plan is on screen.
    plan_shown: Option<(usize, usize)>,
    /// `y` at the first question of a plan approved the rest of it.
    plan_approved: bool,
    /// The kind of the backend error that is ending the turn, for its
    /// `error` event.
    error_kind: Option<String>,
    /// The question about the current proposal is the plan's: its `y`
    /// approves the plan ([`confirm::Step::Ask`]).
    question_approves_plan: bool,
    keys: KeyDecoder,
    /// Keys typed while the model was answering: they go to the shell
    /// when its prompt is back, as type-ahead does in a shell.
    typeahead: Vec<u8>,
    last_interrupt: Option<Instant>,
    interrupting: Option<Interrupting>,
    /// Commands approved with `a` / `A` for the rest of the session.
    grants: Grants,
    /// The safety pipeline, loaded at the first proposal.
    policy: Option<Arc<Policy>>,
    /// The policy loading in the background since the first instruction.
    policy_loader: Option<tokio::task::JoinHandle<(Policy, Vec<String>)>>,
    /// A decision on its way.
    pub(super) gating: Option<tokio::task::JoinHandle<GateDone>>,
    /// The last decision, for the audit log.
    gated: Option<Gated>,
    audit_seq: u64,
    audit_id: Option<String>,
    audit_failed: bool,
    /// The session's id (for audit records and the policy's requests).
    pub(super) session_id: String,
    /// The current instruction (hooks and the judge see it).
    instruction: Option<String>,
    /// The shell's state when the current instruction was given.
    snapshot: ContextSnapshot,
    /// The session journal; `None` when it could not be opened.
    pub(super) journal: Option<Journal>,
    /// A journal write failed and the user has been told once.
    journal_failed: bool,
    /// Messages of the conversation already in the journal.
    journaled: usize,
    turn_no: u32,
    call_no: u32,
    /// The backend's limits as its errors revealed them, and the retry of
    /// a call that did not fit.
    limits: CallLimits,
    /// Something of this call's answer is on screen.
    call_shown: bool,
    call_usage: Option<Usage>,
    call_stop: Option<StopReason>,
    /// Tokens used this session against `max_tokens_per_session`.
    budget: SessionBudget,
    /// Where the current turn's messages begin in the conversation.
    turn_start: usize,
    /// Earlier turns being summarised, before the call that did not fit.
    summary: Option<summary::Summarising>,
    /// A summary was tried this turn (it is not tried twice).
    summary_tried: bool,
    /// The session index and what this session adds to it, as the journal
    /// gets the entries that matter (start, turns, end).
    pub(super) index: Option<(ua_store::index::Index, ua_store::index::RecordFeed)>,
    /// An index update failed and the user has been told once.
    index_failed: bool,
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
        f.debug_struct("AgentSide")
            .field("view", &self.view)
            .field("turn", &self.turn)
            .field("streaming", &self.stream.is_some())
            .field("running", &self.running)
            .finish_non_exhaustive()
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
    ) -> Self {
        let view = if oneshot.is_some() { View::Hidden } else { View::Shell };
        let opts_limit = opts.backend.session_limit();
        Self {
            opts,
            can_ask: stdin_tty,
            plain_output: oneshot.is_some() && !out_tty,
            plain_text: ua_context::clean::TerminalText::default(),
            plain_held: Vec::new(),
            oneshot: oneshot.is_some(),
            oneshot_pending: oneshot,
            provider: None,
            building: None,
            editing: None,
            call_pending: false,
            history: Vec::new(),
            turn: None,
            stream: None,
            render: Renderer::new(colour, width, out_tty),
            spin_at: None,
            started: Instant::now(),
            view,
            shell_ready: false,
            waiting_run: None,
            running: None,
            effects: std::collections::VecDeque::new(),
            applying: false,
            asking: None,
            shown: None,
            asked: None,
            paused: false,
            plan_shown: None,
            plan_approved: false,
            question_approves_plan: false,
            error_kind: None,
            keys: KeyDecoder::new(),
            typeahead: Vec::new(),
            last_interrupt: None,
            interrupting: None,
            grants: Grants::new(),
            policy: None,
            policy_loader: None,
            gating: None,
            gated: None,
            audit_seq: 0,
            audit_id: None,
            audit_failed: false,
            session_id: String::new(),
            instruction: None,
            snapshot: ContextSnapshot::default(),
            journal: None,
            journal_failed: false,
            journaled: 0,
            turn_no: 0,
            call_no: 0,
            limits: CallLimits::default(),
            call_shown: false,
            call_usage: None,
            call_stop: None,
            budget: SessionBudget::new(opts_limit),
            sandbox: None,
            blocked: None,
            index: None,
            index_failed: false,
            turn_start: 0,
            summary: None,
            summary_tried: false,
        }
    }

    /// Whether the shell's output is routed through the agent.
    pub(super) fn active(&self) -> bool {
        self.view != View::Shell
    }

    /// Whether keystrokes belong to the agent rather than the shell.
    pub(super) fn takes_keys(&self) -> bool {
        self.turn.is_some() && !self.paused
    }

    pub(super) fn oneshot(&self) -> bool {
        self.oneshot
    }

    /// Batch mode (see `session::batch`): the shell's output is never
    /// shown; the session writes the agent's events as JSON lines.
    pub(super) fn set_batch(&mut self) {
        self.view = View::Hidden;
        self.plain_output = true;
    }

    pub(super) fn deadline(&self) -> Option<Instant> {
        let timeout = self.running.as_ref().filter(|r| !r.timed_out).map(|r| r.timeout_at);
        [self.spin_at, timeout, self.interrupting.as_ref().map(|i| i.check_at)].into_iter().flatten().min()
    }
}

/// The operating system and kernel release, as `linux 6.1.0-18-amd64`.
fn os_release() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{} {}", std::env::consts::OS, release.trim()).trim().to_string()
}

/// A gate decision, with the policy it was made by (loaded on first use).
#[derive(Debug)]
pub(super) struct GateDone {
    proposal: Proposal,
    gated: Gated,
    policy: Arc<Policy>,
    warnings: Vec<String>,
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

/// The next event of the model's stream (the branch is disabled when
/// there is none).
pub(super) async fn next_event(stream: &mut Option<EventStream>) -> Option<Result<StreamEvent, BackendError>> {
    match stream {
        Some(s) => s.next().await,
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
        if self.agent.plain_output {
            let plain = text.replace("\r\n", "\n");
            self.write_out(plain.as_bytes());
        } else {
            self.write_out(text.as_bytes());
        }
    }

    pub(super) fn write_err(&mut self, msg: &str) {
        let line = if self.agent.plain_output { format!("{msg}\n") } else { format!("\r\n{msg}\r\n") };
        let _ = crate::terminal::write_all(std::os::fd::AsFd::as_fd(&std::io::stderr()), line.as_bytes());
    }

    /// One event of the agent's stream, drawn by the renderer.
    pub(super) fn emit(&mut self, event: AgentEvent) {
        if self.json() {
            // One line per event, written whole and at once: a reader
            // never sees half a line, and nothing waits in a buffer.
            if !self.out_broken && crate::terminal::out(event.to_line().as_bytes()).is_err() {
                self.out_broken = true;
            }
            return;
        }
        let out = self.agent.render.event(&event);
        self.show(&out);
    }

    /// A short line for the person (a notice event).
    fn notice(&mut self, text: impl Into<String>) {
        self.emit(AgentEvent::Notice { text: text.into() });
    }

    /// Starts a turn for an instruction typed at the prompt (or given to
    /// `-c`).
    pub(super) fn start_turn(&mut self, text: &str) {
        if self.agent.turn.is_some() {
            if self.agent.paused {
                self.resume(text);
            }
            return;
        }
        if text.trim().is_empty() {
            // A lone `#` with nothing paused: just a fresh prompt.
            self.state.line_ended();
            self.send(b"\r");
            return;
        }
        if let Some(why) = self.agent.blocked.clone() {
            self.agent.render.set_line_start(true);
            self.emit(AgentEvent::Error {
                message: format!("agent commands do not run here: {why}"),
                kind: "sandbox".into(),
            });
            self.state.line_ended();
            self.send(b"\r");
            return;
        }
        self.agent.view = View::Hidden;
        self.agent.render.set_line_start(true);
        self.agent.started = Instant::now();
        self.recorder.line_taken();
        let user_commands = self.recorder.take_commands();
        let cwd = self.cwd();
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
            shell: self.shell_path.display().to_string(),
            env: ua_context::env::allowed_env(&self.agent.opts.include_env, std::env::vars()),
            recent_output_lines: self.recorder.recent_lines(self.agent.opts.terminal_lines),
            user_commands,
            ..ContextSnapshot::default()
        };
        self.agent.turn_no += 1;
        self.agent.call_no = 0;
        if self.agent.policy.is_none() && self.agent.policy_loader.is_none() {
            // Load while the model thinks, so the first proposal does not wait.
            let judge = self.agent.opts.judge.clone();
            let layers = self.agent.opts.policy_layers.clone();
            self.agent.policy_loader = Some(tokio::task::spawn_blocking(move || Policy::load(&judge, &layers)));
        }
        self.journal(JournalEntry::Instruction { turn: self.agent.turn_no, text: text.to_string() });
        self.agent.instruction = Some(text.to_string());
        let history = std::mem::take(&mut self.agent.history);
        self.agent.turn_start = history.len();
        self.agent.summary_tried = false;
        let instruction = vec![Block::text(text)];
        let (turn, effects) = Turn::start(history, instruction, self.agent.opts.limits);
        self.agent.turn = Some(turn);
        // The shell still shows the prompt the instruction was typed at.
        self.agent.shell_ready = true;
        self.apply(effects);
    }

    /// The shell's working directory: OSC 7 when the shell reports it,
    /// else what the kernel says.
    fn cwd(&self) -> String {
        if let Some(cwd) = self.state.cwd() {
            return cwd.to_string();
        }
        let link = format!("/proc/{}/cwd", self.pty.pid());
        std::fs::read_link(link).map(|p| p.display().to_string()).unwrap_or_else(|_| "unknown".into())
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
                    self.agent.asking = None;
                    if self.agent.shown.take() != Some((p.id.clone(), p.command.clone())) {
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
        self.agent.gated.as_ref().and_then(|g| g.decision.as_ref()).map(|d| d.decided_by.rule())
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
        let plan = turn.plan().to_vec();
        let key = (turn.calls(), plan.len());
        if self.agent.opts.confirm != ConfirmMode::Plan || self.agent.plan_shown == Some(key) {
            return;
        }
        self.agent.plan_shown = Some(key);
        self.agent.plan_approved = false;
        if plan.len() < 2 {
            return;
        }
        let mut text = String::from("plan:");
        for (i, c) in plan.iter().enumerate() {
            text.push_str(&format!("\r\n  {}. {}", i + 1, c.replace('\n', " ")));
        }
        self.notice(text);
    }

    fn call(&mut self) {
        // First, so a call that ends before its request still closes the
        // retry that led to it.
        self.agent.limits.start_call();
        self.agent.spin_at = Some(Instant::now());
        self.agent.call_shown = false;
        self.agent.call_usage = None;
        self.agent.call_stop = None;
        let Some(provider) = self.agent.provider.clone() else {
            self.agent.call_pending = true;
            if self.agent.building.is_none() {
                let notice: ua_backend::provider::FallbackNotice = Arc::new(|failed, err, next| {
                    let line = format!("\r\nunixagent: {failed} failed ({err}); trying {next}.\r\n");
                    let _ = crate::terminal::out(line.as_bytes());
                });
                self.agent.building = Some(backend::spawn_build(self.agent.opts.backend.clone(), notice));
            }
            return;
        };
        if let BudgetStatus::Exhausted { used, limit } = self.agent.budget.status() {
            let message = format!(
                "this session has used {used} tokens, its max_tokens_per_session of {limit}; start a new session or raise the limit"
            );
            let effects = self.turn_input(|t| t.stream_ended(Err(message)));
            self.apply(effects);
            return;
        }
        let Some(turn) = self.agent.turn.as_ref() else { return };
        let tools = vec![shell_tool()];
        // The window less room for the answer and the tool definitions,
        // as far as the server has told us its limits.
        let (window, max_tokens) = (provider.context_window(), provider.max_tokens());
        let mut budget = self.agent.limits.prompt_budget(window, max_tokens, estimate_prompt("", &[], &tools));
        if self.agent.limits.trimming() {
            budget = retry_budget(budget);
        }
        let history = turn.messages();
        let fitted = fit(&self.agent.snapshot, history, budget, estimate_message);
        // Outgrown: earlier turns become one summary rather than being
        // left out without a trace (once a turn; if that fails, they are).
        let outgrown = fitted.as_ref().map_or(true, |f| !f.omitted.is_empty());
        if outgrown && !self.agent.summary_tried && self.agent.turn_start > 1 {
            self.agent.summary_tried = true;
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
        let appended = history[self.agent.journaled.min(history.len())..].to_vec();
        self.agent.journaled = history.len();
        self.agent.call_no += 1;
        let first_call = self.agent.turn_no == 1 && self.agent.call_no == 1;
        self.journal(JournalEntry::ModelRequest {
            turn: self.agent.turn_no,
            call: self.agent.call_no,
            backend: provider.name().to_string(),
            model: provider.model().to_string(),
            system: fitted.system.clone(),
            messages_appended: appended,
            omitted: fitted.omitted.clone(),
            tools: first_call.then(|| tools.clone()),
            purpose: ua_protocol::journal::CallPurpose::Conversation,
        });
        let max_tokens = self.agent.limits.request_max_tokens(max_tokens);
        let request = Request { system: fitted.system, messages: fitted.messages, tools, max_tokens };
        self.agent.stream = Some(provider.stream(&request));
    }

    pub(super) fn on_backend_built(&mut self, built: Option<Result<Built, String>>) {
        let built = built.unwrap_or_else(|| Err("setting up the model backend failed unexpectedly".into()));
        match built {
            Ok((provider, warnings)) => {
                for w in warnings {
                    self.notice(w);
                }
                self.agent.provider = Some(provider);
                if std::mem::take(&mut self.agent.call_pending) {
                    self.call();
                }
            }
            Err(message) => {
                self.agent.call_pending = false;
                let effects = self.turn_input(|t| t.stream_ended(Err(message)));
                self.apply(effects);
            }
        }
    }

    pub(super) fn on_model_event(&mut self, event: Option<Result<StreamEvent, BackendError>>) {
        if self.agent.summary.is_some() {
            self.on_summary_event(event);
            return;
        }
        let effects = match event {
            Some(Ok(ev)) => {
                match &ev {
                    StreamEvent::Usage(u) => {
                        self.agent.call_usage = Some(*u);
                        if let BudgetStatus::Warn { used, limit } = self.agent.budget.record(u) {
                            self.notice(format!(
                                "this session has used {used} of its {limit} tokens (max_tokens_per_session)"
                            ));
                        }
                    }
                    StreamEvent::Stop(s) => self.agent.call_stop = Some(s.clone()),
                    StreamEvent::TextDelta(_) | StreamEvent::ThinkingDelta(_) => self.agent.call_shown = true,
                    _ => {}
                }
                self.turn_input(|t| t.event(ev))
            }
            Some(Err(e)) => {
                self.agent.stream = None;
                // Something did not fit (the conversation, or the answer
                // beside it) and nothing is on screen yet: ask again within
                // the limits the server stated, trimming or lowering
                // max_tokens, and say so when it is news.
                let recovery = match self.agent.provider.as_ref() {
                    Some(p) if !self.agent.call_shown => {
                        self.agent.limits.recover(&e, p.context_window(), p.max_tokens())
                    }
                    _ => None,
                };
                if let Some(recovery) = recovery {
                    if let Some(line) = recovery.notice() {
                        self.notice(line);
                    }
                    self.call();
                    return;
                }
                self.journal(JournalEntry::Error { turn: Some(self.agent.turn_no), message: e.to_string() });
                self.agent.error_kind = Some(error_kind(e.kind()));
                let effects = self.turn_input(|t| t.stream_ended(Err(e.to_string())));
                self.journal_response();
                effects
            }
            None => {
                self.agent.stream = None;
                let effects = self.turn_input(|t| t.stream_ended(Ok(())));
                self.journal_response();
                effects
            }
        };
        if self.agent.stream.is_none() {
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
        self.agent.stream = None;
        if let Some(task) = self.agent.gating.take() {
            task.abort();
        }
        self.agent.call_pending = false;
        self.agent.asking = None;
        let effects = self.turn_input(|t| t.cancel());
        self.apply(effects);
    }

    fn end_turn(&mut self, end: End) {
        self.agent.spin_at = None;
        self.agent.stream = None;
        self.agent.asking = None;
        self.agent.waiting_run = None;
        if let Some(r) = &self.agent.running {
            // Ended while a command ran: its output may have left the
            // cursor mid-line.
            self.agent.render.set_line_start(r.capture.ends_line());
        }
        let held = std::mem::take(&mut self.agent.plain_held);
        self.write_plain(&held);
        self.emit_settled();
        let Some(turn) = self.agent.turn.take() else { return };
        match &end {
            End::Failed(message) => {
                let kind = self.agent.error_kind.take().unwrap_or_else(|| "turn".into());
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
                .provider
                .as_ref()
                .and_then(|p| self.agent.opts.pricing.get(p.model()))
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
            self.agent.view = View::Hidden;
            if self.agent.running.take().is_none() && self.agent.shell_ready {
                self.state.line_ended();
                self.send(b"\r");
            }
            return;
        }
        if self.agent.oneshot {
            self.exit_now = Some(status);
            return;
        }
        // Ask the shell for a fresh prompt: an empty line runs nothing
        // and keeps `$?`. A command still running draws one when it ends.
        self.agent.view = if self.state.integrated() { View::UntilPrompt } else { View::Shell };
        if self.agent.running.take().is_none() && self.agent.shell_ready {
            self.state.line_ended();
            self.send(b"\r");
        }
    }
}

/// A backend error's kind as the `kind` of an `error` event
/// (`context_too_long`, `rate_limited`, …).
fn error_kind(kind: ErrorKind) -> String {
    let name = format!("{kind:?}");
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
