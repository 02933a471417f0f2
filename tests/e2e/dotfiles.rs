//! A user's bash start-up files under unixagent, and the checks every such
//! configuration must pass: the integration confirms, the user's own prompt
//! is drawn, no error text appears, commands and exit codes come through,
//! `#` at the prompt reaches the model and the prompt comes back, and `#`
//! typed while `cat` runs reaches `cat`.
//!
//! The dotfiles live in `fixtures/bash/`; the suites that use them are
//! `bash_prompt_command`, `bash_hooks`, `bash_frameworks` and
//! `bash_options`.

use ua_term::osc::ShellEvent;

use crate::support::*;

/// Text bash (or a start-up file) prints when something went wrong.
const ERRORS: [&str; 8] = [
    "syntax error",
    "unbound variable",
    "command not found",
    "No such file",
    "bad substitution",
    "unexpected token",
    "bash: ",
    "no prompt marker",
];

/// Where our shell's last marker of this kind starts in `raw`.
pub fn last_marker(raw: &[u8], kind: char) -> Option<usize> {
    let aid = our_aid(raw)?;
    let mut needle = format!("\x1b]133;{kind};aid=").into_bytes();
    needle.extend_from_slice(aid);
    needle.push(0x07);
    memchr::memmem::rfind(raw, &needle)
}

/// How a configuration's prompt ends (its last non-blank characters).
#[derive(Clone, Copy)]
pub struct Prompt(pub &'static [&'static str]);

/// The test suite's own prompt, `PS1-MARK> `.
pub const MARK: Prompt = Prompt(&["PS1-MARK>"]);

impl Prompt {
    fn shown(self, row: &str) -> bool {
        self.0.iter().any(|end| row.ends_with(end))
    }
}

/// A home whose `~/.bashrc` is `bashrc`.
pub fn home_with(bashrc: &str) -> Home {
    let home = Home::new();
    home.write(".bashrc", &format!("HISTFILE=~/.bash_history_test\n{bashrc}"));
    home
}

/// unixagent over bash in `home`, waited on until the user's prompt is
/// drawn.
pub fn start(home: &Home, prompt: Prompt) -> Term {
    let t = home.spawn("bash").start();
    wait_prompt_n(&t, 1, prompt);
    t
}

/// Waits until `n` prompts have been drawn and the last is on screen.
pub fn wait_prompt_n(t: &Term, n: usize, prompt: Prompt) {
    t.wait_for(&format!("prompt #{n}"), |s| our_markers(s.raw(), 'B') >= n && prompt.shown(&s.cursor_row()));
}

/// Runs `line` and waits for the next prompt.
pub fn run_at(t: &mut Term, line: &str, prompt: Prompt) {
    let n = prompts(t);
    t.send(format!("{line}\r"));
    wait_prompt_n(t, n + 1, prompt);
}

/// The exit codes the D markers reported, in order.
pub fn exit_codes(t: &Term) -> Vec<i32> {
    events(t).into_iter().filter_map(|e| if let ShellEvent::CommandEnd(c) = e { c } else { None }).collect()
}

/// Panics if the transcript holds error text.
pub fn assert_no_errors(t: &Term, label: &str) {
    let raw = t.raw();
    let text = String::from_utf8_lossy(&raw);
    for e in ERRORS {
        assert!(!text.contains(e), "{label}: {e:?} in the output:\n{}", t.screen_text());
    }
}

/// Every check, on a session already at its first prompt.
pub fn check_session(home: &Home, t: &mut Term, prompt: Prompt, label: &str) {
    // Integration confirmed: markers arrived and unixagent did not fall
    // back to guessing prompts.
    let ev = events(t);
    assert!(ev.contains(&ShellEvent::PromptStart) && ev.contains(&ShellEvent::InputStart), "{label}: {ev:?}");

    // Commands and their exit codes.
    run_at(t, "echo ok-$((6*7))", prompt);
    t.with(|s| assert!(s.rows().iter().any(|r| r == "ok-42"), "{label}: {}", s.text()));
    run_at(t, "false", prompt);
    run_at(t, "(exit 3)", prompt);
    let codes = exit_codes(t);
    assert_eq!(codes[codes.len() - 3..], [0, 1, 3], "{label}: {codes:?}");

    // `#` at the prompt reaches the model, and the prompt comes back.
    let asked = home.instructions().len();
    let n = prompts(t);
    t.send("# list files");
    t.wait_for("the instruction echoed", |s| s.cursor_row().ends_with("# list files"));
    t.send("\r");
    t.wait_text(REPLY);
    let got = home.wait_instructions(asked + 1);
    assert_eq!(got.last().map(String::as_str), Some("list files"), "{label}");
    wait_prompt_n(t, n + 1, prompt);

    // `#` typed while cat runs goes to cat.
    let started = t.with(|s| our_markers(s.raw(), 'C'));
    t.send("cat\r");
    t.wait_for("cat running", |s| our_markers(s.raw(), 'C') > started);
    t.send("# to cat\r");
    t.wait_for("cat's echo", |s| s.text().matches("# to cat").count() >= 2);
    let n = prompts(t);
    t.send("\x04");
    wait_prompt_n(t, n + 1, prompt);
    assert_eq!(home.instructions().len(), asked + 1, "{label}: cat's line was taken as an instruction");

    assert_no_errors(t, label);
}
