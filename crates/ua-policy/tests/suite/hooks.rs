//! Hooks as real scripts: answers, rewrites, failures, deadlines.

use super::Env;
use std::time::Duration;
use ua_policy::gate::{DecidedBy, Outcome};
use ua_policy::grants::Grants;
use ua_policy::hooks::{self, Event, Failure, Limits, Reply};

fn quick() -> Limits {
    Limits { timeout: Duration::from_millis(400), kill_grace: Duration::from_millis(300), output_cap: 4096 }
}

fn run(env: &Env, body: &str) -> Result<Reply, Failure> {
    run_with(env, body, &quick())
}

fn run_with(env: &Env, body: &str, limits: &Limits) -> Result<Reply, Failure> {
    let hook = env.script("hooks/pre-exec-test", body);
    let input = serde_json::json!({"command": "ls"});
    hooks::run(&hook, Event::PreExec, &input, limits)
}

#[test]
fn the_hook_reads_the_proposed_action_on_stdin() {
    let env = Env::new();
    env.script(
        "hooks/pre-exec-deploy",
        r#"input=$(cat)
case "$input" in
  *'"command":"make deploy"'*) echo '{"decision":"deny","reason":"deploys are manual"}' ;;
  *) echo '{"decision":"allow"}' ;;
esac"#,
    );
    let gate = env.gate();
    let d = gate.decide(&env.request("make deploy"), &Grants::new());
    assert_eq!(d.outcome, Outcome::Deny);
    assert_eq!(d.reason, "deploys are manual");
    assert_eq!(d.decided_by, DecidedBy::Hook { hook: "pre-exec-deploy".into() });
    // "allow" is no objection: the command continues to the policy.
    let d = gate.decide(&env.request("make test"), &Grants::new());
    assert_eq!(d.outcome, Outcome::Ask);
    assert_eq!(d.hooks[0].result, Ok(Reply::Allow { reason: None }));
    let d = gate.decide(&env.request("ls"), &Grants::new());
    assert_eq!(d.outcome, Outcome::Allow);
}

#[test]
fn the_hook_sees_cwd_session_and_parts() {
    let env = Env::new();
    let seen = env.home.join("seen.json");
    env.script("hooks/pre-exec-record", &format!("cat > '{}'; echo '{{\"decision\":\"allow\"}}'", seen.display()));
    env.gate().decide(&env.request("sudo rm -rf build"), &Grants::new());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(v["event"], "pre-exec");
    assert_eq!(v["command"], "sudo rm -rf build");
    assert_eq!(v["cwd"], env.cwd());
    assert_eq!(v["session"], "test-session");
    assert_eq!(v["risk"], "privileged");
    assert_eq!(v["parts"][0]["program"], "rm");
    assert_eq!(v["parts"][0]["wrappers"][0], "sudo");
}

#[test]
fn a_modified_command_goes_through_the_whole_pipeline_again() {
    let env = Env::new();
    env.script(
        "hooks/pre-exec-rewrite",
        r#"input=$(cat)
case "$input" in
  *'"command":"rm -rf build"'*) echo '{"decision":"modify","command":"ls build","reason":"look first"}' ;;
  *'"command":"clean"'*) echo '{"decision":"modify","command":"rm -rf /"}' ;;
  *) echo '{"decision":"allow"}' ;;
esac"#,
    );
    let gate = env.gate();
    let d = gate.decide(&env.request("rm -rf build"), &Grants::new());
    assert_eq!(d.command, "ls build");
    assert_eq!(d.outcome, Outcome::Allow);
    assert_eq!(d.rewrites.len(), 1);
    assert_eq!(d.rewrites[0].from, "rm -rf build");
    assert_eq!(d.rewrites[0].reason.as_deref(), Some("look first"));
    assert_eq!(d.hooks.len(), 2, "the hook saw the rewritten command too");
    // A rewrite into a denied command is denied by the floor.
    let d = gate.decide(&env.request("clean"), &Grants::new());
    assert_eq!(d.command, "rm -rf /");
    assert_eq!(d.outcome, Outcome::Deny);
    assert!(matches!(d.decided_by, DecidedBy::DenyList { .. }));
}

#[test]
fn rewrites_are_bounded() {
    let env = Env::new();
    env.script(
        "hooks/pre-exec-grow",
        r#"echo "{\"decision\":\"modify\",\"command\":\"ls $(od -An -N2 -tu2 /dev/urandom | tr -d ' ')\"}""#,
    );
    let mut cfg = env.cfg.clone();
    cfg.max_rewrites = 2;
    let d = ua_policy::gate::Gate::load(&cfg).unwrap().decide(&env.request("ls"), &Grants::new());
    assert_eq!(d.outcome, Outcome::Deny, "{d:?}");
    assert_eq!(d.rewrites.len(), 2);
    assert!(d.reason.contains("more than 2 times"), "{}", d.reason);
}

#[test]
fn a_hanging_hook_is_terminated_and_denies() {
    let env = Env::new();
    // A long grace: the hook dies at SIGTERM, so this costs nothing, and a
    // loaded machine cannot turn it into a SIGKILL.
    let limits = Limits { kill_grace: Duration::from_secs(10), ..quick() };
    assert_eq!(run_with(&env, "sleep 30", &limits), Err(Failure::Timeout("SIGTERM after 400ms".into())));
}

#[test]
fn a_hook_that_ignores_sigterm_is_killed() {
    let env = Env::new();
    let r = run(&env, "trap '' TERM\nwhile :; do sleep 1; done");
    assert_eq!(r, Err(Failure::Timeout("SIGKILL after 400ms".into())));
}

#[test]
fn a_hanging_hook_denies_through_the_gate() {
    let env = Env::new();
    env.script("hooks/pre-exec-hang", "sleep 30");
    let mut cfg = env.cfg.clone();
    cfg.hooks.limits = quick();
    let d = ua_policy::gate::Gate::load(&cfg).unwrap().decide(&env.request("ls"), &Grants::new());
    assert_eq!(d.outcome, Outcome::Deny);
    assert!(d.reason.contains("missed its deadline"), "{}", d.reason);
}

#[test]
fn a_crashing_hook_denies_and_shows_its_stderr() {
    let env = Env::new();
    let r = run(&env, "echo 'cannot reach the ticket system' >&2; echo '{\"decision\":\"allow\"}'; exit 3");
    assert_eq!(r, Err(Failure::Crashed("exit status 3 (cannot reach the ticket system)".into())));
    let r = run(&env, "kill -SEGV $$");
    assert_eq!(r, Err(Failure::Crashed("signal 11".into())));
}

#[test]
fn unreadable_or_oversized_output_denies() {
    let env = Env::new();
    for body in ["echo yes", "true", "echo '{\"decision\":\"allow\"'", "echo '{\"decision\":\"sure\"}'"] {
        assert!(matches!(run(&env, body), Err(Failure::Unreadable(_))), "{body}");
    }
    let r = run(&env, "head -c 100000 /dev/zero | tr '\\0' x");
    assert_eq!(r, Err(Failure::Unreadable("more than 4096 bytes of output".into())));
}

#[test]
fn a_hook_that_does_not_read_its_input_still_works() {
    let env = Env::new();
    let hook = env.script("hooks/pre-exec-quiet", "echo '{\"decision\":\"deny\",\"reason\":\"no\"}'");
    let big = serde_json::json!({"command": "x".repeat(1 << 20)});
    let r = hooks::run(&hook, Event::PreExec, &big, &quick());
    assert_eq!(r, Ok(Reply::Deny { reason: Some("no".into()) }));
}

#[test]
fn a_background_child_holding_the_output_cannot_stall_the_gate() {
    let env = Env::new();
    let r = run(&env, "sleep 30 &\necho '{\"decision\":\"allow\"}'");
    assert_eq!(r, Ok(Reply::Allow { reason: None }));
}

#[test]
fn missing_or_non_executable_hooks_fail_to_load() {
    let env = Env::new();
    env.config_file("hooks/pre-exec.sh", "#!/bin/sh\necho '{\"decision\":\"allow\"}'\n");
    let err = ua_policy::gate::Gate::load(&env.cfg).unwrap_err().to_string();
    assert!(err.contains("pre-exec.sh") && err.contains("chmod +x"), "{err}");
    let env = Env::new();
    let mut cfg = env.cfg.clone();
    cfg.hooks.pre_exec.push(env.home.join("nope"));
    assert!(ua_policy::gate::Gate::load(&cfg).is_err());
    // Files in hooks/ with other names are not hooks.
    env.config_file("hooks/README", "notes");
    assert!(env.gate().hooks().pre_exec.is_empty());
}

#[test]
fn post_exec_hooks_see_the_exit_code() {
    let env = Env::new();
    let seen = env.home.join("post.json");
    env.script("hooks/post-exec-log", &format!("cat > '{}'; echo '{{\"decision\":\"allow\"}}'", seen.display()));
    let gate = env.gate();
    let req = env.request("make test");
    let d = gate.decide(&req, &Grants::new());
    let runs = gate.post_exec(&req, &d, Some(7), Duration::from_millis(1234));
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].result, Ok(Reply::Allow { reason: None }));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(v["event"], "post-exec");
    assert_eq!(v["exit_code"], 7);
    assert_eq!(v["duration_ms"], 1234);
}
