//! Each provider's full event sequence into canonical events.

use serde_json::json;
use ua_backend::config::Kind;
use ua_backend::sse::{DecodeError, replay};
use ua_protocol::conversation::{Thinking, ToolUse};
use ua_protocol::event::{ProviderError, StopReason, StreamEvent, Usage};

use super::fixture;

fn decode(kind: Kind, bytes: &[u8]) -> ua_backend::sse::Replay {
    replay(kind, &[bytes])
}

#[test]
fn anthropic_text_sequence() {
    let r = decode(Kind::Anthropic, &fixture("anthropic_text.sse"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(", wörld ✓".into()),
            StreamEvent::Usage(Usage {
                input_tokens: 25,
                output_tokens: 15,
                cache_read_tokens: 12,
                cache_write_tokens: 0,
            }),
            StreamEvent::Stop(StopReason::EndTurn),
        ]
    );
}

#[test]
fn anthropic_thinking_text_and_tool_from_partial_json() {
    let r = decode(Kind::Anthropic, &fixture("anthropic_tool_thinking.sse"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::ThinkingDelta("The user wants ".into()),
            StreamEvent::ThinkingDelta("a file list.".into()),
            StreamEvent::Thinking(Thinking {
                provider: "anthropic".into(),
                text: "The user wants a file list.".into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
                redacted: None,
            }),
            StreamEvent::TextDelta("Let me look.".into()),
            StreamEvent::ToolCall(ToolUse {
                id: "toolu_01T1x".into(),
                name: "shell".into(),
                input: json!({"command": "ls -la /tmp", "output_mode": "final"}),
            }),
            StreamEvent::Usage(Usage { input_tokens: 472, output_tokens: 89, ..Usage::default() }),
            StreamEvent::Stop(StopReason::ToolUse),
        ]
    );
}

#[test]
fn anthropic_mid_stream_error_is_an_event_after_the_partial_text() {
    let r = decode(Kind::Anthropic, &fixture("anthropic_overloaded.sse"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TextDelta("Partial".into()),
            StreamEvent::Error(ProviderError { kind: "overloaded_error".into(), message: "Overloaded".into() }),
        ]
    );
}

#[test]
fn openai_text_sequence_with_cached_usage() {
    let r = decode(Kind::Openai, &fixture("openai_text.sse"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(", wörld ✓".into()),
            StreamEvent::Usage(Usage {
                input_tokens: 25,
                output_tokens: 15,
                cache_read_tokens: 12,
                cache_write_tokens: 0,
            }),
            StreamEvent::Stop(StopReason::EndTurn),
        ]
    );
}

#[test]
fn openai_interleaved_tool_calls_assemble_by_index() {
    let r = decode(Kind::Openai, &fixture("openai_tools.sse"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::ThinkingDelta("List then count.".into()),
            StreamEvent::Thinking(Thinking {
                provider: "openai".into(),
                text: "List then count.".into(),
                signature: None,
                redacted: None,
            }),
            StreamEvent::ToolCall(ToolUse {
                id: "call_a".into(),
                name: "shell".into(),
                input: json!({"command": "ls"}),
            }),
            StreamEvent::ToolCall(ToolUse {
                id: "call_b".into(),
                name: "shell".into(),
                input: json!({"command": "wc -l *"}),
            }),
            StreamEvent::Usage(Usage { input_tokens: 100, output_tokens: 20, ..Usage::default() }),
            StreamEvent::Stop(StopReason::ToolUse),
        ]
    );
}

#[test]
fn truncated_streams_keep_what_was_decoded() {
    let full = fixture("anthropic_text.sse");
    let text = String::from_utf8(full).unwrap();
    let cut = text.find("event: message_delta").unwrap();
    let r = decode(Kind::Anthropic, &text.as_bytes()[..cut]);
    assert_eq!(r.error, Some(DecodeError::Truncated));
    assert_eq!(r.events.len(), 2);

    let oa = String::from_utf8(fixture("openai_text.sse")).unwrap();
    let cut = oa.find(r#""finish_reason":"stop""#).unwrap();
    let cut = oa[..cut].rfind("data:").unwrap();
    let r = decode(Kind::Openai, &oa.as_bytes()[..cut]);
    assert_eq!(r.error, Some(DecodeError::Truncated));
    assert_eq!(r.events.len(), 2);
}

#[test]
fn openai_without_done_but_with_finish_reason_is_complete() {
    let oa = String::from_utf8(fixture("openai_tools.sse")).unwrap();
    let cut = oa.find("data: [DONE]").unwrap();
    let r = decode(Kind::Openai, &oa.as_bytes()[..cut]);
    assert_eq!(r.error, None);
    assert_eq!(r.events.last(), Some(&StreamEvent::Stop(StopReason::ToolUse)));
}

#[test]
fn malformed_json_is_reported_with_events_before_it() {
    let s = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n";
    let r = decode(Kind::Anthropic, s.as_bytes());
    assert_eq!(r.events, vec![StreamEvent::TextDelta("ok".into())]);
    match r.error {
        Some(DecodeError::Malformed(m)) => {
            assert!(m.starts_with("invalid JSON in 'content_block_delta' event"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let r = decode(Kind::Openai, b"data: {\"choices\": [\n\n");
    assert!(matches!(r.error, Some(DecodeError::Malformed(_))), "{r:?}");
}

#[test]
fn invalid_tool_json_names_the_tool() {
    let s = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"shell\",\"input\":{}}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \"}}\n\n\
             event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
             event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n\
             event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    // Bad JSON is only known to be a fault once the stop reason is not the
    // output limit.
    let r = decode(Kind::Anthropic, s.as_bytes());
    match r.error {
        Some(DecodeError::Malformed(m)) => {
            assert!(m.starts_with("tool call 'shell' has invalid JSON input"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert!(r.events.is_empty(), "{:?}", r.events);
}

#[test]
fn tool_call_without_input_deltas_gets_an_empty_object() {
    let s = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"noargs\",\"input\":{}}}\n\n\
             event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
             event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let r = decode(Kind::Anthropic, s.as_bytes());
    assert_eq!(r.error, None);
    assert_eq!(r.events[0], StreamEvent::ToolCall(ToolUse { id: "t".into(), name: "noargs".into(), input: json!({}) }));
}

#[test]
fn openai_error_chunk_becomes_an_error_event() {
    let s = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n\
             data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":502}}\n\n";
    let r = decode(Kind::Openai, s.as_bytes());
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::TextDelta("hi".into()),
            StreamEvent::Error(ProviderError { kind: "502".into(), message: "upstream overloaded".into() }),
        ]
    );
}

#[test]
fn redacted_thinking_is_kept_opaque() {
    let s = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EnciPheRed\"}}\n\n\
             event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
             event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let r = decode(Kind::Anthropic, s.as_bytes());
    assert_eq!(
        r.events[0],
        StreamEvent::Thinking(Thinking {
            provider: "anthropic".into(),
            text: String::new(),
            signature: None,
            redacted: Some("EnciPheRed".into()),
        })
    );
}

#[test]
fn openai_calls_without_index_and_with_a_stop_reason_of_stop() {
    // Older ollama and llama.cpp: whole calls, no index, finish "stop".
    let s = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}]},\"finish_reason\":null}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"shell\",\"arguments\":{\"command\":\"pwd\"}}}]},\"finish_reason\":null}]}\n\n\
             data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
             data: [DONE]\n\n";
    let r = decode(Kind::Openai, s.as_bytes());
    assert_eq!(r.error, None);
    assert_eq!(
        r.events,
        vec![
            StreamEvent::ToolCall(ToolUse { id: "a".into(), name: "shell".into(), input: json!({"command": "ls"}) }),
            StreamEvent::ToolCall(ToolUse { id: "b".into(), name: "shell".into(), input: json!({"command": "pwd"}) }),
            StreamEvent::Stop(StopReason::ToolUse),
        ]
    );
}
