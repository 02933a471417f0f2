//! The agent in the shell: instructions go to a fake model on loopback,
//! its commands are approved with a keystroke and run in the real shell,
//! and what they printed goes back to the model.

use std::time::Duration;

use serde_json::Value;
use ua_testkit::provider::{FakeProvider, Scenario};

use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

/// A fake model playing `scenario` (TOML, as in demo/scenarios).
pub fn model(scenario: &str) -> FakeProvider {
    FakeProvider::start(Scenario::from_toml(scenario).expect("scenario")).expect("fake provider")
}

/// unixagent over `shell`, talking to `server` (instead of the home's
/// model) in the Anthropic format. Unless the test configured otherwise,
/// every command asks (`confirm_mode = "each"`) and the judge is off, so
/// tests of the turn do not depend on how the policy rates their commands
/// and the judge takes no scripted answer.
pub fn start_with(home: &Home, shell: &str, server: &FakeProvider) -> Term {
    let config = home.path().join(".config/unixagent/config.toml");
    if !config.exists() {
        home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    }
    let t = home
        .spawn(shell)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .start();
    wait_prompt(&t, 1);
    t
}

/// The messages of request `i` as the server received them.
pub fn messages(server: &FakeProvider, i: usize) -> Vec<Value> {
    let reqs = server.wait_until(WAIT, |r| r.len() > i).expect("the request arrives");
    reqs[i].json()["messages"].as_array().cloned().unwrap_or_default()
}

/// Every tool_result block in a request's messages, as (text, is_error).
pub fn tool_results(messages: &[Value]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for m in messages {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                let text = match &b["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => {
                        parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
                    }
                    _ => String::new(),
                };
                out.push((text, b["is_error"].as_bool().unwrap_or(false)));
            }
        }
    }
    out
}

const RUN_ONE: &str = r#"
[[turn]]
text = ["I'll run ", "a command."]
tool_calls = [{ name = "shell", input = { command = "echo agent-ran-$((6*7))" } }]
usage = { input = 1200, output = 40 }

[[turn]]
text = "All done: it printed the answer."
usage = { input = 1300, output = 20 }
"#;

#[test]
fn an_approved_command_runs_in_the_shell_and_its_output_goes_back() {
    for shell in ["bash", "zsh"] {
        let home = Home::new();
        let server = model(RUN_ONE);
        let mut t = start_with(&home, shell, &server);
        t.send("# show me the answer\r");
        t.wait_text("I'll run a command.");
        t.wait_text("❯ echo agent-ran-$((6*7))");
        t.wait_text("[y] run");
        let n = prompts(&t);
        t.send("y");
        t.wait_text("agent-ran-42");
        t.wait_text("All done: it printed the answer.");
        t.wait_text("1 cmd");
        wait_prompt(&t, n + 1);

        // The first request carried the instruction; the second the real
        // output and exit status of the command as a tool result.
        let first = messages(&server, 0);
        assert!(first[0].to_string().contains("show me the answer"), "{shell}: {first:?}");
        let second = messages(&server, 1);
        let results = tool_results(&second);
        assert_eq!(results.len(), 1, "{shell}: {second:?}");
        assert!(results[0].0.contains("agent-ran-42"), "{shell}: {results:?}");
        assert!(results[0].0.contains("exit status: 0"), "{shell}: {results:?}");
        assert!(!results[0].0.contains("echo agent-ran"), "{shell}: the echo of the command leaked: {results:?}");
        assert!(!results[0].1);

        // The command is shown once (the proposal line), not echoed again,
        // and the shell is back, intact.
        let screen = t.screen_text();
        assert_eq!(screen.matches("echo agent-ran").count(), 1, "{shell}:\n{screen}");
        run(&mut t, "echo after-$((1+1))");
        t.wait_text("after-2");
    }
}

const RUN_TWO_FAIL_FIRST: &str = r#"
[[turn]]
text = "Two steps."
tool_calls = [
  { name = "shell", input = { command = "ls /nonexistent-dir-for-test" } },
  { name = "shell", input = { command = "echo second-step" } },
]

[[turn]]
text = "The first step failed."
"#;

#[test]
fn a_failing_command_stops_the_queue_and_the_model_hears_why() {
    let home = Home::new();
    let server = model(RUN_TWO_FAIL_FIRST);
    let mut t = start_with(&home, "bash", &server);
    t.send("# two steps\r");
    t.wait_text("❯ ls /nonexistent-dir-for-test");
    let n = prompts(&t);
    t.send("y");
    t.wait_text("The first step failed.");
    wait_prompt(&t, n + 1);
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].0.contains("No such file or directory") && results[0].0.contains("exit status: 2"),
        "{results:?}"
    );
    assert!(results[0].1);
    assert!(results[1].0.contains("earlier command failed"), "{results:?}");
    assert!(!t.screen_text().contains("second-step"));
}

const ASK_THEN_ANSWER: &str = r#"
[[turn]]
text = "Proposing."
tool_calls = [{ name = "shell", input = { command = "touch should-not-exist" } }]

[[turn]]
text = "Understood."
"#;

#[test]
fn skip_and_quit_do_not_run_the_command_and_tell_the_model() {
    for (key, expect) in [("n", "skipped"), ("q", "ended the turn")] {
        let home = Home::new();
        let server = model(ASK_THEN_ANSWER);
        let mut t = start_with(&home, "bash", &server);
        t.send("# make a file\r");
        t.wait_text("[y] run");
        let n = prompts(&t);
        t.send(key);
        wait_prompt(&t, n + 1);
        assert!(!home.path().join("should-not-exist").exists(), "{key}");
        if key == "n" {
            // Skip goes back to the model, which answers.
            t.wait_text("Understood.");
            let results = tool_results(&messages(&server, 1));
            assert!(results[0].0.contains(expect), "{results:?}");
        } else {
            // Quit ends the turn: no second call, and the next instruction
            // carries the answer to the unrun call.
            assert_eq!(server.request_count(), 1);
            let n = prompts(&t);
            t.send("# again\r");
            t.wait_text("Understood.");
            wait_prompt(&t, n + 1);
            let results = tool_results(&messages(&server, 1));
            assert!(results[0].0.contains(expect), "{results:?}");
        }
        run(&mut t, "echo still-here");
        t.wait_text("still-here");
    }
}

const EDITABLE: &str = r#"
[[turn]]
text = "Proposing."
tool_calls = [{ name = "shell", input = { command = "echo original-command" } }]

[[turn]]
text = "Edited and ran."
"#;

#[test]
fn edit_runs_what_the_editor_saved() {
    let home = Home::new();
    // An "editor" that rewrites the command file, as a person would.
    home.write("bin/fake-editor", "#!/bin/sh\nprintf 'echo edited-%s\\n' \"$((40+2))\" > \"$1\"\n");
    let editor = home.path().join("bin/fake-editor");
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = model(EDITABLE);
    let mut t = home
        .spawn("bash")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("EDITOR", &editor)
        .env("VISUAL", "")
        .start();
    wait_prompt(&t, 1);
    t.send("# edit it\r");
    t.wait_text("[y] run");
    t.send("e");
    // The edited command is proposed again and asks again.
    t.wait_text("❯ echo edited-42");
    t.wait_for("second question", |s| s.text().matches("[y] run").count() >= 2);
    t.send("y");
    t.wait_text("Edited and ran.");
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("edited-42"), "{results:?}");
    assert!(!t.screen_text().contains("original-command\r\noriginal"));
}

const STEERABLE: &str = r#"
[[turn]]
text = "Deleting everything."
tool_calls = [{ name = "shell", input = { command = "rm -f important.txt" } }]

[[turn]]
text = "Keeping it, then."
"#;

#[test]
fn steering_at_a_question_sends_new_directions() {
    let home = Home::new();
    home.write("important.txt", "keep me");
    let server = model(STEERABLE);
    let mut t = start_with(&home, "zsh", &server);
    t.send("# tidy up\r");
    t.wait_text("[y] run");
    t.send("# keep important.txt\r");
    t.wait_text("Keeping it, then.");
    assert!(home.path().join("important.txt").exists());
    let second = messages(&server, 1);
    let last = second.last().unwrap().to_string();
    assert!(last.contains("keep important.txt"), "{last}");
    assert!(tool_results(&second)[0].0.contains("new directions"));
}

const SLOW: &str = r#"
[[turn]]
text = ["Thinking ", "about ", "it"]
delay_ms = 400
hold = true
"#;

#[test]
fn ctrl_c_while_streaming_ends_the_request_and_gives_the_prompt_back() {
    let home = Home::new();
    let server = model(SLOW);
    let mut t = start_with(&home, "bash", &server);
    t.send("# take your time\r");
    t.wait_text("Thinking");
    let n = prompts(&t);
    t.send("\x03");
    wait_prompt(&t, n + 1);
    let end = server.wait_for_end(0, WAIT).expect("the request ends");
    assert_eq!(end, ua_testkit::provider::RequestEnd::ClientDisconnected);
    run(&mut t, "echo usable");
    t.wait_text("usable");
}

const LONG_COMMAND: &str = r#"
[[turn]]
text = "Sleeping."
tool_calls = [{ name = "shell", input = { command = "echo begun-$((1+1)); sleep 131; echo woke" } }]

[[turn]]
text = "It was interrupted."
"#;

#[test]
fn ctrl_c_while_a_command_runs_interrupts_it_like_the_shell_would() {
    let home = Home::new();
    let server = model(LONG_COMMAND);
    let mut t = start_with(&home, "bash", &server);
    t.send("# sleep\r");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("begun-2");
    crate::proxy::wait_foreground("sleep 131");
    t.send("\x03");
    t.wait_text("It was interrupted.");
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("exit status: 130"), "{results:?}");
    assert!(!results[0].0.contains("woke"), "{results:?}");
}

const BROKEN: &str = r#"
[[turn]]
status = 529
body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
repeat = false
"#;

#[test]
fn a_provider_error_is_one_line_and_the_shell_stays_usable() {
    let home = Home::new();
    let scenario = Scenario::from_toml(BROKEN.replace("repeat = false\n", "").as_str()).unwrap();
    let server = FakeProvider::start(Scenario { repeat: true, ..scenario }).unwrap();
    let mut t = start_with(&home, "bash", &server);
    t.send("# anything\r");
    t.wait_for("error line", |s| s.text().contains("unixagent:") && s.text().to_lowercase().contains("overload"));
    wait_prompt(&t, 2);
    run(&mut t, "echo fine");
    t.wait_text("fine");
}

#[test]
fn secrets_printed_in_the_terminal_are_not_sent() {
    // The model only ever sees command output it asked for; what the user
    // printed before stays on their screen.
    let home = Home::new();
    let server = model("[[turn]]\ntext = \"ok\"\n");
    let mut t = start_with(&home, "bash", &server);
    run(&mut t, "echo AKIAIOSFODNN7EXAMPLE sk-ant-api03-secretsecretsecret");
    t.send("# what did I print?\r");
    t.wait_text("ok");
    let body = String::from_utf8_lossy(&server.requests()[0].body).to_string();
    assert!(!body.contains("AKIAIOSFODNN7EXAMPLE"), "{body}");
    assert!(!body.contains("sk-ant-api03-secretsecretsecret"), "{body}");
}

#[test]
fn the_model_sees_what_the_user_ran_scrubbed_and_the_journal_rebuilds_every_call() {
    let home = Home::new();
    let server = model(RUN_ONE);
    let mut t = start_with(&home, "bash", &server);
    run(&mut t, "echo user-did-$((2+3)); echo token=ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    let n = prompts(&t);
    t.send("# what now\r");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("All done");
    // The turn is over (and journaled) once the prompt is back.
    wait_prompt(&t, n + 1);
    let reqs = server.wait_until(WAIT, |r| r.len() >= 2).unwrap();
    let system = |i: usize| -> String {
        match &reqs[i].json()["system"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
            _ => String::new(),
        }
    };
    let sys = system(0);
    assert!(sys.contains("user-did-5"), "{sys}");
    assert!(sys.contains("exit 0"), "{sys}");
    assert!(!sys.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "{sys}");
    assert!(sys.contains("[REDACTED"), "{sys}");

    // The journal holds every call exactly as sent.
    let sessions = home.path().join(".local/share/unixagent/sessions");
    let dir = only_session(&sessions);
    let contents = ua_store::journal::read_journal(&dir.join("journal.jsonl")).unwrap();
    let entries: Vec<_> = contents.entries().cloned().collect();
    for (i, call) in [(1u32, 1u32), (1, 2)].into_iter().enumerate() {
        let rebuilt = ua_store::rebuild::reconstruct_call(entries.iter(), call.0, call.1).expect("call in journal");
        assert_eq!(rebuilt.system, system(i), "call {call:?}");
        let sent = reqs[i].json()["messages"].as_array().unwrap().len();
        assert_eq!(rebuilt.messages.len(), sent, "call {call:?}");
    }
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap_or_default().to_string())
        .collect();
    for kind in [
        "session_start",
        "user_command",
        "instruction",
        "model_request",
        "model_response",
        "decision",
        "tool_result",
        "turn_end",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in {kinds:?}");
    }
    // The shell knows where its journal is.
    run(&mut t, "echo journal=$UNIXAGENT_JOURNAL");
    t.wait_text(&format!("journal={}", dir.join("journal.jsonl").display()));
}

const RESUMABLE: &str = r#"
[[turn]]
text = "Proposing."
tool_calls = [{ name = "shell", input = { command = "echo resumed-$((1+1))" } }]

[[turn]]
text = "Resumed and ran."
"#;

#[test]
fn esc_gives_the_shell_back_and_a_lone_hash_resumes_the_turn() {
    let home = Home::new();
    let server = model(RESUMABLE);
    let mut t = start_with(&home, "bash", &server);
    t.send("# go\r");
    t.wait_text("[y] run");
    let n = prompts(&t);
    t.send("\x1b");
    t.wait_text("paused");
    wait_prompt(&t, n + 1);
    // The shell is the user's again.
    run(&mut t, "echo meanwhile-$((3*3))");
    t.wait_text("meanwhile-9");
    t.send("#\r");
    t.wait_for("asked again", |s| s.text().matches("[y] run").count() >= 2);
    t.send("y");
    t.wait_text("resumed-2");
    t.wait_text("Resumed and ran.");
    assert_eq!(server.request_count(), 2);
}

const PLAN: &str = r#"
[[turn]]
text = "Three steps."
tool_calls = [
  { name = "shell", input = { command = "echo step-$((0+1)) | tee -a steps.txt" } },
  { name = "shell", input = { command = "echo step-$((1+1)) | tee -a steps.txt" } },
  { name = "shell", input = { command = "echo step-$((2+1)) | tee -a steps.txt" } },
]

[[turn]]
text = "All three ran."
"#;

#[test]
fn plan_mode_shows_the_plan_and_one_approval_runs_it() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"plan\"\n");
    let server = model(PLAN);
    let mut t = start_with(&home, "zsh", &server);
    t.send("# three things\r");
    t.wait_text("plan:");
    t.wait_text("3. echo step-$((2+1)) | tee -a steps.txt");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("All three ran.");
    let screen = t.screen_text();
    for i in 1..=3 {
        assert!(screen.contains(&format!("step-{i}\n")), "{screen}");
    }
    assert_eq!(screen.matches("[y] run").count(), 1, "{screen}");
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.0.contains("exit status: 0")), "{results:?}");
}

const PLAN_WITH_PRIVILEGED: &str = r#"
[[turn]]
text = "Three steps, one privileged."
tool_calls = [
  { name = "shell", input = { command = "echo step-$((0+1)) | tee -a steps.txt" } },
  { name = "shell", input = { command = "taskset -p $$ >/dev/null && echo step-$((1+1))" } },
  { name = "shell", input = { command = "echo step-$((2+1)) | tee -a steps.txt" } },
]

[[turn]]
text = "All three ran."
"#;

/// One `y` approves the plan, but not a privileged command inside it: that
/// one is asked about on its own and needs `yes` typed out; the plan's
/// approval still covers the ordinary command after it.
#[test]
fn plan_mode_asks_about_a_privileged_command_on_its_own() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"plan\"\n[judge]\nmode = \"off\"\n");
    let server = model(PLAN_WITH_PRIVILEGED);
    let mut t = start_with(&home, "bash", &server);
    t.send("# three things\r");
    t.wait_text("plan:");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("type yes to run it");
    t.send("yes\r");
    t.wait_text("All three ran.");
    let screen = t.screen_text();
    for i in 1..=3 {
        assert!(screen.contains(&format!("step-{i}\n")), "{screen}");
    }
    assert_eq!(screen.matches("[y] run").count(), 1, "{screen}");
    assert_eq!(screen.matches("type yes to run it").count(), 1, "{screen}");
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.0.contains("exit status: 0")), "{results:?}");
}

const PRIVILEGED: &str = r#"
[[turn]]
text = "One privileged step."
tool_calls = [{ name = "shell", input = { command = "taskset -p $$ && touch ran.txt" } }]

[[turn]]
text = "Done."
"#;

/// Going back to a privileged question from a steering line keeps it a
/// question that needs `yes` typed out: a lone `y` then Enter skips.
#[test]
fn a_privileged_question_stays_typed_after_steering_is_abandoned() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let server = model(PRIVILEGED);
    let mut t = start_with(&home, "bash", &server);
    t.send("# one thing\r");
    t.wait_text("type yes to run it");
    t.send("#");
    t.send("\x7f");
    t.send("y\r");
    t.wait_text("Done.");
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 1);
    assert!(results[0].0.contains("skipped"), "{results:?}");
    assert!(!home.path().join("ran.txt").exists());
}

const SLEEPER: &str = r#"
[[turn]]
text = "Waiting."
tool_calls = [{ name = "shell", input = { command = "sleep 120" } }]

[[turn]]
text = "It timed out."
"#;

#[test]
fn a_command_past_its_timeout_is_interrupted_and_the_model_is_told() {
    let home = Home::new();
    home.write(
        ".config/unixagent/config.toml",
        "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n[agent]\ncommand_timeout_secs = 1\n",
    );
    let server = model(SLEEPER);
    let mut t = start_with(&home, "bash", &server);
    t.send("# wait\r");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("It timed out.");
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("exit status: 130"), "{results:?}");
    assert!(results[0].0.contains("still running after 1 s"), "{results:?}");
}

#[test]
fn the_session_token_budget_warns_then_stops_new_calls() {
    let home = Home::new();
    home.write(
        ".config/unixagent/config.toml",
        "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n[backend]\nmax_tokens_per_session = 1500\n",
    );
    let server = model(RUN_ONE);
    let mut t = start_with(&home, "bash", &server);
    t.send("# first\r");
    t.wait_text("of its 1500 tokens");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("All done");
    wait_prompt(&t, 2);
    let n = server.request_count();
    t.send("# second\r");
    t.wait_text("max_tokens_per_session of 1500");
    wait_prompt(&t, 3);
    assert_eq!(server.request_count(), n, "no call past the budget");
}

const CHATTY: &str = r#"
repeat = true

# The summary call, answered on the side.
[[side]]
body_contains = "condense the earlier part of a conversation"
turn = { text = "SUMMARY: six rounds of printing x characters." }

[[turn]]
text = "Printing a lot."
tool_calls = [{ name = "shell", input = { command = "head -c 6000 /dev/zero | tr '\\0' x; echo" } }]

[[turn]]
text = "Printed."
"#;

#[test]
fn a_long_session_stays_inside_the_context_window() {
    let home = Home::new();
    home.write(
        ".config/unixagent/config.toml",
        "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n[backend]\ndefault = \"anthropic\"\n[backend.anthropic]\nkind = \"anthropic\"\ncontext_window = 8000\n",
    );
    let server = model(CHATTY);
    let mut t = start_with(&home, "bash", &server);
    for round in 1..=6 {
        let n = prompts(&t);
        t.send(format!("# round {round}\r"));
        t.wait_for("question", |s| s.count(b"[y] run") >= round);
        t.send("y");
        wait_prompt(&t, n + 1);
    }
    let reqs = server.requests();
    let is_summary = |r: &&ua_testkit::provider::RecordedRequest| {
        String::from_utf8_lossy(&r.body).contains("condense the earlier part of a conversation")
    };
    let summaries = reqs.iter().filter(is_summary).count();
    assert!(summaries >= 1, "the conversation outgrew the window and was summarised");
    assert_eq!(reqs.len(), 12 + summaries);
    for (i, r) in reqs.iter().enumerate() {
        // The same estimate unixagent uses (2 tokens per 7 characters),
        // over the whole request as sent: system, messages and tools.
        let tokens = String::from_utf8_lossy(&r.body).chars().count() * 2 / 7;
        assert!(tokens <= 8000, "request {i} is about {tokens} tokens");
    }
    let last = String::from_utf8_lossy(&reqs[reqs.len() - 1].body).to_string();
    assert!(!last.contains("round 1"), "the oldest turn should be summarised, not sent");
    assert!(last.contains("SUMMARY: six rounds"), "the summary takes its place");
    assert!(last.contains("round 6"));
}

const POLICY_MIX: &str = r#"
[[turn]]
text = "Looking, then tidying."
tool_calls = [
  { name = "shell", input = { command = "echo looked-$((2*2))" } },
  { name = "shell", input = { command = "rm -rf /" } },
  { name = "shell", input = { command = "sudo true" } },
]

[[turn]]
text = "Done with the mix."
"#;

#[test]
fn the_policy_runs_read_only_commands_denies_the_deny_list_and_wants_yes_for_sudo() {
    let home = Home::new();
    // confirm_mode is auto: the default policy decides. The judge is off
    // here (it has its own test below).
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let server = model(POLICY_MIX);
    let t =
        home.spawn("bash").env("ANTHROPIC_BASE_URL", server.base_url()).env("ANTHROPIC_API_KEY", "test-key").start();
    wait_prompt(&t, 1);
    let mut t = t;
    t.send("# look around\r");
    // The read-only command ran without a question.
    t.wait_text("looked-4");
    // The deny list stopped `rm -rf /` without asking anyone.
    t.wait_text("denied:");
    // sudo asks for `yes` typed out; `y` and Enter is not enough.
    t.wait_text("type yes to run it");
    t.send("y\r");
    t.wait_text("Done with the mix.");
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].0.contains("looked-4") && !results[0].1, "{results:?}");
    assert!(results[1].0.contains("denied") && results[1].0.contains("deny:"), "{results:?}");
    assert!(results[2].0.contains("skipped"), "{results:?}");

    // Every decision is in the audit log, with who decided.
    let audit = std::fs::read_to_string(home.path().join(".local/share/unixagent/audit.jsonl")).unwrap();
    let records: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let find = |cmd: &str| records.iter().filter(|r| r["command"] == cmd).cloned().collect::<Vec<_>>();
    let echo = find("echo looked-$((2*2))");
    assert!(echo.iter().any(|r| r["approver"] == "policy" && r["decision"] == "allow"), "{echo:?}");
    assert!(echo.iter().any(|r| r["exit_code"] == 0), "{echo:?}");
    let rm = find("rm -rf /");
    assert!(
        rm.iter().any(|r| r["decision"] == "deny" && r["rule"].as_str().unwrap_or("").starts_with("deny:")),
        "{rm:?}"
    );
    let sudo = find("sudo true");
    assert!(sudo.iter().any(|r| r["approver"] == "human"), "{sudo:?}");
}

const JUDGED: &str = r#"
[[turn]]
text = "Deleting the logs."
tool_calls = [{ name = "shell", input = { command = "rm -rf logs" } }]

# The judge's answer: a separate, non-streaming call.
[[turn]]
text = '{"verdict": "unsafe", "reason": "it deletes a whole directory", "safer_alternative": "rm logs/*.log"}'

[[turn]]
text = "Left them alone."
"#;

#[test]
fn the_judge_sees_only_the_command_the_instruction_and_the_cwd_and_its_warning_is_shown() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"warn\"\n");
    std::fs::create_dir_all(home.path().join("logs")).unwrap();
    let server = model(JUDGED);
    let mut t = start_with(&home, "bash", &server);
    run(&mut t, "echo SECRET-SCREEN-TEXT");
    t.send("# clean the logs\r");
    t.wait_text("it deletes a whole directory");
    t.wait_text("[y] run");
    t.send("n");
    t.wait_text("Left them alone.");
    assert!(home.path().join("logs").exists());
    let reqs = server.requests();
    let judge = &reqs[1];
    let body = String::from_utf8_lossy(&judge.body).to_string();
    assert!(body.contains("rm -rf logs") && body.contains("clean the logs"), "{body}");
    assert!(!body.contains("SECRET-SCREEN-TEXT"), "the judge saw terminal output: {body}");
    assert!(judge.json()["tools"].as_array().is_none_or(|t| t.is_empty()), "{body}");
}

#[test]
fn ctrl_c_at_a_question_ends_the_turn_without_running_anything() {
    let home = Home::new();
    let server = model(ASK_THEN_ANSWER);
    let mut t = start_with(&home, "zsh", &server);
    t.send("# make a file\r");
    t.wait_text("[y] run");
    let n = prompts(&t);
    t.send("\x03");
    wait_prompt(&t, n + 1);
    assert!(!home.path().join("should-not-exist").exists());
    assert_eq!(server.request_count(), 1);
    run(&mut t, "echo after-ctrl-c");
    t.wait_text("after-ctrl-c");
}

#[test]
fn no_color_means_no_colour_in_what_the_agent_draws() {
    let home = Home::new();
    let server = model(RUN_ONE);
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    let mut t = home
        .spawn("bash")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("NO_COLOR", "1")
        .start();
    wait_prompt(&t, 1);
    let before = t.raw().len();
    t.send("# colourless\r");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("All done");
    let raw = t.raw();
    let drawn = String::from_utf8_lossy(&raw[before..]).to_string();
    assert!(!drawn.contains("\x1b[1;36m") && !drawn.contains("\x1b[2m"), "{drawn:?}");
}

const HOOKED: &str = r#"
[[turn]]
text = "Two commands."
tool_calls = [
  { name = "shell", input = { command = "echo hooked-$((5+5))" } },
  { name = "shell", input = { command = "echo forbidden-word" } },
]

[[turn]]
text = "The hook had its say."
"#;

#[test]
fn pre_exec_hooks_can_deny_and_post_exec_hooks_hear_the_exit_status() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    // A pre-exec hook that refuses one word, and a post-exec hook that
    // records what it was told.
    home.write(
        ".config/unixagent/hooks/pre-exec-words",
        "#!/bin/sh\nif grep -q forbidden-word; then echo '{\"decision\":\"deny\",\"reason\":\"no forbidden words\"}'; else echo '{\"decision\":\"allow\"}'; fi\n",
    );
    let log = home.path().join("post-exec.log");
    home.write(
        ".config/unixagent/hooks/post-exec-log",
        &format!("#!/bin/sh\ncat >> {}\necho >> {}\n", log.display(), log.display()),
    );
    for hook in ["pre-exec-words", "post-exec-log"] {
        let p = home.path().join(".config/unixagent/hooks").join(hook);
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let server = model(HOOKED);
    let mut t =
        home.spawn("bash").env("ANTHROPIC_BASE_URL", server.base_url()).env("ANTHROPIC_API_KEY", "test-key").start();
    wait_prompt(&t, 1);
    let n = prompts(&t);
    t.send("# run them\r");
    t.wait_text("The hook had its say.");
    wait_prompt(&t, n + 1);
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("hooked-10"), "{results:?}");
    assert!(results[1].0.contains("no forbidden words"), "{results:?}");
    // The post-exec hook runs off the loop; wait for its line.
    let deadline = std::time::Instant::now() + WAIT;
    let logged = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("exit_code") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::yield_now();
    };
    let line: Value = serde_json::from_str(logged.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(line["exit_code"], 0, "{logged}");
    assert!(line.to_string().contains("hooked-$((5+5))"), "{logged}");
}

const NARROWED: &str = r#"
[[turn]]
text = "Echoing."
tool_calls = [{ name = "shell", input = { command = "echo narrowed-$((1+1))" } }]

[[turn]]
text = "The narrower policy said no."
"#;

#[test]
fn a_policy_flag_narrows_the_policy_and_agents_inside_inherit_it() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    home.write("narrow.toml", "[approval.shell]\ndeny_patterns = [\"echo narrowed*\"]\n");
    let narrow = home.path().join("narrow.toml");
    let server = model(NARROWED);
    let mut t = home
        .spawn("bash")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .arg("--policy")
        .arg(&narrow)
        .start();
    wait_prompt(&t, 1);
    let n = prompts(&t);
    t.send("# echo something\r");
    t.wait_text("The narrower policy said no.");
    wait_prompt(&t, n + 1);
    // `echo` is read-only and would run; the narrowing layer forbids it.
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("denied"), "{results:?}");
    // The shell carries the layer to agents started inside it, and
    // `policy explain` there applies it too.
    let canonical = std::fs::canonicalize(&narrow).unwrap();
    run(&mut t, "echo layers=$UNIXAGENT_POLICY_LAYERS");
    t.wait_text(&format!("layers={}", canonical.display()));
    let explain = std::process::Command::new(unixagent())
        .args(["policy", "explain", "echo narrowed-1"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("UNIXAGENT_POLICY_LAYERS", &canonical)
        .output()
        .unwrap();
    assert_eq!(explain.status.code(), Some(2), "{}", String::from_utf8_lossy(&explain.stdout));
}

#[test]
fn a_missing_policy_file_is_an_error_not_a_wider_policy() {
    let home = Home::new();
    let out = std::process::Command::new(unixagent())
        .args(["--policy", "/nonexistent/narrow.toml", "-c", "# anything"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/narrow.toml") && err.contains("--policy"), "{err}");
}
