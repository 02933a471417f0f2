//! The manual page, `unixagent.1`, generated from the clap definition the
//! command line is parsed with, so its options and commands cannot drift
//! from the program's. clap_mangen writes the name, synopsis, description
//! and options; the commands and the sections clap knows nothing about
//! (instructions, files, environment, exit status) are added here.
//!
//! `unixagent __man` prints it; `make man` writes `docs/unixagent.1`,
//! which a test compares with this output.

use clap::Command;
use roff::{Inline, Roff, bold, italic, roman};

/// The page, in roff.
pub fn render() -> Vec<u8> {
    // The page carries the release, not the commit: it would otherwise
    // change with every commit and never match the copy in docs/.
    let cmd = crate::cli::command().version(env!("CARGO_PKG_VERSION")).bin_name("unixagent");
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("unixagent {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    let _ = man.render_options_section(&mut out);
    let mut page = Roff::new();
    commands(&mut page, &cmd);
    prose(&mut page, SECTIONS);
    page.control("SH", ["VERSION"]).text([roman(format!("unixagent {}", env!("CARGO_PKG_VERSION")))]);
    out.extend_from_slice(page.render().as_bytes());
    out
}

/// `unixagent __man`: the page on stdout.
pub fn print() -> i32 {
    use std::io::Write as _;
    match std::io::stdout().write_all(&render()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("unixagent: could not write the manual page: {e}");
            1
        }
    }
}

/// Every visible command, nested ones under their full name, each with
/// its synopsis, what it does and its own options.
fn commands(page: &mut Roff, root: &Command) {
    page.control("SH", ["COMMANDS"]);
    let mut leaves = Vec::new();
    walk(root, "unixagent", &mut leaves);
    for (name, cmd) in leaves {
        page.control("TP", []);
        page.text(synopsis(&name, cmd));
        if let Some(about) = cmd.get_long_about().or_else(|| cmd.get_about()) {
            paragraphs(page, &about.to_string());
        }
        let args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set() && !is_builtin(a)).collect();
        if args.is_empty() {
            continue;
        }
        page.control("RS", []);
        for a in args {
            page.control("TP", []);
            page.text(arg_name(a));
            if let Some(help) = a.get_long_help().or_else(|| a.get_help()) {
                paragraphs(page, &help.to_string());
            }
            let values: Vec<String> =
                a.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_string()).collect();
            if !values.is_empty() {
                page.text([roman(format!("One of: {}.", values.join(", ")))]);
            }
        }
        page.control("RE", []);
    }
}

/// Commands below `cmd` that do something themselves: a command with
/// subcommands is listed only if it also runs without one (`sandbox --`).
fn walk<'a>(cmd: &'a Command, name: &str, out: &mut Vec<(String, &'a Command)>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let full = format!("{name} {}", sub.get_name());
        let runs_alone = !sub.has_subcommands() || sub.get_arguments().any(|a| !is_builtin(a));
        if runs_alone {
            out.push((full.clone(), sub));
        }
        walk(sub, &full, out);
    }
}

/// clap's own `--help` and `--version`.
fn is_builtin(a: &clap::Arg) -> bool {
    matches!(a.get_id().as_str(), "help" | "version")
}

fn synopsis(name: &str, cmd: &Command) -> Vec<Inline> {
    let mut line = vec![bold(name)];
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set() && !is_builtin(a)) {
        line.push(roman(" "));
        let (open, close) = if a.is_required_set() { ("", "") } else { ("[", "]") };
        line.push(roman(open));
        line.extend(arg_name(a));
        line.push(roman(close));
    }
    if cmd.has_subcommands() {
        line.push(roman(" | "));
        line.push(italic("COMMAND"));
    }
    line
}

fn arg_name(a: &clap::Arg) -> Vec<Inline> {
    let value = a.get_value_names().map(|v| v.join(" ")).unwrap_or_else(|| a.get_id().as_str().to_uppercase());
    if a.is_positional() {
        let value = if a.is_last_set() { format!("-- {value}") } else { value };
        return vec![italic(value)];
    }
    let mut out = Vec::new();
    if let Some(s) = a.get_short() {
        out.push(bold(format!("-{s}")));
        out.push(roman(", "));
    }
    if let Some(l) = a.get_long() {
        out.push(bold(format!("--{l}")));
    }
    if a.get_action().takes_values() {
        out.push(roman(" "));
        out.push(italic(value));
    }
    out
}

fn paragraphs(page: &mut Roff, text: &str) {
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            page.control("PP", []);
        }
        page.text([roman(para.split_whitespace().collect::<Vec<_>>().join(" "))]);
    }
}

/// A section clap does not describe: its heading and entries, each a term
/// (in bold, `None` for a plain paragraph) and its text.
type Section = (&'static str, &'static [(Option<&'static str>, &'static str)]);

fn prose(page: &mut Roff, sections: &[Section]) {
    for (heading, entries) in sections {
        page.control("SH", [*heading]);
        for (term, text) in *entries {
            match term {
                Some(t) => {
                    page.control("TP", []);
                    page.text([bold(*t)]);
                }
                None => {
                    page.control("PP", []);
                }
            }
            page.text([roman(*text)]);
        }
    }
}

const SECTIONS: &[Section] = &[
    (
        "INSTRUCTIONS",
        &[
            (
                None,
                "At an empty prompt, a line whose first character is # is an instruction for the agent; every other line goes to the shell unchanged. The # line is edited by unixagent (arrows, Backspace, Ctrl+U, Ctrl+W, Ctrl+A, Ctrl+E, Up and Down for earlier instructions, Ctrl+C to drop it); Enter submits it, and backspacing over the # hands the line back to the shell.",
            ),
            (
                Some("# text"),
                "An instruction: the agent answers, and each command it proposes is shown with its risk and run in your shell once the policy or you allow it.",
            ),
            (Some("\\# text"), "A literal # comment for the shell."),
            (
                Some("## text"),
                "An instruction when shell integration is not working and prompts are guessed (unixagent says so when it starts).",
            ),
            (
                Some("y, a, A, n, e, q"),
                "The answers to a proposed command: run it; run it and this exact command (a) or this program (A) again without asking; skip it; edit it in $VISUAL or $EDITOR; end the turn. Typing # text steers the turn instead, and Esc gives the shell back with the turn paused.",
            ),
            (
                None,
                "While a command runs every byte goes to it: # typed in a heredoc, a REPL, an editor, ssh or a nested shell is never captured.",
            ),
        ],
    ),
    (
        "FILES",
        &[
            (
                Some("$XDG_CONFIG_HOME/unixagent/config.toml"),
                "Settings (default ~/.config/unixagent/config.toml); --config and UNIXAGENT_CONFIG name another file.",
            ),
            (
                Some("$XDG_CONFIG_HOME/unixagent/policy.toml"),
                "The simple policy: default mode, shell allow and deny patterns, filesystem globs, network hosts.",
            ),
            (Some("$XDG_CONFIG_HOME/unixagent/policy.cedar"), "Cedar policies, validated against the shipped schema."),
            (
                Some("$XDG_CONFIG_HOME/unixagent/hooks/"),
                "pre-exec* and post-exec* executables that get each proposed command as JSON on stdin.",
            ),
            (
                Some("$XDG_DATA_HOME/unixagent/sessions/ID/journal.jsonl"),
                "Each session's journal (default under ~/.local/share); sessions/index.jsonl indexes them.",
            ),
            (Some("$XDG_DATA_HOME/unixagent/audit.jsonl"), "Every decision of the safety pipeline, mode 0600."),
            (Some("/etc/shells"), "Lists unixagent when it is registered as a login shell (make install-login-shell)."),
        ],
    ),
    (
        "ENVIRONMENT",
        &[
            (Some("SHELL"), "The shell to run when neither --shell nor shell.command says."),
            (Some("UNIXAGENT_CONFIG"), "The config file to read."),
            (
                Some("UNIXAGENT_BACKEND, UNIXAGENT_MODEL"),
                "The backend and model to use; --backend and --model win over them, and they win over config.toml.",
            ),
            (Some("ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL"), "The Anthropic key and endpoint, used without any config."),
            (Some("OPENAI_API_KEY, OPENAI_BASE_URL"), "The key and endpoint of OpenAI or a compatible server."),
            (Some("XDG_CONFIG_HOME, XDG_DATA_HOME"), "Where the config and the data directory are."),
            (Some("VISUAL, EDITOR"), "The editor for editing a proposed command."),
            (
                Some("UNIXAGENT_SESSION, UNIXAGENT_PID, UNIXAGENT_JOURNAL"),
                "Set for the shell inside a session: its id, unixagent's process id and the journal's path. A unixagent started where UNIXAGENT_SESSION is set starts the plain shell instead of a second session.",
            ),
            (
                Some("UNIXAGENT_POLICY_LAYERS"),
                "The --policy files a session narrows its policy with, inherited by agents started inside it.",
            ),
            (
                Some("UA_TRACE_ID, UA_TRACE_PARENT"),
                "The trace a session belongs to and the session that started it, kept when inherited (also over ssh).",
            ),
            (
                Some("UNIXAGENT_COMPLETE"),
                "Set by the completion scripts: unixagent prints completions instead of running.",
            ),
        ],
    ),
    (
        "EXIT STATUS",
        &[
            (
                None,
                "An interactive session exits with the shell's status; -c STRING runs the shell itself, so its status is the shell's.",
            ),
            (
                Some("-c '# instruction'"),
                "The status of the last command the agent ran (0 if none), non-zero if the turn failed, 130 if it was stopped.",
            ),
            (
                Some("1"),
                "unixagent itself failed (one line on stderr says why); doctor found a problem; policy check found an invalid file.",
            ),
            (Some("2"), "The command line is invalid, or asks for something not built yet."),
            (
                Some("policy explain"),
                "0 when the command would run, 1 when it would ask, 2 when it is denied, 3 when the policy does not load.",
            ),
            (Some("125"), "The sandbox cannot be applied, so the command did not run (sandbox --, batch runs)."),
            (Some("126, 127"), "sandbox -- could not run the command, or did not find it."),
        ],
    ),
    (
        "SEE ALSO",
        &[(
            None,
            "bash(1), zsh(1), fish(1), chsh(1), shells(5). unixagent doctor says what keeps unixagent from working on this machine.",
        )],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_command_and_option_is_on_the_page() {
        let page = String::from_utf8(render()).unwrap();
        for name in ["doctor", "completions", "policy explain", "policy check", "sessions show", "sandbox status"] {
            assert!(page.contains(&format!("unixagent {name}")), "{name} missing");
        }
        for flag in ["\\-\\-resume", "\\-\\-offline", "\\-\\-shell\\-debug", "\\-\\-json"] {
            assert!(page.contains(flag), "{flag} missing");
        }
        assert!(!page.contains("__man"), "a hidden command is on the page");
        for heading in ["INSTRUCTIONS", "FILES", "ENVIRONMENT", "\"EXIT STATUS\""] {
            assert!(page.contains(&format!(".SH {heading}")), "{heading} missing");
        }
    }
}
