//! What real model servers answer besides plain text and tool calls (a
//! tool call cut off at the output limit, llama.cpp's and vLLM's "does not
//! fit" errors, an account out of credit, a whole JSON body instead of a
//! stream), played by the fake provider to the real binary in a PTY, with
//! what the server received and what the screen showed both checked.

use std::time::Duration;

use serde_json::Value;
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

use crate::agent::{messages, model, tool_results};
use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

/// Which API the fake server is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// unixagent over bash on a wide terminal (so one-line messages stay on
/// one row), talking to `server` in `wire`. For OpenAI the backend is a
/// self-hosted one named `local` serving a model no table knows, as with
/// llama.cpp or vLLM.
fn start(home: &Home, server: &FakeProvider, wire: Wire) -> Term {
    let mut config = String::from("[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    if wire == Wire::OpenAi {
        config.push_str(&format!(
            "[backend]\ndefault = \"local\"\n[backend.local]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"gemma-3-270m-it\"\n",
            server.openai_base_url()
        ));
    }
    home.write(".config/unixagent/config.toml", &config);
    let t = home
        .spawn("bash")
        .size(200, 50)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .start();
    wait_prompt(&t, 1);
    t
}

/// Request `i`'s body as the server received it.
fn body(server: &FakeProvider, i: usize) -> Value {
    let reqs = server.wait_until(WAIT, |r| r.len() > i).expect("the request arrives");
    reqs[i].json()
}

/// The text of the last message of a request, in either wire format.
fn last_text(body: &Value) -> String {
    let Some(last) = body["messages"].as_array().and_then(|m| m.last()) else { return String::new() };
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

const CUT_OFF: &str = r#"
[[turn]]
text = "Writing the notes."
tool_calls = [{ name = "shell", input = { command = "printf '%s\\n' one two three four five six seven > notes.txt" } }]
cut_input_at = 30

[[turn]]
text = "Shorter this time."
"#;

#[test]
fn a_tool_call_cut_off_at_the_token_limit_is_dropped_and_the_model_asked_for_a_shorter_one() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let home = Home::new();
        let server = model(CUT_OFF);
        let mut t = start(&home, &server, wire);
        t.send("# write my notes\r");
        t.wait_text("Shorter this time.");
        wait_prompt(&t, 2);
        let screen = t.screen_text();
        assert!(screen.contains("cut off at the token limit in the middle of a command"), "{wire:?}:\n{screen}");
        assert!(!screen.contains("malformed"), "{wire:?}:\n{screen}");
        assert!(!screen.contains("[y] run"), "{wire:?}: nothing was proposed:\n{screen}");
        assert!(!home.path().join("notes.txt").exists());

        // The second call told the model why nothing ran, and carries no
        // half-formed call for it to be answered.
        let second = body(&server, 1);
        let note = last_text(&second);
        assert!(note.contains("cut off at the output token limit") && note.contains("shorter"), "{wire:?}: {note}");
        let sent = second["messages"].to_string();
        assert!(!sent.contains("tool_use") && !sent.contains("tool_calls"), "{wire:?}: {sent}");
        assert!(sent.contains("Writing the notes."), "{wire:?}: the answer's text is kept: {sent}");
        assert_eq!(server.request_count(), 2);
    }
}

/// llama.cpp's server, started with `-c 4096`, refusing a prompt.
const LLAMA_OVERFLOW: &str = r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}"#;

#[test]
fn llama_cpp_context_overflow_learns_the_window_and_fits_the_next_call_into_it() {
    let home = Home::new();
    let scenario = Scenario::new()
        .turn(Turn::error(400, LLAMA_OVERFLOW))
        .turn(Turn::text("Fits now."))
        .turn(Turn::text("Still fits."));
    let server = FakeProvider::start(scenario).expect("fake provider");
    let mut t = start(&home, &server, Wire::OpenAi);
    t.send("# summarise that\r");
    t.wait_text("Fits now.");
    t.wait_text("the server's context window is 4096 tokens, not the 8192 assumed");
    wait_prompt(&t, 2);

    // An unknown model is assumed to have 8192 tokens: a quarter of that,
    // not 8192, is asked for as output.
    let first = body(&server, 0);
    assert_eq!(first["max_tokens"], 2048);
    // The retry fits the learned window: a quarter for the answer, the
    // prompt (estimated generously) in the rest.
    let second = body(&server, 1);
    assert_eq!(second["max_tokens"], 1024);
    let estimate = second.to_string().chars().count() * 2 / 7;
    assert!(estimate <= 4096 - 1024, "about {estimate} tokens");
    assert_eq!(server.request_count(), 2);

    // The window stays learned for the rest of the session.
    t.send("# and again\r");
    t.wait_text("Still fits.");
    assert_eq!(body(&server, 2)["max_tokens"], 1024);
}

/// vLLM when the prompt fits but not with the output asked for.
const VLLM_OUTPUT: &str = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5048 tokens (3000 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;

#[test]
fn output_that_does_not_fit_is_asked_again_with_the_max_tokens_that_fits() {
    let home = Home::new();
    let scenario = Scenario::new()
        .turn(Turn::error(400, VLLM_OUTPUT))
        .turn(Turn::text("Answer fits."))
        .turn(Turn::text("Next one."));
    let server = FakeProvider::start(scenario).expect("fake provider");
    let mut t = start(&home, &server, Wire::OpenAi);
    t.send("# explain\r");
    t.wait_text("Answer fits.");
    let screen = t.screen_text();
    assert!(screen.contains("asking again with max_tokens = 1096"), "{screen}");
    assert!(!screen.contains("unixagent:"), "no error shown:\n{screen}");
    assert_eq!(body(&server, 0)["max_tokens"], 2048);
    let second = body(&server, 1);
    assert_eq!(second["max_tokens"], 1096, "4096 less the 3000 the messages took");
    let conversation = |b: &Value| b["messages"].as_array().map(|m| m[1..].to_vec()).unwrap_or_default();
    assert_eq!(conversation(&second), conversation(&body(&server, 0)), "the same conversation");
    wait_prompt(&t, 2);

    // Later calls keep a quarter of the stated window for the answer.
    t.send("# more\r");
    t.wait_text("Next one.");
    assert_eq!(body(&server, 2)["max_tokens"], 1024);
}

#[test]
fn an_account_out_of_credit_is_said_with_the_servers_words_and_not_retried() {
    let quota = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let credit = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CTm4ZvtWfcB2e3p6wLkQ1"}"#;
    for (wire, status, body, words) in [
        (Wire::OpenAi, 429, quota, "You exceeded your current quota, please check your plan"),
        (Wire::Anthropic, 400, credit, "Your credit balance is too low to access the Anthropic API"),
    ] {
        let home = Home::new();
        // Were it taken for a rate limit, the zero wait would retry at once.
        let error = Turn::error(status, body).header("retry-after", "0");
        let scenario = Scenario { repeat: true, ..Scenario::new().turn(error) };
        let server = FakeProvider::start(scenario).expect("fake provider");
        let mut t = start(&home, &server, wire);
        t.send("# hello\r");
        t.wait_for("the error line", |s| {
            let text = s.text();
            text.contains("out of credit or quota") && text.contains(words)
        });
        wait_prompt(&t, 2);
        let screen = t.screen_text();
        let line = screen.lines().find(|l| l.contains("out of credit")).unwrap_or_default();
        assert!(line.starts_with("unixagent: backend '"), "{wire:?}: {line}");
        assert!(line.ends_with("or pick another backend with --backend"), "{wire:?}: {line}");
        assert!(!screen.contains("rate limiting"), "{wire:?}:\n{screen}");
        assert_eq!(server.request_count(), 1, "{wire:?}: retried");
    }
}

const WHOLE: &str = r#"
[[turn]]
whole = true
text = "Counting."
tool_calls = [{ name = "shell", input = { command = "echo whole-$((20+22))" } }]
usage = { input = 900, output = 30 }

[[turn]]
whole = true
text = "It printed whole-42."
"#;

#[test]
fn a_whole_json_answer_to_a_streaming_request_is_taken_as_the_answer() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let home = Home::new();
        let server = model(WHOLE);
        let mut t = start(&home, &server, wire);
        t.send("# count\r");
        t.wait_text("Counting.");
        t.wait_text("[y] run");
        t.send("y");
        t.wait_text("It printed whole-42.");
        wait_prompt(&t, 2);
        assert_eq!(body(&server, 0)["stream"], true, "{wire:?}: a stream was asked for");
        let results = match wire {
            Wire::Anthropic => tool_results(&messages(&server, 1)),
            Wire::OpenAi => messages(&server, 1)
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| (m["content"].as_str().unwrap_or_default().to_string(), false))
                .collect(),
        };
        assert_eq!(results.len(), 1, "{wire:?}: {results:?}");
        assert!(results[0].0.contains("whole-42") && results[0].0.contains("exit status: 0"), "{wire:?}: {results:?}");
        let screen = t.screen_text();
        assert!(!screen.contains("cut off") && !screen.contains("unixagent:"), "{wire:?}:\n{screen}");
        run(&mut t, "echo after-whole");
        t.wait_text("after-whole");
    }
}

#[test]
fn unixagent_model_picks_the_model_and_the_flag_beats_it() {
    for (flag, want) in [(None, "model-from-env"), (Some("model-from-flag"), "model-from-flag")] {
        let home = Home::new();
        let server = model("repeat = true\n[[turn]]\ntext = \"ok-model\"\n");
        home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
        let mut spawn = home
            .spawn("bash")
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("OPENAI_API_KEY", "")
            .env("UNIXAGENT_MODEL", "model-from-env");
        if let Some(m) = flag {
            spawn = spawn.arg("--model").arg(m);
        }
        let mut t = spawn.start();
        wait_prompt(&t, 1);
        t.send("# which model\r");
        t.wait_text("ok-model");
        assert_eq!(body(&server, 0)["model"], want);
    }
}
