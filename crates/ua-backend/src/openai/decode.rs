//! OpenAI Chat Completions streaming chunks -> canonical events.
//!
//! Every SSE event is an unnamed `data:` line holding a
//! `chat.completion.chunk`; `data: [DONE]` ends the stream. Text arrives in
//! `choices[0].delta.content`, tool calls in `delta.tool_calls` as pieces
//! keyed by `index` (id and name in the first piece, `arguments` spread
//! over many), the reason in `finish_reason`, and, with
//! `stream_options.include_usage`, a last chunk with empty `choices` and a
//! `usage` object. Compatible servers add reasoning as
//! `delta.reasoning_content` (vLLM, DeepSeek, llama.cpp) or
//! `delta.reasoning` (ollama, OpenRouter); OpenRouter reports failures as a
//! chunk with an `error` object.
//!
//! A `length` finish in the middle of a tool call's arguments leaves JSON
//! that does not parse: that call becomes a
//! [`StreamEvent::TruncatedToolCall`], since the limit, not the server, is
//! at fault. Unparsable arguments with any other finish are malformed.

use std::collections::BTreeMap;

use serde_json::Value;
use ua_protocol::conversation::{Thinking, ToolUse};
use ua_protocol::event::{ProviderError, StopReason, StreamEvent, TruncatedCall, Usage};

use crate::sse::{DecodeError, Decoder};

/// The provider stamp on reasoning this adapter produces. Chat Completions
/// takes no reasoning back, so these blocks are never echoed.
pub const PROVIDER: &str = "openai";

#[derive(Debug, Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

/// State of one Chat Completions response being decoded.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    calls: BTreeMap<u64, PendingCall>,
    reasoning: String,
    finish: Option<StopReason>,
    /// Whether any tool call was emitted: some servers (older ollama,
    /// llama.cpp) say `stop` even when the answer is a tool call.
    called: bool,
    done: bool,
}

fn malformed(msg: impl Into<String>) -> DecodeError {
    DecodeError::Malformed(msg.into())
}

fn finish_reason(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

impl OpenAiDecoder {
    fn stop_reason(&self) -> StopReason {
        match self.finish.clone() {
            Some(StopReason::EndTurn) | None if self.called => StopReason::ToolUse,
            Some(reason) => reason,
            None => StopReason::EndTurn,
        }
    }

    /// Reasoning comes before the answer; it is closed into a block as soon
    /// as anything else arrives so the block order matches the model's.
    fn close_reasoning(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.reasoning.is_empty() {
            out.push(StreamEvent::Thinking(Thinking {
                provider: PROVIDER.to_owned(),
                text: std::mem::take(&mut self.reasoning),
                signature: None,
                redacted: None,
            }));
        }
    }

    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), DecodeError> {
        self.close_reasoning(out);
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(malformed(format!("tool call {index} has no function name")));
            }
            let id = if call.id.is_empty() {
                // Some local servers omit ids; the result still needs one.
                format!("call_{index}")
            } else {
                call.id
            };
            let input = if call.arguments.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                match serde_json::from_str(&call.arguments) {
                    Ok(input) => input,
                    Err(_) if self.finish == Some(StopReason::MaxTokens) => {
                        let cut = TruncatedCall { id, name: call.name, partial_input: call.arguments };
                        out.push(StreamEvent::TruncatedToolCall(cut));
                        continue;
                    }
                    Err(e) => {
                        return Err(malformed(format!("tool call '{}' has invalid JSON arguments: {e}", call.name)));
                    }
                }
            };
            self.called = true;
            out.push(StreamEvent::ToolCall(ToolUse { id, name: call.name, input }));
        }
        Ok(())
    }

    fn tool_deltas(&mut self, deltas: &[Value], out: &mut Vec<StreamEvent>) -> Result<(), DecodeError> {
        self.close_reasoning(out);
        for (pos, d) in deltas.iter().enumerate() {
            let id = d.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
            let index = match d.get("index").and_then(Value::as_u64) {
                Some(i) => i,
                // Without an index (some compatible servers), a new id
                // means a new call; otherwise it continues the one there.
                None => {
                    let pos = pos as u64;
                    match (id, self.calls.get(&pos)) {
                        (Some(id), Some(c)) if !c.id.is_empty() && c.id != id => {
                            self.calls.keys().next_back().map_or(0, |k| k + 1)
                        }
                        _ => pos,
                    }
                }
            };
            let call = self.calls.entry(index).or_default();
            if let Some(id) = id {
                call.id = id.to_owned();
            }
            let function = d.get("function");
            if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
                call.name.push_str(name);
            }
            match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(piece)) => call.arguments.push_str(piece),
                // A few servers send the arguments as an object in one go.
                Some(obj @ Value::Object(_)) => call.arguments.push_str(&obj.to_string()),
                Some(Value::Null) | None => {}
                Some(other) => {
                    return Err(malformed(format!("tool call arguments are not a string: {other}")));
                }
            }
        }
        Ok(())
    }
}

impl Decoder for OpenAiDecoder {
    fn feed(&mut self, _event: &str, data: &str) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done {
            return Ok(vec![]);
        }
        let mut out = Vec::new();
        if data.trim() == "[DONE]" {
            self.done = true;
            self.close_calls(&mut out)?;
            out.push(StreamEvent::Stop(self.stop_reason()));
            return Ok(out);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| malformed(format!("invalid JSON in chunk: {e}")))?;
        self.feed_value(&v)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done {
            return Ok(vec![]);
        }
        // Some compatible servers close without `[DONE]`; a finish_reason
        // already says the answer is whole, so accept that.
        if self.finish.is_none() {
            return Err(DecodeError::Truncated);
        }
        self.done = true;
        let mut out = Vec::new();
        self.close_calls(&mut out)?;
        out.push(StreamEvent::Stop(self.stop_reason()));
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

impl OpenAiDecoder {
    /// Feeds one chunk already parsed; [`Decoder::feed`] and the decoding of
    /// a whole (non-streamed) completion share it.
    pub(crate) fn feed_value(&mut self, v: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done {
            return Ok(vec![]);
        }
        let mut out = Vec::new();
        if let Some(err) = v.get("error") {
            self.done = true;
            let kind = err
                .get("type")
                .or_else(|| err.get("code"))
                .map(|k| match k {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "error".to_owned());
            let message = err.get("message").and_then(Value::as_str).unwrap_or("no message").to_owned();
            return Ok(vec![StreamEvent::Error(ProviderError { kind, message })]);
        }
        if let Some(choice) = v.get("choices").and_then(Value::as_array).and_then(|c| c.first()) {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            for key in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(key).and_then(Value::as_str).filter(|r| !r.is_empty()) {
                    self.reasoning.push_str(r);
                    out.push(StreamEvent::ThinkingDelta(r.to_owned()));
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                self.close_reasoning(&mut out);
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
            if let Some(deltas) = delta.get("tool_calls").and_then(Value::as_array) {
                self.tool_deltas(deltas, &mut out)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(finish_reason(reason));
                self.close_calls(&mut out)?;
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            let cached = n("/prompt_tokens_details/cached_tokens");
            out.push(StreamEvent::Usage(Usage {
                input_tokens: n("/prompt_tokens").saturating_sub(cached),
                output_tokens: n("/completion_tokens"),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            }));
        }
        Ok(out)
    }
}
