//! bash's `PROMPT_COMMAND` in the forms users and tools leave it: a string
//! ending in `;` (pyenv-virtualenv) or in newlines, an array (bash 5.1+),
//! a function, `history -a`. Each must keep running once per prompt, and
//! our hooks must not make any of them a syntax error.

use crate::dotfiles::*;
use crate::support::*;

/// Checks a configuration whose PROMPT_COMMAND prints `tag` once per prompt.
fn check_prompt_command(bashrc: &str, tag: &str) {
    let home = home_with(&format!("PS1='PS1-MARK> '\n{bashrc}"));
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, bashrc);
    // The user's hook ran at every prompt, no more, no less.
    let ran = t.with(|s| s.count(tag.as_bytes()));
    assert_eq!(ran, prompts(&t), "{bashrc}");
}

#[test]
fn a_string_ending_in_a_semicolon() {
    check_prompt_command("PROMPT_COMMAND='printf \"<pc-semi>\";'", "<pc-semi>");
}

#[test]
fn a_string_ending_in_newlines() {
    check_prompt_command("PROMPT_COMMAND=$'printf \"<pc-nl>\"\\n\\n'", "<pc-nl>");
}

#[test]
fn a_string_ending_in_an_ampersand_or_a_comment() {
    check_prompt_command("PROMPT_COMMAND='printf \"<pc-amp>\"; true & # a comment'", "<pc-amp>");
}

#[test]
fn an_array() {
    check_prompt_command("pc_first() { printf '<pc-a1>'; }\nPROMPT_COMMAND=(pc_first 'printf \"<pc-a2>\"')", "<pc-a2>");
}

#[test]
fn a_function() {
    check_prompt_command("pc_fn() { printf '<pc-fn>'; }\nPROMPT_COMMAND=pc_fn", "<pc-fn>");
}

#[test]
fn history_a_writes_each_command_before_the_next_prompt() {
    let home = home_with("PS1='PS1-MARK> '\nPROMPT_COMMAND='history -a'\nHISTFILE=~/hist-a\n");
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "history -a");
    run_at(&mut t, "echo written-by-history-a", MARK);
    let hist = std::fs::read_to_string(home.path().join("hist-a")).unwrap();
    assert!(hist.lines().any(|l| l == "echo written-by-history-a"), "{hist}");
    // Instructions never reach the shell, so never its history.
    assert!(!hist.contains("list files"), "{hist}");
}

/// pyenv-virtualenv's hook text, reproduced: alone it leaves
/// `PROMPT_COMMAND="_pyenv_virtualenv_hook;"`, which a `; `-join turned into
/// a syntax error at every prompt.
#[test]
fn pyenv_virtualenv_hook_text() {
    let home = home_with(&format!("PS1='PS1-MARK> '\n{}", include_str!("fixtures/bash/pyenv-virtualenv.bash")));
    std::fs::create_dir(home.path().join("venv-dir")).unwrap();
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "pyenv-virtualenv hook");
    // The hook runs at each prompt: it has noted the directory cd moved to.
    run_at(&mut t, "cd venv-dir", MARK);
    run_at(&mut t, "echo \"vh=${_PYENV_VH_PWD##*/}\"", MARK);
    t.wait_text("vh=venv-dir");
}

/// pyenv-virtualenv's commands that its hook and its init use, in the
/// plugin directory pyenv looks in, since no registry reachable here ships
/// pyenv-virtualenv: `virtualenv-init` prints the hook exactly as the
/// real one does (the fixture's text from its PATH line on), and
/// `sh-activate` answers as the real one does when the current version is
/// no virtualenv (`--quiet`: "false" for the hook to eval, status 1).
fn pyenv_virtualenv_plugin(home: &Home) {
    use std::os::unix::fs::PermissionsExt;
    let fixture = include_str!("fixtures/bash/pyenv-virtualenv.bash");
    let hook = &fixture[fixture.find("export PATH=").expect("the hook's PATH line")..];
    let bin = ".pyenv/plugins/pyenv-virtualenv/bin";
    home.write(&format!("{bin}/pyenv-virtualenv-init"), &format!("#!/bin/sh\ncat <<'HOOK'\n{hook}HOOK\n"));
    home.write(&format!("{bin}/pyenv-sh-activate"), "#!/bin/sh\necho false\nexit 1\n");
    for cmd in ["pyenv-virtualenv-init", "pyenv-sh-activate"] {
        let path = home.path().join(bin).join(cmd);
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// pyenv (Debian 13's, from scripts/test-deps.sh) with pyenv-virtualenv,
/// loaded as their READMEs say.
#[test]
fn pyenv_and_pyenv_virtualenv() {
    which("pyenv");
    let home = home_with(
        "PS1='PS1-MARK> '\nexport PYENV_ROOT=~/.pyenv\neval \"$(pyenv init - bash)\"\neval \"$(pyenv virtualenv-init -)\"\n",
    );
    pyenv_virtualenv_plugin(&home);
    std::fs::create_dir(home.path().join("venv-dir")).unwrap();
    let mut t = start(&home, MARK);
    check_session(&home, &mut t, MARK, "pyenv");
    run_at(&mut t, "type -t pyenv _pyenv_virtualenv_hook; echo init=$PYENV_VIRTUALENV_INIT", MARK);
    t.wait_text("init=1");
    t.with(|s| assert_eq!(s.rows().iter().filter(|r| *r == "function").count(), 2, "{}", s.text()));
    // The hook ran at each prompt, asking pyenv each time the directory
    // changed.
    run_at(&mut t, "cd venv-dir", MARK);
    run_at(&mut t, "echo \"vh=${_PYENV_VH_PWD##*/}\"", MARK);
    t.wait_text("vh=venv-dir");
}
