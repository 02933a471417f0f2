//! Prompt frameworks and everyday tools from Debian's packages, loaded the
//! way their documentation says: each must keep its prompt, hooks and key
//! bindings, and unixagent must keep its markers and `#`.

use ua_testkit::term::Snapshot;

use crate::dotfiles::*;
use crate::support::*;

/// liquidprompt's prompt ends in its mark: `#` for root, else `$`.
const LIQUID: Prompt = Prompt(&["#", "$"]);

#[test]
fn liquidprompt() {
    let home = home_with(include_str!("fixtures/bash/liquidprompt.bashrc"));
    let mut t = start(&home, LIQUID);
    // Its own prompt, not ours: [user:dir] and the mark.
    t.with(|s| assert!(s.cursor_row().contains(":~]"), "{}", s.text()));
    check_session(&home, &mut t, LIQUID, "liquidprompt");
    // The last status shows in the prompt after a failure.
    run_at(&mut t, "(exit 4)", LIQUID);
    t.with(|s| assert!(s.cursor_row().contains(" 4 "), "{}", s.text()));
}

#[test]
fn powerline() {
    which("powerline-config");
    let home = home_with(include_str!("fixtures/bash/powerline.bashrc"));
    // Its segments end in the separator glyph.
    let prompt = Prompt(&["\u{e0b0}"]);
    let mut t = start(&home, prompt);
    check_session(&home, &mut t, prompt, "powerline");
    // The last status is a segment of its own.
    run_at(&mut t, "(exit 5)", prompt);
    t.with(|s| assert!(s.cursor_row().contains("\u{a0}5\u{a0}"), "{}", s.text()));
}

#[test]
fn direnv_loads_an_allowed_envrc() {
    let home = home_with("PS1='PS1-MARK> '\neval \"$(direnv hook bash)\"\n");
    home.write("proj/.envrc", "export UA_DIRENV=loaded\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "direnv");
    run_at(&mut t, "direnv allow proj", MARK);
    run_at(&mut t, "cd proj", MARK);
    run_at(&mut t, "echo \"direnv=$UA_DIRENV\"", MARK);
    t.wait_text("direnv=loaded");
}

/// fzf's key bindings ship as documentation, which minimal images drop
/// (scripts/test-deps.sh puts them back).
const FZF_BINDINGS: &str = "/usr/share/doc/fzf/examples/key-bindings.bash";

fn require_fzf_bindings() {
    assert!(
        std::path::Path::new(FZF_BINDINGS).is_file(),
        "{FZF_BINDINGS} is missing: scripts/test-deps.sh installs fzf with it"
    );
}

#[test]
fn fzf_history_search_on_ctrl_r() {
    require_fzf_bindings();
    let home = home_with("PS1='PS1-MARK> '\n. /usr/share/doc/fzf/examples/key-bindings.bash\n");
    home.write(".bash_history_test", "echo from-fzf-history\nls\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "fzf");
    let n = prompts(&t);
    let asked = t.with(|s| s.count(CURSOR_QUERY));
    t.send("\x12");
    answer_cursor_queries(&mut t, asked, "fzf's list", |s| s.text().contains("echo from-fzf-history"));
    t.send("from-fzf");
    t.wait_for("fzf filtered", |s| s.text().contains("1/"));
    t.send("\r");
    t.wait_for("the line filled in", |s| s.cursor_row().ends_with("PS1-MARK> echo from-fzf-history"));
    t.send("\r");
    wait_prompt_n(&t, n + 1, MARK);
    t.with(|s| assert!(s.rows().iter().any(|r| r == "from-fzf-history"), "{}", s.text()));
}

const CURSOR_QUERY: &[u8] = b"\x1b[6n";

/// fzf asks the terminal where the cursor is (twice, as it starts) and
/// waits for each answer, which a real terminal gives at once: answer as
/// one would until `done` holds.
fn answer_cursor_queries(t: &mut Term, mut asked: usize, what: &str, done: impl Fn(&Snapshot<'_>) -> bool) {
    loop {
        t.wait_for(what, |s| done(s) || s.count(CURSOR_QUERY) > asked);
        if t.with(&done) {
            return;
        }
        asked += 1;
        let (row, col) = t.with(|s| s.screen().cursor_position());
        t.send(format!("\x1b[{};{}R", row + 1, col + 1));
    }
}

#[test]
fn zoxide_jumps_to_a_visited_directory() {
    let home = home_with("PS1='PS1-MARK> '\neval \"$(zoxide init bash)\"\n");
    std::fs::create_dir_all(home.path().join("deep/zoxide-target")).unwrap();
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "zoxide");
    run_at(&mut t, "cd deep/zoxide-target", MARK);
    run_at(&mut t, "cd ~", MARK);
    run_at(&mut t, "z zoxide-targ && echo \"now=${PWD##*/}\"", MARK);
    t.wait_text("now=zoxide-target");
}

#[test]
fn bash_completion_completes_options() {
    let home = home_with("PS1='PS1-MARK> '\n. /usr/share/bash-completion/bash_completion\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "bash-completion");
    t.send("ls --hel\t");
    t.wait_for("completion", |s| s.cursor_row() == "PS1-MARK> ls --help");
    // Ctrl+C drops the line and gives a fresh prompt.
    let n = prompts(&t);
    crate::proxy::wait_shell_reading(&t);
    t.send("\x03");
    wait_prompt_n(&t, n + 1, MARK);
    run_at(&mut t, "echo after-completion", MARK);
    t.wait_text("\nafter-completion");
}

#[test]
fn everyday_tools_together() {
    require_fzf_bindings();
    let home = home_with(include_str!("fixtures/bash/everyday.bashrc"));
    home.write("preexec.bash", include_str!("fixtures/bash/preexec.bash"));
    home.write("pyenv-virtualenv.bash", include_str!("fixtures/bash/pyenv-virtualenv.bash"));
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "everyday tools");
    let log = std::fs::read_to_string(home.path().join("hooks.log")).unwrap();
    assert_eq!(log.lines().collect::<Vec<_>>(), ["preexec echo ok-$((6*7))", "preexec false", "preexec cat"]);
    let hist = std::fs::read_to_string(home.path().join(".bash_history_test")).unwrap();
    assert!(hist.contains("(exit 3)"), "{hist}");
}

#[test]
fn starship() {
    let starship = which("starship");
    let home = home_with(&format!("eval \"$({} init bash)\"\n", starship.display()));
    let prompt = Prompt(&["❯"]);
    let mut t = start(&home, prompt);
    check_session(&home, &mut t, prompt, "starship");
}
