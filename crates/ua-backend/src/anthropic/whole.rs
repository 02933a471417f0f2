//! A whole Messages response (`"type": "message"`) sent in answer to a
//! streaming request, as some proxies do: replayed through the stream
//! decoder as the events a stream of the same message would have had, so
//! both paths yield the same canonical events.

use serde_json::{Value, json};
use ua_protocol::event::StreamEvent;

use super::decode::AnthropicDecoder;
use crate::sse::DecodeError;

/// The canonical events of a whole Messages response, or of an error body
/// (`{"type": "error", "error": {…}}`) sent with a success status.
pub fn events(message: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
    let mut decoder = AnthropicDecoder::default();
    if message.get("error").is_some() {
        return decoder.feed_value("error", message);
    }
    if message.get("type").and_then(Value::as_str) != Some("message") {
        return Err(DecodeError::Malformed("a JSON body that is neither a message nor an error".into()));
    }
    let blocks = message.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    // A whole message carries tool input already parsed, so a call the
    // output limit cut off looks whole: with `max_tokens` the last block,
    // if it is a call, is the one cut. It is left open, as a stream would
    // have left it, and the decoder reports it as truncated.
    let cut_last = message.get("stop_reason").and_then(Value::as_str) == Some("max_tokens")
        && blocks.last().and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use");
    let mut frames = vec![json!({"type": "message_start", "message": {"usage": message.get("usage")}})];
    let count = blocks.len();
    for (index, mut block) in blocks.into_iter().enumerate() {
        if cut_last && index + 1 == count {
            let partial = block.get_mut("input").map(Value::take).unwrap_or(Value::Null);
            block["input"] = json!({});
            frames.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
            let delta = json!({"type": "input_json_delta", "partial_json": partial.to_string()});
            frames.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            continue;
        }
        frames.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
        frames.push(json!({"type": "content_block_stop", "index": index}));
    }
    frames.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": message.get("stop_reason")},
        "usage": message.get("usage"),
    }));
    frames.push(json!({"type": "message_stop"}));
    let mut out = Vec::new();
    for frame in &frames {
        out.extend(decoder.feed_value("", frame)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::event::{StopReason, TruncatedCall};

    #[test]
    fn the_last_call_of_a_message_stopped_by_max_tokens_is_truncated() {
        let message = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Writing."},
                {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "cat > a <<E"}},
            ],
            "stop_reason": "max_tokens", "stop_sequence": null,
            "usage": {"input_tokens": 50, "output_tokens": 64},
        });
        let events = events(&message).unwrap_or_default();
        let cut = TruncatedCall {
            id: "toolu_1".into(),
            name: "shell".into(),
            partial_input: r#"{"command":"cat > a <<E"}"#.into(),
        };
        assert_eq!(events[0], StreamEvent::TextDelta("Writing.".into()));
        assert!(events.contains(&StreamEvent::TruncatedToolCall(cut)), "{events:?}");
        assert!(!events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))));
        assert_eq!(events.last(), Some(&StreamEvent::Stop(StopReason::MaxTokens)));
    }

    #[test]
    fn an_error_body_is_an_error_event() {
        let body = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let events = events(&body).unwrap_or_default();
        assert!(matches!(&events[..], [StreamEvent::Error(e)] if e.kind == "overloaded_error"), "{events:?}");
        assert!(super::events(&json!({"id": 1})).is_err());
    }
}
