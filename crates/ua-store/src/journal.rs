//! The append-only journal file: a writer that survives a full disk and a
//! reader that survives a crash.
//!
//! Writing: the file is opened with `O_APPEND` and each line goes out in a
//! single `write(2)`, so a line is either whole or, after a crash or a full
//! disk, a torn fragment without its newline. A write that fails leaves the
//! writer usable; if it left a fragment behind, the next line starts with a
//! newline so the fragment stays confined to a line of its own, which the
//! reader skips.
//!
//! Syncing ([`SyncPolicy`]): the page cache already survives a crash of
//! unixagent itself; `fdatasync` only guards against power loss. The
//! default syncs at the end of each turn and of the session, which bounds
//! the loss to the turn in progress without a disk flush per line, and
//! after a `command_intent` for a command that is not read-only: a command
//! that changed something must never look, after a power loss, as if it
//! had not been started, or a resumed session would run it again.
//!
//! Positions: the writer knows the byte offset of every line it writes
//! (the file's length when opened, plus what it wrote since, plus the
//! newline that closes off a torn fragment), which is what
//! [`Journal::checkpoint`] records; see [`crate::checkpoint`].
//!
//! Appending is a blocking `write(2)` to the page cache, microseconds
//! normally; a syncing append waits for the disk. One process writes one
//! journal: sequence numbers are not coordinated between writers.

use std::fmt;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use ua_protocol::journal::{JournalEntry, JournalLine, JournalPos};

use crate::checkpoint::{Tracker, side_file, write_side_file};
use crate::error::StoreError;
use crate::reader::JournalFile;
use crate::resume::find_start;
use crate::session::now_ms;

/// When the writer calls `fdatasync`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Never; leave it to the kernel.
    Never,
    /// After `turn_end` and `session_end` lines, and after a
    /// `command_intent` whose command is not read-only.
    #[default]
    TurnBoundaries,
    /// After every line.
    EveryLine,
}

/// Where the lines go: a file, or in tests a writer that fails on demand.
trait Sink: Write + Send {
    fn sync(&mut self) -> io::Result<()>;
}

struct FileSink {
    file: File,
    /// Character devices such as `/dev/full` reject `fdatasync`.
    regular: bool,
}

impl Write for FileSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink for FileSink {
    fn sync(&mut self) -> io::Result<()> {
        if self.regular { self.file.sync_data() } else { Ok(()) }
    }
}

/// An append-only journal writer.
pub struct Journal {
    sink: Box<dyn Sink>,
    path: PathBuf,
    next_seq: u64,
    sync: SyncPolicy,
    /// The previous append failed: the next failure is not news.
    failing: bool,
    /// The file ends in a fragment without a newline.
    torn: bool,
    /// The file's length: where the next byte goes.
    len: u64,
    /// A regular file, whose offsets mean something and which can have a
    /// side file.
    regular: bool,
    tracker: Tracker,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("next_seq", &self.next_seq)
            .field("sync", &self.sync)
            .field("failing", &self.failing)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Borrowing twin of [`JournalLine`], so appending does not clone entries.
#[derive(Serialize)]
struct LineRef<'a> {
    seq: u64,
    ts: u64,
    #[serde(flatten)]
    entry: &'a JournalEntry,
}

impl Journal {
    /// Opens (creating it 0600 if needed) the journal at `path` for
    /// appending. An existing journal is continued: numbering resumes after
    /// its last readable line, and a torn last line is closed off first.
    /// Continuing reads the journal from its latest checkpoint on, as
    /// resuming does, not the whole file.
    pub fn open(path: impl Into<PathBuf>, sync: SyncPolicy) -> Result<Self, StoreError> {
        let path = path.into();
        let create = |source| StoreError::Create { path: path.clone(), source };
        let file = OpenOptions::new().append(true).create(true).mode(0o600).open(&path).map_err(create)?;
        let metadata = file.metadata().map_err(create)?;
        let regular = metadata.is_file();
        let mut journal = Journal {
            sink: Box::new(FileSink { file, regular }),
            path: path.clone(),
            next_seq: 1,
            sync,
            failing: false,
            torn: false,
            len: metadata.len(),
            regular,
            tracker: Tracker::default(),
        };
        // Only regular files are read back: a device like /dev/full would
        // read forever.
        if regular {
            fs::set_permissions(&path, Permissions::from_mode(0o600)).map_err(create)?;
            journal.catch_up()?;
        }
        Ok(journal)
    }

    /// Reads what an existing journal holds from its latest checkpoint on:
    /// the numbering, a torn end, and the conversation's extent.
    fn catch_up(&mut self) -> Result<(), StoreError> {
        let mut file = JournalFile::open(&self.path)?;
        self.len = file.len;
        let (start, _) = find_start(&mut file, &self.path)?;
        let mut tracker = match &start.checkpoint {
            Some((_, entry)) => Tracker::restore(entry, start.summary.as_ref().map(|s| s.covers_through_turn)),
            None => Tracker::default(),
        };
        let tail = file.replay(start.from, |pos, line| tracker.observe(pos, &line.entry))?;
        self.tracker = tracker;
        self.next_seq = tail.max_seq.map_or(1, |s| s + 1);
        self.torn = tail.unterminated;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sequence number the next line will carry.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends one entry stamped with the next sequence number and the
    /// current time, and returns that sequence number.
    ///
    /// On failure the entry is not counted as written and the writer stays
    /// usable; [`StoreError::should_report`] tells whether this failure
    /// starts a new run of failures (show it) or continues one (don't).
    pub fn append(&mut self, entry: &JournalEntry) -> Result<u64, StoreError> {
        self.append_at(entry, now_ms())
    }

    /// [`Journal::append`] with an explicit timestamp (milliseconds since
    /// the Unix epoch), for replaying or importing entries.
    pub fn append_at(&mut self, entry: &JournalEntry, ts: u64) -> Result<u64, StoreError> {
        let seq = self.next_seq;
        let pos = self.next_pos();
        let mut buf = Vec::with_capacity(256);
        if self.torn {
            buf.push(b'\n');
        }
        serde_json::to_writer(&mut buf, &LineRef { seq, ts, entry }).map_err(|e| self.failed(io::Error::other(e)))?;
        buf.push(b'\n');
        let written = loop {
            match self.sink.write(&buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match written {
            Ok(n) if n == buf.len() => self.len += n as u64,
            Ok(n) => {
                // Part of the line reached the file; close it off next time.
                self.torn |= n > 0;
                self.len += n as u64;
                return Err(self.failed(io::Error::new(
                    io::ErrorKind::WriteZero,
                    format!("only {n} of {} bytes were written", buf.len()),
                )));
            }
            Err(e) => return Err(self.failed(e)),
        }
        self.next_seq += 1;
        self.torn = false;
        self.failing = false;
        self.tracker.observe(pos, entry);
        let boundary = matches!(
            entry,
            JournalEntry::TurnEnd { .. }
                | JournalEntry::SessionEnd { .. }
                | JournalEntry::CommandIntent { read_only: false, .. }
        );
        let sync = match self.sync {
            SyncPolicy::Never => false,
            SyncPolicy::TurnBoundaries => boundary,
            SyncPolicy::EveryLine => true,
        };
        if sync {
            self.sink.sync().map_err(|e| self.failed(e))?;
        }
        Ok(seq)
    }

    /// Where the next line will go.
    fn next_pos(&self) -> JournalPos {
        JournalPos { seq: self.next_seq, offset: self.len + u64::from(self.torn) }
    }

    /// Appends a `checkpoint` line saying where the conversation starts,
    /// then points `checkpoint.json` beside the journal at it. Call it at
    /// each turn boundary (after `turn_end`), and after a `resumed` line.
    ///
    /// A failure to write the side file leaves the journal whole and only
    /// makes the next resume scan for the line; it is returned as
    /// [`StoreError::Checkpoint`].
    pub fn checkpoint(&mut self) -> Result<JournalPos, StoreError> {
        let pos = self.next_pos();
        let entry = self.tracker.entry(pos);
        let seq = self.append(&entry)?;
        debug_assert_eq!(seq, pos.seq);
        if self.regular {
            write_side_file(&side_file(&self.path), pos)?;
        }
        Ok(pos)
    }

    /// Flushes written lines to stable storage now.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.sink.sync().map_err(|e| self.failed(e))
    }

    fn failed(&mut self, source: io::Error) -> StoreError {
        let repeated = std::mem::replace(&mut self.failing, true);
        StoreError::JournalWrite { path: self.path.clone(), source, repeated }
    }

    #[cfg(test)]
    fn with_sink(sink: Box<dyn Sink>) -> Self {
        Journal {
            sink,
            path: PathBuf::from("test.jsonl"),
            next_seq: 1,
            sync: SyncPolicy::EveryLine,
            failing: false,
            torn: false,
            len: 0,
            regular: false,
            tracker: Tracker::default(),
        }
    }
}

/// What a journal file held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JournalContents {
    /// Every line that parsed, in file order.
    pub lines: Vec<JournalLine>,
    /// Lines that did not parse and were skipped.
    pub skipped: Vec<SkippedLine>,
    /// The file ended in an unparseable fragment without a newline: a
    /// crash or a full disk interrupted the last write. Not an error.
    pub torn_tail: bool,
    /// The file does not end with a newline (whether or not the last line
    /// parsed); a writer must start with one.
    pub unterminated: bool,
}

impl JournalContents {
    /// The entries without their sequence numbers and timestamps.
    pub fn entries(&self) -> impl Iterator<Item = &JournalEntry> {
        self.lines.iter().map(|l| &l.entry)
    }
}

/// A line of a journal that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number in the file.
    pub line: usize,
    pub error: String,
}

impl fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "journal line {} is not a journal entry ({}) and was skipped", self.line, self.error)
    }
}

/// Reads a journal file; see [`parse_journal`].
pub fn read_journal(path: &Path) -> Result<JournalContents, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Read { path: path.to_owned(), source })?;
    Ok(parse_journal(&bytes))
}

/// Parses journal bytes, skipping blank lines, reporting corrupt lines and
/// tolerating a torn last line.
pub fn parse_journal(bytes: &[u8]) -> JournalContents {
    let mut out = JournalContents { unterminated: !bytes.is_empty() && !bytes.ends_with(b"\n"), ..Default::default() };
    let mut pieces = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, raw)) = pieces.next() {
        let last = pieces.peek().is_none();
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<JournalLine>(raw) {
            Ok(line) => out.lines.push(line),
            // Only the final piece can lack its newline.
            Err(_) if last => out.torn_tail = true,
            Err(e) => out.skipped.push(SkippedLine { line: i + 1, error: e.to_string() }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A sink that fails while told to, optionally after taking a few bytes.
    #[derive(Clone, Default)]
    struct Flaky {
        data: Arc<Mutex<Vec<u8>>>,
        /// `Some(n)`: accept at most `n` bytes, then fail with ENOSPC.
        fail_after: Arc<Mutex<Option<usize>>>,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            match *self.fail_after.lock().unwrap() {
                Some(0) => Err(io::Error::from_raw_os_error(28)),
                Some(n) => {
                    let n = n.min(buf.len());
                    self.data.lock().unwrap().extend_from_slice(&buf[..n]);
                    Ok(n)
                }
                None => {
                    self.data.lock().unwrap().extend_from_slice(buf);
                    Ok(buf.len())
                }
            }
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for Flaky {
        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn note(text: &str) -> JournalEntry {
        JournalEntry::Instruction { turn: 1, text: text.into() }
    }

    #[test]
    fn a_partial_write_is_confined_to_its_own_line() {
        let sink = Flaky::default();
        let mut j = Journal::with_sink(Box::new(sink.clone()));
        assert_eq!(j.append_at(&note("one"), 1).unwrap(), 1);

        *sink.fail_after.lock().unwrap() = Some(10);
        let err = j.append_at(&note("two"), 2).unwrap_err();
        assert!(err.should_report(), "{err}");
        *sink.fail_after.lock().unwrap() = Some(0);
        let err = j.append_at(&note("two"), 2).unwrap_err();
        assert!(!err.should_report(), "a second failure in a row is not news: {err}");

        *sink.fail_after.lock().unwrap() = None;
        assert_eq!(j.append_at(&note("three"), 3).unwrap(), 2, "failed lines do not use up numbers");

        let bytes = sink.data.lock().unwrap().clone();
        let read = parse_journal(&bytes);
        let texts: Vec<_> = read
            .entries()
            .map(|e| match e {
                JournalEntry::Instruction { text, .. } => text.as_str(),
                _ => "?",
            })
            .collect();
        assert_eq!(texts, ["one", "three"]);
        assert_eq!(read.skipped.len(), 1, "the 10-byte fragment is reported");
        assert_eq!(read.skipped[0].line, 2);
        assert!(!read.torn_tail);
    }

    #[test]
    fn a_failure_after_recovery_is_news_again() {
        let sink = Flaky::default();
        let mut j = Journal::with_sink(Box::new(sink.clone()));
        *sink.fail_after.lock().unwrap() = Some(0);
        assert!(j.append(&note("a")).unwrap_err().should_report());
        *sink.fail_after.lock().unwrap() = None;
        j.append(&note("b")).unwrap();
        *sink.fail_after.lock().unwrap() = Some(0);
        assert!(j.append(&note("c")).unwrap_err().should_report());
    }

    #[test]
    fn torn_tail_is_not_a_skipped_line() {
        let good = serde_json::to_string(&JournalLine { seq: 1, ts: 5, entry: note("x") }).unwrap();
        let bytes = format!("{good}\n{{\"seq\":2,\"ts\":6,\"type\":\"instr");
        let read = parse_journal(bytes.as_bytes());
        assert_eq!(read.lines.len(), 1);
        assert!(read.torn_tail && read.unterminated);
        assert!(read.skipped.is_empty());
    }

    #[test]
    fn a_complete_last_line_without_newline_is_kept() {
        let good = serde_json::to_string(&JournalLine { seq: 1, ts: 5, entry: note("x") }).unwrap();
        let read = parse_journal(good.as_bytes());
        assert_eq!(read.lines.len(), 1);
        assert!(!read.torn_tail && read.unterminated);
    }

    #[test]
    fn blank_lines_and_empty_input_are_fine() {
        assert_eq!(parse_journal(b""), JournalContents::default());
        let read = parse_journal(b"\n\n  \n");
        assert!(read.lines.is_empty() && read.skipped.is_empty() && !read.torn_tail);
    }

    #[test]
    fn invalid_utf8_in_the_middle_is_skipped_with_its_line_number() {
        let good = serde_json::to_string(&JournalLine { seq: 1, ts: 5, entry: note("x") }).unwrap();
        let mut bytes = format!("{good}\n").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(format!("{good}\n").as_bytes());
        let read = parse_journal(&bytes);
        assert_eq!(read.lines.len(), 2);
        assert_eq!(read.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [2]);
        assert!(read.skipped[0].to_string().starts_with("journal line 2 is not a journal entry"));
    }
}
