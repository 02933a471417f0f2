//! `unixagent board …`: the task board from the command line, which is
//! how the agent uses it (through its shell), and people and scripts too.
//! Also what the session needs to give its shell a board
//! ([`attach`]), and the pure pieces it shows ([`render`]).
//!
//! Which board: `--session ID`, else `$UNIXAGENT_BOARD` (set in every
//! session's shell, and inherited by every child agent, so that all of
//! them share the root session's board), else the latest session started
//! in this directory.

pub mod render;

use std::ffi::OsString;
use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::{Path, PathBuf};

use ua_store::board::{Board, BoardError, Claimant, NewTask, Snapshot, State};

use crate::cli::BoardAction;

/// The variable that names the board in a session's shell.
pub const BOARD_ENV: &str = "UNIXAGENT_BOARD";

/// Exit statuses, one per kind of failure, so scripts can tell them apart.
pub mod status {
    /// `claim`: no task is ready.
    pub const NONE_READY: i32 = 1;
    /// A wrong request: a block without a reason, an unknown dependency.
    pub const USAGE: i32 = 2;
    /// No board to work on.
    pub const NO_BOARD: i32 = 3;
    /// No task with that id.
    pub const NO_SUCH_TASK: i32 = 4;
    /// The task cannot be claimed now.
    pub const NOT_READY: i32 = 5;
    /// Another process moved the task meanwhile.
    pub const CONFLICT: i32 = 6;
    /// The task's file cannot be read; a person must fix it.
    pub const BROKEN: i32 = 7;
    /// Reading or writing failed.
    pub const IO: i32 = 8;
}

/// A failure: the one line to print and the exit status.
#[derive(Debug)]
struct Failure {
    status: i32,
    kind: &'static str,
    message: String,
}

impl From<BoardError> for Failure {
    fn from(e: BoardError) -> Self {
        let status = match &e {
            BoardError::NoBoard { .. } => status::NO_BOARD,
            BoardError::NoSuchTask { .. } => status::NO_SUCH_TASK,
            BoardError::NotReady { .. } => status::NOT_READY,
            BoardError::NoneReady { .. } => status::NONE_READY,
            BoardError::Broken { .. } => status::BROKEN,
            BoardError::Conflict { .. } => status::CONFLICT,
            BoardError::Invalid(_) => status::USAGE,
            BoardError::Io { .. } => status::IO,
        };
        Failure { status, kind: e.kind(), message: e.to_string() }
    }
}

impl Failure {
    fn no_board(message: String) -> Self {
        Failure { status: status::NO_BOARD, kind: "no_board", message }
    }

    fn io(message: String) -> Self {
        Failure { status: status::IO, kind: "io", message }
    }
}

/// `unixagent board [--json] [--session ID] [ACTION]`; the exit status.
pub fn run(action: Option<&BoardAction>, json: bool, session: Option<&str>) -> i32 {
    match dispatch(action, json, session) {
        Ok(()) => 0,
        Err(f) => {
            if json {
                eprintln!("{}", serde_json::json!({ "error": f.kind, "message": f.message }));
            } else {
                eprintln!("unixagent: {}", f.message);
            }
            f.status
        }
    }
}

fn dispatch(action: Option<&BoardAction>, json: bool, session: Option<&str>) -> Result<(), Failure> {
    let board = locate(session)?;
    let now = ua_store::session::now_ms();
    let mut out = std::io::stdout().lock();
    let print = |out: &mut std::io::StdoutLock<'_>, text: &str| {
        out.write_all(text.as_bytes()).map_err(|e| Failure::io(format!("writing the output failed: {e}")))
    };
    match action {
        None => {
            let snap = snapshot(&board)?;
            let plan = board.plan_path();
            let plan = plan.exists().then_some(plan.as_path());
            let text = if json {
                format!("{}\n", render::board_json(board.root(), &snap, plan.is_some()))
            } else if std::io::stdout().is_terminal() {
                render::columns(&snap, usize::from(crate::terminal::size().0), plan)
            } else {
                render::plain(&snap, plan)
            };
            print(&mut out, &text)
        }
        Some(BoardAction::Add { title, body, depends_on, tags }) => {
            let body = match body.as_deref() {
                Some("-") => read_stdin()?,
                Some(b) => b.to_string(),
                None => String::new(),
            };
            let new = NewTask { title: title.clone(), body, depends_on: depends_on.clone(), tags: tags.clone() };
            let t = board.add(&new, now)?;
            let text = if json { format!("{}\n", render::task_json(&t, None)) } else { format!("{}\n", t.id) };
            print(&mut out, &text)
        }
        Some(BoardAction::Claim { id }) => {
            let t = board.claim(*id, &claimant(), &liveness(), now)?;
            let text = if json { format!("{}\n", render::task_json(&t, None)) } else { render::task_text(&t, None) };
            print(&mut out, &text)
        }
        Some(BoardAction::Move { id, state, reason }) => {
            let to = State::parse(state).ok_or_else(|| Failure {
                status: status::USAGE,
                kind: "invalid",
                message: format!("{state:?} is not a state: todo, doing, blocked, review or done"),
            })?;
            let (t, from) = board.move_to(*id, to, reason.as_deref(), &claimant(), now)?;
            let text = if json {
                let mut v = render::task_json(&t, None);
                if let Some(m) = v.as_object_mut() {
                    m.insert("from".into(), from.name().into());
                }
                format!("{v}\n")
            } else {
                format!("task {}: {from} → {}\n", t.id, t.state)
            };
            print(&mut out, &text)
        }
        Some(BoardAction::Show { id }) => {
            let t = board.get(*id)?;
            let snap = snapshot(&board)?;
            let text = if json {
                format!("{}\n", render::task_json(&t, Some(&snap)))
            } else {
                render::task_text(&t, Some(&snap))
            };
            print(&mut out, &text)
        }
        Some(BoardAction::Plan { edit, stdin }) => {
            if stdin.is_some() {
                board.set_plan(&read_stdin()?)?;
            } else if *edit {
                edit_plan(&board)?;
            } else {
                let text = board.plan()?;
                let text = match (json, text) {
                    (true, t) => format!("{}\n", serde_json::json!({ "plan": t, "path": board.plan_path() })),
                    (false, Some(t)) => t,
                    (false, None) => {
                        eprintln!("unixagent: there is no plan yet (`unixagent board plan -` writes one)");
                        String::new()
                    }
                };
                return print(&mut out, &text);
            }
            if json {
                print(&mut out, &format!("{}\n", serde_json::json!({ "path": board.plan_path() })))?;
            }
            Ok(())
        }
    }
}

/// The board to work on: `--session`, `$UNIXAGENT_BOARD`, or the latest
/// session of this directory.
fn locate(session: Option<&str>) -> Result<Board, Failure> {
    if let Some(prefix) = session {
        let data = ua_store::session::data_dir().map_err(|e| Failure::no_board(e.to_string()))?;
        let dir = crate::sessions::find(&data, prefix).map_err(Failure::no_board)?;
        return Ok(Board::open(root_board(&data, dir.path()))?);
    }
    if let Some(path) = inherited() {
        return Ok(Board::open(path)?);
    }
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    let latest = (|| {
        let data = ua_store::session::data_dir().ok()?;
        let index = ua_store::index::Index::open(&data).ok()?;
        let id = index.load().ok()?.latest_in(&cwd)?.id.clone();
        Some(root_board(&data, &data.join("sessions").join(id)))
    })();
    match latest {
        Some(root) => Ok(Board::open(root)?),
        None => Err(Failure::no_board(
            "not inside a unixagent session, and no session started in this directory; pick one with --session ID"
                .into(),
        )),
    }
}

/// The board a session uses: its own, or (for a child agent's session
/// that has none) its parent's, up to the root.
fn root_board(data: &Path, session_dir: &Path) -> PathBuf {
    let mut dir = session_dir.to_path_buf();
    for _ in 0..16 {
        let board = Board::of_session(&dir);
        if board.exists() {
            return board.root().to_path_buf();
        }
        let parent = ua_store::session::read_meta(&dir.join(ua_store::session::META_FILE)).ok().and_then(|m| m.parent);
        match parent {
            Some(p) if !p.contains('/') && !p.is_empty() => dir = data.join("sessions").join(p),
            _ => break,
        }
    }
    Board::of_session(session_dir).root().to_path_buf()
}

/// `$UNIXAGENT_BOARD`, when it names an absolute path.
pub fn inherited() -> Option<PathBuf> {
    std::env::var_os(BOARD_ENV).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// Who is acting: the agent of this shell's session (with its process),
/// else the person.
fn claimant() -> Claimant {
    if let Some(session) = std::env::var(crate::shell::SESSION_ENV).ok().filter(|s| !s.is_empty()) {
        let pid = std::env::var("UNIXAGENT_PID").ok().and_then(|p| p.parse().ok());
        return Claimant { name: session, pid };
    }
    let name = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "you".into());
    Claimant { name, pid: None }
}

/// Whether an assignee still runs, as the session index judges it; the
/// index is read only if some task in `doing` has an assignee.
fn liveness() -> impl Fn(&str, Option<u32>) -> bool {
    let index = std::cell::OnceCell::new();
    move |session: &str, pid: Option<u32>| {
        let summaries = index.get_or_init(|| {
            let data = ua_store::session::data_dir().ok()?;
            // Inside the sandbox the data directory is hidden: processes
            // then decide.
            data.join("sessions").join(ua_store::index::INDEX_FILE).exists().then_some(())?;
            ua_store::index::Index::open(&data).ok()?.load().ok()
        });
        ua_store::board::liveness(summaries.as_ref(), session, pid)
    }
}

fn snapshot(board: &Board) -> Result<Snapshot, Failure> {
    Ok(judged(board)?)
}

/// The board now, with the tasks in `doing` whose assignee is gone marked.
pub fn judged(board: &Board) -> Result<Snapshot, BoardError> {
    let mut snap = board.snapshot()?;
    snap.judge(&liveness());
    Ok(snap)
}

fn read_stdin() -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| Failure::io(format!("reading stdin failed: {e}")))?;
    Ok(text)
}

/// `board plan --edit`: the person's editor on a copy, put in place in one
/// step when the editor exits successfully.
fn edit_plan(board: &Board) -> Result<(), Failure> {
    let text = board.plan()?.unwrap_or_default();
    let mut file = tempfile::Builder::new()
        .prefix("unixagent-plan-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| Failure::io(format!("could not create a file to edit the plan in: {e}")))?;
    file.write_all(text.as_bytes()).map_err(|e| Failure::io(format!("could not write the plan to edit: {e}")))?;
    let argv = crate::editor::command();
    let Some((program, args)) = argv.split_first() else {
        return Err(Failure::io("no editor is set: set EDITOR".into()));
    };
    let status = std::process::Command::new(program)
        .args(args)
        .arg(file.path())
        .status()
        .map_err(|e| Failure::io(format!("could not start the editor {program}: {e}; set EDITOR")))?;
    if !status.success() {
        return Err(Failure::io(format!("the editor ({program}) exited with {status}; the plan was not changed")));
    }
    let edited = std::fs::read_to_string(file.path())
        .map_err(|e| Failure::io(format!("could not read the edited plan back: {e}")))?;
    Ok(board.set_plan(&edited)?)
}

/// What a session does for its board before its shell starts: the board
/// its shell uses is the inherited one (a child agent shares its root's),
/// else this session's own, created now. `UNIXAGENT_BOARD` goes into the
/// shell's environment, which is also what the sandbox launcher opens
/// (see `ua_sandbox::rules::Rules::boards`). `None` without a session
/// directory (no journal this time) and no inherited board.
pub fn attach(
    session_dir: Option<&ua_store::session::SessionDir>,
    env: &mut Vec<(OsString, OsString)>,
) -> Option<Board> {
    let board = match inherited() {
        Some(path) => Board::at(path),
        None => {
            let dir = session_dir?;
            match Board::create(Board::of_session(dir.path()).root()) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("unixagent: no task board this time: {e}");
                    return None;
                }
            }
        }
    };
    env.push((OsString::from(BOARD_ENV), board.root().as_os_str().to_owned()));
    Some(board)
}
