//! The lines of `index.jsonl`, and how a journal turns into them.
//!
//! [`RecordFeed`] is the one mapping from journal entries to index records.
//! A running session feeds it every entry it journals and appends what comes
//! out; [`Index::reindex`](super::Index::reindex) feeds it whole journals.
//! Both paths going through the same function is what makes a rebuilt index
//! equal to the one built as the sessions ran.

use serde::{Deserialize, Serialize};
use ua_protocol::event::Usage;
use ua_protocol::journal::{JournalEntry, JournalLine};

use super::fold::{SessionState, SessionSummary};
use super::usage::DayUsage;
use crate::session::SessionMeta;

/// How much of an instruction the index keeps: enough to recognise a
/// session in a list, and short enough that a line stays well under 4 KiB.
pub const INSTRUCTION_CHARS: usize = 200;

/// One line of the index. Every record names its session; `ts` is
/// milliseconds since the Unix epoch, UTC, as in the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "FlatRecord")]
pub enum Record {
    /// A session began.
    Start {
        id: String,
        ts: u64,
        cwd: String,
        shell: String,
        pid: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
        /// Usually `None`: the first instruction comes with the first turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_instruction: Option<String>,
    },
    /// A turn ended. `usage` and `commands` are this turn's, not running
    /// totals, so the fold adds them up.
    Turn {
        id: String,
        ts: u64,
        turn: u32,
        /// The turn's instruction, cut to [`INSTRUCTION_CHARS`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instruction: Option<String>,
        usage: Usage,
        #[serde(default)]
        commands: u32,
        /// The turn's cost in millionths of a US dollar, when priced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_micros: Option<u64>,
    },
    /// A session ended cleanly.
    End {
        id: String,
        ts: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// A session was taken up again, by the process `pid`.
    Resumed { id: String, ts: u64, pid: u32 },
    /// A session's directory was removed; earlier records about it no
    /// longer count.
    Pruned { id: String, ts: u64 },
    /// A whole session folded into one line, as compaction and reindexing
    /// write it.
    Session(SessionSummary),
}

impl Record {
    /// The session this record is about.
    pub fn id(&self) -> &str {
        match self {
            Record::Start { id, .. }
            | Record::Turn { id, .. }
            | Record::End { id, .. }
            | Record::Resumed { id, .. }
            | Record::Pruned { id, .. } => id,
            Record::Session(s) => &s.id,
        }
    }

    /// This record with every instruction cut to [`INSTRUCTION_CHARS`], or
    /// `None` when it already fits.
    pub(crate) fn capped(&self) -> Option<Record> {
        let long = |t: &Option<String>| t.as_deref().is_some_and(|t| t.chars().nth(INSTRUCTION_CHARS).is_some());
        let mut out = self.clone();
        match &mut out {
            Record::Start { first_instruction: t, .. } | Record::Turn { instruction: t, .. } if long(t) => {
                *t = t.as_deref().map(cap_instruction);
            }
            Record::Session(s) if long(&s.first_instruction) => {
                s.first_instruction = s.first_instruction.as_deref().map(cap_instruction);
            }
            _ => return None,
        }
        Some(out)
    }
}

/// Every field of every record in one flat struct. Reading through it is
/// about twice as fast as serde's internally tagged enums, which buffer
/// each object into a generic tree before picking the variant, and reading
/// is what `sessions list` and `--usage` spend their time on.
#[derive(Deserialize)]
struct FlatRecord {
    #[serde(rename = "type")]
    kind: Kind,
    id: String,
    ts: Option<u64>,
    cwd: Option<String>,
    shell: Option<String>,
    pid: Option<u32>,
    parent: Option<String>,
    first_instruction: Option<String>,
    turn: Option<u32>,
    instruction: Option<String>,
    usage: Option<Usage>,
    commands: Option<u64>,
    cost_micros: Option<u64>,
    priced_turns: Option<u32>,
    exit_code: Option<i32>,
    started_ms: Option<u64>,
    turns: Option<u32>,
    last_active_ms: Option<u64>,
    ended_ms: Option<u64>,
    days: Option<Vec<DayUsage>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Start,
    Turn,
    End,
    Resumed,
    Pruned,
    Session,
}

impl TryFrom<FlatRecord> for Record {
    type Error = String;

    fn try_from(r: FlatRecord) -> Result<Self, String> {
        fn need<T>(field: Option<T>, name: &str) -> Result<T, String> {
            field.ok_or_else(|| format!("missing field `{name}`"))
        }
        let ts = || need(r.ts, "ts");
        Ok(match r.kind {
            Kind::Start => Record::Start {
                ts: ts()?,
                cwd: need(r.cwd, "cwd")?,
                shell: need(r.shell, "shell")?,
                pid: need(r.pid, "pid")?,
                parent: r.parent,
                first_instruction: r.first_instruction,
                id: r.id,
            },
            Kind::Turn => Record::Turn {
                ts: ts()?,
                turn: need(r.turn, "turn")?,
                instruction: r.instruction,
                usage: need(r.usage, "usage")?,
                commands: u32::try_from(r.commands.unwrap_or(0)).map_err(|e| e.to_string())?,
                cost_micros: r.cost_micros,
                id: r.id,
            },
            Kind::End => Record::End { ts: ts()?, exit_code: r.exit_code, id: r.id },
            Kind::Resumed => Record::Resumed { ts: ts()?, pid: need(r.pid, "pid")?, id: r.id },
            Kind::Pruned => Record::Pruned { ts: r.ts.unwrap_or(0), id: r.id },
            Kind::Session => Record::Session(SessionSummary {
                started_ms: need(r.started_ms, "started_ms")?,
                last_active_ms: need(r.last_active_ms, "last_active_ms")?,
                cwd: r.cwd.unwrap_or_default(),
                shell: r.shell.unwrap_or_default(),
                pid: r.pid.unwrap_or(0),
                parent: r.parent,
                first_instruction: r.first_instruction,
                turns: r.turns.unwrap_or(0),
                usage: r.usage.unwrap_or_default(),
                commands: r.commands.unwrap_or(0),
                cost_micros: r.cost_micros.unwrap_or(0),
                priced_turns: r.priced_turns.unwrap_or(0),
                ended_ms: r.ended_ms,
                exit_code: r.exit_code,
                days: r.days.unwrap_or_default(),
                state: SessionState::default(),
                id: r.id,
            }),
        })
    }
}

/// The first [`INSTRUCTION_CHARS`] characters of `text`.
pub fn cap_instruction(text: &str) -> String {
    text.chars().take(INSTRUCTION_CHARS).collect()
}

/// Turns one session's journal entries into index records, in order.
#[derive(Debug, Clone)]
pub struct RecordFeed {
    id: String,
    parent: Option<String>,
    started: bool,
    /// The first instruction of the turn in progress.
    instruction: Option<(u32, String)>,
}

impl RecordFeed {
    /// A feed for the session `id` (the directory's id, which is what the
    /// index knows sessions by). `parent` comes from `meta.json`: the
    /// journal does not carry it.
    pub fn new(id: impl Into<String>, parent: Option<String>) -> Self {
        RecordFeed { id: id.into(), parent, started: false, instruction: None }
    }

    /// The record, if any, that the journal entry `entry` written at `ts`
    /// adds to the index. The first `session_start` starts the session;
    /// a later one (the session was resumed) is a [`Record::Resumed`].
    pub fn feed(&mut self, ts: u64, entry: &JournalEntry) -> Option<Record> {
        let id = self.id.clone();
        match entry {
            JournalEntry::SessionStart { pid, shell, cwd, .. } if !self.started => {
                self.started = true;
                Some(Record::Start {
                    id,
                    ts,
                    cwd: cwd.clone(),
                    shell: shell.clone(),
                    pid: *pid,
                    parent: self.parent.clone(),
                    first_instruction: None,
                })
            }
            JournalEntry::SessionStart { pid, .. } | JournalEntry::Resumed { pid, .. } => {
                Some(Record::Resumed { id, ts, pid: *pid })
            }
            // Steering lines are instructions of the same turn; the first
            // one says what the turn was about.
            JournalEntry::Instruction { turn, text } => {
                if self.instruction.as_ref().is_none_or(|(t, _)| t != turn) {
                    self.instruction = Some((*turn, cap_instruction(text)));
                }
                None
            }
            JournalEntry::TurnEnd { turn, usage, commands, cost_micros, .. } => {
                let instruction = self.instruction.take().filter(|(t, _)| t == turn).map(|(_, text)| text);
                Some(Record::Turn {
                    id,
                    ts,
                    turn: *turn,
                    instruction,
                    usage: *usage,
                    commands: *commands,
                    cost_micros: *cost_micros,
                })
            }
            JournalEntry::SessionEnd { exit_code } => Some(Record::End { id, ts, exit_code: *exit_code }),
            JournalEntry::ModelRequest { .. }
            | JournalEntry::ModelResponse { .. }
            | JournalEntry::ToolResult { .. }
            | JournalEntry::Decision { .. }
            | JournalEntry::UserCommand { .. }
            | JournalEntry::Error { .. }
            | JournalEntry::CommandIntent { .. }
            | JournalEntry::Summary { .. }
            | JournalEntry::Checkpoint { .. }
            | JournalEntry::Child { .. } => None,
        }
    }
}

/// Every record a session's journal implies. A journal without a
/// `session_start` line (the session died before writing it, or the
/// journal is gone) still yields a start, taken from `meta.json`.
pub fn records_from_journal(meta: &SessionMeta, lines: &[JournalLine]) -> Vec<Record> {
    let mut feed = RecordFeed::new(meta.id.clone(), meta.parent.clone());
    let mut out = Vec::new();
    if !lines.iter().any(|l| matches!(l.entry, JournalEntry::SessionStart { .. })) {
        feed.started = true;
        out.push(Record::Start {
            id: meta.id.clone(),
            ts: meta.created_ms,
            cwd: meta.cwd.clone(),
            shell: meta.shell.clone(),
            pid: meta.pid,
            parent: meta.parent.clone(),
            first_instruction: None,
        });
    }
    out.extend(lines.iter().filter_map(|l| feed.feed(l.ts, &l.entry)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::journal::TurnEndReason;

    fn start(pid: u32) -> JournalEntry {
        JournalEntry::SessionStart {
            session: "journal-id".into(),
            pid,
            shell: "/bin/bash".into(),
            cwd: "/src".into(),
            os: "linux".into(),
            version: "0.1.0".into(),
        }
    }

    fn turn_end(turn: u32, input: u64) -> JournalEntry {
        JournalEntry::TurnEnd {
            turn,
            reason: TurnEndReason::Answered,
            usage: Usage { input_tokens: input, output_tokens: 1, ..Usage::default() },
            commands: 2,
            cost_micros: None,
            descendants: None,
        }
    }

    #[test]
    fn a_journal_maps_to_start_turns_resume_and_end() {
        let mut feed = RecordFeed::new("dir-id", Some("parent-id".into()));
        let entries = [
            start(10),
            JournalEntry::Instruction { turn: 1, text: "find big files".into() },
            JournalEntry::Instruction { turn: 1, text: "only under /var".into() },
            JournalEntry::Error { turn: Some(1), message: "x".into() },
            turn_end(1, 100),
            turn_end(2, 50),
            start(11),
            JournalEntry::SessionEnd { exit_code: Some(0) },
        ];
        let out: Vec<Record> = entries.iter().enumerate().filter_map(|(i, e)| feed.feed(i as u64, e)).collect();
        assert_eq!(
            out,
            [
                Record::Start {
                    id: "dir-id".into(),
                    ts: 0,
                    cwd: "/src".into(),
                    shell: "/bin/bash".into(),
                    pid: 10,
                    parent: Some("parent-id".into()),
                    first_instruction: None,
                },
                Record::Turn {
                    id: "dir-id".into(),
                    ts: 4,
                    turn: 1,
                    instruction: Some("find big files".into()),
                    usage: Usage { input_tokens: 100, output_tokens: 1, ..Usage::default() },
                    commands: 2,
                    cost_micros: None
                },
                Record::Turn {
                    id: "dir-id".into(),
                    ts: 5,
                    turn: 2,
                    instruction: None,
                    usage: Usage { input_tokens: 50, output_tokens: 1, ..Usage::default() },
                    commands: 2,
                    cost_micros: None
                },
                Record::Resumed { id: "dir-id".into(), ts: 6, pid: 11 },
                Record::End { id: "dir-id".into(), ts: 7, exit_code: Some(0) },
            ]
        );
    }

    #[test]
    fn instructions_are_cut_to_200_characters() {
        let mut feed = RecordFeed::new("s", None);
        feed.feed(0, &JournalEntry::Instruction { turn: 1, text: "é".repeat(500) });
        let Some(Record::Turn { instruction: Some(text), .. }) = feed.feed(1, &turn_end(1, 1)) else {
            panic!("a turn record with its instruction")
        };
        assert_eq!(text.chars().count(), INSTRUCTION_CHARS);

        let long = Record::Turn {
            id: "s".into(),
            ts: 0,
            turn: 1,
            instruction: Some("x".repeat(201)),
            usage: Usage::default(),
            commands: 0,
            cost_micros: None,
        };
        let Some(Record::Turn { instruction: Some(text), .. }) = long.capped() else { panic!("capped") };
        assert_eq!(text.len(), 200);
        assert_eq!(Record::End { id: "s".into(), ts: 0, exit_code: None }.capped(), None);
    }

    #[test]
    fn a_journal_without_start_starts_from_meta() {
        let meta = SessionMeta {
            id: "m".into(),
            created_ms: 77,
            pid: 5,
            shell: "/bin/zsh".into(),
            cwd: "/home".into(),
            version: "0.1.0".into(),
            parent: None,
            trace_id: None,
            trace_parent: None,
            parent_command: None,
            depth: 0,
        };
        let out = records_from_journal(&meta, &[JournalLine { seq: 1, ts: 80, entry: turn_end(1, 3) }]);
        assert!(matches!(&out[0], Record::Start { ts: 77, pid: 5, cwd, .. } if cwd == "/home"), "{out:?}");
        assert!(matches!(&out[1], Record::Turn { ts: 80, .. }), "{out:?}");
    }

    #[test]
    fn every_record_reads_back_as_written() {
        let usage = Usage { input_tokens: 1, output_tokens: 2, cache_read_tokens: 3, cache_write_tokens: 4 };
        let mut summary: SessionSummary = serde_json::from_str(
            r#"{"type":"session","id":"s","started_ms":1,"last_active_ms":9,"cwd":"/","shell":"sh","pid":4,
                "parent":"p","first_instruction":"hi","turns":2,"commands":5,"ended_ms":9,"exit_code":1,
                "usage":{"input_tokens":1,"output_tokens":2,"cache_read_tokens":3,"cache_write_tokens":4},
                "days":[{"day":3,"turns":2,"usage":{"input_tokens":1,"output_tokens":2}}]}"#,
        )
        .unwrap();
        summary.days[0].usage = usage;
        let records = [
            Record::Start {
                id: "s".into(),
                ts: 1,
                cwd: "/".into(),
                shell: "sh".into(),
                pid: 4,
                parent: Some("p".into()),
                first_instruction: Some("hi".into()),
            },
            Record::Turn {
                id: "s".into(),
                ts: 2,
                turn: 1,
                instruction: Some("hi".into()),
                usage,
                commands: 5,
                cost_micros: None,
            },
            Record::End { id: "s".into(), ts: 3, exit_code: Some(-1) },
            Record::End { id: "s".into(), ts: 3, exit_code: None },
            Record::Resumed { id: "s".into(), ts: 4, pid: 5 },
            Record::Pruned { id: "s".into(), ts: 6 },
            Record::Session(summary),
        ];
        for r in records {
            let line = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), r, "{line}");
        }
    }

    #[test]
    fn records_missing_a_field_are_not_records() {
        for line in [
            r#"{"type":"start","id":"s","ts":1,"cwd":"/","shell":"sh"}"#,
            r#"{"type":"turn","id":"s","ts":1,"turn":1}"#,
            r#"{"type":"end","ts":1}"#,
            r#"{"type":"resumed","id":"s","pid":1}"#,
            r#"{"type":"session","id":"s","started_ms":1}"#,
            r#"{"type":"turn","id":"s","ts":1,"turn":1,"usage":{"input_tokens":1,"output_tokens":1},"commands":-1}"#,
            r#"{"type":"mystery","id":"s","ts":1}"#,
            r#"{"id":"s","ts":1}"#,
        ] {
            assert!(serde_json::from_str::<Record>(line).is_err(), "{line}");
        }
    }

    #[test]
    fn lines_are_flat_json_objects() {
        let r = Record::Resumed { id: "s".into(), ts: 3, pid: 9 };
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(s, r#"{"type":"resumed","id":"s","ts":3,"pid":9}"#);
        assert_eq!(serde_json::from_str::<Record>(&s).unwrap(), r);
    }
}
