//! The user's own hooks under unixagent: bash-preexec's precmd/preexec
//! functions, a DEBUG trap, liquidprompt's per-command title. Each must
//! fire once per command, the first command after start-up included, and
//! see the command itself, not one of our prompt hooks.

use crate::dotfiles::*;
use crate::support::*;

fn hooks_log(home: &Home) -> Vec<String> {
    std::fs::read_to_string(home.path().join("hooks.log")).unwrap_or_default().lines().map(str::to_string).collect()
}

#[test]
fn bash_preexec_hooks_run_once_per_command_from_the_first() {
    let home = home_with(include_str!("fixtures/bash/preexec-hooks.bashrc"));
    home.write("preexec.bash", include_str!("fixtures/bash/preexec.bash"));
    let mut t = start(&home, MARK);
    run_at(&mut t, "echo first", MARK);
    run_at(&mut t, "false", MARK);
    run_at(&mut t, "echo third", MARK);
    assert_eq!(
        hooks_log(&home),
        ["precmd 0", "preexec echo first", "precmd 0", "preexec false", "precmd 1", "preexec echo third", "precmd 0"],
        "{}",
        t.screen_text()
    );
    // An instruction runs nothing in the shell: no preexec for it.
    check_session(&home, &mut t, MARK, "bash-preexec");
    let log = hooks_log(&home);
    assert!(log.iter().all(|l| !l.contains("list files") && !l.contains("__ua")), "{log:?}");
    // The three above, then echo, false and cat. A subshell line such as
    // `(exit 3)` gets no preexec from bash-preexec, with or without
    // unixagent: bash runs no DEBUG trap before a subshell.
    let preexecs: Vec<&str> = log.iter().filter_map(|l| l.strip_prefix("preexec ")).collect();
    assert_eq!(preexecs[3..], ["echo ok-$((6*7))", "false", "cat"], "{log:?}");
}

#[test]
fn a_debug_trap_that_sets_the_title_sees_each_command() {
    let home = home_with("PS1='PS1-MARK> '\ntrap 'printf \"\\e]0;%s\\a\" \"$BASH_COMMAND\"' DEBUG\n");
    let mut t = start(&home, MARK);
    run_at(&mut t, "echo title-one", MARK);
    // The title is set to the command before it prints.
    let raw = t.raw();
    let c = last_marker(&raw, 'C').expect("C");
    let title = memchr::memmem::rfind(&raw, b"\x1b]0;echo title-one\x07").expect("title set");
    let output = memchr::memmem::rfind(&raw, b"title-one\r\n").expect("output");
    assert!(c < title && title < output, "{:?}", String::from_utf8_lossy(&raw[c.min(title)..]));
    check_session(&home, &mut t, MARK, "DEBUG title trap");
}

#[test]
fn liquidprompt_titles_each_command_as_it_starts() {
    let home = home_with(include_str!("fixtures/bash/liquidprompt.bashrc"));
    let prompt = Prompt(&["#", "$"]);
    let mut t = start(&home, prompt);
    run_at(&mut t, "echo lp-title", prompt);
    // liquidprompt's DEBUG trap titles the first command after its prompt
    // hook: that must be the user's command, between its C and D markers.
    let raw = t.raw();
    let c = last_marker(&raw, 'C').expect("C");
    let title = memchr::memmem::rfind(&raw, b"echo lp-title\x07").expect("title");
    let output = memchr::memmem::rfind(&raw, b"lp-title\r\n").expect("output");
    assert!(c < title && title < output, "{:?}", String::from_utf8_lossy(&raw[c.min(title)..]));
}
