//! A session as unixagent writes it, for resume tests and the
//! `resume_load` example: it journals each turn through [`Journal`] and
//! keeps the history a live session would hold, summarising older turns
//! the way a session that outgrows its window does.

use serde_json::json;
use ua_protocol::conversation::{Block, Message, Role, ToolResult, ToolUse};
use ua_protocol::event::{StopReason, Usage};
use ua_protocol::journal::{CallPurpose, JournalEntry, TurnEndReason};
use ua_protocol::tool::shell_tool;
use ua_store::StoreError;
use ua_store::fold::summary_message;
use ua_store::journal::Journal;

/// A live session: its journal and what it would send next.
#[derive(Debug)]
pub struct Session {
    pub journal: Journal,
    /// The conversation as the live session holds it.
    pub history: Vec<Message>,
    /// The turn each message of `history` belongs to (0: the summary).
    turns: Vec<u32>,
    /// How many messages of `history` the journal holds.
    pub journaled: usize,
    pub turn: u32,
    call: u32,
    /// The output of every command, and of the person's own commands.
    pub tool_output: String,
    pub user_output: String,
}

impl Session {
    pub fn new(journal: Journal, tool_output_bytes: usize, user_output_bytes: usize) -> Self {
        Session {
            journal,
            history: Vec::new(),
            turns: Vec::new(),
            journaled: 0,
            turn: 0,
            call: 0,
            tool_output: filler("out", tool_output_bytes),
            user_output: filler("log", user_output_bytes),
        }
    }

    fn push(&mut self, m: Message) {
        self.history.push(m);
        self.turns.push(self.turn);
    }

    pub fn append(&mut self, entry: &JournalEntry) -> Result<u64, StoreError> {
        self.journal.append(entry)
    }

    /// The start of a turn: the person's instruction.
    pub fn instruct(&mut self, text: &str) -> Result<(), StoreError> {
        self.turn += 1;
        self.call = 0;
        self.append(&JournalEntry::Instruction { turn: self.turn, text: text.into() })?;
        self.push(Message::user_text(text));
        Ok(())
    }

    /// One model call answered with `answer`.
    pub fn call(&mut self, answer: Message) -> Result<(), StoreError> {
        self.call += 1;
        let first = self.turn == 1 && self.call == 1;
        self.append(&JournalEntry::ModelRequest {
            turn: self.turn,
            call: self.call,
            backend: "anthropic".into(),
            model: "claude".into(),
            system: format!("You are unixagent. Turn {}.", self.turn),
            messages_appended: self.history[self.journaled..].to_vec(),
            omitted: vec![],
            tools: first.then(|| vec![shell_tool()]),
            purpose: CallPurpose::Conversation,
        })?;
        let stop = if answer.tool_uses().next().is_some() { StopReason::ToolUse } else { StopReason::EndTurn };
        self.append(&JournalEntry::ModelResponse {
            turn: self.turn,
            call: self.call,
            message: answer.clone(),
            usage: Some(Usage { input_tokens: 1000, output_tokens: 50, ..Usage::default() }),
            stop: Some(stop),
            purpose: CallPurpose::Conversation,
        })?;
        self.push(answer);
        self.journaled = self.history.len();
        Ok(())
    }

    /// The id the next command of this turn gets.
    pub fn next_id(&self, k: usize) -> String {
        format!("toolu_{}_{}_{k}", self.turn, self.call + 1)
    }

    /// The intent line of a command, journaled before it runs.
    pub fn intend(&mut self, id: &str, command: &str) -> Result<(), StoreError> {
        let entry = JournalEntry::CommandIntent {
            turn: self.turn,
            tool_use_id: id.into(),
            command: command.into(),
            read_only: command.starts_with("ls"),
        };
        self.append(&entry).map(|_| ())
    }

    /// A command's result, journaled and held for the next call.
    pub fn result(&mut self, id: &str, command: &str) -> Result<(), StoreError> {
        let output = self.tool_output.clone();
        self.append(&JournalEntry::ToolResult {
            turn: self.turn,
            tool_use_id: id.into(),
            command: command.into(),
            exit_code: Some(0),
            output: output.clone(),
            is_error: false,
            truncated: false,
            duration_ms: 40,
        })?;
        match self.history.last_mut() {
            Some(m) if m.role == Role::User && m.content.iter().all(|b| matches!(b, Block::ToolResult(_))) => {
                m.content.push(Block::ToolResult(ToolResult::text(id, output)));
            }
            _ => {
                self.push(Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text(id, output))] })
            }
        }
        Ok(())
    }

    /// A whole turn: `commands` commands, each in its own call, an answer,
    /// a command the person ran themselves, the turn's end and a
    /// checkpoint.
    pub fn turn(&mut self, commands: usize) -> Result<(), StoreError> {
        self.instruct(&format!("instruction {}", self.turn + 1))?;
        for k in 0..commands {
            let id = self.next_id(k);
            let command = if k % 2 == 0 { format!("ls -l dir{k}") } else { format!("make target{k}") };
            self.call(shell_call(&id, &command))?;
            self.intend(&id, &command)?;
            self.result(&id, &command)?;
        }
        self.call(Message::assistant_text(format!("Done with turn {}.", self.turn)))?;
        let output = self.user_output.clone();
        self.append(&JournalEntry::UserCommand {
            command: "tail -n 200 build.log".into(),
            cwd: Some("/work".into()),
            exit_code: Some(0),
            output,
        })?;
        self.end_turn()
    }

    pub fn end_turn(&mut self) -> Result<(), StoreError> {
        self.append(&JournalEntry::TurnEnd {
            turn: self.turn,
            reason: TurnEndReason::Answered,
            usage: Usage::default(),
            commands: 1,
            cost_micros: None,
            descendants: None,
        })?;
        self.journal.checkpoint().map(|_| ())
    }

    /// Condenses the turns up to `covers` with a summary call, as a
    /// session does when its history outgrows the window.
    pub fn summarise(&mut self, covers: u32) -> Result<(), StoreError> {
        self.call += 1;
        let text = format!("The person and unixagent worked through turns 1 to {covers}.");
        self.append(&JournalEntry::ModelRequest {
            turn: self.turn,
            call: self.call,
            backend: "anthropic".into(),
            model: "claude-small".into(),
            system: "Summarise this conversation.".into(),
            messages_appended: vec![Message::user_text(format!("(turns up to {covers})"))],
            omitted: vec![],
            tools: None,
            purpose: CallPurpose::Summary,
        })?;
        self.append(&JournalEntry::ModelResponse {
            turn: self.turn,
            call: self.call,
            message: Message::assistant_text(text.clone()),
            usage: None,
            stop: Some(StopReason::EndTurn),
            purpose: CallPurpose::Summary,
        })?;
        self.append(&JournalEntry::Summary {
            turn: self.turn,
            covers_through_turn: covers,
            text: text.clone(),
            model: "claude-small".into(),
            usage: None,
        })?;
        // Messages not journaled yet stay pending; the summary counts as
        // journaled (its line rebuilds it).
        let mut history = vec![summary_message(&text)];
        let mut turns = vec![0];
        let mut journaled = 1;
        for (i, (m, t)) in self.history.drain(..).zip(self.turns.drain(..)).enumerate() {
            if t > covers {
                journaled += usize::from(i < self.journaled);
                history.push(m);
                turns.push(t);
            }
        }
        (self.history, self.turns, self.journaled) = (history, turns, journaled);
        Ok(())
    }
}

pub fn shell_call(id: &str, command: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            Block::text(format!("Running {command}.")),
            Block::ToolUse(ToolUse { id: id.into(), name: "shell".into(), input: json!({"command": command}) }),
        ],
    }
}

/// About `bytes` of plain text lines, quick to serialise.
fn filler(word: &str, bytes: usize) -> String {
    let line = format!("{word} 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n");
    line.repeat(bytes.div_ceil(line.len()).max(1))
}

/// A session of about `entries` journal lines: turns of two commands,
/// summarised every `summary_every` turns down to the last three.
pub fn generate(session: &mut Session, entries: u64, summary_every: u32) -> Result<(), StoreError> {
    while session.journal.next_seq() <= entries {
        session.turn(2)?;
        if session.turn.is_multiple_of(summary_every) {
            session.summarise(session.turn - 3)?;
        }
    }
    Ok(())
}
