//! Watching a board for state changes, whichever process makes them.
//!
//! Two parts, so that the logic is tested without a filesystem:
//!
//! - [`Changes`] is a pure value: fed one [`Snapshot`] after another, it
//!   returns each task that entered a state (a new task entering `todo`
//!   included), with where it came from.
//! - [`Watcher`] is the thin driver: the kernel's file notifications
//!   (inotify, through the `notify` crate) wake a thread of its own, which
//!   reads the board again and feeds [`Changes`]. Nothing polls: while the
//!   board does not change the thread sleeps in the kernel.
//!
//! A task is moved by one `rename(2)`, but reading the board takes one
//! directory after another, so a move landing during a read can show the
//! task twice or not at all. Such a read is never taken at its word: a
//! task seen twice keeps the state it had, one missing from a read made
//! while more notifications arrived is read again, and the driver reads
//! until the board held still during a read (at most a few times in a
//! row).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use serde::Serialize;

use super::{Board, BoardError, Snapshot, State, Task};

/// A task that entered a state: what the NDJSON `task` event carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskChange {
    pub id: u32,
    pub title: String,
    pub state: State,
    /// The state it left; `None` for a task new on the board.
    pub from: Option<State>,
    pub assignee: Option<String>,
    /// Why it is blocked (`blocked_by`), when it entered `blocked`.
    pub reason: Option<String>,
}

impl TaskChange {
    fn of(t: &Task, from: Option<State>) -> Self {
        TaskChange {
            id: t.id,
            title: t.title.clone(),
            state: t.state,
            from,
            assignee: t.assignee.clone(),
            reason: if t.state == State::Blocked { t.blocked_by.clone() } else { None },
        }
    }
}

/// The states last seen, and the changes each new read brings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    seen: BTreeMap<u32, State>,
}

impl Changes {
    /// Starts from `baseline`: what is on the board already is no change.
    pub fn new(baseline: &Snapshot) -> Self {
        let mut c = Changes::default();
        c.feed(baseline);
        c
    }

    /// The tasks of `now` whose state differs from the last read. A task
    /// that `now` shows twice (it moved during the read) keeps its last
    /// state until a read shows it once; one that `now` does not show is
    /// forgotten (removed, or to be seen again as new).
    pub fn feed(&mut self, now: &Snapshot) -> Vec<TaskChange> {
        let twice: std::collections::BTreeSet<u32> = now.broken.iter().filter_map(|b| b.id).collect();
        let mut out = Vec::new();
        let mut next = BTreeMap::new();
        for t in &now.tasks {
            if twice.contains(&t.id) {
                if let Some(s) = self.seen.get(&t.id) {
                    next.insert(t.id, *s);
                }
                continue;
            }
            match self.seen.get(&t.id) {
                Some(s) if *s == t.state => {}
                Some(s) => out.push(TaskChange::of(t, Some(*s))),
                None => out.push(TaskChange::of(t, None)),
            }
            next.insert(t.id, t.state);
        }
        // Broken files with an id but no readable copy keep their state.
        for id in &twice {
            if let (false, Some(s)) = (next.contains_key(id), self.seen.get(id)) {
                next.insert(*id, *s);
            }
        }
        self.seen = next;
        out
    }
}

/// Reads in a row while notifications keep arriving during the read.
pub(crate) const SETTLE_READS: usize = 4;

/// A thread that reports a board's state changes as they happen. Dropping
/// it stops the thread.
#[derive(Debug)]
pub struct Watcher {
    _notify: notify::RecommendedWatcher,
    reads: Arc<AtomicU64>,
}

impl Watcher {
    /// Watches `board` (which must exist) and calls `on_change` on the
    /// watcher's thread with the changes of each burst of file activity.
    /// What is on the board when it starts is no change.
    pub fn start(
        board: Board,
        mut on_change: impl FnMut(Vec<TaskChange>) + Send + 'static,
    ) -> Result<Watcher, BoardError> {
        use notify::Watcher as _;
        let root = board.root().to_path_buf();
        let failed = |e: notify::Error| BoardError::Io {
            action: "watch",
            path: root.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let (tx, rx) = mpsc::channel::<()>();
        let ids = root.join(super::IDS_DIR);
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if relevant(&event, &ids) {
                let _ = tx.send(());
            }
        })
        .map_err(failed)?;
        // The root (PLAN.md) and each state's directory, not recursively:
        // the board also holds dot-directories other processes write to
        // all the time (the child agents' reports), and a recursive watch
        // would wake every session on the board at each of their writes.
        watcher.watch(&root, notify::RecursiveMode::NonRecursive).map_err(failed)?;
        for state in super::State::ALL {
            watcher.watch(&root.join(state.name()), notify::RecursiveMode::NonRecursive).map_err(failed)?;
        }
        // The baseline is read once the watch is in place, so nothing that
        // happens after it is missed.
        let mut changes = Changes::new(&board.snapshot()?);
        let reads = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&reads);
        std::thread::Builder::new()
            .name("ua-board-watch".into())
            .spawn(move || {
                // Ends when the notify watcher is dropped with its sender.
                while rx.recv().is_ok() {
                    let mut snap = None;
                    for _ in 0..SETTLE_READS {
                        while rx.try_recv().is_ok() {}
                        counter.fetch_add(1, Ordering::Relaxed);
                        snap = board.snapshot().ok();
                        if rx.try_recv().is_err() {
                            break;
                        }
                    }
                    let found = snap.map(|s| changes.feed(&s)).unwrap_or_default();
                    if !found.is_empty() {
                        on_change(found);
                    }
                }
            })
            .map_err(BoardError::io("start a thread to watch", root.clone()))?;
        Ok(Watcher { _notify: watcher, reads })
    }

    /// How many times the board has been read since the start (each wake-up
    /// reads it at least once): zero while nothing changes.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

/// Whether a notification may mean a task changed. Opening and reading
/// files changes nothing, and the watcher's own reads of the board would
/// otherwise wake it again and again; temporary files and id records
/// change no task. An error may hide anything, so it counts.
fn relevant(event: &notify::Result<notify::Event>, ids: &Path) -> bool {
    match event {
        Ok(e) if matches!(e.kind, notify::EventKind::Access(_)) => false,
        Ok(e) => e.paths.is_empty() || e.paths.iter().any(|p| !quiet(p, ids)),
        Err(_) => true,
    }
}

/// A path whose change cannot change a task: a dot-file (temporary files,
/// editors' swap files) or an id record.
fn quiet(p: &Path, ids: &Path) -> bool {
    p.starts_with(ids) || p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::BrokenTask;
    use std::path::PathBuf;

    fn task(id: u32, state: State) -> Task {
        Task {
            id,
            title: format!("task {id}"),
            state,
            created: None,
            updated: None,
            depends_on: vec![],
            blocked_by: (state == State::Blocked).then(|| "waiting for a key".into()),
            assignee: (state == State::Doing).then(|| "s-1".into()),
            assignee_pid: None,
            tags: vec![],
            body: String::new(),
            path: PathBuf::from(format!("/b/{state}/{id}-x.md")),
        }
    }

    fn snap(tasks: &[(u32, State)]) -> Snapshot {
        Snapshot { tasks: tasks.iter().map(|(i, s)| task(*i, *s)).collect(), ..Snapshot::default() }
    }

    #[test]
    fn a_new_board_reports_nothing_then_each_move() {
        let mut c = Changes::new(&snap(&[(1, State::Todo), (2, State::Done)]));
        assert_eq!(c.feed(&snap(&[(1, State::Todo), (2, State::Done)])), vec![]);
        let got = c.feed(&snap(&[(1, State::Doing), (2, State::Done), (3, State::Todo)]));
        assert_eq!(
            got,
            vec![
                TaskChange {
                    id: 1,
                    title: "task 1".into(),
                    state: State::Doing,
                    from: Some(State::Todo),
                    assignee: Some("s-1".into()),
                    reason: None
                },
                TaskChange {
                    id: 3,
                    title: "task 3".into(),
                    state: State::Todo,
                    from: None,
                    assignee: None,
                    reason: None
                },
            ]
        );
        let got = c.feed(&snap(&[(1, State::Blocked), (2, State::Done), (3, State::Todo)]));
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].from, got[0].reason.as_deref()), (Some(State::Doing), Some("waiting for a key")));
    }

    #[test]
    fn a_task_seen_twice_mid_move_keeps_its_state_until_seen_once() {
        let mut c = Changes::new(&snap(&[(1, State::Todo)]));
        let mut torn = snap(&[(1, State::Todo)]);
        torn.broken.push(BrokenTask {
            id: Some(1),
            state: State::Doing,
            path: "/b/doing/1-x.md".into(),
            line: 1,
            message: "task 1 is also at …".into(),
        });
        assert_eq!(c.feed(&torn), vec![]);
        let got = c.feed(&snap(&[(1, State::Doing)]));
        assert_eq!(
            got.iter().map(|g| (g.id, g.from, g.state)).collect::<Vec<_>>(),
            [(1, Some(State::Todo), State::Doing)]
        );
    }

    #[test]
    fn reads_temporary_files_and_id_records_wake_nobody() {
        use notify::event::{AccessKind, CreateKind, EventKind, ModifyKind, RenameMode};
        let ids = Path::new("/b/.ids");
        let ev = |kind, path: &str| Ok(notify::Event::new(kind).add_path(path.into()));
        assert!(!relevant(&ev(EventKind::Access(AccessKind::Any), "/b/todo/1-x.md"), ids));
        assert!(!relevant(&ev(EventKind::Create(CreateKind::File), "/b/todo/.new.1.tmp"), ids));
        assert!(!relevant(&ev(EventKind::Create(CreateKind::File), "/b/.ids/7"), ids));
        assert!(relevant(&ev(EventKind::Modify(ModifyKind::Name(RenameMode::To)), "/b/doing/1-x.md"), ids));
        assert!(relevant(&ev(EventKind::Create(CreateKind::File), "/b/todo/2-y.md"), ids));
        assert!(relevant(&Err(notify::Error::generic("queue overflow")), ids));
    }

    #[test]
    fn a_removed_task_is_forgotten() {
        let mut c = Changes::new(&snap(&[(1, State::Todo), (2, State::Todo)]));
        assert_eq!(c.feed(&snap(&[(2, State::Todo)])), vec![]);
        let got = c.feed(&snap(&[(1, State::Todo), (2, State::Todo)]));
        assert_eq!(got.iter().map(|g| (g.id, g.from)).collect::<Vec<_>>(), [(1, None)]);
    }
}
