//! The OpenAI Chat Completions adapter, for OpenAI and every server that
//! speaks the same API (ollama, llama.cpp, vLLM, LM Studio, OpenRouter).

pub mod decode;
pub mod whole;

use serde_json::{Value, json};
use ua_protocol::conversation::{Block, Message, Role, ToolResultPart};

use crate::provider::{ProviderSettings, Request};

/// The request URL for a base URL such as `https://api.openai.com/v1`.
pub fn url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

pub fn headers(settings: &ProviderSettings) -> Vec<(String, String)> {
    settings.key.iter().map(|k| ("authorization".to_owned(), format!("Bearer {}", k.expose()))).collect()
}

/// The streaming request body.
pub fn body(settings: &ProviderSettings, req: &Request) -> Value {
    let max_tokens = req.max_tokens.unwrap_or(settings.max_tokens);
    let mut msgs = Vec::new();
    if !req.system.is_empty() {
        msgs.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        convert(m, &mut msgs);
    }
    let mut body = json!({
        "model": settings.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": msgs,
    });
    // OpenAI itself deprecated max_tokens (its reasoning models reject it);
    // the compatible servers mostly only know max_tokens.
    let limit_field = if settings.base_url.contains("api.openai.com") { "max_completion_tokens" } else { "max_tokens" };
    body[limit_field] = json!(max_tokens);
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                })
            })
            .collect();
    }
    body
}

/// One canonical message becomes one or more chat messages: tool results
/// are separate `tool` messages, and since those carry text only, images
/// follow in a user message.
fn convert(m: &Message, out: &mut Vec<Value>) {
    match m.role {
        Role::Assistant => {
            let text: String = m.text();
            let calls: Vec<Value> = m
                .tool_uses()
                .map(|t| {
                    json!({
                        "id": t.id,
                        "type": "function",
                        "function": {"name": t.name, "arguments": t.input.to_string()},
                    })
                })
                .collect();
            // Reasoning is not accepted back by Chat Completions: dropped.
            let mut msg =
                json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                msg["tool_calls"] = Value::Array(calls);
            }
            if !text.is_empty() || msg.get("tool_calls").is_some() {
                out.push(msg);
            }
        }
        Role::User => {
            let mut images = Vec::new();
            let mut text = String::new();
            for b in &m.content {
                match b {
                    Block::Text { text: t } => text.push_str(t),
                    Block::ToolResult(r) => {
                        out.push(json!({
                            "role": "tool",
                            "tool_call_id": r.tool_use_id,
                            "content": r.joined_text(),
                        }));
                        for p in &r.content {
                            if let ToolResultPart::Image { media_type, data } = p {
                                images.push(json!({
                                    "type": "image_url",
                                    "image_url": {"url": format!("data:{media_type};base64,{data}")},
                                }));
                            }
                        }
                    }
                    Block::Thinking(_) | Block::ToolUse(_) => {}
                }
            }
            if !images.is_empty() {
                out.push(json!({"role": "user", "content": images}));
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::conversation::{Thinking, ToolResult, ToolUse};
    use ua_protocol::tool::shell_tool;

    #[test]
    fn conversation_maps_to_chat_messages() {
        let s = ProviderSettings::for_test("openai", "gpt-4o", "https://api.openai.com/v1");
        let req = Request {
            system: "sys".into(),
            messages: vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Block::Thinking(Thinking {
                            provider: "anthropic".into(),
                            text: "x".into(),
                            signature: Some("s".into()),
                            redacted: None,
                        }),
                        Block::ToolUse(ToolUse {
                            id: "c1".into(),
                            name: "shell".into(),
                            input: json!({"command": "ls"}),
                        }),
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult(ToolResult {
                        tool_use_id: "c1".into(),
                        content: vec![
                            ToolResultPart::Text { text: "out".into() },
                            ToolResultPart::Image { media_type: "image/png".into(), data: "QQ==".into() },
                        ],
                        is_error: false,
                    })],
                },
            ],
            tools: vec![shell_tool()],
            max_tokens: Some(100),
        };
        let b = body(&s, &req);
        let m = b["messages"].as_array().cloned().unwrap_or_default();
        assert_eq!(m.len(), 5, "{m:?}");
        assert_eq!(m[0], json!({"role": "system", "content": "sys"}));
        assert_eq!(m[2]["content"], Value::Null);
        assert_eq!(m[2]["tool_calls"][0]["function"]["arguments"], r#"{"command":"ls"}"#);
        assert_eq!(m[3], json!({"role": "tool", "tool_call_id": "c1", "content": "out"}));
        assert_eq!(m[4]["content"][0]["image_url"]["url"], "data:image/png;base64,QQ==");
        assert_eq!(b["max_completion_tokens"], 100);
        assert_eq!(b["stream_options"]["include_usage"], true);
        assert_eq!(b["tools"][0]["function"]["name"], "shell");
    }

    #[test]
    fn compatible_servers_get_max_tokens_and_no_auth_without_key() {
        let s = ProviderSettings::for_test("ollama", "llama3.2", "http://127.0.0.1:11434/v1");
        let b = body(&s, &Request::default());
        assert_eq!(b["max_tokens"], s.max_tokens);
        assert!(headers(&s).is_empty());
        assert_eq!(url(&s.base_url), "http://127.0.0.1:11434/v1/chat/completions");
    }
}
