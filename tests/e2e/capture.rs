//! `#` capture at the prompt, and everywhere it must not happen.

use crate::support::*;

/// Instructions that reached the model.
fn captured(home: &Home) -> usize {
    home.instructions().len()
}

#[test]
fn hash_at_the_prompt_is_captured_and_the_prompt_comes_back() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        t.send("# find big files");
        t.wait_text("PS1-MARK> # find big files");
        let n = prompts(&t);
        t.send("\r");
        t.wait_text(REPLY);
        assert_eq!(home.wait_instructions(1), vec!["find big files"], "{shell}");
        wait_prompt(&t, n + 1);
        // The shell never saw the line: nothing ran, $? is untouched.
        run(&mut t, &format!("echo status={}", status_var(shell)));
        t.wait_text("status=0");
        assert!(!t.screen_text().contains("command not found"), "{shell}");
    }
}

#[test]
fn hash_is_not_captured_inside_commands() {
    let home = Home::new();
    let mut t = home.start("bash");
    // A heredoc.
    run(&mut t, "cat <<'EOF'\r# inside heredoc\rEOF");
    t.wait_text("# inside heredoc");
    // cat reading the terminal.
    t.send("cat\r");
    t.wait_for("cat running", |s| our_markers(s.raw(), 'C') >= 2);
    t.send("# to cat\r");
    t.wait_for("cat echo", |s| s.text().matches("# to cat").count() >= 2);
    let n = prompts(&t);
    t.send("\x04");
    wait_prompt(&t, n + 1);
    // `read`.
    t.send("read -r line; echo got:$line\r");
    t.wait_for("read running", |s| our_markers(s.raw(), 'C') >= 3);
    t.send("# to read\r");
    t.wait_text("got:# to read");
    // A python REPL.
    t.send("python3 -q\r");
    t.wait_text(">>> ");
    t.send("# to python\r");
    t.send("print('py' + 'ok')\r");
    t.wait_text("pyok");
    let n = prompts(&t);
    t.send("exit()\r");
    wait_prompt(&t, n + 1);
    assert_eq!(captured(&home), 0, "{}", t.screen_text());
}

#[test]
fn hash_is_not_captured_in_vim() {
    let home = Home::new();
    let mut t = home.start("bash");
    run(&mut t, "echo before-vim");
    let before = t.screen_text();
    t.send("vim -u NONE -N note.txt\r");
    t.wait_for("vim", |s| s.screen().alternate_screen());
    t.send("i# in vim\x1b:wq\r");
    t.wait_for("vim gone", |s| !s.screen().alternate_screen());
    wait_prompt(&t, 3);
    assert_eq!(std::fs::read_to_string(home.path().join("note.txt")).unwrap(), "# in vim\n");
    assert_eq!(captured(&home), 0);
    // The screen is as it was, plus the vim command line.
    let after = t.screen_text();
    assert!(after.starts_with(before.trim_end()), "before:\n{before}\nafter:\n{after}");
}

#[test]
fn escaped_hash_is_a_literal_comment() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        run(&mut t, "\\# just a comment");
        // The shell got the line itself (zsh, without interactivecomments,
        // even complains about it, as it would without unixagent).
        assert!(events(&t).iter().any(|e| matches!(e, ua_term::osc::ShellEvent::CommandEnd(_))) || shell != "zsh");
        assert_eq!(captured(&home), 0, "{shell}");
        assert!(t.screen_text().contains("PS1-MARK> # just a comment"), "{shell}: {}", t.screen_text());
    }
}

#[test]
fn backspace_over_hash_gives_the_line_back() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        t.send("#");
        t.wait_text("PS1-MARK> #");
        t.send("\x7f");
        t.wait_for("hash erased", |s| s.cursor_row() == "PS1-MARK>");
        run(&mut t, "echo back-in-shell");
        t.wait_text("\nback-in-shell");
        assert_eq!(captured(&home), 0, "{shell}");
    }
}

#[test]
fn editing_keys_work_on_an_instruction() {
    let home = Home::new();
    let mut t = home.start("bash");
    // Type, fix a typo in the middle, drop a word, recall history.
    t.send("# lsit");
    t.send("\x1b[D\x1b[D\x7f\x1b[Cs");
    t.send("\x1b[F filse\x17files\r");
    t.wait_text(REPLY);
    assert_eq!(home.wait_instructions(1), vec!["list files"]);
    wait_prompt(&t, 2);
    t.send("#\x1b[A");
    t.wait_for("history recall", |s| s.cursor_row() == "PS1-MARK> #list files");
    t.send("\x03");
    t.wait_for("abandoned", |s| s.cursor_row() == "PS1-MARK>");
    run(&mut t, "echo still-fine");
    t.wait_text("\nstill-fine");
}

#[test]
fn pasted_hash_block_is_one_instruction() {
    for shell in SHELLS {
        let home = Home::new();
        let mut t = home.start(shell);
        // Bracketed paste, as terminals send it when the shell asks.
        t.send("\x1b[200~# deploy to staging,\r# then run the tests\r\x1b[201~");
        t.wait_text("#deploy to staging, then run the tests");
        t.send("\r");
        t.wait_text(REPLY);
        assert_eq!(home.wait_instructions(1), vec!["deploy to staging, then run the tests"], "{shell}");
    }
    // Without bracketed paste: lines arriving together are still one.
    let home = Home::new();
    let mut t = home.start("bash");
    t.send("# one\r# two\r");
    t.wait_text(REPLY);
    assert_eq!(home.wait_instructions(1), vec!["one two"]);
}

#[test]
fn heuristic_mode_uses_double_hash() {
    let home = Home::new();
    let mut t = Spawn::new(unixagent())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("PS1", "dash$ ")
        .cwd(home.path())
        .args(["--shell", "/bin/dash"])
        .start();
    t.wait_text("start instructions with ##");
    t.wait_text("dash$ ");
    t.send("# a plain comment\r");
    t.wait_for("second prompt", |s| s.text().matches("dash$").count() >= 2);
    assert_eq!(captured(&home), 0);
    t.send("## find big files\r");
    t.wait_text(REPLY);
    assert_eq!(home.wait_instructions(1), vec!["find big files"]);
    t.wait_for("prompt after capture", |s| s.cursor_row() == "dash$");
    t.send("echo ok-$((1+1))\r");
    t.wait_text("ok-2");
}
