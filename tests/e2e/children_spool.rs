//! Children of a sandboxed parent: they cannot write the data directory,
//! so each keeps its session in a spool its parent imports when it is
//! gone. Every parent here is `--json` with stdin closed, so its shell and
//! every child run in the sandbox.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::agent::model;
use crate::children::{
    EVERYTHING, OTLP_CHECK, Script, env, journal_of, meta, parent_saw, scenario, sessions, tree_home, unattended,
    wait_for_process,
};
use crate::support::*;

/// `traces export` in `home`, parsed with the OTLP definitions: one
/// `[name, trace, span, parent, kind]` per span.
fn exported_spans(home: &Home) -> Vec<Vec<String>> {
    let mut cmd = Command::new(unixagent());
    cmd.args(["traces", "export", "--since", "1h"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env_remove("UA_TRACE_SINK");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut check = Command::new(which("python3"))
        .args(["-c", OTLP_CHECK])
        .env("PYTHONPATH", "/usr/local/lib/unixagent-test/python")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut check.stdin.take().unwrap(), &out.stdout).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(checked.status.success(), "not OTLP: {}", String::from_utf8_lossy(&checked.stderr));
    String::from_utf8_lossy(&checked.stdout).lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// The data directory holds the sessions and the traces, and nothing a
/// spool left on the way (a staging directory).
fn nothing_left_beside_the_sessions(home: &Home) {
    let data = home.path().join(".local/share/unixagent");
    let stray: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".spool-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// `sessions show ID` in `home`, as it ran.
fn show(home: &Home, id: &str) -> std::process::Output {
    Command::new(unixagent())
        .args(["sessions", "show", id])
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .output()
        .unwrap()
}

fn sessions_show(home: &Home, id: &str) -> String {
    let out = show(home, id);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_sandboxed_childs_and_grandchilds_sessions_and_spans_are_imported_under_the_root() {
    let (home, _) = tree_home(EVERYTHING, "");
    let server = model(&scenario(&[
        Script {
            instruction: "spool a tree",
            answers: &["$ unixagent -c '# the middle child' < /dev/null; echo middle=$?", "root done"],
        },
        Script {
            instruction: "the middle child",
            answers: &["$ unixagent -c '# the grandchild' < /dev/null; echo gc=$?", "middle done"],
        },
        Script { instruction: "the grandchild", answers: &["$ echo deep", "grandchild done"] },
    ]));
    let (code, events) = unattended(&home, &server, "spool a tree");
    assert_eq!(code, 0, "{events:#?}");
    let saw = parent_saw(&server, "spool a tree");
    assert!(saw.contains("middle=0") && saw.contains("middle done"), "{saw}");
    assert!(!saw.contains("no session journal"), "the child kept one: {saw}");

    // sessions list: the child under the root, the grandchild under it.
    let list = sessions(&home);
    assert_eq!(list.len(), 3, "{list:#?}");
    let at = |depth: u64| list.iter().find(|s| s["depth"].as_u64() == Some(depth)).unwrap();
    let (root, child, grandchild) = (at(0), at(1), at(2));
    let id = |s: &Value| s["id"].as_str().unwrap().to_string();
    assert_eq!(child["parent"].as_str(), Some(id(root).as_str()), "{child}");
    assert_eq!(grandchild["parent"].as_str(), Some(id(child).as_str()), "{grandchild}");
    assert_eq!(grandchild["root"], root["id"]);
    assert_eq!(root["descendants"]["sessions"], 2, "{root}");
    for s in [child, grandchild] {
        assert_eq!(s["state"], "ended", "{s}");
        assert!(s["tokens"]["input"].as_u64().unwrap() > 0, "{s}");
    }
    // meta.json names the parent's command: a tool call in its journal.
    for (s, parent) in [(child, root), (grandchild, child)] {
        let m = meta(&home, &id(s));
        let command = m["parent_command"].as_str().expect("a parent command");
        assert!(command.starts_with("toolu_"), "{m}");
        let parent_journal: Vec<String> = journal_of(&home, &id(parent)).iter().map(Value::to_string).collect();
        assert!(parent_journal.iter().any(|l| l.contains(command)), "{command} in {parent_journal:?}");
        assert_eq!(m["trace_id"], meta(&home, &id(root))["trace_id"]);
    }
    // --usage counts the three sessions' turns, each once.
    let usage = Command::new(unixagent())
        .args(["--usage", "--json"])
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .output()
        .unwrap();
    let usage: Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert_eq!((usage["turns"].as_u64(), usage["by_session"].as_array().map(Vec::len)), (Some(3), Some(3)), "{usage}");
    let shown = sessions_show(&home, &id(root));
    assert!(shown.contains(&id(child)) && shown.contains(&id(grandchild)), "{shown}");
    assert!(shown.contains("the middle child") && shown.contains("the grandchild"), "{shown}");

    // The spans: each agent's instruction hangs from the command of its
    // parent that started it.
    let spans = exported_spans(&home);
    let agents: Vec<&Vec<String>> = spans.iter().filter(|s| s[0].starts_with("invoke_agent")).collect();
    assert_eq!(agents.len(), 3, "{spans:?}");
    let top = agents.iter().find(|a| a[3] == "-").expect("the root's instruction");
    let below = |agent: &Vec<String>| {
        let command = spans
            .iter()
            .find(|s| s[0].starts_with("execute_tool") && s[3] == agent[2])
            .unwrap_or_else(|| panic!("a command of {agent:?} in {spans:?}"));
        let under: Vec<&&Vec<String>> = agents.iter().filter(|a| a[3] == command[2]).collect();
        assert_eq!(under.len(), 1, "one agent under {command:?}: {spans:?}");
        (*under[0]).clone()
    };
    let middle = below(top);
    let deepest = below(&middle);
    assert!(spans.iter().any(|s| s[0].starts_with("chat ") && s[3] == deepest[2]), "{spans:?}");
    nothing_left_beside_the_sessions(&home);
}

#[test]
fn a_sandboxed_child_killed_with_sigkill_is_imported_as_crashed() {
    let (home, work) = tree_home(EVERYTHING, "");
    let never = work.join("never");
    let server = model(&scenario(&[
        Script {
            instruction: "supervise",
            answers: &[
                &format!("$ mkfifo {}; unixagent -c '# get stuck' < /dev/null; echo stuck=$?", never.display()),
                "parent done",
            ],
        },
        Script { instruction: "get stuck", answers: &[&format!("$ cat {}", never.display()), "unreachable"] },
    ]));
    let mut cmd = Command::new(unixagent());
    cmd.args(["--shell", "/bin/bash", "--json", "-c", "# supervise"])
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    env(&mut cmd, &home, &server);
    let run = std::thread::spawn(move || cmd.output().unwrap());
    wait_for_process(&format!("cat {}", never.display()));
    let child = wait_for_process("unixagent -c # get stuck");
    // While it runs it is listed under its root, though its session is
    // still in the spool; `sessions show` says where it is.
    let mut running = Vec::new();
    eventually(std::time::Duration::from_secs(10), || {
        running = sessions(&home);
        running.len() == 2
    });
    let states: Vec<(&str, u64)> =
        running.iter().map(|s| (s["state"].as_str().unwrap(), s["depth"].as_u64().unwrap())).collect();
    assert_eq!(states, [("running", 0), ("running", 1)], "{running:#?}");
    assert_eq!(running[1]["parent"], running[0]["id"]);
    assert_eq!(running[1]["first_instruction"], "get stuck", "{running:#?}");
    let id = running[1]["id"].as_str().unwrap();
    let show = show(&home, id);
    let said = String::from_utf8_lossy(&show.stderr);
    assert!(!show.status.success(), "{said}");
    assert!(said.contains(&format!("session {id} is a child agent still running in the sandbox of session")), "{said}");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child), nix::sys::signal::Signal::SIGKILL).unwrap();
    let out = run.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(parent_saw(&server, "supervise").contains("stuck=137"));
    let list = sessions(&home);
    let states: Vec<(&str, u64)> =
        list.iter().map(|s| (s["state"].as_str().unwrap(), s["depth"].as_u64().unwrap())).collect();
    assert_eq!(states, [("ended", 0), ("crashed", 1)], "{list:#?}");
    assert_eq!(list[1]["parent"], list[0]["id"]);
    // Its spans up to the kill came with it.
    let stuck = list[1]["id"].as_str().unwrap();
    let traces = std::fs::read_to_string(home.path().join(".local/share/unixagent/traces.jsonl")).unwrap();
    assert_eq!(traces.lines().filter(|l| l.contains(stuck) && l.contains("\"name\":\"chat ")).count(), 1, "{traces}");
    nothing_left_beside_the_sessions(&home);
}

#[test]
fn a_forged_spool_is_refused_in_one_line_and_nothing_outside_is_touched() {
    let (home, _) = tree_home(EVERYTHING, "");
    let outside = home.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "keep me").unwrap();
    let forge = [
        r#"d="$UNIXAGENT_CHILDREN""#,
        r#"ln -s "$HOME/outside" "$d/20260101T000000.000Z-00000001""#,
        r#"mkdir "$d/20260101T000000.000Z-00000002""#,
        r#"ln -s "$HOME/outside/secret" "$d/20260101T000000.000Z-00000002/meta.json""#,
        r#"echo x > "$d/20260101T000000.000Z-00000003""#,
        r#"mkdir "$d/$UNIXAGENT_SESSION""#,
        r#"printf '%s\n' '{"report":"child","pid":999999999,"instruction":"forged"}' '{"type":"session","v":1,"id":"../../outside","journal":null,"shell":"bash","cwd":"/"}' > "$d/.999999999-1.ndjson""#,
        "echo forged",
    ]
    .join("; ");
    let server = model(&scenario(&[Script { instruction: "forge spools", answers: &[&format!("$ {forge}"), "done"] }]));
    let (code, events) = unattended(&home, &server, "forge spools");
    assert_eq!(code, 0, "{events:#?}");
    assert!(parent_saw(&server, "forge spools").contains("forged"));
    let refused: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "notice")
        .filter_map(|e| e["text"].as_str())
        .filter(|t| t.contains("was not imported"))
        .collect();
    assert_eq!(refused.len(), 5, "{refused:#?}");
    for why in [
        "00000001\" was not imported (the spool is not a regular file or a directory)",
        "00000002\" was not imported (meta.json is not a regular file or a directory)",
        "00000003\" was not imported (the spool is not a regular file or a directory)",
        "a session with that id already exists",
        "\"../../outside\" was not imported (its name is not a session id)",
    ] {
        assert_eq!(refused.iter().filter(|t| t.contains(why)).count(), 1, "{why:?} in {refused:#?}");
    }
    // Each is one line, and in the journal too.
    assert!(refused.iter().all(|t| !t.contains('\n')));
    let root = sessions(&home);
    assert_eq!(root.len(), 1, "only the root: {root:#?}");
    let root_id = root[0]["id"].as_str().unwrap();
    let errors = journal_of(&home, root_id)
        .into_iter()
        .filter(|l| l["type"] == "error" && l["message"].as_str().is_some_and(|m| m.contains("was not imported")))
        .count();
    assert_eq!(errors, 5);
    // Nothing outside was touched, and the root's own session is whole.
    let names: Vec<String> =
        std::fs::read_dir(&outside).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
    assert_eq!(names, ["secret"]);
    assert_eq!(std::fs::read_to_string(outside.join("secret")).unwrap(), "keep me");
    assert_eq!(meta(&home, root_id)["id"], root_id);
    let dirs: Vec<String> = std::fs::read_dir(home.path().join(".local/share/unixagent/sessions"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    assert_eq!(dirs, [root_id]);
    assert!(
        Path::new(&home.path().join(".local/share/unixagent/sessions").join(root_id).join("journal.jsonl")).is_file()
    );
    nothing_left_beside_the_sessions(&home);
}
