//! Shell integration over each real shell: markers, prompt, cwd.

use ua_term::osc::ShellEvent::{self, *};

use crate::support::*;

fn markers(t: &Term) -> Vec<ShellEvent> {
    events(t).into_iter().filter(|e| !matches!(e, Cwd(_))).collect()
}

#[test]
fn markers_arrive_in_order_with_exit_codes() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        run(&mut t, "true");
        run(&mut t, "false");
        run(&mut t, "sh -c 'exit 7'");
        let m = markers(&t);
        // fish repaints its prompt (A B again) at will: compare with
        // repeated A/B pairs collapsed.
        let mut collapsed: Vec<ShellEvent> = Vec::new();
        for e in m {
            let n = collapsed.len();
            if n >= 2 && collapsed[n - 2] == PromptStart && collapsed[n - 1] == InputStart && (e == PromptStart) {
                collapsed.truncate(n - 2);
            }
            collapsed.push(e);
        }
        assert_eq!(
            collapsed,
            vec![
                PromptStart,
                InputStart,
                CommandStart,
                CommandEnd(Some(0)),
                PromptStart,
                InputStart,
                CommandStart,
                CommandEnd(Some(1)),
                PromptStart,
                InputStart,
                CommandStart,
                CommandEnd(Some(7)),
                PromptStart,
                InputStart
            ],
            "{shell}"
        );
    }
}

#[test]
fn commands_work_and_the_users_prompt_survives() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        run(&mut t, "echo hi-$UA_TEST_VAR");
        t.with(|s| {
            let rows = s.rows();
            assert!(rows.iter().any(|r| r == "hi-from-env"), "{shell}: {rows:?}");
            assert!(rows.iter().filter(|r| r.starts_with("PS1-MARK>")).count() >= 2, "{shell}: {rows:?}");
        });
        // Nothing of the integration is visible: no typed `source`, no
        // script text, no stray escape residue.
        let text = t.screen_text();
        assert!(!text.contains("source") && !text.contains("133") && !text.contains("__ua"), "{shell}: {text}");
    }
}

#[test]
fn cwd_follows_cd() {
    for shell in SHELLS {
        let home = Home::new();
        std::fs::create_dir(home.path().join("sub dir")).unwrap();
        let mut t = home.start(shell);
        run(&mut t, "cd 'sub dir'");
        let want = home.path().join("sub dir").canonicalize().unwrap().to_string_lossy().into_owned();
        let cwds: Vec<String> =
            events(&t).into_iter().filter_map(|e| if let Cwd(p) = e { Some(p) } else { None }).collect();
        assert_eq!(cwds.last(), Some(&want), "{shell}: {cwds:?}");
    }
}

#[test]
fn user_prompt_command_and_hooks_keep_working() {
    let home = Home::new();
    home.write(".bashrc", "PS1='PS1-MARK> '\nPROMPT_COMMAND='echo -n pc-ran; __x=$?'\n");
    let mut t = home.start("bash");
    run(&mut t, "false");
    t.wait_raw_count(b"pc-ran", 2);
    // Our D marker still saw the command's own status.
    assert!(events(&t).contains(&CommandEnd(Some(1))));

    let home = Home::new();
    home.write(".zshrc", "PS1='PS1-MARK> '\nprecmd() { print -n zsh-precmd }\n");
    let mut t = home.start("zsh");
    run(&mut t, "false");
    t.wait_raw_count(b"zsh-precmd", 2);
    assert!(events(&t).contains(&CommandEnd(Some(1))));
}

#[test]
fn login_shells_read_login_files() {
    let home = Home::new();
    home.write(".bash_profile", "export LOGIN_MARK=bash-profile\n. ~/.bashrc\n");
    home.write(".zprofile", "export LOGIN_MARK=zprofile\n");
    for (shell, want) in [("bash", "bash-profile"), ("zsh", "zprofile")] {
        let mut t = home.spawn(shell).arg("--login").start();
        wait_prompt(&t, 1);
        run(&mut t, "echo mark=$LOGIN_MARK");
        t.wait_text(&format!("mark={want}"));
    }
}
