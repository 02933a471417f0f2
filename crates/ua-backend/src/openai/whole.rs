//! A whole `chat.completion` sent in answer to a streaming request, as some
//! proxies do: its message is replayed through the stream decoder as one
//! chunk whose delta is the whole message, followed by the end marker, so
//! both paths yield the same canonical events.

use serde_json::Value;
use ua_protocol::event::StreamEvent;

use super::decode::OpenAiDecoder;
use crate::sse::{DecodeError, Decoder};

/// The canonical events of a whole completion, or of an error body
/// (`{"error": {…}}`) sent with a success status.
pub fn events(completion: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
    let mut decoder = OpenAiDecoder::default();
    if completion.get("error").is_some() {
        return decoder.feed_value(completion);
    }
    if completion.get("choices").and_then(Value::as_array).is_none() {
        return Err(DecodeError::Malformed("a JSON body that is neither a chat completion nor an error".into()));
    }
    let mut chunk = completion.clone();
    for choice in chunk["choices"].as_array_mut().into_iter().flatten() {
        let mut message = choice.get_mut("message").map(Value::take).unwrap_or(Value::Null);
        // Stream deltas key tool calls by index; a whole message lists them.
        for (i, call) in message.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten().enumerate() {
            if call.get("index").is_none() {
                call["index"] = Value::from(i);
            }
        }
        choice["delta"] = message;
    }
    let mut out = decoder.feed_value(&chunk)?;
    out.extend(decoder.feed("", "[DONE]")?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ua_protocol::event::{StopReason, TruncatedCall, Usage};

    #[test]
    fn a_completion_cut_by_length_in_a_call_is_truncated() {
        let completion = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_763_700_000, "model": "gemma-3-270m-it",
            "choices": [{"index": 0, "finish_reason": "length", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "shell", "arguments": "{\"command\": \"ech"}}],
            }}],
            "usage": {"prompt_tokens": 210, "completion_tokens": 16, "total_tokens": 226},
        });
        let events = events(&completion).unwrap_or_default();
        assert_eq!(
            events,
            vec![
                StreamEvent::TruncatedToolCall(TruncatedCall {
                    id: "call_1".into(),
                    name: "shell".into(),
                    partial_input: "{\"command\": \"ech".into(),
                }),
                StreamEvent::Usage(Usage { input_tokens: 210, output_tokens: 16, ..Usage::default() }),
                StreamEvent::Stop(StopReason::MaxTokens),
            ]
        );
    }

    #[test]
    fn an_error_body_is_an_error_event_and_anything_else_malformed() {
        let events = events(&json!({"error": {"message": "boom", "type": "server_error"}})).unwrap_or_default();
        assert!(matches!(&events[..], [StreamEvent::Error(e)] if e.message == "boom"), "{events:?}");
        assert!(matches!(super::events(&json!({"object": "list"})), Err(DecodeError::Malformed(_))));
    }
}
