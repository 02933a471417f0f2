//! What the user's own watchers of commands see under unixagent: in bash a
//! DEBUG trap (a title set from `$BASH_COMMAND`), an ERR trap, a RETURN
//! trap and a PROMPT_COMMAND function; in zsh preexec and precmd hooks
//! and a ZERR trap; in fish 3 and 4 `fish_preexec`, `fish_postexec` and
//! `fish_prompt` handlers and `fish_title`. Each logs what it sees, with
//! `$?` and `$_`. The same keys go to the shell alone and to unixagent
//! over it, where an instruction's command is typed by the agent instead
//! of the person, and the two logs must be the same: the agent's command
//! is seen like any other, and nothing of unixagent's own.

use crate::agent::{model, start_with};
use crate::support::*;

/// The command the model proposes, which the shell alone gets typed.
const AGENT_COMMAND: &str = "printf 'agent-%s\\n' ran";

const SCENARIO: &str = r#"
[[turn]]
text = "Running one command."
tool_calls = [{ name = "shell", input = { command = "printf 'agent-%s\\n' ran" } }]

[[turn]]
text = "agent-turn-done"
"#;

/// A shell and the start-up file that installs its watchers, which log
/// to `~/watch.log`.
struct Watched {
    shell: &'static str,
    rc: &'static str,
    text: &'static str,
}

const BASH: Watched = Watched {
    shell: "bash",
    rc: ".bashrc",
    text: r#"PS1='PS1-MARK> '
HISTFILE=~/.bash_history_test
trap 'printf "debug %s\n" "$BASH_COMMAND" >>~/watch.log' DEBUG
trap 'printf "err %s %s\n" "$?" "$BASH_COMMAND" >>~/watch.log' ERR
watch_prompt() { printf 'prompt %s %s\n' "$?" "$1" >>~/watch.log; }
with_cleanup() { trap 'printf "return %s\n" "$FUNCNAME" >>~/watch.log' RETURN; }
PROMPT_COMMAND='watch_prompt "$_"'
[ -e ~/nothing-here ] && echo never
"#,
};

const ZSH: Watched = Watched {
    shell: "zsh",
    rc: ".zshrc",
    text: r#"PS1='PS1-MARK> '
HISTFILE=~/.zsh_history_test
setopt interactivecomments
autoload -Uz add-zsh-hook
watch_preexec() { print -r -- "preexec $? $_ | $1 | $3" >>~/watch.log }
watch_precmd() { print -r -- "precmd $? $_" >>~/watch.log }
TRAPZERR() { print -r -- "zerr $?" >>~/watch.log }
add-zsh-hook preexec watch_preexec
add-zsh-hook precmd watch_precmd
"#,
};

const FISH: &str = r#"set -g fish_greeting
function fish_prompt; printf 'PS1-MARK> '; end
function fish_title; echo "title $argv" >>~/watch.log; end
function watch_preexec --on-event fish_preexec; echo "preexec $argv" >>~/watch.log; end
function watch_postexec --on-event fish_postexec; echo "postexec $status $argv" >>~/watch.log; end
function watch_prompt --on-event fish_prompt; echo "prompt $status" >>~/watch.log; end
"#;

const FISH3: Watched = Watched { shell: "fish", rc: ".config/fish/config.fish", text: FISH };
const FISH4: Watched = Watched { shell: "fish4", rc: ".config/fish/config.fish", text: FISH };

/// Command lines typed by the person, in order; `None` is where they give
/// an instruction, whose command the agent types.
fn keys(shell: &str) -> Vec<Option<&'static str>> {
    let last_arg = if shell.starts_with("fish") { "echo two $status" } else { "echo two $_" };
    let mut keys = vec![Some("echo one"), Some("false"), None, Some(last_arg)];
    if shell == "bash" {
        // A RETURN trap set inside a function, which stays set and runs
        // again when a file sourced at the prompt returns (where the DEBUG
        // trap sees the commands it runs); the traps as `trap -p` lists
        // them.
        keys.extend([Some("with_cleanup; echo three"), Some(". /dev/null"), Some("trap -p >>~/watch.log")]);
    }
    keys
}

/// What the watchers logged with the shell alone, driven by `keys`.
struct Alone {
    log: String,
    /// Where the lines an empty command line logged after the agent's
    /// command lie in `log`.
    empty_line: std::ops::Range<usize>,
}

/// The shell alone, driven by `keys`. Where the agent typed its command,
/// the person types it, then an empty line: a turn that ends after the
/// shell's prompt came back asks the shell for a fresh one with an empty
/// line; one that ends sooner lets that prompt stand.
fn alone(w: &Watched) -> Alone {
    let home = Home::new();
    home.write(w.rc, w.text);
    let shell = which(w.shell);
    let mut spawn = Spawn::new(&shell)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("SHELL", &shell)
        .cwd(home.path());
    if !w.shell.starts_with("fish") {
        spawn = spawn.arg("-i");
    }
    let mut t = spawn.start();
    let prompts = |t: &Term| t.with(|s| s.count(PROMPT.as_bytes()));
    let wait = |t: &Term, n: usize| {
        t.wait_for(&format!("{}: prompt #{n}", w.shell), |s| {
            s.count(PROMPT.as_bytes()) >= n && s.cursor_row().ends_with(PROMPT.trim_end())
        })
    };
    wait(&t, 1);
    let mut empty_line = 0..0;
    for line in keys(w.shell) {
        let lines = match line {
            Some(l) => vec![l],
            None => vec![AGENT_COMMAND, ""],
        };
        for l in lines {
            let n = prompts(&t);
            let before = watch_log(&home).len();
            t.send(format!("{l}\r"));
            wait(&t, n + 1);
            if l.is_empty() {
                empty_line = before..watch_log(&home).len();
            }
        }
    }
    Alone { log: watch_log(&home), empty_line }
}

/// The log of unixagent over the shell, driven by the same `keys`.
fn under_unixagent(w: &Watched) -> String {
    let home = Home::new();
    home.write(w.rc, w.text);
    let server = model(SCENARIO);
    let mut t = start_with(&home, w.shell, &server);
    for line in keys(w.shell) {
        match line {
            Some(l) => run(&mut t, l),
            None => {
                t.send("# say hello\r");
                t.wait_text("[y] run");
                let n = prompts(&t);
                t.send("y");
                t.wait_text("\nagent-ran");
                t.wait_text("agent-turn-done");
                // The prompt after the turn (those between its commands are
                // not shown).
                wait_prompt(&t, n + 1);
            }
        }
    }
    assert_eq!(server.request_count(), 2, "{}: the instruction reached the model", w.shell);
    watch_log(&home)
}

fn watch_log(home: &Home) -> String {
    std::fs::read_to_string(home.path().join("watch.log")).unwrap_or_default()
}

fn same_watch_log(w: &Watched) {
    let alone = alone(w);
    let want = &alone.log;
    // The watchers saw the commands at all (the agent's among them), and
    // the empty line's prompt.
    assert!(want.contains("echo one") && want.contains("agent-%s"), "{}: watchers saw nothing:\n{want}", w.shell);
    assert!(!alone.empty_line.is_empty(), "{}: no prompt hook ran for an empty line:\n{want}", w.shell);
    let got = under_unixagent(w);
    let without_empty_line = format!("{}{}", &want[..alone.empty_line.start], &want[alone.empty_line.end..]);
    if got != without_empty_line {
        assert_eq!(&got, want, "{}: what the watchers saw under unixagent (left) and alone (right)", w.shell);
    }
}

#[test]
fn bash_debug_err_and_return_traps_see_only_the_users_commands() {
    same_watch_log(&BASH);
}

#[test]
fn zsh_hooks_see_only_the_users_commands() {
    same_watch_log(&ZSH);
}

#[test]
fn fish_3_events_see_only_the_users_commands() {
    same_watch_log(&FISH3);
}

#[test]
fn fish_4_events_see_only_the_users_commands() {
    same_watch_log(&FISH4);
}

/// zsh runs a DEBUG trap inside functions, our hooks among them: at the
/// prompt a user's DEBUG trap sees what it sees in zsh alone, and of ours
/// only the lines that set it aside for each hook's run, never the hook's
/// work (the markers, the loop over `$PWD`); it is in place again for the
/// user's own commands and functions.
#[test]
fn a_zsh_debug_trap_sees_only_how_our_hooks_set_it_aside() {
    const RC: &str = "PS1='PS1-MARK> '\nHISTFILE=~/.zsh_history_test\nmine() { print -r -- in-mine }\n\
                      trap 'print -r -- \"debug $ZSH_DEBUG_CMD\" >>~/watch.log' DEBUG\n";
    // A long working directory: the hook's loop runs once per byte.
    const LINES: [&str; 3] =
        ["mkdir -p ~/a-rather-long/directory-name && cd ~/a-rather-long/directory-name", "echo one", "mine"];
    // What the trap sees from the first prompt on (during start-up it sees
    // the rest of our .zshrc shim, which runs after the user's; see DESIGN).
    let alone = {
        let home = Home::new();
        home.write(".zshrc", RC);
        let shell = which("zsh");
        let mut t = Spawn::new(&shell).arg("-i").env("HOME", home.path()).env("SHELL", &shell).cwd(home.path()).start();
        let prompt = |t: &Term, n: usize| {
            t.wait_for(&format!("zsh alone: prompt #{n}"), |s| {
                s.count(PROMPT.as_bytes()) >= n && s.cursor_row().ends_with(PROMPT.trim_end())
            });
        };
        prompt(&t, 1);
        std::fs::write(home.path().join("watch.log"), "").unwrap();
        for (i, line) in LINES.iter().enumerate() {
            t.send(format!("{line}\r"));
            prompt(&t, i + 2);
        }
        watch_log(&home)
    };
    assert!(alone.contains("debug print -r -- in-mine"), "{alone}");
    let home = Home::new();
    home.write(".zshrc", RC);
    let server = model(SCENARIO);
    let mut t = start_with(&home, "zsh", &server);
    std::fs::write(home.path().join("watch.log"), "").unwrap();
    for line in LINES {
        run(&mut t, line);
    }
    let log = watch_log(&home);
    // Debian's /etc/zsh/zshrc has zle widgets of its own (`emulate -L zsh`,
    // then `printf` of a terminfo string), run as each line is read: when
    // the first and last of them land in the log depends on timing, so
    // they are left out on both sides.
    let system = |l: &str| l == "debug emulate -L zsh" || l.starts_with("debug printf '%s' ${terminfo[");
    let ours = ["debug local ret=$? ", "debug emulate -L zsh", "debug trap - DEBUG"];
    let theirs: String = log.lines().filter(|l| !ours.contains(l) && !system(l)).map(|l| format!("{l}\n")).collect();
    let theirs_alone: String = alone.lines().filter(|l| !system(l)).map(|l| format!("{l}\n")).collect();
    assert_eq!(theirs, theirs_alone, "what the DEBUG trap saw under unixagent (left) and alone (right):\n{log}");
    // Three hooks a command, each setting the trap aside in two or three
    // lines (the `emulate` lines of the system's widgets counted too).
    let ours_seen = log.lines().filter(|l| ours.contains(l)).count();
    assert!(ours_seen <= LINES.len() * 12, "{ours_seen} lines of ours:\n{log}");
}
