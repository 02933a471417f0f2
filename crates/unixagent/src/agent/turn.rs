//! One agentic turn as a pure state machine.
//!
//! A turn starts from an instruction and walks its phases: stream the
//! model's answer, gate each proposed command, ask the human when the gate
//! says so, run the command in the shell, observe its result, and either
//! call the model again or finish. The machine does no I/O: every input
//! (a stream event, a gate verdict, a key answer, a finished command)
//! returns the [`Effect`]s the session must carry out, in order. That keeps
//! the rules of a turn (which results the model gets, what a failure stops,
//! when the turn ends) in one place where tests can drive them directly.
//!
//! The conversation the turn extends always stays valid for every
//! provider: each `tool_use` the model sent gets exactly one `tool_result`
//! before the next model call or the end of the turn, whatever the human
//! did (skip, quit, steer, Ctrl+C).
//!
//! A tool call the output limit cut off (`max_tokens` in the middle of its
//! JSON) is dropped, never answered: it never entered the conversation as a
//! `tool_use`, so no result is owed. The user sees one line about it, and
//! the next call carries [`CUT_OFF_NOTE`] after the results of the calls
//! that did arrive whole, so the model knows why nothing ran and can try a
//! shorter command. Dropping is the only choice that keeps the invariant
//! without inventing input: answering the half call would need an id and
//! input the provider would accept back, and its input is not valid JSON.

use std::collections::VecDeque;

use ua_protocol::agent::{CommandStatus, TurnStop};
use ua_protocol::conversation::{Block, Message, Role, ToolResult, ToolUse};

use ua_protocol::event::{StopReason, StreamEvent, TurnBuilder, Usage};
use ua_protocol::journal::DecisionOutcome;
use ua_protocol::tool::{OutputMode, ShellInput};

/// Told to the model, in the next call, when its previous answer was cut
/// off at the output limit in the middle of a command.
pub const CUT_OFF_NOTE: &str = "[unixagent] Your previous answer was cut off at the output token limit in the \
middle of a tool call, so that call was dropped and nothing ran for it. Continue from there with a shorter \
command: split long work into several commands, and write long files in smaller pieces.";

/// Answers cut off in a row, with nothing else to do, before the turn gives
/// up: each is a model call that produced nothing runnable.
const MAX_CUT_OFFS: usize = 3;

/// Limits a turn runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Commands one turn may run before it stops and says so.
    pub max_steps: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_steps: 50 }
    }
}

/// A command the model wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// The `tool_use` id its result answers.
    pub id: String,
    pub command: String,
    pub mode: OutputMode,
}

/// What the gate decided about a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Allow,
    Ask,
    Deny,
}

/// The gate's answer, as the turn needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    /// The risk level's name (`read_only`, `write`, `destructive`…).
    pub risk: String,
    /// Why: the rule, hook, grant or mode that decided.
    pub reason: String,
    /// A warning to show under the command (the judge's), if any.
    pub note: Option<String>,
    /// Approval must be typed out as `yes`.
    pub strong: bool,
    /// The command as unixagent or a hook rewrote it, to run instead of
    /// the proposal.
    pub rewritten: Option<Rewritten>,
    /// What the command leaves in the live shell to run later (aliases,
    /// functions, traps, key bindings, prompt hooks), shown with it.
    pub defines: Vec<String>,
}

/// A proposal rewritten before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The command as the model proposed it.
    pub from: String,
    /// The command that runs.
    pub command: String,
    /// A hook changed it (not only unixagent turning paging off).
    pub by_hook: bool,
}

/// The human's answer to a proposal, or to a pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run it.
    Run,
    /// Run this edited command instead (it is gated again).
    Edit(String),
    /// Do not run it; go on with the next one.
    Skip,
    /// Refused, not by the person at a terminal (an approver program said
    /// no, or no answer came in time): the model is told why.
    Deny(String),
    /// End the turn.
    Quit,
    /// New direction: the remaining commands are dropped and the model
    /// revises its plan with this text.
    Steer(String),
}

impl Answer {
    /// The decision the journal records for this answer.
    pub fn outcome(&self) -> DecisionOutcome {
        match self {
            Answer::Run => DecisionOutcome::Run,
            Answer::Edit(command) => DecisionOutcome::Edited { command: command.clone() },
            Answer::Skip => DecisionOutcome::Skipped,
            Answer::Deny(_) => DecisionOutcome::Denied,
            Answer::Quit | Answer::Steer(_) => DecisionOutcome::Stopped,
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The model answered without asking to run anything.
    Answered,
    /// The human ended it (`q`, Ctrl+C).
    Stopped,
    /// The model's call failed; the message says how.
    Failed(String),
    /// The plan limit was reached.
    StepLimit,
}

impl End {
    /// What a run that ends with this turn exits with (`-c '# …'`, pipes,
    /// `--json`): the last command's status when the turn finished, and
    /// non-zero whenever it did not, even after commands that succeeded,
    /// so scripts can tell. A person or a signal stopping it is 130, as a
    /// shell reports Ctrl+C.
    pub fn exit_status(&self, last_exit: Option<i32>) -> i32 {
        let failed = |code: Option<i32>| code.filter(|c| *c != 0).unwrap_or(1);
        match self {
            End::Answered => last_exit.unwrap_or(0),
            End::Failed(_) | End::StepLimit => failed(last_exit),
            End::Stopped => 130,
        }
    }

    /// How the turn ended, for front ends: the model's last stop reason
    /// says whether an answer was cut short or refused.
    pub fn stop(&self, model_stop: Option<&StopReason>) -> TurnStop {
        match (self, model_stop) {
            (End::Answered, Some(StopReason::MaxTokens)) => TurnStop::MaxTokens,
            (End::Answered, Some(StopReason::Refusal)) => TurnStop::Refusal,
            (End::Answered, _) => TurnStop::EndTurn,
            (End::Stopped, _) => TurnStop::Cancelled,
            (End::StepLimit, _) => TurnStop::StepLimit,
            (End::Failed(_), _) => TurnStop::Error,
        }
    }
}

/// A proposal's result as the turn settled it: what the event stream
/// reports as `command_result` (the session drains them with
/// [`Turn::take_settled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The `tool_use` id.
    pub id: String,
    /// The exit status, when the command ran.
    pub exit_code: Option<i32>,
    /// The tool result's text, as the model gets it.
    pub output: String,
    pub status: CommandStatus,
}

/// What the session must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Call the model with [`Turn::messages`].
    Call,
    /// Show streamed answer text.
    Text(String),
    /// Show progress of the model's thinking (summarised on screen).
    Thinking(String),
    /// Ask the gate about this proposal and report back with
    /// [`Turn::verdict`].
    Gate(Proposal),
    /// Show the proposal with its verdict and wait for [`Turn::answer`].
    Ask(Proposal, Verdict),
    /// Show one short line about what happened (skipped, denied…).
    Notice(String),
    /// Type the command into the shell; report with [`Turn::command_done`].
    Run(Proposal, Verdict),
    /// The turn is over.
    Done(End),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Streaming,
    Gating(Proposal),
    Asking(Proposal, Verdict),
    Running(Proposal),
    Finished,
}

/// One turn in progress. It owns the conversation while it runs; the
/// session takes it back with [`Turn::into_messages`].
#[derive(Debug)]
pub struct Turn {
    messages: Vec<Message>,
    limits: Limits,
    phase: Phase,
    builder: TurnBuilder,
    /// Tool calls of the last answer still to handle.
    queue: VecDeque<ToolUse>,
    /// Results gathered for the last answer's tool calls.
    results: Vec<ToolResult>,
    /// The commands the last answer proposed, in order.
    plan: Vec<String>,
    steps: usize,
    usage: Usage,
    calls: usize,
    last_exit: Option<i32>,
    /// The last answer lost a tool call to the output limit: the next call
    /// tells the model so.
    cut_off: bool,
    /// Answers in a row that were cut off with nothing runnable in them.
    cut_offs: usize,
    /// Results settled since the session last asked.
    settled: Vec<Settled>,
}

impl Turn {
    /// Starts a turn: `history` is the conversation so far, `instruction`
    /// the new user content (the instruction and its context).
    pub fn start(history: Vec<Message>, instruction: Vec<Block>, limits: Limits) -> (Self, Vec<Effect>) {
        let mut turn = Self {
            messages: history,
            limits,
            phase: Phase::Streaming,
            builder: TurnBuilder::default(),
            queue: VecDeque::new(),
            results: Vec::new(),
            plan: Vec::new(),
            steps: 0,
            usage: Usage::default(),
            calls: 1,
            last_exit: None,
            cut_off: false,
            cut_offs: 0,
            settled: Vec::new(),
        };
        turn.push_user(instruction);
        (turn, vec![Effect::Call])
    }

    /// Replaces the first `upto` messages (the turns before this one)
    /// with `summary`, when the conversation has outgrown the window.
    pub fn summarise(&mut self, upto: usize, summary: Message) {
        let upto = upto.min(self.messages.len());
        self.messages.splice(..upto, [summary]);
    }

    /// The conversation to send on the next call.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Gives the conversation back when the turn is over.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// Tokens used by this turn's calls, as the API reported them.
    /// Counts a call made on the turn's behalf outside its conversation
    /// (a summary) toward its usage.
    pub fn add_usage(&mut self, u: &Usage) {
        self.usage.add(u);
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Commands run so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Model calls made so far (including the one in flight).
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// The commands the model's last answer proposed, in order.
    pub fn plan(&self) -> &[String] {
        &self.plan
    }

    /// Exit status of the last command run, if any ran.
    pub fn last_exit(&self) -> Option<i32> {
        self.last_exit
    }

    #[cfg(test)]
    pub fn is_streaming(&self) -> bool {
        self.phase == Phase::Streaming
    }

    #[cfg(test)]
    pub fn is_asking(&self) -> bool {
        matches!(self.phase, Phase::Asking(..))
    }

    #[cfg(test)]
    pub fn is_running(&self) -> bool {
        matches!(self.phase, Phase::Running(..))
    }

    #[cfg(test)]
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// The command being asked about or run.
    pub fn current(&self) -> Option<&Proposal> {
        match &self.phase {
            Phase::Gating(p) | Phase::Asking(p, _) | Phase::Running(p) => Some(p),
            Phase::Streaming | Phase::Finished => None,
        }
    }

    /// An event of the model's streamed answer.
    pub fn event(&mut self, event: StreamEvent) -> Vec<Effect> {
        if self.phase != Phase::Streaming {
            return Vec::new();
        }
        self.builder.push(&event);
        match event {
            StreamEvent::TextDelta(t) => vec![Effect::Text(t)],
            StreamEvent::ThinkingDelta(t) => vec![Effect::Thinking(t)],
            StreamEvent::Usage(u) => {
                self.usage.add(&u);
                Vec::new()
            }
            StreamEvent::Thinking(_)
            | StreamEvent::ToolCall(_)
            | StreamEvent::TruncatedToolCall(_)
            | StreamEvent::Stop(_)
            | StreamEvent::Error(_) => Vec::new(),
        }
    }

    /// The stream ended: `Ok` when the answer is whole, `Err` with the
    /// one-sentence failure otherwise.
    pub fn stream_ended(&mut self, result: Result<(), String>) -> Vec<Effect> {
        if self.phase != Phase::Streaming {
            return Vec::new();
        }
        let builder = std::mem::take(&mut self.builder);
        if let Err(message) = result {
            // Keep only the text of a broken answer: a tool call without
            // its result would make the conversation invalid.
            self.keep_partial_text(builder.finish());
            return self.finish(End::Failed(message));
        }
        let stop = builder.stop_reason().cloned();
        let cut = !builder.truncated_calls().is_empty();
        let answer = builder.finish();
        let calls: VecDeque<ToolUse> = answer.tool_uses().cloned().collect();
        if !answer.content.is_empty() {
            self.messages.push(answer);
        }
        let mut effects = Vec::new();
        if cut {
            self.cut_off = true;
            effects.push(Effect::Notice(
                "the answer was cut off at the token limit in the middle of a command, which was dropped; \
                 asking the model for a shorter one"
                    .into(),
            ));
        }
        if calls.is_empty() && cut {
            self.cut_offs += 1;
            if self.cut_offs >= MAX_CUT_OFFS {
                effects.extend(self.finish(End::Failed(format!(
                    "the model's answer was cut off at the token limit {MAX_CUT_OFFS} times in a row; \
                     raise max_tokens for this backend in config.toml or ask for a smaller step"
                ))));
                return effects;
            }
            let content = self.answer_content();
            self.push_user(content);
            effects.extend(self.call());
            return effects;
        }
        self.cut_offs = 0;
        if calls.is_empty() {
            if stop == Some(StopReason::MaxTokens) {
                effects.push(Effect::Notice("the answer was cut off at the token limit".into()));
            }
            effects.extend(self.finish(End::Answered));
            return effects;
        }
        self.plan = calls
            .iter()
            .filter(|c| c.name == "shell")
            .filter_map(|c| ShellInput::from_value(&c.input).ok())
            .map(|i| i.command)
            .collect();
        self.queue = calls;
        self.results.clear();
        effects.extend(self.next_call());
        effects
    }

    /// The gate's verdict on the proposal in [`Effect::Gate`].
    pub fn verdict(&mut self, verdict: Verdict) -> Vec<Effect> {
        let Phase::Gating(p) = &self.phase else { return Vec::new() };
        let mut p = p.clone();
        if let Some(r) = &verdict.rewritten {
            p.command = r.command.clone();
        }
        match verdict.outcome {
            Outcome::Allow => self.run(p, verdict),
            Outcome::Ask => {
                self.phase = Phase::Asking(p.clone(), verdict.clone());
                vec![Effect::Ask(p, verdict)]
            }
            Outcome::Deny => {
                // A deny rule quotes the command, which may be the user's
                // edit of the proposal with a password typed into it.
                let text = format!("not run: denied ({}): {}", verdict.risk, verdict.reason);
                self.not_run(&p.id, &ua_context::secrets::redact_secrets(&text), CommandStatus::Denied);
                let mut effects = vec![Effect::Notice(format!("denied: {}", verdict.reason))];
                effects.extend(self.next_call());
                effects
            }
        }
    }

    /// The human's answer while asked about a proposal.
    pub fn answer(&mut self, answer: Answer) -> Vec<Effect> {
        let Phase::Asking(p, verdict) = &self.phase else {
            return Vec::new();
        };
        let (p, verdict) = (p.clone(), verdict.clone());
        match answer {
            Answer::Run => self.run(p, verdict),
            Answer::Edit(command) => {
                let edited = Proposal { command, ..p };
                self.phase = Phase::Gating(edited.clone());
                vec![Effect::Gate(edited)]
            }
            Answer::Skip => {
                self.not_run(&p.id, "not run: the user skipped this command", CommandStatus::Skipped);
                let mut effects = vec![Effect::Notice("skipped".into())];
                effects.extend(self.next_call());
                effects
            }
            Answer::Deny(why) => {
                self.not_run(&p.id, &format!("not run: denied ({}): {why}", verdict.risk), CommandStatus::Denied);
                let mut effects = vec![Effect::Notice(format!("denied: {why}"))];
                effects.extend(self.next_call());
                effects
            }
            Answer::Quit => {
                self.not_run(&p.id, "not run: the user ended the turn", CommandStatus::Skipped);
                self.stop("not run: the user ended the turn")
            }
            Answer::Steer(text) => {
                self.not_run(&p.id, "not run: the user gave new directions instead", CommandStatus::Skipped);
                self.abandon_queue("not run: the user gave new directions instead");
                let mut content = self.answer_content();
                content.push(Block::text(text));
                self.push_user(content);
                self.call()
            }
        }
    }

    /// The command typed by [`Effect::Run`] finished with `exit`. `result`
    /// is the tool result's text as the model should read it (status and
    /// output, capped, scrubbed and framed by the caller).
    pub fn command_done(&mut self, exit: i32, result: String) -> Vec<Effect> {
        let status = if exit == 0 { CommandStatus::Ok } else { CommandStatus::Failed };
        self.command_ended(exit, result, status)
    }

    /// [`Turn::command_done`] for a command that ended some other way
    /// than by itself (the command timeout interrupted it).
    pub fn command_ended(&mut self, exit: i32, result: String, status: CommandStatus) -> Vec<Effect> {
        let Phase::Running(p) = &self.phase else { return Vec::new() };
        let id = p.id.clone();
        self.last_exit = Some(exit);
        self.settled.push(Settled { id: id.clone(), exit_code: Some(exit), output: result.clone(), status });
        let mut result = ToolResult::text(id, result);
        result.is_error = exit != 0;
        self.results.push(result);
        if exit != 0 {
            self.abandon_queue(&format!("not run: an earlier command failed with exit status {exit}"));
        }
        self.next_call()
    }

    /// Ctrl+C or `q` outside a question: end the turn now, keeping the
    /// conversation valid.
    pub fn cancel(&mut self) -> Vec<Effect> {
        match &self.phase {
            Phase::Finished => Vec::new(),
            Phase::Streaming => {
                let builder = std::mem::take(&mut self.builder);
                self.keep_partial_text(builder.finish());
                self.finish(End::Stopped)
            }
            Phase::Gating(p) | Phase::Asking(p, _) => {
                let id = p.id.clone();
                self.not_run(&id, "not run: the user ended the turn", CommandStatus::Skipped);
                self.stop("not run: the user ended the turn")
            }
            Phase::Running(p) => {
                let id = p.id.clone();
                self.not_run(&id, "interrupted: the user ended the turn while it ran", CommandStatus::Interrupted);
                self.stop("not run: the user ended the turn")
            }
        }
    }

    fn run(&mut self, p: Proposal, verdict: Verdict) -> Vec<Effect> {
        self.steps += 1;
        self.phase = Phase::Running(p.clone());
        vec![Effect::Run(p, verdict)]
    }

    /// Moves to the next queued tool call, or back to the model when all
    /// have results.
    fn next_call(&mut self) -> Vec<Effect> {
        while let Some(call) = self.queue.pop_front() {
            if call.name != "shell" {
                let text = format!("unknown tool '{}': the only tool is 'shell'", call.name);
                self.not_run(&call.id, &text, CommandStatus::Skipped);
                continue;
            }
            let input = match ShellInput::from_value(&call.input) {
                Ok(input) => input,
                Err(e) => {
                    self.not_run(&call.id, &e, CommandStatus::Skipped);
                    continue;
                }
            };
            if self.steps >= self.limits.max_steps {
                self.not_run(&call.id, "not run: the turn reached its step limit", CommandStatus::Skipped);
                self.abandon_queue("not run: the turn reached its step limit");
                let content = self.results.drain(..).map(Block::ToolResult).collect();
                self.push_user(content);
                return self.finish(End::StepLimit);
            }
            let p = Proposal { id: call.id, command: input.command, mode: input.output_mode };
            self.phase = Phase::Gating(p.clone());
            return vec![Effect::Gate(p)];
        }
        let content = self.answer_content();
        self.push_user(content);
        self.call()
    }

    /// What the next call adds: the results gathered, and the note about a
    /// cut-off call after them (Anthropic wants tool results first).
    fn answer_content(&mut self) -> Vec<Block> {
        let mut content: Vec<Block> = self.results.drain(..).map(Block::ToolResult).collect();
        if std::mem::take(&mut self.cut_off) {
            content.push(Block::text(CUT_OFF_NOTE));
        }
        content
    }

    fn call(&mut self) -> Vec<Effect> {
        self.phase = Phase::Streaming;
        self.calls += 1;
        vec![Effect::Call]
    }

    fn stop(&mut self, rest: &str) -> Vec<Effect> {
        self.abandon_queue(rest);
        let content = self.results.drain(..).map(Block::ToolResult).collect();
        self.push_user(content);
        self.finish(End::Stopped)
    }

    fn finish(&mut self, end: End) -> Vec<Effect> {
        // No call follows, so there is no one to tell about a cut-off call.
        self.cut_off = false;
        self.phase = Phase::Finished;
        vec![Effect::Done(end)]
    }

    /// A proposal that will not run (or was cut short), with why.
    fn not_run(&mut self, id: &str, text: &str, status: CommandStatus) {
        self.settled.push(Settled { id: id.to_string(), exit_code: None, output: text.to_string(), status });
        self.results.push(error_result(id, text));
    }

    /// The results settled since the last call, oldest first.
    pub fn take_settled(&mut self) -> Vec<Settled> {
        std::mem::take(&mut self.settled)
    }

    fn abandon_queue(&mut self, why: &str) {
        for call in std::mem::take(&mut self.queue) {
            self.not_run(&call.id, why, CommandStatus::Skipped);
        }
    }

    fn keep_partial_text(&mut self, partial: Message) {
        let text = partial.text();
        if !text.is_empty() {
            self.messages.push(Message::assistant_text(text));
        }
    }

    /// Adds a user message. Messages are only ever appended, never
    /// changed, so the journal can rebuild every call by folding; two user
    /// messages in a row (an instruction after a stopped turn) are
    /// accepted by every provider, which read them as one turn.
    fn push_user(&mut self, content: Vec<Block>) {
        if content.is_empty() {
            return;
        }
        self.messages.push(Message { role: Role::User, content });
    }
}

fn error_result(id: &str, text: &str) -> ToolResult {
    let mut r = ToolResult::text(id, text);
    r.is_error = true;
    r
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
