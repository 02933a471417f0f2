//! A whole agent exchange through the public types: events folded into a
//! message, the shell call read and its output filtered, the result sent
//! back, and the conversation surviving a JSON round trip (as in a journal).

use serde_json::json;
use ua_protocol::conversation::{Block, Message, Role, Thinking, ToolResult, ToolUse};
use ua_protocol::event::{StopReason, StreamEvent, TurnBuilder, Usage};
use ua_protocol::tool::{OutputMode, SHELL_TOOL, ShellInput};

#[test]
fn an_exchange_round_trips() {
    let events = vec![
        StreamEvent::ThinkingDelta("hm".into()),
        StreamEvent::Thinking(Thinking {
            provider: "anthropic".into(),
            text: "hm".into(),
            signature: Some("s".into()),
            redacted: None,
        }),
        StreamEvent::TextDelta("Building.".into()),
        StreamEvent::ToolCall(ToolUse {
            id: "toolu_1".into(),
            name: SHELL_TOOL.into(),
            input: json!({"command": "cargo build", "output_mode": "final"}),
        }),
        StreamEvent::Usage(Usage { input_tokens: 10, output_tokens: 3, ..Usage::default() }),
        StreamEvent::Stop(StopReason::ToolUse),
    ];
    let mut turn = TurnBuilder::default();
    for e in &events {
        turn.push(e);
    }
    assert_eq!(turn.stop_reason(), Some(&StopReason::ToolUse));
    let assistant = turn.finish();
    let call = assistant.tool_uses().next().unwrap().clone();
    let input = ShellInput::from_value(&call.input).unwrap();
    assert_eq!(input.output_mode, OutputMode::Final);
    let output = input.filter_output("Compiling 1/3\rCompiling 3/3\nFinished\n");
    assert_eq!(output, "Compiling 3/3\nFinished\n");

    let conversation = vec![
        Message::user_text("build it"),
        assistant,
        Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text(&call.id, output))] },
    ];
    let journal = serde_json::to_string(&conversation).unwrap();
    let back: Vec<Message> = serde_json::from_str(&journal).unwrap();
    assert_eq!(back, conversation);
    let events_json = serde_json::to_string(&events).unwrap();
    assert_eq!(serde_json::from_str::<Vec<StreamEvent>>(&events_json).unwrap(), events);
}
