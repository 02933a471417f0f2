//! unixagent's own command line, as the gate reads it.
//!
//! The agent runs `unixagent` through its shell for three different
//! things, and each is gated for what it is:
//!
//! - a child agent (`unixagent -c '# …'`, `--json`, `--continue`): the
//!   `spawn_agent` action, which the depth rule and the user's policies
//!   govern; the child gates its own commands and runs in its own sandbox;
//! - a shell command (`unixagent -c 'STRING'` without `#` runs `$SHELL -c
//!   STRING`, and `unixagent sandbox -- CMD` runs CMD): walked as the code
//!   it runs, like `sh -c` and any wrapper;
//! - a tool that reads or writes unixagent's own files (`board`,
//!   `sessions`, `policy explain`, `--version`…): rated by what it does. The
//!   task board is the one place of unixagent's data an agent command may
//!   write, and agents and their children share it through `unixagent
//!   board`, so its reads run without a question.

use crate::risk::Risk;

/// What one invocation of unixagent does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Starts an agent session.
    Agent,
    /// Runs this text as shell code (`-c` without `#`).
    Shell(String),
    /// Runs this command in the kernel sandbox (`sandbox -- CMD…`).
    Sandboxed(Vec<String>),
    /// A subcommand or informational flag: its risk and why.
    Tool(Risk, &'static str),
}

/// Options of the top-level command that take a value.
const TAKES_VALUE: &[&str] = &["--backend", "--model", "--policy", "--config", "--shell", "--resume", "--since"];

/// Reads unixagent's arguments (after the program name).
pub fn invocation(args: &[&str]) -> Invocation {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        match a {
            "--" => return Invocation::Agent,
            "-c" | "--command" => {
                let text = args.get(i + 1).copied().unwrap_or("");
                return if text.trim_start().starts_with('#') {
                    Invocation::Agent
                } else {
                    Invocation::Shell(text.to_string())
                };
            }
            "--version" | "-V" | "--help" | "-h" => {
                return Invocation::Tool(Risk::ReadOnly, "prints its version or help");
            }
            "--usage" => return Invocation::Tool(Risk::ReadOnly, "adds up what sessions used"),
            _ if TAKES_VALUE.contains(&a) => i += 1,
            _ if a.starts_with('-') => {
                if let Some(text) = a.strip_prefix("--command=") {
                    return invocation(&["-c", text]);
                }
            }
            sub => return subcommand(sub, &args[i + 1..]),
        }
        i += 1;
    }
    Invocation::Agent
}

/// True when these arguments start a child agent and set nothing else:
/// `-c '# …'` (or `--command`), with at most `--json` and `-v` before it,
/// and nothing after. Such a child runs with its parent's configuration,
/// shell, backend and policy layers; any other option (`--config`,
/// `--shell`, `--backend`, a word after the instruction…) could change
/// what it runs or where it reads its settings, and is not plain.
pub fn plain_child(args: &[&str]) -> bool {
    let Some((instruction, options)) = args.split_last() else { return false };
    let Some((dash_c, flags)) = options.split_last() else { return false };
    instruction.trim_start().starts_with('#')
        && matches!(*dash_c, "-c" | "--command")
        && flags.iter().all(|f| matches!(*f, "--json" | "-v" | "--verbose"))
}

fn subcommand(sub: &str, rest: &[&str]) -> Invocation {
    let first = rest.iter().copied().find(|a| !a.starts_with('-'));
    match sub {
        "board" => match first {
            None | Some("show") => Invocation::Tool(Risk::ReadOnly, "shows the task board"),
            Some("plan") if !rest.iter().any(|a| matches!(*a, "-" | "--edit")) => {
                Invocation::Tool(Risk::ReadOnly, "shows the task board's plan")
            }
            Some(_) => Invocation::Tool(Risk::Write, "changes the task board"),
        },
        "sessions" => match first {
            Some("prune" | "reindex") => Invocation::Tool(Risk::Destructive, "removes or rewrites session records"),
            _ => Invocation::Tool(Risk::ReadOnly, "reads session records"),
        },
        "policy" => Invocation::Tool(Risk::ReadOnly, "explains or checks the policy"),
        "sandbox" => match rest.iter().position(|a| *a == "--") {
            Some(at) => Invocation::Sandboxed(rest[at + 1..].iter().map(|a| (*a).to_string()).collect()),
            None => Invocation::Tool(Risk::ReadOnly, "shows what the sandbox enforces"),
        },
        "doctor" | "completions" | "traces" => Invocation::Tool(Risk::ReadOnly, "reports on unixagent itself"),
        // Words after the options go to the inner shell (`unixagent
        // ARGS…` starts a session with them).
        _ => Invocation::Agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_child_sets_nothing_but_its_instruction() {
        assert!(plain_child(&["-c", "# check the logs"]));
        assert!(plain_child(&["--json", "-v", "--command", "  # x"]));
        for args in [
            &["-c", "rm -rf ~"][..],
            &["-c", "# x", "--config", "/tmp/evil.toml"],
            &["--config=/tmp/evil.toml", "-c", "# x"],
            &["--shell", "/tmp/evil", "-c", "# x"],
            &["--backend", "openai", "-c", "# x"],
            &["--json"],
            &["-c"],
            &[],
        ] {
            assert!(!plain_child(args), "{args:?}");
        }
    }

    fn read(line: &str) -> Invocation {
        invocation(&line.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn agents_shell_code_and_tools_are_told_apart() {
        assert_eq!(invocation(&["-c", "# check the logs"]), Invocation::Agent);
        assert_eq!(invocation(&["--json", "-c", "  #x"]), Invocation::Agent);
        assert_eq!(read("--json"), Invocation::Agent);
        assert_eq!(read("--continue --any"), Invocation::Agent);
        assert_eq!(read(""), Invocation::Agent);
        assert_eq!(invocation(&["-c", "rm -rf ~"]), Invocation::Shell("rm -rf ~".into()));
        assert_eq!(invocation(&["--command=ls"]), Invocation::Shell("ls".into()));
        assert_eq!(invocation(&["--shell", "/bin/sh", "-c", "ls"]), Invocation::Shell("ls".into()));
        assert_eq!(read("sandbox -- make test"), Invocation::Sandboxed(vec!["make".into(), "test".into()]));
        assert!(matches!(read("board"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("board --json show 3"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("board plan"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("board plan -"), Invocation::Tool(Risk::Write, _)));
        assert!(matches!(read("board claim"), Invocation::Tool(Risk::Write, _)));
        assert!(matches!(read("board move 3 done"), Invocation::Tool(Risk::Write, _)));
        assert!(matches!(read("sessions list --json"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("sessions prune --older-than 0s"), Invocation::Tool(Risk::Destructive, _)));
        assert!(matches!(read("--usage --since 7d"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("--model m --version"), Invocation::Tool(Risk::ReadOnly, _)));
        assert!(matches!(read("sandbox status"), Invocation::Tool(Risk::ReadOnly, _)));
        // A value that looks like a subcommand is the option's.
        assert_eq!(read("--model board -c #x"), Invocation::Agent);
    }
}
