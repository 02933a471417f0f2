//! When shell integration does not confirm, the one line unixagent prints
//! says what the shell printed and how to look closer; `--shell-debug`
//! traces the start-up.

use crate::support::*;

/// A ~/.bashrc that fails, then replaces the shell with one that never
/// loads our integration.
const BROKEN: &str = ". ~/.config/missing-aliases.sh\nexec bash --norc --noprofile\n";

fn short_timeout(home: &Home) {
    home.write(".config/unixagent/config.toml", "[shell]\nintegration_timeout_ms = 1500\n");
}

#[test]
fn the_failure_line_quotes_the_error_and_names_the_diagnosis() {
    let home = Home::new();
    home.write(".bashrc", BROKEN);
    short_timeout(&home);
    let t = home.spawn("bash").start();
    t.wait_text("no prompt marker from bash");
    t.wait_text("start instructions with ##");
    let text = t.screen_text().replace('\n', "");
    assert!(text.contains("missing-aliases.sh: No such file or directory"), "{text}");
    assert!(text.contains("unixagent --shell-debug"), "{text}");
}

#[test]
fn shell_debug_traces_start_up_and_says_when_integration_works() {
    let home = Home::new();
    home.write(".bashrc", "PS1='PS1-MARK> '\nUA_TRACED_LINE=1\n");
    let mut t = home.spawn("bash").arg("--shell-debug").start();
    // bash -x printed the user's start-up file as it ran.
    t.wait_raw_count(b"+ UA_TRACED_LINE=1", 1);
    t.wait_raw_count(b"shell integration is working", 1);
    wait_prompt(&t, 1);
    run(&mut t, "echo debug-session-works");
    t.wait_text("\ndebug-session-works");
}

/// zsh and fish reach the same line: the first error their start-up
/// printed, and the command to look closer.
#[test]
fn zsh_and_fish_start_up_errors_are_quoted_too() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("zsh", ".zshrc", "source ~/.config/missing-zsh-aliases\nexec zsh -f\n", "missing-zsh-aliases"),
        (
            "fish",
            ".config/fish/config.fish",
            "source ~/.config/missing-fish-aliases.fish\nexec fish --no-config\n",
            "missing-fish-aliases.fish",
        ),
    ];
    for (shell, file, text, missing) in cases {
        let home = Home::new();
        home.write(file, text);
        short_timeout(&home);
        let t = home.spawn(shell).start();
        t.wait_text(&format!("no prompt marker from {shell}"));
        t.wait_text("start instructions with ##");
        let screen = t.screen_text().replace('\n', "");
        assert!(screen.contains(&format!("{shell} printed:")) && screen.contains(missing), "{shell}: {screen}");
        assert!(screen.contains("unixagent --shell-debug"), "{shell}: {screen}");
    }
}
