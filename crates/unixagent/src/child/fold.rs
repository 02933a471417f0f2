//! A child agent in one line, as its parent shows it when it ends:
//!
//! ```text
//! ▸ child 3f2a "check the logs" · done · 3.1 s · 1.8k tokens · 2 commands
//! ```
//!
//! followed by its answer. [`Fold`] is fed either the child's NDJSON
//! events (`--json`, or a child's own quiet output) or its journal lines,
//! and gives the same line from both. Pure: the duration comes from the
//! journal's timestamps or from whoever watched the child run.

use std::time::Duration;

use ua_protocol::agent::{AgentEvent, CommandStatus, RunStatus, TokenUsage};
use ua_protocol::journal::{JournalEntry, JournalLine, TurnEndReason};

/// How a child ended, as the fold line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Running,
    Done,
    Failed,
    Cancelled,
    /// Refused before it started (depth, fan-out, sandbox).
    Refused,
    /// Its process ended without ending its session (`kill -9`).
    Crashed,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Done => "done",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Refused => "refused",
            Outcome::Crashed => "crashed",
        }
    }
}

/// What is known of one child so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    pub session: Option<String>,
    pub instruction: String,
    pub outcome: Outcome,
    pub tokens: u64,
    /// The result's usage, input and output apart.
    pub usage: TokenUsage,
    /// What its own children used, as they ended.
    pub descendants: TokenUsage,
    pub commands: u32,
    /// Commands refused, by the policy or because nobody could be asked:
    /// the command and the first line of why.
    pub denied: Vec<(String, String)>,
    /// The model's text since the last command: its answer.
    answer: String,
    /// Commands proposed, by id, until their result comes.
    proposed: Vec<(String, String)>,
    /// The command running now, for the progress line.
    current: Option<String>,
    first_ms: Option<u64>,
    last_ms: Option<u64>,
    /// The refusal's or error's line, when it ended that way.
    pub error: Option<String>,
}

impl Fold {
    pub fn new(instruction: &str) -> Self {
        Self {
            session: None,
            instruction: instruction.to_string(),
            outcome: Outcome::Running,
            tokens: 0,
            usage: TokenUsage::default(),
            descendants: TokenUsage::default(),
            commands: 0,
            denied: Vec::new(),
            answer: String::new(),
            proposed: Vec::new(),
            current: None,
            first_ms: None,
            last_ms: None,
            error: None,
        }
    }

    /// One NDJSON event of the child's.
    pub fn event(&mut self, e: &AgentEvent) {
        match e {
            AgentEvent::Session { id, .. } => self.session = Some(id.clone()),
            AgentEvent::Text { text } => self.answer.push_str(text),
            AgentEvent::Command { id, command, .. } => {
                self.proposed.push((id.clone(), command.clone()));
                self.current = Some(command.clone());
            }
            AgentEvent::CommandResult { id, status, output, .. } => {
                // Text before a command was a step, not the answer.
                self.answer.clear();
                self.current = None;
                let command = self.proposed.iter().find(|(i, _)| i == id).map(|(_, c)| c.clone());
                if *status == CommandStatus::Denied
                    && let Some(c) = command
                {
                    self.denied.push((c, short(output.lines().next().unwrap_or(""), 200)));
                }
            }
            AgentEvent::Error { message, kind } => {
                if matches!(kind.as_str(), "sandbox" | "depth" | "fan_out") {
                    self.outcome = Outcome::Refused;
                }
                self.error = Some(message.clone());
            }
            AgentEvent::Result { status, usage, commands, .. } => {
                self.tokens = usage.input + usage.output;
                self.usage = *usage;
                self.commands = *commands;
                if self.outcome != Outcome::Refused {
                    self.outcome = match status {
                        RunStatus::Ok => Outcome::Done,
                        RunStatus::Error => Outcome::Failed,
                        RunStatus::Cancelled => Outcome::Cancelled,
                    };
                }
            }
            AgentEvent::Thinking { .. }
            | AgentEvent::ApprovalRequest { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::Task { .. }
            | AgentEvent::Output { .. }
            | AgentEvent::TurnEnd { .. } => {}
            // A grandchild that ended: its tokens (its own children's
            // included) count for this child's, once.
            AgentEvent::Child { status, usage, .. } => {
                if *status != ua_protocol::agent::ChildStatus::Running {
                    self.descendants.add(usage);
                }
            }
        }
    }

    /// One line of the child's journal.
    pub fn journal(&mut self, line: &JournalLine) {
        self.first_ms.get_or_insert(line.ts);
        self.last_ms = Some(line.ts);
        match &line.entry {
            JournalEntry::SessionStart { session, .. } => self.session = Some(session.clone()),
            JournalEntry::Instruction { text, .. } if self.instruction.is_empty() => self.instruction.clone_from(text),
            JournalEntry::ModelResponse { message, purpose, .. } if purpose.is_conversation() => {
                let text: String = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ua_protocol::conversation::Block::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                self.answer = text;
            }
            JournalEntry::Decision {
                command,
                outcome: ua_protocol::journal::DecisionOutcome::Denied,
                decided_by,
                ..
            } => {
                self.denied.push((command.clone(), format!("denied by {decided_by}")));
            }
            JournalEntry::TurnEnd { reason, usage, commands, .. } => {
                self.tokens += usage.total();
                self.commands += commands;
                self.outcome = match reason {
                    TurnEndReason::Answered => Outcome::Done,
                    TurnEndReason::Stopped => Outcome::Cancelled,
                    TurnEndReason::Failed | TurnEndReason::StepLimit | TurnEndReason::Budget => Outcome::Failed,
                };
            }
            JournalEntry::Error { message, .. } => self.error = Some(message.clone()),
            _ => {}
        }
    }

    /// The answer, trimmed.
    pub fn answer(&self) -> &str {
        self.answer.trim()
    }

    /// How long the journal says it ran.
    pub fn journal_duration(&self) -> Option<Duration> {
        Some(Duration::from_millis(self.last_ms?.saturating_sub(self.first_ms?)))
    }

    /// The progress line while it runs, at most `width` characters:
    /// `▸ child "check the logs" · 1.2 s · $ grep -c timeout app.log`.
    pub fn progress(&self, took: Duration, width: usize) -> String {
        let step = self.current.as_deref().map_or_else(|| "thinking".to_string(), |c| format!("$ {c}"));
        let line = format!("▸ child \"{}\" · {} · {step}", short(&self.instruction, 48), seconds(took));
        // Only text: a control character would move the cursor off the line.
        let line: String = line.chars().filter(|c| !c.is_control()).collect();
        short(&line, width.max(8))
    }

    /// `▸ child 3f2a "check the logs" · done · 3.1 s · 1.8k tokens · 2 commands`
    pub fn line(&self, took: Duration) -> String {
        let id = self.session.as_deref().map_or("----", |s| &s[s.len().saturating_sub(4)..]);
        let mut line = format!(
            "▸ child {id} \"{}\" · {} · {} · {} · {}",
            short(&self.instruction, 48),
            self.outcome.word(),
            seconds(took),
            tokens(self.tokens),
            counted(self.commands, "command")
        );
        if !self.denied.is_empty() {
            line.push_str(&format!(" · {} denied", self.denied.len()));
        }
        line
    }
}

/// The instruction on one line, cut with `…`.
fn short(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// `0.4 s`, `3.1 s`, `42 s`, `2 min 5 s`.
pub fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} min {} s", d.as_secs() / 60, d.as_secs() % 60)
    }
}

/// `850 tokens`, `1.8k tokens`, `2.4M tokens`.
pub fn tokens(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    match n {
        0..1_000 => format!("{n} tokens"),
        1_000..1_000_000 => format!("{:.1}k tokens", f / 1_000.0),
        _ => format!("{:.1}M tokens", f / 1_000_000.0),
    }
}

fn counted(n: u32, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A whole child from its NDJSON text.
#[cfg(test)]
pub fn from_ndjson(instruction: &str, text: &str) -> Fold {
    let mut f = Fold::new(instruction);
    for line in text.lines() {
        if let Ok(e) = serde_json::from_str::<AgentEvent>(line) {
            f.event(&e);
        }
    }
    f
}

/// A whole child from its journal's lines.
pub fn from_journal(lines: &[JournalLine]) -> Fold {
    let mut f = Fold::new("");
    for l in lines {
        f.journal(l);
    }
    f
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
