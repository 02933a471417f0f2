//! Checkpoints: where a resumed session finds its conversation without
//! reading the whole journal.
//!
//! A journal grows with every command's output (hundreds of megabytes for
//! a long session), but the conversation a model call continues is bounded
//! by the model's window: summaries replace older turns. So the writer
//! keeps track, as it appends, of the first line the conversation still
//! needs, and at each turn boundary writes it down twice:
//!
//! 1. a `checkpoint` line in the journal, holding [`JournalPos`]itions
//!    (sequence number and byte offset) of
//!    - `conversation_from`: the first line to fold. With no summary, the
//!      first conversation `model_request`; after a summary covering turns
//!      up to T, the first conversation request of a later turn (it may
//!      precede the summary line, which is written during the turn that
//!      overflowed), or the first conversation request after the summary;
//!      and when there is none yet, the checkpoint line itself;
//!    - `summary`: the `summary` line in force, whose text opens the
//!      conversation;
//!    - `tools`: the latest conversation request that offered tools (a
//!      session offers them once, in its first request);
//!
//! 2. `checkpoint.json` beside the journal, `{"seq":…,"offset":…}` of that
//!    line, replaced atomically (a temporary file, then `rename`).
//!
//! Resuming ([`crate::resume`]) reads the side file, checks that the line
//! at its offset is the checkpoint it names, reads the summary and tools
//! lines by their offsets, and folds from `conversation_from` to the end:
//! work bounded by the conversation, not by the journal. A side file that
//! is missing or does not match (a crash between the line and the rename,
//! a journal edited by hand) costs a scan backwards from the end for the
//! last checkpoint line; a journal without checkpoints (written before
//! they existed) is read whole, as before.
//!
//! Every position is checked before it is trusted: the line found at the
//! offset must start a line, parse, and carry the expected `seq`. Nothing
//! here is synced to disk: after a power loss the side file may name a line
//! that did not survive, which the check catches, and an earlier checkpoint
//! still describes the file correctly.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ua_protocol::journal::{CallPurpose, JournalEntry, JournalPos};

use crate::error::StoreError;
use crate::fold::entry_turn;

/// The name of the side file, in the journal's directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";

/// The side file beside the journal at `journal`.
pub fn side_file(journal: &Path) -> PathBuf {
    journal.with_file_name(CHECKPOINT_FILE)
}

/// What the writer knows about the conversation's extent, fed every line
/// it appends. A plain value: [`Tracker::observe`] does no I/O.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tracker {
    /// The first line the conversation needs, once one exists.
    from: Option<JournalPos>,
    /// The first conversation request of each turn the summary in force
    /// does not cover (of every turn when there is none).
    turn_starts: BTreeMap<u32, JournalPos>,
    /// The summary line in force and the last turn it covers.
    summary: Option<(JournalPos, u32)>,
    tools: Option<JournalPos>,
    turn: u32,
}

impl Tracker {
    /// The state a checkpoint line describes, before the lines from its
    /// `conversation_from` on are observed again. `covers_through_turn` is
    /// that of the summary line the checkpoint names.
    pub(crate) fn restore(checkpoint: &JournalEntry, covers_through_turn: Option<u32>) -> Self {
        let JournalEntry::Checkpoint { turn, summary, tools, .. } = checkpoint else {
            return Tracker::default();
        };
        Tracker {
            from: None,
            turn_starts: BTreeMap::new(),
            summary: summary.zip(covers_through_turn),
            tools: *tools,
            turn: *turn,
        }
    }

    /// Takes note of the line at `pos`.
    pub(crate) fn observe(&mut self, pos: JournalPos, entry: &JournalEntry) {
        if let Some(t) = entry_turn(entry) {
            self.turn = self.turn.max(t);
        }
        match entry {
            JournalEntry::ModelRequest { purpose: CallPurpose::Conversation, turn, tools, .. } => {
                self.turn_starts.entry(*turn).or_insert(pos);
                self.from.get_or_insert(pos);
                if tools.is_some() {
                    self.tools = Some(pos);
                }
            }
            JournalEntry::Summary { covers_through_turn, .. } => {
                self.turn_starts.retain(|t, _| *t > *covers_through_turn);
                self.from = self.turn_starts.values().next().copied();
                self.summary = Some((pos, *covers_through_turn));
            }
            _ => {}
        }
    }

    /// The checkpoint entry for a line about to be written at `own`.
    pub(crate) fn entry(&self, own: JournalPos) -> JournalEntry {
        JournalEntry::Checkpoint {
            turn: self.turn,
            conversation_from: self.from.unwrap_or(own),
            summary: self.summary.map(|(pos, _)| pos),
            tools: self.tools,
        }
    }
}

/// Reads the side file; `None` when it is missing or unreadable, which
/// only makes resuming slower.
pub fn read_side_file(path: &Path) -> Option<(JournalPos, u64)> {
    let bytes = fs::read(path).ok()?;
    let pos = serde_json::from_slice(&bytes).ok()?;
    Some((pos, bytes.len() as u64))
}

/// Replaces the side file with `pos`, atomically.
pub fn write_side_file(path: &Path, pos: JournalPos) -> Result<(), StoreError> {
    let tmp = path.with_file_name(format!(".{CHECKPOINT_FILE}.tmp"));
    let failed = |source| StoreError::Checkpoint { path: path.to_owned(), source };
    let json = serde_json::to_vec(&pos).map_err(|e| failed(io::Error::other(e)))?;
    let mut file = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp).map_err(failed)?;
    file.write_all(&json).map_err(failed)?;
    fs::rename(&tmp, path).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::conversation::Message;

    fn pos(seq: u64) -> JournalPos {
        JournalPos { seq, offset: seq * 100 }
    }

    fn request(turn: u32, tools: bool) -> JournalEntry {
        JournalEntry::ModelRequest {
            turn,
            call: 1,
            backend: "b".into(),
            model: "m".into(),
            system: String::new(),
            messages_appended: vec![Message::user_text("x")],
            omitted: vec![],
            tools: tools.then(|| vec![ua_protocol::tool::shell_tool()]),
            purpose: CallPurpose::Conversation,
        }
    }

    fn summary(turn: u32, covers: u32) -> JournalEntry {
        JournalEntry::Summary { turn, covers_through_turn: covers, text: "s".into(), model: "m".into(), usage: None }
    }

    fn from(t: &Tracker, own: u64) -> JournalPos {
        match t.entry(pos(own)) {
            JournalEntry::Checkpoint { conversation_from, .. } => conversation_from,
            _ => unreachable!(),
        }
    }

    #[test]
    fn without_a_summary_the_first_request_is_where_folding_starts() {
        let mut t = Tracker::default();
        assert_eq!(from(&t, 1), pos(1), "nothing yet: the checkpoint itself");
        t.observe(pos(2), &request(1, true));
        t.observe(pos(3), &request(1, false));
        t.observe(pos(4), &request(2, false));
        assert_eq!(from(&t, 5), pos(2));
        assert_eq!(
            t.entry(pos(5)),
            JournalEntry::Checkpoint { turn: 2, conversation_from: pos(2), summary: None, tools: Some(pos(2)) }
        );
    }

    #[test]
    fn a_summary_moves_the_start_to_the_first_turn_it_does_not_cover() {
        let mut t = Tracker::default();
        for turn in 1..=5 {
            t.observe(pos(u64::from(turn) * 10), &request(turn, turn == 1));
        }
        // Written during turn 5, covering through turn 3: turn 4's first
        // request is earlier in the file than the summary.
        t.observe(pos(55), &summary(5, 3));
        assert_eq!(from(&t, 60), pos(40));
        // A summary covering the turn in progress: the next request starts.
        t.observe(pos(61), &summary(5, 5));
        assert_eq!(from(&t, 62), pos(62));
        t.observe(pos(63), &request(5, false));
        t.observe(pos(64), &request(6, false));
        assert_eq!(from(&t, 65), pos(63));
        let JournalEntry::Checkpoint { summary, tools, .. } = t.entry(pos(65)) else { unreachable!() };
        assert_eq!((summary, tools), (Some(pos(61)), Some(pos(10))));
    }

    #[test]
    fn summary_calls_are_not_conversation_starts() {
        let mut t = Tracker::default();
        t.observe(pos(1), &summary(1, 1));
        let mut call = request(2, false);
        if let JournalEntry::ModelRequest { purpose, .. } = &mut call {
            *purpose = CallPurpose::Summary;
        }
        t.observe(pos(2), &call);
        assert_eq!(from(&t, 3), pos(3));
    }

    #[test]
    fn restoring_then_replaying_gives_the_writers_state() {
        let lines: Vec<(JournalPos, JournalEntry)> = vec![
            (pos(1), request(1, true)),
            (pos(2), request(2, false)),
            (pos(3), summary(3, 1)),
            (pos(4), request(3, false)),
        ];
        let mut live = Tracker::default();
        for (p, e) in &lines {
            live.observe(*p, e);
        }
        let checkpoint = live.entry(pos(5));
        live.observe(pos(5), &checkpoint);
        let JournalEntry::Checkpoint { conversation_from, .. } = &checkpoint else { unreachable!() };
        assert_eq!(*conversation_from, pos(2));

        let mut restored = Tracker::restore(&checkpoint, Some(1));
        for (p, e) in lines.iter().filter(|(p, _)| p.offset >= conversation_from.offset) {
            restored.observe(*p, e);
        }
        restored.observe(pos(5), &checkpoint);
        // A later summary must find turn 3's start, which came before the
        // checkpoint.
        for t in [&mut live, &mut restored] {
            t.observe(pos(6), &summary(4, 2));
        }
        assert_eq!(restored.entry(pos(7)), live.entry(pos(7)));
        assert_eq!(from(&live, 7), pos(4));
    }

    #[test]
    fn the_side_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = side_file(&dir.path().join("journal.jsonl"));
        assert_eq!(read_side_file(&path), None);
        write_side_file(&path, pos(3)).unwrap();
        write_side_file(&path, pos(9)).unwrap();
        assert_eq!(read_side_file(&path).map(|(p, _)| p), Some(pos(9)));
        fs::write(&path, b"{\"seq\":").unwrap();
        assert_eq!(read_side_file(&path), None);
    }
}
