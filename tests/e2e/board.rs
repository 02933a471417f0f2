//! The task board: `unixagent board …` on the board a real session made,
//! every subcommand with its text, JSON and exit status, processes
//! claiming at once, a hand-broken file, and a child agent's session on
//! the board it inherits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use ua_testkit::provider::FakeProvider;

use crate::support::*;

/// `unixagent ARGS` in `dir` with `home`'s data, outside any session.
fn ua(home: &Home, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(unixagent());
    c.args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("USER", "ana")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("UNIXAGENT_PID")
        .env_remove("UNIXAGENT_BOARD")
        .env_remove("UNIXAGENT_CONFIG")
        .current_dir(dir)
        .stdin(Stdio::null());
    c
}

fn out(mut c: Command) -> Output {
    c.output().expect("unixagent runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn status(o: &Output, want: i32) {
    assert_eq!(o.status.code(), Some(want), "stdout: {}\nstderr: {}", text(o), err(o));
}

fn json(o: &Output) -> Value {
    serde_json::from_str(text(o).trim()).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(o), err(o)))
}

/// A one-shot session in `dir` (the home's model answers with text):
/// its directory.
fn session(home: &Home, dir: &Path) -> PathBuf {
    let before = sessions(home);
    status(&out(ua(home, dir, &["--shell", "/bin/bash", "--json", "-c", "# hello"])), 0);
    let after = sessions(home);
    let new: Vec<PathBuf> = after.into_iter().filter(|d| !before.contains(d)).collect();
    assert_eq!(new.len(), 1, "one new session: {new:?}");
    new.into_iter().next().expect("a session")
}

fn sessions(home: &Home) -> Vec<PathBuf> {
    let dir = home.path().join(".local/share/unixagent/sessions");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn id_of(session: &Path) -> String {
    session.file_name().expect("a name").to_string_lossy().into_owned()
}

#[test]
fn a_session_makes_its_board_and_the_cli_finds_it_by_id_and_by_directory() {
    let home = Home::new();
    let proj = home.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let s = session(&home, &proj);
    for state in ["todo", "doing", "blocked", "review", "done"] {
        assert!(s.join("board").join(state).is_dir(), "{state} missing in {}", s.display());
    }
    // By id prefix, from anywhere.
    let o = out(ua(&home, home.path(), &["board", "--session", &id_of(&s)[..20], "--json"]));
    status(&o, 0);
    let v = json(&o);
    assert_eq!(v["board"], s.join("board").display().to_string());
    assert_eq!(v["counts"], serde_json::json!({"todo": 0, "doing": 0, "blocked": 0, "review": 0, "done": 0}));
    // The latest session of this directory.
    let o = out(ua(&home, &proj, &["board", "add", "Write the parser"]));
    status(&o, 0);
    assert_eq!(text(&o), "1\n");
    assert!(s.join("board/todo/1-write-the-parser.md").is_file());
    // Nowhere: one line, its own status.
    let o = out(ua(&home, home.path(), &["board"]));
    status(&o, 3);
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    assert!(err(&o).contains("--session ID"), "{}", err(&o));
}

/// A board made by a session, and the environment that names it.
fn board(home: &Home) -> PathBuf {
    let proj = home.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    session(home, &proj).join("board")
}

fn on(home: &Home, board: &Path, args: &[&str]) -> Output {
    let mut c = ua(home, home.path(), args);
    c.env("UNIXAGENT_BOARD", board);
    out(c)
}

#[test]
fn every_subcommand_in_text_and_json_with_a_status_per_failure() {
    let home = Home::new();
    let b = board(&home);
    let o = on(&home, &b, &["board", "add", "Parse", "--tag", "parser", "--body", "Parse it.\n\n- [ ] tests pass"]);
    status(&o, 0);
    let o = on(&home, &b, &["board", "add", "Test", "--depends-on", "1", "--json"]);
    status(&o, 0);
    assert_eq!((json(&o)["id"].as_u64(), json(&o)["depends_on"].clone()), (Some(2), serde_json::json!([1])));
    // A dependency that is not on the board: a usage error.
    let o = on(&home, &b, &["board", "add", "X", "--depends-on", "9"]);
    status(&o, 2);
    // The second waits on the first.
    let o = on(&home, &b, &["board", "claim", "2", "--json"]);
    status(&o, 5);
    let e: Value = serde_json::from_str(err(&o).trim()).expect("a JSON error line");
    assert_eq!(e["error"], "not_ready");
    assert_eq!(e["message"], "task 2 cannot be claimed: it depends on task 1, which is not done");
    // Claimed by the person running it (no session here).
    let o = on(&home, &b, &["board", "claim"]);
    status(&o, 0);
    assert!(text(&o).starts_with("task 1: Parse\nstate: doing (assignee ana)\n"), "{}", text(&o));
    assert!(text(&o).ends_with("Parse it.\n\n- [ ] tests pass\n"), "{}", text(&o));
    // Nothing else is ready: exit 1.
    let o = on(&home, &b, &["board", "claim"]);
    status(&o, 1);
    assert!(err(&o).contains("no task is ready"), "{}", err(&o));
    // blocked needs a reason.
    status(&on(&home, &b, &["board", "move", "1", "blocked"]), 2);
    status(&on(&home, &b, &["board", "move", "1", "stuck", "--reason", "x"]), 2);
    let o = on(&home, &b, &["board", "move", "1", "blocked", "--reason", "needs an API key"]);
    status(&o, 0);
    assert_eq!(text(&o), "task 1: doing → blocked\n");
    let o = on(&home, &b, &["board", "show", "1", "--json"]);
    status(&o, 0);
    assert_eq!(
        (json(&o)["state"].clone(), json(&o)["blocked_by"].clone()),
        ("blocked".into(), "needs an API key".into())
    );
    let o = on(&home, &b, &["board", "move", "1", "done", "--json"]);
    status(&o, 0);
    assert_eq!((json(&o)["from"].clone(), json(&o)["blocked_by"].clone()), ("blocked".into(), Value::Null));
    let o = on(&home, &b, &["board", "show", "2"]);
    status(&o, 0);
    assert!(text(&o).contains("depends on: 1 (done)\n"), "{}", text(&o));
    status(&on(&home, &b, &["board", "show", "7"]), 4);
    // The plan.
    let mut c = ua(&home, home.path(), &["board", "plan", "-"]);
    c.env("UNIXAGENT_BOARD", &b).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), b"# Plan\n\n1. parse\n").expect("write");
    assert!(child.wait().expect("wait").success());
    assert_eq!(text(&on(&home, &b, &["board", "plan"])), "# Plan\n\n1. parse\n");
    // The whole board, on a pipe.
    let o = on(&home, &b, &["board"]);
    status(&o, 0);
    assert_eq!(
        text(&o),
        format!(
            "plan: {}\ntodo (1)\n  2  Test\ndoing (0)\nblocked (0)\nreview (0)\ndone (1)\n  1  Parse\n",
            b.join("PLAN.md").display()
        )
    );
    // A board that is not there.
    status(&on(&home, &home.path().join("nowhere"), &["board"]), 3);
    // The session shows the board's counts, and exports its tasks.
    let id = id_of(b.parent().expect("the session"));
    let o = out(ua(&home, home.path(), &["sessions", "show", &id]));
    status(&o, 0);
    assert!(text(&o).ends_with("── board ──\n1 todo · 1 done\n"), "{}", text(&o));
    let o = out(ua(&home, home.path(), &["sessions", "export", &id, "--format", "md"]));
    status(&o, 0);
    assert!(text(&o).contains("## Task board\n\n1 todo · 1 done\n"), "{}", text(&o));
    assert!(
        text(&o).contains("#### 1 Parse\n\nassignee `ana`; tags: parser\n\nParse it.\n\n- [ ] tests pass\n"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_hand_broken_task_is_named_with_its_line_and_left_as_it_is() {
    let home = Home::new();
    let b = board(&home);
    let broken = b.join("todo/4-by-hand.md");
    let bad = "---\nid: 4\ntitle: \"never closed\nowner: ana\n---\nbody\n";
    std::fs::write(&broken, bad).expect("write");
    status(&on(&home, &b, &["board", "add", "fine"]), 0);
    let o = on(&home, &b, &["board"]);
    status(&o, 0);
    let line = format!("unreadable: {}:3: a double-quoted string is not closed on its line\n", broken.display());
    assert!(text(&o).contains(&line), "{}", text(&o));
    let o = on(&home, &b, &["board", "claim", "4"]);
    status(&o, 7);
    assert!(err(&o).contains(&format!("{}:3: ", broken.display())), "{}", err(&o));
    status(&on(&home, &b, &["board", "move", "4", "done"]), 7);
    assert_eq!(std::fs::read_to_string(&broken).expect("read"), bad, "the file was rewritten");
    // The readable task is still claimed around it.
    let o = on(&home, &b, &["board", "claim", "--json"]);
    status(&o, 0);
    assert_eq!(json(&o)["title"], "fine");
}

#[test]
fn twenty_processes_claiming_ten_tasks_at_once_each_take_a_different_one() {
    let home = Home::new();
    let b = board(&home);
    for i in 0..10 {
        status(&on(&home, &b, &["board", "add", &format!("task {i}")]), 0);
    }
    let children: Vec<_> = (0..20)
        .map(|i| {
            let mut c = ua(&home, home.path(), &["board", "claim", "--json"]);
            c.env("UNIXAGENT_BOARD", &b).env("UNIXAGENT_SESSION", format!("claimer-{i}")).stdout(Stdio::piped());
            c.stderr(Stdio::piped()).spawn().expect("spawn")
        })
        .collect();
    let mut won = Vec::new();
    let mut none = 0;
    for (i, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output().expect("wait");
        match o.status.code() {
            Some(0) => won.push((json(&o)["id"].as_u64().expect("an id"), i)),
            Some(1) => none += 1,
            other => panic!("claimer {i} exited {other:?}: {}", err(&o)),
        }
    }
    let mut ids: Vec<u64> = won.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>(), "each task exactly once: {won:?}");
    assert_eq!(none, 10);
    // Every file in doing names the process that won it.
    for (id, i) in won {
        let o = on(&home, &b, &["board", "show", &id.to_string(), "--json"]);
        assert_eq!(json(&o)["assignee"], format!("claimer-{i}"));
    }
    assert_eq!(std::fs::read_dir(b.join("todo")).expect("todo").count(), 0);
}

/// `unixagent --json` in `dir` against `server`, every approval allowed;
/// the NDJSON lines.
fn batch(home: &Home, dir: &Path, server: &FakeProvider, env: &[(&str, &Path)], instruction: &str) -> Vec<Value> {
    use std::io::{BufRead as _, Write as _};
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let mut c = ua(home, dir, &["--shell", "/bin/bash", "--json"]);
    c.env("ANTHROPIC_BASE_URL", server.base_url()).stdin(Stdio::piped()).stdout(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("unixagent starts");
    let mut input = child.stdin.take();
    if let Some(i) = input.as_mut() {
        let _ = writeln!(i, "{}", serde_json::json!({ "type": "instruction", "text": instruction }));
    }
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let Ok(line) = line else { break };
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if v["type"] == "approval_request"
            && let Some(i) = input.as_mut()
        {
            let _ = writeln!(i, "{}", serde_json::json!({ "type": "approval", "id": v["id"], "decision": "allow" }));
        }
        if v["type"] == "text" {
            input = None;
        }
        lines.push(v);
    }
    drop(input);
    child.wait().expect("unixagent ends");
    lines
}

#[test]
fn a_child_agent_uses_the_board_it_inherits_not_one_of_its_own() {
    let home = Home::new();
    let b = board(&home);
    let proj = home.path().join("proj");
    let command =
        format!("echo \"board=$UNIXAGENT_BOARD\"; {} board add 'from the child' && echo ADDED", unixagent().display());
    let server = crate::agent::model(&format!(
        "[[turn]]\ntool_calls = [{{ id = \"t1\", name = \"shell\", input = {{ command = {command:?} }} }}]\n[[turn]]\ntext = \"done\"\n"
    ));
    let before = sessions(&home);
    let lines = batch(&home, &proj, &server, &[("UNIXAGENT_BOARD", &b)], "add a task");
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    let (out, _) = &results[0];
    assert!(out.contains(&format!("board={}", b.display())), "{out}\n{lines:?}");
    assert!(out.contains("ADDED"), "{out}");
    assert!(b.join("todo/1-from-the-child.md").is_file());
    let child: Vec<PathBuf> = sessions(&home).into_iter().filter(|d| !before.contains(d)).collect();
    for d in child {
        assert!(!d.join("board").exists(), "the child made a board of its own: {}", d.display());
    }
}
