//! Summaries: when a conversation outgrows the model's window, the turns
//! before the current one are condensed by a separate model call
//! (journaled with `purpose: summary`, then a `summary` line) and replaced
//! by one message, rather than dropped without a trace.

use super::model::{self, SummaryStep};
use super::*;

/// What the summary call asks of the model.
const SUMMARY_SYSTEM: &str = "You condense the earlier part of a conversation between a user and unixagent, \
an agent that works in the user's shell, so that the conversation can go on within the model's context window. \
Write a summary for the agent itself: what the user asked for, what was done (the commands that mattered and what \
they showed), what was decided, what is still open, and facts worth keeping (paths, names, versions, errors). \
Be concrete and brief; at most 400 words; no preamble.";

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

impl Session {
    /// Asks the model to condense the turns before this one.
    pub(super) fn start_summary(&mut self, provider: &Arc<Fallback>, budget: u64) {
        let Some(turn) = self.agent.turn.as_ref() else { return };
        let upto = self.agent.turn_start.min(turn.messages().len());
        // About four bytes a token; three leaves room for the system prompt.
        let max = usize::try_from(budget.saturating_mul(3)).unwrap_or(usize::MAX).max(4096);
        let message = Message::user_text(transcript(&turn.messages()[..upto], max));
        let call = self.agent.model.next_call();
        self.journal(JournalEntry::ModelRequest {
            turn: self.agent.turn_no,
            call,
            backend: provider.name().to_string(),
            model: provider.model().to_string(),
            system: SUMMARY_SYSTEM.to_string(),
            messages_appended: vec![message.clone()],
            omitted: vec![],
            tools: None,
            purpose: ua_protocol::journal::CallPurpose::Summary,
        });
        self.notice("the conversation has outgrown the model's window: summarising the earlier turns");
        self.agent.model.summarise(provider, model::summary_request(SUMMARY_SYSTEM, message), upto);
    }

    /// The summary call's stream: gathered, then put in place of the
    /// turns it covers, and the call that did not fit is made again.
    pub(super) fn on_summary_event(&mut self, event: Option<Result<StreamEvent, BackendError>>) {
        let s = match self.agent.model.summary_event(event) {
            SummaryStep::More => return,
            SummaryStep::Usage(u) => {
                // The turn's totals (its footer, journal, cost) include it.
                if let Some(turn) = self.agent.turn.as_mut() {
                    turn.add_usage(&u);
                }
                return;
            }
            SummaryStep::Failed(e) => {
                self.journal(JournalEntry::Error {
                    turn: Some(self.agent.turn_no),
                    message: format!("summarising failed: {e}"),
                });
                self.notice(format!("summarising failed ({e}); the oldest turns are left out of this call instead"));
                self.call();
                return;
            }
            SummaryStep::Done(s) => s,
        };
        if s.text.is_empty() {
            self.notice("the summary came back empty; the oldest turns are left out of this call instead");
            self.call();
            return;
        }
        self.journal(JournalEntry::ModelResponse {
            turn: self.agent.turn_no,
            call: s.call,
            message: Message { role: Role::Assistant, content: vec![Block::text(s.text.clone())] },
            usage: s.usage,
            stop: None,
            purpose: ua_protocol::journal::CallPurpose::Summary,
        });
        self.journal(JournalEntry::Summary {
            turn: self.agent.turn_no,
            covers_through_turn: self.agent.turn_no.saturating_sub(1),
            text: s.text.clone(),
            model: s.model,
            usage: s.usage,
        });
        if let Some(turn) = self.agent.turn.as_mut() {
            turn.summarise(s.upto, ua_store::fold::summary_message(&s.text));
        }
        self.agent.records.summarised(s.upto);
        self.agent.turn_start = 1;
        self.call();
    }
}
