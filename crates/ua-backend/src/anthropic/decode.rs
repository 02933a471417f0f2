//! Anthropic Messages streaming events -> canonical events.
//!
//! The stream is `message_start`, then for each content block
//! `content_block_start`, deltas and `content_block_stop`, then
//! `message_delta` (stop reason, cumulative usage) and `message_stop`.
//! `ping` may come anywhere; `error` may replace the rest of the stream.
//! Unknown event and delta types are skipped: Anthropic adds them over
//! time and says clients should ignore what they do not know.
//!
//! When `max_tokens` cuts a tool call off, its block still stops (with
//! invalid JSON) before `message_delta` says why. So a block whose JSON does
//! not parse is held until the stop reason is known: `max_tokens` makes it
//! a [`StreamEvent::TruncatedToolCall`], anything else a malformed stream.

use std::collections::BTreeMap;

use serde_json::Value;
use ua_protocol::conversation::{Thinking, ToolUse};
use ua_protocol::event::{ProviderError, StopReason, StreamEvent, TruncatedCall, Usage};

use crate::sse::{DecodeError, Decoder};

/// The provider stamp on thinking blocks this adapter produces and echoes.
pub const PROVIDER: &str = "anthropic";

#[derive(Debug)]
enum Open {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted {
        data: String,
    },
    /// A block type we do not use (server tools, …): its deltas are skipped.
    Other,
}

/// State of one Anthropic response being decoded.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    open: BTreeMap<u64, Open>,
    /// Tool calls whose JSON did not parse, with the parser's complaint,
    /// until the stop reason says whether the output limit cut them.
    unparsed: Vec<(TruncatedCall, String)>,
    usage: Usage,
    stop: Option<StopReason>,
    done: bool,
}

fn malformed(msg: impl Into<String>) -> DecodeError {
    DecodeError::Malformed(msg.into())
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

fn u64_at(v: &Value, ptr: &str) -> Option<u64> {
    v.pointer(ptr).and_then(Value::as_u64)
}

pub(crate) fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

impl AnthropicDecoder {
    fn read_usage(&mut self, u: &Value) {
        // message_delta repeats the counts as running totals, so the last
        // value seen for each field is the answer.
        if let Some(n) = u64_at(u, "/input_tokens") {
            self.usage.input_tokens = n;
        }
        if let Some(n) = u64_at(u, "/output_tokens") {
            self.usage.output_tokens = n;
        }
        if let Some(n) = u64_at(u, "/cache_read_input_tokens") {
            self.usage.cache_read_tokens = n;
        }
        if let Some(n) = u64_at(u, "/cache_creation_input_tokens") {
            self.usage.cache_write_tokens = n;
        }
    }

    fn index(v: &Value) -> Result<u64, DecodeError> {
        u64_at(v, "/index").ok_or_else(|| malformed("content block event without an index"))
    }

    fn block_start(&mut self, v: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
        let index = Self::index(v)?;
        let block = v.get("content_block").ok_or_else(|| malformed("content_block_start without content_block"))?;
        let mut out = Vec::new();
        let open = match str_at(block, "/type") {
            Some("text") => {
                if let Some(t) = str_at(block, "/text").filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta(t.to_owned()));
                }
                Open::Text
            }
            Some("tool_use") => Open::Tool {
                id: str_at(block, "/id").ok_or_else(|| malformed("tool_use block without an id"))?.to_owned(),
                name: str_at(block, "/name").ok_or_else(|| malformed("tool_use block without a name"))?.to_owned(),
                json: String::new(),
                initial: block.get("input").cloned().unwrap_or(Value::Null),
            },
            Some("thinking") => {
                let text = str_at(block, "/thinking").unwrap_or("").to_owned();
                if !text.is_empty() {
                    out.push(StreamEvent::ThinkingDelta(text.clone()));
                }
                Open::Thinking {
                    text,
                    signature: str_at(block, "/signature").filter(|s| !s.is_empty()).map(str::to_owned),
                }
            }
            Some("redacted_thinking") => Open::Redacted { data: str_at(block, "/data").unwrap_or("").to_owned() },
            _ => Open::Other,
        };
        if self.open.insert(index, open).is_some() {
            return Err(malformed(format!("content block {index} started twice")));
        }
        Ok(out)
    }

    fn block_delta(&mut self, v: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
        let index = Self::index(v)?;
        let delta = v.get("delta").ok_or_else(|| malformed("content_block_delta without delta"))?;
        let block = self
            .open
            .get_mut(&index)
            .ok_or_else(|| malformed(format!("delta for content block {index}, which is not open")))?;
        let field = |name: &str| str_at(delta, name).ok_or_else(|| malformed(format!("delta without {}", &name[1..])));
        let mut out = Vec::new();
        match (str_at(delta, "/type"), block) {
            (Some("text_delta"), Open::Text) => {
                let t = field("/text")?;
                if !t.is_empty() {
                    out.push(StreamEvent::TextDelta(t.to_owned()));
                }
            }
            (Some("input_json_delta"), Open::Tool { json, .. }) => {
                json.push_str(field("/partial_json")?);
            }
            (Some("thinking_delta"), Open::Thinking { text, .. }) => {
                let t = field("/thinking")?;
                text.push_str(t);
                out.push(StreamEvent::ThinkingDelta(t.to_owned()));
            }
            (Some("signature_delta"), Open::Thinking { signature, .. }) => {
                signature.get_or_insert_with(String::new).push_str(field("/signature")?);
            }
            (Some(t @ ("text_delta" | "input_json_delta" | "thinking_delta" | "signature_delta")), b) => {
                return Err(malformed(format!("{t} for a block of another kind ({b:?})")));
            }
            // citations_delta and future delta types: nothing we keep.
            _ => {}
        }
        Ok(out)
    }

    fn block_stop(&mut self, v: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
        let index = Self::index(v)?;
        let block = self
            .open
            .remove(&index)
            .ok_or_else(|| malformed(format!("stop for content block {index}, which is not open")))?;
        Ok(match block {
            Open::Text | Open::Other => vec![],
            Open::Tool { id, name, json, initial } => {
                let input = if json.trim().is_empty() {
                    match initial {
                        Value::Null => Value::Object(Default::default()),
                        v => v,
                    }
                } else {
                    match serde_json::from_str(&json) {
                        Ok(input) => input,
                        Err(e) => {
                            let complaint = format!("tool call '{name}' has invalid JSON input: {e}");
                            self.unparsed.push((TruncatedCall { id, name, partial_input: json }, complaint));
                            return Ok(vec![]);
                        }
                    }
                };
                vec![StreamEvent::ToolCall(ToolUse { id, name, input })]
            }
            Open::Thinking { text, signature } => {
                vec![StreamEvent::Thinking(Thinking { provider: PROVIDER.to_owned(), text, signature, redacted: None })]
            }
            Open::Redacted { data } => vec![StreamEvent::Thinking(Thinking {
                provider: PROVIDER.to_owned(),
                text: String::new(),
                signature: None,
                redacted: Some(data),
            })],
        })
    }
}

impl AnthropicDecoder {
    /// Feeds one event already parsed; [`Decoder::feed`] and the decoding
    /// of a whole (non-streamed) message share it.
    pub(crate) fn feed_value(&mut self, event: &str, v: &Value) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done || event == "ping" {
            return Ok(vec![]);
        }
        // The JSON `type` is authoritative; the SSE event name repeats it.
        // llama.cpp's Messages endpoint sends `event: error` with its own
        // error object (`{"code", "message", "type"}`) as the data.
        let kind = if event == "error" { "error" } else { str_at(v, "/type").unwrap_or(event) };
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
                Ok(vec![])
            }
            "content_block_start" => self.block_start(v),
            "content_block_delta" => self.block_delta(v),
            "content_block_stop" => self.block_stop(v),
            "message_delta" => {
                if let Some(s) = str_at(v, "/delta/stop_reason") {
                    self.stop = Some(stop_reason(s));
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                }
                let mut out = self.release_unparsed(false)?;
                out.push(StreamEvent::Usage(self.usage));
                Ok(out)
            }
            "message_stop" => {
                self.done = true;
                let mut out = self.release_unparsed(true)?;
                if self.stop == Some(StopReason::MaxTokens) {
                    // The limit may also end the message with blocks still
                    // open: a tool call there is as cut off as one stopped.
                    for (_, block) in std::mem::take(&mut self.open) {
                        if let Open::Tool { id, name, json, .. } = block {
                            out.push(StreamEvent::TruncatedToolCall(TruncatedCall { id, name, partial_input: json }));
                        }
                    }
                }
                if let Some(index) = self.open.keys().next() {
                    return Err(malformed(format!("message ended with content block {index} still open")));
                }
                out.push(StreamEvent::Stop(self.stop.clone().unwrap_or(StopReason::EndTurn)));
                Ok(out)
            }
            "error" => {
                self.done = true;
                let field = |nested: &str, flat: &str| str_at(v, nested).or_else(|| str_at(v, flat));
                Ok(vec![StreamEvent::Error(ProviderError {
                    kind: field("/error/type", "/type").filter(|k| *k != "error").unwrap_or("error").to_owned(),
                    message: field("/error/message", "/message").unwrap_or("no message").to_owned(),
                })])
            }
            _ => Ok(vec![]),
        }
    }

    /// Once the stop reason is known: tool calls with unparsable JSON are
    /// truncated calls if the output limit stopped the message, else the
    /// stream is malformed. `at_end`: the message is over, so an unknown
    /// stop reason will stay unknown.
    fn release_unparsed(&mut self, at_end: bool) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.unparsed.is_empty() || (self.stop.is_none() && !at_end) {
            return Ok(vec![]);
        }
        let held = std::mem::take(&mut self.unparsed);
        if self.stop != Some(StopReason::MaxTokens) {
            let complaint = held.into_iter().next().map(|(_, c)| c).unwrap_or_default();
            return Err(malformed(complaint));
        }
        Ok(held.into_iter().map(|(call, _)| StreamEvent::TruncatedToolCall(call)).collect())
    }
}

impl Decoder for AnthropicDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done || event == "ping" {
            return Ok(vec![]);
        }
        let v: Value =
            serde_json::from_str(data).map_err(|e| malformed(format!("invalid JSON in '{event}' event: {e}")))?;
        self.feed_value(event, &v)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, DecodeError> {
        if self.done { Ok(vec![]) } else { Err(DecodeError::Truncated) }
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
