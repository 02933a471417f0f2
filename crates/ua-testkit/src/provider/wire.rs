//! Renders a scripted turn in each provider's real wire format.

use serde_json::{Value, json};

use super::scenario::Turn;

/// Which API a request spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Anthropic,
    OpenAi,
}

impl Format {
    /// By request path, as the real services route.
    pub fn from_path(path: &str) -> Option<Self> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Self::OpenAi)
        } else {
            None
        }
    }
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn json_pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

/// The SSE events of one turn, each a complete `…\n\n` frame.
pub fn render(format: Format, turn: &Turn, model: &str, serial: usize) -> Vec<String> {
    match format {
        Format::Anthropic => anthropic(turn, model, serial),
        Format::OpenAi => openai(turn, model, serial),
    }
}

fn anthropic(turn: &Turn, model: &str, serial: usize) -> Vec<String> {
    let mut out = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_fake_{serial}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": turn.usage.input, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        }}),
    )];
    out.push(sse(Some("ping"), &json!({"type": "ping"})));
    let mut index = 0;
    let mut block = |out: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        out.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for d in deltas {
            out.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        out.push(sse(Some("content_block_stop"), &json!({"type": "content_block_stop", "index": index})));
        index += 1;
    };
    let thinking = turn.thinking.pieces();
    if !thinking.is_empty() {
        let mut deltas: Vec<Value> =
            thinking.iter().map(|t| json!({"type": "thinking_delta", "thinking": t})).collect();
        let sig = turn.signature.clone().unwrap_or_else(|| "sig-fake".to_owned());
        deltas.push(json!({"type": "signature_delta", "signature": sig}));
        block(&mut out, json!({"type": "thinking", "thinking": ""}), deltas);
    }
    let text = turn.text.pieces();
    if !text.is_empty() {
        let deltas = text.iter().map(|t| json!({"type": "text_delta", "text": t})).collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    if turn.unknown_event {
        out.push(sse(Some("future_event"), &json!({"type": "future_event", "detail": "clients must skip this"})));
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let id = call.id.clone().unwrap_or_else(|| format!("toolu_fake_{serial}_{i}"));
        let deltas = json_pieces(&turn.tool_input_text(i), turn.json_chunk.unwrap_or(7))
            .into_iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        block(&mut out, json!({"type": "tool_use", "id": id, "name": call.name, "input": {}}), deltas);
    }
    if let Some(err) = &turn.stream_error {
        out.push(sse(Some("error"), &json!({"type": "error", "error": {"type": err.kind, "message": err.message}})));
        return out;
    }
    out.push(sse(
        Some("message_delta"),
        &json!({"type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason(), "stop_sequence": null},
                "usage": {"output_tokens": turn.usage.output}}),
    ));
    out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    out
}

fn openai(turn: &Turn, model: &str, serial: usize) -> Vec<String> {
    let id = format!("chatcmpl-fake-{serial}");
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]}),
        )
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for t in turn.thinking.pieces() {
        out.push(chunk(json!({"reasoning_content": t}), Value::Null));
    }
    for t in turn.text.pieces() {
        out.push(chunk(json!({"content": t}), Value::Null));
    }
    if turn.unknown_event {
        out.push(sse(Some("future_event"), &json!({"object": "future.thing", "detail": "clients must skip this"})));
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let cid = call.id.clone().unwrap_or_else(|| format!("call_fake_{serial}_{i}"));
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for p in json_pieces(&turn.tool_input_text(i), turn.json_chunk.unwrap_or(7)) {
            out.push(chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}), Value::Null));
        }
    }
    if let Some(err) = &turn.stream_error {
        out.push(sse(None, &json!({"error": {"type": err.kind, "message": err.message}})));
        return out;
    }
    out.push(chunk(json!({}), json!(openai_finish(turn))));
    out.push(sse(
        None,
        &json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": model, "choices": [],
                "usage": {"prompt_tokens": turn.usage.input, "completion_tokens": turn.usage.output,
                          "total_tokens": turn.usage.input + turn.usage.output}}),
    ));
    out.push("data: [DONE]\n\n".to_owned());
    out
}

fn openai_finish(turn: &Turn) -> String {
    match turn.stop_reason().as_str() {
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        "end_turn" => "stop",
        other => other,
    }
    .to_owned()
}

/// The whole response of one turn as a single JSON document, as a server
/// answers a request without `stream: true` (and some proxies answer one
/// with it).
pub fn whole(format: Format, turn: &Turn, model: &str, serial: usize) -> String {
    let thinking: String = turn.thinking.pieces().concat();
    let text: String = turn.text.pieces().concat();
    match format {
        Format::Anthropic => {
            let mut content = Vec::new();
            if !thinking.is_empty() {
                let sig = turn.signature.clone().unwrap_or_else(|| "sig-fake".to_owned());
                content.push(json!({"type": "thinking", "thinking": thinking, "signature": sig}));
            }
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for (i, call) in turn.tool_calls.iter().enumerate() {
                let id = call.id.clone().unwrap_or_else(|| format!("toolu_fake_{serial}_{i}"));
                // A whole message carries parsed input; a cut one, what
                // parsed of it (Anthropic gives `{}`).
                let input = serde_json::from_str::<Value>(&turn.tool_input_text(i)).unwrap_or_else(|_| json!({}));
                content.push(json!({"type": "tool_use", "id": id, "name": call.name, "input": input}));
            }
            json!({
                "id": format!("msg_fake_{serial}"), "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": turn.stop_reason(), "stop_sequence": null,
                "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            })
            .to_string()
        }
        Format::OpenAi => {
            let mut message =
                json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !thinking.is_empty() {
                message["reasoning_content"] = json!(thinking);
            }
            if !turn.tool_calls.is_empty() {
                message["tool_calls"] = turn
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, call)| {
                        let id = call.id.clone().unwrap_or_else(|| format!("call_fake_{serial}_{i}"));
                        json!({"id": id, "type": "function",
                               "function": {"name": call.name, "arguments": turn.tool_input_text(i)}})
                    })
                    .collect();
            }
            json!({
                "id": format!("chatcmpl-fake-{serial}"), "object": "chat.completion", "created": 1_700_000_000,
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": openai_finish(turn)}],
                "usage": {"prompt_tokens": turn.usage.input, "completion_tokens": turn.usage.output,
                          "total_tokens": turn.usage.input + turn.usage.output},
            })
            .to_string()
        }
    }
}

/// A provider-shaped error body for a status, when the scenario gives none.
pub fn error_body(format: Format, status: u16) -> String {
    let (kind, message) = match status {
        400 => ("invalid_request_error", "bad request"),
        401 => ("authentication_error", "invalid x-api-key"),
        402 => ("billing_error", "insufficient credits"),
        403 => ("permission_error", "forbidden"),
        404 => ("not_found_error", "model not found"),
        429 => ("rate_limit_error", "rate limited"),
        529 => ("overloaded_error", "Overloaded"),
        503 => ("overloaded_error", "service unavailable"),
        _ => ("api_error", "internal server error"),
    };
    match format {
        Format::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
        Format::OpenAi => json!({"error": {"type": kind, "message": message, "code": null}}).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::scenario::ToolCallSpec;

    #[test]
    fn paths_pick_the_format() {
        assert_eq!(Format::from_path("/v1/messages"), Some(Format::Anthropic));
        assert_eq!(Format::from_path("/v1/chat/completions?x=1"), Some(Format::OpenAi));
        assert_eq!(Format::from_path("/v1/models"), None);
    }

    #[test]
    fn tool_input_is_split_into_pieces_that_rejoin() {
        let mut t = Turn::text("hi");
        t.tool_calls.push(ToolCallSpec { id: None, name: "shell".into(), input: json!({"command": "ls -la /tmp"}) });
        let events = render(Format::Anthropic, &t, "m", 0);
        let joined: String = events
            .iter()
            .filter(|e| e.contains("input_json_delta"))
            .map(|e| {
                let data = e.lines().nth(1).unwrap_or("").trim_start_matches("data: ");
                let v: Value = serde_json::from_str(data).unwrap();
                v["delta"]["partial_json"].as_str().unwrap_or("").to_owned()
            })
            .collect();
        assert_eq!(joined, r#"{"command":"ls -la /tmp"}"#);
        assert!(events.last().unwrap().contains("message_stop"));
        let oa = render(Format::OpenAi, &t, "m", 0);
        assert_eq!(oa.last().map(String::as_str), Some("data: [DONE]\n\n"));
        assert!(oa.iter().any(|e| e.contains(r#""finish_reason":"tool_calls""#)));
    }

    #[test]
    fn a_cut_tool_call_stops_mid_json_with_the_output_limit() {
        let mut t = Turn::tool_call("shell", json!({"command": "printf hello"}));
        t.cut_input_at = Some(14);
        let events = render(Format::OpenAi, &t, "m", 0);
        let args: String = events
            .iter()
            .filter_map(|e| e.strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d.trim()).ok()))
            .filter_map(|v| {
                v.pointer("/choices/0/delta/tool_calls/0/function/arguments").and_then(Value::as_str).map(str::to_owned)
            })
            .collect();
        assert_eq!(args, r#"{"command":"pr"#);
        assert!(events.iter().any(|e| e.contains(r#""finish_reason":"length""#)));
        let anthropic = render(Format::Anthropic, &t, "m", 0);
        assert!(anthropic.iter().any(|e| e.contains(r#""stop_reason":"max_tokens""#)));
    }

    #[test]
    fn whole_responses_carry_text_calls_usage_and_stop() {
        let mut t = Turn::tool_call("shell", json!({"command": "ls"}));
        t.text = crate::provider::scenario::Pieces::Many(vec!["Look".into(), "ing.".into()]);
        let oa: Value = serde_json::from_str(&whole(Format::OpenAi, &t, "m", 3)).unwrap();
        assert_eq!(oa["object"], "chat.completion");
        assert_eq!(oa["choices"][0]["message"]["content"], "Looking.");
        assert_eq!(oa["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], r#"{"command":"ls"}"#);
        assert_eq!(oa["choices"][0]["finish_reason"], "tool_calls");
        let an: Value = serde_json::from_str(&whole(Format::Anthropic, &t, "m", 3)).unwrap();
        assert_eq!(an["type"], "message");
        assert_eq!(an["content"][1]["input"]["command"], "ls");
        assert_eq!(an["stop_reason"], "tool_use");
    }
}
