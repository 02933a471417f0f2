//! `unixagent acp` driven by a client nobody here wrote: the reference
//! Python SDK (`agent-client-protocol` on PyPI, installed by
//! `scripts/test-deps.sh`), in `fixtures/acp/client.py`. Each test runs the
//! real binary with a real shell against the fake model, and asserts on
//! what the client saw and on what the model server received.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use ua_testkit::provider::{FakeProvider, RequestEnd};

use crate::agent::{messages, model, tool_results};
use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

/// Where `scripts/test-deps.sh` puts the SDK.
fn sdk() -> PathBuf {
    std::env::var_os("UNIXAGENT_TEST_ACP_PYTHON")
        .map_or_else(|| PathBuf::from("/usr/local/lib/unixagent-test/acp-python"), PathBuf::from)
}

/// Runs the client's `scenario` in `home` against `server`; returns what
/// it saw.
fn client(home: &Home, server: &FakeProvider, config: &str, scenario: &str, args: &[&str]) -> Value {
    // Not where unixagent looks by default: the sessions get it only if
    // `unixagent acp` hands its --config on to them.
    home.write("acp-config.toml", &format!("[judge]\nmode = \"off\"\n{config}"));
    let options = serde_json::json!(["--config", home.path().join("acp-config.toml"), "--shell", "/bin/bash"]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/fixtures/acp/client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(unixagent())
        .arg(scenario)
        .args(args)
        .env("PYTHONPATH", sdk())
        .env("UA_ACP_ARGS", options.to_string())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("SHELL", "/bin/bash")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("UNIXAGENT_SESSION")
        .current_dir(home.path())
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the ACP client failed (scripts/test-deps.sh installs its SDK into {}): {stderr}",
        sdk().display()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn updates<'a>(seen: &'a Value, kind: &str) -> Vec<&'a Value> {
    seen["updates"].as_array().into_iter().flatten().filter(|u| u["sessionUpdate"] == kind).collect()
}

fn text(seen: &Value) -> String {
    updates(seen, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect()
}

const ONE_COMMAND: &str = r#"
[[turn]]
text = "Looking."
tool_calls = [{ name = "shell", input = { command = "echo acp-$((40+2))" } }]

[[turn]]
text = "It printed acp-42."
"#;

#[test]
fn a_prompt_streams_text_and_its_command_runs_as_an_execute_tool_call() {
    let home = Home::new();
    let server = model(ONE_COMMAND);
    let seen = client(&home, &server, "", "prompt", &[]);
    let init = &seen["initialize"];
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    assert!(init["agentCapabilities"]["sessionCapabilities"]["resume"].is_object(), "{init}");
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    let call = updates(&seen, "tool_call");
    assert_eq!(call.len(), 1, "{seen:#}");
    assert_eq!((call[0]["kind"].as_str(), call[0]["title"].as_str()), (Some("execute"), Some("echo acp-$((40+2))")));
    assert_eq!(call[0]["rawInput"]["risk"], "read_only", "{}", call[0]);
    assert_eq!(call[0]["rawInput"]["decision"], "allow", "{}", call[0]);
    let progress: Vec<&str> = updates(&seen, "tool_call_update").iter().filter_map(|u| u["status"].as_str()).collect();
    assert_eq!((progress.first(), progress.last()), (Some(&"in_progress"), Some(&"completed")), "{progress:?}");
    // The output streamed while the command ran, before its result.
    let live = updates(&seen, "tool_call_update")
        .into_iter()
        .find(|u| u["status"] == "in_progress" && u["content"].to_string().contains("acp-42"));
    assert!(live.is_some(), "{seen:#}");
    let done = updates(&seen, "tool_call_update").pop().cloned().unwrap_or_default();
    assert!(done["content"].to_string().contains("acp-42"), "{done}");
    assert!(done["content"].to_string().contains("exit code 0"), "{done}");
    assert!(text(&seen).contains("It printed acp-42."), "{seen:#}");
    // The model got the instruction, and then the command's real output.
    assert!(messages(&server, 0).iter().any(|m| m.to_string().contains("what does it print")));
    assert!(tool_results(&messages(&server, 1))[0].0.contains("acp-42"));
    // The session is a real one: journaled and in the index.
    let id = seen["session_id"].as_str().unwrap_or_default();
    assert!(home.path().join(".local/share/unixagent/sessions").join(id).join("journal.jsonl").exists(), "{id}");
}

const TWO_ASKING: &str = r#"
[[turn]]
text = "Two files."
tool_calls = [
  { name = "shell", input = { command = "touch allowed.txt" } },
  { name = "shell", input = { command = "touch refused.txt" } },
]

[[turn]]
text = "One made."
"#;

#[test]
fn permission_requests_answered_allow_once_and_reject() {
    let home = Home::new();
    let server = model(TWO_ASKING);
    let seen = client(&home, &server, "", "approve", &["allow_once", "reject"]);
    let asked = seen["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 2, "{seen:#}");
    let options: Vec<&str> =
        asked[0]["options"].as_array().into_iter().flatten().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject"]);
    assert!(home.path().join("allowed.txt").exists());
    assert!(!home.path().join("refused.txt").exists());
    let ends: Vec<&str> = updates(&seen, "tool_call_update")
        .iter()
        .filter_map(|u| u["status"].as_str())
        .filter(|s| *s != "in_progress")
        .collect();
    assert_eq!(ends, ["completed", "failed"]);
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    let results = tool_results(&messages(&server, 1));
    assert!(results[1].0.contains("denied"), "{results:?}");
    // Answered questions are not withdrawn.
    assert!(!seen["wire"].as_array().unwrap().iter().any(|m| m.get("cancel").is_some()), "{seen:#}");
}

const SAME_TWICE: &str = r#"
[[turn]]
text = "Twice."
tool_calls = [
  { name = "shell", input = { command = "touch again.txt" } },
  { name = "shell", input = { command = "touch again.txt" } },
]

[[turn]]
text = "Done."
"#;

#[test]
fn allow_always_is_the_session_grant_and_the_same_command_is_not_asked_again() {
    let home = Home::new();
    let server = model(SAME_TWICE);
    let seen = client(&home, &server, "", "approve", &["allow_always"]);
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(1), "{seen:#}");
    let done = updates(&seen, "tool_call_update").iter().filter(|u| u["status"] == "completed").count();
    assert_eq!(done, 2, "{seen:#}");
    assert_eq!(tool_results(&messages(&server, 1)).len(), 2);
}

#[test]
fn an_unanswered_permission_request_is_a_denial_after_the_approval_timeout() {
    let home = Home::new();
    let server = model(ONE_COMMAND.replace("echo acp-$((40+2))", "touch late.txt").as_str());
    let seen = client(&home, &server, "[batch]\napproval_timeout_secs = 1\n", "approve", &["never"]);
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(1), "{seen:#}");
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    assert!(!home.path().join("late.txt").exists());
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("no approval arrived"), "{results:?}");
    // The question the session stopped waiting for is withdrawn.
    let wire = seen["wire"].as_array().unwrap();
    let asked: Vec<&Value> =
        wire.iter().filter(|m| m["request"] == "session/request_permission").map(|m| &m["id"]).collect();
    let withdrawn: Vec<&Value> = wire.iter().filter_map(|m| m.get("cancel")).collect();
    assert_eq!(asked.len(), 1, "{wire:#?}");
    assert_eq!(withdrawn, asked, "{wire:#?}");
}

/// An answer streamed slowly enough to be cut short.
const COUNTING: &str = r#"
[[turn]]
text = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten "]
delay_ms = 300
"#;

#[test]
fn a_cancel_mid_stream_ends_the_prompt_as_cancelled_and_drops_the_model_call() {
    let home = Home::new();
    let server = model(COUNTING);
    let seen = client(&home, &server, "", "cancel", &[]);
    assert_eq!(seen["prompts"], serde_json::json!(["cancelled"]));
    assert!(!text(&seen).contains("ten"), "{seen:#}");
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ClientDisconnected));
}

/// `session/close` (advertised): the turn is cancelled, the session ends
/// its run before the close is answered (its journal and the index hear
/// the end), and the session is gone for the client.
#[test]
fn a_closed_session_cancels_its_turn_ends_its_run_and_is_gone() {
    let home = Home::new();
    let server = model(COUNTING);
    let seen = client(&home, &server, "", "close", &[]);
    assert!(seen["initialize"]["agentCapabilities"]["sessionCapabilities"]["close"].is_object(), "{seen:#}");
    assert_eq!(seen["closed"], true, "{seen:#}");
    assert_eq!(seen["prompts"], serde_json::json!(["cancelled"]));
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ClientDisconnected));
    let errors = seen["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{seen:#}");
    assert!(errors[0]["message"].as_str().unwrap_or_default().contains("session"), "{seen:#}");
    // Ended before the close was answered: the journal says so.
    let id = seen["session_id"].as_str().unwrap();
    let journal =
        std::fs::read_to_string(home.path().join(".local/share/unixagent/sessions").join(id).join("journal.jsonl"))
            .unwrap();
    assert!(journal.lines().last().unwrap_or_default().contains("\"type\":\"session_end\""), "{journal}");
}

#[test]
fn load_replays_an_earlier_session_and_goes_on_with_its_conversation() {
    let home = Home::new();
    let first = model(ONE_COMMAND);
    let earlier = client(&home, &first, "", "prompt", &[]);
    let id = earlier["session_id"].as_str().unwrap_or_default().to_string();
    let second = model("[[turn]]\ntext = \"Still here.\"\n");
    let seen = client(&home, &second, "", "load", &[&id]);
    let replayed = seen["replayed"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = replayed.iter().filter_map(|u| u["sessionUpdate"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"user_message_chunk"), "{kinds:?}");
    assert_eq!(replayed[0]["content"]["text"], "what does it print");
    let call = replayed.iter().find(|u| u["sessionUpdate"] == "tool_call").cloned().unwrap_or_default();
    assert_eq!((call["title"].as_str(), call["status"].as_str()), (Some("echo acp-$((40+2))"), Some("completed")));
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    assert!(text(&seen).contains("Still here."), "{seen:#}");
    // The same session goes on: the model sees the earlier conversation.
    let sent = messages(&second, 0).iter().map(Value::to_string).collect::<String>();
    assert!(sent.contains("acp-42") && sent.contains("and now?"), "{sent}");
}

#[test]
fn resume_goes_on_with_an_earlier_session_without_replaying_it() {
    let home = Home::new();
    let first = model(ONE_COMMAND);
    let earlier = client(&home, &first, "", "prompt", &[]);
    let id = earlier["session_id"].as_str().unwrap_or_default().to_string();
    let second = model("[[turn]]\ntext = \"Still here.\"\n");
    let seen = client(&home, &second, "", "resume", &[&id]);
    // Nothing of the history comes back (the session's own "continuing"
    // notice may arrive as the resume is answered).
    let history = seen["replayed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["sessionUpdate"] != "agent_thought_chunk")
        .count();
    assert_eq!(history, 0, "{seen:#}");
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    let sent = messages(&second, 0).iter().map(Value::to_string).collect::<String>();
    assert!(sent.contains("acp-42") && sent.contains("and now?"), "{sent}");
}

#[test]
fn a_privileged_command_says_so_and_is_never_offered_for_the_session() {
    let home = Home::new();
    let server = model(ONE_COMMAND.replace("echo acp-$((40+2))", "sudo touch /etc/acp-test").as_str());
    let seen = client(&home, &server, "", "approve", &["reject"]);
    let asked = seen["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 1, "{seen:#}");
    assert!(asked[0]["title"].as_str().is_some_and(|t| t.starts_with("Privileged command")), "{}", asked[0]);
    let options: Vec<&str> =
        asked[0]["options"].as_array().into_iter().flatten().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(options, ["allow_once", "reject"]);
    assert!(tool_results(&messages(&server, 1))[0].0.contains("denied"));
}

#[test]
fn a_malformed_message_gets_a_json_rpc_error_and_the_agent_goes_on() {
    let home = Home::new();
    let server = model("[[turn]]\ntext = \"Fine.\"\n");
    let seen = client(&home, &server, "", "malformed", &[]);
    let codes: Vec<i64> = seen["errors"].as_array().into_iter().flatten().filter_map(|e| e["code"].as_i64()).collect();
    assert_eq!(codes, [-32601, -32002], "{seen:#}");
    assert_eq!(seen["prompts"], serde_json::json!(["end_turn"]));
    assert!(text(&seen).contains("Fine."), "{seen:#}");
}
