//! What a streaming model call yields, independent of the wire format.

use serde::{Deserialize, Serialize};

use crate::conversation::{Block, Message, Role, Thinking, ToolUse};

/// One decoded event of a streaming model response.
///
/// Deltas are for showing progress; the completed `Thinking` and `ToolCall`
/// events carry everything the conversation needs to be rebuilt, so a
/// consumer that only keeps those (and the text) loses nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A piece of visible text.
    TextDelta(String),
    /// A piece of reasoning, for display only.
    ThinkingDelta(String),
    /// A finished reasoning block, stamped and signed, to keep in history.
    Thinking(Thinking),
    /// A finished tool call whose JSON input has been parsed.
    ToolCall(ToolUse),
    /// A tool call the output limit cut off before its input was complete
    /// (`stop_reason: "max_tokens"` / `finish_reason: "length"` in the
    /// middle of its JSON). It is not a call: nothing can run it, and it
    /// never becomes a `tool_use` block, so no result is owed for it.
    TruncatedToolCall(TruncatedCall),
    /// Token usage for the whole response so far (totals, not increments).
    Usage(Usage),
    /// Why the model stopped. The last event of a complete response.
    Stop(StopReason),
    /// An error the provider reported inside the stream (Anthropic's
    /// `overloaded_error` mid-stream, OpenRouter's `{"error": …}` chunk).
    Error(ProviderError),
}

/// Token counts as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens billed at the normal rate.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Every token the request consumed, for budgets.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// Adds another response's usage to this running total.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// Why a response ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model wants tool results before it goes on.
    ToolUse,
    /// The output limit (`max_tokens`) cut the response short.
    MaxTokens,
    StopSequence,
    /// The provider refused or filtered the content.
    Refusal,
    /// A reason this version does not know, kept verbatim.
    Other(String),
}

/// What arrived of a tool call before the output limit cut it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncatedCall {
    pub id: String,
    pub name: String,
    /// The input JSON as far as it came (not valid JSON).
    pub partial_input: String,
}

/// An error reported by the provider inside an otherwise healthy stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    /// The provider's error type (`overloaded_error`, `rate_limit_error`…).
    pub kind: String,
    pub message: String,
}

/// Folds stream events into the assistant message they describe.
#[derive(Debug, Clone, Default)]
pub struct TurnBuilder {
    content: Vec<Block>,
    truncated: Vec<TruncatedCall>,
    usage: Option<Usage>,
    stop: Option<StopReason>,
}

impl TurnBuilder {
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(piece) => match self.content.last_mut() {
                Some(Block::Text { text }) => text.push_str(piece),
                _ => self.content.push(Block::text(piece.clone())),
            },
            // Deltas are only for display; the completed block follows.
            StreamEvent::ThinkingDelta(_) => {}
            StreamEvent::Thinking(t) => self.content.push(Block::Thinking(t.clone())),
            StreamEvent::ToolCall(t) => self.content.push(Block::ToolUse(t.clone())),
            // Kept aside, never in the message: a half-formed `tool_use`
            // would leave the conversation owing a result nothing can give.
            StreamEvent::TruncatedToolCall(t) => self.truncated.push(t.clone()),
            StreamEvent::Usage(u) => self.usage = Some(*u),
            StreamEvent::Stop(s) => self.stop = Some(s.clone()),
            StreamEvent::Error(_) => {}
        }
    }

    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }

    /// Tool calls the output limit cut off; they are not in the message.
    pub fn truncated_calls(&self) -> &[TruncatedCall] {
        &self.truncated
    }

    /// The assistant message built so far.
    pub fn message(&self) -> Message {
        Message { role: Role::Assistant, content: self.content.clone() }
    }

    pub fn finish(self) -> Message {
        Message { role: Role::Assistant, content: self.content }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builder_merges_text_and_keeps_block_order() {
        let thinking =
            Thinking { provider: "anthropic".into(), text: "plan".into(), signature: Some("s".into()), redacted: None };
        let call = ToolUse { id: "t1".into(), name: "shell".into(), input: json!({"command": "ls"}) };
        let mut b = TurnBuilder::default();
        for e in [
            StreamEvent::ThinkingDelta("pl".into()),
            StreamEvent::ThinkingDelta("an".into()),
            StreamEvent::Thinking(thinking.clone()),
            StreamEvent::TextDelta("I'll ".into()),
            StreamEvent::TextDelta("look.".into()),
            StreamEvent::ToolCall(call.clone()),
            StreamEvent::Usage(Usage { input_tokens: 3, output_tokens: 4, ..Usage::default() }),
            StreamEvent::Stop(StopReason::ToolUse),
        ] {
            b.push(&e);
        }
        assert_eq!(b.stop_reason(), Some(&StopReason::ToolUse));
        assert_eq!(b.usage().map(|u| u.total()), Some(7));
        let m = b.finish();
        assert_eq!(m.content, vec![Block::Thinking(thinking), Block::text("I'll look."), Block::ToolUse(call)]);
    }

    #[test]
    fn a_truncated_call_is_kept_aside_not_in_the_message() {
        let cut =
            TruncatedCall { id: "t2".into(), name: "shell".into(), partial_input: r#"{"command": "cat <<E"#.into() };
        let mut b = TurnBuilder::default();
        for e in [
            StreamEvent::TextDelta("Writing the file.".into()),
            StreamEvent::TruncatedToolCall(cut.clone()),
            StreamEvent::Stop(StopReason::MaxTokens),
        ] {
            b.push(&e);
        }
        assert_eq!(b.truncated_calls(), std::slice::from_ref(&cut));
        assert_eq!(b.finish().content, vec![Block::text("Writing the file.")]);
    }

    #[test]
    fn usage_adds_up() {
        let mut total = Usage::default();
        total.add(&Usage { input_tokens: 1, output_tokens: 2, cache_read_tokens: 3, cache_write_tokens: 4 });
        total.add(&Usage { input_tokens: 1, ..Usage::default() });
        assert_eq!(total.input_tokens, 2);
        assert_eq!(total.total(), 11);
    }

    #[test]
    fn events_serialise_for_journals() {
        let e = StreamEvent::Stop(StopReason::Other("weird".into()));
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<StreamEvent>(&s).unwrap(), e);
    }
}
