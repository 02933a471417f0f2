//! Answers seen from servers other than the two hosted APIs (LiteLLM's
//! proxy, llama.cpp's server, vLLM), and the hosted APIs' billing and
//! output-limit errors: decoded from recorded streams and met over HTTP
//! from the fake provider, checking what the server received too.

use futures_util::StreamExt;
use serde_json::json;
use ua_backend::config::{BackendSpec, Kind};
use ua_backend::error::{BackendError, ErrorKind};
use ua_backend::key::KeySource;
use ua_backend::limits::Stated;
use ua_backend::provider::{HttpProvider, Provider, ProviderSettings, Request};
use ua_backend::sse::replay;
use ua_protocol::conversation::{Block, Message, Thinking, ToolUse};
use ua_protocol::event::{StopReason, StreamEvent, TruncatedCall, Usage};
use ua_testkit::provider::scenario::Pieces;
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

use super::{fixture, provider_for, quick_retry, transport};

fn request() -> Request {
    Request { messages: vec![Message::user_text("hi")], ..Request::default() }
}

async fn collect(p: &HttpProvider) -> (Vec<StreamEvent>, Option<BackendError>) {
    let mut s = p.stream(&request());
    let mut got = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(ev) => got.push(ev),
            Err(e) => return (got, Some(e)),
        }
    }
    (got, None)
}

#[test]
fn anthropic_tool_call_cut_by_max_tokens_is_a_truncated_call() {
    let r = replay(Kind::Anthropic, &[&fixture("anthropic_tool_max_tokens.sse")]);
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TextDelta("I'll write the notes file.".into()),
            StreamEvent::TruncatedToolCall(TruncatedCall {
                id: "toolu_01Cut".into(),
                name: "shell".into(),
                partial_input: "{\"command\": \"cat > notes.md <<'EOF'\\n# Notes\\n- first".into(),
            }),
            StreamEvent::Usage(Usage { input_tokens: 1203, output_tokens: 64, ..Usage::default() }),
            StreamEvent::Stop(StopReason::MaxTokens),
        ]
    );
}

#[test]
fn openai_tool_call_cut_by_length_is_a_truncated_call() {
    let r = replay(Kind::Openai, &[&fixture("openai_tool_length.sse")]);
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TruncatedToolCall(TruncatedCall {
                id: "call_Ht9".into(),
                name: "shell".into(),
                partial_input: "{\"command\": \"printf '%s\\n' one two thr".into(),
            }),
            StreamEvent::Usage(Usage { input_tokens: 210, output_tokens: 16, ..Usage::default() }),
            StreamEvent::Stop(StopReason::MaxTokens),
        ]
    );
}

#[test]
fn a_tool_block_left_open_by_max_tokens_is_a_truncated_call_too() {
    let s = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"shell\",\"input\":{}}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"comm\"}}\n\n\
             event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":3}}\n\n\
             event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let r = replay(Kind::Anthropic, &[s.as_bytes()]);
    assert_eq!(r.error, None);
    let cut = TruncatedCall { id: "t".into(), name: "shell".into(), partial_input: "{\"comm".into() };
    assert!(r.events.contains(&StreamEvent::TruncatedToolCall(cut)), "{:?}", r.events);
}

#[tokio::test]
async fn a_cut_tool_call_from_the_server_arrives_as_one_in_both_formats() {
    for kind in [Kind::Anthropic, Kind::Openai] {
        let mut t = Turn::tool_call("shell", json!({"command": "printf 'a%.0s' {1..4000}"}));
        t.text = Pieces::One("Printing.".into());
        t.cut_input_at = Some(20);
        let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
        let (events, err) = collect(&provider_for(&server, kind, quick_retry(0))).await;
        assert!(err.is_none(), "{kind:?}: {err:?}");
        let cut: Vec<&TruncatedCall> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TruncatedToolCall(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(cut.len(), 1, "{kind:?}: {events:?}");
        assert_eq!(cut[0].partial_input, r#"{"command":"printf '"#);
        assert!(!events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))), "{kind:?}");
        assert_eq!(events.last(), Some(&StreamEvent::Stop(StopReason::MaxTokens)), "{kind:?}");
    }
}

#[tokio::test]
async fn a_whole_json_answer_to_a_streaming_request_is_accepted_in_both_formats() {
    for kind in [Kind::Anthropic, Kind::Openai] {
        let mut t = Turn::tool_call("shell", json!({"command": "ls -la"}));
        t.text = Pieces::Many(vec!["Let me ".into(), "look.".into()]);
        t.thinking = Pieces::One("A listing answers it.".into());
        t.tool_calls[0].id = Some("call_whole".into());
        t.usage.input = 321;
        t.usage.output = 45;
        t.whole = true;
        let server = FakeProvider::start(Scenario::new().turn(t).turn(Turn::text("never"))).unwrap();
        let p = provider_for(&server, kind, quick_retry(2));
        let done = p.complete(&request()).await.unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let call = ToolUse { id: "call_whole".into(), name: "shell".into(), input: json!({"command": "ls -la"}) };
        let thinking = Thinking {
            provider: if kind == Kind::Anthropic { "anthropic" } else { "openai" }.into(),
            text: "A listing answers it.".into(),
            signature: (kind == Kind::Anthropic).then(|| "sig-fake".into()),
            redacted: None,
        };
        assert_eq!(
            done.message.content,
            vec![Block::Thinking(thinking), Block::text("Let me look."), Block::ToolUse(call)],
            "{kind:?}"
        );
        assert_eq!(done.stop, Some(StopReason::ToolUse), "{kind:?}");
        let usage = done.usage.unwrap_or_default();
        assert_eq!((usage.input_tokens, usage.output_tokens), (321, 45), "{kind:?}");
        // One request, and it did ask for a stream.
        assert_eq!(server.request_count(), 1);
        assert_eq!(server.requests()[0].json()["stream"], true);
    }
}

#[tokio::test]
async fn a_whole_json_error_with_a_success_status_is_an_error() {
    let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#;
    // A 200 whose JSON body is an error, as oobabooga saw from llama.cpp.
    let server = FakeProvider::start(Scenario::new().turn(Turn::error(200, body))).unwrap();
    let (events, err) = collect(&provider_for(&server, Kind::Openai, quick_retry(0))).await;
    assert!(events.is_empty());
    let err = err.expect("an error");
    assert_eq!(err.kind(), ErrorKind::ContextTooLong, "{err}");
}

#[tokio::test]
async fn llama_cpp_context_overflow_is_recognised_with_its_window() {
    let body = r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}"#;
    let server = FakeProvider::start(Scenario::new().turn(Turn::error(400, body)).turn(Turn::text("x"))).unwrap();
    let (_, err) = collect(&provider_for(&server, Kind::Openai, quick_retry(3))).await;
    let err = err.expect("an error");
    let BackendError::ContextTooLong { stated, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*stated, Stated { window: Some(4096), prompt: Some(4390), ..Stated::default() });
    assert_eq!(server.request_count(), 1, "not retried unchanged");
}

#[tokio::test]
async fn output_that_does_not_fit_is_its_own_kind() {
    let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 8292 tokens (100 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"}}"#;
    for (kind, body, room) in [(Kind::Openai, vllm, 3996), (Kind::Anthropic, anthropic, 21_041)] {
        let server = FakeProvider::start(Scenario::new().turn(Turn::error(400, body))).unwrap();
        let (_, err) = collect(&provider_for(&server, kind, quick_retry(3))).await;
        let err = err.expect("an error");
        let BackendError::OutputTooLong { stated, .. } = &err else { panic!("{err:?}") };
        assert_eq!(stated.room_for_output(), Some(room));
        assert!(err.to_string().contains("lower max_tokens"), "{err}");
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn out_of_credit_is_not_retried_and_keeps_the_servers_words() {
    let openai = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CTm4ZvtWfcB2e3p6wLkQ1"}"#;
    for (kind, status, body, words) in [
        (Kind::Openai, 429, openai, "You exceeded your current quota"),
        (Kind::Anthropic, 400, anthropic, "Your credit balance is too low"),
        (
            Kind::Openai,
            402,
            r#"{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits","code":402}}"#,
            "Insufficient credits",
        ),
    ] {
        let scenario = Scenario::new().turn(Turn::error(status, body).header("retry-after", "0")).turn(Turn::text("x"));
        let server = FakeProvider::start(scenario).unwrap();
        let (_, err) = collect(&provider_for(&server, kind, quick_retry(3))).await;
        let err = err.expect("an error");
        assert_eq!(err.kind(), ErrorKind::OutOfCredit, "{err}");
        let msg = err.to_string();
        assert!(msg.contains(words) && msg.contains("out of credit"), "{msg}");
        assert!(!msg.contains('\n'));
        assert_eq!(server.request_count(), 1, "{kind:?} {status}: retried");
    }
}

fn spec(base_url: &str, model: &str, max_tokens: Option<u32>, context_window: Option<u64>) -> BackendSpec {
    BackendSpec {
        name: "local".into(),
        kind: Kind::Openai,
        model: model.into(),
        base_url: base_url.into(),
        key: KeySource::None,
        max_tokens,
        context_window,
        thinking_budget: None,
    }
}

#[tokio::test]
async fn the_default_max_tokens_stays_inside_a_small_window() {
    let server = FakeProvider::start(Scenario { repeat: true, ..Scenario::new().turn(Turn::text("ok")) }).unwrap();
    let base = server.openai_base_url();
    for (spec, sent) in [
        // An unknown model gets the conservative 8192-token window.
        (spec(&base, "gemma-3-270m-it", None, None), 2048),
        (spec(&base, "gemma-3-270m-it", None, Some(4096)), 1024),
        (spec(&base, "gemma-3-270m-it", Some(3000), Some(4096)), 2048),
        (spec(&base, "gpt-4o", None, None), 8192),
    ] {
        let settings = ProviderSettings::from_spec(&spec, &|_| None).unwrap();
        let p = HttpProvider::new(settings, transport(quick_retry(0)));
        assert_eq!(p.max_tokens(), sent);
        p.complete(&request()).await.unwrap();
        let body = server.requests().last().map(|r| r.json()).unwrap_or_default();
        assert_eq!(body["max_tokens"], sent, "{spec:?}");
    }
}

#[tokio::test]
async fn a_lowered_max_tokens_reaches_the_server() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::text("ok"))).unwrap();
    let p = provider_for(&server, Kind::Openai, quick_retry(0));
    let req = Request { max_tokens: Some(3996), ..request() };
    p.complete(&req).await.unwrap();
    assert_eq!(server.requests()[0].json()["max_tokens"], 3996);
}
