//! The Anthropic Messages API adapter.

pub mod decode;
pub mod whole;

use serde_json::{Value, json};
use ua_protocol::conversation::{Block, Message, Role, ToolResultPart};

use crate::provider::{ProviderSettings, Request};

/// The API version every request pins.
pub const API_VERSION: &str = "2023-06-01";

/// The request URL for a base URL such as `https://api.anthropic.com`.
pub fn url(base_url: &str) -> String {
    format!("{}/v1/messages", base_url.trim_end_matches('/'))
}

/// The request headers other than content-type.
pub fn headers(settings: &ProviderSettings) -> Vec<(String, String)> {
    let mut h = vec![("anthropic-version".to_owned(), API_VERSION.to_owned())];
    if let Some(key) = &settings.key {
        h.push(("x-api-key".to_owned(), key.expose().to_owned()));
    }
    h
}

/// The streaming request body.
///
/// Prompt caching: a breakpoint on the system prompt caches tools and
/// system together; one on the last block of the last message caches the
/// whole conversation so far, which is exactly the prefix the next turn
/// repeats. That is two of the four breakpoints the API allows.
pub fn body(settings: &ProviderSettings, req: &Request) -> Value {
    let mut max_tokens = req.max_tokens.unwrap_or(settings.max_tokens);
    let mut body = json!({
        "model": settings.model,
        "stream": true,
        "messages": messages(&req.messages),
    });
    if !req.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": req.system,
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
    }
    if let Some(budget) = settings.thinking_budget {
        // The API requires the thinking budget to fit inside max_tokens.
        if max_tokens <= budget {
            max_tokens = budget.saturating_add(max_tokens);
        }
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    body["max_tokens"] = json!(max_tokens);
    body
}

fn messages(messages: &[Message]) -> Value {
    let mut out: Vec<Value> = messages
        .iter()
        .filter_map(|m| {
            let content: Vec<Value> = m.content.iter().filter_map(block).collect();
            (!content.is_empty()).then(|| {
                json!({
                    "role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
                    "content": content,
                })
            })
        })
        .collect();
    if let Some(last) = out
        .last_mut()
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.iter_mut().rev().find(|b| b["type"] != "thinking" && b["type"] != "redacted_thinking"))
    {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    Value::Array(out)
}

fn block(b: &Block) -> Option<Value> {
    Some(match b {
        // The API rejects empty text blocks.
        Block::Text { text } if text.is_empty() => return None,
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Thinking(t) if t.provider != decode::PROVIDER => return None,
        Block::Thinking(t) => match (&t.redacted, &t.signature) {
            (Some(data), _) => json!({"type": "redacted_thinking", "data": data}),
            (None, Some(sig)) => json!({"type": "thinking", "thinking": t.text, "signature": sig}),
            // Unsigned thinking would be rejected; it cannot be echoed.
            (None, None) => return None,
        },
        Block::ToolUse(t) => json!({"type": "tool_use", "id": t.id, "name": t.name, "input": t.input}),
        Block::ToolResult(r) => json!({
            "type": "tool_result",
            "tool_use_id": r.tool_use_id,
            "is_error": r.is_error,
            "content": r.content.iter().map(|p| match p {
                ToolResultPart::Text { text } => json!({"type": "text", "text": text}),
                ToolResultPart::Image { media_type, data } => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": media_type, "data": data},
                }),
            }).collect::<Vec<_>>(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::conversation::{Thinking, ToolResult, ToolUse};
    use ua_protocol::tool::shell_tool;

    fn settings() -> ProviderSettings {
        ProviderSettings::for_test("anthropic", "claude-x", "http://h")
    }

    fn thinking(provider: &str) -> Block {
        Block::Thinking(Thinking {
            provider: provider.into(),
            text: "let me see".into(),
            signature: Some("SIG".into()),
            redacted: None,
        })
    }

    #[test]
    fn body_has_cache_breakpoints_tools_and_echoes_own_thinking_only() {
        let req = Request {
            system: "be brief".into(),
            messages: vec![
                Message::user_text("list files"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        thinking("anthropic"),
                        thinking("openai"),
                        Block::text(""),
                        Block::ToolUse(ToolUse {
                            id: "t1".into(),
                            name: "shell".into(),
                            input: json!({"command": "ls"}),
                        }),
                    ],
                },
                Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text("t1", "a b"))] },
            ],
            tools: vec![shell_tool()],
            max_tokens: None,
        };
        let b = body(&settings(), &req);
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(b["tools"][0]["name"], "shell");
        assert_eq!(b["stream"], true);
        let assistant = &b["messages"][1]["content"];
        assert_eq!(assistant.as_array().map(Vec::len), Some(2), "{assistant}");
        assert_eq!(assistant[0]["signature"], "SIG");
        assert_eq!(assistant[1]["type"], "tool_use");
        let last = &b["messages"][2]["content"][0];
        assert_eq!(last["type"], "tool_result");
        assert_eq!(last["cache_control"]["type"], "ephemeral");
        assert_eq!(last["content"][0]["text"], "a b");
    }

    #[test]
    fn thinking_budget_fits_inside_max_tokens() {
        let mut s = settings();
        s.thinking_budget = Some(10_000);
        s.max_tokens = 4096;
        let b = body(&s, &Request::default());
        assert_eq!(b["thinking"]["budget_tokens"], 10_000);
        assert_eq!(b["max_tokens"], 14_096);
        assert!(b.get("system").is_none());
    }

    #[test]
    fn images_in_tool_results_use_base64_sources() {
        let req = Request {
            messages: vec![Message {
                role: Role::User,
                content: vec![Block::ToolResult(ToolResult {
                    tool_use_id: "t".into(),
                    content: vec![ToolResultPart::Image { media_type: "image/png".into(), data: "QUJD".into() }],
                    is_error: true,
                })],
            }],
            ..Request::default()
        };
        let b = body(&settings(), &req);
        let r = &b["messages"][0]["content"][0];
        assert_eq!(r["is_error"], true);
        assert_eq!(r["content"][0]["source"]["data"], "QUJD");
    }
}
