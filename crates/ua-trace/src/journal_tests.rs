use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::event::{StopReason, Usage};
use ua_protocol::journal::CallPurpose;

use super::*;
use crate::context::{SpanId, TraceContext};
use crate::span::{Status, Value};

fn at(seq: u64, ts: u64, entry: JournalEntry) -> JournalLine {
    JournalLine { seq, ts, entry }
}

fn request(turn: u32, call: u32) -> JournalEntry {
    JournalEntry::ModelRequest {
        turn,
        call,
        backend: "anthropic".into(),
        model: "claude-x".into(),
        system: "s".into(),
        messages_appended: Vec::new(),
        omitted: Vec::new(),
        tools: None,
        purpose: CallPurpose::Conversation,
    }
}

fn response(turn: u32, call: u32, input: u64, stop: StopReason) -> JournalEntry {
    JournalEntry::ModelResponse {
        turn,
        call,
        message: Message { role: Role::Assistant, content: vec![Block::text("…")] },
        usage: Some(Usage { input_tokens: input, output_tokens: 7, ..Default::default() }),
        stop: Some(stop),
        purpose: CallPurpose::Conversation,
    }
}

fn decision(id: &str, command: &str, outcome: DecisionOutcome, by: &str) -> JournalEntry {
    JournalEntry::Decision {
        turn: 1,
        tool_use_id: id.into(),
        command: command.into(),
        risk: "read_only".into(),
        outcome,
        decided_by: by.into(),
        approver: None,
    }
}

fn result(id: &str, command: &str, exit_code: Option<i32>) -> JournalEntry {
    JournalEntry::ToolResult {
        turn: 1,
        tool_use_id: id.into(),
        command: command.into(),
        exit_code,
        output: String::new(),
        is_error: exit_code != Some(0),
        truncated: false,
        duration_ms: 3,
    }
}

fn lines() -> Vec<JournalLine> {
    vec![
        at(2, 1_000, JournalEntry::Instruction { turn: 1, text: "check the logs".into() }),
        at(3, 1_001, request(1, 1)),
        at(4, 1_400, response(1, 1, 100, StopReason::ToolUse)),
        at(5, 1_401, decision("t1", "tail app.log", DecisionOutcome::Run, "cedar:builtin.read-only")),
        at(
            6,
            1_402,
            JournalEntry::CommandIntent {
                turn: 1,
                tool_use_id: "t1".into(),
                command: "tail app.log".into(),
                read_only: true,
            },
        ),
        at(7, 1_405, result("t1", "tail app.log", Some(0))),
        at(8, 1_406, decision("t2", "rm app.log", DecisionOutcome::Denied, "mode:ask")),
        at(9, 1_407, request(1, 2)),
        at(10, 1_900, response(1, 2, 150, StopReason::EndTurn)),
        at(
            12,
            1_901,
            JournalEntry::TurnEnd {
                turn: 1,
                reason: TurnEndReason::Answered,
                usage: Usage::default(),
                commands: 1,
                cost_micros: None,
                descendants: None,
            },
        ),
    ]
}

#[test]
fn a_journal_gives_the_spans_a_live_turn_would() {
    let ctx = TraceContext::from_lookup(|_| None);
    let env = ctx.command_env_for("s-1", 1, "t1");
    let mut t = Tracer::new(ctx.clone(), "s-1", crate::span::resource("s-1"));
    let spans = spans(&mut t, &lines());
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["chat claude-x", "execute_tool shell", "execute_tool shell", "chat claude-x", "invoke_agent unixagent"]
    );
    let agent = &spans[4];
    assert_eq!(agent.span_id, SpanId::agent(ctx.trace_id, "s-1", 1).to_string());
    assert!(spans[..4].iter().all(|s| s.parent_span_id.as_deref() == Some(agent.span_id.as_str())));
    // The command's span is the one its TRACEPARENT named when it was typed.
    let tool = &spans[1];
    let traceparent = &env.iter().find(|(k, _)| *k == "TRACEPARENT").unwrap().1;
    assert!(traceparent.contains(&tool.span_id), "{traceparent} {}", tool.span_id);
    assert_eq!((tool.start_ns, tool.end_ns), (1_402_000_000, 1_405_000_000));
    assert_eq!(tool.attributes["process.exit.code"], Value::Int(0));
    assert_eq!(tool.attr("unixagent.rule"), Some("cedar:builtin.read-only"));
    let denied = &spans[2];
    assert_eq!(denied.attr("unixagent.decision"), Some("deny"));
    assert_eq!(denied.attr("unixagent.outcome"), Some("denied"));
    assert_eq!(denied.status, Status::Unset);
    assert_eq!(spans[0].attributes["gen_ai.response.finish_reasons"], Value::List(vec!["tool_use".into()]));
    let s = agent.summary.as_ref().unwrap();
    assert_eq!((s.tokens_in, s.tokens_out, s.actions.len()), (250, 14, 2));
    assert_eq!((agent.start_ns, agent.end_ns), (1_000_000_000, 1_901_000_000));
}

#[test]
fn a_journal_cut_short_still_ends_its_spans() {
    let mut t = Tracer::new(TraceContext::from_lookup(|_| None), "s", crate::span::resource("s"));
    let cut: Vec<JournalLine> = lines().into_iter().take(5).collect();
    let spans = spans(&mut t, &cut);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chat claude-x", "execute_tool shell", "invoke_agent unixagent"]);
    assert_eq!(spans[1].attr("unixagent.outcome"), Some("interrupted"));
    assert_eq!(spans[2].status, Status::Error);
}
