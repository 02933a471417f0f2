//! The task board: `<session dir>/board/`, plain files that the person,
//! `ls`, `grep`, git, the agent and its child agents all read the same way.
//!
//! ```text
//! board/
//!   PLAN.md                  the approach, written by the agent
//!   todo/3-fix-the-parser.md one file per task, in its state's directory
//!   doing/ blocked/ review/ done/
//!   .ids/                    one empty file per id ever handed out
//! ```
//!
//! A task file is flat YAML frontmatter ([`frontmatter`]) and a Markdown
//! body. A task's state is the directory it is in, so every state change
//! is a `rename(2)` within the board, which the kernel does in one step:
//! any number of processes may claim at once and each task goes to exactly
//! one (the others' renames find the name gone). See [`Board::claim`] for
//! the order of steps, and DESIGN.md for why files and renames.
//!
//! ```
//! use ua_store::board::{Board, Claimant, NewTask, State};
//!
//! # fn main() -> Result<(), ua_store::board::BoardError> {
//! # let root = std::env::temp_dir().join(format!("ua-board-doc-{}", std::process::id()));
//! let board = Board::create(&root)?;
//! let first = board.add(&NewTask::titled("Write the parser"), 0)?;
//! let second = board.add(&NewTask { depends_on: vec![first.id], ..NewTask::titled("Test it") }, 0)?;
//! let me = Claimant { name: "20261124T100000.000Z-0000abcd".into(), pid: Some(std::process::id()) };
//! let alive = |_: &str, _: Option<u32>| true;
//! // The second waits for the first to be done, so the first is claimed.
//! let claimed = board.claim(None, &me, &alive, 0)?;
//! assert_eq!((claimed.id, claimed.state), (first.id, State::Doing));
//! board.move_to(first.id, State::Done, None, &me, 0)?;
//! assert_eq!(board.claim(None, &me, &alive, 0)?.id, second.id);
//! # std::fs::remove_dir_all(&root).ok();
//! # Ok(())
//! # }
//! ```

mod error;
pub(crate) mod files;
pub mod frontmatter;
mod task;
pub mod watch;

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use error::BoardError;
pub use frontmatter::{Broken, Document, Value};
pub use task::{State, Task, file_name, id_of_file_name, keys};

/// The board's directory name inside a session directory.
pub const BOARD_DIR: &str = "board";
/// The plan's file name inside the board.
pub const PLAN_FILE: &str = "PLAN.md";
/// Where allocated ids are recorded.
const IDS_DIR: &str = ".ids";
/// Rounds of re-reading the board when every claim attempt lost a race.
const CLAIM_ROUNDS: usize = 8;

/// A task board on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    root: PathBuf,
}

/// Who claims or moves a task: a session id (the agent's) with its
/// process, or a person's name without one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    pub name: String,
    pub pid: Option<u32>,
}

/// A task to add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewTask {
    pub title: String,
    /// The prompt and its acceptance criteria (Markdown).
    pub body: String,
    pub depends_on: Vec<u32>,
    pub tags: Vec<String>,
}

impl NewTask {
    pub fn titled(title: &str) -> Self {
        NewTask { title: title.to_string(), ..NewTask::default() }
    }
}

/// A task file that could not be read, or is not where it should be.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BrokenTask {
    /// The id its name gives, if it has one.
    pub id: Option<u32>,
    pub state: State,
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

/// The whole board as read at one time: every task and every broken file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Readable tasks, by id.
    pub tasks: Vec<Task>,
    /// Files that are not readable tasks (or a second file with the same
    /// id), by path.
    pub broken: Vec<BrokenTask>,
    /// Tasks in `doing` whose assignee's process is gone (see
    /// [`Snapshot::judge`]).
    pub gone: BTreeSet<u32>,
}

impl Snapshot {
    pub fn get(&self, id: u32) -> Option<&Task> {
        self.tasks.binary_search_by_key(&id, |t| t.id).ok().map(|i| &self.tasks[i])
    }

    /// How many tasks are in each state, in [`State::ALL`] order.
    pub fn counts(&self) -> [usize; 5] {
        let mut c = [0; 5];
        for t in &self.tasks {
            c[t.state as usize] += 1;
        }
        c
    }

    /// Whether the board has no task and no broken file.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.broken.is_empty()
    }

    /// The ids that also have a broken or second file: not claimable.
    fn troubled(&self) -> BTreeSet<u32> {
        self.broken.iter().filter_map(|b| b.id).collect()
    }

    /// Why `t` cannot be claimed from `todo`, if it cannot.
    pub fn unmet(&self, t: &Task) -> Option<String> {
        if self.troubled().contains(&t.id) {
            return Some("another file has the same id, or it cannot be read".into());
        }
        let waiting: Vec<String> = t
            .depends_on
            .iter()
            .filter(|d| self.get(**d).is_none_or(|dep| dep.state != State::Done))
            .map(u32::to_string)
            .collect();
        match waiting.len() {
            0 => None,
            1 => Some(format!("it depends on task {}, which is not done", waiting[0])),
            _ => Some(format!("it depends on tasks {}, which are not done", waiting.join(", "))),
        }
    }

    /// Tasks in `todo` whose dependencies are all done, by id.
    pub fn ready(&self) -> impl Iterator<Item = &Task> {
        self.tasks.iter().filter(|t| t.state == State::Todo && self.unmet(t).is_none())
    }

    /// Marks tasks in `doing` whose assignee is gone: `alive(session,
    /// pid)` says whether the assignee still runs. A task without an
    /// assignee (a person moved it by hand, or a claim is half-way) is
    /// never gone.
    pub fn judge(&mut self, alive: &dyn Fn(&str, Option<u32>) -> bool) {
        self.gone = self
            .tasks
            .iter()
            .filter(|t| t.state == State::Doing)
            .filter(|t| t.assignee.as_deref().is_some_and(|a| !alive(a, t.assignee_pid)))
            .map(|t| t.id)
            .collect();
    }
}

impl Board {
    /// The board at `root`, whether or not it exists yet.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Board { root: root.into() }
    }

    /// The board of the session directory `session_dir`.
    pub fn of_session(session_dir: &Path) -> Self {
        Board::at(session_dir.join(BOARD_DIR))
    }

    /// The board at `root`, which must exist.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, BoardError> {
        let board = Board::at(root);
        if !board.root.join(State::Todo.name()).is_dir() {
            return Err(BoardError::NoBoard { path: board.root });
        }
        Ok(board)
    }

    /// Creates the board's directories (0700) where missing.
    pub fn create(root: impl Into<PathBuf>) -> Result<Self, BoardError> {
        let board = Board::at(root);
        for dir in State::ALL.iter().map(|s| s.name()).chain([IDS_DIR]) {
            let path = board.root.join(dir);
            files::make_dir(&path).map_err(BoardError::io("create", path))?;
        }
        Ok(board)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn exists(&self) -> bool {
        self.root.join(State::Todo.name()).is_dir()
    }

    fn dir(&self, state: State) -> PathBuf {
        self.root.join(state.name())
    }

    /// Reads every task. Broken files are listed, never fatal; a missing
    /// board is [`BoardError::NoBoard`].
    pub fn snapshot(&self) -> Result<Snapshot, BoardError> {
        let mut snap = Snapshot::default();
        for state in State::ALL {
            let dir = self.dir(state);
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound && state != State::Todo => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(BoardError::NoBoard { path: self.root.clone() });
                }
                Err(e) => return Err(BoardError::io("read", dir)(e)),
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if name.starts_with('.') || !name.ends_with(".md") {
                    continue;
                }
                let path = entry.path();
                let Some(id) = id_of_file_name(name) else {
                    let message = "not a task: task files are named <id>-<slug>.md".into();
                    snap.broken.push(BrokenTask { id: None, state, path, line: 1, message });
                    continue;
                };
                match read_task(&path, id, state) {
                    Ok(Some(t)) => snap.tasks.push(t),
                    // Moved away between listing and reading.
                    Ok(None) => {}
                    Err(BoardError::Broken { path, line, message }) => {
                        snap.broken.push(BrokenTask { id: Some(id), state, path, line, message });
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        snap.tasks.sort_by_key(|t| (t.id, t.state));
        // A second file with an id already seen: a hand-made copy, or a
        // task seen in two directories because it moved while they were
        // read.
        let mut kept: Vec<Task> = Vec::with_capacity(snap.tasks.len());
        for t in std::mem::take(&mut snap.tasks) {
            match kept.last() {
                Some(prev) if prev.id == t.id => snap.broken.push(BrokenTask {
                    id: Some(t.id),
                    state: t.state,
                    message: format!("task {} is also at {}; remove one of them", t.id, prev.path.display()),
                    path: t.path,
                    line: 1,
                }),
                _ => kept.push(t),
            }
        }
        snap.tasks = kept;
        snap.broken.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(snap)
    }

    /// The task with `id`, wherever it is.
    pub fn get(&self, id: u32) -> Result<Task, BoardError> {
        let (state, path) = self.find(id)?;
        read_task(&path, id, state)?.ok_or(BoardError::NoSuchTask { id })
    }

    /// Where the file of task `id` is.
    pub fn find(&self, id: u32) -> Result<(State, PathBuf), BoardError> {
        if !self.exists() {
            return Err(BoardError::NoBoard { path: self.root.clone() });
        }
        for state in State::ALL {
            let dir = self.dir(state);
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name.to_str().and_then(id_of_file_name) == Some(id) {
                    return Ok((state, entry.path()));
                }
            }
        }
        Err(BoardError::NoSuchTask { id })
    }

    /// Adds a task to `todo` and returns it. Its id is new on this board
    /// (see [`Board::allocate`]).
    pub fn add(&self, new: &NewTask, now_ms: u64) -> Result<Task, BoardError> {
        let title = new.title.split_whitespace().collect::<Vec<_>>().join(" ");
        if title.is_empty() {
            return Err(BoardError::Invalid("a task needs a title".into()));
        }
        let snap = self.snapshot()?;
        for d in &new.depends_on {
            if snap.get(*d).is_none() {
                return Err(BoardError::Invalid(format!(
                    "task {d} is not on the board, so the new task cannot depend on it"
                )));
            }
        }
        let id = self.allocate(snap.tasks.iter().map(|t| t.id).chain(snap.broken.iter().filter_map(|b| b.id)))?;
        let now = stamp(now_ms);
        let mut entries = vec![
            (keys::ID, Value::Scalar(id.to_string())),
            (keys::TITLE, Value::Scalar(title.clone())),
            (keys::CREATED, Value::Scalar(now.clone())),
            (keys::UPDATED, Value::Scalar(now)),
        ];
        if !new.depends_on.is_empty() {
            entries.push((keys::DEPENDS_ON, task::id_list(&new.depends_on)));
        }
        if !new.tags.is_empty() {
            entries.push((keys::TAGS, Value::List(new.tags.clone())));
        }
        let doc = Document::new(&entries, &new.body);
        let dir = self.dir(State::Todo);
        let path = dir.join(file_name(id, &title));
        let tmp = files::write_temp(&dir, "new", &doc.render()).map_err(BoardError::io("write", &dir))?;
        files::rename_new(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            BoardError::io("create", &path)(e)
        })?;
        read_task(&path, id, State::Todo)?.ok_or(BoardError::Conflict { id, why: "it left todo at once".into() })
    }

    /// A new id: one more than any seen (`seen`, and every id recorded in
    /// `.ids/`), taken by creating `.ids/<id>` with `O_EXCL`. Two processes
    /// adding at once may try the same number; the kernel lets exactly one
    /// create the file, and the other tries the next.
    pub fn allocate(&self, seen: impl Iterator<Item = u32>) -> Result<u32, BoardError> {
        let ids = self.root.join(IDS_DIR);
        files::make_dir(&ids).map_err(BoardError::io("create", &ids))?;
        let recorded = fs::read_dir(&ids).map_err(BoardError::io("read", &ids))?;
        let recorded = recorded.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()));
        let mut next = seen.chain(recorded).max().unwrap_or(0).saturating_add(1);
        loop {
            let path = ids.join(next.to_string());
            match files::create_new(&path) {
                Ok(()) => return Ok(next),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && next < u32::MAX => next += 1,
                Err(e) => return Err(BoardError::io("record a new id in", ids)(e)),
            }
        }
    }

    /// Claims task `id`, or the first ready one, for `who`: moves it from
    /// `todo` to `doing` with `who` as its assignee, and returns it. A task
    /// in `doing` whose assignee is gone (`alive`, see
    /// [`Snapshot::judge`]) goes back to `todo` first and is then claimed
    /// like any other; without an id those come after the ready ones.
    ///
    /// The steps: the assignee is written into the file while it is still
    /// in `todo` (swapped in only if the file is still there), then the
    /// file is renamed into `doing`. The rename is the claim: among any
    /// number of processes renaming the same file exactly one succeeds.
    /// Writing first means a watcher sees the task arrive in `doing` with
    /// its assignee; when two claimers wrote at once the winner finds the
    /// other's name and writes its own again.
    pub fn claim(
        &self,
        id: Option<u32>,
        who: &Claimant,
        alive: &dyn Fn(&str, Option<u32>) -> bool,
        now_ms: u64,
    ) -> Result<Task, BoardError> {
        for _ in 0..CLAIM_ROUNDS {
            let mut snap = self.snapshot()?;
            snap.judge(alive);
            let candidates: Vec<Task> = match id {
                Some(id) => vec![self.claimable(&snap, id)?.clone()],
                None => {
                    let ready = snap.ready().cloned();
                    let gone = snap.tasks.iter().filter(|t| snap.gone.contains(&t.id)).cloned();
                    let all: Vec<Task> = ready.chain(gone).collect();
                    if all.is_empty() {
                        return Err(BoardError::NoneReady { why: why_none_ready(&snap) });
                    }
                    all
                }
            };
            for t in candidates {
                let t = if t.state == State::Doing {
                    match self.move_file(&t, State::Todo, None, who, now_ms) {
                        Ok(t) => t,
                        Err(BoardError::Conflict { .. }) => continue,
                        Err(e) => return Err(e),
                    }
                } else {
                    t
                };
                match self.try_claim(&t, who, now_ms) {
                    Ok(Some(claimed)) => return Ok(claimed),
                    Ok(None) => {}
                    Err(e) => return Err(e),
                }
            }
            if let Some(id) = id {
                return Err(BoardError::Conflict { id, why: "another process claimed it first".into() });
            }
        }
        Err(BoardError::NoneReady { why: "other processes claimed every ready task first".into() })
    }

    /// Task `id` if it may be claimed now, else why not.
    fn claimable<'a>(&self, snap: &'a Snapshot, id: u32) -> Result<&'a Task, BoardError> {
        if let Some(b) = snap.broken.iter().find(|b| b.id == Some(id)) {
            return Err(BoardError::Broken { path: b.path.clone(), line: b.line, message: b.message.clone() });
        }
        let t = snap.get(id).ok_or(BoardError::NoSuchTask { id })?;
        let why = match t.state {
            State::Todo => snap.unmet(t),
            State::Doing if snap.gone.contains(&id) => None,
            State::Doing => Some(match &t.assignee {
                Some(a) => format!("it is in doing, claimed by {a}"),
                None => "it is in doing".into(),
            }),
            s => Some(format!("it is in {s}")),
        };
        match why {
            Some(why) => Err(BoardError::NotReady { id, why }),
            None => Ok(t),
        }
    }

    /// One claim attempt on `t` (in `todo`): `Ok(None)` when another
    /// process got there first.
    fn try_claim(&self, t: &Task, who: &Claimant, now_ms: u64) -> Result<Option<Task>, BoardError> {
        let name = t.file_name();
        let (todo, doing) = (self.dir(State::Todo).join(&name), self.dir(State::Doing).join(&name));
        let Some(mut doc) = read_document(&todo)? else { return Ok(None) };
        assign(&mut doc, Some(who), now_ms);
        match self.swap_in(State::Todo, &todo, &doc) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(BoardError::io("write", todo)(e)),
        }
        files::make_dir(&self.dir(State::Doing)).map_err(BoardError::io("create", self.dir(State::Doing)))?;
        match files::rename_new(&todo, &doing) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(BoardError::io("move", todo)(e)),
        }
        // Ours now. A claimer that lost may have written its name last.
        let Some(mut doc) = read_document(&doing)? else {
            return Err(BoardError::Conflict { id: t.id, why: "it left doing at once".into() });
        };
        if doc.get(keys::ASSIGNEE) != Some(&Value::Scalar(who.name.clone())) {
            assign(&mut doc, Some(who), now_ms);
            self.swap_in(State::Doing, &doing, &doc).map_err(BoardError::io("write", &doing))?;
        }
        read_task(&doing, t.id, State::Doing)?
            .map(Some)
            .ok_or(BoardError::Conflict { id: t.id, why: "it left doing at once".into() })
    }

    /// Moves task `id` to `to` and returns it as it now is, with where it
    /// was. `blocked` needs a reason, which goes into `blocked_by`; leaving
    /// `blocked` removes it. Back in `todo` a task has no assignee; moved
    /// into `doing` by hand it gets `who` unless it has one.
    pub fn move_to(
        &self,
        id: u32,
        to: State,
        reason: Option<&str>,
        who: &Claimant,
        now_ms: u64,
    ) -> Result<(Task, State), BoardError> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if to == State::Blocked && reason.is_none() {
            return Err(BoardError::Invalid("a task moves to blocked with a reason: --reason TEXT".into()));
        }
        let mut last = None;
        for _ in 0..3 {
            let (from, path) = self.find(id)?;
            let t = read_task(&path, id, from)?.ok_or(BoardError::NoSuchTask { id })?;
            match self.move_file(&t, to, reason, who, now_ms) {
                Ok(moved) => return Ok((moved, from)),
                Err(e @ BoardError::Conflict { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(BoardError::Conflict { id, why: "it kept moving".into() }))
    }

    /// Rewrites `t`'s file for state `to` where it is, then renames it
    /// there. The text changes first so that whoever sees the task arrive
    /// sees it complete (a blocked task with its reason).
    fn move_file(
        &self,
        t: &Task,
        to: State,
        reason: Option<&str>,
        who: &Claimant,
        now_ms: u64,
    ) -> Result<Task, BoardError> {
        let conflict = |why: &str| BoardError::Conflict { id: t.id, why: why.into() };
        let Some(mut doc) = read_document(&t.path)? else { return Err(conflict("its file moved")) };
        // Read again: it is rewritten from what it says now.
        Task::from_document(&doc, t.id, t.state, t.path.clone()).map_err(|b| broken(&t.path, b))?;
        doc.set(keys::UPDATED, Value::Scalar(stamp(now_ms)));
        match (to, reason) {
            (State::Blocked, Some(r)) => doc.set(keys::BLOCKED_BY, Value::Scalar(r.into())),
            (State::Blocked, None) => {}
            _ => doc.remove(keys::BLOCKED_BY),
        }
        match to {
            State::Todo => assign(&mut doc, None, now_ms),
            State::Doing if doc.get(keys::ASSIGNEE).is_none() => assign(&mut doc, Some(who), now_ms),
            _ => {}
        }
        match self.swap_in(t.state, &t.path, &doc) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(conflict("its file moved")),
            Err(e) => return Err(BoardError::io("write", &t.path)(e)),
        }
        let target = self.dir(to).join(t.file_name());
        if to != t.state {
            // A board made by hand may lack the directory; a missing one
            // must not read as the task having moved.
            files::make_dir(&self.dir(to)).map_err(BoardError::io("create", self.dir(to)))?;
            match files::rename_new(&t.path, &target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(conflict("its file moved")),
                Err(e) => return Err(BoardError::io("move", &t.path)(e)),
            }
        }
        read_task(&target, t.id, to)?.ok_or_else(|| conflict("it moved on at once"))
    }

    /// Swaps `doc`'s text in for the file at `path` in `state`'s directory,
    /// only if the file is still there.
    fn swap_in(&self, state: State, path: &Path, doc: &Document) -> io::Result<()> {
        let tmp = files::write_temp(&self.dir(state), "edit", &doc.render())?;
        files::replace_existing(&tmp, path)
    }

    /// PLAN.md, if written.
    pub fn plan(&self) -> Result<Option<String>, BoardError> {
        let path = self.plan_path();
        match fs::read_to_string(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if self.exists() {
                    Ok(None)
                } else {
                    Err(BoardError::NoBoard { path: self.root.clone() })
                }
            }
            Err(e) => Err(BoardError::io("read", path)(e)),
        }
    }

    /// Replaces PLAN.md in one step.
    pub fn set_plan(&self, text: &str) -> Result<(), BoardError> {
        if !self.exists() {
            return Err(BoardError::NoBoard { path: self.root.clone() });
        }
        let path = self.plan_path();
        files::replace(&self.root, &path, text).map_err(BoardError::io("write", path))
    }

    pub fn plan_path(&self) -> PathBuf {
        self.root.join(PLAN_FILE)
    }
}

/// Sets or clears the assignee (with its process) and the update time.
fn assign(doc: &mut Document, who: Option<&Claimant>, now_ms: u64) {
    match who {
        Some(w) => {
            doc.set(keys::ASSIGNEE, Value::Scalar(w.name.clone()));
            match w.pid {
                Some(pid) => doc.set(keys::ASSIGNEE_PID, Value::Scalar(pid.to_string())),
                None => doc.remove(keys::ASSIGNEE_PID),
            }
        }
        None => {
            doc.remove(keys::ASSIGNEE);
            doc.remove(keys::ASSIGNEE_PID);
        }
    }
    doc.set(keys::UPDATED, Value::Scalar(stamp(now_ms)));
}

/// What `claim` says when nothing is ready.
fn why_none_ready(snap: &Snapshot) -> String {
    let waiting = snap.tasks.iter().filter(|t| t.state == State::Todo).count();
    match waiting {
        0 => "nothing is in todo".into(),
        1 => "the one task in todo waits on tasks that are not done".into(),
        n => format!("the {n} tasks in todo wait on tasks that are not done"),
    }
}

/// RFC 3339, as the frontmatter's `created` and `updated` hold it.
pub fn stamp(now_ms: u64) -> String {
    ua_protocol::time::Utc::from_unix_ms(now_ms).rfc3339()
}

fn broken(path: &Path, b: Broken) -> BoardError {
    BoardError::Broken { path: path.to_owned(), line: b.line, message: b.message }
}

/// The document at `path`; `None` if the file is gone.
fn read_document(path: &Path) -> Result<Option<Document>, BoardError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            return Err(BoardError::Broken { path: path.into(), line: 1, message: "it is not UTF-8 text".into() });
        }
        Err(e) => return Err(BoardError::io("read", path)(e)),
    };
    Document::parse(&text).map(Some).map_err(|b| broken(path, b))
}

/// The task at `path`; `None` if the file is gone.
fn read_task(path: &Path, id: u32, state: State) -> Result<Option<Task>, BoardError> {
    let Some(doc) = read_document(path)? else { return Ok(None) };
    Task::from_document(&doc, id, state, path.to_owned()).map(Some).map_err(|b| broken(path, b))
}

/// Whether an assignee still runs, as the session index judges sessions:
/// a session the index knows is alive while it is running (no end
/// record, its process alive); one it does not know (a child agent whose
/// sandbox hides the index, say) by its process. An assignee with neither
/// (a person) is never gone.
pub fn liveness(index: Option<&crate::index::Summaries>, session: &str, pid: Option<u32>) -> bool {
    if let Some(s) = index.and_then(|i| i.get(session)) {
        return matches!(s.state, crate::index::SessionState::Running { .. });
    }
    pid.is_none_or(crate::index::process_alive)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
