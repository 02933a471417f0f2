//! The conversation fold: journal entries in, the conversation out.
//!
//! [`ConversationFold`] is a plain value fed entries in file order; it does
//! no I/O. It is what [`crate::rebuild`] and [`crate::resume`] share, so a
//! conversation rebuilt from a checkpoint and one rebuilt from the whole
//! file come out of the same code.
//!
//! The rules, beyond the fold of [`crate::rebuild`]:
//!
//! - Calls marked [`CallPurpose::Summary`] stay out of the conversation.
//! - A `summary` entry replaces every message of the turns it covers with
//!   [`summary_message`]; the messages of later turns stay. A user message
//!   that holds only tool results belongs to the turn of the call it
//!   answers, as in `ua-context`'s fitting.
//! - At the end every `tool_use` gets exactly one `tool_result` in the
//!   user message right after it, and no result is left without its
//!   `tool_use`. A missing result is, in order of preference, the
//!   journaled `tool_result` that no request has carried yet, an "outcome
//!   unknown" error when a `command_intent` says the command was started,
//!   or a "not run" error. Only a journal with lost lines needs more than
//!   the last of these repairs.

use std::collections::{HashMap, HashSet};

use ua_protocol::conversation::{Block, Message, Role, ToolResult};
use ua_protocol::journal::{CallPurpose, JournalEntry};
use ua_protocol::tool::ToolDefinition;

/// What the model is told about a command that was started but whose
/// result never reached the journal.
pub const OUTCOME_UNKNOWN: &str = "unixagent stopped while this command was running: it was started, and \
whether it finished, and how, is unknown. It was not run again; check its effects before relying on them.";

/// What the model is told about a command it asked for that never started.
pub const NOT_RUN: &str = "not run: the session ended before this command was started";

/// The words that introduce a summary in the conversation.
pub const SUMMARY_PREFIX: &str = "Summary of the earlier conversation, which is no longer shown in full:\n\n";

/// The user message that stands for the turns a summary covers. A session
/// that summarises must put exactly this message first in its history, so
/// that the calls it sends afterwards rebuild from the journal.
pub fn summary_message(text: &str) -> Message {
    Message::user_text(format!("{SUMMARY_PREFIX}{text}"))
}

/// A command journaled as started whose outcome the journal does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    /// The `command_intent` line, when the entries came with their lines.
    pub seq: Option<u64>,
    pub turn: u32,
    pub tool_use_id: String,
    pub command: String,
    pub read_only: bool,
}

/// The summary the conversation starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryInForce {
    /// The `summary` line, when the entries came with their lines.
    pub seq: Option<u64>,
    pub turn: u32,
    pub covers_through_turn: u32,
    pub model: String,
    pub text: String,
}

/// What the fold found.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuilt {
    /// The conversation a next model call continues: every `tool_use`
    /// answered, every `tool_result` answering.
    pub conversation: Vec<Message>,
    /// How many leading messages of `conversation` the journal holds
    /// already. The rest (at most one user message answering the last
    /// assistant message) belongs in the next request's
    /// `messages_appended`.
    pub journaled: usize,
    /// The tools the latest conversation request offered.
    pub tools: Option<Vec<ToolDefinition>>,
    pub summary: Option<SummaryInForce>,
    /// Commands started whose outcome is unknown, in journal order, except
    /// those a `resumed` line already accounted for.
    pub unresolved: Vec<Intent>,
    /// The highest turn number any entry carried (0 for none).
    pub last_turn: u32,
}

/// The fold as a value: feed entries with [`ConversationFold::push`], then
/// [`ConversationFold::finish`].
#[derive(Debug, Clone, Default)]
pub struct ConversationFold {
    messages: Vec<Message>,
    /// The turn each message belongs to; 0 for the summary message.
    turns: Vec<u32>,
    tools: Option<Vec<ToolDefinition>>,
    summary: Option<SummaryInForce>,
    /// Journaled results that no request has carried yet, by tool_use id.
    results: HashMap<String, ToolResult>,
    /// Intents with neither a journaled result nor a carried one, and
    /// whether a `resumed` line has accounted for them.
    intents: Vec<(Intent, bool)>,
    last_turn: u32,
}

impl ConversationFold {
    /// A fold that starts where a checkpoint says: with the summary and the
    /// tools in force there.
    pub fn starting_with(summary: Option<SummaryInForce>, tools: Option<Vec<ToolDefinition>>) -> Self {
        let mut fold = ConversationFold { tools, ..Self::default() };
        if let Some(s) = summary {
            fold.last_turn = s.turn;
            fold.messages.push(summary_message(&s.text));
            fold.turns.push(0);
            fold.summary = Some(s);
        }
        fold
    }

    /// The conversation so far, before the repairs of
    /// [`ConversationFold::finish`].
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tools the latest conversation request offered.
    pub fn tools(&self) -> Option<&[ToolDefinition]> {
        self.tools.as_deref()
    }

    /// Folds one entry; `seq` is its line's, when known.
    pub fn push(&mut self, seq: Option<u64>, entry: &JournalEntry) {
        if let Some(turn) = entry_turn(entry) {
            self.last_turn = self.last_turn.max(turn);
        }
        match entry {
            JournalEntry::ModelRequest {
                purpose: CallPurpose::Conversation, turn, messages_appended, tools, ..
            } => {
                for m in messages_appended {
                    let answers_a_call =
                        m.role == Role::User && !m.content.is_empty() && m.content.iter().all(is_tool_result);
                    let tag = match self.turns.last() {
                        Some(&previous) if answers_a_call => previous,
                        _ => *turn,
                    };
                    for id in m.content.iter().filter_map(result_id) {
                        self.results.remove(id);
                        self.intents.retain(|(i, _)| i.tool_use_id != id);
                    }
                    self.messages.push(m.clone());
                    self.turns.push(tag);
                }
                if let Some(t) = tools {
                    self.tools = Some(t.clone());
                }
            }
            JournalEntry::ModelResponse { purpose: CallPurpose::Conversation, turn, message, .. } => {
                self.messages.push(message.clone());
                self.turns.push(*turn);
            }
            JournalEntry::ToolResult { tool_use_id, output, is_error, .. } => {
                let mut result = ToolResult::text(tool_use_id.clone(), output.clone());
                result.is_error = *is_error;
                self.results.insert(tool_use_id.clone(), result);
                self.intents.retain(|(i, _)| i.tool_use_id != *tool_use_id);
            }
            JournalEntry::CommandIntent { turn, tool_use_id, command, read_only } => {
                self.intents.retain(|(i, _)| i.tool_use_id != *tool_use_id);
                let intent = Intent {
                    seq,
                    turn: *turn,
                    tool_use_id: tool_use_id.clone(),
                    command: command.clone(),
                    read_only: *read_only,
                };
                self.intents.push((intent, false));
            }
            JournalEntry::Summary { turn, covers_through_turn, text, model, .. } => {
                let kept = std::mem::take(&mut self.messages).into_iter().zip(std::mem::take(&mut self.turns));
                let (messages, turns) = std::iter::once((summary_message(text), 0))
                    .chain(kept.filter(|(_, turn)| *turn > *covers_through_turn))
                    .unzip();
                (self.messages, self.turns) = (messages, turns);
                self.summary = Some(SummaryInForce {
                    seq,
                    turn: *turn,
                    covers_through_turn: *covers_through_turn,
                    model: model.clone(),
                    text: text.clone(),
                });
            }
            JournalEntry::Resumed { .. } => {
                for (_, shown) in &mut self.intents {
                    *shown = true;
                }
            }
            _ => {}
        }
    }

    /// The conversation with every `tool_use` answered, and what else the
    /// fold found.
    pub fn finish(self) -> Rebuilt {
        let ConversationFold { mut messages, tools, summary, results, intents, last_turn, .. } = self;
        let started: HashSet<&str> = intents.iter().map(|(i, _)| i.tool_use_id.as_str()).collect();
        let resolve = |id: &str| match results.get(id) {
            Some(r) => r.clone(),
            None => {
                let mut r = ToolResult::text(id, if started.contains(id) { OUTCOME_UNKNOWN } else { NOT_RUN });
                r.is_error = true;
                r
            }
        };
        let appended = pair_tool_calls(&mut messages, resolve);
        let journaled = messages.len() - usize::from(appended);
        let unresolved = intents.iter().filter(|(_, shown)| !shown).map(|(i, _)| i.clone()).collect();
        Rebuilt { conversation: messages, journaled, tools, summary, unresolved, last_turn }
    }
}

/// The turn an entry belongs to, for those that name one.
pub(crate) fn entry_turn(entry: &JournalEntry) -> Option<u32> {
    match entry {
        JournalEntry::Instruction { turn, .. }
        | JournalEntry::ModelRequest { turn, .. }
        | JournalEntry::ModelResponse { turn, .. }
        | JournalEntry::CommandIntent { turn, .. }
        | JournalEntry::ToolResult { turn, .. }
        | JournalEntry::Decision { turn, .. }
        | JournalEntry::Summary { turn, .. }
        | JournalEntry::Checkpoint { turn, .. }
        | JournalEntry::TurnEnd { turn, .. } => Some(*turn),
        JournalEntry::Error { turn, .. } => *turn,
        JournalEntry::SessionStart { .. }
        | JournalEntry::UserCommand { .. }
        | JournalEntry::Resumed { .. }
        | JournalEntry::Child { .. }
        | JournalEntry::SessionEnd { .. } => None,
    }
}

fn is_tool_result(b: &Block) -> bool {
    matches!(b, Block::ToolResult(_))
}

fn result_id(b: &Block) -> Option<&str> {
    match b {
        Block::ToolResult(r) => Some(&r.tool_use_id),
        _ => None,
    }
}

/// Makes every `tool_use` answered by exactly one `tool_result` in the
/// user message right after its assistant message, and drops results that
/// answer nothing there. Returns whether a user message was appended at
/// the end (the one repair a normal journal needs: results not sent yet).
///
/// Results come first in their message, in the order of the calls, as the
/// Anthropic API requires; a message already in that shape is left as it
/// is, so an intact conversation comes out unchanged.
pub fn pair_tool_calls(messages: &mut Vec<Message>, resolve: impl Fn(&str) -> ToolResult) -> bool {
    // Nothing precedes the first message: any result in it answers nothing.
    while let Some(first) = messages.first_mut().filter(|m| m.role == Role::User) {
        answer(first, &[], &resolve);
        if !first.content.is_empty() {
            break;
        }
        messages.remove(0);
    }
    let mut appended = false;
    let mut i = 0;
    while i < messages.len() {
        let calls: Vec<String> = match messages[i].role {
            Role::Assistant => messages[i].tool_uses().map(|t| t.id.clone()).collect(),
            Role::User => Vec::new(),
        };
        if !calls.is_empty() && messages.get(i + 1).is_none_or(|m| m.role != Role::User) {
            appended |= i + 1 == messages.len();
            messages.insert(i + 1, Message { role: Role::User, content: Vec::new() });
        }
        if let Some(next) = messages.get_mut(i + 1).filter(|m| m.role == Role::User) {
            answer(next, &calls, &resolve);
            if next.content.is_empty() {
                // Check what now follows message i.
                messages.remove(i + 1);
                continue;
            }
        }
        i += 1;
    }
    appended
}

/// Gives the user message `m` exactly one result per id of `calls`, first
/// and in order, keeping its other blocks after them.
fn answer(m: &mut Message, calls: &[String], resolve: &impl Fn(&str) -> ToolResult) {
    let results: Vec<&str> = m.content.iter().filter_map(result_id).collect();
    let leading = m.content.iter().take_while(|b| is_tool_result(b)).count();
    if results.iter().copied().eq(calls.iter().map(String::as_str)) && leading == results.len() {
        return;
    }
    let mut found: HashMap<String, ToolResult> = HashMap::new();
    let mut rest = Vec::new();
    for block in m.content.drain(..) {
        match block {
            Block::ToolResult(r) => {
                found.entry(r.tool_use_id.clone()).or_insert(r);
            }
            other => rest.push(other),
        }
    }
    m.content =
        calls.iter().map(|id| Block::ToolResult(found.remove(id).unwrap_or_else(|| resolve(id)))).chain(rest).collect();
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
