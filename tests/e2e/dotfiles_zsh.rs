//! zsh as users set it up: XDG layouts, prompt themes, plugins that wrap
//! every widget, vi mode, prompt substitution, hooks assigned outright,
//! directory tools and strict options. See `dotfiles.rs` for the checks.

use crate::dotfile_contract::*;
use crate::support::*;

const XDG_ZSHENV: &str = include_str!("fixtures/zsh/xdg.zshenv");
const XDG_ZPROFILE: &str = include_str!("fixtures/zsh/xdg.zprofile");
const XDG_ZSHRC: &str = include_str!("fixtures/zsh/xdg.zshrc");
const XDG_ZLOGIN: &str = include_str!("fixtures/zsh/xdg.zlogin");
const XDG_GREET: &str = include_str!("fixtures/zsh/xdg_greet");

fn home_with_zshrc(rel: &str, zshrc: &str) -> Home {
    let home = Home::new();
    std::fs::remove_file(home.path().join(".zshrc")).unwrap();
    home.write(rel, &format!("{zshrc}\n{ZSH_HOOK_PROBE}"));
    home
}

fn setup(name: &'static str, prompt: Vec<Vec<&'static str>>) -> Setup {
    Setup { name, shell: "zsh", login: false, prompt, hooks: true }
}

#[test]
fn xdg_layout_with_zdotdir_set_in_zshenv() {
    for login in [false, true] {
        let home = home_with_zshrc(".config/zsh/.zshrc", XDG_ZSHRC);
        home.write(".zshenv", XDG_ZSHENV);
        home.write(".config/zsh/.zprofile", XDG_ZPROFILE);
        home.write(".config/zsh/.zlogin", XDG_ZLOGIN);
        home.write(".config/zsh/functions/xdg_greet", XDG_GREET);
        let mut s = setup(if login { "zsh xdg login" } else { "zsh xdg" }, vec![vec!["XDG ~ ", " ["]]);
        s.login = login;
        let mut t = check(&home, &s);
        run_line(&mut t, &s, "echo marks=$ENV_MARK,$RC_MARK,${LOGIN_MARK-no},${ZLOGIN_MARK-no}");
        let want = if login { "marks=zshenv,zshrc,zprofile,zlogin" } else { "marks=zshenv,zshrc,no,no" };
        t.wait_text(want);
        // The user's ZDOTDIR, unexported as they left it; their functions.
        run_line(&mut t, &s, "echo zdotdir=$ZDOTDIR; env | grep -c '^ZDOTDIR='; xdg_greet");
        let zdotdir = home.path().join(".config/zsh");
        t.wait_text(&format!("zdotdir={}\n0\ngreetings from {}", zdotdir.display(), zdotdir.display()));
        assert!(home.path().join(".local/state/zsh/history").exists(), "history under XDG_STATE_HOME");
    }
}

const P9K_ZSHRC: &str = include_str!("fixtures/zsh/p9k.zshrc");

#[test]
fn powerlevel9k_two_line_prompt() {
    let home = home_with_zshrc(".zshrc", P9K_ZSHRC);
    let s = setup("zsh powerlevel9k", vec![vec!["╰─p9k❯"], vec!["╭─", "p9k-left", "p9k-right"]]);
    check(&home, &s);
}

const P10K_ZSHRC: &str = include_str!("fixtures/zsh/p10k.zshrc");
const P10K_CONFIG: &str = include_str!("fixtures/zsh/p10k.p10k.zsh");
const P10K_THEME: &str = include_str!("fixtures/zsh/p10k-theme.zsh");
const P10K_INSTANT_PROMPT: &str = include_str!("fixtures/zsh/p10k-instant-prompt.zsh");

/// The login name, as zsh's `%n` spells it.
fn user_name() -> String {
    let out = std::process::Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// powerlevel10k's instant prompt points stdout and stderr at a file until
/// its first precmd, and shows whatever landed there under a warning: the
/// markers must reach the terminal and leave the file empty.
#[test]
fn powerlevel10k_instant_prompt() {
    let home = home_with_zshrc(".zshrc", P10K_ZSHRC);
    home.write(".p10k.zsh", P10K_CONFIG);
    home.write(".p10k/powerlevel10k.zsh-theme", P10K_THEME);
    home.write(&format!(".cache/p10k-instant-prompt-{}.zsh", user_name()), P10K_INSTANT_PROMPT);
    let s = setup("zsh powerlevel10k instant prompt", vec![vec!["p10k❯", "p10k-right"], vec!["p10k-left"]]);
    let t = check(&home, &s);
    // The instant prompt was drawn at start (and then replaced).
    assert!(t.raw().windows(b"\x1b7".len()).any(|w| w == b"\x1b7"), "no instant prompt was drawn");
}

const PLUGINS_ZSHRC: &str = include_str!("fixtures/zsh/plugins.zshrc");

/// zsh-autosuggestions and zsh-syntax-highlighting wrap every widget; the
/// suggestion's grey text must not stop `#` from starting an instruction
/// once the typed text is gone, nor show through the instruction's line.
#[test]
fn autosuggestions_and_syntax_highlighting() {
    let home = home_with_zshrc(".zshrc", PLUGINS_ZSHRC);
    let s = setup("zsh autosuggestions", vec![vec!["plug ~ ", "plugins-on"]]);
    let mut t = check(&home, &s);
    // A suggestion from history appears after `ech`...
    t.send("ech");
    t.wait_for("the grey suggestion", |s| s.cursor_row().contains("echo hi-$UA_TEST_VAR"));
    // ...and goes with the typed text.
    t.send("\x7f\x7f\x7f");
    t.wait_for("an empty line", |s| !s.cursor_row().contains("ech"));
    t.send("# after suggestion");
    t.wait_for("the instruction alone on the line", |s| {
        let row = s.cursor_row();
        let line = row.trim_end_matches("plugins-on").trim_end();
        line.starts_with("plug ~ ") && line.ends_with(" # after suggestion") && !line.contains("ech")
    });
    // Ctrl+C drops the instruction; the shell line is still empty.
    t.send("\x03");
    t.wait_for("the instruction dropped", |s| !s.cursor_row().contains("after suggestion"));
    run_line(&mut t, &s, "echo still-$((40+2))");
    t.wait_text("\nstill-42");
    assert_no_errors(&t, &s);
}

const VI_ZSHRC: &str = include_str!("fixtures/zsh/vi.zshrc");

/// `bindkey -v` with the mode shown in the prompt: the indicator comes back
/// after a turn, and mode switches redraw the prompt without harm.
#[test]
fn vi_mode_with_mode_indicator() {
    let home = home_with_zshrc(".zshrc", VI_ZSHRC);
    let s = setup("zsh vi mode", vec![vec!["vi ~ [I] ", "INSERT"]]);
    let mut t = check(&home, &s);
    t.send("\x1b");
    t.wait_for("normal mode", |s| s.cursor_row().contains("[N]") && s.cursor_row().contains("NORMAL"));
    t.send("i");
    t.wait_for("insert mode", |s| s.cursor_row().contains("[I]") && s.cursor_row().contains("INSERT"));
    let from = t.raw().len();
    t.send("\r");
    wait_user_prompt(&t, from, &s, "after an empty line");
    t.send("# in insert mode");
    t.wait_for("an instruction", |s| s.cursor_row().contains("vi ~ [I] # # in insert mode"));
    t.send("\x03");
    t.wait_for("the instruction dropped", |s| !s.cursor_row().contains("in insert mode"));
    run_line(&mut t, &s, "echo vi-$((6*7))");
    t.wait_text("\nvi-42");
    assert_no_errors(&t, &s);
}

const PROMPT_SUBST_ZSHRC: &str = include_str!("fixtures/zsh/prompt-subst.zshrc");

#[test]
fn prompt_subst_two_line_prompt_and_rprompt() {
    let home = home_with_zshrc(".zshrc", PROMPT_SUBST_ZSHRC);
    let s = setup("zsh prompt_subst", vec![vec!["└─", "$", "rprompt-subst"], vec!["┌── subst:~"]]);
    let mut t = check(&home, &s);
    // A continuation line (PS2) and back.
    run_line(&mut t, &s, "echo 'two\rlines'");
    t.wait_text("two\nlines");
    assert_no_errors(&t, &s);
}

const HOOKS_ZSHRC: &str = include_str!("fixtures/zsh/hooks-assigned.zshrc");
const HOOKS_ZLOGIN: &str = include_str!("fixtures/zsh/hooks-assigned.zlogin");

/// Hook arrays assigned outright in .zshrc, again in .zlogin, and again
/// from a precmd after start-up: our hooks are installed last and put back,
/// and the user's own fire for every command.
#[test]
fn hook_arrays_assigned_outright() {
    for login in [false, true] {
        let home = Home::new();
        home.write(".zshrc", HOOKS_ZSHRC);
        home.write(".zlogin", HOOKS_ZLOGIN);
        let mut s = setup(
            if login { "zsh hooks assigned, login" } else { "zsh hooks assigned" },
            vec![vec!["hooks ~ ", "[hooks-owned]"]],
        );
        s.login = login;
        check(&home, &s);
    }
}

const TOOLS_ZSHRC: &str = include_str!("fixtures/zsh/tools.zshrc");

#[test]
fn direnv_zoxide_and_fzf() {
    let home = home_with_zshrc(".zshrc", TOOLS_ZSHRC);
    home.write("proj/.envrc", "export PROJ_MARK=from-envrc\n");
    let s = setup("zsh direnv zoxide fzf", vec![vec!["tools ", "tools-right"]]);
    let mut t = check(&home, &s);
    // direnv loads the allowed .envrc when the shell enters the directory.
    run_line(&mut t, &s, "direnv allow proj");
    run_line(&mut t, &s, "cd proj");
    run_line(&mut t, &s, "echo mark=$PROJ_MARK");
    t.wait_text("mark=from-envrc");
    t.wait_for("direnv's mark in the right prompt", |s| s.cursor_row().contains("(envrc) tools-right"));
    // zoxide learnt the directory and jumps back to it.
    run_line(&mut t, &s, "cd ~");
    run_line(&mut t, &s, "z proj && pwd");
    t.wait_text(&format!("\n{}/proj\n", home.path().canonicalize().unwrap().display()));
    // fzf's history widget opens on Ctrl+R and gives the prompt back on Esc.
    // fzf asks where the cursor is first; the test's terminal does not
    // answer on its own, so the test answers as a terminal would.
    let from = t.raw().len();
    t.send("\x12");
    let mut answered = 0;
    loop {
        let shown =
            |s: &ua_testkit::term::Snapshot<'_>| s.text().contains("echo mark=$PROJ_MARK") && s.text().contains("│ >");
        t.wait_for("fzf, or its cursor position request", |s| {
            shown(s) || count(&s.raw()[from..], b"\x1b[6n") > answered
        });
        if t.with(shown) {
            break;
        }
        answered += 1;
        let (row, col) = t.with(|s| s.screen().cursor_position());
        t.send(format!("\x1b[{};{}R", row + 1, col + 1));
    }
    let from = t.raw().len();
    t.send("\x1b");
    wait_user_prompt(&t, from, &s, "after fzf");
    run_line(&mut t, &s, "echo after-fzf");
    t.wait_text("\nafter-fzf");
    assert_no_errors(&t, &s);
}

const STRICT_ZSHRC: &str = include_str!("fixtures/zsh/strict.zshrc");

/// `setopt nounset` and friends: our hooks run at every prompt and must
/// not trip over the user's options.
#[test]
fn strict_options_nounset_ksh_arrays() {
    for login in [false, true] {
        let home = home_with_zshrc(".zshrc", STRICT_ZSHRC);
        let mut s = setup(
            if login { "zsh strict options, login" } else { "zsh strict options" },
            vec![vec!["strict ~ ", "[nounset]"]],
        );
        s.login = login;
        let mut t = check(&home, &s);
        run_line(&mut t, &s, "cd /tmp && cd -");
        assert_no_errors(&t, &s);
    }
}

/// A prompt that takes a while to draw (themes run programs in precmd):
/// the turn ends before the prompt after the agent's command is drawn, and
/// the prompt must still come back.
#[test]
fn slow_prompt_comes_back_after_a_turn() {
    let home =
        home_with_zshrc(".zshrc", "PROMPT='slow %~ %# '\nslow_theme() { sleep 0.3 }\nprecmd_functions+=(slow_theme)\n");
    check(&home, &setup("zsh slow prompt", vec![vec!["slow ~ "]]));
}

const LATE_THEME_ZSHRC: &str = include_str!("fixtures/zsh/late-theme.zshrc");

/// A theme loaded after start-up adds its precmd hook after ours and
/// rebuilds PROMPT at every prompt: B must still mark every prompt.
#[test]
fn theme_loaded_after_start_up() {
    let home = home_with_zshrc(".zshrc", LATE_THEME_ZSHRC);
    let s = setup("zsh theme loaded late", vec![vec!["lazy-", "[lazy]"]]);
    let mut t = check(&home, &s);
    run_line(&mut t, &s, "echo late");
    t.wait_for("the late theme's prompt", |s| s.cursor_row().starts_with("lazy-late ~ "));
}
