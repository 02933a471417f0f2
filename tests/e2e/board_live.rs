//! The task board in a running session: `task` events on the NDJSON
//! stream whichever process moves a task, a child agent working the board
//! its parent made (seen as events by a `--json` parent and in the footer
//! by a terminal one), a blocked task shown above the prompt the person is
//! typing at without breaking their line, and a continued session that
//! brings its active tasks back to the model.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use ua_testkit::provider::FakeProvider;

use crate::support::*;

/// How long any one thing may take to show.
const WAIT: Duration = Duration::from_secs(30);

/// `unixagent ARGS` in `dir` with `home`'s config and data, against
/// `server`, outside any session.
fn ua(home: &Home, dir: &Path, server: &FakeProvider, args: &[&str]) -> Command {
    let mut c = Command::new(unixagent());
    c.args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("USER", "ana")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("UNIXAGENT_PID")
        .env_remove("UNIXAGENT_BOARD")
        .env_remove("UNIXAGENT_CONFIG")
        .env("PATH", path_with_unixagent())
        .current_dir(dir)
        .stdin(Stdio::null());
    c
}

/// `$PATH` with the `unixagent` under test first: the gate knows the
/// board's commands by the program's name.
fn path_with_unixagent() -> std::ffi::OsString {
    let bin = unixagent();
    let dir = bin.parent().expect("the binary's directory").to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path))).expect("a PATH")
}

/// `unixagent board ARGS` on `board`, as `who` (a session id, or the
/// person when `None`); must succeed.
fn on_board(home: &Home, board: &Path, who: Option<(&str, u32)>, args: &[&str]) -> Output {
    let mut c = ua(home, home.path(), &home.model, &[&["board"], args].concat());
    c.env("UNIXAGENT_BOARD", board);
    if let Some((session, pid)) = who {
        c.env("UNIXAGENT_SESSION", session).env("UNIXAGENT_PID", pid.to_string());
    }
    let o = c.output().expect("unixagent board runs");
    assert!(
        o.status.success(),
        "board {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The judge is off (it would take a scripted answer of its own); the
/// confirm mode is the default, so the board runs without a question and
/// a child agent is asked about.
fn quiet_judge(home: &Home) {
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
}

/// A `--json` session read line by line on a thread, so that every wait
/// has a deadline.
struct JsonSession {
    child: Child,
    input: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl JsonSession {
    fn start(home: &Home, server: &FakeProvider, extra: &[&str]) -> Self {
        let mut c = ua(home, home.path(), server, &[&["--shell", "/bin/bash", "--json"], extra].concat());
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = c.spawn().expect("unixagent starts");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let input = child.stdin.take();
        Self { child, input, lines, seen: Vec::new() }
    }

    fn send(&mut self, v: Value) {
        let input = self.input.as_mut().expect("input open");
        writeln!(input, "{v}").expect("write a line");
    }

    /// Reads lines until one satisfies `what`; every approval asked for
    /// on the way is given.
    #[track_caller]
    fn until(&mut self, name: &str, what: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no {name} in {WAIT:?}: {:#?}", self.seen));
            self.seen.push(v.clone());
            if v["type"] == "approval_request" && self.input.is_some() {
                self.send(serde_json::json!({ "type": "approval", "id": v["id"], "decision": "allow" }));
            }
            if what(&v) {
                return v;
            }
        }
    }

    /// Closes the input and reads to the `result` line.
    fn finish(mut self) -> Vec<Value> {
        self.input = None;
        self.until("result", |v| v["type"] == "result");
        let _ = self.child.wait();
        std::mem::take(&mut self.seen)
    }
}

impl Drop for JsonSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_task(v: &Value, id: u64, state: &str) -> bool {
    v["type"] == "task" && v["id"] == id && v["state"] == state
}

/// The board of the session a `session` event names.
fn board_of(session_event: &Value) -> PathBuf {
    let journal = PathBuf::from(session_event["journal"].as_str().expect("a journal"));
    journal.parent().expect("the session's directory").join("board")
}

#[test]
fn a_task_blocked_by_another_process_is_a_task_event_while_no_turn_runs() {
    let home = Home::new();
    let mut s = JsonSession::start(&home, &home.model, &[]);
    let start = s.until("session event", |v| v["type"] == "session");
    let board = board_of(&start);
    on_board(&home, &board, None, &["add", "Release"]);
    let added = s.until("task 1 in todo", |v| is_task(v, 1, "todo"));
    assert_eq!(added["from"], Value::Null, "{added}");
    on_board(&home, &board, Some(("other-session", std::process::id())), &["claim", "1"]);
    on_board(
        &home,
        &board,
        Some(("other-session", std::process::id())),
        &["move", "1", "blocked", "--reason", "needs a signing key"],
    );
    let blocked = s.until("task 1 blocked", |v| is_task(v, 1, "blocked"));
    assert_eq!(
        blocked,
        serde_json::json!({
            "type": "task", "id": 1, "title": "Release", "state": "blocked", "from": "doing",
            "assignee": "other-session", "reason": "needs a signing key"
        })
    );
    let seen = s.finish();
    let doing: Vec<&Value> = seen.iter().filter(|v| is_task(v, 1, "doing")).collect();
    assert_eq!(doing.len(), 1, "{seen:#?}");
    assert_eq!((doing[0]["from"].clone(), doing[0]["assignee"].clone()), ("todo".into(), "other-session".into()));
}

/// The parent builds a board, then starts a child agent that claims and
/// finishes its first task, a command for each (two moves in one command
/// can both land before a watcher looks, which then reports the task's
/// one change from `todo` to `done`); both talk to the same scripted
/// model, one request after the other (the parent waits for its command).
fn child_scenario() -> FakeProvider {
    let bin = "unixagent";
    let add = format!("{bin} board add 'Write the parser' && {bin} board add 'Write the docs'");
    let child = format!("{bin} -c '# take a task from the board'");
    let claim = format!("{bin} board claim");
    let finish = format!("{bin} board move 1 done");
    crate::agent::model(&format!(
        "[[turn]]\ntool_calls = [{{ id = \"p1\", name = \"shell\", input = {{ command = {add:?} }} }}]\n\
         [[turn]]\ntool_calls = [{{ id = \"p2\", name = \"shell\", input = {{ command = {child:?} }} }}]\n\
         [[turn]]\ntool_calls = [{{ id = \"c1\", name = \"shell\", input = {{ command = {claim:?} }} }}]\n\
         [[turn]]\ntool_calls = [{{ id = \"c2\", name = \"shell\", input = {{ command = {finish:?} }} }}]\n\
         [[turn]]\ntext = \"child: task 1 is done\"\n\
         [[turn]]\ntext = \"parent: the child finished\"\n"
    ))
}

#[test]
fn a_json_parent_sees_the_task_events_of_the_child_that_works_its_board() {
    let home = Home::new();
    quiet_judge(&home);
    let server = child_scenario();
    let mut s = JsonSession::start(&home, &server, &[]);
    let start = s.until("session event", |v| v["type"] == "session");
    s.send(serde_json::json!({ "type": "instruction", "text": "build a board and have a child take a task" }));
    // The child starts without a question (builtin.delegate: nothing but
    // its instruction).
    let started = s.until("the command starting the child", |v| {
        v["type"] == "command" && v["command"].as_str().is_some_and(|c| c.contains("take a task from the board"))
    });
    assert_eq!(started["rule"], "cedar:builtin.delegate", "{started}");
    let done = s.until("task 1 done", |v| is_task(v, 1, "done"));
    s.until("the parent's answer", |v| v["type"] == "text" && v["text"] == "parent: the child finished");
    let seen = s.finish();
    assert_eq!(server.request_count(), 6, "{seen:#?}");
    let tasks: Vec<(u64, String, Value)> = seen
        .iter()
        .filter(|v| v["type"] == "task")
        .map(|v| (v["id"].as_u64().unwrap_or(0), v["state"].as_str().unwrap_or("").to_string(), v["from"].clone()))
        .collect();
    assert_eq!(
        tasks,
        [
            (1, "todo".into(), Value::Null),
            (2, "todo".into(), Value::Null),
            (1, "doing".into(), "todo".into()),
            (1, "done".into(), "doing".into())
        ],
        "{seen:#?}"
    );
    // Claimed by the child's session, not the parent's.
    let doing = seen.iter().find(|v| is_task(v, 1, "doing")).expect("doing");
    let child = doing["assignee"].as_str().expect("an assignee");
    assert_ne!(child, start["id"].as_str().expect("the parent's id"));
    assert_eq!(done["assignee"], child);
    assert!(board_of(&start).join("done/1-write-the-parser.md").is_file());
}

#[test]
fn a_terminal_parent_shows_the_board_under_the_footer_of_the_turn() {
    let home = Home::new();
    quiet_judge(&home);
    let server = child_scenario();
    let mut t =
        home.spawn("bash").env("ANTHROPIC_BASE_URL", server.base_url()).env("PATH", path_with_unixagent()).start();
    wait_prompt(&t, 1);
    t.send("# build a board and have a child take a task\r");
    // The child starts without a question (builtin.delegate).
    t.wait_text("parent: the child finished");
    let footer = "board 1 todo · 1 done";
    t.wait_for("the board's footer", |s| {
        let rows = s.rows();
        rows.windows(2).any(|w| w[0].contains("2 cmds") && w[1].trim_end() == footer)
    });
    wait_prompt(&t, 2);
}

/// Moves a task of `board` to blocked as another process would, and waits
/// for the alert to be drawn.
fn block(home: &Home, board: &Path, title: &str, id: &str) {
    on_board(home, board, None, &["add", title]);
    on_board(home, board, Some(("other-session", std::process::id())), &["claim", id]);
    on_board(
        home,
        board,
        Some(("other-session", std::process::id())),
        &["move", id, "blocked", "--reason", "needs a key"],
    );
}

/// The board of the only session in `home`.
fn only_board(home: &Home) -> PathBuf {
    let dir = home.path().join(".local/share/unixagent/sessions");
    let sessions: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("sessions").flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].join("board")
}

#[test]
fn a_blocked_task_shows_above_the_prompt_and_the_line_being_typed_goes_on() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        let board = only_board(&home);
        // Half a command at the shell's own line, the cursor moved back
        // into it.
        t.send("echo hel");
        t.wait_for("the half-typed line", |s| s.cursor_row().ends_with("PS1-MARK> echo hel"));
        block(&home, &board, "Release", "1");
        let alert = "⚠ task 1 blocked (other-session): Release — needs a key";
        t.wait_for(&format!("{shell}: the alert above the prompt"), |s| {
            let rows = s.rows();
            let at = rows.iter().position(|r| r.trim_end() == alert);
            at.is_some_and(|i| rows.get(i + 1).is_some_and(|r| r.trim_end() == "PS1-MARK> echo hel"))
                && s.cursor_row().trim_end() == "PS1-MARK> echo hel"
        });
        t.with(|s| {
            let rows = s.rows();
            assert_eq!(rows.iter().filter(|r| r.contains("echo hel")).count(), 1, "{shell}: {rows:#?}");
            assert_eq!(rows.iter().filter(|r| r.contains("task 1 blocked")).count(), 1, "{shell}: {rows:#?}");
        });
        // The shell's editor kept its place: the line finishes and runs.
        t.send("lo\r");
        t.wait_for(&format!("{shell}: the finished line ran"), |s| s.rows().iter().any(|r| r.trim_end() == "hello"));
        wait_prompt(&t, 2);
        // The same at the `#` editor's line.
        t.send("# do thi");
        t.wait_for("the instruction being typed", |s| s.cursor_row().ends_with("PS1-MARK> # do thi"));
        block(&home, &board, "Docs", "2");
        t.wait_for(&format!("{shell}: the second alert above the instruction"), |s| {
            let rows = s.rows();
            let at = rows.iter().position(|r| r.contains("task 2 blocked (other-session): Docs — needs a key"));
            at.is_some_and(|i| rows.get(i + 1).is_some_and(|r| r.trim_end() == "PS1-MARK> # do thi"))
                && s.cursor_row().trim_end() == "PS1-MARK> # do thi"
        });
        t.send("s");
        t.wait_for(&format!("{shell}: the instruction goes on"), |s| {
            s.cursor_row().trim_end() == "PS1-MARK> # do this"
        });
    }
}

#[test]
fn a_continued_session_brings_the_active_tasks_back_and_a_gone_assignee_s_task_is_claimed_again() {
    let home = Home::new();
    let proj = home.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let first =
        ua(&home, &proj, &home.model, &["--shell", "/bin/bash", "--json", "-c", "# hello"]).output().expect("runs");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let start: Value = serde_json::from_str(String::from_utf8_lossy(&first.stdout).lines().next().expect("a line"))
        .expect("the session event");
    let board = board_of(&start);
    // Task 1 claimed by a session whose process has ended; task 2 blocked;
    // task 3 done.
    let gone = Command::new("true").spawn().expect("spawn true");
    let gone_pid = gone.id();
    let _ = gone.wait_with_output();
    for title in ["Parse", "Release", "Old"] {
        on_board(&home, &board, None, &["add", title]);
    }
    on_board(&home, &board, Some(("gone-session", gone_pid)), &["claim", "1"]);
    on_board(&home, &board, None, &["claim", "2"]);
    on_board(&home, &board, None, &["move", "2", "blocked", "--reason", "needs a signing key"]);
    on_board(&home, &board, None, &["claim", "3"]);
    on_board(&home, &board, None, &["move", "3", "done"]);
    let before = home.model.request_count();
    let again = ua(&home, &proj, &home.model, &["--shell", "/bin/bash", "--json", "--continue", "-c", "# go on"])
        .output()
        .expect("runs");
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    // The person reading the stream is shown the board.
    let lines: Vec<Value> =
        String::from_utf8_lossy(&again.stdout).lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let notices: Vec<&str> =
        lines.iter().filter(|v| v["type"] == "notice").filter_map(|v| v["text"].as_str()).collect();
    assert!(notices.contains(&"board 1 doing · 1 blocked · 1 done · 1 assignee gone"), "{notices:#?}");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("task 1 [doing] Parse (assignee gone: `unixagent board claim 1` takes it over)")),
        "{notices:#?}"
    );
    // The first request after the resume carries the active tasks.
    let requests = home.model.requests();
    assert_eq!(requests.len(), before + 1);
    let body = requests[before].json();
    let system = body["system"].to_string();
    assert!(system.contains("Task board: this session has one"), "{system}");
    assert!(system.contains("The task board when this session was continued"), "{system}");
    assert!(
        system
            .contains("- task 1 [doing] Parse; assignee gone-session (gone: `unixagent board claim 1` takes it over)"),
        "{system}"
    );
    assert!(system.contains("- task 2 [blocked] Release; assignee ana; blocked by: needs a signing key"), "{system}");
    assert!(!system.contains("Old"), "done tasks are not active: {system}");
    // A terminal is shown the same as the session starts.
    let t = home.spawn("bash").cwd(&proj).arg("--continue").start();
    t.wait_for("the board when continuing", |s| {
        let text = s.text();
        text.contains("unixagent: board 1 doing · 1 blocked · 1 done · 1 assignee gone")
            && text.contains("unixagent:   task 2 [blocked] Release — needs a signing key")
    });
    wait_prompt(&t, 1);
    drop(t);
    // The gone assignee's task is claimed again.
    let o = on_board(&home, &board, Some(("new-session", std::process::id())), &["claim", "1", "--json"]);
    let claimed: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!((claimed["state"].clone(), claimed["assignee"].clone()), ("doing".into(), "new-session".into()));
}
