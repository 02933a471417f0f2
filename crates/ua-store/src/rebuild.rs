//! Rebuilding the conversation, and any single model call, from journal
//! entries (plan 001, "Trajectory Reconstruction").
//!
//! The fold: start from an empty conversation; each conversation
//! `model_request` appends its `messages_appended`, each conversation
//! `model_response` appends its `message`, and each `summary` replaces the
//! turns it covers with one message ([`crate::fold::summary_message`]).
//! The messages a call sent are the conversation right after its request
//! was folded, minus the request's `omitted` ranges, whose indices count
//! from the summary message when one is in force. Nothing else takes part,
//! so writers must journal every message they send, exactly once: user
//! messages in the next request's `messages_appended`, assistant messages
//! as responses.
//!
//! A call marked [`CallPurpose::Summary`] sends its own messages: they are
//! its `messages_appended` alone, and neither they nor its answer join the
//! conversation.

use ua_protocol::conversation::Message;
use ua_protocol::journal::{CallPurpose, JournalEntry};
use ua_protocol::tool::ToolDefinition;

use crate::fold::{ConversationFold, Rebuilt};

/// One model call as the journal recorded it: exactly what was sent, and
/// the answer if one arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub turn: u32,
    pub call: u32,
    pub backend: String,
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    /// The tools offered (carried over from earlier requests when a request
    /// did not repeat them).
    pub tools: Vec<ToolDefinition>,
    /// The complete answer, or `None` if the call failed or was cancelled.
    pub response: Option<Message>,
    pub purpose: CallPurpose,
}

/// The conversation as the next model call would continue it: the fold of
/// the module docs, with every `tool_use` answered (see [`crate::fold`]).
/// After a summary it is the summary message, then the messages of the
/// turns the summary does not cover.
///
/// Sessions that stopped between a command and the next model call (a
/// crash, a cancelled turn) get the `tool_result` entries no request has
/// carried yet as a last user message, or an error result saying the
/// command's outcome is unknown or that it never ran.
pub fn rebuild_conversation<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>) -> Vec<Message> {
    rebuild(entries).conversation
}

/// [`rebuild_conversation`], with the tools, the summary in force and the
/// commands whose outcome is unknown.
pub fn rebuild<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>) -> Rebuilt {
    let mut fold = ConversationFold::default();
    for entry in entries {
        fold.push(None, entry);
    }
    fold.finish()
}

/// Every model call in the journal, in order. Each call holds its own copy
/// of the messages it sent, so this is for exporting whole trajectories;
/// [`reconstruct_call`] is cheaper for one call.
pub fn calls<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>) -> Vec<Call> {
    let mut out: Vec<Call> = Vec::new();
    fold(
        entries,
        |_, _| true,
        |event| match event {
            Fold::Request(c) => out.push(c),
            Fold::Response { turn, call, message } => {
                if let Some(c) = out.iter_mut().rev().find(|c| c.turn == turn && c.call == call) {
                    c.response.get_or_insert_with(|| message.clone());
                }
            }
        },
    );
    out
}

/// The call `call` of turn `turn`, exactly as it was sent, with its
/// response. Should the journal hold the same numbers twice (a call
/// retried without a new number), the last of them.
pub fn reconstruct_call<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>, turn: u32, call: u32) -> Option<Call> {
    let mut found: Option<Call> = None;
    fold(
        entries,
        |t, n| t == turn && n == call,
        |event| match event {
            Fold::Request(c) => found = Some(c),
            Fold::Response { turn: t, call: n, message } => {
                if let Some(c) = found.as_mut().filter(|c| c.turn == t && c.call == n) {
                    c.response.get_or_insert_with(|| message.clone());
                }
            }
        },
    );
    found
}

enum Fold<'a> {
    Request(Call),
    Response { turn: u32, call: u32, message: &'a Message },
}

/// The fold of the module docs. Reports the requests `want` picks, with
/// the messages they sent, and every response.
fn fold<'a>(
    entries: impl IntoIterator<Item = &'a JournalEntry>,
    want: impl Fn(u32, u32) -> bool,
    mut on: impl FnMut(Fold<'a>),
) {
    let mut conversation = ConversationFold::default();
    for entry in entries {
        conversation.push(None, entry);
        match entry {
            JournalEntry::ModelRequest {
                turn,
                call,
                backend,
                model,
                system,
                messages_appended,
                omitted,
                tools,
                purpose,
            } if want(*turn, *call) => {
                let (messages, tools) = match purpose {
                    CallPurpose::Conversation => {
                        (without(conversation.messages(), omitted), conversation.tools().unwrap_or_default().to_vec())
                    }
                    CallPurpose::Summary => (without(messages_appended, omitted), tools.clone().unwrap_or_default()),
                };
                on(Fold::Request(Call {
                    turn: *turn,
                    call: *call,
                    backend: backend.clone(),
                    model: model.clone(),
                    system: system.clone(),
                    messages,
                    tools,
                    response: None,
                    purpose: *purpose,
                }));
            }
            JournalEntry::ModelResponse { turn, call, message, .. } => {
                on(Fold::Response { turn: *turn, call: *call, message });
            }
            _ => {}
        }
    }
}

/// `conversation` without the indices in the half-open `omitted` ranges.
fn without(conversation: &[Message], omitted: &[[usize; 2]]) -> Vec<Message> {
    conversation
        .iter()
        .enumerate()
        .filter(|(i, _)| !omitted.iter().any(|[start, end]| (*start..*end).contains(i)))
        .map(|(_, m)| m.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ua_protocol::conversation::{Block, Role, ToolResult, ToolUse};

    fn call_msg(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse(ToolUse {
                id: id.into(),
                name: "shell".into(),
                input: json!({"command": "ls"}),
            })],
        }
    }

    fn request(turn: u32, call: u32, appended: Vec<Message>, omitted: Vec<[usize; 2]>) -> JournalEntry {
        JournalEntry::ModelRequest {
            turn,
            call,
            backend: "anthropic".into(),
            model: "m".into(),
            system: format!("system {turn}.{call}"),
            messages_appended: appended,
            omitted,
            tools: None,
            purpose: CallPurpose::Conversation,
        }
    }

    fn response(turn: u32, call: u32, message: Message) -> JournalEntry {
        JournalEntry::ModelResponse { turn, call, message, usage: None, stop: None, purpose: CallPurpose::Conversation }
    }

    fn result(id: &str, output: &str) -> JournalEntry {
        JournalEntry::ToolResult {
            turn: 1,
            tool_use_id: id.into(),
            command: "ls".into(),
            exit_code: Some(0),
            output: output.into(),
            is_error: false,
            truncated: false,
            duration_ms: 1,
        }
    }

    #[test]
    fn omitted_ranges_are_left_out_of_the_call() {
        let entries = vec![
            request(1, 1, vec![Message::user_text("a")], vec![]),
            response(1, 1, Message::assistant_text("b")),
            request(2, 1, vec![Message::user_text("c")], vec![[0, 2]]),
        ];
        let c = reconstruct_call(&entries, 2, 1).unwrap();
        assert_eq!(c.messages, vec![Message::user_text("c")]);
        assert_eq!(c.system, "system 2.1");
        assert_eq!(c.response, None);
        assert_eq!(rebuild_conversation(&entries).len(), 3, "omission affects the call, not the conversation");
    }

    #[test]
    fn unsent_tool_results_answer_the_last_call() {
        let entries = vec![
            request(1, 1, vec![Message::user_text("go")], vec![]),
            response(1, 1, call_msg("t1")),
            result("t1", "out"),
        ];
        let conv = rebuild_conversation(&entries);
        assert_eq!(conv.len(), 3);
        assert_eq!(conv[2].content, vec![Block::ToolResult(ToolResult::text("t1", "out"))]);
    }

    #[test]
    fn results_already_sent_are_not_added_twice() {
        let tr = Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text("t1", "out"))] };
        let entries = vec![
            request(1, 1, vec![Message::user_text("go")], vec![]),
            response(1, 1, call_msg("t1")),
            result("t1", "out"),
            request(1, 2, vec![tr.clone()], vec![]),
        ];
        let conv = rebuild_conversation(&entries);
        assert_eq!(conv.len(), 3);
        assert_eq!(conv[2], tr);
    }

    #[test]
    fn results_for_other_calls_are_ignored() {
        let entries = vec![
            request(1, 1, vec![Message::user_text("go")], vec![]),
            response(1, 1, Message::assistant_text("done")),
            result("stray", "out"),
        ];
        assert_eq!(rebuild_conversation(&entries).len(), 2);
    }

    #[test]
    fn tools_carry_over_until_replaced() {
        let mut first = request(1, 1, vec![Message::user_text("go")], vec![]);
        if let JournalEntry::ModelRequest { tools, .. } = &mut first {
            *tools = Some(vec![ua_protocol::tool::shell_tool()]);
        }
        let entries = vec![first, response(1, 1, call_msg("t")), request(1, 2, vec![], vec![])];
        let all = calls(&entries);
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].tools, vec![ua_protocol::tool::shell_tool()]);
        assert_eq!(all[0].response, Some(call_msg("t")));
    }

    #[test]
    fn a_retried_call_reconstructs_as_the_last_attempt() {
        let entries = vec![
            request(1, 1, vec![Message::user_text("go")], vec![]),
            JournalEntry::Error { turn: Some(1), message: "context too long".into() },
            request(1, 1, vec![], vec![[0, 0]]),
            response(1, 1, Message::assistant_text("ok")),
        ];
        let c = reconstruct_call(&entries, 1, 1).unwrap();
        assert_eq!(c.response, Some(Message::assistant_text("ok")));
        assert_eq!(calls(&entries).iter().filter(|c| c.response.is_some()).count(), 1);
    }
}
