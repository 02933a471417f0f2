//! git: subcommand- and option-aware, because git runs other programs
//! through its configuration (core.pager, `pager.<cmd>`, aliases, hooks,
//! core.sshCommand) and `-c` lets a command line set any of them.

use super::args::Args;
use super::programs::{Verdict, v};
use crate::parse::Part;
use crate::risk::Risk;

/// Global options that take a value before the subcommand.
const VALUE_OPTS: [&str; 5] = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

pub(crate) fn rule(part: &Part) -> Verdict {
    let args = part.args();
    let mut i = 0;
    let mut no_pager = false;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "-c" || t.starts_with("--config-env") || t.starts_with("--exec-path=") {
            // `git -c core.pager='sh -c …' log` runs anything.
            return v(Risk::Write, "git -c/--exec-path can make git run any program");
        }
        if t == "--no-pager" || t == "-P" {
            no_pager = true;
        } else if t == "-p" || t == "--paginate" {
            return v(Risk::Write, "git --paginate runs the configured pager");
        }
        if VALUE_OPTS.contains(&t) {
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            break;
        }
        i += 1;
    }
    let Some(sub) = args.get(i).map(|a| a.text.as_str()) else {
        return v(Risk::ReadOnly, "prints git usage");
    };
    let rest = Args(args.get(i + 1..).unwrap_or_default());
    let no_pager = no_pager || super::pager_disabled(part, &["GIT_PAGER", "PAGER"]);
    let paged = |reason| {
        if no_pager || part.stdout_redirected {
            v(Risk::ReadOnly, "reads the repository")
        } else {
            v(Risk::Write, reason)
        }
    };
    const PAGER: &str = "git pages through core.pager/$GIT_PAGER, which may be any program";
    // `git help log` and `git log --help` run man (or a configured viewer),
    // which pages on a terminal whatever `--no-pager` says.
    if sub == "help" && !rest.0.is_empty() || rest.has("--help") {
        return if part.stdout_redirected {
            v(Risk::ReadOnly, "prints git's manual")
        } else {
            v(Risk::Write, "git help shows the manual through man's pager or a configured viewer")
        };
    }
    match sub {
        "status" | "rev-parse" | "ls-files" | "ls-tree" | "cat-file" | "rev-list" | "describe" | "merge-base"
        | "show-ref" | "check-ignore" | "check-attr" | "var" | "version" | "count-objects" | "for-each-ref"
        | "name-rev" | "verify-commit" | "verify-tag" | "fsck" | "diff-tree" | "diff-files" | "diff-index"
        | "hash-object" | "show-branch" => {
            if sub == "hash-object" && rest.flag('w', "") {
                v(Risk::Write, "writes objects")
            } else {
                v(Risk::ReadOnly, "reads the repository")
            }
        }
        "log" | "show" | "diff" | "blame" | "shortlog" | "grep" | "whatchanged" => {
            if rest.has_prefix("--output") {
                v(Risk::Write, "writes an output file")
            } else if sub == "grep" && (rest.has_prefix("-O") || rest.has_prefix("--open-files-in-pager")) {
                v(Risk::Write, "git grep -O runs a pager on the matches")
            } else if sub == "diff" && rest.has("--ext-diff") || rest.has("--textconv") {
                v(Risk::Write, "runs configured diff drivers")
            } else {
                paged(PAGER)
            }
        }
        "reflog" => match rest.first_operand() {
            Some("expire" | "delete") => v(Risk::Destructive, "drops reflog entries"),
            _ => paged(PAGER),
        },
        "branch" => {
            if rest.flag('D', "") || rest.has("--delete") && rest.flag('f', "force") {
                v(Risk::Destructive, "force-deletes branches")
            } else if rest.flag('d', "delete")
                || rest.flag('m', "move")
                || rest.flag('M', "")
                || rest.flag('c', "copy")
                || rest.has_prefix("--set-upstream")
                || rest.flag('u', "")
                || !rest.operands().is_empty()
                    && !rest.flag('l', "list")
                    && !rest.has("--contains")
                    && !rest.has("--merged")
            {
                v(Risk::Write, "changes branches")
            } else {
                paged(PAGER)
            }
        }
        "tag" => {
            if rest.flag('d', "delete") {
                v(Risk::Write, "deletes tags")
            } else if rest.operands().is_empty() || rest.flag('l', "list") {
                paged(PAGER)
            } else {
                v(Risk::Write, "creates tags")
            }
        }
        "help" => v(Risk::ReadOnly, "prints git usage"),
        "remote" => match rest.first_operand() {
            None => v(Risk::ReadOnly, "lists remotes"),
            Some("show" | "update" | "prune") => v(Risk::Network, "contacts the remote"),
            Some("get-url") => v(Risk::ReadOnly, "lists remotes"),
            Some(_) => v(Risk::Write, "changes remotes"),
        },
        "config" => {
            let reads = rest.has("--get")
                || rest.has("--get-all")
                || rest.has("--get-regexp")
                || rest.flag('l', "list")
                || matches!(rest.first_operand(), Some("get" | "list"));
            // Listing pages (git's PAGING_ACTIONS: --list, --get-all,
            // --get-regexp, --get-urlmatch); a single --get does not.
            let lists = rest.flag('l', "list")
                || rest.has("--get-all")
                || rest.has("--get-regexp")
                || rest.has("--get-urlmatch")
                || rest.first_operand() == Some("list")
                || rest.first_operand() == Some("get") && (rest.has("--all") || rest.has("--regexp"));
            if lists {
                paged(PAGER)
            } else if reads || rest.operands().len() == 1 && !rest.has("--unset") && !rest.has("--edit") {
                v(Risk::ReadOnly, "reads configuration")
            } else {
                v(Risk::Write, "changes configuration (which can name programs git runs)")
            }
        }
        "stash" => match rest.first_operand() {
            Some("list" | "show") => paged(PAGER),
            Some("drop" | "clear") => v(Risk::Destructive, "drops stashed changes"),
            _ => v(Risk::Write, "changes the working tree"),
        },
        "checkout" | "switch" => {
            if rest.flag('f', "force")
                || rest.has(".")
                || rest.has("--") && !rest.operands().is_empty()
                || rest.flag('B', "")
            {
                v(Risk::Destructive, "discards local changes")
            } else {
                v(Risk::Write, "changes the working tree")
            }
        }
        "restore" => v(Risk::Destructive, "discards local changes"),
        "reset" => {
            if rest.has("--hard") || rest.has("--merge") || rest.has("--keep") {
                v(Risk::Destructive, "discards local changes")
            } else {
                v(Risk::Write, "moves HEAD or the index")
            }
        }
        "clean" => {
            if rest.flag('n', "dry-run") && !rest.flag('f', "force") {
                v(Risk::ReadOnly, "lists untracked files")
            } else {
                v(Risk::Destructive, "deletes untracked files")
            }
        }
        "filter-branch" | "filter-repo" | "gc" | "prune" | "replace" => {
            v(Risk::Destructive, "rewrites or prunes history")
        }
        // commit, merge, rebase and friends run repository hooks.
        "add" | "commit" | "merge" | "rebase" | "cherry-pick" | "revert" | "am" | "apply" | "mv" | "rm" | "init"
        | "worktree" | "notes" | "update-ref" | "update-index" | "symbolic-ref" | "bisect" | "mergetool"
        | "difftool" | "format-patch" | "bundle" | "sparse-checkout" | "maintenance" | "lfs" | "restore-staged"
        | "commit-tree" | "read-tree" | "write-tree" | "citool" | "gui" | "instaweb" | "archive" => {
            if sub == "archive" && rest.has_prefix("--remote") {
                v(Risk::Network, "contacts the remote")
            } else {
                v(Risk::Write, "changes the repository (and may run hooks)")
            }
        }
        "clone" | "fetch" | "pull" | "push" | "ls-remote" | "submodule" | "send-email" | "request-pull" | "svn"
        | "p4" | "daemon" | "http-backend" | "credential" => v(Risk::Network, "talks to a remote"),
        // Anything else may be an alias, and `alias.x = !cmd` runs a shell.
        _ => v(Risk::Write, "unknown git subcommand (aliases can run shell commands)"),
    }
}
