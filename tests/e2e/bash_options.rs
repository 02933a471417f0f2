//! Shell options and prompts users set in ~/.bashrc: `set -u`, vi editing,
//! a multi-line coloured PS1.

use crate::dotfiles::*;
use crate::support::*;

#[test]
fn set_u_in_bashrc() {
    let home = home_with("set -u\nPS1='PS1-MARK> '\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "set -u");
    // Still on: our hooks changed no option of the user's.
    run_at(&mut t, "echo \"opts=$-\"", MARK);
    t.wait_for("$-", |s| s.rows().iter().any(|r| r.starts_with("opts=") && r.contains('u')));
}

#[test]
fn vi_editing_mode() {
    // show-mode-in-prompt puts readline's mode in front of the prompt, so
    // the test can see the Esc take effect.
    let home = home_with("set -o vi\nbind 'set show-mode-in-prompt on'\nPS1='PS1-MARK> '\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "set -o vi");
    // Insert, Esc to command mode, back a word, insert before it.
    let n = prompts(&t);
    t.send("echo one two");
    t.wait_for("typed", |s| s.cursor_row().ends_with("PS1-MARK> echo one two"));
    t.send("\x1b");
    t.wait_for("command mode", |s| s.cursor_row().starts_with("(cmd)"));
    t.send("biZ\r");
    wait_prompt_n(&t, n + 1, MARK);
    t.with(|s| assert!(s.rows().iter().any(|r| r == "one Ztwo"), "{}", s.text()));
}

#[test]
fn multi_line_coloured_prompt() {
    let home = home_with(include_str!("fixtures/bash/multiline-colour.bashrc"));
    let mut t = start(&home, MARK);
    // The first line of the prompt is drawn above the second.
    t.with(|s| {
        let rows = s.rows();
        let (r, _) = s.screen().cursor_position();
        let above = &rows[usize::from(r) - 1];
        assert!(above.contains('@') && above.contains(":~"), "{rows:?}");
    });
    check_session(&home, &mut t, MARK, "multi-line PS1");
}
