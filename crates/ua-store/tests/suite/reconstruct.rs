//! Every model call rebuilt from a journal on disk equals what was sent.

use serde_json::json;
use ua_protocol::conversation::{Block, Message, Role, Thinking, ToolResult, ToolUse};
use ua_protocol::event::{StopReason, Usage};
use ua_protocol::journal::{JournalEntry, TurnEndReason};
use ua_store::journal::{Journal, SyncPolicy, read_journal};
use ua_store::rebuild::{calls, rebuild_conversation, reconstruct_call};

/// What an agent loop keeps in memory, journaling as it goes.
struct Agent {
    journal: Journal,
    conversation: Vec<Message>,
    /// How many conversation messages the journal already holds.
    journaled: usize,
    /// (turn, call, system, messages) of every call, as sent.
    sent: Vec<(u32, u32, String, Vec<Message>)>,
}

impl Agent {
    fn call(&mut self, turn: u32, call: u32, omitted: Vec<[usize; 2]>, answer: Message) {
        let system = format!("You are unixagent. Turn {turn}, call {call}.\nRecent output:\n$ ls\nfile{call}");
        let messages: Vec<Message> = self
            .conversation
            .iter()
            .enumerate()
            .filter(|(i, _)| !omitted.iter().any(|[s, e]| (*s..*e).contains(i)))
            .map(|(_, m)| m.clone())
            .collect();
        self.journal
            .append(&JournalEntry::ModelRequest {
                turn,
                call,
                backend: "anthropic".into(),
                model: "claude".into(),
                system: system.clone(),
                messages_appended: self.conversation[self.journaled..].to_vec(),
                omitted,
                tools: (turn == 1 && call == 1).then(|| vec![ua_protocol::tool::shell_tool()]),
                purpose: ua_protocol::journal::CallPurpose::Conversation,
            })
            .unwrap();
        self.sent.push((turn, call, system, messages));
        let stop = if answer.tool_uses().next().is_some() { StopReason::ToolUse } else { StopReason::EndTurn };
        self.journal
            .append(&JournalEntry::ModelResponse {
                turn,
                call,
                message: answer.clone(),
                usage: Some(Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() }),
                stop: Some(stop),
                purpose: ua_protocol::journal::CallPurpose::Conversation,
            })
            .unwrap();
        self.conversation.push(answer);
        self.journaled = self.conversation.len();
    }

    fn run(&mut self, turn: u32, id: &str, command: &str, output: &str) {
        self.journal
            .append(&JournalEntry::ToolResult {
                turn,
                tool_use_id: id.into(),
                command: command.into(),
                exit_code: Some(0),
                output: output.into(),
                is_error: false,
                truncated: false,
                duration_ms: 3,
            })
            .unwrap();
        self.conversation
            .push(Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text(id, output))] });
    }

    fn instruct(&mut self, turn: u32, text: &str) {
        self.journal.append(&JournalEntry::Instruction { turn, text: text.into() }).unwrap();
        self.conversation.push(Message::user_text(text));
    }

    fn end(&mut self, turn: u32) {
        self.journal
            .append(&JournalEntry::TurnEnd {
                turn,
                reason: TurnEndReason::Answered,
                usage: Usage::default(),
                commands: 1,
                cost_micros: None,
                descendants: None,
            })
            .unwrap();
    }
}

fn shell_call(id: &str, command: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            Block::Thinking(Thinking {
                provider: "anthropic".into(),
                text: format!("I should run {command}"),
                signature: Some("sig==".into()),
                redacted: None,
            }),
            Block::text("Let me look."),
            Block::ToolUse(ToolUse { id: id.into(), name: "shell".into(), input: json!({"command": command}) }),
        ],
    }
}

#[test]
fn every_call_is_reconstructed_exactly_from_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let mut a = Agent {
        journal: Journal::open(&path, SyncPolicy::Never).unwrap(),
        conversation: vec![],
        journaled: 0,
        sent: vec![],
    };

    a.instruct(1, "what is here?");
    a.call(1, 1, vec![], shell_call("t1", "ls"));
    a.run(1, "t1", "ls", "a.txt\nb.log\n");
    a.call(1, 2, vec![], Message::assistant_text("Two files."));
    a.end(1);

    a.instruct(2, "delete the log");
    a.call(2, 1, vec![], shell_call("t2", "rm b.log"));
    a.run(2, "t2", "rm b.log", "");
    // The budget got tight: the whole first turn is left out.
    a.call(2, 2, vec![[0, 4]], Message::assistant_text("Deleted."));
    a.end(2);

    a.instruct(3, "and now?");
    a.call(3, 1, vec![[0, 4], [5, 7]], Message::assistant_text("Only a.txt."));
    a.end(3);

    let read = read_journal(&path).unwrap();
    assert!(read.skipped.is_empty() && !read.torn_tail);
    let rebuilt = calls(read.entries());
    assert_eq!(rebuilt.len(), a.sent.len());
    for (turn, call, system, messages) in &a.sent {
        let c = reconstruct_call(read.entries(), *turn, *call).unwrap();
        assert_eq!(&c.system, system, "system prompt of {turn}.{call}");
        assert_eq!(&c.messages, messages, "messages of {turn}.{call}");
        assert_eq!(c.tools, vec![ua_protocol::tool::shell_tool()]);
        assert!(c.response.is_some());
    }
    assert_eq!(rebuild_conversation(read.entries()), a.conversation);
    assert!(reconstruct_call(read.entries(), 4, 1).is_none());
}

#[test]
fn a_session_cut_after_a_command_resumes_with_its_result() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let mut a = Agent {
        journal: Journal::open(&path, SyncPolicy::Never).unwrap(),
        conversation: vec![],
        journaled: 0,
        sent: vec![],
    };
    a.instruct(1, "count files");
    a.call(1, 1, vec![], shell_call("t1", "ls | wc -l"));
    a.run(1, "t1", "ls | wc -l", "2\n");
    drop(a.journal);

    let read = read_journal(&path).unwrap();
    let conv = rebuild_conversation(read.entries());
    assert_eq!(conv, a.conversation, "the unsent tool result is restored so the next call is valid");
}

/// The agent loop as unixagent runs it: fit each call into a small budget,
/// journal it with fit's omissions, and rebuild it from the file.
#[test]
fn fitted_calls_are_reconstructed_exactly() {
    use ua_context::fit::fit;
    use ua_context::prompt::ContextSnapshot;

    let estimate = |m: &Message| 4 + serde_json::to_string(m).unwrap().len() as u64 / 4;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let mut journal = Journal::open(&path, SyncPolicy::Never).unwrap();
    let mut conversation: Vec<Message> = Vec::new();
    let mut journaled = 0;
    let mut sent = Vec::new();
    let mut dropped_any = false;

    for turn in 1..=6u32 {
        conversation.push(Message::user_text(format!("instruction {turn}: {}", "words ".repeat(30))));
        for call in 1..=3u32 {
            let snapshot = ContextSnapshot {
                cwd: "/w".into(),
                recent_output_lines: (0..40).map(|i| format!("turn {turn} line {i}")).collect(),
                ..ContextSnapshot::default()
            };
            let fitted = fit(&snapshot, &conversation, 2_500, estimate).unwrap();
            dropped_any |= !fitted.omitted.is_empty();
            journal
                .append(&JournalEntry::ModelRequest {
                    turn,
                    call,
                    backend: "anthropic".into(),
                    model: "m".into(),
                    system: fitted.system.clone(),
                    messages_appended: conversation[journaled..].to_vec(),
                    omitted: fitted.omitted.clone(),
                    tools: None,
                    purpose: ua_protocol::journal::CallPurpose::Conversation,
                })
                .unwrap();
            sent.push((turn, call, fitted.system, fitted.messages));
            let id = format!("t{turn}.{call}");
            let answer = if call < 3 { shell_call(&id, "ls") } else { Message::assistant_text("done") };
            journal
                .append(&JournalEntry::ModelResponse {
                    turn,
                    call,
                    message: answer.clone(),
                    usage: None,
                    stop: None,
                    purpose: ua_protocol::journal::CallPurpose::Conversation,
                })
                .unwrap();
            conversation.push(answer);
            journaled = conversation.len();
            if call < 3 {
                conversation.push(Message {
                    role: Role::User,
                    content: vec![Block::ToolResult(ToolResult::text(id, "out ".repeat(60)))],
                });
            }
        }
    }
    assert!(dropped_any, "the budget should have forced omissions");

    let read = read_journal(&path).unwrap();
    for (turn, call, system, messages) in sent {
        let c = reconstruct_call(read.entries(), turn, call).unwrap();
        assert_eq!(c.system, system, "{turn}.{call}");
        assert_eq!(c.messages, messages, "{turn}.{call}");
    }
}
