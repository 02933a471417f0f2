use super::*;
use crate::span::resource;

fn root() -> TraceContext {
    TraceContext::from_lookup(|_| None)
}

fn usage(input: u64, output: u64) -> ua_protocol::event::Usage {
    ua_protocol::event::Usage { input_tokens: input, output_tokens: output, ..Default::default() }
}

fn call<'a>() -> ModelCall<'a> {
    ModelCall {
        provider: "anthropic",
        model: "claude-x",
        server: Some(("api.anthropic.com", 443)),
        max_tokens: Some(8192),
    }
}

/// One instruction: a model call, a command, another call; every span.
fn one_instruction(t: &mut Tracer, command: &str) -> (Vec<Span>, CommandTrace) {
    let mut spans = Vec::new();
    let (_, left) = t.instruction_started(1_000, 1, "check the logs");
    assert!(left.is_empty());
    t.model_call_started(1_100, &call());
    let end = ModelCallEnd { finish_reason: Some("tool_use"), usage: usage(100, 20), ..Default::default() };
    spans.extend(t.model_call_ended(2_000, &end));
    let cmd = Command { id: "toolu_1", command, risk: "read_only", decision: "allow", rule: Some("builtin.read") };
    let trace = t.command_started(2_100, &cmd);
    spans.extend(t.command_ended(5_000_002_100, "toolu_1", Some(0), "ok"));
    t.model_call_started(5_000_003_000, &call());
    spans.extend(t.model_call_ended(5_000_004_000, &ModelCallEnd { usage: usage(150, 30), ..Default::default() }));
    spans.extend(t.instruction_ended(5_000_005_000, "ok"));
    (spans, trace)
}

#[test]
fn an_instruction_is_an_invoke_agent_span_over_its_calls_and_commands() {
    let mut t = Tracer::new(root(), "s-1", resource("s-1"));
    let (spans, trace) = one_instruction(&mut t, "tail -n 5 /var/log/syslog");
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chat claude-x", "execute_tool shell", "chat claude-x", "invoke_agent unixagent"]);
    let agent = &spans[3];
    assert_eq!(agent.parent_span_id, None, "a root session's instruction has no parent");
    for s in &spans[..3] {
        assert_eq!(s.parent_span_id.as_deref(), Some(agent.span_id.as_str()), "{s:?}");
        assert_eq!(s.trace_id, agent.trace_id);
    }
    assert_eq!(spans[1].span_id, trace.span.to_string());
    assert_eq!(agent.attr("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(agent.attr("gen_ai.conversation.id"), Some("s-1"));
    assert_eq!(agent.attributes["gen_ai.usage.input_tokens"], Value::Int(250));
    assert_eq!(agent.attributes["gen_ai.usage.output_tokens"], Value::Int(50));
    let chat = &spans[0];
    assert_eq!(chat.kind, Kind::Client);
    assert_eq!(chat.attr("gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(chat.attr("gen_ai.request.model"), Some("claude-x"));
    assert_eq!(chat.attributes["server.port"], Value::Int(443));
    assert_eq!(chat.attributes["gen_ai.response.finish_reasons"], Value::List(vec!["tool_use".into()]));
    let tool = &spans[1];
    assert_eq!(tool.attr("gen_ai.tool.name"), Some("shell"));
    assert_eq!(tool.attr("gen_ai.tool.call.id"), Some("toolu_1"));
    assert_eq!(tool.attr("unixagent.risk"), Some("read_only"));
    assert_eq!(tool.attr("unixagent.decision"), Some("allow"));
    assert_eq!(tool.attr("unixagent.rule"), Some("builtin.read"));
    assert_eq!(tool.attributes["process.exit.code"], Value::Int(0));
    // The seed's summary rides on the instruction's span.
    let s = agent.summary.as_ref().unwrap();
    assert_eq!(s.instruction, "check the logs");
    assert_eq!((s.backend.as_deref(), s.model.as_deref()), (Some("anthropic"), Some("claude-x")));
    assert_eq!((s.tokens_in, s.tokens_out), (250, 50));
    assert_eq!((s.approval.as_str(), s.result.as_str()), ("policy", "success"));
    assert_eq!(s.actions.len(), 1);
    assert_eq!((s.actions[0].exit, s.actions[0].duration_ms), (Some(0), 5000));
}

#[test]
fn a_childs_instruction_hangs_from_the_command_that_started_it() {
    let mut parent = Tracer::new(root(), "parent", resource("parent"));
    parent.instruction_started(0, 1, "delegate");
    let started =
        parent.command_started(10, &Command { id: "toolu_7", command: "unixagent -c '# x'", ..Default::default() });
    // The child reads the command's environment, as a unixagent started by it does.
    let env = started.env.clone();
    let child_ctx = TraceContext::from_lookup(|k| {
        env.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.clone())
            .or_else(|| (k == "UA_TRACE_DEPTH").then(|| "0".into()))
    });
    assert_eq!(child_ctx.depth, 1);
    let mut child = Tracer::new(child_ctx, "child", resource("child"));
    child.instruction_started(20, 1, "x");
    let child_spans = child.instruction_ended(30, "ok");
    let command = parent.command_ended(40, "toolu_7", Some(0), "ok").unwrap();
    let agent = &child_spans[0];
    assert_eq!(agent.trace_id, command.trace_id, "one trace across the process tree");
    assert_eq!(agent.parent_span_id.as_deref(), Some(command.span_id.as_str()));
    assert_eq!(agent.attr("unixagent.parent_command"), Some("toolu_7"));
    assert_eq!(agent.attributes["unixagent.depth"], Value::Int(1));
}

#[test]
fn commands_are_scrubbed_and_failures_are_errors() {
    let mut t = Tracer::new(root(), "s", resource("s"));
    t.instruction_started(0, 1, "log in");
    let cmd = Command { id: "a", command: "mysql -u root -pHunter2Secret db", decision: "ask", ..Default::default() };
    t.command_started(1, &cmd);
    let span = t.command_ended(2, "a", Some(1), "failed").unwrap();
    let line = span.attr("process.command_line").unwrap();
    assert!(!line.contains("Hunter2Secret") && line.contains("REDACTED"), "{line}");
    assert_eq!(span.status, Status::Error);
    assert_eq!(span.attr("error.type"), Some("failed"));
    let agent = t.instruction_ended(3, "error").pop().unwrap();
    let s = agent.summary.unwrap();
    assert_eq!(s.approval, "human", "a command someone approved");
    assert!(!s.actions[0].command.contains("Hunter2Secret"));
    assert_eq!(agent.status, Status::Error);
    // A denied command is recorded and is not an error.
    t.instruction_started(4, 2, "again");
    t.command_started(5, &Command { id: "b", command: "rm -rf /", decision: "deny", ..Default::default() });
    assert_eq!(t.command_ended(6, "b", None, "denied").unwrap().status, Status::Unset);
}

#[test]
fn an_instruction_cut_short_ends_what_it_left_open() {
    let mut t = Tracer::new(root(), "s", resource("s"));
    t.instruction_started(0, 1, "one");
    t.model_call_started(1, &call());
    t.command_started(2, &Command { id: "c", command: "sleep 9", ..Default::default() });
    let (_, left) = t.instruction_started(3, 2, "two");
    let names: Vec<&str> = left.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["execute_tool shell", "chat claude-x", "invoke_agent unixagent"]);
    assert!(left.iter().all(|s| s.status == Status::Error), "{left:?}");
    assert_eq!(left[2].summary.as_ref().unwrap().result, "cancelled");
    assert!(t.agent_span().is_some());
}
