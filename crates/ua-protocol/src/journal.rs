//! The session journal: one JSON object per line, append-only.
//!
//! Each line is a [`JournalLine`]: a per-session sequence number, a
//! timestamp and one [`JournalEntry`], flattened into a single object whose
//! `type` field names the entry:
//!
//! ```json
//! {"seq":3,"ts":1763755985123,"type":"instruction","turn":1,"text":"list big files"}
//! ```
//!
//! `ts` is milliseconds since the Unix epoch (UTC). An integer keeps this
//! crate free of a date library, sorts and subtracts trivially, and `jq`
//! turns it into a date with `todate` after dividing by 1000.
//!
//! The journal is the conversation (plan 001, "Trajectory
//! Reconstruction"): every model call can be rebuilt exactly by folding
//! [`JournalEntry::ModelRequest::messages_appended`] and
//! [`JournalEntry::ModelResponse::message`] in order and leaving out the
//! request's `omitted` ranges. Everything else (tool results, decisions,
//! the user's own commands) is a record for people and for audits, not an
//! input to that fold, with three exceptions that keep a resumed session
//! whole:
//!
//! - a [`JournalEntry::Summary`] replaces the turns it covers with one
//!   message, and the model call that wrote it is marked
//!   [`CallPurpose::Summary`] so that it stays out of the fold;
//! - a [`JournalEntry::CommandIntent`] without its `tool_result` says a
//!   command was started and its outcome is unknown;
//! - a [`JournalEntry::Checkpoint`] says where the live conversation starts,
//!   by byte offset, so that resuming does not read the whole file.

use serde::{Deserialize, Serialize};

use crate::conversation::Message;
use crate::event::{StopReason, Usage};
use crate::tool::ToolDefinition;

/// One line of a journal file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalLine {
    /// Position in the session, from 1, with no gaps unless a write failed.
    pub seq: u64,
    /// Milliseconds since the Unix epoch, UTC.
    pub ts: u64,
    #[serde(flatten)]
    pub entry: JournalEntry,
}

/// What happened. Turns are numbered from 1 within a session; model calls
/// are numbered from 1 within a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JournalEntry {
    /// The first line of every journal.
    SessionStart {
        session: String,
        pid: u32,
        /// The shell's path, as run (`/bin/bash`).
        shell: String,
        cwd: String,
        /// `std::env::consts::OS` and, where known, the release.
        os: String,
        /// The unixagent version that wrote the journal.
        version: String,
    },
    /// A `#` instruction (or a steering line typed during a turn).
    Instruction { turn: u32, text: String },
    /// A model call, as sent.
    ModelRequest {
        turn: u32,
        call: u32,
        /// The provider name from the configuration (`anthropic`, `openai`).
        backend: String,
        model: String,
        /// The full system prompt of this call.
        system: String,
        /// The messages added to the conversation since the previous
        /// request of this session, excluding assistant messages already
        /// journaled as [`JournalEntry::ModelResponse`].
        messages_appended: Vec<Message>,
        /// Half-open ranges `[start, end)` of conversation indices that
        /// were left out of this call to fit the token budget.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        omitted: Vec<[usize; 2]>,
        /// The tools offered, or `None` when they are the same as in the
        /// previous request of this session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<Vec<ToolDefinition>>,
        /// What the call was for; absent for the conversation itself.
        #[serde(default, skip_serializing_if = "CallPurpose::is_conversation")]
        purpose: CallPurpose,
    },
    /// The complete answer to a model call, thinking included.
    ModelResponse {
        turn: u32,
        call: u32,
        message: Message,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<StopReason>,
        /// The purpose of the request this answers.
        #[serde(default, skip_serializing_if = "CallPurpose::is_conversation")]
        purpose: CallPurpose,
    },
    /// A command the model asked for, journaled (and, unless it only
    /// reads, synced to disk) before it is typed into the shell. Its
    /// outcome is the `tool_result` with the same `tool_use_id`; an intent
    /// without one means unixagent stopped while the command ran.
    CommandIntent {
        turn: u32,
        tool_use_id: String,
        /// The command as it is about to be typed (after any edit).
        command: String,
        /// Whether the classifier judged it read-only.
        read_only: bool,
    },
    /// A command the model asked for, after it ran (or was refused).
    ToolResult {
        turn: u32,
        tool_use_id: String,
        /// The command as it was typed into the shell (after any edit).
        command: String,
        /// `None` when the command never ran or the shell reported none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The text of the tool result exactly as the model will see it.
        output: String,
        /// Whether the result is marked as an error for the model.
        #[serde(default)]
        is_error: bool,
        /// Whether `output` was cut at the capture limit.
        #[serde(default)]
        truncated: bool,
        #[serde(default)]
        duration_ms: u64,
    },
    /// How the safety pipeline and the user decided about one command.
    Decision {
        turn: u32,
        tool_use_id: String,
        /// The command as the model proposed it.
        command: String,
        /// The classifier's risk level (`read_only`, `write`, …).
        risk: String,
        outcome: DecisionOutcome,
        /// What decided: a rule id, `user`, `judge`, `session_grant`, …
        decided_by: String,
        /// Who approved, when a person did (a user name), or `None`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approver: Option<String>,
    },
    /// A command the user ran themselves at the prompt.
    UserCommand {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Captured output, ANSI-stripped and capped.
        output: String,
    },
    /// The turns up to `covers_through_turn` condensed into `text` by a
    /// model call journaled just before, marked [`CallPurpose::Summary`].
    /// From here on the conversation is one user message carrying `text`
    /// followed by the messages of the later turns.
    Summary {
        /// The turn during which the summary was written.
        turn: u32,
        covers_through_turn: u32,
        text: String,
        /// The model that wrote it.
        model: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// Where a resumed session finds its conversation, written at a turn
    /// boundary. Positions are byte offsets into this file; a reader checks
    /// the line found there carries the expected `seq` before trusting it.
    Checkpoint {
        /// The last turn begun when the checkpoint was written.
        turn: u32,
        /// The first line to fold: everything the conversation holds (after
        /// the summary in force) comes from this line or later ones. When
        /// no such line exists yet, the checkpoint's own position.
        conversation_from: JournalPos,
        /// The `summary` line in force, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<JournalPos>,
        /// The latest conversation `model_request` that offered tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<JournalPos>,
    },
    /// The session was reopened by another unixagent process, which
    /// appends to this journal from here on. Intents journaled before this
    /// line were shown to the person at that point.
    Resumed {
        pid: u32,
        /// The unixagent version that resumed the session.
        version: String,
        /// The shell and directory of the new process.
        shell: String,
        cwd: String,
        /// The `seq` of the checkpoint the conversation was rebuilt from,
        /// or `None` when the whole journal was read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_checkpoint: Option<u64>,
    },
    /// The end of a turn, with its totals.
    TurnEnd {
        turn: u32,
        reason: TurnEndReason,
        /// Usage summed over the turn's model calls.
        usage: Usage,
        /// How many commands ran in the turn.
        commands: u32,
        /// What the turn cost, in millionths of a US dollar, when the
        /// configuration prices the model (`[pricing]`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_micros: Option<u64>,
        /// Tokens the child agents that ended during the turn used, their
        /// own children's included, each child counted once (not in
        /// `usage`, which is this session's own).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        descendants: Option<crate::agent::TokenUsage>,
    },
    /// An error the user was shown.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        message: String,
    },
    /// A child agent started from this session's shell started or ended,
    /// as the `child` event says it.
    Child {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        instruction: String,
        status: crate::agent::ChildStatus,
        usage: crate::agent::TokenUsage,
    },
    /// The last line of a journal whose session ended cleanly.
    SessionEnd {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
}

/// Where a line sits in its journal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalPos {
    /// The line's sequence number.
    pub seq: u64,
    /// The byte offset of the line's first byte.
    pub offset: u64,
}

/// What a model call was for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    /// The conversation itself: the call's messages fold into it.
    #[default]
    Conversation,
    /// Condensing older turns into a [`JournalEntry::Summary`]. The call
    /// sends its own, self-contained messages and its answer is not part of
    /// the conversation.
    Summary,
}

impl CallPurpose {
    /// True for [`CallPurpose::Conversation`], which the journal leaves out.
    pub fn is_conversation(&self) -> bool {
        *self == CallPurpose::Conversation
    }
}

/// The outcome of a decision about a proposed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionOutcome {
    /// Run as proposed.
    Run,
    /// Run after the user edited it into `command`.
    Edited { command: String },
    /// Not run by the user's choice; the plan goes on (or is revised, when
    /// the user steered).
    Skipped,
    /// Refused by policy, the judge or the user.
    Denied,
    /// Not run because the user ended the turn here.
    Stopped,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model answered without a tool call.
    Answered,
    /// The user ended it (`q`, Ctrl+C).
    Stopped,
    /// A provider or internal error ended it; an `error` line says which.
    Failed,
    /// The step limit was reached.
    StepLimit,
    /// The token or cost budget ran out.
    Budget,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Block, Role, ToolUse};
    use serde_json::json;

    fn line(entry: JournalEntry) -> JournalLine {
        JournalLine { seq: 7, ts: 1_763_755_985_123, entry }
    }

    #[test]
    fn entry_fields_sit_beside_seq_and_ts() {
        let l = line(JournalEntry::Instruction { turn: 1, text: "list big files".into() });
        let v = serde_json::to_value(&l).unwrap();
        assert_eq!(
            v,
            json!({"seq": 7, "ts": 1_763_755_985_123u64, "type": "instruction", "turn": 1, "text": "list big files"})
        );
        assert_eq!(serde_json::from_value::<JournalLine>(v).unwrap(), l);
    }

    #[test]
    fn every_variant_round_trips() {
        let call = ToolUse { id: "t1".into(), name: "shell".into(), input: json!({"command": "ls"}) };
        let entries = vec![
            JournalEntry::SessionStart {
                session: "s".into(),
                pid: 42,
                shell: "/bin/bash".into(),
                cwd: "/tmp".into(),
                os: "linux".into(),
                version: "0.1.0".into(),
            },
            JournalEntry::ModelRequest {
                turn: 1,
                call: 1,
                backend: "anthropic".into(),
                model: "m".into(),
                system: "sys".into(),
                messages_appended: vec![Message::user_text("hi")],
                omitted: vec![[0, 2]],
                tools: Some(vec![crate::tool::shell_tool()]),
                purpose: CallPurpose::Conversation,
            },
            JournalEntry::ModelRequest {
                turn: 9,
                call: 3,
                backend: "anthropic".into(),
                model: "m".into(),
                system: "Summarise.".into(),
                messages_appended: vec![Message::user_text("turns 1 to 7")],
                omitted: vec![],
                tools: None,
                purpose: CallPurpose::Summary,
            },
            JournalEntry::ModelResponse {
                turn: 1,
                call: 1,
                message: Message { role: Role::Assistant, content: vec![Block::ToolUse(call)] },
                usage: Some(Usage { input_tokens: 1, output_tokens: 2, ..Usage::default() }),
                stop: Some(StopReason::ToolUse),
                purpose: CallPurpose::Conversation,
            },
            JournalEntry::ModelResponse {
                turn: 9,
                call: 3,
                message: Message::assistant_text("The user set up a build."),
                usage: None,
                stop: Some(StopReason::EndTurn),
                purpose: CallPurpose::Summary,
            },
            JournalEntry::CommandIntent {
                turn: 1,
                tool_use_id: "t1".into(),
                command: "rm -r build".into(),
                read_only: false,
            },
            JournalEntry::ToolResult {
                turn: 1,
                tool_use_id: "t1".into(),
                command: "ls".into(),
                exit_code: Some(0),
                output: "a\n".into(),
                is_error: false,
                truncated: false,
                duration_ms: 12,
            },
            JournalEntry::Decision {
                turn: 1,
                tool_use_id: "t1".into(),
                command: "ls".into(),
                risk: "read_only".into(),
                outcome: DecisionOutcome::Edited { command: "ls -l".into() },
                decided_by: "user".into(),
                approver: Some("alice".into()),
            },
            JournalEntry::UserCommand { command: "cd /".into(), cwd: None, exit_code: Some(0), output: String::new() },
            JournalEntry::TurnEnd {
                turn: 1,
                reason: TurnEndReason::Answered,
                usage: Usage::default(),
                commands: 1,
                cost_micros: None,
                descendants: None,
            },
            JournalEntry::Error { turn: None, message: "boom".into() },
            JournalEntry::Summary {
                turn: 9,
                covers_through_turn: 7,
                text: "The user set up a build.".into(),
                model: "m".into(),
                usage: Some(Usage { input_tokens: 900, output_tokens: 40, ..Usage::default() }),
            },
            JournalEntry::Checkpoint {
                turn: 9,
                conversation_from: JournalPos { seq: 700, offset: 1_048_576 },
                summary: Some(JournalPos { seq: 790, offset: 1_100_000 }),
                tools: Some(JournalPos { seq: 2, offset: 212 }),
            },
            JournalEntry::Checkpoint {
                turn: 1,
                conversation_from: JournalPos { seq: 3, offset: 400 },
                summary: None,
                tools: None,
            },
            JournalEntry::Resumed {
                pid: 7,
                version: "0.2.0".into(),
                shell: "/bin/zsh".into(),
                cwd: "/w".into(),
                from_checkpoint: Some(812),
            },
            JournalEntry::SessionEnd { exit_code: None },
        ];
        for e in entries {
            let s = serde_json::to_string(&line(e.clone())).unwrap();
            assert!(!s.contains('\n'), "{s}");
            assert_eq!(serde_json::from_str::<JournalLine>(&s).unwrap().entry, e, "{s}");
        }
    }

    #[test]
    fn decision_outcome_is_flat() {
        let v = serde_json::to_value(DecisionOutcome::Edited { command: "x".into() }).unwrap();
        assert_eq!(v, json!({"kind": "edited", "command": "x"}));
    }

    #[test]
    fn unchanged_tools_and_empty_omissions_are_left_out() {
        let e = JournalEntry::ModelRequest {
            turn: 1,
            call: 2,
            backend: "b".into(),
            model: "m".into(),
            system: String::new(),
            messages_appended: vec![],
            omitted: vec![],
            tools: None,
            purpose: CallPurpose::Conversation,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert!(v.get("tools").is_none() && v.get("omitted").is_none() && v.get("purpose").is_none(), "{v}");
    }

    #[test]
    fn new_entries_have_the_documented_shape() {
        let c = line(JournalEntry::Checkpoint {
            turn: 41,
            conversation_from: JournalPos { seq: 700, offset: 1_048_576 },
            summary: Some(JournalPos { seq: 690, offset: 1_000_000 }),
            tools: None,
        });
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"seq": 7, "ts": 1_763_755_985_123u64, "type": "checkpoint", "turn": 41,
                   "conversation_from": {"seq": 700, "offset": 1_048_576},
                   "summary": {"seq": 690, "offset": 1_000_000}})
        );
        let i = JournalEntry::CommandIntent { turn: 2, tool_use_id: "t".into(), command: "ls".into(), read_only: true };
        assert_eq!(
            serde_json::to_value(&i).unwrap(),
            json!({"type": "command_intent", "turn": 2, "tool_use_id": "t", "command": "ls", "read_only": true})
        );
        let r = JournalEntry::ModelResponse {
            turn: 9,
            call: 3,
            message: Message::assistant_text("s"),
            usage: None,
            stop: None,
            purpose: CallPurpose::Summary,
        };
        assert_eq!(serde_json::to_value(&r).unwrap()["purpose"], "summary");
    }

    /// Lines written before summaries and checkpoints existed still parse,
    /// as conversation calls.
    #[test]
    fn old_lines_parse() {
        let req = r#"{"seq":3,"ts":5,"type":"model_request","turn":1,"call":1,"backend":"anthropic","model":"m","system":"s","messages_appended":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
        let resp =
            r#"{"seq":4,"ts":6,"type":"model_response","turn":1,"call":1,"message":{"role":"assistant","content":[]}}"#;
        let result = r#"{"seq":5,"ts":7,"type":"tool_result","turn":1,"tool_use_id":"t","command":"ls","output":"a"}"#;
        for raw in [req, resp, result] {
            let l: JournalLine = serde_json::from_str(raw).unwrap();
            match l.entry {
                JournalEntry::ModelRequest { purpose, .. } | JournalEntry::ModelResponse { purpose, .. } => {
                    assert_eq!(purpose, CallPurpose::Conversation);
                }
                JournalEntry::ToolResult { is_error, exit_code, .. } => assert!(!is_error && exit_code.is_none()),
                other => panic!("{other:?}"),
            }
        }
    }
}
