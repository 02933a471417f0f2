//! Both providers end to end against the fake server: what came back and
//! what the server received.

use futures_util::StreamExt;
use serde_json::json;
use ua_backend::config::Kind;
use ua_backend::provider::{Provider, Request};
use ua_protocol::conversation::{Block, Message, ToolUse};
use ua_protocol::event::{StopReason, StreamEvent, Usage};
use ua_protocol::tool::shell_tool;
use ua_testkit::provider::scenario::{Pieces, UsageSpec};
use ua_testkit::provider::{FakeProvider, RequestEnd, Scenario, Turn};

use super::{WAIT, provider_for, quick_retry};

fn request() -> Request {
    Request {
        system: "You are terse.".into(),
        messages: vec![Message::user_text("list /tmp")],
        tools: vec![shell_tool()],
        max_tokens: None,
    }
}

fn rich_turn() -> Turn {
    let mut t = Turn::tool_call("shell", json!({"command": "ls -la /tmp", "output_mode": "final"}));
    t.text = Pieces::Many(vec!["Let me ".into(), "look.".into()]);
    t.thinking = Pieces::One("They want files.".into());
    t.signature = Some("sig-abc".into());
    t.usage = UsageSpec { input: 120, output: 30 };
    t.json_chunk = Some(3);
    t.unknown_event = true;
    t
}

async fn check_rich_turn(kind: Kind) {
    let server = FakeProvider::start(Scenario::new().turn(rich_turn())).unwrap();
    let p = provider_for(&server, kind, quick_retry(0));
    let events: Vec<StreamEvent> = p.stream(&request()).map(|e| e.unwrap()).collect().await;
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me look.");
    assert!(events.contains(&StreamEvent::ToolCall(ToolUse {
        id: match kind {
            Kind::Anthropic => "toolu_fake_0_0".into(),
            Kind::Openai => "call_fake_0_0".into(),
        },
        name: "shell".into(),
        input: json!({"command": "ls -la /tmp", "output_mode": "final"}),
    })));
    assert!(events.contains(&StreamEvent::Usage(Usage { input_tokens: 120, output_tokens: 30, ..Usage::default() })));
    assert_eq!(events.last(), Some(&StreamEvent::Stop(StopReason::ToolUse)));
    let thinking = events.iter().find_map(|e| match e {
        StreamEvent::Thinking(t) => Some(t.clone()),
        _ => None,
    });
    let thinking = thinking.expect("a thinking block");
    assert_eq!(thinking.text, "They want files.");
    assert_eq!(thinking.provider, format!("{kind:?}").to_lowercase());
    assert_eq!(thinking.signature.is_some(), kind == Kind::Anthropic);
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::Completed));
}

#[tokio::test]
async fn anthropic_stream_end_to_end() {
    check_rich_turn(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_stream_end_to_end() {
    check_rich_turn(Kind::Openai).await;
}

#[tokio::test]
async fn anthropic_request_on_the_wire() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::text("ok"))).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(0));
    let done = p.complete(&request()).await.unwrap();
    assert_eq!(done.message.content, vec![Block::text("ok")]);
    let r = &server.requests()[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("test-key"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["system"][0]["text"], "You are terse.");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tools"][0]["name"], "shell");
    assert_eq!(body["tools"][0]["input_schema"]["required"], json!(["command"]));
    assert_eq!(body["messages"][0]["content"][0]["text"], "list /tmp");
}

#[tokio::test]
async fn openai_request_on_the_wire() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::text("ok"))).unwrap();
    let p = provider_for(&server, Kind::Openai, quick_retry(0));
    let done = p.complete(&request()).await.unwrap();
    assert_eq!(done.message.text(), "ok");
    assert_eq!(done.stop, Some(StopReason::EndTurn));
    assert_eq!(done.usage.map(|u| u.output_tokens), Some(5));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer test-key"));
    let body = r.json();
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "You are terse."}));
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "list /tmp"}));
    assert_eq!(body["tools"][0]["function"]["name"], "shell");
    assert_eq!(body["max_tokens"], 1024);
}

#[tokio::test]
async fn provider_reports_window_and_estimate() {
    let server = FakeProvider::start(Scenario::new()).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(0));
    assert_eq!(p.context_window(), 200_000);
    assert_eq!(p.name(), "fake-anthropic");
    assert!(p.estimate_tokens(&request()) > 10);
}
