//! The agent's `git log` runs without a question and without a pager, in
//! a repository longer than the screen, while the user's own `git log` in
//! the same shell still pages.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::agent::{messages, model, tool_results};
use crate::support::*;

const GIT_LOG: &str = r#"
[[turn]]
text = "Looking at the history."
tool_calls = [{ name = "shell", input = { command = "git log" } }]

[[turn]]
text = "Sixty commits, newest first."
"#;

const COMMITS: usize = 60;

fn git(dir: &Path, home: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn the_agents_git_log_does_not_page_and_the_users_still_does() {
    for shell in ["bash", "zsh"] {
        let home = Home::new();
        // The user's pager, from their own ~/.gitconfig: it leaves a mark
        // each time it runs and passes the text through.
        let marker = home.path().join("pager-ran");
        let pager = home.path().join("bin/my-pager");
        home.write("bin/my-pager", &format!("#!/bin/sh\necho ran >> '{}'\nexec cat\n", marker.display()));
        std::fs::set_permissions(&pager, std::fs::Permissions::from_mode(0o755)).unwrap();
        home.write(".gitconfig", &format!("[core]\n\tpager = {}\n", pager.display()));
        home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
        let repo = home.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, home.path(), &["init", "-q"]);
        for i in 1..=COMMITS {
            git(&repo, home.path(), &["commit", "-q", "--allow-empty", "-m", &format!("commit number {i}")]);
        }

        let server = model(GIT_LOG);
        let mut t = home
            .spawn(shell)
            .cwd(&repo)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .start();
        wait_prompt(&t, 1);
        let n = prompts(&t);
        t.send("# what happened lately?\r");
        // No question: the default policy runs it, as edited.
        t.wait_text("runs as: git --no-pager log");
        t.wait_text("Sixty commits, newest first.");
        wait_prompt(&t, n + 1);
        assert!(!t.screen_text().contains("[y] run"), "{shell}: the agent's git log asked:\n{}", t.screen_text());
        let results = tool_results(&messages(&server, 1));
        assert_eq!(results.len(), 1, "{shell}: {results:?}");
        let (text, is_error) = &results[0];
        assert!(!is_error && text.contains("exit status: 0"), "{shell}: {text}");
        for i in [1, COMMITS / 2, COMMITS] {
            let subject = format!("commit number {i}");
            assert!(text.lines().any(|l| l.trim() == subject), "{shell}: {subject} is missing from {text}");
        }
        assert!(!marker.exists(), "{shell}: the pager ran for the agent's command");

        // The user's own git log, typed in the same shell, still pages.
        run(&mut t, "git log -3");
        t.wait_text("commit number 58");
        assert!(marker.exists(), "{shell}: the user's git log did not page");
    }
}
