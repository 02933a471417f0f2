//! Sessions that last: `--continue` and `--resume` against the fake
//! provider (what the next request carries, what the journal holds), a
//! crash in the middle of an agent command, a torn journal, the index
//! with several writers, and `sessions list/show/export/prune`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use ua_testkit::provider::FakeProvider;

use crate::support::*;

/// `unixagent ARGS` in `dir` with `home`'s config and data, against
/// `server`, stdin not a terminal.
fn unixagent_in(home: &Home, dir: &Path, server: &FakeProvider, args: &[&str]) -> Command {
    let mut c = Command::new(unixagent());
    if args.first().is_some_and(|a| a.starts_with('-')) {
        c.args(["--shell", "/bin/bash"]);
    }
    c.args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("UNIXAGENT_CONFIG")
        .current_dir(dir)
        .stdin(Stdio::null());
    c
}

fn run(home: &Home, dir: &Path, server: &FakeProvider, args: &[&str]) -> Output {
    let o = unixagent_in(home, dir, server, args).output().expect("unixagent runs");
    assert!(
        o.status.success(),
        "unixagent {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn sessions_dir(home: &Home) -> PathBuf {
    home.path().join(".local/share/unixagent/sessions")
}

/// Every session directory, oldest first.
fn session_dirs(home: &Home) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(sessions_dir(home))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The journal's lines, parsed (a torn or foreign line fails the test).
fn journal(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn count(lines: &[Value], kind: &str) -> usize {
    lines.iter().filter(|l| l["type"] == kind).count()
}

/// The messages of request `i`, without the provider's cache markers
/// (which move to the newest message with each request).
fn messages_of(server: &FakeProvider, i: usize) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("cache_control");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut m = crate::agent::messages(server, i);
    m.iter_mut().for_each(strip);
    m
}

fn scenario(replies: &[&str]) -> FakeProvider {
    let turns: String = replies.iter().map(|r| format!("[[turn]]\ntext = \"{r}\"\n")).collect();
    crate::agent::model(&turns)
}

#[test]
fn a_continued_session_carries_its_conversation_and_appends_to_its_own_journal() {
    let home = Home::new();
    let server = scenario(&["first answer", "second answer"]);
    run(&home, home.path(), &server, &["-c", "# remember the word kumquat"]);
    let first = messages_of(&server, 0);
    let o = run(&home, home.path(), &server, &["--continue", "-c", "# which word was it?"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("continuing session"), "{stderr}");

    // The next request is the earlier conversation exactly, the answer,
    // then the new instruction.
    let second = messages_of(&server, 1);
    assert_eq!(second.len(), first.len() + 2, "{second:#?}");
    assert_eq!(second[..first.len()], first[..]);
    assert_eq!(second[first.len()]["role"], "assistant");
    assert!(second[first.len()].to_string().contains("first answer"));
    assert!(second[first.len() + 1].to_string().contains("which word was it?"));

    // One session, one journal, nothing written twice.
    let dirs = session_dirs(&home);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let lines = journal(&dirs[0]);
    assert_eq!(count(&lines, "session_start"), 1);
    assert_eq!(count(&lines, "resumed"), 1);
    assert_eq!(count(&lines, "instruction"), 2);
    assert_eq!(count(&lines, "model_response"), 2);
    let requests: Vec<&Value> = lines.iter().filter(|l| l["type"] == "model_request").collect();
    let appended: usize = requests.iter().map(|r| r["messages_appended"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(appended, 2, "each user message journaled once: {requests:#?}");
    let seqs: Vec<u64> = lines.iter().filter_map(|l| l["seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "numbering goes on: {seqs:?}");
    assert!(count(&lines, "checkpoint") >= 2, "a checkpoint at each turn boundary");
}

#[test]
fn continue_takes_the_latest_session_of_this_directory_and_resume_takes_a_prefix() {
    let home = Home::new();
    let (a, b) = (home.path().join("a"), home.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let server = scenario(&["in a", "in b", "again in a", "again in b", "any"]);
    run(&home, &a, &server, &["-c", "# task in a"]);
    run(&home, &b, &server, &["-c", "# task in b"]);
    run(&home, &a, &server, &["--continue", "-c", "# more in a"]);
    let carried = messages_of(&server, 2).iter().map(Value::to_string).collect::<String>();
    assert!(carried.contains("task in a") && !carried.contains("task in b"), "{carried}");

    // --continue --any: the latest anywhere (a, just continued, is older
    // than b by start, but the newest session started is b).
    let ids: Vec<String> =
        session_dirs(&home).iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(ids.len(), 2);
    run(&home, &a, &server, &["--continue", "--any", "-c", "# more anywhere"]);
    let carried = messages_of(&server, 3).iter().map(Value::to_string).collect::<String>();
    assert!(carried.contains("task in b"), "{carried}");

    // --resume with a prefix of a's id, from b's directory.
    let a_id = ids.iter().find(|id| journal(&sessions_dir(&home).join(id))[0]["cwd"] == a.display().to_string());
    let a_id = a_id.expect("a's session");
    run(&home, &b, &server, &["--resume", &a_id[..a_id.len() - 3], "-c", "# back to a"]);
    let carried = messages_of(&server, 4).iter().map(Value::to_string).collect::<String>();
    assert!(carried.contains("more in a") && !carried.contains("task in b"), "{carried}");

    // Nothing to continue elsewhere: one clear line, nothing started.
    let c = home.path().join("c");
    std::fs::create_dir_all(&c).unwrap();
    let o = unixagent_in(&home, &c, &server, &["--continue", "-c", "# x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no earlier session in this directory"));
    assert_eq!(session_dirs(&home).len(), 2);
}

#[test]
fn a_command_cut_off_by_a_crash_is_not_run_again_and_the_model_is_told() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ id = \"t1\", name = \"shell\", input = { command = \"echo ran >> runs.txt; sleep 60\" } }]\n\
         [[turn]]\ntext = \"noted\"\n",
    );
    let mut child = unixagent_in(&home, home.path(), &server, &["--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::{BufRead as _, Write as _};
    writeln!(stdin, "{}", serde_json::json!({"type": "instruction", "text": "record a run"})).unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["type"] == "approval_request" {
            writeln!(stdin, "{}", serde_json::json!({"type": "approval", "id": v["id"], "decision": "allow"})).unwrap();
            break;
        }
    }
    let runs = home.path().join("runs.txt");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !runs.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(runs.exists(), "the command started");
    child.kill().unwrap(); // SIGKILL: no clean end, no tool_result
    child.wait().unwrap();

    let o = run(&home, home.path(), &server, &["--continue", "-c", "# what happened?"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("echo ran >> runs.txt; sleep 60") && stderr.contains("outcome is unknown"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "ran\n", "the command ran once");
    let results = crate::agent::tool_results(&messages_of(&server, 1));
    assert_eq!(results.len(), 1, "exactly one result for the one tool_use: {results:?}");
    assert!(results[0].1 && results[0].0.contains("It was not run again"), "{results:?}");
}

#[test]
fn a_torn_last_line_is_reported_and_the_session_goes_on() {
    let home = Home::new();
    let server = scenario(&["one", "two"]);
    run(&home, home.path(), &server, &["-c", "# first"]);
    let dir = &session_dirs(&home)[0];
    let mut j = std::fs::OpenOptions::new().append(true).open(dir.join("journal.jsonl")).unwrap();
    use std::io::Write as _;
    j.write_all(b"{\"seq\":999,\"ts\":1,\"type\":\"instruc").unwrap();
    drop(j);
    let o = run(&home, home.path(), &server, &["--continue", "-c", "# second"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("last line was incomplete"), "{:?}", o);
    assert_eq!(messages_of(&server, 1).len(), 3);
    // The fragment stays confined to its own line; everything else reads.
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let unreadable = text.lines().filter(|l| serde_json::from_str::<Value>(l).is_err()).count();
    assert_eq!(unreadable, 1, "{text}");
}

#[test]
fn sessions_are_listed_from_the_index_shown_exported_and_pruned() {
    let home = Home::new();
    let server = scenario(&["a", "b", "c", "d"]);
    // Each answer of the fake model: 10 tokens in, 5 out.
    home.write(
        ".config/unixagent/config.toml",
        &format!(
            "[backend]\ndefault = \"fake\"\n[backend.fake]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\n\
             [pricing.fake-model]\ninput = 3.0\noutput = 15.0\n",
            server.base_url()
        ),
    );
    // Two sessions at once: both processes update the index.
    let mut kids: Vec<_> = ["# first task", "# second task"]
        .iter()
        .map(|i| unixagent_in(&home, home.path(), &server, &["-c", i]).stdout(Stdio::null()).spawn().unwrap())
        .collect();
    for k in &mut kids {
        assert!(k.wait().unwrap().success());
    }
    let o = run(&home, home.path(), &server, &["sessions", "list", "--json"]);
    let listed: Vec<Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(listed.len(), 2, "{listed:#?}");
    let firsts: Vec<&str> = listed.iter().filter_map(|s| s["first_instruction"].as_str()).collect();
    assert!(firsts.contains(&"first task") && firsts.contains(&"second task"), "{firsts:?}");
    assert!(listed.iter().all(|s| s["turns"] == 1 && s["state"] == "ended"), "{listed:#?}");
    // Another directory lists none of them, unless --all.
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    assert!(run(&home, &other, &server, &["sessions", "list", "--json"]).stdout.is_empty());
    let all = run(&home, &other, &server, &["sessions", "list", "--all"]);
    let all = String::from_utf8_lossy(&all.stdout).into_owned();
    assert_eq!(all.lines().count(), 2, "{all}");
    let here = home.path().display().to_string();
    assert!(all.lines().all(|l| l.contains(&here) && l.contains("1 turn, 15 tokens, $0.0001, ended")), "{all}");

    let id = listed[0]["id"].as_str().unwrap();
    // A prefix: all but the end of the random part (both sessions may
    // have started in the same millisecond).
    let prefix = &id[..id.len() - 3];
    let shown =
        String::from_utf8_lossy(&run(&home, home.path(), &server, &["sessions", "show", prefix]).stdout).into_owned();
    assert!(shown.contains("# ") && shown.contains("turn ended: answered"), "{shown}");
    let md = run(&home, home.path(), &server, &["sessions", "export", id, "--format", "md"]);
    assert!(String::from_utf8_lossy(&md.stdout).starts_with(&format!("# Session {id}")));
    let jsonl = run(&home, home.path(), &server, &["sessions", "export", id, "--format", "jsonl"]);
    assert_eq!(jsonl.stdout, std::fs::read(sessions_dir(&home).join(id).join("journal.jsonl")).unwrap());

    // --usage adds the turns up from the index.
    let usage = run(&home, home.path(), &server, &["--usage", "--json", "--since", "1d"]);
    let usage: Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert_eq!(usage["turns"], 2, "{usage}");
    assert_eq!(usage["commands"], 0, "{usage}");
    // $3 and $15 a million: 10 × 3 + 5 × 15 = 105 millionths a turn.
    assert_eq!(usage["cost_usd"], 0.00021, "{usage}");
    assert_eq!(usage["unpriced_turns"], 0, "{usage}");
    assert!(listed.iter().all(|s| s["cost_usd"] == 0.000105), "{listed:#?}");
    assert!(usage["input"].as_u64().unwrap() > 0 && usage["by_session"].as_array().unwrap().len() == 2);
    // In words: one turn each, so "1 turn", never "1 turns".
    let text = run(&home, home.path(), &server, &["--usage", "--since", "1d"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.starts_with("2 turns, 0 commands:"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(&here)).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|l| l.contains(" 1 turn ") && l.contains(" 0 commands ")), "{text}");

    // Both were last active moments ago: a day's age keeps them, no age at
    // all removes them.
    let kept = run(&home, home.path(), &server, &["sessions", "prune", "--older-than", "1d"]);
    assert!(String::from_utf8_lossy(&kept.stdout).contains("0 sessions removed"), "{kept:?}");
    assert_eq!(session_dirs(&home).len(), 2);
    let pruned = run(&home, home.path(), &server, &["sessions", "prune", "--older-than", "0s"]);
    assert!(String::from_utf8_lossy(&pruned.stdout).contains("2 sessions removed"), "{pruned:?}");
    assert!(session_dirs(&home).is_empty());
    assert!(run(&home, home.path(), &server, &["sessions", "list", "--json", "--all"]).stdout.is_empty());
}

#[test]
fn the_index_is_rebuilt_from_the_journals() {
    let home = Home::new();
    let server = scenario(&["a"]);
    run(&home, home.path(), &server, &["-c", "# indexed task"]);
    std::fs::remove_file(sessions_dir(&home).join("index.jsonl")).unwrap();
    let o = run(&home, home.path(), &server, &["sessions", "reindex"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 session indexed"), "{o:?}");
    let listed = run(&home, home.path(), &server, &["sessions", "list", "--json"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("indexed task"));
}

#[test]
fn earlier_turns_are_summarised_when_the_window_is_outgrown_and_the_summary_is_kept_on_resume() {
    let home = Home::new();
    let long = |tag: &str| format!("{tag} {}", "filler words to fill the window ".repeat(250));
    let (one, two) = (long("ANSWER-ONE"), long("ANSWER-TWO"));
    let server = crate::agent::model(&format!(
        "[[turn]]\ntext = \"{one}\"\n[[turn]]\ntext = \"{two}\"\n\
         [[turn]]\ntext = \"SUMMARY-TEXT the user asked twice about fillers\"\n\
         [[turn]]\ntext = \"third answer\"\n[[turn]]\ntext = \"fourth answer\"\n"
    ));
    // One answer fits beside the system prompt (with its paragraphs on
    // delegating and on the task board), two do not.
    home.write(
        ".config/unixagent/config.toml",
        &format!(
            "[judge]\nmode = \"off\"\n[backend]\ndefault = \"fake\"\n[backend.fake]\nkind = \"anthropic\"\n\
             base_url = \"{}\"\nmodel = \"fake\"\ncontext_window = 5200\nmax_tokens = 400\n",
            server.base_url()
        ),
    );
    run(&home, home.path(), &server, &["-c", "# first question"]);
    run(&home, home.path(), &server, &["--continue", "-c", "# second question"]);
    run(&home, home.path(), &server, &["--continue", "-c", "# third question"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "turn three asked for a summary first");
    // The summary call: its own system prompt, the earlier turns as text.
    let summary_call = requests[2].json();
    assert!(summary_call["system"].to_string().contains("condense"), "{summary_call}");
    assert!(summary_call.to_string().contains("ANSWER-ONE") && summary_call.to_string().contains("ANSWER-TWO"));
    // The real call: the summary in place of the earlier turns.
    let third = messages_of(&server, 3);
    let text = third.iter().map(Value::to_string).collect::<String>();
    assert!(text.contains("SUMMARY-TEXT") && !text.contains("ANSWER-ONE"), "{text}");
    assert!(third.last().unwrap().to_string().contains("third question"));
    let lines = journal(&session_dirs(&home)[0]);
    assert_eq!(count(&lines, "summary"), 1);
    assert!(lines.iter().any(|l| l["type"] == "model_request" && l["purpose"] == "summary"));
    // The summary call counts toward the turn it was made for.
    let third_end = lines.iter().find(|l| l["type"] == "turn_end" && l["turn"] == 3).expect("turn 3 ended");
    assert_eq!(third_end["usage"]["input_tokens"], 20, "{third_end}");

    // Resumed: the summary is reused, not written again.
    run(&home, home.path(), &server, &["--continue", "-c", "# fourth question"]);
    let fourth = messages_of(&server, 4);
    assert_eq!(fourth[..third.len()], third[..], "the conversation goes on from the summary");
    assert!(fourth.iter().map(Value::to_string).collect::<String>().contains("third answer"));
    assert_eq!(server.requests().len(), 5, "no second summary");
}

#[test]
fn resume_without_an_id_lists_sessions_and_a_running_one_is_not_taken_over() {
    let home = Home::new();
    let server = scenario(&["first", "in batch"]);
    run(&home, home.path(), &server, &["-c", "# an old task"]);
    // No terminal to choose on: the list, and a clear error.
    let o = unixagent_in(&home, home.path(), &server, &["--resume", "-c", "# x"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("an old task") && stderr.contains("give one of these ids to --resume"), "{stderr}");

    // A batch session that stays open is running: --resume refuses it.
    let mut batch = unixagent_in(&home, home.path(), &server, &["--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::BufRead as _;
    let mut lines = std::io::BufReader::new(batch.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let id = first["id"].as_str().unwrap().to_string();
    let o = unixagent_in(&home, home.path(), &server, &["--resume", &id, "-c", "# x"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is still running"), "{stderr}");
    drop(batch.stdin.take());
    batch.wait().unwrap();
}

#[test]
fn a_batch_run_continues_a_session_under_its_own_id() {
    let home = Home::new();
    let server = scenario(&["one", "two"]);
    run(&home, home.path(), &server, &["-c", "# the first"]);
    let id = session_dirs(&home)[0].file_name().unwrap().to_string_lossy().into_owned();
    let o = run(&home, home.path(), &server, &["--json", "--continue", "-c", "# the second"]);
    let events: Vec<Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events[0]["type"], "session");
    assert_eq!(events[0]["id"], id.as_str());
    assert!(events.iter().any(|e| e["type"] == "notice" && e["text"].as_str().unwrap().contains("continuing session")));
    assert_eq!(events.last().unwrap()["type"], "result");
    assert!(messages_of(&server, 1).iter().map(Value::to_string).collect::<String>().contains("the first"));
    assert_eq!(session_dirs(&home).len(), 1);
}

#[test]
fn an_interactive_shell_continues_the_conversation_too() {
    let home = Home::new();
    let server = scenario(&["noted the color teal", "it was teal"]);
    run(&home, home.path(), &server, &["-c", "# remember teal"]);
    let mut t = home.spawn("bash").env("ANTHROPIC_BASE_URL", server.base_url()).arg("--continue").start();
    wait_prompt(&t, 1);
    assert!(t.screen_text().contains("continuing session"), "{}", t.screen_text());
    t.send("# which color?\r");
    t.wait_text("it was teal");
    let carried = messages_of(&server, 1).iter().map(Value::to_string).collect::<String>();
    assert!(carried.contains("remember teal") && carried.contains("noted the color teal"), "{carried}");
    assert_eq!(session_dirs(&home).len(), 1);
}

#[test]
fn a_continued_session_keeps_its_token_budget() {
    let home = Home::new();
    // Each answer of the fake model costs 15 tokens.
    home.write(".config/unixagent/config.toml", "[backend]\nmax_tokens_per_session = 25\n");
    let server = scenario(&["one", "two", "three"]);
    run(&home, home.path(), &server, &["-c", "# first"]);
    run(&home, home.path(), &server, &["--continue", "-c", "# second"]);
    let o = unixagent_in(&home, home.path(), &server, &["--continue", "-c", "# third"]).output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(all.contains("max_tokens_per_session of 25"), "{all}");
    assert_eq!(server.requests().len(), 2, "the spent budget carried over: no third call");
}

#[test]
fn resume_without_an_id_on_a_terminal_asks_which_one() {
    let home = Home::new();
    let server = scenario(&["first answer", "the older one"]);
    run(&home, home.path(), &server, &["-c", "# the older task"]);
    let mut t = home.spawn("bash").env("ANTHROPIC_BASE_URL", server.base_url()).arg("--resume").start();
    t.wait_text("continue which one? [1-1]");
    assert!(t.screen_text().contains("the older task"), "{}", t.screen_text());
    t.send("1\r");
    wait_prompt(&t, 1);
    assert!(t.screen_text().contains("continuing session"), "{}", t.screen_text());
    t.send("# and?\r");
    t.wait_text("the older one");
    assert!(messages_of(&server, 1).iter().map(Value::to_string).collect::<String>().contains("the older task"));
}
