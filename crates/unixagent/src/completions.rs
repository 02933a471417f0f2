//! Shell completion: `unixagent completions bash|zsh|fish` prints a small
//! script that, at each Tab, runs `UNIXAGENT_COMPLETE=SHELL unixagent --
//! WORDS…` and offers what that prints. The candidates come from the same
//! clap definition the command line is parsed with (subcommands, flags,
//! values), plus session ids read from the session index, which no script
//! written ahead of time could know.
//!
//! The scripts call `unixagent` by name, so they work wherever it is
//! installed on PATH; a script from an older unixagent keeps working after
//! an upgrade, since the words it passes are the command line itself.

use std::ffi::OsStr;
use std::io::Write as _;

use clap_complete::engine::CompletionCandidate;
use clap_complete::env::EnvCompleter as _;

use crate::cli::CompletionShell;

/// The variable that makes unixagent complete instead of run. Its own
/// name, not clap's default `COMPLETE`, so a variable another program
/// uses can never turn a login shell into a completion engine.
pub const VAR: &str = "UNIXAGENT_COMPLETE";

/// Answers a completion request and exits, when the completion script
/// started this process; returns otherwise.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(crate::cli::command)
        .var(VAR)
        .bin("unixagent")
        .completer("unixagent")
        .complete();
}

/// zsh autoloads `_unixagent` from `site-functions` on the first Tab: the
/// file's body runs as that function. The registration only defines the
/// completer and binds it, so without this tail the first Tab would offer
/// nothing; sourced from a start-up file instead, `funcstack` is empty and
/// the tail does nothing.
const ZSH_AUTOLOAD_TAIL: &str = r#"
if [[ "${funcstack[1]}" == "_unixagent" ]]; then
    _clap_dynamic_completer_unixagent "$@"
fi
"#;

/// `unixagent completions SHELL`: the script on stdout.
pub fn print(shell: CompletionShell) -> i32 {
    let mut script = Vec::new();
    let written = match shell {
        CompletionShell::Bash => {
            clap_complete::env::Bash.write_registration(VAR, "unixagent", "unixagent", "unixagent", &mut script)
        }
        CompletionShell::Zsh => {
            clap_complete::env::Zsh.write_registration(VAR, "unixagent", "unixagent", "unixagent", &mut script)
        }
        CompletionShell::Fish => {
            clap_complete::env::Fish.write_registration(VAR, "unixagent", "unixagent", "unixagent", &mut script)
        }
    };
    if shell == CompletionShell::Zsh {
        script.extend_from_slice(ZSH_AUTOLOAD_TAIL.as_bytes());
    }
    match written.and_then(|()| std::io::stdout().write_all(&script)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("unixagent: could not write the completion script: {e}");
            1
        }
    }
}

/// Session ids for `--resume`, `sessions show` and `sessions export`:
/// those starting with what is typed, newest first, each described by its
/// first instruction (or its directory). Reads the index only; a data
/// directory without one offers nothing rather than rebuilding it at a Tab.
pub fn session_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Ok(data) = ua_store::session::data_dir() else { return Vec::new() };
    if !data.join("sessions").join(ua_store::index::INDEX_FILE).is_file() {
        return Vec::new();
    }
    let Ok(summaries) = ua_store::index::Index::open(&data).and_then(|i| i.load()) else { return Vec::new() };
    summaries
        .sessions()
        .iter()
        .filter(|s| s.id.starts_with(typed.as_ref()))
        .enumerate()
        .map(|(order, s)| {
            let about = s.first_instruction.as_deref().filter(|t| !t.is_empty()).unwrap_or(&s.cwd);
            let about: String = about.lines().next().unwrap_or("").chars().take(60).collect();
            CompletionCandidate::new(&s.id).help(Some(about.into())).display_order(Some(order))
        })
        .collect()
}
