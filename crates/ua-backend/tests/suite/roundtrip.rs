//! Thinking signatures go back verbatim to the provider that made them
//! and are dropped for any other.

use serde_json::{Value, json};
use ua_backend::config::Kind;
use ua_backend::provider::{Provider, Request};
use ua_protocol::conversation::{Block, Message, Role, ToolResult};
use ua_protocol::tool::shell_tool;
use ua_testkit::provider::scenario::Pieces;
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

use super::{provider_for, quick_retry};

#[tokio::test]
async fn signed_thinking_round_trips_to_the_same_provider_only() {
    let mut first = Turn::tool_call("shell", json!({"command": "ls"}));
    first.thinking = Pieces::Many(vec!["I should ".into(), "list.".into()]);
    first.signature = Some("sig-round-trip-42".into());
    let scenario = Scenario::new().turn(first).turn(Turn::text("done"));
    let server = FakeProvider::start(scenario).unwrap();
    let anthropic = provider_for(&server, Kind::Anthropic, quick_retry(0));

    let mut req = Request {
        system: "s".into(),
        messages: vec![Message::user_text("list")],
        tools: vec![shell_tool()],
        max_tokens: None,
    };
    let turn1 = anthropic.complete(&req).await.unwrap();
    let call_id = turn1.message.tool_uses().next().unwrap().id.clone();
    assert!(
        matches!(&turn1.message.content[0], Block::Thinking(t) if t.signature.as_deref() == Some("sig-round-trip-42"))
    );
    req.messages.push(turn1.message.clone());
    req.messages
        .push(Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text(call_id, "a\nb"))] });
    anthropic.complete(&req).await.unwrap();
    let echoed = server.requests()[1].json();
    assert_eq!(
        echoed["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "I should list.", "signature": "sig-round-trip-42"})
    );
    assert_eq!(echoed["messages"][1]["content"][1]["type"], "tool_use");

    // The same conversation sent to an OpenAI-compatible backend.
    let other = FakeProvider::start(Scenario::new().turn(Turn::text("ok"))).unwrap();
    let openai = provider_for(&other, Kind::Openai, quick_retry(0));
    openai.complete(&req).await.unwrap();
    let body = other.requests()[0].json();
    let text = body.to_string();
    assert!(!text.contains("sig-round-trip-42"), "{text}");
    assert!(!text.contains("I should list."), "{text}");
    let assistant = &body["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], Value::Null);
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "shell");
    assert_eq!(body["messages"][3]["role"], "tool");
}
