//! The turn driver: it runs the agent's turns for the session.
//!
//! It owns the [`Turn`] in progress, the queue of the turn's effects, the
//! turn number, the instruction and its context snapshot, and the
//! conversation between turns; and the parts a turn works through, each
//! reached only by its methods: the model call ([`ModelCall`]), the gate
//! ([`Gatekeeper`]), the question ([`Asking`]) and the records
//! ([`Records`]).
//!
//! Its methods take one input (an instruction, an event of the model's
//! answer, a gate decision, a key or an answer, a command that started or
//! ended) and push what follows into an [`Outbox`]: events for the front
//! ends, chrome for a terminal, requests for the shell executor, the end
//! of the turn. It never touches the terminal or the PTY, and the event
//! loop carries the outbox out after each call, so the driver runs in a
//! unit test with a fake provider and a fake shell (see `tests.rs`).

mod gatekeeper;
mod inputs;
mod model;
mod records;
mod sandbox;
mod summary;

pub(super) use gatekeeper::{Audit, GateDone, Gatekeeper};
pub(super) use inputs::{Input, TurnContext, TurnOptions, Wake};
pub(super) use model::{ModelCall, ModelWake};
pub(super) use records::Records;
pub(super) use sandbox::SandboxWatch;

use std::collections::VecDeque;

use tokio::time::Instant;
use ua_backend::error::BackendError;
use ua_backend::provider::{Fallback, Request};
use ua_backend::tokens::estimate_message;
use ua_context::fit::fit;
use ua_context::prompt::{ContextSnapshot, frame_tool_output};
use ua_protocol::agent::{AgentEvent, CommandStatus, GateDecision, TokenUsage};
use ua_protocol::conversation::{Block, Message};
use ua_protocol::event::StreamEvent;
use ua_protocol::journal::JournalEntry;
use ua_protocol::tool::shell_tool;
use ua_term::keys::Key;

use super::executor::{Finished, Unstarted};
use super::outbox::{Chrome, Out, Outbox, ShellOp, TurnEnd};
use crate::agent::asking::Asking;
use crate::agent::backend::Built;
use crate::agent::events;
use crate::agent::question::{Reply, Step};
use crate::agent::turn::{Answer, Effect, End, Outcome, Proposal, Turn, Verdict};
use model::SummaryStep;
use ua_policy::gate::Request as PolicyRequest;

/// The turn driver. See the module docs.
#[derive(Debug)]
pub(in crate::session) struct Driver {
    opts: TurnOptions,
    /// Whether a person can answer questions.
    can_ask: bool,
    /// The conversation between turns.
    history: Vec<Message>,
    turn: Option<Turn>,
    /// When the current turn started (its footer's time).
    started: Instant,
    /// Effects waiting to be carried out (see `apply`).
    effects: VecDeque<Effect>,
    applying: bool,
    turn_no: u32,
    /// Where the current turn's messages begin in the conversation.
    turn_start: usize,
    /// The current instruction (hooks and the judge see it).
    instruction: Option<String>,
    /// The shell's state when the current instruction was given.
    snapshot: ContextSnapshot,
    /// The shell's markers worked when the instruction was given.
    markers: bool,
    model: ModelCall,
    gate: Gatekeeper,
    asking: Asking,
    records: Records,
    /// The shell runs in the kernel sandbox: its rules and the proxy's
    /// decisions, to say when a command ran into them.
    sandbox: Option<SandboxWatch>,
    /// Why agent commands may not run at all in this session (the sandbox
    /// asked for could not be applied); each instruction is answered with
    /// it.
    blocked: Option<String>,
}

impl Driver {
    pub(in crate::session) fn new(opts: TurnOptions, model: ModelCall, gate: Gatekeeper, records: Records) -> Self {
        Self {
            opts,
            can_ask: false,
            history: Vec::new(),
            turn: None,
            started: Instant::now(),
            effects: VecDeque::new(),
            applying: false,
            turn_no: 0,
            turn_start: 0,
            instruction: None,
            snapshot: ContextSnapshot::default(),
            markers: true,
            model,
            gate,
            asking: Asking::default(),
            records,
            sandbox: None,
            blocked: None,
        }
    }

    /// Whether a question can be answered at all (batch mode: while its
    /// input is open).
    pub(in crate::session) fn set_can_ask(&mut self, can: bool) {
        self.can_ask = can;
    }

    /// The shell runs in the kernel sandbox.
    pub(in crate::session) fn set_sandbox(&mut self, watch: SandboxWatch) {
        self.sandbox = Some(watch);
    }

    /// Agent commands may not run: each instruction is answered with why.
    pub(in crate::session) fn set_blocked(&mut self, why: String) {
        self.blocked = Some(why);
    }

    pub(in crate::session) fn journal_path(&self) -> Option<&std::path::Path> {
        self.records.journal_path()
    }

    /// A turn is under way.
    pub(in crate::session) fn turn_running(&self) -> bool {
        self.turn.is_some()
    }

    /// Whether keystrokes belong to the turn rather than the shell.
    pub(in crate::session) fn takes_keys(&self) -> bool {
        self.turn.is_some() && !self.asking.paused()
    }

    /// A question waits for an answer.
    pub(in crate::session) fn asking(&self) -> bool {
        self.asking.open()
    }

    /// The id of the proposal a question is waiting on, if any.
    pub(in crate::session) fn asking_id(&self) -> Option<String> {
        self.current().filter(|_| self.asking.open()).map(|p| p.id.clone())
    }

    fn current(&self) -> Option<&Proposal> {
        self.turn.as_ref().and_then(Turn::current)
    }

    /// Something is on its way: the model's answer, the backend, a gate
    /// decision.
    pub(in crate::session) fn waiting(&self) -> bool {
        self.model.waiting() || self.gate.deciding()
    }

    /// The next of what is on its way.
    pub(in crate::session) async fn wake(&mut self) -> Wake {
        tokio::select! {
            biased;
            w = self.model.wake(), if self.model.waiting() => Wake::Model(w),
            g = self.gate.decided(), if self.gate.deciding() => Wake::Gated(g.map(|r| r.map(Box::new))),
            else => std::future::pending().await,
        }
    }

    pub(in crate::session) fn on_wake(&mut self, wake: Wake, out: &mut Outbox) {
        match wake {
            Wake::Model(ModelWake::Event(event)) => self.on_model_event(event, out),
            Wake::Model(ModelWake::Built(built)) => self.on_built(built, out),
            Wake::Gated(done) => self.on_gated(done, out),
        }
    }

    /// An instruction is being typed ([`ModelCall::prepare`]).
    pub(in crate::session) fn prepare(&mut self) {
        self.model.prepare();
    }

    /// Appends to the session journal (the session's own start and end).
    pub(in crate::session) fn record(&mut self, entry: JournalEntry, out: &mut Outbox) {
        self.records.record(entry, out);
    }

    /// An instruction: starts a turn, or resumes (or steers) a paused one.
    /// `context` is asked for only when a turn starts.
    pub(in crate::session) fn instruction(
        &mut self,
        text: &str,
        context: impl FnOnce(usize) -> TurnContext,
        out: &mut Outbox,
    ) {
        if self.turn.is_some() {
            if self.asking.paused() {
                self.resume(text, out);
            }
            return;
        }
        if text.trim().is_empty() {
            // A lone `#` with nothing paused: just a fresh prompt.
            out.shell(ShellOp::FreshPrompt);
            return;
        }
        if let Some(why) = &self.blocked {
            out.chrome(Chrome::LineStart(true));
            let message = format!("agent commands do not run here: {why}");
            out.event(AgentEvent::Error { message, kind: "sandbox".into() });
            out.shell(ShellOp::FreshPrompt);
            return;
        }
        out.chrome(Chrome::LineStart(true));
        self.started = Instant::now();
        let ctx = context(self.opts.terminal_lines);
        self.records.user_commands(&ctx.user_commands, &ctx.cwd, out);
        self.markers = ctx.markers;
        self.snapshot = ContextSnapshot {
            cwd: ctx.cwd,
            os: inputs::os_release(),
            shell: ctx.shell,
            env: ua_context::env::allowed_env(&self.opts.include_env, std::env::vars()),
            recent_output_lines: ctx.recent_lines,
            user_commands: ctx.user_commands,
            board: ctx.board,
            active_tasks: ctx.active_tasks,
        };
        self.turn_no += 1;
        self.model.new_turn();
        // Load while the model thinks, so the first proposal does not wait.
        self.gate.preload();
        self.records.record(JournalEntry::Instruction { turn: self.turn_no, text: text.to_string() }, out);
        self.instruction = Some(text.to_string());
        let history = std::mem::take(&mut self.history);
        self.turn_start = history.len();
        let (turn, effects) = Turn::start(history, vec![Block::text(text)], self.opts.limits);
        self.turn = Some(turn);
        // The shell still shows the prompt the instruction was typed at.
        out.shell(ShellOp::TurnStarted);
        self.apply(effects, out);
    }

    /// Carries out a turn's effects, and the effects those lead to, in
    /// order. Carrying one out can yield more (a run that fails at once
    /// ends the command, which may end the turn): those join the queue,
    /// and the outermost call works through it, so effects never nest.
    fn apply(&mut self, effects: Vec<Effect>, out: &mut Outbox) {
        self.effects.extend(effects);
        if self.applying {
            return;
        }
        self.applying = true;
        while let Some(effect) = self.effects.pop_front() {
            match effect {
                Effect::Call => self.call(out),
                Effect::Text(text) => out.event(AgentEvent::Text { text }),
                Effect::Thinking(text) => out.event(AgentEvent::Thinking { text }),
                Effect::Gate(p) => {
                    self.show_plan(out);
                    self.start_gate(p, out);
                }
                Effect::Ask(p, v) => self.ask(&p, &v, out),
                Effect::Notice(text) => out.notice(text),
                Effect::Run(p, v) => {
                    if !self.asking.running(&p) {
                        out.event(events::command(&p, &v, GateDecision::Allow, self.gate.decided_by()));
                    }
                    self.run(p, out);
                }
                Effect::Done(end) => self.end_turn(end, out),
            }
            self.emit_settled(out);
        }
        self.applying = false;
    }

    /// Reports the results the turn settled since the last time.
    fn emit_settled(&mut self, out: &mut Outbox) {
        for s in self.turn.as_mut().map(Turn::take_settled).unwrap_or_default() {
            out.event(events::result(s));
        }
    }

    fn turn_input(&mut self, f: impl FnOnce(&mut Turn) -> Vec<Effect>, out: &mut Outbox) {
        let effects = self.turn.as_mut().map(f).unwrap_or_default();
        self.apply(effects, out);
    }

    /// In plan mode, shows every command of a new answer before the first
    /// is gated.
    fn show_plan(&mut self, out: &mut Outbox) {
        let Some(turn) = self.turn.as_ref() else { return };
        if let Some(text) = self.asking.plan(turn, self.gate.mode()) {
            out.notice(text);
        }
    }

    fn call(&mut self, out: &mut Outbox) {
        let provider = self.model.begin();
        out.chrome(Chrome::Spin);
        let Some(provider) = provider else { return };
        if let Some(message) = self.model.exhausted() {
            self.turn_input(|t| t.stream_ended(Err(message)), out);
            return;
        }
        let Some(turn) = self.turn.as_ref() else { return };
        let tools = vec![shell_tool()];
        let budget = self.model.prompt_budget(&provider, &tools);
        let history = turn.messages();
        let fitted = fit(&self.snapshot, history, budget, estimate_message);
        // Outgrown: earlier turns become one summary rather than being
        // left out without a trace (once a turn; if that fails, they are).
        let outgrown = fitted.as_ref().map_or(true, |f| !f.omitted.is_empty());
        if outgrown && self.turn_start > 1 && self.model.try_summary() {
            self.start_summary(&provider, budget, out);
            return;
        }
        let fitted = match fitted {
            Ok(f) => f,
            Err(e) => {
                let message = format!("{e}; start a new session or configure a model with a larger context window");
                self.turn_input(|t| t.stream_ended(Err(message)), out);
                return;
            }
        };
        let call = self.model.next_call();
        self.records.request((self.turn_no, call), &*provider, (&fitted, history), &tools, out);
        let request = Request { system: fitted.system, messages: fitted.messages, tools, max_tokens: None };
        self.model.stream(&provider, request);
    }

    fn on_built(&mut self, built: Option<Result<Built, String>>, out: &mut Outbox) {
        let built = built.unwrap_or_else(|| Err("setting up the model backend failed unexpectedly".into()));
        match self.model.on_built(built) {
            Ok((warnings, pending)) => {
                for w in warnings {
                    out.notice(w);
                }
                if pending {
                    self.call(out);
                }
            }
            Err(message) => {
                self.records.error(self.turn_no, message.clone(), out);
                self.turn_input(|t| t.stream_ended(Err(message)), out);
            }
        }
    }

    fn on_model_event(&mut self, event: Option<Result<StreamEvent, BackendError>>, out: &mut Outbox) {
        if self.model.summarising() {
            self.on_summary_event(event, out);
            return;
        }
        let effects = match event {
            Some(Ok(ev)) => {
                if let Some(warning) = self.model.on_event(&ev) {
                    out.notice(warning);
                }
                self.turn.as_mut().map(|t| t.event(ev)).unwrap_or_default()
            }
            Some(Err(e)) => {
                // Something did not fit (the conversation, or the answer
                // beside it) and nothing is on screen yet: ask again within
                // the limits the server stated, trimming or lowering
                // max_tokens, and say so when it is news.
                if let Some(recovery) = self.model.on_error(&e) {
                    if let Some(line) = recovery.notice() {
                        out.notice(line);
                    }
                    self.call(out);
                    return;
                }
                self.records.error(self.turn_no, e.to_string(), out);
                self.model.set_error(e.kind());
                let effects = self.turn.as_mut().map(|t| t.stream_ended(Err(e.to_string()))).unwrap_or_default();
                self.journal_answer(out);
                effects
            }
            None => {
                self.model.end_stream();
                let effects = self.turn.as_mut().map(|t| t.stream_ended(Ok(()))).unwrap_or_default();
                self.journal_answer(out);
                effects
            }
        };
        if !self.model.streaming() {
            out.chrome(Chrome::Settle);
        }
        self.apply(effects, out);
    }

    /// Journals the model's answer once the turn has added it.
    fn journal_answer(&mut self, out: &mut Outbox) {
        let Some(turn) = self.turn.as_ref() else { return };
        let meta = self.model.answer_meta();
        self.records.answer(self.turn_no, self.model.call_no(), turn.messages(), meta, out);
    }

    /// Asks the model to condense the turns before this one.
    fn start_summary(&mut self, provider: &Fallback, budget: u64, out: &mut Outbox) {
        let Some(turn) = self.turn.as_ref() else { return };
        let upto = self.turn_start.min(turn.messages().len());
        let call = self.model.next_call();
        let (request, entry) = summary::request(&turn.messages()[..upto], budget, (self.turn_no, call), provider);
        self.records.record(entry, out);
        out.notice("the conversation has outgrown the model's window: summarising the earlier turns");
        self.model.summarise(provider, request, upto);
    }

    /// The summary call's stream: gathered, then put in place of the
    /// turns it covers, and the call that did not fit is made again.
    fn on_summary_event(&mut self, event: Option<Result<StreamEvent, BackendError>>, out: &mut Outbox) {
        let s = match self.model.summary_event(event) {
            SummaryStep::More => return,
            SummaryStep::Usage(u) => {
                // The turn's totals (its footer, journal, cost) include it.
                if let Some(turn) = self.turn.as_mut() {
                    turn.add_usage(&u);
                }
                return;
            }
            SummaryStep::Failed(e) => {
                self.records.error(self.turn_no, format!("summarising failed: {e}"), out);
                out.notice(format!("summarising failed ({e}); the oldest turns are left out of this call instead"));
                self.call(out);
                return;
            }
            SummaryStep::Done(s) => s,
        };
        if s.text.is_empty() {
            out.notice("the summary came back empty; the oldest turns are left out of this call instead");
            self.call(out);
            return;
        }
        for entry in summary::journal_entries(self.turn_no, &s) {
            self.records.record(entry, out);
        }
        if let Some(turn) = self.turn.as_mut() {
            turn.summarise(s.upto, ua_store::fold::summary_message(&s.text));
        }
        self.records.summarised(s.upto);
        self.turn_start = 1;
        self.call(out);
    }

    /// Sends a proposal through the gate; the decision comes back as a
    /// [`Wake::Gated`]. Without markers, commands are refused: their
    /// output and status cannot be told from the prompt.
    fn start_gate(&mut self, p: Proposal, out: &mut Outbox) {
        if !self.markers {
            let verdict = Verdict {
                outcome: Outcome::Deny,
                risk: "unrated".into(),
                reason: "shell integration is not working in this shell, so unixagent cannot run commands in it".into(),
                note: None,
                strong: false,
                rewritten: None,
                defines: Vec::new(),
            };
            self.on_verdict(p, verdict, false, out);
            return;
        }
        let request = PolicyRequest {
            command: p.command.clone(),
            cwd: self.snapshot.cwd.clone(),
            session: self.records.session_id().to_string(),
            depth: crate::trace::TraceContext::inherited().depth,
            human_attached: self.can_ask,
            instruction: self.instruction.clone(),
        };
        out.chrome(Chrome::Spin);
        self.gate.decide(p, request, self.model.provider());
    }

    fn on_gated(&mut self, done: Option<Result<Box<GateDone>, tokio::task::JoinError>>, out: &mut Outbox) {
        out.chrome(Chrome::Settle);
        let Some(Ok(done)) = done else {
            // Cancelled (the turn ended) or the task failed: nothing to do
            // for a turn that is gone; a live one is told.
            if self.current().is_some() {
                self.turn_input(Turn::cancel, out);
            }
            return;
        };
        let (proposal, verdict, warnings) = self.gate.settle(*done);
        for w in &warnings {
            out.notice(format!("unixagent: {w}"));
        }
        self.on_verdict(proposal, verdict, true, out);
    }

    /// Applies the confirm mode to the gate's verdict ([`Gatekeeper::confirm`])
    /// and hands it to the turn.
    fn on_verdict(&mut self, p: Proposal, verdict: Verdict, from_policy: bool, out: &mut Outbox) {
        let c = self.gate.confirm(verdict, self.asking.plan_approved(), self.can_ask);
        self.asking.set_approves_plan(c.approves_plan);
        let verdict = c.verdict;
        if let Some((outcome, approver)) = c.decided {
            let by = (verdict.reason.as_str(), approver);
            self.records.decision(self.turn_no, &p, outcome, by, &verdict.risk, out);
        }
        match c.audit {
            Some(Audit::ApprovedByPlan) => self.records.audit_human(self.gate.policy(), self.gate.last(), true, out),
            Some(Audit::Policy) if from_policy => {
                self.records.audit_decision(self.gate.policy(), self.gate.last(), out)
            }
            Some(Audit::Policy) | None => {}
        }
        if let Some(r) = verdict.rewritten.as_ref().filter(|r| r.by_hook) {
            out.notice(format!("a hook rewrote the command: {}", r.command));
        }
        if verdict.outcome == Outcome::Deny {
            out.event(events::command(&p, &verdict, GateDecision::Deny, self.gate.decided_by()));
        }
        self.turn_input(|t| t.verdict(verdict), out);
    }

    fn ask(&mut self, p: &Proposal, v: &Verdict, out: &mut Outbox) {
        out.event(events::command(p, v, GateDecision::Ask, self.gate.decided_by()));
        out.event(events::approval(p, v));
        self.asking.ask(p, v);
    }

    /// What a front end tells the turn (see [`Input`]).
    pub(in crate::session) fn input(&mut self, input: Input, out: &mut Outbox) {
        match input {
            Input::Key(key) => self.key(key, out),
            Input::Edited(edited) => self.edited(edited, out),
            Input::Answer(answer) if self.asking.open() => self.answer(answer, out),
            Input::Answer(_) => {}
            Input::Reply(reply) if self.asking.open() => self.reply(reply, out),
            Input::Reply(_) => {}
            Input::Steer(text) if self.asking.open() => self.answer(Answer::Steer(text), out),
            // Outside a question the new direction replaces the running
            // turn: it ends, and the session starts one with the text.
            Input::Steer(_) | Input::Stop => {
                if self.turn.is_some() {
                    out.shell(ShellOp::Interrupt);
                    self.cancel(out);
                }
            }
            Input::Cancel => self.cancel(out),
        }
    }

    fn answer(&mut self, answer: Answer, out: &mut Outbox) {
        self.asking.close();
        out.chrome(Chrome::HandOver);
        if let Some(p) = self.current().cloned() {
            let risk = self.asking.risk();
            self.records.decision(self.turn_no, &p, answer.outcome(), ("the user", "human"), &risk, out);
            if !matches!(answer, Answer::Edit(_)) {
                let approved = matches!(answer, Answer::Run);
                self.records.audit_human(self.gate.policy(), self.gate.last(), approved, out);
            }
        }
        self.turn_input(|t| t.answer(answer), out);
    }

    /// A key typed at the question (or, with none open, Ctrl+C).
    fn key(&mut self, key: Key, out: &mut Outbox) {
        if !self.asking.open() {
            // Streaming or waiting: only Ctrl+C means something.
            if key == Key::Ctrl('c') {
                self.cancel(out);
            }
            return;
        }
        for step in self.asking.key(key).unwrap_or_default() {
            match step {
                Step::Echo(text) => out.chrome(Chrome::Echo(text.to_string())),
                Step::EchoChar(c) => out.chrome(Chrome::Echo(c.to_string())),
                Step::Edit => match self.current() {
                    // Opens the proposal in the person's editor (like
                    // `git commit`); the text comes back through `edited`.
                    Some(p) => {
                        let command = p.command.clone();
                        out.chrome(Chrome::HandOver);
                        out.push(Out::Edit(command));
                    }
                    None => self.asking.reset(),
                },
                Step::Pause => self.pause(out),
                Step::Answer(reply) => self.reply(reply, out),
            }
        }
    }

    /// A reply to the question, from a key or a front end: the answer, and
    /// the grant it carries (`a`: this command, for the rest of the session).
    fn reply(&mut self, reply: Reply, out: &mut Outbox) {
        let command = self.current().map(|p| p.command.clone());
        let (answer, grant) = self.asking.reply(reply, command.as_deref());
        if let Some(grant) = grant {
            self.gate.grant(grant);
        }
        self.answer(answer, out);
    }

    /// The editor could not be started: the question is asked as before.
    pub(in crate::session) fn edit_failed(&mut self) {
        self.asking.reset();
    }

    /// The editor closed: the edited command, or why there is none.
    fn edited(&mut self, edited: Option<Result<String, String>>, out: &mut Outbox) {
        match edited {
            Some(Ok(command)) if !command.trim().is_empty() => self.answer(Answer::Edit(command.trim().into()), out),
            Some(Ok(_)) | None => self.answer(Answer::Skip, out),
            Some(Err(e)) => {
                out.event(AgentEvent::Error { message: e, kind: "editor".into() });
                self.asking.reset();
                out.chrome(Chrome::Question { strong: self.asking.verdict().strong });
            }
        }
    }

    /// Esc at a question: the shell comes back with the turn waiting. A
    /// lone `#` resumes it; `# text` steers it.
    fn pause(&mut self, out: &mut Outbox) {
        self.asking.pause();
        out.chrome(Chrome::HandOver);
        out.notice("paused: the shell is yours; # alone resumes, # with text steers");
        out.shell(ShellOp::Pause);
    }

    fn resume(&mut self, text: &str, out: &mut Outbox) {
        self.asking.resume();
        out.shell(ShellOp::Resume);
        out.chrome(Chrome::LineStart(true));
        if !text.trim().is_empty() {
            self.answer(Answer::Steer(text.trim().to_string()), out);
            return;
        }
        let Some(p) = self.current().cloned() else { return };
        let v = self.asking.verdict();
        self.ask(&p, &v, out);
    }

    /// Ends the turn now, keeping the conversation valid.
    fn cancel(&mut self, out: &mut Outbox) {
        self.model.cancel();
        self.gate.abort();
        self.asking.close();
        self.turn_input(Turn::cancel, out);
    }

    /// Hands an approved command to the shell executor.
    fn run(&mut self, p: Proposal, out: &mut Outbox) {
        if p.command.trim().is_empty() {
            self.turn_input(|t| t.command_done(0, "(empty command: nothing ran)".into()), out);
            return;
        }
        out.shell(ShellOp::Run(p));
    }

    /// The executor is about to type the command: the journal's ledger is
    /// written (and synced, unless read-only) first, so a crash leaves no
    /// doubt it started.
    /// Returns the line to type: the command, carrying its trace context
    /// when it starts a unixagent (see `trace::typed_command`).
    pub(in crate::session) fn command_typed(&mut self, p: &Proposal, out: &mut Outbox) -> String {
        self.records.intent(self.turn_no, p, self.gate.read_only(), out);
        crate::trace::typed_command(&self.opts.telemetry, &self.opts.shell, self.records.session_id(), self.turn_no, p)
    }

    /// The agent's command started: refusals from before it are not its own.
    pub(in crate::session) fn command_started(&mut self) {
        if let Some(w) = self.sandbox.as_mut() {
            w.decisions();
        }
    }

    /// The agent's command ended. `cwd` says where it ran (asked only
    /// when the sandbox may have refused it something).
    pub(in crate::session) fn command_finished(&mut self, f: Finished, cwd: impl FnOnce() -> String, out: &mut Outbox) {
        out.chrome(Chrome::LineStart(f.ends_line));
        out.chrome(Chrome::HandOver);
        let code = f.exit_code;
        let mut output = f.output;
        if let Some(w) = self.sandbox.as_mut() {
            let refusals = w.explain(&cwd(), &output, code != 0);
            self.records.audit_network(self.gate.policy(), self.gate.last(), &refusals.decisions, out);
            for line in &refusals.lines {
                output.push_str(&format!("\n[sandbox: {line}]"));
            }
            if let Some(text) = refusals.notice() {
                out.notice(text);
            }
        }
        let framed = frame_tool_output(Some(code), &output, f.truncated);
        let entry = JournalEntry::ToolResult {
            turn: self.turn_no,
            tool_use_id: f.proposal.id.clone(),
            command: f.proposal.command.clone(),
            exit_code: Some(code),
            output: framed.clone(),
            is_error: code != 0,
            truncated: f.truncated,
            duration_ms: u64::try_from(f.duration.as_millis()).unwrap_or(u64::MAX),
        };
        self.records.record(entry, out);
        self.records.audit_outcome(self.gate.policy(), self.gate.last(), (code, f.duration), out);
        self.gate.post_exec(code, f.duration);
        let status = match (f.timed_out, code) {
            (true, _) => CommandStatus::Timeout,
            (false, 0) => CommandStatus::Ok,
            (false, _) => CommandStatus::Failed,
        };
        self.turn_input(|t| t.command_ended(code, framed, status), out);
    }

    /// The agent's command line never ran: what the shell said about it is
    /// its result.
    pub(in crate::session) fn command_unstarted(&mut self, u: Unstarted, out: &mut Outbox) {
        out.chrome(Chrome::Text(format!("{}\n", u.said)));
        let framed = frame_tool_output(Some(u.exit_code), &u.said, false);
        self.turn_input(|t| t.command_done(u.exit_code, framed), out);
    }

    fn end_turn(&mut self, end: End, out: &mut Outbox) {
        out.chrome(Chrome::StopSpinner);
        self.model.end_stream();
        self.asking.close();
        out.shell(ShellOp::TurnEnding);
        self.emit_settled(out);
        let Some(turn) = self.turn.take() else { return };
        match &end {
            End::Failed(message) => {
                let kind = self.model.take_error_kind().unwrap_or_else(|| "turn".into());
                out.event(AgentEvent::Error { message: message.clone(), kind });
            }
            End::StepLimit => {
                out.notice(format!("stopped: this turn ran {} commands, its limit", self.opts.limits.max_steps))
            }
            End::Answered | End::Stopped => {}
        }
        let (usage, steps, last_exit) = (turn.usage(), turn.steps(), turn.last_exit());
        let descendants = self.records.descendants();
        out.chrome(Chrome::Footer { usage, commands: steps, elapsed: self.started.elapsed(), descendants });
        let meta = self.model.answer_meta();
        let stop = end.stop(meta.1.as_ref());
        self.records.answer(self.turn_no, self.model.call_no(), turn.messages(), meta, out);
        let cost_micros = self.model.model().and_then(|m| self.opts.pricing.get(m)).map(|price| price.micros(&usage));
        self.records.turn_end(self.turn_no, &end, (usage, steps, cost_micros), out);
        let status = end.exit_status(last_exit);
        let usage = TokenUsage { input: usage.input_tokens, output: usage.output_tokens, cost_micros };
        out.event(AgentEvent::TurnEnd { stop, exit_code: status, usage, descendants });
        self.history = turn.into_messages();
        out.push(Out::TurnEnded(TurnEnd { end, status, usage, steps, last_exit }));
    }

    /// The session's spans are recorded as its journal is written.
    pub(in crate::session) fn trace(&mut self, spans: Option<crate::trace::Live>) {
        self.records.trace(spans);
    }

    /// The spans' recorder, to finish once the session has ended.
    pub(in crate::session) fn take_spans(&mut self) -> Option<crate::trace::Live> {
        self.records.take_spans()
    }

    /// A child agent ended: its tokens join the turn's footer and end.
    pub(in crate::session) fn descendants_used(&mut self, usage: TokenUsage) {
        self.records.descendants_used(usage);
    }

    /// Carries on a session reopened with `--continue` or `--resume`: the
    /// journal says so, and the conversation, its journaled part and the
    /// turn count are where the journal left them. `notices`: the resume's
    /// lines go out as notices (batch mode; a terminal printed them).
    pub(in crate::session) fn continue_from(
        &mut self,
        r: ua_store::resume::Resumed,
        (shell, cwd): (&std::path::Path, &str),
        before: ua_protocol::event::Usage,
        notices: bool,
        out: &mut Outbox,
    ) {
        self.records.resumed(&r, (shell, cwd), notices, out);
        // The same session: what it used before counts against its budget.
        if let Some(warning) = self.model.used_before(&before) {
            out.notice(warning);
        }
        self.history = r.conversation;
        self.turn_no = r.next_turn.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests;
