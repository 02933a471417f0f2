//! fish as users set it up: hand-written prompts and right prompts, vi key
//! bindings with the mode indicator, direnv and zoxide hooks; on fish 3
//! (Debian 12's) and fish 4 (which marks its prompts itself). See
//! `dotfiles.rs` for the checks.

use crate::dotfile_contract::*;
use crate::support::*;

const PROMPTS: &str = include_str!("fixtures/fish/prompts.fish");
const VI: &str = include_str!("fixtures/fish/vi.fish");
const TOOLS: &str = include_str!("fixtures/fish/tools.fish");

fn home_with_config(config: &str) -> Home {
    let home = Home::new();
    home.write(".config/fish/config.fish", &format!("{config}\n{FISH_HOOK_PROBE}"));
    home
}

/// The fish binaries to run a set-up on: fish 3 and fish 4
/// (scripts/test-deps.sh installs it as `fish4`).
fn fishes() -> [&'static str; 2] {
    ["fish", "fish4"]
}

fn setup(name: &'static str, shell: &'static str, prompt: Vec<&'static str>) -> Setup {
    Setup { name, shell, login: false, prompt: vec![prompt], hooks: true }
}

#[test]
fn custom_prompt_and_right_prompt() {
    for (shell, name) in fishes().into_iter().zip(["fish 3 prompts", "fish 4 prompts"]) {
        let home = home_with_config(PROMPTS);
        let s = setup(name, shell, vec!["fishy ~", "fish-right"]);
        let mut t = check(&home, &s);
        run_line(&mut t, &s, "false");
        t.wait_for("the status in the right prompt", |s| s.cursor_row().contains("[1] fish-right"));
        run_line(&mut t, &s, "mkcd sub; and echo in-(basename $PWD)");
        t.wait_text("\nin-sub");
        assert_no_errors(&t, &s);
        if shell == "fish" {
            prompt_chosen_later(&mut t);
        } else {
            kitty_keyboard_protocol(&mut t);
        }
    }
}

/// A prompt defined after start-up (`fish_config prompt choose`, a theme's
/// configure command) is wrapped again before it is drawn. (fish 4's
/// branch of the script does not do this yet.)
fn prompt_chosen_later(t: &mut Term) {
    let s = setup("fish 3 prompt chosen later", "fish", vec!["chosen> "]);
    run_line(t, &s, "function fish_prompt; printf 'chosen> '; end");
    t.send("# with the new prompt");
    t.wait_for("an instruction", |s| s.cursor_row().contains("chosen> # with the new prompt"));
    t.send("\x03");
    t.wait_for("the instruction dropped", |s| !s.cursor_row().contains("with the new prompt"));
    run_line(t, &s, "echo new-(math 40 + 2)");
    t.wait_text("\nnew-42");
    assert_no_errors(t, &s);
}

/// fish draws the vi mode indicator before the prompt: it is part of the
/// prompt and comes back whole after a turn and after mode switches.
#[test]
fn vi_key_bindings_with_mode_indicator() {
    for (shell, name) in fishes().into_iter().zip(["fish 3 vi mode", "fish 4 vi mode"]) {
        let home = home_with_config(VI);
        let s = setup(name, shell, vec!["[I] vifish ~> ", "vi-right"]);
        let mut t = check(&home, &s);
        t.send("\x1b");
        t.wait_for("normal mode", |s| s.cursor_row().contains("[N] vifish ~> "));
        t.send("i");
        t.wait_for("insert mode", |s| s.cursor_row().contains("[I] vifish ~> "));
        let from = t.raw().len();
        t.send("\r");
        wait_user_prompt(&t, from, &s, "after an empty line");
        t.send("# in insert mode");
        t.wait_for("an instruction", |s| s.cursor_row().contains("[I] vifish ~> # in insert mode"));
        t.send("\x03");
        t.wait_for("the instruction dropped", |s| !s.cursor_row().contains("in insert mode"));
        run_line(&mut t, &s, "echo vi-(math 6 \\* 7)");
        t.wait_text("\nvi-42");
        assert_no_errors(&t, &s);
    }
}

#[test]
fn direnv_and_zoxide() {
    for (shell, name) in fishes().into_iter().zip(["fish 3 direnv zoxide", "fish 4 direnv zoxide"]) {
        let home = home_with_config(TOOLS);
        home.write("proj/.envrc", "export PROJ_MARK=from-envrc\n");
        let s = setup(name, shell, vec!["toolfish ", "tools-right"]);
        let mut t = check(&home, &s);
        run_line(&mut t, &s, "direnv allow proj");
        run_line(&mut t, &s, "cd proj");
        run_line(&mut t, &s, "echo mark=$PROJ_MARK");
        t.wait_text("mark=from-envrc");
        t.wait_for("direnv's mark in the right prompt", |s| s.cursor_row().contains("(envrc) tools-right"));
        run_line(&mut t, &s, "cd ~");
        run_line(&mut t, &s, "z proj; and pwd");
        t.wait_text(&format!("\n{}/proj\n", home.path().canonicalize().unwrap().display()));
        assert_no_errors(&t, &s);
    }
}

/// fish 4 turns on the kitty keyboard protocol at its prompt, and a
/// terminal that speaks it sends Ctrl+C as `CSI 99;5u`: the `#` editor
/// must still read it.
fn kitty_keyboard_protocol(t: &mut Term) {
    assert!(t.raw().windows(5).any(|w| w == b"\x1b[=5u"), "fish 4 did not ask for the kitty keyboard protocol");
    let s = setup("fish 4 kitty keys", "fish4", vec!["fishy ~", "fish-right"]);
    t.send("# dropped with kitty's ctrl-c");
    t.wait_for("an instruction", |s| s.cursor_row().contains("# dropped with kitty's ctrl-c"));
    t.send("\x1b[99;5u");
    t.wait_for("the instruction dropped", |s| !s.cursor_row().contains("dropped with"));
    run_line(t, &s, "echo kitty-(math 40 + 2)");
    t.wait_text("\nkitty-42");
    assert_no_errors(t, &s);
}
