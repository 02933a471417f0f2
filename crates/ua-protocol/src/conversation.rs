//! The canonical conversation.
//!
//! Anthropic's content-block shape is the most expressive of the providers
//! we speak (tool use and tool results are first-class, blocks are typed), so
//! it is the canonical form; every adapter translates out of and into it.
//! Thinking is the one thing that cannot be canonicalised honestly: it is
//! kept as an opaque block stamped with the provider family that produced
//! it, echoed verbatim to that family and dropped for any other
//! (reference 004, "Internal canonical message shape").

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One message: a role and its ordered content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: vec![Block::text(text)] }
    }

    /// An assistant message holding one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self { role: Role::Assistant, content: vec![Block::text(text)] }
    }

    /// The concatenated text blocks, ignoring every other kind.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls in this message, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse(t) => Some(t),
            _ => None,
        })
    }
}

/// A typed content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text { text: String },
    Thinking(Thinking),
    ToolUse(ToolUse),
    ToolResult(ToolResult),
}

impl Block {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// Model reasoning, opaque outside the provider family that produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    /// The provider family that produced the block (`"anthropic"`,
    /// `"openai"`). Adapters echo only blocks carrying their own stamp.
    pub provider: String,
    /// The visible reasoning text (empty for redacted thinking).
    #[serde(default)]
    pub text: String,
    /// Anthropic's signature over the block; it must come back verbatim or
    /// the API rejects the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Anthropic's encrypted `redacted_thinking` payload, when the block was
    /// redacted; `text` is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
}

/// A call of a tool by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The provider's id for the call; the result must quote it.
    pub id: String,
    pub name: String,
    /// The parsed JSON input (an object for every well-formed call).
    pub input: Value,
}

/// The outcome of a tool call, sent back in a user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub content: Vec<ToolResultPart>,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    /// A result holding a single text part.
    pub fn text(tool_use_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: vec![ToolResultPart::Text { text: text.into() }],
            is_error: false,
        }
    }

    /// The concatenated text parts, for providers that only take text.
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|p| match p {
                ToolResultPart::Text { text } => Some(text.as_str()),
                ToolResultPart::Image { .. } => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// One part of a tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultPart {
    Text {
        text: String,
    },
    /// An image, base64-encoded, with its media type (`image/png`, ...).
    Image {
        media_type: String,
        data: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialise_with_a_type_tag() {
        let msg = Message {
            role: Role::Assistant,
            content: vec![
                Block::text("hi"),
                Block::ToolUse(ToolUse { id: "t1".into(), name: "shell".into(), input: json!({"command": "ls"}) }),
            ],
        };
        let v = serde_json::to_value(&msg).unwrap();
        assert_eq!(
            v,
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "ls"}}
            ]})
        );
        let back: Message = serde_json::from_value(v).unwrap();
        assert_eq!(back, msg);
    }

    #[test]
    fn thinking_round_trips_through_json() {
        let block = Block::Thinking(Thinking {
            provider: "anthropic".into(),
            text: "hmm".into(),
            signature: Some("sig".into()),
            redacted: None,
        });
        let s = serde_json::to_string(&block).unwrap();
        let back: Block = serde_json::from_str(&s).unwrap();
        assert_eq!(back, block);
    }

    #[test]
    fn tool_result_joins_text_parts_and_skips_images() {
        let r = ToolResult {
            tool_use_id: "t".into(),
            content: vec![
                ToolResultPart::Text { text: "a".into() },
                ToolResultPart::Image { media_type: "image/png".into(), data: "AAAA".into() },
                ToolResultPart::Text { text: "b".into() },
            ],
            is_error: false,
        };
        assert_eq!(r.joined_text(), "a\nb");
    }

    #[test]
    fn message_text_and_tool_uses() {
        let msg = Message {
            role: Role::Assistant,
            content: vec![
                Block::text("a"),
                Block::ToolUse(ToolUse { id: "1".into(), name: "shell".into(), input: json!({}) }),
                Block::text("b"),
            ],
        };
        assert_eq!(msg.text(), "ab");
        assert_eq!(msg.tool_uses().count(), 1);
    }
}
