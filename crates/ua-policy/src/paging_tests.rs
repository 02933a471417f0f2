use super::*;
use crate::classify::analyze;
use crate::risk::Risk;

fn edit(cmd: &str) -> Option<String> {
    turn_off(&analyze(cmd)).map(|e| e.command)
}

fn edits_to(cmd: &str, want: &str) {
    assert_eq!(edit(cmd).as_deref(), Some(want), "{cmd}");
    assert_eq!(analyze(want).risk, Risk::ReadOnly, "{want} should be read-only");
}

#[test]
fn git_gets_no_pager_right_after_the_git_word() {
    edits_to("git log", "git --no-pager log");
    edits_to("git log --oneline -20", "git --no-pager log --oneline -20");
    edits_to("git -C sub log -3", "git --no-pager -C sub log -3");
    edits_to("git -C 'my dir' diff --stat", "git --no-pager -C 'my dir' diff --stat");
    edits_to("  git   show HEAD", "  git --no-pager   show HEAD");
    edits_to("git branch -a", "git --no-pager branch -a");
    edits_to("git stash list", "git --no-pager stash list");
    edits_to("git tag", "git --no-pager tag");
    edits_to("git blame README.md", "git --no-pager blame README.md");
    edits_to("/usr/bin/git log", "/usr/bin/git --no-pager log");
    // Also read with D unset (`git -C "" log`): one switch serves both.
    assert_eq!(edit("git -C \"$D\" log").as_deref(), Some("git --no-pager -C \"$D\" log"));
}

#[test]
fn quoted_and_escaped_program_words_keep_their_quotes() {
    edits_to("\"git\" log", "\"git\" --no-pager log");
    edits_to("'git' log", "'git' --no-pager log");
    edits_to("\\git log", "\\git --no-pager log");
    edits_to("g''it log", "g''it --no-pager log");
}

#[test]
fn every_top_level_invocation_in_lists_and_groups() {
    edits_to("git status && git log -5", "git status && git --no-pager log -5");
    edits_to("git diff; git log", "git --no-pager diff; git --no-pager log");
    edits_to("git log || echo none", "git --no-pager log || echo none");
    edits_to("cd sub && git log", "cd sub && git --no-pager log");
    edits_to("(cd sub && git diff)", "(cd sub && git --no-pager diff)");
    edits_to("{ git log -1; git show; }", "{ git --no-pager log -1; git --no-pager show; }");
    edits_to("for b in a b; do git log $b; done", "for b in a b; do git --no-pager log $b; done");
    edits_to("if git diff --quiet; then echo same; fi", "if git --no-pager diff --quiet; then echo same; fi");
    edits_to("git log\ngit diff", "git --no-pager log\ngit --no-pager diff");
    edits_to("LC_ALL=C git log", "LC_ALL=C git --no-pager log");
    edits_to("time git log", "time git --no-pager log");
}

#[test]
fn here_documents_and_continued_lines_keep_positions() {
    edits_to("cat <<EOF\nhello git log\nEOF\ngit log", "cat <<EOF\nhello git log\nEOF\ngit --no-pager log");
    edits_to("git \\\n  log -3", "git --no-pager \\\n  log -3");
    edits_to("echo 'a\nb' && git diff", "echo 'a\nb' && git --no-pager diff");
}

#[test]
fn positions_count_characters_not_bytes() {
    edits_to("echo 'héllo wörld' && git log", "echo 'héllo wörld' && git --no-pager log");
    edits_to("echo '日本' ; git show", "echo '日本' ; git --no-pager show");
}

#[test]
fn output_that_is_not_the_terminal_is_left_alone() {
    for cmd in [
        "git log | cat",
        "git log --oneline | head -5",
        "git log > log.txt",
        "x=$(git log -1)",
        "git log >/dev/null 2>&1",
        "diff <(git show a:f) <(git show b:f)",
    ] {
        assert_eq!(edit(cmd), None, "{cmd}");
    }
    // Duplicating stdout onto stderr keeps the terminal: that pages.
    edits_to("git log 1>&2", "git --no-pager log 1>&2");
}

#[test]
fn commands_that_do_not_page_or_already_do_not_are_left_alone() {
    for cmd in [
        "git status",
        "git --no-pager log",
        "git -P log",
        "GIT_PAGER=cat git log",
        "PAGER= git log",
        "git rev-parse HEAD",
        "git commit -m x",
        "git push",
        "echo \"git log\"",
        "echo git log",
        "ls",
        "journalctl --no-pager -n 5",
        "systemctl status --no-pager",
        "MANPAGER=cat man ls",
        "man ls | cat",
    ] {
        assert_eq!(edit(cmd), None, "{cmd}");
    }
}

#[test]
fn nested_strings_are_not_edited_and_still_ask() {
    for cmd in ["sh -c 'git log'", "bash -c \"git diff\"", "eval git log", "watch git log", "ssh host git log"] {
        assert_eq!(edit(cmd), None, "{cmd}");
        assert!(analyze(cmd).risk >= Risk::Write, "{cmd}");
    }
}

#[test]
fn forcing_the_pager_or_asking_for_help_is_left_to_ask() {
    for cmd in ["git -p log", "git --paginate status", "git help log", "git log --help"] {
        assert_eq!(edit(cmd), None, "{cmd}");
        assert!(analyze(cmd).risk >= Risk::Write, "{cmd}");
    }
}

#[test]
fn wrappers_keep_their_place() {
    edits_to("timeout 10 git log", "timeout 10 git --no-pager log");
    edits_to("env LC_ALL=C git diff", "env LC_ALL=C git --no-pager diff");
    edits_to("nice -n 5 git log", "nice -n 5 git --no-pager log");
    // Still asked about for its other reasons, but the pager is off.
    assert_eq!(edit("sudo git log").as_deref(), Some("sudo git --no-pager log"));
    assert_eq!(edit("git log &").as_deref(), Some("git --no-pager log &"));
}

#[test]
fn systemd_tools_and_man() {
    edits_to("journalctl -n 50", "journalctl --no-pager -n 50");
    edits_to("journalctl -u nginx --since today", "journalctl --no-pager -u nginx --since today");
    edits_to("systemctl status docker", "systemctl --no-pager status docker");
    edits_to("systemctl list-units --type=service", "systemctl --no-pager list-units --type=service");
    edits_to("man grep", "MANPAGER=cat man grep");
    edits_to("man 5 crontab", "MANPAGER=cat man 5 crontab");
    edits_to("LANG=C man ls", "LANG=C MANPAGER=cat man ls");
    // An assignment cannot follow a wrapper.
    assert_eq!(edit("timeout 5 man ls"), None);
    // Changing services is not a read, whatever the pager.
    assert_eq!(edit("systemctl restart nginx"), None);
    // less and info have no such switch.
    assert_eq!(edit("less README.md"), None);
}

#[test]
fn denied_commands_are_not_edited_and_stay_denied() {
    assert_eq!(edit("git log; rm -rf /"), None);
    assert_eq!(analyze("git log; rm -rf /").risk, Risk::Denied);
}

#[test]
fn other_parts_are_untouched_and_never_rate_lower() {
    let a = analyze("git log && rm -rf build");
    let e = turn_off(&a).unwrap();
    assert_eq!(e.command, "git --no-pager log && rm -rf build");
    assert_eq!(e.analysis.risk, a.risk);
    assert_eq!(e.analysis.parts[0].risk, Risk::ReadOnly);
}

#[test]
fn insert_works_at_either_end_and_refuses_bad_offsets() {
    let at = |v: &[(usize, &str)]| v.iter().map(|(o, t)| (*o, t.to_string(), 0)).collect::<Vec<_>>();
    assert_eq!(insert("ab", &at(&[(0, "<"), (2, ">")])).as_deref(), Some("<ab>"));
    assert_eq!(insert("ab", &at(&[(3, "!")])), None);
    assert_eq!(insert("é", &at(&[(1, "!")])).as_deref(), Some("é!"));
}
