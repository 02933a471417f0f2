//! Child agents: a unixagent started by an agent command. One fake model
//! serves the parent and every child, each agent its own script (matched
//! by the instruction it started with). Children in these tests run in
//! the background or without a terminal, so each prints its one fold line
//! and its answer, and that is what the parent's model reads.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use ua_testkit::provider::FakeProvider;

use crate::agent::{messages, model, tool_results};
use crate::support::*;

/// One agent's script: its instruction, then its answers in order; an
/// answer starting with `$ ` is a command, any other is its final text.
pub(crate) struct Script<'a> {
    pub(crate) instruction: &'a str,
    pub(crate) answers: &'a [&'a str],
}

pub(crate) fn scenario(scripts: &[Script<'_>]) -> String {
    let mut toml = String::new();
    for s in scripts {
        toml.push_str(&format!("[[conversation]]\ninstruction_contains = {:?}\n", s.instruction));
        for a in s.answers {
            match a.strip_prefix("$ ") {
                Some(cmd) => toml.push_str(&format!(
                    "[[conversation.turn]]\ntool_calls = [{{ name = \"shell\", input = {{ command = {} }} }}]\n",
                    toml_string(cmd)
                )),
                None => toml.push_str(&format!("[[conversation.turn]]\ntext = {}\n", toml_string(a))),
            }
        }
    }
    toml
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A policy that lets the agent delegate without asking: `spawn_agent`,
/// and running `unixagent -c '# …'` (any other command still asks).
const DELEGATE: &str = r#"
@id("test.delegate")
@reason("this test's agents delegate without asking")
permit (principal, action == Action::"spawn_agent", resource);

@id("test.delegate-exec")
@reason("a child agent's instruction")
permit (principal, action == Action::"exec", resource) when { resource.invocation like "unixagent -c #*" };
"#;

/// Everything the built-in forbids leave: these tests' commands make
/// FIFOs and write to them.
pub(crate) const EVERYTHING: &str = r#"
@id("test.everything")
@reason("this test's commands run without asking")
permit (principal, action, resource);
"#;

/// A home whose `unixagent` on PATH is the binary under test, with
/// `policy` and `[agent]` settings.
pub(crate) fn tree_home(policy: &str, agent: &str) -> (Home, PathBuf) {
    let home = Home::new();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(unixagent(), bin.join("unixagent")).unwrap();
    home.write(".config/unixagent/policy.cedar", policy);
    home.write(".config/unixagent/config.toml", &format!("[judge]\nmode = \"off\"\n[agent]\n{agent}\n"));
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The home is directly in /tmp, so the sandbox lets nothing new be
    // made there (the home could be moved away and made anew): the
    // temporary files of nested unixagents go to a directory of its own.
    std::fs::create_dir_all(home.path().join("tmp")).unwrap();
    (home, work)
}

/// The environment of a unixagent the test starts: the home's, the fake
/// model, `unixagent` on PATH, and nothing inherited from a session the
/// test itself may run in.
pub(crate) fn env(cmd: &mut Command, home: &Home, server: &FakeProvider) {
    let path = format!("{}:{}", home.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", home.path().join("tmp"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "");
    for var in [
        "UNIXAGENT_SESSION",
        "UNIXAGENT_CONFIG",
        "UNIXAGENT_POLICY_LAYERS",
        "TRACEPARENT",
        "UA_TRACE_ID",
        "UA_SPAN_ID",
        "UA_PARENT_SPAN_ID",
        "UA_TRACE_DEPTH",
        "UA_TRACE_SINK",
        "UNIXAGENT_COMMAND",
    ] {
        cmd.env_remove(var);
    }
}

/// `unixagent --json -c '# INSTRUCTION'` with stdin closed: an unattended
/// parent, whose shell (and so every child) runs in the sandbox. Returns
/// the exit status and the NDJSON events.
pub(crate) fn unattended(home: &Home, server: &FakeProvider, instruction: &str) -> (i32, Vec<Value>) {
    let mut cmd = Command::new(unixagent());
    cmd.args(["--shell", "/bin/bash", "--json", "-c", &format!("# {instruction}")])
        .current_dir(home.path().join("work"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    env(&mut cmd, home, server);
    let out = cmd.output().unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), events)
}

/// `unixagent -c '# INSTRUCTION'` on a terminal of the test's: a parent a
/// person watches (its shell outside the sandbox, so its children keep
/// journals), waited on until it exits.
fn watched(home: &Home, server: &FakeProvider, instruction: &str) -> (u32, Term) {
    let path = format!("{}:{}", home.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    // Spawn starts from a small fixed environment: nothing of a session
    // the test may run in gets through.
    let spawn = Spawn::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", &format!("# {instruction}")])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", home.path().join("tmp"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .cwd(home.path().join("work"));
    let mut t = spawn.start();
    let code = t.wait_exit();
    (code, t)
}

/// The output the parent's model got for its command (the first
/// request that carries a tool result).
pub(crate) fn parent_saw(server: &FakeProvider, parent: &str) -> String {
    let reqs = server.requests();
    for (i, r) in reqs.iter().enumerate() {
        let body = r.json();
        let first = body["messages"][0]["content"].to_string();
        if !first.contains(parent) {
            continue;
        }
        if let Some((text, _)) = tool_results(&messages(server, i)).into_iter().next() {
            return text;
        }
    }
    panic!("the parent's model never got its command's output; requests: {}", reqs.len())
}

/// How many requests came from the agent that started with `instruction`.
fn requests_of(server: &FakeProvider, instruction: &str) -> usize {
    server.requests().iter().filter(|r| r.json()["messages"][0]["content"].to_string().contains(instruction)).count()
}

/// `sessions list --json --all` in `home`, one value per line.
pub(crate) fn sessions(home: &Home) -> Vec<Value> {
    let mut cmd = Command::new(unixagent());
    cmd.args(["sessions", "list", "--json", "--all"]);
    cmd.env("HOME", home.path()).env("XDG_DATA_HOME", home.path().join(".local/share"));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

pub(crate) fn meta(home: &Home, id: &str) -> Value {
    let p = home.path().join(".local/share/unixagent/sessions").join(id).join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn a_child_too_deep_is_refused_at_once_with_the_limit_named() {
    let (home, _) = tree_home(DELEGATE, "max_depth = 1");
    let server = model(&scenario(&[
        Script {
            instruction: "start a child",
            answers: &["$ unixagent -c '# go one deeper' < /dev/null; echo child=$?", "parent done"],
        },
        Script {
            instruction: "go one deeper",
            answers: &["$ unixagent -c '# the grandchild' < /dev/null; echo grandchild=$?", "child done"],
        },
        Script { instruction: "the grandchild", answers: &["never asked"] },
    ]));
    let (code, _) = unattended(&home, &server, "start a child");
    assert_eq!(code, 0);
    // The child (depth 1) ran, inside the parent's sandbox, and reached
    // its model through the parent's proxy.
    let parent = parent_saw(&server, "start a child");
    assert!(parent.contains("▸ child ") && parent.contains("\"go one deeper\" · done"), "{parent}");
    assert!(parent.contains("child done") && parent.contains("child=0"), "{parent}");
    // Its grandchild (depth 2) was refused before it started: one line,
    // and it never reached the model.
    let child = parent_saw(&server, "go one deeper");
    assert!(child.contains("grandchild=77"), "{child}");
    assert!(
        child.contains(
            "unixagent: not started: this agent would be 2 deep, and agent.max_depth in config.toml allows 1"
        ),
        "{child}"
    );
    assert_eq!(requests_of(&server, "the grandchild"), 0);
}

#[test]
fn a_refused_child_in_json_mode_says_so_in_events() {
    let (home, work) = tree_home(DELEGATE, "max_depth = 2");
    let server = model(&scenario(&[Script { instruction: "too deep", answers: &["never"] }]));
    let mut cmd = Command::new(unixagent());
    cmd.args(["--json", "-c", "# too deep"]).current_dir(&work).stdin(Stdio::null());
    env(&mut cmd, &home, &server);
    cmd.env("UNIXAGENT_SESSION", "20261126T000000.000Z-00000001").env("UA_TRACE_DEPTH", "2");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(77));
    let schema: Value = serde_json::from_str(include_str!("../../docs/ndjson.schema.json")).unwrap();
    let schema = jsonschema::validator_for(&schema).unwrap();
    let events: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for e in &events {
        assert!(schema.is_valid(e), "{e}");
    }
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!((events[0]["type"].as_str(), events[0]["kind"].as_str()), (Some("error"), Some("depth")));
    assert_eq!((events[1]["type"].as_str(), events[1]["exit_code"].as_i64()), (Some("result"), Some(77)));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("agent.max_depth"), "{err}");
    assert_eq!(server.request_count(), 0);
}

#[test]
fn fan_out_beyond_max_children_is_refused_while_the_others_run() {
    let (home, work) = tree_home(EVERYTHING, "max_children = 1");
    let (started, go) = (work.join("started"), work.join("go"));
    let parent_cmd = format!(
        "mkfifo {s} {g}; unixagent -c '# the slow one' & read x < {s}; unixagent -c '# one too many'; echo second=$?; echo go > {g}; wait",
        s = started.display(),
        g = go.display()
    );
    let slow_cmd = format!("echo started > {}; cat {}", started.display(), go.display());
    let server = model(&scenario(&[
        Script { instruction: "fan out", answers: &[&format!("$ {parent_cmd}"), "parent done"] },
        Script { instruction: "the slow one", answers: &[&format!("$ {slow_cmd}"), "slow done"] },
        Script { instruction: "one too many", answers: &["never"] },
    ]));
    let (code, _) = unattended(&home, &server, "fan out");
    assert_eq!(code, 0);
    let parent = parent_saw(&server, "fan out");
    assert!(parent.contains("second=75"), "{parent}");
    assert!(parent.contains("1 agents of this session already run at once, the most agent.max_children"), "{parent}");
    assert!(parent.contains("\"the slow one\" · done") && parent.contains("slow done"), "{parent}");
    assert_eq!(requests_of(&server, "one too many"), 0);
}

#[test]
fn a_background_child_denies_what_would_ask_and_says_so() {
    let (home, work) = tree_home(DELEGATE, "");
    let keep = work.join("keep");
    std::fs::create_dir(&keep).unwrap();
    let server = model(&scenario(&[
        Script { instruction: "ask a child", answers: &["$ unixagent -c '# clean up' & wait", "parent done"] },
        Script {
            instruction: "clean up",
            answers: &[&format!("$ rm -rf {}", keep.display()), "I could not delete it: nobody approved"],
        },
    ]));
    let started = Instant::now();
    let (code, _) = unattended(&home, &server, "ask a child");
    assert_eq!(code, 0);
    assert!(started.elapsed() < Duration::from_secs(60), "nothing waited on a question");
    let parent = parent_saw(&server, "ask a child");
    assert!(parent.contains("\"clean up\" · done · ") && parent.contains(" · 1 denied"), "{parent}");
    assert!(parent.contains(&format!("denied: rm -rf {}", keep.display())), "{parent}");
    assert!(parent.contains("there is no terminal to ask on"), "{parent}");
    assert!(parent.contains("I could not delete it"), "{parent}");
    assert!(keep.is_dir(), "the command did not run");
}

/// A watched parent starts two children in the background that can only
/// finish together: child a waits on a FIFO that child b writes.
fn two_children(home: &Home, work: &Path) -> (FakeProvider, u32) {
    let fifo = work.join("ab");
    let server = model(&scenario(&[
        Script {
            instruction: "two at once",
            answers: &[
                &format!("$ mkfifo {}; unixagent -c '# child a' & unixagent -c '# child b' & wait", fifo.display()),
                "both done",
            ],
        },
        Script { instruction: "child a", answers: &[&format!("$ cat {}", fifo.display()), "a read it"] },
        Script { instruction: "child b", answers: &[&format!("$ echo from-b > {}", fifo.display()), "b wrote it"] },
    ]));
    let (code, _t) = watched(home, &server, "two at once");
    (server, code)
}

#[test]
fn background_children_run_in_parallel_and_roll_their_usage_up() {
    let (home, work) = tree_home(EVERYTHING, "");
    let (server, code) = two_children(&home, &work);
    assert_eq!(code, 0);
    let parent = parent_saw(&server, "two at once");
    // Each child: one fold line and its answer; no progress, no escapes.
    assert!(parent.contains("\"child a\" · done") && parent.contains("a read it"), "{parent}");
    assert!(parent.contains("\"child b\" · done") && parent.contains("b wrote it"), "{parent}");
    assert!(!parent.contains('\x1b') && !parent.contains('⠋') && !parent.contains('\r'), "{parent:?}");
    // sessions list: the children under their root, their usage rolled up.
    let list = sessions(&home);
    assert_eq!(list.len(), 3, "{list:#?}");
    let root = &list[0];
    assert_eq!((root["depth"].as_u64(), root["descendants"]["sessions"].as_u64()), (Some(0), Some(2)), "{root}");
    let kids: Vec<&Value> = list[1..].iter().collect();
    let kid_tokens: u64 =
        kids.iter().map(|k| k["tokens"]["input"].as_u64().unwrap() + k["tokens"]["output"].as_u64().unwrap()).sum();
    let rolled = root["descendants"]["tokens"]["input"].as_u64().unwrap()
        + root["descendants"]["tokens"]["output"].as_u64().unwrap();
    assert!(kid_tokens > 0 && rolled == kid_tokens, "{root} {kids:?}");
    let own = root["tokens"]["input"].as_u64().unwrap() + root["tokens"]["output"].as_u64().unwrap();
    let total =
        root["total"]["tokens"]["input"].as_u64().unwrap() + root["total"]["tokens"]["output"].as_u64().unwrap();
    assert_eq!(total, own + kid_tokens);
    for k in &kids {
        assert_eq!((k["parent"].as_str(), k["depth"].as_u64()), (root["id"].as_str(), Some(1)), "{k}");
        assert_eq!(k["root"], root["id"]);
        // meta.json names the parent, the parent's command and the depth.
        let m = meta(&home, k["id"].as_str().unwrap());
        assert_eq!(m["parent"], root["id"]);
        assert_eq!(m["depth"], 1);
        assert!(m["parent_command"].as_str().is_some_and(|c| c.starts_with("toolu_")), "{m}");
        assert_eq!(m["trace_id"], meta(&home, root["id"].as_str().unwrap())["trace_id"]);
    }
    // --usage counts each session once: its turns are the three sessions'.
    let mut cmd = Command::new(unixagent());
    cmd.args(["--usage", "--json"]).env("HOME", home.path()).env("XDG_DATA_HOME", home.path().join(".local/share"));
    let usage: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(usage["turns"], 3, "{usage}");
    assert_eq!(usage["by_session"].as_array().unwrap().len(), 3);
    assert_eq!(usage["input"].as_u64().unwrap() + usage["output"].as_u64().unwrap(), own + kid_tokens);
}

/// Parses OTLP/JSON lines with the OpenTelemetry protocol's own protobuf
/// definitions (protobuf's `json_format.Parse`, which refuses unknown
/// fields and wrong types), and prints each span as `name trace span
/// parent kind`, tab-separated. protobuf reads the ids' hex as base64 (OTLP's
/// JSON says hex where protobuf's says base64), so they are written back
/// the same way to compare.
pub(crate) const OTLP_CHECK: &str = r#"
import base64, sys
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
for line in sys.stdin:
    req = json_format.Parse(line, ExportTraceServiceRequest())
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                b = lambda x: base64.b64encode(x).decode() if x else "-"
                print(s.name, b(s.trace_id), b(s.span_id), b(s.parent_span_id), s.kind, sep="\t")
"#;

#[test]
fn one_trace_links_the_parent_command_to_its_children_and_exports_as_otlp() {
    let (home, work) = tree_home(EVERYTHING, "");
    let (_server, code) = two_children(&home, &work);
    assert_eq!(code, 0);
    let mut cmd = Command::new(unixagent());
    cmd.args(["traces", "export", "--since", "1h"]);
    cmd.env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env_remove("UA_TRACE_SINK");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let python = which("python3");
    let pythonpath = "/usr/local/lib/unixagent-test/python";
    let mut check = Command::new(python)
        .args(["-c", OTLP_CHECK])
        .env("PYTHONPATH", pythonpath)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut check.stdin.take().unwrap(), &out.stdout).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "the export does not parse as OTLP (opentelemetry-proto in {pythonpath}; scripts/test-deps.sh installs it): {}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let spans: Vec<Vec<String>> =
        String::from_utf8_lossy(&checked.stdout).lines().map(|l| l.split('\t').map(str::to_string).collect()).collect();
    let named = |n: &str| spans.iter().filter(|s| s[0].split(' ').next() == Some(n)).collect::<Vec<_>>();
    let agents = named("invoke_agent");
    assert_eq!(agents.len(), 3, "{spans:?}");
    assert!(spans.iter().all(|s| s[1] == spans[0][1]), "one trace: {spans:?}");
    let root = agents.iter().find(|a| a[3] == "-").expect("the parent's instruction is the root");
    let delegate = named("execute_tool")
        .into_iter()
        .find(|t| t[3] == root[2])
        .expect("the parent's command is inside its instruction");
    let children: Vec<_> = agents.iter().filter(|a| a[3] == delegate[2]).collect();
    assert_eq!(children.len(), 2, "both children hang from the command that started them: {spans:?}");
    // Each child's own command and model calls are inside its instruction.
    for c in children {
        assert!(spans.iter().any(|s| s[0] == "execute_tool shell" && s[3] == c[2]), "{spans:?}");
        assert!(
            spans.iter().any(|s| s[0].starts_with("chat ") && s[3] == c[2] && s[4] == "3"),
            "chat is a client span: {spans:?}"
        );
    }
}

#[test]
fn a_killed_child_fails_its_command_frees_its_slot_and_shows_as_crashed() {
    let (home, work) = tree_home(EVERYTHING, "max_children = 1");
    let never = work.join("never");
    let server = model(&scenario(&[
        Script {
            instruction: "supervise",
            answers: &[
                &format!(
                    "$ mkfifo {}; unixagent -c '# get stuck'; echo stuck=$?; unixagent -c '# after it'; echo after=$?",
                    never.display()
                ),
                "parent done",
            ],
        },
        Script { instruction: "get stuck", answers: &[&format!("$ cat {}", never.display()), "unreachable"] },
        Script { instruction: "after it", answers: &["after done"] },
    ]));
    let path = format!("{}:{}", home.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let spawn = Spawn::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# supervise"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", home.path().join("tmp"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .cwd(&work);
    let mut t = spawn.start();
    // The stuck child's `cat` has started (it never ends by itself).
    let cat = wait_for_process(&format!("cat {}", never.display()));
    let child = wait_for_process("unixagent -c # get stuck");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child), nix::sys::signal::Signal::SIGKILL).unwrap();
    assert_eq!(t.wait_exit(), 0);
    let parent = parent_saw(&server, "supervise");
    assert!(parent.contains("stuck=137"), "a failed command with its exit status: {parent}");
    assert!(parent.contains("after=0") && parent.contains("after done"), "the slot was freed: {parent}");
    // Its shell went with it (the terminal hung up), and so did its command.
    let gone = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(format!("/proc/{cat}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(Instant::now() < gone, "the killed child's command outlived it");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Listed under its parent, crashed (it never ended its turn, so the
    // index has no instruction for it); the child after it ended.
    let list = sessions(&home);
    let states: Vec<(&str, u64)> =
        list.iter().map(|s| (s["state"].as_str().unwrap(), s["depth"].as_u64().unwrap())).collect();
    assert_eq!(states, [("ended", 0), ("crashed", 1), ("ended", 1)], "{list:#?}");
    // The parent's journal: the killed child ended as an error, before the
    // one after it started.
    let children: Vec<(String, String)> = journal_of(&home, list[0]["id"].as_str().unwrap())
        .into_iter()
        .filter(|l| l["type"] == "child")
        .map(|l| (l["instruction"].as_str().unwrap().to_string(), l["status"].as_str().unwrap().to_string()))
        .collect();
    let pairs: Vec<(&str, &str)> = children.iter().map(|(i, s)| (i.as_str(), s.as_str())).collect();
    assert_eq!(
        pairs,
        [("get stuck", "running"), ("get stuck", "error"), ("after it", "running"), ("after it", "ok")],
        "{children:?}"
    );
    // The killed child recorded its spans as they finished: its model
    // call's `chat` span is in the tree's traces, though it never ended.
    let stuck = list[1]["id"].as_str().unwrap();
    let traces = std::fs::read_to_string(home.path().join(".local/share/unixagent/traces.jsonl")).unwrap();
    let chats: Vec<&str> = traces.lines().filter(|l| l.contains(stuck) && l.contains("\"name\":\"chat ")).collect();
    assert_eq!(chats.len(), 1, "{traces}");
}

/// The pid of the process whose command line is `cmdline` (its words
/// joined by spaces), waited for.
pub(crate) fn wait_for_process(cmdline: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
            let Ok(raw) = std::fs::read(e.path().join("cmdline")) else { continue };
            let words: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            let line = words.join(" ");
            if line == cmdline || line.ends_with(&format!("/{cmdline}")) {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "no process {cmdline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn journal_retention_rotates_the_traces_too() {
    let (home, work) = tree_home(DELEGATE, "");
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n[journal]\nretain_days = 30\n");
    let data = home.path().join(".local/share/unixagent");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("traces.jsonl"), "{\"old\":1}\n").unwrap();
    let stale = data.join("traces-20200101.jsonl");
    std::fs::write(&stale, "{\"older\":1}\n").unwrap();
    let year_ago = std::time::SystemTime::now() - Duration::from_secs(400 * 86_400);
    std::fs::File::options().write(true).open(&stale).unwrap().set_modified(year_ago).unwrap();
    let server = model(&scenario(&[Script { instruction: "hello", answers: &["hi"] }]));
    let mut cmd = Command::new(unixagent());
    cmd.args(["--shell", "/bin/bash", "-c", "# hello"]).current_dir(&work).stdin(Stdio::null());
    env(&mut cmd, &home, &server);
    assert!(cmd.output().unwrap().status.success());
    assert!(!stale.exists(), "a rotated file older than retain_days is deleted");
    let rotated: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("traces-"))
        .collect();
    assert_eq!(rotated.len(), 1, "{rotated:?}");
    assert_eq!(std::fs::read_to_string(data.join(&rotated[0])).unwrap(), "{\"old\":1}\n");
    // This session's spans went to a new traces.jsonl.
    let fresh = std::fs::read_to_string(data.join("traces.jsonl")).unwrap();
    assert!(fresh.contains("\"invoke_agent unixagent\"") && !fresh.contains("\"old\""), "{fresh}");
}

#[test]
fn a_childs_gate_decides_at_its_real_depth() {
    // A user's rule for children: nothing but reading below the first session.
    let policy = format!(
        "{EVERYTHING}\n@id(\"test.children-read-only\")\n@reason(\"child agents only read\")\nforbid (principal, action == Action::\"exec\", resource) when {{ principal.depth >= 1 && resource.risk_level > 0 }};\n"
    );
    let (home, work) = tree_home(&policy, "");
    let (mine, theirs) = (work.join("parent-made"), work.join("child-made"));
    let server = model(&scenario(&[
        Script {
            instruction: "make and delegate",
            answers: &[
                &format!("$ touch {} && unixagent -c '# child makes' < /dev/null", mine.display()),
                "parent done",
            ],
        },
        Script { instruction: "child makes", answers: &[&format!("$ touch {}", theirs.display()), "could not"] },
    ]));
    let (code, _) = unattended(&home, &server, "make and delegate");
    assert_eq!(code, 0);
    assert!(mine.exists(), "the first session (depth 0) may write");
    assert!(!theirs.exists(), "its child (depth 1) may not");
    let child = parent_saw(&server, "child makes");
    assert!(child.contains("test.children-read-only"), "{child}");
}

/// Every event line valid against docs/ndjson.schema.json.
fn schema_checked(events: &[Value]) {
    let schema: Value = serde_json::from_str(include_str!("../../docs/ndjson.schema.json")).unwrap();
    let schema = jsonschema::validator_for(&schema).unwrap();
    for e in events {
        assert!(schema.is_valid(e), "not valid against the schema: {e}");
    }
}

#[test]
fn a_json_parent_reports_its_children_as_they_start_and_end_refused_ones_too() {
    let (home, _) = tree_home(EVERYTHING, "max_depth = 2");
    let server = model(&scenario(&[
        Script {
            instruction: "report the children",
            answers: &[
                "$ unixagent -c '# the good child' < /dev/null; UA_TRACE_DEPTH=7 unixagent -c '# the refused child' < /dev/null; echo refused=$?",
                "parent done",
            ],
        },
        Script { instruction: "the good child", answers: &["$ echo hi", "good done"] },
    ]));
    home.write(".config/unixagent/config.toml", &format!("[judge]\nmode = \"off\"\n[agent]\nmax_depth = 2\n{PRICED}"));
    let (code, events) = unattended(&home, &server, "report the children");
    assert_eq!(code, 0, "{events:#?}");
    schema_checked(&events);
    let children: Vec<&Value> = events.iter().filter(|e| e["type"] == "child").collect();
    let seen: Vec<(&str, &str, &str)> = children
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["instruction"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [("c1", "the good child", "running"), ("c1", "the good child", "ok"), ("c2", "the refused child", "refused")],
        "{children:#?}"
    );
    // The child's start names its session; its end adds what it used.
    let session = children[0]["session"].as_str().expect("a running child names its session");
    assert_eq!(children[1]["session"].as_str(), Some(session));
    let kid = &children[1]["usage"];
    let (input, output) = (kid["input"].as_u64().unwrap(), kid["output"].as_u64().unwrap());
    assert!(input > 0, "{}", children[1]);
    assert!((kid["cost_usd"].as_f64().unwrap() - price(input, output)).abs() < 1e-9, "{}", children[1]);
    // The parent's turn ends with its own usage and, apart, the child's.
    let turn_end = events.iter().find(|e| e["type"] == "turn_end").unwrap();
    assert_eq!(&turn_end["descendants"], kid, "{turn_end}");
    let own = &turn_end["usage"];
    let result = events.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(own, &result["usage"], "one turn: the run's usage is the turn's own");
    let (input, output) = (own["input"].as_u64().unwrap(), own["output"].as_u64().unwrap());
    assert!((own["cost_usd"].as_f64().unwrap() - price(input, output)).abs() < 1e-9, "{own}");
    assert!(children[2]["session"].is_null(), "{}", children[2]);
    // Both ended before the command that started them did.
    let result = events.iter().position(|e| e["type"] == "command_result").unwrap();
    let last_child = events.iter().rposition(|e| e["type"] == "child").unwrap();
    assert!(last_child < result, "{events:#?}");
    // The parent's journal has the same three moments.
    let journal = events[0]["journal"].as_str().expect("the parent keeps a journal");
    let lines: Vec<Value> = std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.to_string().contains("\"child\"") && l.to_string().contains("\"status\""))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let statuses: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    assert!(statuses[0].contains("\"running\"") && statuses[0].contains("the good child"), "{statuses:?}");
    assert!(statuses[1].contains("\"ok\"") && statuses[2].contains("\"refused\""), "{statuses:?}");
}

/// A price for the model every agent of these tests uses: US dollars
/// per million tokens.
const PRICED: &str = "[pricing.\"claude-sonnet-4-5\"]\ninput = 3.0\noutput = 15.0\n";

/// What `input` and `output` tokens cost at [`PRICED`], in dollars.
fn price(input: u64, output: u64) -> f64 {
    (input as f64 * 3.0 + output as f64 * 15.0) / 1e6
}

/// The parent's journal lines, as JSON.
pub(crate) fn journal_of(home: &Home, id: &str) -> Vec<Value> {
    let p = home.path().join(".local/share/unixagent/sessions").join(id).join("journal.jsonl");
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_terminal_parents_footer_and_turn_end_add_what_its_children_used() {
    let (home, _) = tree_home(EVERYTHING, "");
    let server = model(&scenario(&[
        Script {
            instruction: "count the children",
            answers: &["$ unixagent -c '# the counted child' < /dev/null; echo kid=$?", "parent done"],
        },
        Script { instruction: "the counted child", answers: &["$ echo hi", "counted"] },
    ]));
    home.write(".config/unixagent/config.toml", &format!("[judge]\nmode = \"off\"\n{PRICED}"));
    let (code, t) = watched(&home, &server, "count the children");
    assert_eq!(code, 0);
    let list = sessions(&home);
    assert_eq!(list.len(), 2, "{list:#?}");
    let kid = &list[1];
    let (input, output) = (kid["tokens"]["input"].as_u64().unwrap(), kid["tokens"]["output"].as_u64().unwrap());
    assert!(input + output > 0 && input + output < 1000, "{kid}");
    let cost = kid["cost_usd"].as_f64().expect("the child's model has a price");
    assert!((cost - price(input, output)).abs() < 1e-9, "{kid}");
    // The footer, through the terminal: the turn's own tokens, then the
    // child's after a `+`, with their cost.
    let screen = t.screen_text();
    let footer = screen.lines().find(|l| l.contains('↑') && l.contains("cmd")).unwrap_or_else(|| panic!("{screen}"));
    assert!(footer.contains(&format!("↓ +{} ${cost:.4}  1 cmd", input + output)), "{footer:?}");
    // The turn's end in the journal: the child apart from the turn's own.
    let turn_ends: Vec<Value> =
        journal_of(&home, list[0]["id"].as_str().unwrap()).into_iter().filter(|l| l["type"] == "turn_end").collect();
    assert_eq!(turn_ends.len(), 1, "{turn_ends:#?}");
    assert_eq!(
        turn_ends[0]["descendants"],
        serde_json::json!({ "input": input, "output": output, "cost_usd": cost }),
        "{turn_ends:#?}"
    );
    let own = &turn_ends[0]["usage"];
    assert_eq!(
        (own["input_tokens"].as_u64().unwrap() + own["output_tokens"].as_u64().unwrap()),
        list[0]["tokens"]["input"].as_u64().unwrap() + list[0]["tokens"]["output"].as_u64().unwrap(),
        "the turn's own usage stays its own"
    );
}

/// A watched parent whose foreground child is stuck in a command that
/// never ends (`cat` of a FIFO nobody writes): the terminal, and the pids
/// of the parent's whole tree once the child's command runs.
fn stuck_tree(home: &Home, work: &Path, server: &FakeProvider) -> (Term, Vec<i32>) {
    let path = format!("{}:{}", home.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let spawn = Spawn::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# hold the child"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", home.path().join("tmp"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .cwd(work);
    let t = spawn.start();
    let fifo = work.join("never");
    wait_for_process(&format!("cat {}", fifo.display()));
    let tree = descendants(t.pid().cast_signed());
    // The parent, its shell, the child, the child's shell (and what its
    // sandbox put between) and the child's command.
    assert!(tree.len() >= 5, "{tree:?}");
    (t, tree)
}

fn stuck_server(work: &Path) -> FakeProvider {
    let fifo = work.join("never");
    model(&scenario(&[
        Script {
            instruction: "hold the child",
            answers: &[
                &format!("$ mkfifo {f}; unixagent -c '# stuck child'; echo child=$?", f = fifo.display()),
                "parent done",
            ],
        },
        Script { instruction: "stuck child", answers: &[&format!("$ cat {}", fifo.display()), "unreachable"] },
    ]))
}

/// `root` and every process below it, by walking /proc's parent links.
fn descendants(root: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let ppid: i32 = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        parents.push((pid, ppid));
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

/// Waits until none of `pids` is alive (a zombie waiting for its reaper
/// counts as gone), failing with the leftovers' command lines.
fn all_gone(pids: &[i32], what: &str) {
    let alive = |p: &i32| {
        std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
            let state = s.rfind(')').and_then(|i| s[i + 1..].split_whitespace().next().map(str::to_string));
            state.as_deref() != Some("Z")
        })
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left: Vec<&i32> = pids.iter().filter(|p| alive(p)).collect();
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            let lines: Vec<String> = left
                .iter()
                .map(|p| {
                    let raw = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                    format!("{p}: {}", String::from_utf8_lossy(&raw).replace('\0', " "))
                })
                .collect();
            panic!("{what}: left behind: {lines:#?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_at_the_parent_cancels_a_foreground_child_and_leaves_nothing_behind() {
    let (home, work) = tree_home(EVERYTHING, "");
    let server = stuck_server(&work);
    let (mut t, tree) = stuck_tree(&home, &work, &server);
    let child = descendants(wait_for_process("unixagent -c # stuck child"));
    t.send("\x03");
    // The child's turn is cancelled and it ends, its shell and command
    // with it; then the parent (a one-shot too) handles the interrupt of
    // its own turn: it stops, and exits 130.
    all_gone(&child, "after Ctrl+C");
    assert_eq!(t.wait_exit(), 130, "{}", t.screen_text());
    assert_eq!(requests_of(&server, "stuck child"), 1, "the child asked its model nothing more");
    assert_eq!(requests_of(&server, "hold the child"), 1, "the parent asked its model nothing more");
    all_gone(&tree, "once the parent ended");
}

#[test]
fn a_killed_or_hung_up_root_takes_its_whole_tree_with_it() {
    for (signal, name) in [
        (nix::sys::signal::Signal::SIGTERM, "SIGTERM"),
        (nix::sys::signal::Signal::SIGHUP, "SIGHUP"),
        (nix::sys::signal::Signal::SIGKILL, "kill -9"),
    ] {
        let (home, work) = tree_home(EVERYTHING, "");
        let server = stuck_server(&work);
        let (t, tree) = stuck_tree(&home, &work, &server);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(t.pid().cast_signed()), signal).unwrap();
        all_gone(&tree, name);
    }
}

#[test]
fn a_foreground_child_shows_one_progress_line_then_its_fold_line_and_the_parent_reads_only_that() {
    let (home, work) = tree_home(EVERYTHING, "");
    let gate = work.join("gate");
    let server = model(&scenario(&[
        Script {
            instruction: "fold a child",
            answers: &[
                &format!("$ mkfifo {}; unixagent -c '# the folded child'; echo folded=$?", gate.display()),
                "parent done",
            ],
        },
        Script {
            instruction: "the folded child",
            answers: &[&format!("$ cat {}; echo step-output-xyz", gate.display()), "the folded answer"],
        },
    ]));
    let path = format!("{}:{}", home.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut t = Spawn::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# fold a child"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("TMPDIR", home.path().join("tmp"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .cwd(&work)
        .start();
    // While the child's command runs: one line naming the step, in place.
    wait_for_process(&format!("cat {}", gate.display()));
    let step = format!("$ cat {}; echo step-output-xyz", gate.display());
    t.wait_for("the progress line", |s| {
        s.text().lines().any(|l| l.starts_with("▸ child \"the folded child\" · ") && l.contains(&step[..20]))
    });
    std::fs::write(&gate, "go\n").unwrap();
    assert_eq!(t.wait_exit(), 0, "{}", t.screen_text());
    let screen = t.screen_text();
    // At its end: the fold line, then its answer; the progress line is gone.
    let fold = screen.lines().position(|l| l.starts_with("▸ child ") && l.contains("\"the folded child\" · done · "));
    let fold = fold.unwrap_or_else(|| panic!("no fold line: {screen}"));
    assert!(screen.lines().nth(fold).unwrap().contains("· 1 command"), "{screen}");
    assert_eq!(screen.lines().nth(fold + 1).map(str::trim), Some("the folded answer"), "{screen}");
    assert!(!screen.contains("step-output-xyz") && !screen.contains("· $ cat"), "{screen}");
    // The parent's model got that and nothing else: no progress, no
    // carriage returns, no escapes.
    let parent = parent_saw(&server, "fold a child");
    assert!(parent.contains("\"the folded child\" · done · ") && parent.contains("the folded answer"), "{parent:?}");
    assert!(parent.contains("folded=0"), "{parent:?}");
    assert!(!parent.contains("$ cat") && !parent.contains("thinking") && !parent.contains("step-output"), "{parent:?}");
    assert!(!parent.contains('\x1b') && !parent.contains('\r'), "{parent:?}");
}

#[test]
fn an_unattended_parent_delegates_without_any_policy_of_the_users() {
    // No policy.cedar permits anything: the built-in policy lets a plain
    // child start, and asks (so denies, with nobody to ask) for the rest.
    let (home, _) = tree_home("", "");
    let server = model(&scenario(&[
        Script {
            instruction: "delegate alone",
            answers: &["$ unixagent -c '# the lone child' < /dev/null; echo lone=$?", "parent done"],
        },
        Script { instruction: "the lone child", answers: &["lone answer"] },
    ]));
    let (code, events) = unattended(&home, &server, "delegate alone");
    assert_eq!(code, 0, "{events:#?}");
    let command = events.iter().find(|e| e["type"] == "command").unwrap();
    assert_eq!(
        (command["decision"].as_str(), command["rule"].as_str()),
        (Some("allow"), Some("cedar:builtin.delegate"))
    );
    let parent = parent_saw(&server, "delegate alone");
    assert!(parent.contains("\"the lone child\" · done") && parent.contains("lone answer"), "{parent}");
    assert!(parent.contains("lone=0"), "{parent}");
}
