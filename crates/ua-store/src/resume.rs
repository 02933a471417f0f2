//! Reopening a session: the conversation, the tools and the turn number a
//! resumed session continues with, read from the latest checkpoint on (see
//! [`crate::checkpoint`] for the design) rather than from the whole file.
//!
//! Damage is reported, never fatal: a torn last line, lines that do not
//! parse, and a journal cut short by a full disk all still load. Only a
//! missing or unreadable `meta.json` or journal is an error.
//!
//! The caller appends a `resumed` line, shows the person one line per
//! [`Resumed::unresolved`] command, and sends
//! `conversation[journaled..]` in its next request's `messages_appended`.

use std::ops::ControlFlow;
use std::path::Path;

use ua_protocol::conversation::Message;
use ua_protocol::journal::{JournalEntry, JournalLine, JournalPos};
use ua_protocol::tool::ToolDefinition;

use crate::checkpoint::{read_side_file, side_file};
use crate::error::StoreError;
use crate::fold::{ConversationFold, Intent, SummaryInForce};
pub use crate::reader::SkippedAt;
use crate::reader::{JournalFile, PREFIX, Tail, prefix_type};
use crate::session::{JOURNAL_FILE, META_FILE, SessionMeta, read_meta};

/// How many `turn_end` lines the backward scan passes without finding a
/// checkpoint before it takes the journal for one written before
/// checkpoints existed, and reads it whole.
const TURNS_WITHOUT_CHECKPOINT: usize = 3;

/// A session ready to go on.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub meta: SessionMeta,
    /// The conversation the next model call continues, every `tool_use`
    /// answered.
    pub conversation: Vec<Message>,
    /// How many leading messages of `conversation` the journal holds; the
    /// rest go in the next request's `messages_appended`.
    pub journaled: usize,
    pub next_turn: u32,
    /// The tools in force; `None` if no request offered any.
    pub tools: Option<Vec<ToolDefinition>>,
    /// Commands that were started and whose outcome is unknown, to be
    /// shown to the person one line each. The conversation already tells
    /// the model about them.
    pub unresolved: Vec<Intent>,
    pub summary_in_force: Option<SummaryInForce>,
    /// The checkpoint the conversation was rebuilt from, for the `resumed`
    /// line's `from_checkpoint`.
    pub checkpoint: Option<JournalPos>,
    pub report: LoadReport,
}

/// How the journal was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    /// Lines that did not parse and were skipped.
    pub skipped: Vec<SkippedAt>,
    /// The journal ends in a torn line (a crash or a full disk).
    pub torn_tail: bool,
    /// Bytes read from the journal and its side file.
    pub bytes_read: u64,
    /// Journal lines parsed from the fold's start on.
    pub lines_read: usize,
    pub located: Located,
}

impl LoadReport {
    pub fn used_checkpoint(&self) -> bool {
        self.located != Located::FullRead
    }
}

/// How the starting point was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Located {
    /// `checkpoint.json` named a valid checkpoint line.
    SideFile,
    /// The side file was missing or stale; a scan backwards from the end
    /// found the last checkpoint line.
    BackwardScan,
    /// No usable checkpoint: the journal was read from its first line.
    FullRead,
}

/// Loads the session in `session_dir` for resuming.
pub fn load(session_dir: &Path) -> Result<Resumed, StoreError> {
    let meta = read_meta(&session_dir.join(META_FILE))?;
    let path = session_dir.join(JOURNAL_FILE);
    let mut file = JournalFile::open(&path)?;
    let (start, side_bytes) = find_start(&mut file, &path)?;
    let mut fold = ConversationFold::starting_with(start.summary.clone(), start.tools.clone());
    let tail = file.replay(start.from, |pos, line| fold.push(Some(pos.seq), &line.entry))?;
    let rebuilt = fold.finish();
    Ok(Resumed {
        meta,
        conversation: rebuilt.conversation,
        journaled: rebuilt.journaled,
        next_turn: rebuilt.last_turn + 1,
        tools: rebuilt.tools,
        unresolved: rebuilt.unresolved,
        summary_in_force: rebuilt.summary,
        checkpoint: start.checkpoint.as_ref().map(|(pos, _)| *pos),
        report: report(tail, file.bytes_read + side_bytes, start.located),
    })
}

fn report(tail: Tail, bytes_read: u64, located: Located) -> LoadReport {
    LoadReport { skipped: tail.skipped, torn_tail: tail.torn_tail, bytes_read, lines_read: tail.lines, located }
}

/// Where folding starts, and the state a checkpoint carries to it.
#[derive(Debug, Clone)]
pub(crate) struct Start {
    pub(crate) checkpoint: Option<(JournalPos, JournalEntry)>,
    pub(crate) summary: Option<SummaryInForce>,
    pub(crate) tools: Option<Vec<ToolDefinition>>,
    /// The offset to replay from.
    pub(crate) from: u64,
    pub(crate) located: Located,
}

impl Start {
    fn full_read() -> Self {
        Start { checkpoint: None, summary: None, tools: None, from: 0, located: Located::FullRead }
    }
}

/// Finds the latest valid checkpoint of the journal at `path`: the side
/// file's, else the last one scanning backwards, else none. Returns also
/// the bytes read from the side file.
pub(crate) fn find_start(file: &mut JournalFile, path: &Path) -> Result<(Start, u64), StoreError> {
    if file.len == 0 {
        return Ok((Start::full_read(), 0));
    }
    let mut side_bytes = 0;
    if let Some((pos, n)) = read_side_file(&side_file(path)) {
        side_bytes = n;
        if let Some(line) = file.journal_line_at(pos)?
            && let Some(start) = resolve(file, pos, line.entry, Located::SideFile)?
        {
            return Ok((start, side_bytes));
        }
    }
    let Some((offset, line)) = last_checkpoint(file)? else { return Ok((Start::full_read(), side_bytes)) };
    let pos = JournalPos { seq: line.seq, offset };
    Ok((resolve(file, pos, line.entry, Located::BackwardScan)?.unwrap_or_else(Start::full_read), side_bytes))
}

/// Scans backwards for the last checkpoint line, giving up after
/// [`TURNS_WITHOUT_CHECKPOINT`] turns without one.
fn last_checkpoint(file: &mut JournalFile) -> Result<Option<(u64, JournalLine)>, StoreError> {
    let mut found = None;
    let mut turns = 0;
    let _ = file.scan_back(|offset, prefix| match prefix_type(prefix) {
        Some(b"checkpoint") => {
            found = Some(offset);
            ControlFlow::Break(())
        }
        Some(b"turn_end") => {
            turns += 1;
            if turns > TURNS_WITHOUT_CHECKPOINT { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        }
        _ => ControlFlow::Continue(()),
    })?;
    let Some(offset) = found else { return Ok(None) };
    let Some(raw) = file.line_at(offset)? else { return Ok(None) };
    Ok(serde_json::from_slice::<JournalLine>(&raw).ok().map(|line| (offset, line)))
}

/// Checks a checkpoint's positions and reads what they point at; `None`
/// when any of them does not hold what it should.
fn resolve(
    file: &mut JournalFile,
    pos: JournalPos,
    entry: JournalEntry,
    located: Located,
) -> Result<Option<Start>, StoreError> {
    let JournalEntry::Checkpoint { conversation_from, summary, tools, .. } = &entry else { return Ok(None) };
    let summary = match summary {
        None => None,
        Some(at) => match file.journal_line_at(*at)?.map(|l| l.entry) {
            Some(JournalEntry::Summary { turn, covers_through_turn, text, model, .. }) => {
                Some(SummaryInForce { seq: Some(at.seq), turn, covers_through_turn, model, text })
            }
            _ => return Ok(None),
        },
    };
    let tools = match tools {
        None => None,
        Some(at) => match file.journal_line_at(*at)?.map(|l| l.entry) {
            Some(JournalEntry::ModelRequest { tools: Some(t), .. }) => Some(t),
            _ => return Ok(None),
        },
    };
    if *conversation_from != pos && !starts_line(file, *conversation_from)? {
        return Ok(None);
    }
    let from = conversation_from.offset;
    Ok(Some(Start { checkpoint: Some((pos, entry)), summary, tools, from, located }))
}

/// Whether a line carrying `pos.seq` starts at `pos.offset`, reading only
/// its beginning.
fn starts_line(file: &mut JournalFile, pos: JournalPos) -> Result<bool, StoreError> {
    let Some(prefix) = file.prefix_at(pos.offset, PREFIX)? else { return Ok(false) };
    Ok(prefix.starts_with(format!("{{\"seq\":{},", pos.seq).as_bytes()))
}
