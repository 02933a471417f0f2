//! The command line (design §13).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum, ValueHint};
use clap_complete::engine::ArgValueCompleter;

/// An agent that lives in your terminal.
///
/// unixagent runs your shell in a pseudo-terminal and stays out of the way.
/// A line typed at the prompt that starts with `#` becomes an instruction
/// for the agent; everything else goes to the shell as always.
#[derive(Debug, Parser)]
#[command(name = "unixagent", version = env!("UA_VERSION"), args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Run STRING and exit. A STRING starting with `#` is a one-shot
    /// instruction; anything else runs exactly as `$SHELL -c STRING` would.
    #[arg(short = 'c', long = "command", value_name = "STRING", allow_hyphen_values = true)]
    pub command: Option<String>,

    /// Start the shell as a login shell (also implied when unixagent is
    /// started with a `-` in front of its name, as login programs do).
    #[arg(short = 'l', long)]
    pub login: bool,

    /// The shell to run (default: shell.command in the config, else $SHELL).
    #[arg(long, value_name = "PATH", value_hint = ValueHint::ExecutablePath)]
    pub shell: Option<PathBuf>,

    /// Use this config file [env: UNIXAGENT_CONFIG; default:
    /// $XDG_CONFIG_HOME/unixagent/config.toml].
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub config: Option<PathBuf>,

    /// Batch mode: agent events as NDJSON lines on stdout; instructions,
    /// approvals and shell lines as lines on stdin (see docs/ndjson.md).
    #[arg(long)]
    pub json: bool,

    /// Use this backend instead of the configured default.
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,

    /// Use this model instead of the backend's configured one.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// Narrow the command policy with this file (.cedar or .toml). It can
    /// only take permissions away; agents started inside this session keep
    /// it (through UNIXAGENT_POLICY_LAYERS).
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub policy: Option<PathBuf>,

    /// Start the interactive shell itself inside the kernel sandbox (your
    /// own commands too); also `sandbox.interactive = true` in the config.
    #[arg(long)]
    pub sandbox: bool,

    /// Continue the latest session started in this directory: the shell
    /// starts as usual and the conversation goes on from its journal.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_: bool,

    /// With --continue: the latest session anywhere.
    #[arg(long, requires = "continue_")]
    pub any: bool,

    /// Continue the session with this id (a unique prefix is enough);
    /// without an id, list recent sessions to choose from.
    #[arg(
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = "",
        add = ArgValueCompleter::new(crate::completions::session_ids)
    )]
    pub resume: Option<String>,

    /// Tokens, commands and cost by session and by day, from the session
    /// index (with --json: as JSON).
    #[arg(long)]
    pub usage: bool,

    /// With --usage: only sessions active this recently (`7d`, `12h`, `2w`).
    #[arg(long, value_name = "AGE", requires = "usage")]
    pub since: Option<String>,

    /// Print this session's trace id on stderr when it starts (`unixagent:
    /// trace ID`), for `unixagent traces export --trace ID`.
    #[arg(long)]
    pub trace: bool,

    /// A child agent without a terminal prints everything it does, as a
    /// one-shot does, instead of only its summary line and its answer.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Start the shell with its start-up traced (bash and zsh -x, fish's
    /// fish_trace) and say when shell integration starts working: for
    /// finding out why it does not. Works inside a unixagent session too.
    #[arg(long)]
    pub shell_debug: bool,

    /// Words for the shell: after `-c STRING` they become `$0 $1 …`; for an
    /// interactive session they are passed to the shell (put them after `--`).
    #[arg(value_name = "SHELL_ARGS", trailing_var_arg = true, allow_hyphen_values = true)]
    pub shell_args: Vec<OsString>,

    #[command(subcommand)]
    pub sub: Option<Sub>,
}

#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Inspect and check the command policy.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Past sessions: list, show, export, prune, reindex.
    Sessions {
        #[command(subcommand)]
        action: SessionsAction,
    },
    /// Spans recorded by sessions and their children: `traces export`.
    Traces {
        #[command(subcommand)]
        action: TracesAction,
    },
    /// The task board: plain files per session that the agent, its child
    /// agents and people share (`board` alone shows it).
    Board {
        #[command(subcommand)]
        action: Option<BoardAction>,
        /// Print JSON instead of text (a failure too, on stderr).
        #[arg(long, global = true)]
        json: bool,
        /// The board of this session (an id or a unique prefix) instead of
        /// $UNIXAGENT_BOARD or the latest session in this directory.
        #[arg(long, value_name = "ID", global = true)]
        session: Option<String>,
    },
    /// The kernel sandbox: `sandbox status`, or `sandbox -- COMMAND [ARGS…]`
    /// to run COMMAND under exactly the sandbox agent commands get here.
    Sandbox {
        #[command(subcommand)]
        action: Option<SandboxAction>,
        /// The command to run sandboxed, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
    /// Check this machine for what keeps unixagent from working: the shells
    /// and their start-up files, the kernel sandbox, the model backends,
    /// the config, policy and data files, the login shell. Exits 1 when
    /// something is a problem.
    Doctor {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Do not contact the model backends.
        #[arg(long)]
        offline: bool,
    },
    /// Print the completion script for SHELL (install it where the shell
    /// looks, or source it from the shell's start-up file).
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the manual page (roff), as installed as unixagent.1.
    #[command(name = "__man", hide = true)]
    Man,
}

/// The shells `unixagent completions` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// This directory's sessions, newest first.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Sessions of every directory.
        #[arg(long)]
        all: bool,
    },
    /// A session's conversation as a person reads it.
    Show {
        /// The session id, or a unique prefix of it.
        #[arg(add = ArgValueCompleter::new(crate::completions::session_ids))]
        id: String,
    },
    /// A session's conversation as Markdown or its journal as JSONL.
    Export {
        /// The session id, or a unique prefix of it.
        #[arg(add = ArgValueCompleter::new(crate::completions::session_ids))]
        id: String,
        #[arg(long, value_parser = ["md", "jsonl"], default_value = "md")]
        format: String,
    },
    /// Delete sessions last active longer ago than AGE (`30d`, `12h`).
    Prune {
        #[arg(long, value_name = "AGE")]
        older_than: String,
    },
    /// Rebuild the session index from the journals.
    Reindex,
}

#[derive(Debug, Subcommand)]
pub enum TracesAction {
    /// Spans as OTLP/JSON (`ExportTraceServiceRequest` lines), for an
    /// OpenTelemetry Collector's file receiver, Jaeger or Tempo.
    Export {
        /// Only this trace (the id `--trace` prints).
        #[arg(long, value_name = "ID")]
        trace: Option<String>,
        /// Only spans that ended this recently (`7d`, `12h`, `30m`).
        #[arg(long, value_name = "AGE")]
        since: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum BoardAction {
    /// Add a task to todo; prints its id.
    Add {
        title: String,
        /// The task's prompt and acceptance criteria (Markdown); `-` reads
        /// it from stdin.
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        body: Option<String>,
        /// A task that must be done before this one can be claimed
        /// (repeatable).
        #[arg(long = "depends-on", value_name = "ID")]
        depends_on: Vec<u32>,
        /// A tag (repeatable).
        #[arg(long = "tag", value_name = "T")]
        tags: Vec<String>,
    },
    /// Claim task ID, or the first ready one, and print it; exits 1 when
    /// none is ready.
    Claim { id: Option<u32> },
    /// Move task ID to STATE (todo, doing, blocked, review, done);
    /// `blocked` needs --reason.
    Move {
        id: u32,
        state: String,
        /// Why it is blocked.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Print task ID.
    Show { id: u32 },
    /// Print PLAN.md; `-` replaces it with stdin, --edit opens it in
    /// $EDITOR.
    Plan {
        #[arg(long, conflicts_with = "stdin")]
        edit: bool,
        /// `-`: read the new plan from stdin.
        #[arg(value_name = "-", value_parser = ["-"])]
        stdin: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// What the kernel supports, what the policy compiles to, and which
    /// enforcement is in force.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyAction {
    /// Show how a command would be parsed, classified and decided.
    Explain {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The command, quoted as one argument.
        #[arg(value_hint = ValueHint::CommandString)]
        command: String,
    },
    /// Validate the policy files.
    Check,
}

/// The command line as clap sees it, for completion and the manual page.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap()
    }

    #[test]
    fn dash_c_like_a_shell() {
        let c = parse(&["unixagent", "-c", "echo $0 $1", "zero", "one"]);
        assert_eq!(c.command.as_deref(), Some("echo $0 $1"));
        assert_eq!(c.shell_args, vec![OsString::from("zero"), "one".into()]);
        let c = parse(&["unixagent", "-lc", "-x"]);
        assert!(c.login);
        assert_eq!(c.command.as_deref(), Some("-x"));
    }

    #[test]
    fn words_after_double_dash_go_to_the_shell() {
        let c = parse(&["unixagent", "--shell", "/bin/zsh", "--", "-f", "--no-rcs"]);
        assert_eq!(c.shell_args, vec![OsString::from("-f"), "--no-rcs".into()]);
    }

    #[test]
    fn policy_subcommands() {
        let c = parse(&["unixagent", "policy", "explain", "--json", "rm -rf /"]);
        assert!(matches!(c.sub, Some(Sub::Policy { action: PolicyAction::Explain { json: true, .. } })));
    }

    #[test]
    fn sandbox_subcommands() {
        let c = parse(&["unixagent", "sandbox", "--", "ls", "-l"]);
        assert!(matches!(&c.sub, Some(Sub::Sandbox { action: None, command }) if command == &["ls", "-l"]));
        let c = parse(&["unixagent", "sandbox", "status", "--json"]);
        assert!(matches!(c.sub, Some(Sub::Sandbox { action: Some(SandboxAction::Status { json: true }), .. })));
    }

    #[test]
    fn traces_export_and_verbose() {
        let c = parse(&["unixagent", "traces", "export", "--trace", "abc", "--since", "1h"]);
        let Some(Sub::Traces { action: TracesAction::Export { trace, since } }) = c.sub else { panic!("{c:?}") };
        assert_eq!((trace.as_deref(), since.as_deref()), (Some("abc"), Some("1h")));
        let c = parse(&["unixagent", "-v", "--trace", "-c", "# x"]);
        assert!(c.verbose && c.trace);
    }

    #[test]
    fn board_subcommands() {
        let c = parse(&["unixagent", "board", "--json"]);
        assert!(matches!(c.sub, Some(Sub::Board { action: None, json: true, session: None })));
        let c = parse(&["unixagent", "board", "add", "Fix it", "--depends-on", "1", "--depends-on", "2", "--json"]);
        assert!(
            matches!(&c.sub, Some(Sub::Board { action: Some(BoardAction::Add { depends_on, .. }), json: true, .. })
            if depends_on == &[1, 2])
        );
        let c = parse(&["unixagent", "board", "--session", "2026", "plan", "-"]);
        assert!(matches!(
            &c.sub,
            Some(Sub::Board { action: Some(BoardAction::Plan { edit: false, stdin: Some(_) }), session: Some(_), .. })
        ));
        assert!(Cli::try_parse_from(["unixagent", "board", "plan", "x"]).is_err());
        assert!(Cli::try_parse_from(["unixagent", "board", "plan", "--edit", "-"]).is_err());
    }
}
