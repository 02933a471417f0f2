//! An agent command's own environment, carried on the line that is typed.
//!
//! The shell's environment is fixed when it starts, but each agent
//! command must run with its own `TRACEPARENT` (its `execute_tool` span)
//! so that a child unixagent, or any traced program, attaches to it. The
//! only way into a live interactive shell is the line typed into it, so
//! the line carries the variables, for that command only, and in a form
//! that parses the command exactly as if it had been typed alone:
//!
//! | shell | typed |
//! |---|---|
//! | bash | `TRACEPARENT=… UA_SPAN_ID=… eval 'COMMAND'` |
//! | zsh | `() { local -x TRACEPARENT=… UA_SPAN_ID=…; COMMAND⏎}` |
//! | fish | `begin; set -lx TRACEPARENT …; …; COMMAND⏎end` |
//!
//! In each, `cd`, variables and functions the command sets stay set in
//! the shell, as they would typed; its exit status is the line's; the
//! variables are gone afterwards. (bash exports a prefix assignment to the
//! commands `eval` runs, zsh does not, hence its anonymous function; the
//! newline before the closing word keeps a trailing comment in the command
//! from swallowing it.) The values are ids this process made, hex digits
//! and a tool call id checked to be a plain token, so they need no
//! quoting; only the command is quoted, for bash.
//!
//! The gate, the journal, the audit log and the person all see the
//! command as the model proposed it: the wrapping happens after the
//! verdict, at the moment of typing, and the typed line's echo is never
//! shown (see DESIGN.md, "Traces").
//!
//! ```
//! use ua_term::command_env::with_env;
//! use ua_term::integration::ShellKind;
//!
//! let env = [("UNIXAGENT_COMMAND", "toolu_1".to_string())];
//! assert_eq!(with_env(ShellKind::Bash, "echo 'hi'", &env), r#"UNIXAGENT_COMMAND=toolu_1 eval 'echo '\''hi'\'''"#);
//! assert_eq!(with_env(ShellKind::Zsh, "ls", &env), "() { local -x UNIXAGENT_COMMAND=toolu_1; ls\n}");
//! ```

use crate::integration::ShellKind;

/// The line to type for `command` in `shell` so that it runs with `env`.
/// Shells without integration (which never run agent commands) get the
/// command unchanged, and so does an empty environment.
pub fn with_env(shell: ShellKind, command: &str, env: &[(&str, String)]) -> String {
    let env: Vec<&(&str, String)> = env.iter().filter(|(k, v)| name_ok(k) && value_ok(v)).collect();
    if env.is_empty() {
        return command.to_string();
    }
    match shell {
        ShellKind::Bash => {
            let mut line = String::with_capacity(command.len() + 200);
            for (k, v) in &env {
                line.push_str(k);
                line.push('=');
                line.push_str(v);
                line.push(' ');
            }
            line.push_str("eval ");
            line.push_str(&posix_quote(command));
            line
        }
        ShellKind::Zsh => {
            let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("() {{ local -x {}; {command}\n}}", vars.join(" "))
        }
        ShellKind::Fish => {
            let vars: String = env.iter().map(|(k, v)| format!("set -lx {k} {v}; ")).collect();
            format!("begin; {vars}{command}\nend")
        }
        ShellKind::Other => command.to_string(),
    }
}

/// Single quotes, each `'` inside closed, escaped and reopened.
fn posix_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn name_ok(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Values are ids: nothing a shell would read as syntax.
fn value_ok(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(&'static str, String)> {
        vec![
            ("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            ("UA_SPAN_ID", "00f067aa0ba902b7".into()),
            ("UNIXAGENT_COMMAND", "toolu_01".into()),
        ]
    }

    fn shell_path(name: &str) -> std::path::PathBuf {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{name} is not installed: scripts/test-deps.sh installs it"))
    }

    /// Runs `script` in `shell` (as `-c`, no start-up files), where the
    /// line under test stands between other lines as the shell would read
    /// it typed; returns stdout.
    fn run(shell: &str, script: &str) -> String {
        let mut cmd = std::process::Command::new(shell_path(shell));
        match shell {
            "bash" => cmd.args(["--norc", "--noprofile", "-c", script]),
            "zsh" => cmd.args(["-f", "-c", script]),
            _ => cmd.args(["--no-config", "-c", script]),
        };
        let out = cmd.env_remove("TRACEPARENT").env_remove("UA_SPAN_ID").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    const COMMANDS: &[&str] = &[
        // A child process sees the values; the shell keeps what the command set.
        "sh -c 'echo child=$TRACEPARENT/$UNIXAGENT_COMMAND'; cd /tmp; v=it\\'s; false",
        // A trailing comment, quotes of both kinds, and a second line.
        "cd /tmp && v=\"it's\" # a comment with a ' quote\nsh -c 'echo child=$TRACEPARENT/$UNIXAGENT_COMMAND'; false",
    ];

    #[test]
    fn the_command_runs_with_the_variables_and_the_shell_keeps_its_effects() {
        for shell in ["bash", "zsh", "fish"] {
            let kind = ShellKind::detect(std::path::Path::new(shell));
            for command in COMMANDS {
                // fish spells an assignment with `set`.
                let command = if shell == "fish" {
                    command.replace("v=it\\'s", "set v \"it's\"").replace("v=\"it's\"", "set v \"it's\"")
                } else {
                    (*command).to_string()
                };
                let line = with_env(kind, &command, &env());
                let status = if shell == "fish" { "$status" } else { "$?" };
                let script = format!("{line}\necho \"status={status} pwd=$PWD v=$v tp=[$TRACEPARENT]\"");
                let out = run(shell, &script);
                assert!(
                    out.contains("child=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01/toolu_01"),
                    "{shell}: {line:?} printed {out:?}"
                );
                assert!(out.contains("status=1 pwd=/tmp v=it's tp=[]"), "{shell}: {line:?} printed {out:?}");
            }
        }
    }

    #[test]
    fn the_values_need_no_quoting_and_unsafe_ones_are_left_out() {
        let line = with_env(ShellKind::Bash, "echo 'a'", &env());
        assert_eq!(
            line,
            "TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 UA_SPAN_ID=00f067aa0ba902b7 \
             UNIXAGENT_COMMAND=toolu_01 eval 'echo '\\''a'\\'''"
        );
        let bad = [("UNIXAGENT_COMMAND", "x; rm -rf ~".to_string()), ("lower", "1".to_string())];
        assert_eq!(with_env(ShellKind::Zsh, "ls", &bad), "ls");
        assert_eq!(with_env(ShellKind::Other, "ls", &env()), "ls");
    }

    #[test]
    fn a_syntax_error_stays_a_syntax_error() {
        for shell in ["bash", "zsh", "fish"] {
            let kind = ShellKind::detect(std::path::Path::new(shell));
            let line = with_env(kind, "if true; then", &env());
            let status = if shell == "fish" { "$status" } else { "$?" };
            let out = run(shell, &format!("{line}\necho after={status}"));
            assert!(!out.contains("after=0"), "{shell}: {out:?}");
        }
    }
}
