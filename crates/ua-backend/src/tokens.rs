//! Token accounting: a fast estimate for trimming, the context window of
//! each model, and the session budget (design §8.2, §14.11).
//!
//! The provider's reported usage is the truth for cost; the estimate only
//! has to be cheap and err on the large side so trimming leaves headroom.

use ua_protocol::conversation::{Block, Message, ToolResultPart};
use ua_protocol::event::Usage;
use ua_protocol::tool::ToolDefinition;

/// Roughly four characters per token for English and code; we divide by
/// 3.5 instead to overestimate a little rather than overflow the window.
pub fn estimate_text(text: &str) -> u64 {
    let chars = text.chars().count() as u64;
    (chars * 2).div_ceil(7)
}

/// A flat cost per image: providers bill images by pixel area, ~1,600
/// tokens for a screenshot resized to the width we send.
pub const IMAGE_TOKENS: u64 = 1600;

/// Per message and per block framing the APIs add around content.
const MESSAGE_OVERHEAD: u64 = 4;

pub fn estimate_message(message: &Message) -> u64 {
    MESSAGE_OVERHEAD
        + message
            .content
            .iter()
            .map(|block| match block {
                Block::Text { text } => estimate_text(text),
                Block::Thinking(t) => {
                    estimate_text(&t.text)
                        + t.signature.as_deref().map_or(0, estimate_text)
                        + t.redacted.as_deref().map_or(0, estimate_text)
                }
                Block::ToolUse(t) => estimate_text(&t.name) + estimate_text(&t.input.to_string()),
                Block::ToolResult(r) => r
                    .content
                    .iter()
                    .map(|p| match p {
                        ToolResultPart::Text { text } => estimate_text(text),
                        ToolResultPart::Image { .. } => IMAGE_TOKENS,
                    })
                    .sum(),
            })
            .sum::<u64>()
}

/// The estimated prompt size of a whole request.
pub fn estimate_prompt(system: &str, messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    estimate_text(system)
        + messages.iter().map(estimate_message).sum::<u64>()
        + tools.iter().map(|t| estimate_text(&t.description) + estimate_text(&t.input_schema.to_string())).sum::<u64>()
}

/// Context windows by model-name prefix, most specific first. Unknown
/// models get [`DEFAULT_CONTEXT_WINDOW`]; `context_window` in config wins
/// over both.
const CONTEXT_WINDOWS: &[(&str, u64)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("mistral", 32_768),
];

/// Conservative: every server we talk to offers at least this much.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 8_192;

pub fn context_window(model: &str, configured: Option<u64>) -> u64 {
    if let Some(n) = configured {
        return n;
    }
    // OpenRouter-style names carry a vendor prefix ("anthropic/claude-…").
    let bare = model.rsplit('/').next().unwrap_or(model);
    CONTEXT_WINDOWS.iter().find(|(prefix, _)| bare.starts_with(prefix)).map_or(DEFAULT_CONTEXT_WINDOW, |(_, n)| *n)
}

/// Where a session stands against `max_tokens_per_session`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetStatus {
    Ok,
    /// Past [`SessionBudget::WARN_AT_PERCENT`]: tell the user once.
    Warn {
        used: u64,
        limit: u64,
    },
    /// At or past the limit: start no new model call.
    Exhausted {
        used: u64,
        limit: u64,
    },
}

/// Running usage totals for a session and the budget they are held to.
#[derive(Debug, Clone, Default)]
pub struct SessionBudget {
    limit: Option<u64>,
    total: Usage,
    warned: bool,
}

impl SessionBudget {
    pub const WARN_AT_PERCENT: u64 = 80;

    pub fn new(limit: Option<u64>) -> Self {
        Self { limit, ..Self::default() }
    }

    /// Adds one response's usage; returns `Warn` the first time the warning
    /// line is crossed and `Exhausted` every time once over the limit.
    pub fn record(&mut self, usage: &Usage) -> BudgetStatus {
        self.total.add(usage);
        let status = self.status();
        if let BudgetStatus::Warn { .. } = status {
            if self.warned {
                return BudgetStatus::Ok;
            }
            self.warned = true;
        }
        status
    }

    /// The state of the budget without recording anything: check this
    /// before starting a model call.
    pub fn status(&self) -> BudgetStatus {
        let Some(limit) = self.limit else {
            return BudgetStatus::Ok;
        };
        let used = self.total.total();
        if used >= limit {
            BudgetStatus::Exhausted { used, limit }
        } else if used * 100 >= limit * Self::WARN_AT_PERCENT {
            BudgetStatus::Warn { used, limit }
        } else {
            BudgetStatus::Ok
        }
    }

    pub fn totals(&self) -> Usage {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ua_protocol::conversation::{Role, ToolResult, ToolUse};

    #[test]
    fn estimate_errs_large() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcdefg"), 2);
        let text = "the quick brown fox ".repeat(100);
        assert!(estimate_text(&text) >= text.len() as u64 / 4);
    }

    #[test]
    fn messages_count_every_block_kind() {
        let m = Message {
            role: Role::User,
            content: vec![
                Block::ToolUse(ToolUse { id: "1".into(), name: "shell".into(), input: json!({"command": "ls"}) }),
                Block::ToolResult(ToolResult {
                    tool_use_id: "1".into(),
                    content: vec![ToolResultPart::Image { media_type: "image/png".into(), data: "x".into() }],
                    is_error: false,
                }),
            ],
        };
        assert!(estimate_message(&m) > IMAGE_TOKENS);
        assert!(estimate_prompt("sys", &[m], &[]) > IMAGE_TOKENS);
    }

    #[test]
    fn context_window_table_and_override() {
        assert_eq!(context_window("claude-sonnet-4-5", None), 200_000);
        assert_eq!(context_window("anthropic/claude-3.5-haiku", None), 200_000);
        assert_eq!(context_window("gpt-4o-mini", None), 128_000);
        assert_eq!(context_window("gpt-4", None), 8_192);
        assert_eq!(context_window("llama3.2:3b", None), 128_000);
        assert_eq!(context_window("something-new", None), DEFAULT_CONTEXT_WINDOW);
        assert_eq!(context_window("claude-x", Some(1000)), 1000);
    }

    #[test]
    fn budget_warns_once_then_stops() {
        let mut b = SessionBudget::new(Some(100));
        let u = |n| Usage { input_tokens: n, ..Usage::default() };
        assert_eq!(b.record(&u(50)), BudgetStatus::Ok);
        assert_eq!(b.record(&u(30)), BudgetStatus::Warn { used: 80, limit: 100 });
        assert_eq!(b.record(&u(5)), BudgetStatus::Ok);
        assert_eq!(b.status(), BudgetStatus::Warn { used: 85, limit: 100 });
        assert_eq!(b.record(&u(15)), BudgetStatus::Exhausted { used: 100, limit: 100 });
        assert_eq!(b.totals().input_tokens, 100);
        let mut unlimited = SessionBudget::new(None);
        assert_eq!(unlimited.record(&u(1_000_000)), BudgetStatus::Ok);
    }
}
