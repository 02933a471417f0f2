//! `session/load` replays an earlier session: its journal as the updates
//! a client would have seen (the instructions as the user's messages, the
//! model's text and thinking, each command as a tool call with its result).
//! A pure function over journal entries.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolKind,
};
use ua_protocol::conversation::Block;
use ua_protocol::journal::JournalEntry;

pub(super) fn replay<'a>(entries: impl IntoIterator<Item = &'a JournalEntry>) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let chunk = |text: &str| ContentChunk::new(ContentBlock::from(text.to_string()));
    // Commands by tool-use id, waiting for their result.
    let mut calls: Vec<ToolCall> = Vec::new();
    for entry in entries {
        match entry {
            JournalEntry::Instruction { text, .. } => out.push(SessionUpdate::UserMessageChunk(chunk(text))),
            JournalEntry::ModelResponse { message, purpose, .. } if purpose.is_conversation() => {
                for block in &message.content {
                    match block {
                        Block::Text { text } => out.push(SessionUpdate::AgentMessageChunk(chunk(text))),
                        Block::Thinking(t) if !t.text.is_empty() => {
                            out.push(SessionUpdate::AgentThoughtChunk(chunk(&t.text)));
                        }
                        Block::ToolUse(u) => {
                            let command = u.input.get("command").and_then(|c| c.as_str()).unwrap_or_default();
                            calls.push(ToolCall::new(u.id.clone(), command).kind(ToolKind::Execute));
                        }
                        Block::Thinking(_) | Block::ToolResult(_) => {}
                    }
                }
            }
            JournalEntry::ToolResult { tool_use_id, command, exit_code, output, is_error, .. } => {
                let at = calls.iter().position(|c| c.tool_call_id.0.as_ref() == tool_use_id.as_str());
                let mut call =
                    at.map_or_else(|| ToolCall::new(tool_use_id.clone(), command.clone()), |i| calls.remove(i));
                // The command as typed (after an edit), not as proposed.
                call.title.clone_from(command);
                let ok = exit_code == &Some(0) && !is_error;
                let code = exit_code.map_or_else(|| "did not run".to_string(), |c| format!("exit code {c}"));
                out.push(SessionUpdate::ToolCall(
                    call.kind(ToolKind::Execute)
                        .status(if ok { ToolCallStatus::Completed } else { ToolCallStatus::Failed })
                        .content(vec![ToolCallContent::from(format!("{output}\n{code}"))]),
                ));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ua_protocol::conversation::{Message, ToolUse};
    use ua_protocol::journal::CallPurpose;

    #[test]
    fn a_turn_replays_as_the_users_message_the_answer_and_the_command() {
        let response = JournalEntry::ModelResponse {
            turn: 1,
            call: 1,
            message: Message {
                role: ua_protocol::conversation::Role::Assistant,
                content: vec![
                    Block::text("Looking."),
                    Block::ToolUse(ToolUse { id: "t1".into(), name: "shell".into(), input: json!({"command": "ls"}) }),
                ],
            },
            usage: None,
            stop: None,
            purpose: CallPurpose::Conversation,
        };
        let result = JournalEntry::ToolResult {
            turn: 1,
            tool_use_id: "t1".into(),
            command: "ls".into(),
            exit_code: Some(0),
            output: "a.txt".into(),
            is_error: false,
            truncated: false,
            duration_ms: 3,
        };
        let entries = [JournalEntry::Instruction { turn: 1, text: "what is here".into() }, response, result];
        let wire: Vec<serde_json::Value> =
            replay(&entries).iter().map(|u| serde_json::to_value(u).unwrap_or_default()).collect();
        let kinds: Vec<&str> = wire.iter().filter_map(|v| v["sessionUpdate"].as_str()).collect();
        assert_eq!(kinds, ["user_message_chunk", "agent_message_chunk", "tool_call"]);
        assert_eq!(wire[0]["content"]["text"], "what is here");
        assert_eq!((wire[2]["title"].as_str(), wire[2]["status"].as_str()), (Some("ls"), Some("completed")));
    }
}
