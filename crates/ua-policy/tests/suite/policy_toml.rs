//! policy.toml translated to Cedar and evaluated through the gate.

use super::Env;
use ua_policy::gate::{DecidedBy, Outcome};
use ua_policy::grants::Grants;

/// The design's policy.toml example.
const DESIGN_EXAMPLE: &str = include_str!("../fixtures/design-policy.toml");

fn decide(env: &Env, cmd: &str) -> ua_policy::gate::Decision {
    env.gate().decide(&env.request(cmd), &Grants::new())
}

fn rule(d: &ua_policy::gate::Decision) -> String {
    d.decided_by.rule()
}

#[test]
fn the_design_example_translates_and_validates() {
    let env = Env::new();
    env.config_file("policy.toml", DESIGN_EXAMPLE);
    let gate = env.gate();
    assert!(gate.engine().layers()[0].len() > 15);
}

#[test]
fn shell_mode_allow_with_deny_patterns() {
    let env = Env::new();
    env.config_file("policy.toml", DESIGN_EXAMPLE);
    // Writes inside the cwd: shell allowed, write permitted by $CWD/**.
    let d = decide(&env, "touch notes.txt");
    assert_eq!(d.outcome, Outcome::Allow, "{d:?}");
    // Outside the cwd the write is not permitted: default ask.
    let d = decide(&env, "touch /tmp/notes.txt");
    assert_eq!(d.outcome, Outcome::Ask);
    assert!(
        matches!(&d.decided_by, DecidedBy::Mode { request, .. } if request == "write /tmp/notes.txt"),
        "{:?}",
        d.decided_by
    );
    // A deny pattern matches the invocation, wrappers included.
    let d = decide(&env, "sudo ls /root");
    assert_eq!(d.outcome, Outcome::Deny);
    assert_eq!(rule(&d), "cedar:toml.shell.deny.1");
    assert_eq!(d.reason, "[approval.shell] deny_patterns: sudo *");
    let d = decide(&env, "chmod 777 build");
    assert_eq!(rule(&d), "cedar:toml.shell.deny.2");
}

#[test]
fn filesystem_deny_globs_forbid_reads_and_writes() {
    let env = Env::new();
    env.config_file("policy.toml", DESIGN_EXAMPLE);
    let d = decide(&env, "cat ~/secret.txt");
    assert_eq!(d.outcome, Outcome::Deny);
    assert_eq!(rule(&d), "cedar:toml.filesystem.deny.2");
    let d = decide(&env, "cp ../report.pdf ~/.gnupg/");
    assert_eq!(d.outcome, Outcome::Deny);
}

#[test]
fn network_allow_hosts_with_mode_deny() {
    let env = Env::new();
    env.config_file("policy.toml", DESIGN_EXAMPLE);
    assert_eq!(decide(&env, "curl -s https://api.github.com/repos").outcome, Outcome::Allow);
    assert_eq!(decide(&env, "curl -s https://build.internal.corp/x").outcome, Outcome::Allow);
    let d = decide(&env, "curl -s https://evil.example/x");
    assert_eq!(d.outcome, Outcome::Deny);
    assert_eq!(rule(&d), "mode:deny");
    // A host we cannot name is not on the list either.
    assert_eq!(decide(&env, "curl -s $URL").outcome, Outcome::Deny);
}

#[test]
fn default_allow_and_deny() {
    let env = Env::new();
    env.config_file("policy.toml", "[approval]\ndefault = \"allow\"\n");
    assert_eq!(decide(&env, "touch /tmp/x").outcome, Outcome::Allow);
    env.config_file("policy.toml", "[approval]\ndefault = \"deny\"\n");
    assert_eq!(decide(&env, "touch /tmp/x").outcome, Outcome::Deny);
    // Read-only commands are still permitted by the built-in policy.
    assert_eq!(decide(&env, "ls").outcome, Outcome::Allow);
}

#[test]
fn allow_patterns_permit_matching_commands_only() {
    let env = Env::new();
    env.config_file(
        "policy.toml",
        "[approval.shell]\nmode = \"allow\"\nallow_patterns = [\"cargo *\", \"make test\"]\n",
    );
    assert_eq!(decide(&env, "cargo build --release").outcome, Outcome::Allow);
    assert_eq!(decide(&env, "make test").outcome, Outcome::Allow);
    assert_eq!(decide(&env, "make install").outcome, Outcome::Ask);
}

#[test]
fn bad_toml_names_the_file() {
    let env = Env::new();
    let p = env.config_file("policy.toml", "[approval]\ndefault = \"sometimes\"\n");
    let err = ua_policy::gate::Gate::load(&env.cfg).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:", p.display())), "{err}");
    assert!(err.contains("line 2"), "{err}");
    env.config_file("policy.toml", "[approval.filesystem]\nwrite = [\"build/**\"]\n");
    let err = ua_policy::gate::Gate::load(&env.cfg).unwrap_err().to_string();
    assert!(err.contains("must start with /, ~, $HOME or $CWD"), "{err}");
}
