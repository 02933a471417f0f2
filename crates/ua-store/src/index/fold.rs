//! Folding index records into one summary per session. Pure: the only
//! thing it needs from the world, whether a process is alive, is passed in.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use ua_protocol::event::Usage;

use super::record::Record;
use super::usage::DayUsage;

/// Compaction is worth it once the file holds more than this many lines
/// per session ...
pub const COMPACT_LINES_PER_SESSION: usize = 4;
/// ... and more than this many lines in all: below that, reading the file
/// costs less than rewriting it.
pub const COMPACT_MIN_LINES: usize = 1000;

const DAY_MS: u64 = 86_400_000;

pub(crate) fn needs_compaction(lines: usize, sessions: usize) -> bool {
    lines > COMPACT_MIN_LINES && lines > COMPACT_LINES_PER_SESSION.saturating_mul(sessions)
}

/// Everything the index knows about one session. This is also the shape
/// of a compacted line (`"type":"session"`), less `state`, which is worked
/// out when the index is loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    /// When the session started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// The directory the session started in; empty if unknown.
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub shell: String,
    /// The process that last ran the session (it started it, or resumed it).
    #[serde(default)]
    pub pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_instruction: Option<String>,
    #[serde(default)]
    pub turns: u32,
    /// Tokens over every turn.
    #[serde(default)]
    pub usage: Usage,
    /// Commands run by the agent over every turn.
    #[serde(default)]
    pub commands: u64,
    /// What the priced turns cost, in millionths of a US dollar.
    #[serde(default)]
    pub cost_micros: u64,
    /// Turns whose model had a price (`[pricing]`); the others cost an
    /// unknown amount.
    #[serde(default)]
    pub priced_turns: u32,
    /// The newest record about the session.
    pub last_active_ms: u64,
    /// When the session ended cleanly; `None` while it runs or if it crashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Usage per UTC day, oldest first; only days with a turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub days: Vec<DayUsage>,
    /// Running, ended or crashed, as of loading.
    #[serde(skip)]
    pub state: SessionState,
}

/// Whether a session is still going.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionState {
    /// No end record, and its process is alive.
    Running { pid: u32 },
    /// It ended cleanly.
    Ended { exit_code: Option<i32> },
    /// No end record, and its process is gone.
    #[default]
    Crashed,
}

impl SessionSummary {
    fn new(id: String, ts: u64) -> Self {
        SessionSummary {
            id,
            started_ms: ts,
            cwd: String::new(),
            shell: String::new(),
            pid: 0,
            parent: None,
            first_instruction: None,
            turns: 0,
            usage: Usage::default(),
            commands: 0,
            cost_micros: 0,
            priced_turns: 0,
            last_active_ms: ts,
            ended_ms: None,
            exit_code: None,
            days: Vec::new(),
            state: SessionState::Crashed,
        }
    }

    fn add_turn(&mut self, ts: u64, usage: &Usage, commands: u32, cost_micros: Option<u64>) {
        self.turns += 1;
        self.usage.add(usage);
        self.commands += u64::from(commands);
        if let Some(c) = cost_micros {
            self.cost_micros += c;
            self.priced_turns += 1;
        }
        let day = ts / DAY_MS;
        // Turns arrive in time order, so the day is almost always the last.
        match self.days.iter().rposition(|d| d.day <= day) {
            Some(i) if self.days[i].day == day => self.days[i].add(usage, commands, cost_micros),
            at => {
                let mut d =
                    DayUsage { day, turns: 0, usage: Usage::default(), commands: 0, cost_micros: 0, priced_turns: 0 };
                d.add(usage, commands, cost_micros);
                self.days.insert(at.map_or(0, |i| i + 1), d);
            }
        }
    }

    fn settle(&mut self, alive: &mut impl FnMut(u32) -> bool) {
        self.state = match self.ended_ms {
            Some(_) => SessionState::Ended { exit_code: self.exit_code },
            None if alive(self.pid) => SessionState::Running { pid: self.pid },
            None => SessionState::Crashed,
        };
    }
}

/// The summary of `id`, created by its first record, made active at `ts`.
fn session(sessions: &mut HashMap<String, SessionSummary>, id: String, ts: u64) -> &mut SessionSummary {
    let s = sessions.entry(id).or_insert_with_key(|id| SessionSummary::new(id.clone(), ts));
    s.last_active_ms = s.last_active_ms.max(ts);
    s
}

/// Records folded so far, with what could not be read.
#[derive(Debug, Default)]
pub(crate) struct Fold {
    sessions: HashMap<String, SessionSummary>,
    /// Tombstoned ids: later stray records must not bring them back.
    pruned: HashSet<String>,
    /// Non-blank lines seen.
    pub(crate) lines: usize,
    /// Lines that were not records.
    pub(crate) skipped: usize,
    /// The file ended in a fragment: a write in progress, or cut short.
    torn_tail: bool,
}

impl Fold {
    /// Folds the bytes of an index file, skipping blank lines and counting
    /// lines that are not records (a torn last line is not counted as
    /// skipped: it is most likely an append still in flight).
    pub(crate) fn parse(bytes: &[u8]) -> Fold {
        let mut fold = Fold::default();
        let mut pieces = bytes.split(|&b| b == b'\n').peekable();
        while let Some(raw) = pieces.next() {
            let last = pieces.peek().is_none();
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            fold.lines += 1;
            match serde_json::from_slice::<Record>(raw) {
                Ok(record) => fold.apply(record),
                Err(_) if last => fold.torn_tail = true,
                Err(_) => fold.skipped += 1,
            }
        }
        fold
    }

    pub(crate) fn apply(&mut self, record: Record) {
        if self.pruned.contains(record.id()) {
            return;
        }
        match record {
            Record::Start { id, ts, cwd, shell, pid, parent, first_instruction } => {
                let s = session(&mut self.sessions, id, ts);
                s.started_ms = ts;
                s.cwd = cwd;
                s.shell = shell;
                s.pid = pid;
                s.parent = parent.or(s.parent.take());
                s.first_instruction = s.first_instruction.take().or(first_instruction);
            }
            Record::Turn { id, ts, instruction, usage, commands, cost_micros, .. } => {
                let s = session(&mut self.sessions, id, ts);
                s.add_turn(ts, &usage, commands, cost_micros);
                if s.first_instruction.is_none() {
                    s.first_instruction = instruction;
                }
            }
            Record::End { id, ts, exit_code } => {
                let s = session(&mut self.sessions, id, ts);
                s.ended_ms = Some(ts);
                s.exit_code = exit_code;
            }
            Record::Resumed { id, ts, pid } => {
                let s = session(&mut self.sessions, id, ts);
                s.pid = pid;
                s.ended_ms = None;
                s.exit_code = None;
            }
            Record::Pruned { id, .. } => {
                self.sessions.remove(&id);
                self.pruned.insert(id);
            }
            Record::Session(summary) => {
                self.sessions.insert(summary.id.clone(), summary);
            }
        }
    }

    /// The folded sessions without their state, oldest first: what a
    /// compacted file holds.
    pub(crate) fn into_sessions(self) -> Vec<SessionSummary> {
        let mut v: Vec<SessionSummary> = self.sessions.into_values().collect();
        v.sort_by(|a, b| (a.started_ms, &a.id).cmp(&(b.started_ms, &b.id)));
        v
    }

    /// The summaries, newest first, each with its state; `alive` says
    /// whether a process id still runs.
    pub(crate) fn finish(self, mut alive: impl FnMut(u32) -> bool) -> Summaries {
        let (lines, skipped, torn_tail) = (self.lines, self.skipped, self.torn_tail);
        let mut sessions = self.into_sessions();
        sessions.reverse();
        for s in &mut sessions {
            s.settle(&mut alive);
        }
        Summaries { sessions, lines, skipped, torn_tail, read_as: None }
    }
}

/// The index, folded: one summary per session, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summaries {
    pub(crate) sessions: Vec<SessionSummary>,
    /// Non-blank lines in the file.
    pub lines: usize,
    /// Lines that were not index records and were skipped.
    pub skipped: usize,
    /// The file ended in an unfinished line (an append in flight, or a
    /// write cut short); it was skipped and is not counted in `skipped`.
    pub torn_tail: bool,
    /// The file's inode and length when it was read, so that a compaction
    /// can tell it has not changed since and reuse this fold.
    pub(crate) read_as: Option<(u64, u64)>,
}

impl Summaries {
    /// Every session, newest first.
    pub fn sessions(&self) -> &[SessionSummary] {
        &self.sessions
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    pub fn get(&self, id: &str) -> Option<&SessionSummary> {
        self.sessions.iter().find(|s| s.id == id)
    }

    /// The sessions started in `cwd`, newest first.
    pub fn in_cwd<'a>(&'a self, cwd: &'a str) -> impl Iterator<Item = &'a SessionSummary> {
        self.sessions.iter().filter(move |s| s.cwd == cwd)
    }

    /// The newest session started in `cwd`, whatever its state.
    pub fn latest_in(&self, cwd: &str) -> Option<&SessionSummary> {
        self.sessions.iter().find(|s| s.cwd == cwd)
    }

    /// Whether the file has grown enough past one line per session that
    /// rewriting it would pay (see [`COMPACT_LINES_PER_SESSION`] and
    /// [`COMPACT_MIN_LINES`]).
    pub fn needs_compaction(&self) -> bool {
        needs_compaction(self.lines, self.sessions.len())
    }

    /// The session at the top of `id`'s chain of parents that the index
    /// knows (`id` itself for a first session).
    pub fn root_of<'a>(&'a self, id: &'a str) -> &'a str {
        let mut cur = id;
        // A chain longer than the index is a cycle (a corrupt record).
        for _ in 0..=self.sessions.len() {
            match self.get(cur).and_then(|s| s.parent.as_deref()).filter(|p| self.get(p).is_some()) {
                Some(p) => cur = p,
                None => return cur,
            }
        }
        cur
    }

    /// Every session below `id` (children, their children, …), each with
    /// its depth under `id` (1 for a child), in the order a tree is drawn:
    /// a session, then what it started, oldest first.
    pub fn descendants(&self, id: &str) -> Vec<(&SessionSummary, u32)> {
        let mut out = Vec::new();
        let mut seen = HashSet::from([id.to_string()]);
        self.walk(id, 1, &mut seen, &mut out);
        out
    }

    fn walk<'a>(&'a self, id: &str, depth: u32, seen: &mut HashSet<String>, out: &mut Vec<(&'a SessionSummary, u32)>) {
        // Newest first in the index; a tree reads oldest first.
        for child in self.sessions.iter().rev().filter(|s| s.parent.as_deref() == Some(id)) {
            if seen.insert(child.id.clone()) {
                out.push((child, depth));
                self.walk(&child.id, depth + 1, seen, out);
            }
        }
    }

    /// What `id`'s descendants used, added up (each once; `id` itself is
    /// not in it).
    pub fn rollup(&self, id: &str) -> Rollup {
        let mut r = Rollup::default();
        for (s, _) in self.descendants(id) {
            r.sessions += 1;
            r.turns += s.turns;
            r.usage.add(&s.usage);
            r.commands += s.commands;
            r.cost_micros += s.cost_micros;
            r.priced_turns += s.priced_turns;
        }
        r
    }
}

/// Usage added up over sessions (a session's descendants).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rollup {
    pub sessions: u32,
    pub turns: u32,
    pub usage: Usage,
    pub commands: u64,
    pub cost_micros: u64,
    pub priced_turns: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(id: &str, ts: u64, pid: u32) -> Record {
        Record::Start {
            id: id.into(),
            ts,
            cwd: format!("/src/{id}"),
            shell: "/bin/bash".into(),
            pid,
            parent: None,
            first_instruction: None,
        }
    }

    fn turn(id: &str, ts: u64, n: u32, text: Option<&str>, input: u64) -> Record {
        Record::Turn {
            id: id.into(),
            ts,
            turn: n,
            instruction: text.map(Into::into),
            usage: Usage { input_tokens: input, output_tokens: 1, cache_read_tokens: 2, cache_write_tokens: 0 },
            commands: 3,
            cost_micros: None,
        }
    }

    fn fold(records: Vec<Record>, alive: impl FnMut(u32) -> bool) -> Summaries {
        let mut f = Fold::default();
        records.into_iter().for_each(|r| f.apply(r));
        f.finish(alive)
    }

    #[test]
    fn records_fold_into_one_summary_per_session_newest_first() {
        let day = DAY_MS;
        let s = fold(
            vec![
                start("a", 10, 1),
                start("b", 20, 2),
                turn("a", 30, 1, Some("first"), 100),
                turn("a", day + 5, 2, Some("second"), 10),
                Record::End { id: "b".into(), ts: 40, exit_code: Some(3) },
            ],
            |_| false,
        );
        let ids: Vec<&str> = s.sessions().iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
        let a = s.get("a").unwrap();
        assert_eq!(a.first_instruction.as_deref(), Some("first"));
        assert_eq!((a.turns, a.commands, a.usage.input_tokens, a.usage.cache_read_tokens), (2, 6, 110, 4));
        assert_eq!((a.started_ms, a.last_active_ms, a.cwd.as_str()), (10, day + 5, "/src/a"));
        assert_eq!(
            a.days.iter().map(|d| (d.day, d.turns, d.usage.input_tokens)).collect::<Vec<_>>(),
            [(0, 1, 100), (1, 1, 10)]
        );
        assert_eq!(a.state, SessionState::Crashed);
        assert_eq!(s.get("b").unwrap().state, SessionState::Ended { exit_code: Some(3) });
        assert_eq!(s.latest_in("/src/a").map(|s| s.id.as_str()), Some("a"));
        assert_eq!(s.latest_in("/nowhere"), None);
    }

    #[test]
    fn children_hang_under_their_root_and_their_usage_adds_up_once() {
        let child = |id: &str, ts: u64, parent: &str| Record::Start {
            id: id.into(),
            ts,
            cwd: "/elsewhere".into(),
            shell: "/bin/bash".into(),
            pid: 1,
            parent: Some(parent.into()),
            first_instruction: None,
        };
        let s = fold(
            vec![
                start("root", 1, 1),
                child("c1", 2, "root"),
                child("c2", 3, "root"),
                child("g1", 4, "c1"),
                start("other", 5, 1),
                turn("root", 6, 1, None, 100),
                turn("c1", 7, 1, None, 10),
                turn("g1", 8, 1, None, 1),
                turn("g1", 9, 2, None, 1),
                // A parent the index does not know: a root of its own.
                child("lost", 10, "gone"),
            ],
            |_| false,
        );
        let tree: Vec<(&str, u32)> = s.descendants("root").iter().map(|(s, d)| (s.id.as_str(), *d)).collect();
        assert_eq!(tree, [("c1", 1), ("g1", 2), ("c2", 1)]);
        assert_eq!(s.root_of("g1"), "root");
        assert_eq!(s.root_of("lost"), "lost");
        assert_eq!(s.root_of("other"), "other");
        let r = s.rollup("root");
        assert_eq!((r.sessions, r.turns, r.commands, r.usage.input_tokens), (3, 3, 9, 12));
        assert_eq!(s.rollup("c2"), Rollup::default());
        // A cycle in corrupt records ends.
        let looped = fold(vec![child("x", 1, "y"), child("y", 2, "x")], |_| false);
        assert_eq!(looped.descendants("x").len(), 1);
        assert!(["x", "y"].contains(&looped.root_of("x")));
    }

    #[test]
    fn liveness_decides_between_running_and_crashed() {
        let s = fold(vec![start("up", 1, 100), start("down", 2, 200)], |pid| pid == 100);
        assert_eq!(s.get("up").unwrap().state, SessionState::Running { pid: 100 });
        assert_eq!(s.get("down").unwrap().state, SessionState::Crashed);
    }

    #[test]
    fn a_resume_reopens_an_ended_session_under_the_new_pid() {
        let s = fold(
            vec![
                start("a", 1, 100),
                Record::End { id: "a".into(), ts: 2, exit_code: Some(0) },
                Record::Resumed { id: "a".into(), ts: 3, pid: 300 },
            ],
            |pid| pid == 300,
        );
        let a = s.get("a").unwrap();
        assert_eq!((a.state, a.last_active_ms, a.started_ms), (SessionState::Running { pid: 300 }, 3, 1));
    }

    #[test]
    fn tombstones_drop_a_session_for_good() {
        let s = fold(
            vec![
                start("a", 1, 1),
                start("b", 2, 2),
                Record::Pruned { id: "a".into(), ts: 5 },
                turn("a", 6, 1, None, 1),
            ],
            |_| false,
        );
        assert_eq!(s.len(), 1);
        assert!(s.get("a").is_none());
    }

    #[test]
    fn torn_and_corrupt_lines_are_counted_not_fatal() {
        let good = serde_json::to_string(&start("a", 1, 1)).unwrap();
        let other = serde_json::to_string(&start("b", 2, 2)).unwrap();
        let bytes = format!("{good}\nnot json\n\n{{\"type\":\"start\"}}\n\u{0}\n{other}\n{{\"type\":\"tu");
        let f = Fold::parse(bytes.as_bytes()).finish(|_| false);
        assert_eq!(f.len(), 2);
        assert_eq!((f.lines, f.skipped, f.torn_tail), (6, 3, true));
        // A fragment glued to a good line by a later append is one bad line.
        let glued = format!("{{\"type\":\"tu{good}\n{other}\n");
        let f = Fold::parse(glued.as_bytes()).finish(|_| false);
        assert_eq!((f.len(), f.skipped, f.torn_tail), (1, 1, false));
    }

    #[test]
    fn a_compacted_line_folds_to_the_same_summary() {
        let records = vec![
            start("a", 1, 1),
            turn("a", 2, 1, Some("x"), 5),
            turn("a", DAY_MS * 3, 2, None, 7),
            Record::End { id: "a".into(), ts: DAY_MS * 3 + 1, exit_code: None },
        ];
        let mut f = Fold::default();
        records.iter().cloned().for_each(|r| f.apply(r));
        let compacted: Vec<String> =
            f.into_sessions().into_iter().map(|s| serde_json::to_string(&Record::Session(s)).unwrap()).collect();
        assert_eq!(compacted.len(), 1);
        assert!(compacted[0].starts_with(r#"{"type":"session","id":"a","#), "{}", compacted[0]);
        let again = Fold::parse(compacted.join("\n").as_bytes()).finish(|_| false);
        assert_eq!(again.sessions(), fold(records, |_| false).sessions());
        assert_eq!(again.lines, 1);
    }

    #[test]
    fn compaction_waits_for_many_more_lines_than_sessions() {
        let with = |lines, n| Summaries {
            read_as: None,
            sessions: vec![SessionSummary::new("a".into(), 0); n],
            lines,
            skipped: 0,
            torn_tail: false,
        };
        assert!(!with(900, 1).needs_compaction(), "small files are left alone");
        assert!(with(1001, 1).needs_compaction());
        assert!(!with(4000, 1000).needs_compaction());
        assert!(with(4001, 1000).needs_compaction());
    }
}
