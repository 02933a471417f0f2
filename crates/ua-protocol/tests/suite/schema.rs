//! `docs/ndjson.schema.json` describes exactly what [`AgentEvent`] and
//! [`Input`] put on the wire: every variant validates, and the schema
//! rejects what the types would never write.

use serde_json::{Value, json};
use ua_protocol::agent::{
    AgentEvent, Approval, ChildStatus, CommandStatus, GateDecision, Input, RunStatus, SCHEMA_VERSION, TokenUsage,
    TurnStop,
};

const SCHEMA: &str = include_str!("../../../../docs/ndjson.schema.json");

fn schema(root: &str) -> jsonschema::Validator {
    let mut s: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    s["$ref"] = Value::String(format!("#/$defs/{root}"));
    jsonschema::validator_for(&s).expect("the schema compiles")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance).map(|e| e.to_string()).collect()
}

fn every_event() -> Vec<AgentEvent> {
    vec![
        AgentEvent::Session {
            v: SCHEMA_VERSION,
            id: "20261123-abc".into(),
            journal: None,
            shell: "/bin/bash".into(),
            cwd: "/w".into(),
        },
        AgentEvent::Text { text: "Looking.".into() },
        AgentEvent::Thinking { text: "the user wants".into() },
        AgentEvent::Command {
            id: "toolu_1".into(),
            command: "ls".into(),
            risk: "read_only".into(),
            decision: GateDecision::Ask,
            rule: Some("builtin.read-only".into()),
            runs_as: Some("git --no-pager log".into()),
            note: None,
            defines: vec!["alias ll: ls -la".into()],
        },
        AgentEvent::ApprovalRequest {
            id: "toolu_1".into(),
            command: "rm -rf build".into(),
            risk: "destructive".into(),
            reason: "no policy permits exec rm -rf build".into(),
        },
        AgentEvent::CommandResult {
            id: "toolu_1".into(),
            exit_code: Some(2),
            output: "ls: cannot access 'x'\n".into(),
            status: CommandStatus::Failed,
        },
        AgentEvent::CommandResult {
            id: "toolu_2".into(),
            exit_code: None,
            output: String::new(),
            status: CommandStatus::Skipped,
        },
        AgentEvent::Notice { text: "runs as: git --no-pager log".into() },
        AgentEvent::Error {
            message: "backend 'anthropic' is overloaded; try again shortly".into(),
            kind: "overloaded".into(),
        },
        AgentEvent::Task {
            id: 3,
            title: "Test the parser".into(),
            state: "blocked".into(),
            from: Some("doing".into()),
            assignee: Some("20261124T100000.000Z-0000abcd".into()),
            reason: Some("needs a signing key".into()),
        },
        AgentEvent::Task { id: 4, title: "New".into(), state: "todo".into(), from: None, assignee: None, reason: None },
        AgentEvent::TurnEnd {
            stop: TurnStop::Cancelled,
            exit_code: 130,
            usage: TokenUsage { input: 900, output: 40, cost_micros: None },
            descendants: TokenUsage::default(),
        },
        AgentEvent::TurnEnd {
            stop: TurnStop::EndTurn,
            exit_code: 0,
            usage: TokenUsage { input: 1200, output: 80, cost_micros: Some(4800) },
            descendants: TokenUsage { input: 3000, output: 200, cost_micros: Some(12_000) },
        },
        AgentEvent::Output { id: "toolu_1".into(), text: "a.txt\n".into() },
        AgentEvent::Child {
            id: "c1".into(),
            session: Some("20261124T100000.000Z-0000abcd".into()),
            instruction: "check the logs".into(),
            status: ChildStatus::Running,
            usage: TokenUsage::default(),
        },
        AgentEvent::Child {
            id: "c2".into(),
            session: None,
            instruction: String::new(),
            status: ChildStatus::Refused,
            usage: TokenUsage::default(),
        },
        AgentEvent::Result {
            status: RunStatus::Ok,
            exit_code: 0,
            usage: TokenUsage { input: 1200, output: 80, cost_micros: Some(4800) },
            commands: 1,
        },
    ]
}

#[test]
fn every_event_the_types_write_validates() {
    let v = schema("event");
    for e in every_event() {
        let wire: Value = serde_json::from_str(&e.to_line()).expect("one JSON line");
        assert_eq!(errors(&v, &wire), Vec::<String>::new(), "{wire}");
    }
}

#[test]
fn every_input_validates_and_parses_back() {
    let v = schema("input");
    for i in [
        Input::Instruction { text: "what is here?".into() },
        Input::Approval { id: "toolu_1".into(), decision: Approval::Allow },
        Input::Approval { id: "toolu_1".into(), decision: Approval::AllowAlways },
        Input::Steer { text: "only the src directory".into() },
        Input::Cancel,
    ] {
        let wire = serde_json::to_value(&i).expect("serialises");
        assert_eq!(errors(&v, &wire), Vec::<String>::new(), "{wire}");
        assert_eq!(serde_json::from_value::<Input>(wire).ok(), Some(i));
    }
}

#[test]
fn the_schema_rejects_what_the_types_never_write() {
    let v = schema("event");
    for bad in [
        json!({"type": "text"}),
        json!({"type": "text", "text": "x", "extra": 1}),
        json!({"type": "command", "id": "t", "command": "ls", "risk": "read_only", "decision": "maybe", "rule": null, "runs_as": null, "note": null}),
        json!({"type": "command_result", "id": "t", "output": "", "status": "ok"}),
        json!({"type": "result", "status": "ok", "exit_code": 0, "usage": {"input": 1}, "commands": 0}),
        json!({"type": "session", "v": 2, "id": "s", "journal": null, "shell": "/bin/sh", "cwd": "/"}),
        json!({"type": "task", "id": 1, "title": "t", "state": "stuck", "from": null, "assignee": null, "reason": null}),
        json!({"type": "task", "id": 1, "title": "t", "state": "todo", "from": null}),
        json!({"type": "unknown"}),
    ] {
        assert!(!errors(&v, &bad).is_empty(), "{bad} should not validate");
    }
}
