//! Reading a journal file by position: one line at an offset, line starts
//! backwards from the end, and every line forwards from an offset, each
//! counting the bytes it reads.
//!
//! The file is read as it was when it was opened (`len`): a line appended
//! meanwhile is not half-read.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use ua_protocol::journal::{JournalLine, JournalPos};

use crate::error::StoreError;

/// How much of a line the backward scan shows: enough for
/// `{"seq":…,"ts":…,"type":"…"` with 20-digit numbers.
pub(crate) const PREFIX: usize = 128;
const BACK_CHUNK: u64 = 256 * 1024;
const FORWARD_BUFFER: usize = 1024 * 1024;

/// A line that did not parse, found while resuming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedAt {
    /// The byte offset of the line in the journal.
    pub offset: u64,
    pub error: String,
}

impl std::fmt::Display for SkippedAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the journal line at byte {} is not a journal entry ({}) and was skipped", self.offset, self.error)
    }
}

/// A journal file open for reading, with the bytes read so far.
#[derive(Debug)]
pub(crate) struct JournalFile {
    file: File,
    path: PathBuf,
    pub(crate) len: u64,
    pub(crate) bytes_read: u64,
}

/// What reading forwards found besides the lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tail {
    pub(crate) skipped: Vec<SkippedAt>,
    /// The file ends in an unparseable fragment without a newline.
    pub(crate) torn_tail: bool,
    /// The file does not end with a newline.
    pub(crate) unterminated: bool,
    pub(crate) lines: usize,
    /// The highest `seq` read.
    pub(crate) max_seq: Option<u64>,
}

impl JournalFile {
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        let read_err = |source| StoreError::Read { path: path.to_owned(), source };
        let file = File::open(path).map_err(read_err)?;
        let len = file.metadata().map_err(read_err)?.len();
        Ok(JournalFile { file, path: path.to_owned(), len, bytes_read: 0 })
    }

    fn error(&self, source: io::Error) -> StoreError {
        StoreError::Read { path: self.path.clone(), source }
    }

    /// Reads up to `buf.len()` bytes at `offset`, fewer only at the end.
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<usize, StoreError> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(e)),
            }
        }
        self.bytes_read += done as u64;
        Ok(done)
    }

    /// The line that starts exactly at `offset`, without its newline, or
    /// `None` if no line starts there.
    pub(crate) fn line_at(&mut self, offset: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.prefix_at(offset, usize::MAX)
    }

    /// At most `max` bytes of the line that starts exactly at `offset`.
    pub(crate) fn prefix_at(&mut self, offset: u64, max: usize) -> Result<Option<Vec<u8>>, StoreError> {
        if offset >= self.len {
            return Ok(None);
        }
        if offset > 0 {
            // A line starts after a newline.
            let mut before = [0u8; 1];
            if self.read_at(&mut before, offset - 1)? != 1 || before[0] != b'\n' {
                return Ok(None);
            }
        }
        let mut line = Vec::new();
        let mut chunk = vec![0u8; max.min(64 * 1024)];
        let mut at = offset;
        while at < self.len && line.len() < max {
            let want = usize::try_from(self.len - at).unwrap_or(usize::MAX).min(chunk.len()).min(max - line.len());
            let n = self.read_at(&mut chunk[..want], at)?;
            if n == 0 {
                break;
            }
            if let Some(nl) = chunk[..n].iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&chunk[..nl]);
                return Ok(Some(line));
            }
            line.extend_from_slice(&chunk[..n]);
            at += n as u64;
        }
        Ok(Some(line))
    }

    /// The journal line at `pos`, if one with that `seq` starts there.
    pub(crate) fn journal_line_at(&mut self, pos: JournalPos) -> Result<Option<JournalLine>, StoreError> {
        let Some(raw) = self.line_at(pos.offset)? else { return Ok(None) };
        Ok(serde_json::from_slice::<JournalLine>(&raw).ok().filter(|l| l.seq == pos.seq))
    }

    /// Calls `visit` with the offset and first [`PREFIX`] bytes of each
    /// line, last line first, until it breaks or the file's start.
    pub(crate) fn scan_back(
        &mut self,
        mut visit: impl FnMut(u64, &[u8]) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, StoreError> {
        let end = self.len;
        let mut hi = end;
        // The first bytes after `hi`, already read.
        let mut carry: Vec<u8> = Vec::new();
        while hi > 0 {
            let lo = hi.saturating_sub(BACK_CHUNK);
            let size = usize::try_from(hi - lo).unwrap_or(usize::MAX);
            let mut buf = vec![0u8; size];
            let n = self.read_at(&mut buf, lo)?;
            buf.truncate(n);
            let chunk_len = buf.len();
            buf.extend_from_slice(&carry);
            for p in (0..chunk_len).rev().filter(|&p| buf[p] == b'\n') {
                let start = lo + p as u64 + 1;
                if start >= end {
                    continue;
                }
                let prefix = &buf[p + 1..(p + 1 + PREFIX).min(buf.len())];
                if visit(start, prefix).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            if lo == 0 {
                return Ok(visit(0, &buf[..PREFIX.min(buf.len())]));
            }
            buf.truncate(PREFIX.min(buf.len()));
            carry = buf;
            hi = lo;
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Parses every line from `offset` (a line start) to the end, calling
    /// `on_line` with each line and its position; blank lines are passed
    /// over, unparseable ones reported.
    pub(crate) fn replay(
        &mut self,
        offset: u64,
        mut on_line: impl FnMut(JournalPos, JournalLine),
    ) -> Result<Tail, StoreError> {
        let mut tail = Tail::default();
        if offset >= self.len {
            return Ok(tail);
        }
        let mut counted = Counted { file: &self.file, at: offset, end: self.len, read: 0 };
        let mut reader = BufReader::with_capacity(FORWARD_BUFFER, &mut counted);
        let mut at = offset;
        let mut raw = Vec::new();
        loop {
            raw.clear();
            let n = reader
                .read_until(b'\n', &mut raw)
                .map_err(|e| StoreError::Read { path: self.path.clone(), source: e })?;
            if n == 0 {
                break;
            }
            let start = at;
            at += n as u64;
            let terminated = raw.last() == Some(&b'\n');
            if terminated {
                raw.pop();
            } else {
                tail.unterminated = true;
            }
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<JournalLine>(&raw) {
                Ok(line) => {
                    tail.lines += 1;
                    tail.max_seq = tail.max_seq.max(Some(line.seq));
                    on_line(JournalPos { seq: line.seq, offset: start }, line);
                }
                // Only the final piece can lack its newline.
                Err(_) if !terminated => tail.torn_tail = true,
                Err(e) => tail.skipped.push(SkippedAt { offset: start, error: e.to_string() }),
            }
        }
        drop(reader);
        self.bytes_read += counted.read;
        Ok(tail)
    }
}

/// Reads `file` from `at` up to `end`, counting.
struct Counted<'a> {
    file: &'a File,
    at: u64,
    end: u64,
    read: u64,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

/// The entry type a line's prefix names, if the prefix is as the writer
/// writes it (`{"seq":…,"ts":…,"type":"…"`). The first `"type":"` of a
/// line is the entry's: nested objects come after it, and a `"` inside a
/// string is always escaped.
pub(crate) fn prefix_type(prefix: &[u8]) -> Option<&[u8]> {
    const KEY: &[u8] = b"\"type\":\"";
    let at = prefix.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let rest = &prefix[at..];
    let end = rest.iter().position(|&b| b == b'"')?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, JournalFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        std::fs::File::create(&path).unwrap().write_all(bytes).unwrap();
        let f = JournalFile::open(&path).unwrap();
        (dir, f)
    }

    fn starts(f: &mut JournalFile) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        let _ = f
            .scan_back(|o, p| {
                out.push((o, p.to_vec()));
                ControlFlow::Continue(())
            })
            .unwrap();
        out
    }

    #[test]
    fn the_backward_scan_finds_every_line_start_across_chunks() {
        let long = "x".repeat(BACK_CHUNK as usize + 10);
        let text = format!("a\n{long}\nbc\n\ndef");
        let (_d, mut f) = file_with(text.as_bytes());
        let got = starts(&mut f);
        let offsets: Vec<u64> = got.iter().map(|(o, _)| *o).collect();
        let l = long.len() as u64;
        assert_eq!(offsets, [l + 7, l + 6, l + 3, 2, 0]);
        assert_eq!(got[0].1, b"def");
        assert_eq!(got[1].1, b"\ndef");
        assert_eq!(got[2].1, b"bc\n\ndef");
        assert_eq!(got[3].1.len(), PREFIX, "a prefix read across the chunk edge");
        assert!(got[3].1.iter().all(|&b| b == b'x'));
    }

    #[test]
    fn a_trailing_newline_is_not_a_line() {
        let (_d, mut f) = file_with(b"a\nb\n");
        assert_eq!(starts(&mut f).iter().map(|(o, _)| *o).collect::<Vec<_>>(), [2, 0]);
    }

    #[test]
    fn line_at_wants_a_line_start() {
        let (_d, mut f) = file_with(b"one\ntwo\nthree");
        assert_eq!(f.line_at(4).unwrap(), Some(b"two".to_vec()));
        assert_eq!(f.line_at(8).unwrap(), Some(b"three".to_vec()));
        assert_eq!(f.line_at(0).unwrap(), Some(b"one".to_vec()));
        assert_eq!(f.line_at(5).unwrap(), None);
        assert_eq!(f.line_at(99).unwrap(), None);
        assert_eq!(f.prefix_at(8, 2).unwrap(), Some(b"th".to_vec()));
    }

    #[test]
    fn prefix_type_reads_the_top_level_type() {
        assert_eq!(prefix_type(br#"{"seq":1,"ts":2,"type":"checkpoint","turn":3"#), Some(&b"checkpoint"[..]));
        assert_eq!(prefix_type(br#"{"seq":1,"ts":2,"ty"#), None);
    }
}
