//! What every user set-up is held to. Users do not run clean shells: each
//! test in `dotfiles_*` writes a real-world set of start-up files (long
//! ones live in `fixtures/`) into a throwaway home, then [`check`] drives
//! unixagent over it like a person would and asserts the whole contract:
//!
//! - start-up and prompts print no error, and integration is confirmed;
//! - the user's own prompt is drawn (right prompts, vi mode indicators,
//!   multi-line prompts), also after an agent turn;
//! - commands run with the right exit codes, and the user's hooks fire
//!   for every command, the first one included;
//! - `#` at the prompt reaches the model, the command it proposes runs in
//!   the shell, and the prompt comes back;
//! - `#` typed while `cat` runs reaches `cat`.

use ua_testkit::provider::FakeProvider;

use crate::agent::{messages, model};
use crate::support::*;

/// One instruction: the model proposes one command, then ends the turn.
const SCENARIO: &str = r#"
[[turn]]
text = "Running one command."
tool_calls = [{ name = "shell", input = { command = "printf 'agent-%s\\n' ran" } }]

[[turn]]
text = "agent-turn-done"
"#;

/// Text that means something went wrong at start-up or at a prompt.
/// Matched without case against everything the shell printed.
const ERRORS: &[&str] = &[
    "not found",
    "not set",
    "no such",
    "parse error",
    "bad math",
    "bad pattern",
    "bad substitution",
    "bad option",
    "unknown",
    "invalid",
    "error",
    "warning",
    "unbound",
    "cannot",
    "can't",
    "permission denied",
    "unixagent:",
    "zsh:",
    "fish:",
    "bash:",
    "in function",
    "console output",
];

/// A user set-up under test.
pub struct Setup {
    pub name: &'static str,
    /// The shell's name in PATH (`fish4` is fish 4, see scripts/test-deps.sh).
    pub shell: &'static str,
    pub login: bool,
    /// Fragments the prompt must show: the cursor's row first, then the
    /// rows above it (multi-line prompts).
    pub prompt: Vec<Vec<&'static str>>,
    /// Whether the set-up logs its hooks to `~/.hooks.log` (see
    /// [`ZSH_HOOK_PROBE`], [`FISH_HOOK_PROBE`]).
    pub hooks: bool,
}

/// zsh hooks as users add them, logging each command and each prompt.
pub const ZSH_HOOK_PROBE: &str = r#"
autoload -Uz add-zsh-hook
__probe_preexec() { print -r -- "run:$1" >>~/.hooks.log }
__probe_precmd() { print -r -- "prompt:$?" >>~/.hooks.log }
add-zsh-hook preexec __probe_preexec
add-zsh-hook precmd __probe_precmd
"#;

/// The same hooks in fish.
pub const FISH_HOOK_PROBE: &str = r#"
function __probe_preexec --on-event fish_preexec
    echo "run:$argv" >>~/.hooks.log
end
function __probe_postexec --on-event fish_postexec
    echo "prompt:$status" >>~/.hooks.log
end
"#;

/// unixagent over the set-up's shell, talking to `server`.
fn start(home: &Home, setup: &Setup, server: &FakeProvider) -> Term {
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    let mut spawn = home.spawn(setup.shell).env("ANTHROPIC_BASE_URL", server.base_url());
    if setup.login {
        spawn = spawn.arg("--login");
    }
    spawn.start()
}

/// The bytes the terminal shows as text: escape sequences removed.
pub fn visible(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            0x1b => {
                i += 1;
                match raw.get(i) {
                    Some(b'[') => {
                        i += 1;
                        while i < raw.len() && !(0x40..=0x7e).contains(&raw[i]) {
                            i += 1;
                        }
                    }
                    Some(b']' | b'P' | b'_') => {
                        while i < raw.len() && raw[i] != 0x07 && !(raw[i] == 0x1b && raw.get(i + 1) == Some(&b'\\')) {
                            i += 1;
                        }
                        if raw.get(i) == Some(&0x1b) {
                            i += 1;
                        }
                    }
                    Some(b'(' | b')') => i += 1,
                    _ => {}
                }
                i += 1;
            }
            b'\r' => {
                out.push(b'\n');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Panics if the shell printed anything that reads like an error.
pub fn assert_no_errors(t: &Term, setup: &Setup) {
    let text = visible(&t.raw());
    let lower = text.to_lowercase();
    for e in ERRORS {
        if let Some(at) = lower.find(e) {
            let from = lower[..at].rfind('\n').map_or(0, |n| n + 1);
            let to = lower[at..].find('\n').map_or(lower.len(), |n| at + n);
            // (Quoted from the lower-cased text: lower-casing may change
            // byte offsets.)
            panic!("{}: the shell printed {:?}\n--- screen ---\n{}", setup.name, &lower[from..to], t.screen_text());
        }
    }
}

/// How many times `needle` occurs in `hay`.
pub fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Whether the screen shows the set-up's prompt with the cursor on it.
fn prompt_shown(s: &ua_testkit::term::Snapshot<'_>, setup: &Setup) -> bool {
    let rows = s.rows();
    let (row, _) = s.screen().cursor_position();
    let row = usize::from(row);
    setup.prompt.iter().enumerate().all(|(up, frags)| {
        row.checked_sub(up).and_then(|r| rows.get(r)).is_some_and(|line| frags.iter().all(|f| line.contains(f)))
    })
}

/// Waits until a prompt is drawn (B) after byte `from` and the screen
/// shows it. (After a turn unixagent passes the shell's output on from
/// the prompt's start, without the A marker itself.)
pub fn wait_user_prompt(t: &Term, from: usize, setup: &Setup, what: &str) {
    t.wait_for(&format!("{}: prompt {what}", setup.name), |s| {
        find(&s.raw()[from.min(s.raw().len())..], b"\x1b]133;B").is_some() && prompt_shown(s, setup)
    });
}

/// Runs `line` and waits for the command's end (D) and the next prompt.
pub fn run_line(t: &mut Term, setup: &Setup, line: &str) {
    let from = t.raw().len();
    t.send(format!("{line}\r"));
    t.wait_for(&format!("{}: {line:?} to finish", setup.name), |s| {
        let raw = &s.raw()[from..];
        rfind(raw, b"\x1b]133;D").is_some_and(|d| rfind(raw, b"\x1b]133;B").is_some_and(|b| b > d))
            && prompt_shown(s, setup)
    });
}

/// Drives the whole contract over `setup` in `home`, and hands back the
/// session at a prompt for the set-up's own checks.
pub fn check(home: &Home, setup: &Setup) -> Term {
    let server = model(SCENARIO);
    let name = setup.name;
    let mut t = start(home, setup, &server);

    // Start-up: integration confirmed (A then B) and the user's prompt.
    wait_user_prompt(&t, 0, setup, "at start");
    let raw = t.raw();
    let a = find(&raw, b"\x1b]133;A");
    assert!(a.is_some_and(|a| rfind(&raw, b"\x1b]133;B").is_some_and(|b| b > a)), "{name}: no A before B");
    assert_no_errors(&t, setup);

    // Commands and their exit codes.
    for line in ["true", "false", "sh -c 'exit 7'"] {
        run_line(&mut t, setup, line);
    }
    let codes = crate::dotfiles::exit_codes(&t);
    assert!(codes.ends_with(&[0, 1, 7]), "{name}: exit codes {codes:?}");
    run_line(&mut t, setup, "echo hi-$UA_TEST_VAR");
    t.wait_text("\nhi-from-env");

    // `#` reaches the model, its command runs, the prompt comes back whole.
    let from = t.raw().len();
    let instruction = format!("say hello from {name}");
    t.send(format!("# {instruction}"));
    t.wait_for(&format!("{name}: the instruction being typed"), |s| {
        s.cursor_row().contains(&format!("# {instruction}"))
    });
    t.send("\r");
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("\nagent-ran");
    t.wait_text("agent-turn-done");
    wait_user_prompt(&t, from, setup, "after a turn");
    let first = messages(&server, 0);
    assert!(first.last().is_some_and(|m| m.to_string().contains(&instruction)), "{name}: {first:?}");
    assert_eq!(server.request_count(), 2, "{name}");

    // `#` typed while a command reads the terminal goes to that command.
    // (Keys typed before it runs may meet the shell's own terminal modes,
    // with or without unixagent: wait until it is the foreground job.)
    home.write("empty", "");
    let from = t.raw().len();
    t.send("cat - ~/empty\r");
    t.wait_for(&format!("{name}: cat to start"), |s| find(&s.raw()[from..], b"\x1b]133;C").is_some());
    crate::proxy::wait_foreground(&format!("cat - {}", home.path().join("empty").display()));
    t.send("# to cat\r");
    t.wait_for(&format!("{name}: cat's echo"), |s| s.text().matches("# to cat").count() >= 2);
    t.send("\x04");
    wait_user_prompt(&t, from, setup, "after cat");
    assert_eq!(server.request_count(), 2, "{name}: `#` inside cat reached the model");

    // The user's hooks saw every command, the first one included, and the
    // prompt hook after each saw its exit status.
    if setup.hooks {
        let log = std::fs::read_to_string(home.path().join(".hooks.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let runs: Vec<(&str, &str)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("run:"))
            .map(|(i, l)| (*l, lines.get(i + 1).copied().unwrap_or("")))
            .collect();
        let want = [
            ("run:true", "prompt:0"),
            ("run:false", "prompt:1"),
            ("run:sh -c 'exit 7'", "prompt:7"),
            ("run:echo hi-$UA_TEST_VAR", "prompt:0"),
            ("run:printf 'agent-%s\\n' ran", "prompt:0"),
            ("run:cat - ~/empty", "prompt:0"),
        ];
        assert_eq!(runs, want, "{name}: hooks logged {lines:?}");
    }
    assert_no_errors(&t, setup);
    t
}
