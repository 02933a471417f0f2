//! The session index: `sessions/index.jsonl`, one small JSON record per
//! line, so listing sessions, finding the latest one in a directory and
//! totalling usage never open a journal.
//!
//! A running session feeds every journal entry it writes through a
//! [`RecordFeed`] and appends whatever record comes out; readers
//! [`Index::load`] the whole file and get one [`SessionSummary`] per
//! session, newest first.
//!
//! ```
//! use ua_protocol::journal::JournalEntry;
//! use ua_store::index::{Index, RecordFeed, SessionState};
//!
//! # fn main() -> Result<(), ua_store::StoreError> {
//! # let data = std::env::temp_dir().join(format!("ua-index-doc-{}", std::process::id()));
//! let index = Index::open(&data)?;
//! let mut feed = RecordFeed::new("20261121T201305.123Z-0000002a", None);
//! let start = JournalEntry::SessionStart {
//!     session: "20261121T201305.123Z-0000002a".into(),
//!     pid: std::process::id(),
//!     shell: "/bin/bash".into(),
//!     cwd: "/src".into(),
//!     os: "linux".into(),
//!     version: "0.1.0".into(),
//! };
//! // The journal line's own timestamp, so a reindex gives the same result.
//! if let Some(record) = feed.feed(1_795_291_985_123, &start) {
//!     // Never fatal: the journal still has the facts.
//!     if let Err(e) = index.append(&record) {
//!         eprintln!("unixagent: {e}");
//!     }
//! }
//!
//! let sessions = index.load()?;
//! let latest = sessions.latest_in("/src").expect("started above");
//! assert_eq!(latest.state, SessionState::Running { pid: std::process::id() });
//! // Now and then (when listing, or at the end of a session):
//! index.compact_if_needed(&sessions)?;
//! # std::fs::remove_dir_all(&data).ok();
//! # Ok(())
//! # }
//! ```
//!
//! # Format
//!
//! Each line is a [`Record`], tagged by `type`:
//!
//! ```json
//! {"type":"start","id":"20261121T201305.123Z-0000002a","ts":1795291985123,"cwd":"/src","shell":"/bin/bash","pid":4242}
//! {"type":"turn","id":"20261121T201305.123Z-0000002a","ts":1795291999000,"turn":1,"instruction":"why did make fail?","usage":{"input_tokens":1200,"output_tokens":300,"cache_read_tokens":0,"cache_write_tokens":0},"commands":2}
//! {"type":"end","id":"20261121T201305.123Z-0000002a","ts":1795292100000,"exit_code":0}
//! ```
//!
//! plus `resumed` (a new process took the session up), `pruned` (a
//! tombstone: the directory is gone) and `session` (a whole session folded
//! into one line, with its usage per UTC day, as compaction writes it).
//! Lines that do not parse are skipped and counted, never fatal; the file
//! can always be rebuilt from the journals with [`Index::reindex`].
//!
//! The file is compacted (rewritten as one `session` line per session)
//! once it holds more than [`COMPACT_LINES_PER_SESSION`] lines per session
//! and more than [`COMPACT_MIN_LINES`] lines in all; nothing compacts on
//! its own, callers run [`Index::compact_if_needed`].
//!
//! # Why a JSON-lines file and not SQLite
//!
//! The index is a cache of facts the journals already hold, a few hundred
//! bytes per session, and every question asked of it (list, latest in a
//! directory, usage since a day) reads all of it. Loading 10,000 sessions
//! takes 20–35 ms, well inside what `sessions list` and `--usage` may
//! spend; SQLite would add a C library to the build and a binary file
//! beside the journals for no gain that matters here, while this file
//! stays greppable and `jq`-able like the journals, and appending is one
//! `write(2)`.
//!
//! # Concurrency
//!
//! Several unixagent processes append at once, and one of them now and
//! then rewrites the file. The protocol, on the lock file `index.lock`
//! (`flock(2)`, through [`std::fs::File::lock`]):
//!
//! - An append takes a shared lock, *then* opens `index.jsonl` with
//!   `O_APPEND` and writes its line in a single `write(2)`. Linux
//!   serialises `O_APPEND` writes to a local file, so concurrent lines do
//!   not interleave; each line is kept far under 4 KiB anyway (the
//!   instruction is cut to [`INSTRUCTION_CHARS`]; only a `cwd` near
//!   `PATH_MAX` makes one longer).
//! - A rewrite (compaction, reindex, prune) takes the exclusive lock, reads,
//!   writes a temporary file, `fsync`s it and renames it over
//!   `index.jsonl`, all before unlocking. Because appenders open the file
//!   only once they hold their lock, no append can land in a file that is
//!   about to be replaced.
//! - Readers take no lock: `rename` swaps the whole file atomically, and a
//!   line still being appended shows up as a torn last line, which is
//!   skipped.
//!
//! The lock file is opened anew for every operation: `flock` locks belong
//! to an open file description, so sharing one between threads would let a
//! rewrite in one thread "upgrade" an append's lock in another.
//!
//! Appends wait at most [`APPEND_WAIT`] for a rewrite to finish and then
//! give up with an error: a session must not freeze at the end of a turn
//! because someone suspended `unixagent sessions prune` with Ctrl+Z.
//! Shared locks do not queue behind a waiting exclusive one, so appenders
//! that never paused could keep a compaction waiting; real sessions append
//! a line per turn.
//!
//! # What it does not do
//!
//! Session state is worked out on loading: a session without an `end`
//! record is running if its pid is alive (`kill(pid, 0)`), crashed if not.
//! That is wrong when the pid has been reused since, or when the data
//! directory is shared between machines; both err on the side of
//! "running", which keeps [`Index::prune`] away from such sessions. A turn
//! cut short by a crash has no `turn` record, so its tokens are not
//! counted. There is no cost: nothing in unixagent knows prices.

mod fold;
mod record;
#[cfg(test)]
mod tests;
mod usage;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

pub use fold::{COMPACT_LINES_PER_SESSION, COMPACT_MIN_LINES, Rollup, SessionState, SessionSummary, Summaries};
pub use record::{INSTRUCTION_CHARS, Record, RecordFeed, cap_instruction, records_from_journal};
pub use usage::{DayUsage, SessionUsage, UsageReport, parse_age};

use fold::Fold;

use crate::error::StoreError;
use crate::journal::read_journal;
use crate::session::{JOURNAL_FILE, META_FILE, create_private_dir_all, read_meta};

/// The index file, in the sessions directory.
pub const INDEX_FILE: &str = "index.jsonl";
/// The lock file that orders appends and rewrites.
pub const LOCK_FILE: &str = "index.lock";
const TEMP_FILE: &str = ".index.jsonl.tmp";

/// How long an append waits for a rewrite before giving up.
pub const APPEND_WAIT: Duration = Duration::from_secs(2);
/// How long a rewrite waits for appends and other rewrites.
pub const REWRITE_WAIT: Duration = Duration::from_secs(30);

/// The session index of one data directory.
#[derive(Debug, Clone)]
pub struct Index {
    sessions: PathBuf,
    path: PathBuf,
    lock_path: PathBuf,
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compacted {
    /// Lines before.
    pub lines: usize,
    /// Lines (and sessions) after.
    pub sessions: usize,
    /// Unreadable lines dropped.
    pub dropped: usize,
}

/// What a reindex found.
#[derive(Debug, Default)]
pub struct Reindexed {
    /// Sessions now in the index.
    pub sessions: usize,
    /// Journal lines that could not be read and were skipped.
    pub skipped_lines: usize,
    /// Directories left out (no readable `meta.json`), and journals that
    /// could not be read (those sessions are indexed from `meta.json`
    /// alone).
    pub problems: Vec<StoreError>,
}

/// What a prune removed.
#[derive(Debug, Default)]
pub struct Pruned {
    /// The sessions whose directories are gone, as they were.
    pub removed: Vec<SessionSummary>,
    /// Directories that could not be removed, or tombstones that could not
    /// be written (those sessions are removed on the next prune).
    pub failed: Vec<StoreError>,
}

/// A lock held on `index.lock`; unlocked when dropped (the file closes).
#[derive(Debug)]
struct Held {
    _file: File,
}

impl Index {
    /// The index of `data_dir` (`$XDG_DATA_HOME/unixagent`). Creates the
    /// sessions directory if needed; the index file itself appears with the
    /// first record.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let sessions = data_dir.join("sessions");
        create_private_dir_all(&sessions)?;
        Ok(Index { path: sessions.join(INDEX_FILE), lock_path: sessions.join(LOCK_FILE), sessions })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the index file exists. A data directory with sessions but
    /// no index (made before there was one, or deleted) wants a reindex.
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Appends one record. Never fatal to a session: on error the record
    /// is lost from the index (the journal still has it) and the caller
    /// decides whether to say so.
    pub fn append(&self, record: &Record) -> Result<(), StoreError> {
        let capped = record.capped();
        let mut line =
            serde_json::to_vec(capped.as_ref().unwrap_or(record)).map_err(|e| self.write_error(io::Error::other(e)))?;
        line.push(b'\n');
        let held = self.lock(false, APPEND_WAIT)?;
        self.write_locked(&held, line)
    }

    /// Reads and folds the whole index: one summary per session, newest
    /// first. A missing file is an empty index.
    pub fn load(&self) -> Result<Summaries, StoreError> {
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Fold::default().finish(process_alive)),
            Err(source) => return Err(StoreError::Read { path: self.path.clone(), source }),
        };
        let read_error = |source| StoreError::Read { path: self.path.clone(), source };
        let meta = file.metadata().map_err(read_error)?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        io::Read::read_to_end(&mut file, &mut bytes).map_err(read_error)?;
        let mut summaries = Fold::parse(&bytes).finish(process_alive);
        summaries.read_as = Some((meta.ino(), bytes.len() as u64));
        Ok(summaries)
    }

    /// Rewrites the index as one line per session.
    pub fn compact(&self) -> Result<Compacted, StoreError> {
        let held = self.lock(true, REWRITE_WAIT)?;
        let fold = self.read()?;
        let (lines, dropped) = (fold.lines, fold.skipped);
        let sessions = fold.into_sessions();
        let n = sessions.len();
        self.rewrite_locked(&held, sessions)?;
        Ok(Compacted { lines, sessions: n, dropped })
    }

    /// Compacts if `summaries` (a recent [`Index::load`]) says the file has
    /// grown past [`Summaries::needs_compaction`] and it still has once the
    /// lock is held (another process may have compacted meanwhile).
    pub fn compact_if_needed(&self, summaries: &Summaries) -> Result<Option<Compacted>, StoreError> {
        if !summaries.needs_compaction() {
            return Ok(None);
        }
        let held = self.lock(true, REWRITE_WAIT)?;
        // Unchanged since `summaries` was read (appends only grow the file,
        // a rewrite replaces it): write those, without reading it again.
        let unchanged = fs::metadata(&self.path).ok().map(|m| (m.ino(), m.len()));
        if unchanged.is_some() && unchanged == summaries.read_as {
            let mut sessions = summaries.sessions.clone();
            sessions.reverse();
            let n = sessions.len();
            self.rewrite_locked(&held, sessions)?;
            return Ok(Some(Compacted { lines: summaries.lines, sessions: n, dropped: summaries.skipped }));
        }
        let fold = self.read()?;
        let (lines, dropped) = (fold.lines, fold.skipped);
        let sessions = fold.into_sessions();
        if !fold::needs_compaction(lines, sessions.len()) {
            return Ok(None);
        }
        let n = sessions.len();
        self.rewrite_locked(&held, sessions)?;
        Ok(Some(Compacted { lines, sessions: n, dropped }))
    }

    /// Rebuilds the index from every session directory's `meta.json` and
    /// journal: the repair tool, and the only operation that reads
    /// journals. Appends wait (up to [`APPEND_WAIT`]) while it runs; one
    /// that gives up is not lost for good, since its journal line is read
    /// by the next reindex.
    pub fn reindex(&self) -> Result<Reindexed, StoreError> {
        let held = self.lock(true, REWRITE_WAIT)?;
        let mut fold = Fold::default();
        let mut report = Reindexed::default();
        let entries = match fs::read_dir(&self.sessions) {
            Ok(entries) => entries,
            Err(source) => return Err(StoreError::Read { path: self.sessions.clone(), source }),
        };
        let mut dirs: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
            .collect();
        dirs.sort();
        for (id, dir) in dirs {
            let mut meta = match read_meta(&dir.join(META_FILE)) {
                Ok(meta) => meta,
                Err(e) => {
                    report.problems.push(e);
                    continue;
                }
            };
            // The directory name is the id: it is what prune removes.
            meta.id = id;
            let lines = match read_journal(&dir.join(JOURNAL_FILE)) {
                Ok(contents) => {
                    report.skipped_lines += contents.skipped.len();
                    contents.lines
                }
                // A session that died before its first line has no journal.
                Err(StoreError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => Vec::new(),
                Err(e) => {
                    report.problems.push(e);
                    Vec::new()
                }
            };
            records_from_journal(&meta, &lines).into_iter().for_each(|r| fold.apply(r));
        }
        let sessions = fold.into_sessions();
        report.sessions = sessions.len();
        self.rewrite_locked(&held, sessions)?;
        Ok(report)
    }

    /// Removes the directories of sessions last active before
    /// `now_ms - older_than_ms` that are not running, and tombstones them.
    /// A running session is never removed, and neither is a directory the
    /// index does not know (reindex first to include those). Runs under
    /// the exclusive lock, so a process resuming a session should append
    /// its [`Record::Resumed`] before it opens the directory.
    pub fn prune(&self, older_than_ms: u64, now_ms: u64) -> Result<Pruned, StoreError> {
        let cutoff = now_ms.saturating_sub(older_than_ms);
        let held = self.lock(true, REWRITE_WAIT)?;
        let summaries = self.read()?.finish(process_alive);
        let mut out = Pruned::default();
        let mut tombstones = Vec::new();
        for s in summaries.sessions {
            if matches!(s.state, SessionState::Running { .. }) || s.last_active_ms >= cutoff {
                continue;
            }
            match self.remove_session_dir(&s.id) {
                Ok(()) => {
                    serde_json::to_writer(&mut tombstones, &Record::Pruned { id: s.id.clone(), ts: now_ms })
                        .map_err(|e| self.write_error(io::Error::other(e)))?;
                    tombstones.push(b'\n');
                    out.removed.push(s);
                }
                Err(e) => out.failed.push(e),
            }
        }
        if !tombstones.is_empty()
            && let Err(e) = self.write_locked(&held, tombstones)
        {
            out.failed.push(e);
        }
        Ok(out)
    }

    /// Removes `sessions/<id>` if it is a session directory (holds
    /// `meta.json`); an id that is not a plain name, or names anything
    /// else, is refused. A directory already gone is fine.
    fn remove_session_dir(&self, id: &str) -> Result<(), StoreError> {
        let mut parts = Path::new(id).components();
        let plain = matches!((parts.next(), parts.next()), (Some(Component::Normal(_)), None)) && !id.contains('/');
        let path = self.sessions.join(id);
        let refuse = |why: &str| StoreError::Remove { path: path.clone(), source: io::Error::other(why.to_string()) };
        if !plain {
            return Err(refuse("the index names it as a session, but it is not a session id"));
        }
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(StoreError::Remove { path, source }),
            Ok(m) if !m.is_dir() || !path.join(META_FILE).is_file() => {
                return Err(refuse("it is not a session directory (no meta.json), so it was left alone"));
            }
            Ok(_) => {}
        }
        fs::remove_dir_all(&path).map_err(|source| StoreError::Remove { path, source })
    }

    fn read(&self) -> Result<Fold, StoreError> {
        match fs::read(&self.path) {
            Ok(bytes) => Ok(Fold::parse(&bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Fold::default()),
            Err(source) => Err(StoreError::Read { path: self.path.clone(), source }),
        }
    }

    /// Takes the lock, shared or exclusive, waiting at most `wait`.
    fn lock(&self, exclusive: bool, wait: Duration) -> Result<Held, StoreError> {
        let lock_error = |source| StoreError::IndexWrite { path: self.lock_path.clone(), source };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&self.lock_path)
            .map_err(lock_error)?;
        let tried = if exclusive { file.try_lock() } else { file.try_lock_shared() };
        match tried {
            Ok(()) => Ok(Held { _file: file }),
            Err(fs::TryLockError::Error(e)) => Err(lock_error(e)),
            Err(fs::TryLockError::WouldBlock) => wait_for_lock(file, exclusive, wait).map_err(lock_error),
        }
    }

    /// Appends whole lines in one `write(2)`. If the file ends in a
    /// fragment (a write cut short by a full disk), a newline first
    /// confines the fragment to its own line, which readers skip.
    fn write_locked(&self, _held: &Held, mut lines: Vec<u8>) -> Result<(), StoreError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| self.write_error(e))?;
        let len = file.metadata().map_err(|e| self.write_error(e))?.len();
        if len > 0 {
            let mut last = [0u8];
            file.read_exact_at(&mut last, len - 1).map_err(|e| self.write_error(e))?;
            if last[0] != b'\n' {
                lines.insert(0, b'\n');
            }
        }
        loop {
            match (&file).write(&lines) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(n) if n == lines.len() => return Ok(()),
                // Not retried: a second write could land after another
                // process's line, gluing the two halves around it.
                Ok(n) => {
                    return Err(self.write_error(io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!("only {n} of {} bytes were written", lines.len()),
                    )));
                }
                Err(e) => return Err(self.write_error(e)),
            }
        }
    }

    /// Replaces the file with one `session` line per session, atomically.
    fn rewrite_locked(&self, _held: &Held, sessions: Vec<SessionSummary>) -> Result<(), StoreError> {
        let tmp = self.sessions.join(TEMP_FILE);
        let failed = |source| StoreError::IndexWrite { path: tmp.clone(), source };
        let mut buf = Vec::with_capacity(sessions.len() * 400);
        for s in sessions {
            serde_json::to_writer(&mut buf, &Record::Session(s)).map_err(|e| failed(io::Error::other(e)))?;
            buf.push(b'\n');
        }
        let mut file =
            OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp).map_err(failed)?;
        // Synced before the rename, or a power cut could leave an empty
        // file where the old index was.
        file.write_all(&buf).and_then(|()| file.sync_all()).map_err(failed)?;
        fs::rename(&tmp, &self.path).map_err(|e| self.write_error(e))?;
        // The rename itself is durable once the directory is synced; a
        // failure here loses nothing that a reindex cannot rebuild.
        let _ = File::open(&self.sessions).and_then(|d| d.sync_all());
        Ok(())
    }

    fn write_error(&self, source: io::Error) -> StoreError {
        StoreError::IndexWrite { path: self.path.clone(), source }
    }
}

/// Lock waits in progress in this process, bounded so that a lock held
/// for hours (a suspended prune) cannot pile up a blocked thread per turn.
static WAITERS: AtomicUsize = AtomicUsize::new(0);
const MAX_WAITERS: usize = 8;

/// Waits for a contended lock in the kernel, which wakes the waiter the
/// moment the holder unlocks (polling would keep missing the short gaps
/// between rewrites). `flock(2)` has no timeout, so the wait runs on a
/// thread of its own; one that outlives `wait` drops the lock as soon as
/// it gets it.
fn wait_for_lock(file: File, exclusive: bool, wait: Duration) -> io::Result<Held> {
    let busy = || {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("another unixagent held the index for over {} ms (a prune or reindex?)", wait.as_millis()),
        )
    };
    if WAITERS.fetch_add(1, Ordering::SeqCst) >= MAX_WAITERS {
        WAITERS.fetch_sub(1, Ordering::SeqCst);
        return Err(busy());
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new().name("ua-index-lock".into()).spawn(move || {
        let locked = if exclusive { file.lock() } else { file.lock_shared() };
        WAITERS.fetch_sub(1, Ordering::SeqCst);
        // If the caller gave up, the send fails and drops the file, and
        // with it the lock.
        let _ = tx.send(locked.map(|()| file));
    });
    if let Err(e) = spawned {
        WAITERS.fetch_sub(1, Ordering::SeqCst);
        return Err(e);
    }
    match rx.recv_timeout(wait) {
        Ok(locked) => locked.map(|file| Held { _file: file }),
        Err(_) => Err(busy()),
    }
}

/// Whether process `pid` exists. `EPERM` means it does, under another user.
pub fn process_alive(pid: u32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    // 0 and negative pids address process groups, not a process.
    match i32::try_from(pid) {
        Ok(raw) if raw > 0 => matches!(kill(Pid::from_raw(raw), None), Ok(()) | Err(Errno::EPERM)),
        _ => false,
    }
}
