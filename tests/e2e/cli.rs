//! The command line and the config file.

use std::process::Command;

use crate::support::*;

fn ua(home: &Home) -> Command {
    let mut c = Command::new(unixagent());
    c.env("HOME", home.path()).env("XDG_CONFIG_HOME", home.path().join(".config")).env_remove("UNIXAGENT_CONFIG");
    c
}

#[test]
fn help_lists_every_option_and_version_prints() {
    let home = Home::new();
    let out = ua(&home).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--command",
        "--json",
        "--backend",
        "--model",
        "--policy",
        "--config",
        "--trace",
        "--shell",
        "--login",
        "--version",
    ] {
        assert!(help.contains(opt), "{opt} missing from help:\n{help}");
    }
    let out = ua(&home).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(version.starts_with(&format!("unixagent {}", env!("CARGO_PKG_VERSION"))), "{version}");
}

#[test]
fn trace_prints_the_sessions_trace_id_when_it_starts() {
    let home = Home::new();
    let out = ua(&home)
        .args(["--trace", "--shell", "/bin/bash", "-c", "# hello"])
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .env_remove("TRACEPARENT")
        .env_remove("UA_TRACE_ID")
        .env_remove("UNIXAGENT_SESSION")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("unixagent: trace ")).unwrap_or_else(|| panic!("{err}"));
    let id = line.trim_start_matches("unixagent: trace ");
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
    // It is the trace the session recorded.
    let sessions = home.path().join(".local/share/unixagent/sessions");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(only_session(&sessions).join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["trace_id"], id);
    // A continued trace keeps its id.
    let out = ua(&home)
        .args(["--trace", "--shell", "/bin/bash", "-c", "# again"])
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .env_remove("UNIXAGENT_SESSION")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unixagent: trace 4bf92f3577b34da6a3ce929d0e0e4736\n"));
    // A plain `-c` runs the shell, not a session: there is no trace to print.
    let out = ua(&home).args(["--trace", "--shell", "/bin/sh", "-c", "echo ran"]).output().unwrap();
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"ran\n"[..], &b""[..]));
}

#[test]
fn policy_explain_decides_at_the_depth_of_the_session_it_runs_in() {
    let home = Home::new();
    let explain = |depth: &str| {
        let mut c = ua(&home);
        c.args(["policy", "explain", "--json", "unixagent -c '# look around'"]).current_dir(home.path());
        c.env("UA_TRACE_DEPTH", depth);
        let out = c.output().unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    // Four deep, the built-in policy forbids starting another agent.
    let deep = explain("4");
    assert_eq!(deep["outcome"], "deny", "{deep}");
    assert!(deep.to_string().contains("builtin.spawn-depth"), "{deep}");
    assert_ne!(explain("0")["outcome"], "deny");
}

#[test]
fn json_with_a_shell_command_says_what_to_do() {
    let home = Home::new();
    let out = ua(&home).args(["--json", "--shell", "/bin/sh", "-c", "echo ran"]).output().unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--json runs instructions") && err.contains("without --json"), "{err}");
}

#[test]
fn policy_explain_exits_by_decision_and_check_validates_the_files() {
    let home = Home::new();
    let explain = |cmd: &str, json: bool| {
        let mut c = ua(&home);
        c.args(["policy", "explain"]).current_dir(home.path());
        if json {
            c.arg("--json");
        }
        c.arg(cmd).output().unwrap()
    };
    let out = explain("ls -la", false);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("risk: read_only"));
    let out = explain("git push origin main", false);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let out = explain("rm -rf /", true);
    assert_eq!(out.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "deny");
    assert_eq!(json["decided_by"]["rule"], "rm-root");

    let out = ua(&home).args(["policy", "check"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A broken policy file is named with its line, and explain refuses to guess.
    home.write(".config/unixagent/policy.cedar", "permit(principal, action, resource)\nwhen { nonsense };\n");
    let out = ua(&home).args(["policy", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("policy.cedar"), "{err}");
    let out = explain("ls", false);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn bad_config_is_reported_with_its_location_and_the_shell_still_runs() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[shell]\nintegration = maybe\n");
    let out = ua(&home).args(["-c", "echo still-works"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let path = home.path().join(".config/unixagent/config.toml");
    assert!(err.contains(&format!("config file {}, line 2, column 15", path.display())), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "still-works\n");
}

#[test]
fn unknown_config_keys_warn_and_config_is_found_by_env_and_flag() {
    let home = Home::new();
    home.write("elsewhere.toml", "[shell]\ncommand = \"/bin/sh\"\nintegraton = true\n");
    let path = home.path().join("elsewhere.toml");
    let out = ua(&home).env("UNIXAGENT_CONFIG", &path).args(["-c", "echo $0"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown key `shell.integraton`"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "/bin/sh\n");
    let out = ua(&home).arg("--config").arg(&path).args(["-c", "echo $0"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "/bin/sh\n");
    let out = ua(&home).args(["--config", "/nonexistent.toml", "-c", "true"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read config file /nonexistent.toml"));
}

#[test]
fn settings_that_would_be_ignored_are_named_with_their_line() {
    let home = Home::new();
    home.write(
        ".config/unixagent/config.toml",
        "[policy]\ndefault = \"allow\"\n\n[backend]\nmax_tokens_per_session = 500\n\n[backend.local]\nkind = \"openai\"\nmodle = \"qwen\"\n",
    );
    home.write(
        ".config/unixagent/policy.toml",
        "[approval]\ndefault = \"ask\"\n\n[approval.audio]\nmicrophone = \"ask\"\n",
    );
    let config = home.path().join(".config/unixagent/config.toml");
    let out = ua(&home).args(["-c", "echo ran"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}, line 1: `[policy]` is not read from config.toml", config.display())), "{err}");
    assert!(
        err.contains(&format!("config file {}, line 9, column 1: the [backend] section is invalid", config.display())),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    let out = ua(&home).args(["policy", "check"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let policy = home.path().join(".config/unixagent/policy.toml");
    assert!(said.contains(&format!("{}, line 4: [approval.audio] has no effect", policy.display())), "{said}");
}

/// `unixagent policy explain … | head -1` and the like: the reader goes
/// before unixagent has written everything. A printing subcommand then ends
/// as `cat` would (SIGPIPE), never with a panic and its backtrace.
#[test]
fn printing_subcommands_end_quietly_when_their_reader_is_gone() {
    use std::os::unix::process::ExitStatusExt;
    let home = Home::new();
    for args in [
        &["policy", "explain", "--json", "ls -la"][..],
        &["completions", "bash"],
        &["sessions", "list", "--json"],
        &["board", "--json"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = ua(&home).args(args).stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        // 101 is what a panic exits with.
        assert_ne!(out.status.code(), Some(101), "{args:?}: {stderr}");
        if matches!(args[0], "policy" | "completions") {
            // These always print: the closed pipe ends them.
            assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?} {stderr}", out.status);
        }
    }
}
