use super::*;
use ua_protocol::agent::{GateDecision, TokenUsage};
use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::event::Usage;

const NDJSON: &str = r#"{"type":"session","v":1,"id":"20261126T010203.456Z-00003f2a","journal":null,"shell":"/bin/bash","cwd":"/w"}
{"type":"text","text":"I will look."}
{"type":"command","id":"t1","command":"tail -n 50 app.log","risk":"read_only","decision":"allow","rule":null,"runs_as":null,"note":null}
{"type":"command_result","id":"t1","exit_code":0,"output":"…","status":"ok"}
{"type":"command","id":"t2","command":"rm app.log","risk":"destructive","decision":"ask","rule":null,"runs_as":null,"note":null}
{"type":"command_result","id":"t2","exit_code":null,"output":"approval is needed and there is no terminal to ask on: it deletes\nmore","status":"denied"}
{"type":"text","text":"The log shows "}
{"type":"text","text":"two timeouts.\n"}
{"type":"result","status":"ok","exit_code":0,"usage":{"input":1500,"output":320},"commands":2}
"#;

#[test]
fn the_fold_line_from_ndjson() {
    let f = from_ndjson("check the logs", NDJSON);
    assert_eq!(
        f.line(Duration::from_millis(3100)),
        "▸ child 3f2a \"check the logs\" · done · 3.1 s · 1.8k tokens · 2 commands · 1 denied"
    );
    assert_eq!(f.answer(), "The log shows two timeouts.", "the text after the last command");
    assert_eq!(
        f.denied,
        [("rm app.log".to_string(), "approval is needed and there is no terminal to ask on: it deletes".to_string())]
    );
}

#[test]
fn the_same_line_from_the_journal() {
    let at = |seq, ts, entry| JournalLine { seq, ts, entry };
    let reply = Message { role: Role::Assistant, content: vec![Block::text("Two timeouts.")] };
    let lines = [
        at(
            1,
            1_000,
            JournalEntry::SessionStart {
                session: "20261126T010203.456Z-00003f2a".into(),
                pid: 1,
                shell: "/bin/bash".into(),
                cwd: "/w".into(),
                os: "linux".into(),
                version: "0".into(),
            },
        ),
        at(2, 1_010, JournalEntry::Instruction { turn: 1, text: "check the logs".into() }),
        at(
            3,
            3_900,
            JournalEntry::ModelResponse {
                turn: 1,
                call: 2,
                message: reply,
                usage: None,
                stop: None,
                purpose: Default::default(),
            },
        ),
        at(
            4,
            4_100,
            JournalEntry::TurnEnd {
                turn: 1,
                reason: TurnEndReason::Answered,
                usage: Usage { input_tokens: 1500, output_tokens: 320, ..Default::default() },
                commands: 2,
                cost_micros: None,
                descendants: None,
            },
        ),
    ];
    let f = from_journal(&lines);
    assert_eq!(
        f.line(f.journal_duration().unwrap()),
        "▸ child 3f2a \"check the logs\" · done · 3.1 s · 1.8k tokens · 2 commands"
    );
    assert_eq!(f.answer(), "Two timeouts.");
}

#[test]
fn refusals_failures_and_long_instructions() {
    let mut f = Fold::new("a very long instruction that goes on and on, well past what one line can hold");
    f.event(&AgentEvent::Error { message: "not started: too deep".into(), kind: "depth".into() });
    f.event(&AgentEvent::Result { status: RunStatus::Error, exit_code: 77, usage: TokenUsage::default(), commands: 0 });
    let line = f.line(Duration::from_millis(20));
    assert!(line.starts_with("▸ child ---- \"a very long instruction that goes on and on, we…\" · refused · 0.0 s · 0 tokens · 0 commands"), "{line}");
    let mut f = Fold::new("x");
    f.event(&AgentEvent::Command {
        id: "a".into(),
        command: "make".into(),
        risk: "build_test".into(),
        decision: GateDecision::Allow,
        rule: None,
        runs_as: None,
        note: None,
        defines: Vec::new(),
    });
    f.event(&AgentEvent::Result {
        status: RunStatus::Cancelled,
        exit_code: 130,
        usage: TokenUsage { input: 900, output: 0, cost_micros: None },
        commands: 1,
    });
    assert_eq!(f.line(Duration::from_secs(125)), "▸ child ---- \"x\" · cancelled · 2 min 5 s · 900 tokens · 1 command");
    assert_eq!(tokens(2_400_000), "2.4M tokens");
    assert_eq!(seconds(Duration::from_secs(42)), "42 s");
}
