//! The spans of one session, following the OpenTelemetry GenAI semantic
//! conventions: an `invoke_agent` span per instruction, a `chat` span per
//! model call and an `execute_tool` span per command, both inside the
//! instruction's span.
//!
//! The tracer does no I/O and reads no clock: the session tells it what
//! happened and when (Unix nanoseconds), and each method that ends a span
//! returns it, finished, for the sink. A session calls:
//!
//! ```text
//! instruction_started ─┬─ model_call_started … model_call_ended ─▶ chat span
//!                      ├─ command_started (→ the command's environment)
//!                      │   … command_ended ─────────────────────▶ execute_tool span
//!                      └─ instruction_ended ────────────────────▶ invoke_agent span
//!                                                                  (and whatever was left open)
//! ```
//!
//! A child agent's `invoke_agent` span hangs from the `execute_tool` span
//! of the command that started it: the command's environment carries that
//! span ([`TraceContext::command_env`]) and the child's tracer takes it as
//! its parent.

use std::collections::BTreeMap;

use super::context::{SpanId, TraceContext};
use super::span::{Action, Attributes, Kind, Span, Status, Summary, Value};

/// The agent's name on its spans (`gen_ai.agent.name`).
pub const AGENT_NAME: &str = "unixagent";
/// The one tool (`gen_ai.tool.name`).
pub const TOOL_NAME: &str = "shell";

/// A model call as it starts.
#[derive(Debug, Clone, Default)]
pub struct ModelCall<'a> {
    /// `anthropic`, `openai`, … (`gen_ai.provider.name`).
    pub provider: &'a str,
    pub model: &'a str,
    /// The server's host and port (`server.address`, `server.port`).
    pub server: Option<(&'a str, u16)>,
    pub max_tokens: Option<u32>,
}

/// How a model call ended.
#[derive(Debug, Clone, Default)]
pub struct ModelCallEnd<'a> {
    pub response_model: Option<&'a str>,
    pub response_id: Option<&'a str>,
    /// `end_turn`, `tool_use`, `stop`, …
    pub finish_reason: Option<&'a str>,
    pub usage: ua_protocol::event::Usage,
    /// The error's kind, when the call failed (`error.type`).
    pub error: Option<&'a str>,
}

/// A command as the gate passed (or refused) it.
#[derive(Debug, Clone, Default)]
pub struct Command<'a> {
    /// The tool call id.
    pub id: &'a str,
    /// As typed; scrubbed before it goes on a span.
    pub command: &'a str,
    /// `read_only`, `write`, …
    pub risk: &'a str,
    /// `allow`, `ask` or `deny`.
    pub decision: &'a str,
    /// The rule that decided, if one did.
    pub rule: Option<&'a str>,
}

/// What a started command runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTrace {
    pub span: SpanId,
    /// Its `TRACEPARENT` and the rest (see [`TraceContext::command_env`]).
    pub env: Vec<(&'static str, String)>,
}

#[derive(Debug)]
struct Open {
    span: SpanId,
    start_ns: u64,
    attributes: Attributes,
}

#[derive(Debug)]
struct OpenAgent {
    open: Open,
    summary: Summary,
    asked: bool,
    ran: bool,
    /// Tokens over the instruction's model calls.
    input: u64,
    output: u64,
}

#[derive(Debug)]
struct OpenCommand {
    open: Open,
    command: String,
    decision: String,
}

/// One session's spans.
#[derive(Debug)]
pub struct Tracer {
    ctx: TraceContext,
    session: String,
    resource: Attributes,
    agent: Option<OpenAgent>,
    call: Option<Open>,
    commands: BTreeMap<String, OpenCommand>,
}

impl Tracer {
    /// `ctx` is this process's context (its parent span becomes the
    /// parent of every `invoke_agent` span); `resource` goes on every
    /// span (see [`super::span::resource`]).
    pub fn new(ctx: TraceContext, session: &str, resource: Attributes) -> Self {
        Self { ctx, session: session.to_string(), resource, agent: None, call: None, commands: BTreeMap::new() }
    }

    pub fn trace_id(&self) -> String {
        self.ctx.trace_id.to_string()
    }

    /// The current instruction's span, if one is open.
    pub fn agent_span(&self) -> Option<SpanId> {
        self.agent.as_ref().map(|a| a.open.span)
    }

    /// Turn `turn` begins with `instruction`. One that was still open is
    /// ended first (as `cancelled`) and returned.
    pub fn instruction_started(&mut self, at: u64, turn: u32, instruction: &str) -> (SpanId, Vec<Span>) {
        let left = if self.agent.is_some() { self.instruction_ended(at, "cancelled") } else { Vec::new() };
        let mut attributes = self.common("invoke_agent");
        attributes.insert("gen_ai.agent.name".into(), AGENT_NAME.into());
        attributes.insert("gen_ai.agent.id".into(), self.session.clone().into());
        attributes.insert("unixagent.depth".into(), i64::from(self.ctx.depth).into());
        if let Some(c) = &self.ctx.command {
            attributes.insert("unixagent.parent_command".into(), c.clone().into());
        }
        let span = SpanId::agent(self.ctx.trace_id, &self.session, turn);
        let summary = Summary {
            session: self.session.clone(),
            instruction: instruction.to_string(),
            approval: "none".into(),
            ..Summary::default()
        };
        self.agent = Some(OpenAgent {
            open: Open { span, start_ns: at, attributes },
            summary,
            asked: false,
            ran: false,
            input: 0,
            output: 0,
        });
        (span, left)
    }

    /// A model call begins (one at a time; an unfinished one is dropped).
    pub fn model_call_started(&mut self, at: u64, call: &ModelCall<'_>) {
        let mut attributes = self.common("chat");
        attributes.insert("gen_ai.provider.name".into(), call.provider.into());
        attributes.insert("gen_ai.request.model".into(), call.model.into());
        if let Some(n) = call.max_tokens {
            attributes.insert("gen_ai.request.max_tokens".into(), i64::from(n).into());
        }
        if let Some((host, port)) = call.server {
            attributes.insert("server.address".into(), host.into());
            attributes.insert("server.port".into(), i64::from(port).into());
        }
        if let Some(a) = &mut self.agent {
            a.summary.backend.get_or_insert_with(|| call.provider.to_string());
            a.summary.model.get_or_insert_with(|| call.model.to_string());
            a.open.attributes.entry("gen_ai.provider.name".into()).or_insert_with(|| call.provider.into());
            a.open.attributes.entry("gen_ai.request.model".into()).or_insert_with(|| call.model.into());
        }
        self.call = Some(Open { span: SpanId::random(), start_ns: at, attributes });
    }

    /// The model call ends; its `chat` span.
    pub fn model_call_ended(&mut self, at: u64, end: &ModelCallEnd<'_>) -> Option<Span> {
        let mut open = self.call.take()?;
        let u = &end.usage;
        // The conventions count cached prompt tokens as input too.
        let input = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;
        let a = &mut open.attributes;
        a.insert("gen_ai.usage.input_tokens".into(), input.into());
        a.insert("gen_ai.usage.output_tokens".into(), u.output_tokens.into());
        if u.cache_read_tokens > 0 {
            a.insert("gen_ai.usage.cache_read.input_tokens".into(), u.cache_read_tokens.into());
        }
        if u.cache_write_tokens > 0 {
            a.insert("gen_ai.usage.cache_creation.input_tokens".into(), u.cache_write_tokens.into());
        }
        if let Some(m) = end.response_model {
            a.insert("gen_ai.response.model".into(), m.into());
        }
        if let Some(id) = end.response_id {
            a.insert("gen_ai.response.id".into(), id.into());
        }
        if let Some(r) = end.finish_reason {
            a.insert("gen_ai.response.finish_reasons".into(), Value::List(vec![r.to_string()]));
        }
        if let Some(agent) = &mut self.agent {
            agent.input += input;
            agent.output += u.output_tokens;
        }
        let model = open.attributes.get("gen_ai.request.model").cloned();
        let name = match model {
            Some(Value::Str(m)) => format!("chat {m}"),
            _ => "chat".to_string(),
        };
        let (status, message) = error_status(&mut open.attributes, end.error);
        Some(self.finish(open, name, Kind::Client, at, status, message, self.agent_span()))
    }

    /// A command passed the gate (or was refused by it): its span starts
    /// and the environment it must run with comes back.
    pub fn command_started(&mut self, at: u64, cmd: &Command<'_>) -> CommandTrace {
        let span = SpanId::tool(self.ctx.trace_id, &self.session, cmd.id);
        let scrubbed = ua_context::secrets::redact_secrets(cmd.command).into_owned();
        let mut attributes = self.common("execute_tool");
        attributes.insert("gen_ai.tool.name".into(), TOOL_NAME.into());
        attributes.insert("gen_ai.tool.type".into(), "function".into());
        attributes.insert("gen_ai.tool.call.id".into(), cmd.id.into());
        attributes.insert("process.command_line".into(), scrubbed.clone().into());
        attributes.insert("unixagent.risk".into(), cmd.risk.into());
        attributes.insert("unixagent.decision".into(), cmd.decision.into());
        if let Some(r) = cmd.rule {
            attributes.insert("unixagent.rule".into(), r.into());
        }
        if let Some(a) = &mut self.agent {
            a.asked |= cmd.decision == "ask";
        }
        let parent = self.agent_span().unwrap_or(span);
        let env = self.ctx.command_env(span, parent, cmd.id);
        self.commands.insert(
            cmd.id.to_string(),
            OpenCommand {
                open: Open { span, start_ns: at, attributes },
                command: scrubbed,
                decision: cmd.decision.to_string(),
            },
        );
        CommandTrace { span, env }
    }

    /// The command ended: `exit_code` when it ran, `outcome` as the turn
    /// settled it (`ok`, `failed`, `denied`, `skipped`, `timeout`,
    /// `interrupted`). Its `execute_tool` span.
    pub fn command_ended(&mut self, at: u64, id: &str, exit_code: Option<i32>, outcome: &str) -> Option<Span> {
        let mut c = self.commands.remove(id)?;
        if let Some(code) = exit_code {
            c.open.attributes.insert("process.exit.code".into(), i64::from(code).into());
        }
        c.open.attributes.insert("unixagent.outcome".into(), outcome.into());
        let duration_ms = at.saturating_sub(c.open.start_ns) / 1_000_000;
        if let Some(a) = &mut self.agent {
            a.ran |= exit_code.is_some();
            a.summary.actions.push(Action {
                kind: TOOL_NAME.into(),
                command: c.command.clone(),
                exit: exit_code,
                duration_ms,
                decision: c.decision.clone(),
            });
        }
        let failed = !matches!(outcome, "ok" | "denied" | "skipped");
        let error = failed.then_some(outcome);
        let (status, message) = error_status(&mut c.open.attributes, error);
        Some(self.finish(
            c.open,
            format!("execute_tool {TOOL_NAME}"),
            Kind::Internal,
            at,
            status,
            message,
            self.agent_span(),
        ))
    }

    /// The instruction ended with `result` (`ok`, `error`, `cancelled`):
    /// its `invoke_agent` span, after the spans of whatever was still open.
    pub fn instruction_ended(&mut self, at: u64, result: &str) -> Vec<Span> {
        let mut out = Vec::new();
        let open: Vec<String> = self.commands.keys().cloned().collect();
        for id in open {
            out.extend(self.command_ended(at, &id, None, "interrupted"));
        }
        if self.call.is_some() {
            out.extend(self.model_call_ended(at, &ModelCallEnd { error: Some("cancelled"), ..Default::default() }));
        }
        let Some(mut a) = self.agent.take() else { return out };
        a.summary.tokens_in = a.input;
        a.summary.tokens_out = a.output;
        a.summary.approval = if a.asked {
            "human"
        } else if a.ran {
            "policy"
        } else {
            "none"
        }
        .into();
        a.summary.result = match result {
            "ok" => "success",
            other => other,
        }
        .into();
        a.open.attributes.insert("gen_ai.usage.input_tokens".into(), a.input.into());
        a.open.attributes.insert("gen_ai.usage.output_tokens".into(), a.output.into());
        let error = (result != "ok").then_some(result);
        let (status, message) = error_status(&mut a.open.attributes, error);
        let parent = self.ctx.parent_span;
        let mut span =
            self.finish(a.open, format!("invoke_agent {AGENT_NAME}"), Kind::Internal, at, status, message, parent);
        span.summary = Some(a.summary);
        out.push(span);
        out
    }

    /// Attributes every span of this session carries.
    fn common(&self, operation: &str) -> Attributes {
        let mut a = Attributes::new();
        a.insert("gen_ai.operation.name".into(), operation.into());
        a.insert("gen_ai.conversation.id".into(), self.session.clone().into());
        a
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        open: Open,
        name: String,
        kind: Kind,
        at: u64,
        status: Status,
        status_message: Option<String>,
        parent: Option<SpanId>,
    ) -> Span {
        Span {
            trace_id: self.ctx.trace_id.to_string(),
            span_id: open.span.to_string(),
            parent_span_id: parent.filter(|p| *p != open.span).map(|p| p.to_string()),
            name,
            kind,
            start_ns: open.start_ns,
            end_ns: at.max(open.start_ns),
            status,
            status_message,
            attributes: open.attributes,
            resource: self.resource.clone(),
            summary: None,
        }
    }
}

/// Sets `error.type` for a failure; the span's status either way.
fn error_status(attributes: &mut Attributes, error: Option<&str>) -> (Status, Option<String>) {
    match error {
        Some(kind) => {
            attributes.insert("error.type".into(), kind.into());
            (Status::Error, Some(kind.to_string()))
        }
        None => (Status::Unset, None),
    }
}

/// Now, as Unix nanoseconds.
pub fn now_ns() -> u64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[path = "tracer_tests.rs"]
mod tests;
