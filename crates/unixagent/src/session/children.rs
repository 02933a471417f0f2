//! The session's children: the agents started from its shell, as their
//! reports tell of them (`child::report`).
//!
//! Two pieces, so that the logic is tested without a filesystem:
//!
//! - [`Reports`] is pure: fed each report's new bytes (and whether the
//!   file has been closed for good), it folds the child's events
//!   (`child::fold::Fold`) and returns the `child` events to send: one when
//!   the child's session starts, one when it ends. A refused child only
//!   ends; one whose report closed without a `result` (`kill -9`) ends as
//!   an error.
//! - [`Children`] is the thin driver: the session's report directory (a
//!   dot-directory in its task board, removed when the session ends),
//!   watched with inotify (the `notify` crate) on a thread of its own that
//!   sends each report that changed over a channel the loop reads. Nothing
//!   polls.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use ua_protocol::agent::{AgentEvent, ChildStatus};
use ua_protocol::journal::JournalEntry;

use super::spool::Importer;
use crate::child::fold::{Fold, Outcome};
use crate::child::report::{CHILDREN_ENV, Header};

/// One child, as far as its report has been read.
#[derive(Debug)]
struct Known {
    id: String,
    fold: Fold,
    /// The child's process, from its report's header.
    pid: Option<u32>,
    /// In the foreground of this session's terminal (from the header).
    in_front: bool,
    /// When its report was first read.
    since: Instant,
    /// The end of a line not complete yet.
    partial: String,
    started: bool,
    /// The working directory and shell its session started with, until
    /// they are taken for the index ([`Reports::take_begun`]).
    begun: Option<(String, String)>,
    ended: bool,
    /// Its writer is gone (the file's last close, or its pid gone).
    closed: bool,
}

/// A child whose session started, as its report says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Begun {
    pub session: String,
    pub pid: u32,
    pub instruction: String,
    pub cwd: String,
    pub shell: String,
}

/// Every child's report, folded. Pure.
#[derive(Debug, Default)]
pub(super) struct Reports {
    known: BTreeMap<String, Known>,
    count: u32,
}

impl Reports {
    /// `bytes` newly appended to the report `name`; `closed`: its writer
    /// has gone. Returns the `child` events this brings, in order.
    pub(super) fn feed(&mut self, name: &str, (bytes, now): (&[u8], Instant), closed: bool) -> Vec<AgentEvent> {
        if !self.known.contains_key(name) {
            self.count += 1;
            let id = format!("c{}", self.count);
            let k = Known {
                id,
                fold: Fold::new(""),
                pid: None,
                in_front: false,
                since: now,
                partial: String::new(),
                started: false,
                begun: None,
                ended: false,
                closed: false,
            };
            self.known.insert(name.to_string(), k);
        }
        let mut out = Vec::new();
        let Some(k) = self.known.get_mut(name) else { return out };
        k.partial.push_str(&String::from_utf8_lossy(bytes));
        while let Some(nl) = k.partial.find('\n') {
            let line: String = k.partial.drain(..=nl).collect();
            k.line(line.trim_end(), &mut out);
        }
        if closed && !k.ended {
            k.fold.outcome = Outcome::Crashed;
            k.ended = true;
            out.push(k.event());
        }
        k.closed |= closed;
        out
    }

    /// The reports whose writer has not been seen to go, with its pid
    /// when known.
    pub(super) fn open(&self) -> Vec<(String, Option<u32>)> {
        self.known.iter().filter(|(_, k)| !k.closed).map(|(n, k)| (n.clone(), k.pid)).collect()
    }

    /// Whether this report's writer is gone.
    pub(super) fn closed(&self, name: &str) -> bool {
        self.known.get(name).is_some_and(|k| k.closed)
    }

    /// The session the report's child named.
    pub(super) fn session(&self, name: &str) -> Option<&str> {
        self.known.get(name).and_then(|k| k.fold.session.as_deref())
    }

    /// The progress line of the child running in the foreground of the
    /// terminal (the latest one, if several claim to), at most `width`
    /// characters.
    pub(super) fn progress(&self, now: Instant, width: usize) -> Option<String> {
        let k = self.known.values().filter(|k| k.in_front && !k.ended).max_by_key(|k| k.since)?;
        Some(k.fold.progress(now.saturating_duration_since(k.since), width))
    }

    /// The child of this report whose session started and still runs,
    /// once: for the index, which lists it from then on.
    pub(super) fn take_begun(&mut self, name: &str) -> Option<Begun> {
        let k = self.known.get_mut(name)?;
        if k.ended {
            return None;
        }
        let (cwd, shell) = k.begun.take()?;
        Some(Begun {
            session: k.fold.session.clone()?,
            pid: k.pid?,
            instruction: k.fold.instruction.clone(),
            cwd,
            shell,
        })
    }

    /// Whether this report has said all it will.
    pub(super) fn ended(&self, name: &str) -> bool {
        self.known.get(name).is_some_and(|k| k.ended)
    }
}

impl Known {
    fn line(&mut self, line: &str, out: &mut Vec<AgentEvent>) {
        if self.ended {
            return;
        }
        if let Some(h) = Header::parse(line) {
            self.fold.instruction = h.instruction;
            self.pid = Some(h.pid);
            self.in_front = h.in_front;
            return;
        }
        let Ok(e) = serde_json::from_str::<AgentEvent>(line) else { return };
        self.fold.event(&e);
        match e {
            AgentEvent::Session { cwd, shell, .. } if !self.started => {
                self.started = true;
                self.begun = Some((cwd, shell));
                out.push(self.event());
            }
            AgentEvent::Result { .. } => {
                self.ended = true;
                out.push(self.event());
            }
            _ => {}
        }
    }

    fn event(&self) -> AgentEvent {
        let status = match self.fold.outcome {
            Outcome::Running => ChildStatus::Running,
            Outcome::Done => ChildStatus::Ok,
            Outcome::Failed | Outcome::Crashed => ChildStatus::Error,
            Outcome::Cancelled => ChildStatus::Cancelled,
            Outcome::Refused => ChildStatus::Refused,
        };
        AgentEvent::Child {
            id: self.id.clone(),
            session: self.fold.session.clone(),
            instruction: self.fold.instruction.clone(),
            status,
            usage: {
                let mut usage = self.fold.usage;
                usage.add(&self.fold.descendants);
                usage
            },
        }
    }
}

/// The journal's line for a `child` event, or for a notice about a
/// child's spool.
pub(super) fn journal_entry(e: &AgentEvent) -> Option<JournalEntry> {
    match e {
        AgentEvent::Notice { text } => Some(JournalEntry::Error { turn: None, message: text.clone() }),
        AgentEvent::Child { id, session, instruction, status, usage } => Some(JournalEntry::Child {
            id: id.clone(),
            session: session.clone(),
            instruction: instruction.clone(),
            status: *status,
            usage: *usage,
        }),
        _ => None,
    }
}

/// Where a session's children report, and what becomes of their spools.
#[derive(Debug)]
pub(super) enum Place {
    /// A private directory of its own in the board; the children's spools
    /// are imported by this importer (none without a data directory).
    Own(Option<Importer>),
    /// This spooled session's `children/` directory: the spools stay
    /// there, for whoever imports this session's spool.
    Spooled(PathBuf),
}

/// A report that changed: its path, and whether its writer closed it.
type Change = (PathBuf, bool);

/// The report directory, watched. Dropping it stops the watch and
/// removes the directory (unless it is in this session's own spool, which
/// its parent imports).
#[derive(Debug)]
pub(super) struct Children {
    dir: PathBuf,
    _owned: Option<tempfile::TempDir>,
    /// What imports the children's spools; `None` in a spooled session.
    importer: Option<Importer>,
    _watch: notify::RecommendedWatcher,
    changes: tokio::sync::mpsc::UnboundedReceiver<Change>,
    /// How far each report has been read.
    read: BTreeMap<PathBuf, u64>,
    reports: Reports,
    /// A progress line is on the terminal's current line.
    drawn: bool,
}

impl Children {
    /// A private directory in the session's task board, watched, and the
    /// variable that names it to the shell. `None` when there is no board
    /// or either step fails: the session then runs without hearing of its
    /// children.
    pub(super) fn start(board: Option<&Path>, place: Place) -> Option<(Children, (OsString, OsString))> {
        use notify::Watcher as _;
        use std::os::unix::fs::PermissionsExt as _;
        let (dir, owned, importer) = match place {
            Place::Spooled(dir) => (dir, None, None),
            Place::Own(importer) => {
                // A dot-name: the board's own watcher and readers pass it by.
                let dir = tempfile::Builder::new()
                    .prefix(".children-")
                    .permissions(std::fs::Permissions::from_mode(0o700))
                    .tempdir_in(board?)
                    .ok()?;
                (dir.path().to_path_buf(), Some(dir), importer)
            }
        };
        let (tx, changes) = tokio::sync::mpsc::unbounded_channel();
        let mut watch = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            use notify::event::{AccessKind, AccessMode};
            let Ok(event) = event else { return };
            let closed = matches!(event.kind, notify::EventKind::Access(AccessKind::Close(AccessMode::Write)));
            // Opening a report is not news: the session's own reads open
            // them, and passing those on would have each read wake the
            // next one for as long as a child runs.
            if matches!(event.kind, notify::EventKind::Access(_)) && !closed {
                return;
            }
            for p in event.paths {
                let _ = tx.send((p, closed));
            }
        })
        .ok()?;
        watch.watch(&dir, notify::RecursiveMode::NonRecursive).ok()?;
        let env = (OsString::from(CHILDREN_ENV), dir.as_os_str().to_owned());
        let children = Children {
            dir,
            _owned: owned,
            importer,
            _watch: watch,
            changes,
            read: BTreeMap::new(),
            reports: Reports::default(),
            drawn: false,
        };
        Some((children, env))
    }

    /// The next report that changed.
    pub(super) async fn changed(&mut self) -> Change {
        match self.changes.recv().await {
            Some(c) => c,
            None => std::future::pending().await,
        }
    }

    /// Reads what was added to the report and returns the `child` events
    /// it brings. A report whose writer is gone is removed, and its
    /// child's spool imported (notices for what could not be).
    pub(super) fn read(&mut self, (path, closed): Change) -> Vec<AgentEvent> {
        if path.parent() != Some(self.dir.as_path()) {
            return Vec::new();
        }
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else { return Vec::new() };
        // Reports have dot-names; anything else here is a child's spool.
        if !name.starts_with('.') || self.reports.closed(&name) {
            return Vec::new();
        }
        let mut events = if self.reports.ended(&name) {
            self.reports.feed(&name, (&[], Instant::now()), closed)
        } else {
            let from = self.read.get(&path).copied().unwrap_or(0);
            let bytes = read_from(&path, from);
            self.read.insert(path.clone(), from + bytes.len() as u64);
            self.reports.feed(&name, (&bytes, Instant::now()), closed)
        };
        // A child that spools its session is listed from its start.
        if let (Some(importer), Some(begun)) = (self.importer.as_mut(), self.reports.take_begun(&name)) {
            events.extend(importer.started(&self.dir, begun));
        }
        if self.reports.closed(&name) {
            let _ = std::fs::remove_file(&path);
            if let (Some(importer), Some(session)) = (self.importer.as_mut(), self.reports.session(&name)) {
                events.extend(importer.import(&self.dir, session));
            }
        }
        events
    }

    /// At the session's end: every report read to its end, and every
    /// spool still here imported, whether or not its child was heard to go.
    pub(super) fn finish(&mut self) -> Vec<AgentEvent> {
        let mut events = self.settle();
        if let Some(importer) = self.importer.as_mut() {
            events.extend(importer.import_all(&self.dir));
        }
        events
    }

    /// What to write on the terminal for the foreground child's progress:
    /// its line over the current one, or, when none runs, a blank line
    /// where one was drawn. `None`: nothing to change. The line goes to the
    /// terminal only, never to the command's captured output.
    pub(super) fn progress_line(&mut self, width: usize) -> Option<String> {
        match self.reports.progress(Instant::now(), width) {
            Some(line) => {
                self.drawn = true;
                Some(format!("\r{line}\x1b[K"))
            }
            None => self.clear_line(),
        }
    }

    /// Erases the progress line, if one is drawn (before the command's own
    /// output, or when the child ends).
    pub(super) fn clear_line(&mut self) -> Option<String> {
        std::mem::take(&mut self.drawn).then(|| "\r\x1b[K".to_string())
    }

    /// Reads every report to its end now, rather than when its
    /// notification comes: a child that ended before the command that
    /// started it is reported before that command's result, and one whose
    /// process is gone without a result (`kill -9`) is reported ended.
    pub(super) fn settle(&mut self) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return events };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            events.extend(self.read((p, false)));
        }
        for (name, pid) in self.reports.open() {
            let gone = pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists());
            if gone {
                events.extend(self.read((self.dir.join(name), true)));
            }
        }
        events
    }
}

/// The report's bytes from `from` on (nothing if it cannot be read).
fn read_from(path: &Path, from: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    use std::os::unix::fs::OpenOptionsExt as _;
    // A command in the sandbox may write this directory too: a symbolic
    // link there is not followed.
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path);
    if let Ok(mut f) = opened
        && f.metadata().is_ok_and(|m| m.is_file())
        && f.seek(std::io::SeekFrom::Start(from)).is_ok()
    {
        let _ = f.read_to_end(&mut bytes);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses(events: &[AgentEvent]) -> Vec<(String, ChildStatus)> {
        events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Child { id, status, .. } => Some((id.clone(), *status)),
                _ => None,
            })
            .collect()
    }

    const HEADER: &str = "{\"report\":\"child\",\"pid\":7,\"instruction\":\"check the logs\"}\n";
    const SESSION: &str =
        "{\"type\":\"session\",\"v\":1,\"id\":\"s3f2a\",\"journal\":null,\"shell\":\"bash\",\"cwd\":\"/\"}\n";
    const RESULT: &str = "{\"type\":\"result\",\"status\":\"ok\",\"exit_code\":0,\"usage\":{\"input\":10,\"output\":5},\"commands\":1}\n";

    #[test]
    fn a_child_starts_with_its_session_and_ends_with_its_result() {
        let mut r = Reports::default();
        assert!(r.feed("a", (HEADER.as_bytes(), Instant::now()), false).is_empty());
        // Split mid-line: nothing until the line is whole.
        let (one, two) = SESSION.split_at(20);
        assert!(r.feed("a", (one.as_bytes(), Instant::now()), false).is_empty());
        let started = r.feed("a", (two.as_bytes(), Instant::now()), false);
        assert_eq!(statuses(&started), [("c1".to_string(), ChildStatus::Running)]);
        let ended = r.feed("a", (RESULT.as_bytes(), Instant::now()), false);
        assert_eq!(
            ended,
            [AgentEvent::Child {
                id: "c1".into(),
                session: Some("s3f2a".into()),
                instruction: "check the logs".into(),
                status: ChildStatus::Ok,
                usage: ua_protocol::agent::TokenUsage { input: 10, output: 5, cost_micros: None },
            }]
        );
        // Its writer closing after the result adds nothing.
        assert!(r.feed("a", (&b""[..], Instant::now()), true).is_empty());
    }

    #[test]
    fn a_report_is_closed_when_its_writer_goes_not_at_its_result() {
        // The child's spool is complete only once the process is gone.
        let mut r = Reports::default();
        let text = format!("{HEADER}{SESSION}{RESULT}");
        assert_eq!(r.feed("a", (text.as_bytes(), Instant::now()), false).len(), 2);
        assert!(r.ended("a") && !r.closed("a"));
        assert_eq!(r.open(), [("a".to_string(), Some(7))]);
        assert!(r.feed("a", (&b""[..], Instant::now()), true).is_empty());
        assert!(r.closed("a") && r.open().is_empty());
        assert_eq!(r.session("a"), Some("s3f2a"));
    }

    #[test]
    fn a_refused_child_only_ends() {
        let mut r = Reports::default();
        let text = format!(
            "{HEADER}{}\n{}\n",
            r#"{"type":"error","message":"not started","kind":"depth"}"#,
            r#"{"type":"result","status":"error","exit_code":77,"usage":{"input":0,"output":0},"commands":0}"#
        );
        assert_eq!(
            statuses(&r.feed("b", (text.as_bytes(), Instant::now()), true)),
            [("c1".to_string(), ChildStatus::Refused)]
        );
    }

    #[test]
    fn a_report_closed_without_a_result_is_an_error() {
        let mut r = Reports::default();
        r.feed("x", (HEADER.as_bytes(), Instant::now()), false);
        let text = format!("{HEADER}{SESSION}");
        assert_eq!(
            statuses(&r.feed("y", (text.as_bytes(), Instant::now()), false)),
            [("c2".to_string(), ChildStatus::Running)]
        );
        assert_eq!(statuses(&r.feed("y", (&b""[..], Instant::now()), true)), [("c2".to_string(), ChildStatus::Error)]);
        assert!(r.ended("y"));
        assert!(!r.ended("x"));
    }

    #[test]
    fn reading_a_report_wakes_nothing() {
        use std::io::Write as _;
        let board = tempfile::tempdir().unwrap();
        let (mut children, _) = Children::start(Some(board.path()), Place::Own(None)).unwrap();
        let dir = children.dir.clone();
        let report = dir.join(".7-1.ndjson");
        let mut writer = std::fs::File::create(&report).unwrap();
        writer.write_all(HEADER.as_bytes()).unwrap();
        writer.write_all(SESSION.as_bytes()).unwrap();
        // Every change up to a marker made after the session's reads:
        // inotify keeps the order things happened in.
        let until_marker = |children: &mut Children, marker: &str| {
            std::fs::write(dir.join(marker), "").unwrap();
            let mut seen = Vec::new();
            loop {
                let change = children.changes.blocking_recv().expect("the watch is alive");
                if change.0.ends_with(marker) {
                    return seen;
                }
                // The last marker's own later events (its write and close).
                if !change.0.file_name().is_some_and(|n| n.to_string_lossy().starts_with("marker-")) {
                    seen.push(change);
                }
            }
        };
        let written = until_marker(&mut children, "marker-1");
        assert!(written.iter().any(|(p, _)| *p == report), "{written:?}");
        let events: Vec<AgentEvent> = written.into_iter().flat_map(|c| children.read(c)).collect();
        assert_eq!(statuses(&events), [("c1".to_string(), ChildStatus::Running)]);
        // The reads opened the report; that is no change.
        assert_eq!(until_marker(&mut children, "marker-2"), []);
    }
}
