//! Summaries: when a conversation outgrows the model's window, the turns
//! before the current one are condensed by a separate model call
//! (journaled with `purpose: summary`, then a `summary` line) and replaced
//! by one message, rather than dropped without a trace.

use ua_backend::provider::{Provider, Request};
use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::journal::{CallPurpose, JournalEntry};

use super::model::Summary;

/// What the summary call asks of the model.
pub(super) const SUMMARY_SYSTEM: &str = "You condense the earlier part of a conversation between a user and unixagent, \
an agent that works in the user's shell, so that the conversation can go on within the model's context window. \
Write a summary for the agent itself: what the user asked for, what was done (the commands that mattered and what \
they showed), what was decided, what is still open, and facts worth keeping (paths, names, versions, errors). \
Be concrete and brief; at most 400 words; no preamble.";

/// The summary call for the turns before `upto`: its request, and its
/// journal entry. `budget` is the prompt's room in tokens.
pub(in crate::session) fn request(
    messages: &[Message],
    budget: u64,
    (turn, call): (u32, u32),
    provider: &dyn Provider,
) -> (Request, JournalEntry) {
    // About four bytes a token; three leaves room for the system prompt.
    let max = usize::try_from(budget.saturating_mul(3)).unwrap_or(usize::MAX).max(4096);
    let message = Message::user_text(transcript(messages, max));
    let entry = JournalEntry::ModelRequest {
        turn,
        call,
        backend: provider.name().to_string(),
        model: provider.model().to_string(),
        system: SUMMARY_SYSTEM.to_string(),
        messages_appended: vec![message.clone()],
        omitted: vec![],
        tools: None,
        purpose: CallPurpose::Summary,
    };
    let request =
        Request { system: SUMMARY_SYSTEM.to_string(), messages: vec![message], tools: vec![], max_tokens: Some(1024) };
    (request, entry)
}

/// The journal's record of a summary that came back: the call's answer,
/// then the `summary` line a resume folds from.
pub(in crate::session) fn journal_entries(turn: u32, s: &Summary) -> [JournalEntry; 2] {
    [
        JournalEntry::ModelResponse {
            turn,
            call: s.call,
            message: Message { role: Role::Assistant, content: vec![Block::text(s.text.clone())] },
            usage: s.usage,
            stop: None,
            purpose: CallPurpose::Summary,
        },
        JournalEntry::Summary {
            turn,
            covers_through_turn: turn.saturating_sub(1),
            text: s.text.clone(),
            model: s.model.clone(),
            usage: s.usage,
        },
    ]
}

/// The earlier turns as plain text for the summary call, at most `max`
/// bytes: the newest part is kept when it must be cut, and each command
/// output is cut to a few lines.
fn transcript(messages: &[Message], max: usize) -> String {
    use ua_protocol::conversation::ToolResultPart;
    let mut out = String::new();
    for m in messages {
        for b in &m.content {
            match b {
                Block::Text { text } => {
                    let who = if m.role == Role::User { "user" } else { "agent" };
                    out.push_str(&format!("[{who}] {}\n", middle_cut(text.trim(), 1500)));
                }
                Block::ToolUse(t) => {
                    let command = t.input.get("command").and_then(|c| c.as_str()).unwrap_or_default();
                    out.push_str(&format!("[agent ran] {command}\n"));
                }
                Block::ToolResult(r) => {
                    let text: String = r
                        .content
                        .iter()
                        .filter_map(|p| match p {
                            ToolResultPart::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    let shown = crate::sessions::render::elide_lines(&text, 12);
                    out.push_str(&format!("[output]\n{shown}\n"));
                }
                Block::Thinking(_) => {}
            }
        }
    }
    if out.len() > max {
        let mut cut = out.len() - max;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        out = format!("[… the oldest part is left out …]\n{}", &out[cut..]);
    }
    format!("The conversation so far:\n\n{out}\nSummarise it as instructed.")
}

/// `text` with its middle left out when longer than `max` bytes.
fn middle_cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut head = max * 2 / 3;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (max - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} […] {}", &text[..head], &text[tail..]).into()
}
