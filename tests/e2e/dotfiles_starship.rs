//! starship on bash, zsh and fish, installed the way its users do (a
//! release binary on PATH, `starship init` in the start-up file). The
//! binary comes from scripts/test-deps.sh; without it these tests fail,
//! saying so. See `dotfiles.rs` for the checks.

use crate::dotfile_contract::*;
use crate::support::*;

const CONFIG: &str = include_str!("fixtures/starship/starship.toml");

fn home_with(rc: &str, text: &str) -> Home {
    which("starship");
    let home = Home::new();
    home.write(".config/starship.toml", CONFIG);
    home.write(rc, text);
    home
}

fn setup(name: &'static str, shell: &'static str, right: bool) -> Setup {
    // bash has no right prompt: starship draws it only through ble.sh.
    let row = if right { vec!["star-left ~ ❯", "star-right"] } else { vec!["star-left ~ ❯"] };
    Setup { name, shell, login: false, prompt: vec![row], hooks: true }
}

#[test]
fn starship_on_zsh() {
    let home =
        home_with(".zshrc", &format!("HISTFILE=~/.zsh_history\n{ZSH_HOOK_PROBE}\neval \"$(starship init zsh)\"\n"));
    let s = setup("starship zsh", "zsh", true);
    let mut t = check(&home, &s);
    run_line(&mut t, &s, "false");
    t.wait_for("the status in the right prompt", |s| s.cursor_row().contains("1 star-right"));
    assert_no_errors(&t, &s);
}

#[test]
fn starship_on_zsh_in_vi_mode() {
    let rc =
        format!("HISTFILE=~/.zsh_history\nbindkey -v\nKEYTIMEOUT=1\n{ZSH_HOOK_PROBE}\neval \"$(starship init zsh)\"\n");
    let home = home_with(".zshrc", &rc);
    let s = setup("starship zsh vi mode", "zsh", true);
    let mut t = check(&home, &s);
    t.send("\x1b");
    t.wait_for("normal mode", |s| s.cursor_row().contains("star-left ~ ❮"));
    t.send("i");
    t.wait_for("insert mode", |s| s.cursor_row().contains("star-left ~ ❯"));
    assert_no_errors(&t, &s);
}

#[test]
fn starship_on_fish() {
    for shell in ["fish", "fish4"] {
        let rc = format!("set -g fish_greeting\n{FISH_HOOK_PROBE}\nstarship init fish | source\n");
        let home = home_with(".config/fish/config.fish", &rc);
        let s = setup(if shell == "fish" { "starship fish 3" } else { "starship fish 4" }, shell, true);
        let mut t = check(&home, &s);
        run_line(&mut t, &s, "false");
        t.wait_for("the status in the right prompt", |s| s.cursor_row().contains("1 star-right"));
        assert_no_errors(&t, &s);
    }
}

/// starship's fish prompt shows the vi mode itself and leaves fish's mode
/// prompt empty, so fish redraws the whole prompt when the mode changes.
#[test]
fn starship_on_fish_in_vi_mode() {
    for shell in ["fish", "fish4"] {
        let rc =
            format!("set -g fish_greeting\nfish_vi_key_bindings\n{FISH_HOOK_PROBE}\nstarship init fish | source\n");
        let home = home_with(".config/fish/config.fish", &rc);
        let s = setup(if shell == "fish" { "starship fish 3 vi" } else { "starship fish 4 vi" }, shell, true);
        let mut t = check(&home, &s);
        t.send("\x1b");
        t.wait_for("normal mode", |s| s.cursor_row().contains("star-left ~ ❮"));
        t.send("i");
        t.wait_for("insert mode", |s| s.cursor_row().contains("star-left ~ ❯"));
        assert_no_errors(&t, &s);
    }
}

#[test]
fn starship_on_bash() {
    let rc = "HISTFILE=~/.bash_history_test\n\
              __probe_pre() { [[ $BASH_COMMAND == __* || $BASH_COMMAND == starship* ]] || true; }\n\
              eval \"$(starship init bash)\"\n";
    let home = home_with(".bashrc", rc);
    let mut s = setup("starship bash", "bash", false);
    s.hooks = false;
    check(&home, &s);
}
