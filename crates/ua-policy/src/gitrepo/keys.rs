//! Which configuration keys make which git subcommand run a program, as
//! read in git 2.39's source.
//!
//! | key | run by |
//! |---|---|
//! | `include.path`, `includeIf.<cond>.path` | any: the included file may set anything below |
//! | `core.fsmonitor` (not a boolean) | any command that reads the index (`tweak_fsmonitor` after every index load) |
//! | `core.pager`, `pager.<cmd>` | `<cmd>` when it may page: stdout a terminal, no `--no-pager` |
//! | `diff.external`, `diff.<driver>.command` | `git diff` (`allow_external`), anything with `--ext-diff` |
//! | `diff.<driver>.textconv` | `diff`, `log`, `show`, `whatchanged`, `reflog`, `blame`, `stash show` (`allow_textconv`), `--textconv` |
//! | `filter.<driver>.clean` / `.process` | commands that compare work tree files with the index: `status`, `diff`, `diff-files`, `diff-index`, `blame`, `describe --dirty`, `ls-files -m`, `hash-object` |
//! | `filter.<driver>.smudge` / `.process` | `cat-file --filters` (checkouts are not read-only) |
//! | `lfs.extension.<name>.clean` / `.smudge` | git-lfs's own filter, which runs them |
//! | `gpg.program`, `gpg.<format>.program` | signature checks: `log`/`show` (`log.showSignature`, `%G?`), `verify-commit`, `verify-tag`, `tag -v` |
//! | `man.viewer`, `man.<tool>.cmd`/`.path`, `help.browser`, `help.format`, `web.browser`, `browser.<tool>.cmd`/`.path` | `git help`, `--help` |
//! | the `post-index-change` hook | commands that refresh and write the index: `status`, `diff`, `describe --dirty` |
//!
//! `core.hooksPath` only says where hooks are. The only hook a read-only
//! command runs is `post-index-change`, which is checked in that
//! directory; any other hook there (husky's `pre-commit`, …) is not run by
//! these commands, so setting the key is not itself a reason to ask.
//!
//! The values `git lfs install` writes (`git-lfs clean -- %f`,
//! `git-lfs smudge -- %f`, `git-lfs filter-process`, and their `--skip`
//! forms) run the user's own git-lfs from their PATH, which a repository
//! cannot change, so those exact values are trusted. What git-lfs itself
//! runs from the repository's configuration (`lfs.extension.*`) is not:
//! its `.lfsconfig` cannot set those keys, `.git/config` can.

use super::config::{Entry, maybe_bool};
use crate::classify::args::Args;

/// What a git invocation may do that configuration can point at a program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses(u16);

impl Uses {
    /// A pager may start (stdout is a terminal and paging is not off).
    pub const PAGER: Uses = Uses(1);
    /// External diff drivers may run.
    pub const EXTERNAL_DIFF: Uses = Uses(1 << 1);
    /// textconv drivers may run.
    pub const TEXTCONV: Uses = Uses(1 << 2);
    /// Clean filters may run on work tree files.
    pub const CLEAN: Uses = Uses(1 << 3);
    /// Smudge filters may run.
    pub const SMUDGE: Uses = Uses(1 << 4);
    /// The index may be written, which runs `post-index-change`.
    pub const INDEX_HOOK: Uses = Uses(1 << 5);
    /// Signatures may be checked.
    pub const SIGNATURES: Uses = Uses(1 << 6);
    /// A manual viewer or browser may start.
    pub const HELP: Uses = Uses(1 << 7);
    /// git runs itself inside each checked-out submodule.
    pub const SUBMODULES: Uses = Uses(1 << 8);

    /// No use.
    pub const fn none() -> Uses {
        Uses(0)
    }

    /// Both sets.
    pub const fn with(self, o: Uses) -> Uses {
        Uses(self.0 | o.0)
    }

    /// True when every use in `o` is in `self`.
    pub const fn has(self, o: Uses) -> bool {
        self.0 & o.0 == o.0
    }

    /// True when any use in `o` is in `self`.
    pub const fn any(self, o: Uses) -> bool {
        self.0 & o.0 != 0
    }
}

/// What `git SUB REST…` may do; `pages` when its pager may start.
pub fn uses(sub: &str, rest: Args<'_>, pages: bool) -> Uses {
    let mut u = match sub {
        "status" => Uses::CLEAN.with(Uses::INDEX_HOOK).with(Uses::SUBMODULES),
        "diff" => {
            Uses::EXTERNAL_DIFF.with(Uses::TEXTCONV).with(Uses::CLEAN).with(Uses::INDEX_HOOK).with(Uses::SUBMODULES)
        }
        "diff-files" | "diff-index" => Uses::CLEAN.with(Uses::SUBMODULES),
        "describe" => Uses::CLEAN.with(Uses::INDEX_HOOK).with(Uses::SUBMODULES),
        "log" | "show" | "whatchanged" | "reflog" | "stash" => Uses::TEXTCONV.with(Uses::SIGNATURES),
        "blame" | "annotate" => Uses::TEXTCONV.with(Uses::CLEAN),
        "ls-files" | "hash-object" => Uses::CLEAN,
        "tag" | "verify-commit" | "verify-tag" => Uses::SIGNATURES,
        "help" => Uses::HELP,
        _ => Uses::none(),
    };
    if pages {
        u = u.with(Uses::PAGER);
    }
    for (flag, use_) in [
        ("--ext-diff", Uses::EXTERNAL_DIFF),
        ("--textconv", Uses::TEXTCONV),
        ("--show-signature", Uses::SIGNATURES),
        ("--help", Uses::HELP),
        ("--filters", Uses::SMUDGE),
    ] {
        if rest.has(flag) {
            u = u.with(use_);
        }
    }
    if rest.has_prefix("--recurse-submodules") {
        u = u.with(Uses::SUBMODULES);
    }
    u
}

/// How an entry matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matter {
    /// It names a program git runs.
    Runs,
    /// It includes another file, which may name one.
    Includes,
}

/// Whether `e` makes `git sub` (doing `uses`) run a program.
pub fn matters(e: &Entry, uses: Uses, sub: &str) -> Option<Matter> {
    let value = e.value.as_deref();
    let names_program = value.is_some_and(|v| !v.trim().is_empty());
    let runs = |when: bool| (when && names_program).then_some(Matter::Runs);
    match (e.section(), e.subsection(), e.key()) {
        ("include", None, "path") | ("includeif", Some(_), "path") => Some(Matter::Includes),
        // A boolean turns git's own daemon on or off; any other value is
        // a hook program.
        ("core", None, "fsmonitor") => (maybe_bool(value).is_none()).then_some(Matter::Runs),
        ("core", None, "pager") => runs(uses.has(Uses::PAGER)),
        // `pager.<cmd> = true` pages through core.pager or the user's
        // pager, a string is the pager itself: either holds the terminal.
        ("pager", None, cmd) => {
            (uses.has(Uses::PAGER) && cmd == sub && maybe_bool(value) != Some(false)).then_some(Matter::Runs)
        }
        ("diff", None, "external") | ("diff", Some(_), "command") => runs(uses.has(Uses::EXTERNAL_DIFF)),
        ("diff", Some(_), "textconv") => runs(uses.has(Uses::TEXTCONV)),
        ("filter", Some(_), key @ ("clean" | "smudge" | "process")) => {
            let when = match key {
                "clean" => uses.has(Uses::CLEAN),
                "smudge" => uses.has(Uses::SMUDGE),
                _ => uses.any(Uses::CLEAN.with(Uses::SMUDGE)),
            };
            runs(when && !value.is_some_and(is_git_lfs))
        }
        ("lfs", Some(ext), "clean" | "smudge") if ext.starts_with("extension.") => {
            runs(uses.any(Uses::CLEAN.with(Uses::SMUDGE)))
        }
        ("gpg", _, "program") => runs(uses.has(Uses::SIGNATURES)),
        ("man", None, "viewer")
        | ("man", Some(_), "cmd" | "path")
        | ("help", None, "browser" | "format")
        | ("web", None, "browser")
        | ("browser", Some(_), "cmd" | "path") => runs(uses.has(Uses::HELP)),
        _ => None,
    }
}

/// The filter commands `git lfs install` writes.
fn is_git_lfs(value: &str) -> bool {
    matches!(
        value,
        "git-lfs clean -- %f"
            | "git-lfs smudge -- %f"
            | "git-lfs smudge --skip -- %f"
            | "git-lfs filter-process"
            | "git-lfs filter-process --skip"
    )
}

#[cfg(test)]
mod tests {
    use super::super::config::parse;
    use super::*;
    use crate::parse::Arg;

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    fn first_match(config: &str, command: &str, pages: bool) -> Option<(String, Matter)> {
        let a = args(command);
        let (sub, rest) = a.split_first().unwrap();
        let u = uses(&sub.text, Args(rest), pages);
        parse(config.as_bytes()).entries.iter().find_map(|e| matters(e, u, &sub.text).map(|m| (e.name.clone(), m)))
    }

    fn runs(config: &str, command: &str) -> bool {
        first_match(config, command, false).is_some()
    }

    #[test]
    fn external_diff_runs_for_diff_only_unless_asked_for() {
        let c = "[diff]\n\texternal = /tmp/evil\n";
        assert!(runs(c, "diff"));
        assert!(runs(c, "diff --cached"));
        assert!(!runs(c, "log -p"));
        assert!(runs(c, "log -p --ext-diff"));
        assert!(!runs(c, "status"));
        assert!(runs("[diff \"x\"]\ncommand = evil\n", "diff HEAD~1"));
    }

    #[test]
    fn textconv_runs_for_commands_that_show_patches_and_blame() {
        let c = "[diff \"pdf\"]\ntextconv = /tmp/evil\n";
        for cmd in
            ["diff", "log -p", "show HEAD", "blame README.md", "stash show -p", "whatchanged", "grep --textconv x"]
        {
            assert!(runs(c, cmd), "{cmd}");
        }
        for cmd in ["status", "grep x", "rev-parse HEAD", "branch -a"] {
            assert!(!runs(c, cmd), "{cmd}");
        }
    }

    #[test]
    fn clean_filters_run_where_the_work_tree_is_compared() {
        let c = "[filter \"crypt\"]\nclean = /tmp/evil %f\n";
        for cmd in ["status", "diff", "blame x", "describe --dirty", "ls-files -m", "hash-object f"] {
            assert!(runs(c, cmd), "{cmd}");
        }
        for cmd in ["log", "show", "branch", "cat-file -p HEAD"] {
            assert!(!runs(c, cmd), "{cmd}");
        }
        let s = "[filter \"crypt\"]\nsmudge = /tmp/evil %f\n";
        assert!(!runs(s, "status"));
        assert!(runs(s, "cat-file --filters HEAD:x"));
        assert!(runs("[filter \"crypt\"]\nprocess = /tmp/evil\n", "status"));
    }

    #[test]
    fn git_lfs_as_installed_is_trusted_and_its_extensions_are_not() {
        let lfs = "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\t\
                   process = git-lfs filter-process\n\trequired = true\n";
        assert!(!runs(lfs, "status"));
        assert!(!runs(lfs, "diff"));
        assert!(!runs(
            "[filter \"lfs\"]\nsmudge = git-lfs smudge --skip -- %f\nprocess = git-lfs filter-process --skip\n",
            "cat-file --filters x"
        ));
        // A lookalike value is not git-lfs as installed; unquoted, `;`
        // starts a comment, so git itself reads the exact value.
        assert!(runs("[filter \"lfs\"]\nclean = \"git-lfs clean -- %f; touch /tmp/pwned\"\n", "status"));
        assert!(!runs("[filter \"lfs\"]\nclean = git-lfs clean -- %f; touch /tmp/pwned\n", "status"));
        assert!(runs("[filter \"lfs\"]\nclean = ./git-lfs clean -- %f\n", "status"));
        let ext = format!("{lfs}[lfs \"extension.gz\"]\nclean = /tmp/evil %f\npriority = 0\n");
        assert!(runs(&ext, "status"));
    }

    #[test]
    fn fsmonitor_runs_for_everything_unless_it_is_a_boolean() {
        for cmd in ["status", "log", "diff", "branch", "rev-parse HEAD"] {
            assert!(runs("[core]\nfsmonitor = /tmp/evil\n", cmd), "{cmd}");
            assert!(!runs("[core]\nfsmonitor = true\n", cmd), "{cmd}");
            assert!(!runs("[core]\nfsmonitor = false\n", cmd), "{cmd}");
        }
    }

    #[test]
    fn includes_are_unknowable() {
        assert_eq!(first_match("[include]\npath = ../x\n", "log", false).map(|m| m.1), Some(Matter::Includes));
        assert_eq!(
            first_match("[includeIf \"gitdir:/x/\"]\npath = y\n", "status", false).map(|m| m.1),
            Some(Matter::Includes)
        );
    }

    #[test]
    fn pagers_matter_only_when_the_command_may_page() {
        let c = "[pager]\nstatus = /tmp/evil\n";
        assert!(first_match(c, "status", true).is_some());
        assert!(first_match(c, "status", false).is_none());
        assert!(first_match(c, "log", true).is_none());
        assert!(first_match("[pager]\nstatus = false\n", "status", true).is_none());
        assert!(first_match("[pager]\nstatus\n", "status", true).is_some());
        assert!(first_match("[core]\npager = /tmp/evil\n", "status", true).is_some());
        assert!(first_match("[core]\npager = /tmp/evil\n", "log", false).is_none());
    }

    #[test]
    fn gpg_programs_matter_where_signatures_are_checked() {
        for c in ["[gpg]\nprogram = /tmp/evil\n", "[gpg \"ssh\"]\nprogram = /tmp/evil\n"] {
            for cmd in ["log", "show", "verify-commit HEAD", "tag -v v1", "branch --show-signature"] {
                assert!(runs(c, cmd), "{c} {cmd}");
            }
            assert!(!runs(c, "status"), "{c}");
        }
    }

    #[test]
    fn help_viewers_matter_for_help() {
        assert!(runs("[man]\nviewer = evil\n[man \"evil\"]\ncmd = /tmp/evil\n", "help log"));
        assert!(runs("[man \"evil\"]\ncmd = /tmp/evil\n", "log --help"));
        assert!(!runs("[man \"evil\"]\ncmd = /tmp/evil\n", "log"));
    }

    #[test]
    fn hooks_path_alone_does_not_matter() {
        for cmd in ["status", "log", "diff"] {
            assert!(!runs("[core]\nhooksPath = .husky/_\n", cmd), "{cmd}");
        }
    }
}
