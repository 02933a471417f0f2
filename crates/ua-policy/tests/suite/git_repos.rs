//! Read-only git against real repositories made with the git on this
//! machine: a clean repository runs without a question; a repository whose
//! own configuration (or hook, include, submodule) makes the command run a
//! program asks, naming the key and the file. Where the program really
//! runs under git, the test shows that too, so the table is checked
//! against git rather than against our reading of it.

use super::Env;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use ua_policy::gate::{Decision, Gate, Outcome, Request};
use ua_policy::grants::Grants;

/// A temporary directory holding a git repository (`root`) with two
/// commits, a program that records each time it runs (`evil`), and a HOME
/// without git configuration.
pub struct TempRepo {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
    pub evil: PathBuf,
    marker: PathBuf,
}

impl TempRepo {
    pub fn new() -> TempRepo {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(base.join("home")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let marker = base.join("ran");
        let evil = base.join("evil.sh");
        std::fs::write(
            &evil,
            format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat \"$1\" 2>/dev/null\nexit 0\n", marker.display()),
        )
        .unwrap();
        std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = TempRepo { _dir: dir, base, root, evil, marker };
        r.git(&r.root, &["init", "-q", "-b", "main"]);
        std::fs::write(r.root.join("README.md"), "# demo\n").unwrap();
        std::fs::write(r.root.join("src/main.rs"), "fn main() {}\n").unwrap();
        r.git(&r.root, &["add", "."]);
        r.git(&r.root, &["commit", "-q", "-m", "first"]);
        std::fs::write(r.root.join("README.md"), "# demo\n\nmore\n").unwrap();
        r.git(&r.root, &["commit", "-q", "-am", "second"]);
        r
    }

    /// Real git in `dir`, with no global or system configuration; its
    /// stdout is a pipe, so it never pages. Panics when git fails.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_command(dir, args).output().unwrap();
        assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn git_command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.base.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_PAGER", "cat")
            .stdin(Stdio::null());
        c
    }

    /// True when running `git args…` in `dir` ran [`TempRepo::evil`].
    pub fn really_runs(&self, dir: &Path, args: &[&str]) -> bool {
        let _ = std::fs::remove_file(&self.marker);
        let _ = self.git_command(dir, args).stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
        self.marker.exists()
    }

    /// Makes HEAD a commit that carries a (made-up) OpenPGP signature, which
    /// `git log --show-signature` hands to the gpg program.
    pub fn signed_commit(&self) {
        let tree = self.git(&self.root, &["rev-parse", "HEAD^{tree}"]);
        let head = self.git(&self.root, &["rev-parse", "HEAD"]);
        let text = format!(
            "tree {}\nparent {}\nauthor t <t@example.com> 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\n\
             gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n",
            tree.trim(),
            head.trim()
        );
        let file = self.base.join("commit.txt");
        std::fs::write(&file, text).unwrap();
        let id = self.git(&self.root, &["hash-object", "-t", "commit", "-w", &file.to_string_lossy()]);
        self.git(&self.root, &["update-ref", "refs/heads/main", id.trim()]);
    }

    pub fn config(&self, dir: &Path, key: &str, value: &str) {
        self.git(dir, &["config", key, value]);
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn executable(&self, rel: &str, text: &str) {
        let p = self.write(rel, text);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

pub fn request(cwd: &Path, command: &str) -> Request {
    Request {
        command: command.to_string(),
        cwd: cwd.to_string_lossy().into_owned(),
        session: "git-repos".into(),
        depth: 0,
        human_attached: true,
        instruction: None,
    }
}

fn decide(gate: &Gate, cwd: &Path, command: &str) -> Decision {
    gate.decide(&request(cwd, command), &Grants::new())
}

#[track_caller]
fn allows(gate: &Gate, cwd: &Path, command: &str) {
    let d = decide(gate, cwd, command);
    assert_eq!(d.outcome, Outcome::Allow, "{command} in {}: {} {:?}", cwd.display(), d.reason, d.notes);
}

/// Asserts that the command asks and that the reason shown names `what`.
#[track_caller]
fn asks_naming(gate: &Gate, cwd: &Path, command: &str, what: &[&str]) {
    let d = decide(gate, cwd, command);
    assert_eq!(d.outcome, Outcome::Ask, "{command} in {}: {}", cwd.display(), d.reason);
    let notes = d.notes.join("\n");
    for w in what {
        assert!(notes.contains(w), "{command}: the reason should name {w:?}: {notes}");
    }
}

#[test]
fn a_clean_repository_runs_everyday_git_without_a_question() {
    let r = TempRepo::new();
    let gate = Env::new().gate();
    for cmd in [
        "git status",
        "git log",
        "git log --oneline -20",
        "git log -p -1",
        "git diff",
        "git diff --cached",
        "git show HEAD",
        "git branch -a",
        "git blame README.md",
        "git stash list",
        "git tag",
        "git config --list",
        "cd src && git log -1",
        "git -C src diff",
    ] {
        allows(&gate, &r.root, cmd);
        allows(&gate, &r.root.join("src"), cmd);
    }
}

/// Sets up a repository, then: the command asks naming the key and file,
/// and git really runs the program for `really` (when given).
struct Case {
    name: &'static str,
    setup: fn(&TempRepo),
    asks: &'static [&'static str],
    names: &'static [&'static str],
    really: Option<&'static [&'static str]>,
    allows: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "core.fsmonitor",
        setup: |r| r.config(&r.root, "core.fsmonitor", &r.evil.to_string_lossy()),
        asks: &["git status", "git diff", "git log --oneline"],
        names: &["core.fsmonitor", ".git/config"],
        really: Some(&["status"]),
        allows: &[],
    },
    Case {
        name: "diff.external",
        setup: |r| {
            r.config(&r.root, "diff.external", &r.evil.to_string_lossy());
            r.write("README.md", "changed\n");
        },
        asks: &["git diff", "git diff HEAD~1 --stat", "git log -p --ext-diff"],
        names: &["diff.external", ".git/config", "which git runs for `git "],
        really: Some(&["diff"]),
        allows: &["git log -p", "git status", "git show HEAD --stat"],
    },
    Case {
        name: "diff driver command",
        setup: |r| {
            r.write(".git/info/attributes", "*.md diff=x\n");
            r.config(&r.root, "diff.x.command", &r.evil.to_string_lossy());
            r.write("README.md", "changed\n");
        },
        asks: &["git diff"],
        names: &["diff.x.command"],
        really: Some(&["diff"]),
        allows: &["git log -p"],
    },
    Case {
        name: "textconv",
        setup: |r| {
            r.write(".git/info/attributes", "*.md diff=t\n");
            r.config(&r.root, "diff.t.textconv", &r.evil.to_string_lossy());
        },
        asks: &["git log -p -1", "git show HEAD", "git diff HEAD~1", "git blame README.md"],
        names: &["diff.t.textconv", ".git/config"],
        really: Some(&["log", "-p", "-1"]),
        allows: &["git status", "git branch"],
    },
    Case {
        name: "clean filter",
        setup: |r| {
            r.write(".git/info/attributes", "*.md filter=c\n");
            r.config(&r.root, "filter.c.clean", &format!("{} %f", r.evil.display()));
            r.write("README.md", "changed\n");
        },
        asks: &["git status", "git diff", "git blame README.md"],
        names: &["filter.c.clean"],
        really: Some(&["diff"]),
        allows: &["git log -p", "git show HEAD"],
    },
    Case {
        name: "long-running filter",
        setup: |r| r.config(&r.root, "filter.c.process", &r.evil.to_string_lossy()),
        asks: &["git status"],
        names: &["filter.c.process"],
        really: None,
        allows: &["git log"],
    },
    Case {
        name: "pager for one command",
        setup: |r| r.config(&r.root, "pager.status", &r.evil.to_string_lossy()),
        asks: &["git status"],
        names: &["pager.status"],
        really: None,
        allows: &["git status | cat", "git --no-pager status", "git log"],
    },
    Case {
        name: "gpg program",
        setup: |r| {
            r.signed_commit();
            r.config(&r.root, "gpg.program", &r.evil.to_string_lossy());
        },
        asks: &["git log", "git show HEAD", "git verify-commit HEAD"],
        names: &["gpg.program"],
        really: Some(&["log", "--show-signature", "-1"]),
        allows: &["git status", "git diff"],
    },
    Case {
        name: "include",
        setup: |r| {
            r.write("../other.gitconfig", &format!("[core]\n\tfsmonitor = {}\n", r.evil.display()));
            r.config(&r.root, "include.path", "../../other.gitconfig");
        },
        asks: &["git status", "git log", "git branch"],
        names: &["include.path", "includes another file"],
        really: Some(&["status"]),
        allows: &[],
    },
    Case {
        name: "conditional include",
        setup: |r| r.config(&r.root, "includeIf.gitdir:/.path", "/dev/null"),
        asks: &["git status"],
        names: &["includeif.gitdir:/.path"],
        really: None,
        allows: &[],
    },
    Case {
        name: "manual viewer",
        setup: |r| {
            r.config(&r.root, "man.viewer", "x");
            r.config(&r.root, "man.x.cmd", &r.evil.to_string_lossy());
        },
        asks: &["git help log | cat", "git log --help | cat"],
        names: &["sets man."],
        really: Some(&["help", "log"]),
        allows: &["git log"],
    },
    Case {
        name: "post-index-change hook",
        setup: |r| {
            r.executable(".git/hooks/post-index-change", &format!("#!/bin/sh\n'{}'\n", r.evil.display()));
            // The same content, written again: status refreshes the stat
            // data and writes the index.
            r.write("README.md", "# demo\n\nmore\n");
        },
        asks: &["git status", "git diff"],
        names: &[".git/hooks/post-index-change"],
        really: Some(&["status"]),
        allows: &["git log", "git show HEAD", "git branch -a"],
    },
    Case {
        name: "post-index-change under core.hooksPath",
        setup: |r| {
            r.config(&r.root, "core.hooksPath", ".husky/_");
            r.executable(".husky/_/post-index-change", &format!("#!/bin/sh\n'{}'\n", r.evil.display()));
            r.write("README.md", "# demo\n\nmore\n");
        },
        asks: &["git status"],
        names: &[".husky/_/post-index-change"],
        really: Some(&["status"]),
        allows: &["git log"],
    },
    Case {
        name: "worktree config",
        setup: |r| {
            r.config(&r.root, "extensions.worktreeConfig", "true");
            r.git(&r.root, &["config", "--worktree", "diff.external", &r.evil.to_string_lossy()]);
            r.write("README.md", "changed\n");
        },
        asks: &["git diff"],
        names: &["diff.external", ".git/config.worktree"],
        really: Some(&["diff"]),
        allows: &["git log"],
    },
];

#[test]
fn a_repository_that_names_a_program_makes_its_read_only_commands_ask() {
    let gate = Env::new().gate();
    for case in CASES {
        let r = TempRepo::new();
        (case.setup)(&r);
        for cmd in case.asks {
            asks_naming(&gate, &r.root, cmd, case.names);
        }
        for cmd in case.allows {
            allows(&gate, &r.root, cmd);
        }
        if let Some(args) = case.really {
            assert!(r.really_runs(&r.root, args), "{}: git {args:?} did not run the program", case.name);
        }
    }
}

#[test]
fn git_lfs_as_installed_and_husky_hooks_do_not_ask() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    // What `git lfs install --local` writes.
    r.config(&r.root, "filter.lfs.clean", "git-lfs clean -- %f");
    r.config(&r.root, "filter.lfs.smudge", "git-lfs smudge -- %f");
    r.config(&r.root, "filter.lfs.process", "git-lfs filter-process");
    r.config(&r.root, "filter.lfs.required", "true");
    // What husky writes: hooks git runs on commit and push, not on reads.
    r.config(&r.root, "core.hooksPath", ".husky/_");
    r.executable(".husky/_/pre-commit", "#!/bin/sh\nexit 1\n");
    r.config(&r.root, "core.fsmonitor", "false");
    for cmd in ["git status", "git diff", "git log -p -1", "git blame README.md"] {
        allows(&gate, &r.root, cmd);
    }
    // An lfs extension is a program git-lfs runs from this configuration.
    r.config(&r.root, "lfs.extension.gz.clean", &r.evil.to_string_lossy());
    asks_naming(&gate, &r.root, "git status", &["lfs.extension.gz.clean"]);
}

#[test]
fn an_embedded_bare_repository_is_the_one_checked_inside_it() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    let bare = r.root.join("fixtures/evil.git");
    r.git(&r.root, &["clone", "-q", "--bare", ".", "fixtures/evil.git"]);
    std::fs::create_dir_all(bare.join("info")).unwrap();
    std::fs::write(bare.join("info/attributes"), "* diff=t\n").unwrap();
    r.config(&bare, "diff.t.textconv", &r.evil.to_string_lossy());
    assert!(r.really_runs(&bare, &["log", "-p", "-1"]));
    assert!(!r.really_runs(&r.root, &["log", "-p", "-1"]));

    allows(&gate, &r.root, "git log -p -1");
    for cmd in [
        "cd fixtures/evil.git && git log -p -1",
        "git -C fixtures/evil.git log -p -1",
        "git --git-dir=fixtures/evil.git log -p -1",
        "git --git-dir fixtures/evil.git show HEAD",
    ] {
        asks_naming(&gate, &r.root, cmd, &["diff.t.textconv", "fixtures/evil.git/config"]);
    }
    // From inside the bare repository, and from a directory within it.
    asks_naming(&gate, &bare, "git log -p -1", &["diff.t.textconv"]);
    asks_naming(&gate, &bare.join("refs"), "git show HEAD", &["diff.t.textconv"]);
}

#[test]
fn a_linked_worktree_reads_the_shared_configuration() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    let wt = r.base.join("wt");
    r.git(&r.root, &["worktree", "add", "-q", &wt.to_string_lossy()]);
    allows(&gate, &wt, "git diff");
    r.config(&r.root, "diff.external", &r.evil.to_string_lossy());
    std::fs::write(wt.join("README.md"), "changed in the worktree\n").unwrap();
    assert!(r.really_runs(&wt, &["diff"]));
    let shared = r.root.join(".git/config");
    asks_naming(&gate, &wt, "git diff", &["diff.external", &shared.to_string_lossy()]);
}

#[test]
fn cd_and_dash_c_choose_the_repository() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    let nested = r.root.join("vendor/evil");
    std::fs::create_dir_all(&nested).unwrap();
    r.git(&nested, &["init", "-q"]);
    r.config(&nested, "diff.external", &r.evil.to_string_lossy());
    allows(&gate, &r.root, "git diff");
    allows(&gate, &r.root, "cd vendor && git diff");
    for cmd in [
        "cd vendor/evil && git diff",
        "cd vendor/evil; git diff",
        "(cd vendor/evil && git diff)",
        "cd vendor && cd evil && git diff",
        "git -C vendor/evil diff",
        "git -C vendor -C evil diff",
        &format!("git -C {} diff", nested.display()),
        "pushd vendor/evil && git diff",
    ] {
        asks_naming(&gate, &r.root, cmd, &["diff.external", "vendor/evil/.git/config"]);
    }
    // A directory only known when the command runs cannot be checked.
    for cmd in ["cd \"$D\" && git log", "cd \"$D\" && cd src && git log", "git -C \"$D\" log", "cd - && git log"] {
        asks_naming(&gate, &r.root, cmd, &["only known when it runs"]);
    }
}

#[test]
fn status_looks_into_submodules_and_so_does_the_check() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    let lib = r.base.join("lib-src");
    std::fs::create_dir_all(&lib).unwrap();
    r.git(&lib, &["init", "-q", "-b", "main"]);
    std::fs::write(lib.join("lib.txt"), "lib\n").unwrap();
    r.git(&lib, &["add", "."]);
    r.git(&lib, &["commit", "-q", "-m", "lib"]);
    r.git(
        &r.root,
        &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &lib.to_string_lossy(), "vendor/lib"],
    );
    r.git(&r.root, &["commit", "-q", "-m", "add lib"]);
    allows(&gate, &r.root, "git status");

    r.config(&r.root.join("vendor/lib"), "core.fsmonitor", &r.evil.to_string_lossy());
    assert!(r.really_runs(&r.root, &["status"]));
    asks_naming(
        &gate,
        &r.root,
        "git status",
        &["submodule vendor/lib", "core.fsmonitor", ".git/modules/vendor/lib/config"],
    );
    asks_naming(&gate, &r.root, "git diff", &["submodule vendor/lib"]);
    // log and show do not look into submodules.
    assert!(!r.really_runs(&r.root, &["log", "-1"]));
    allows(&gate, &r.root, "git log");
}

#[test]
fn a_changed_configuration_is_read_again() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    allows(&gate, &r.root, "git status");
    r.config(&r.root, "core.fsmonitor", &r.evil.to_string_lossy());
    asks_naming(&gate, &r.root, "git status", &["core.fsmonitor"]);
    r.git(&r.root, &["config", "--unset", "core.fsmonitor"]);
    allows(&gate, &r.root, "git status");
}

#[test]
fn an_unreadable_configuration_asks() {
    let gate = Env::new().gate();
    let r = TempRepo::new();
    let cfg = r.root.join(".git/config");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[core\n");
    std::fs::write(&cfg, text).unwrap();
    asks_naming(&gate, &r.root, "git status", &["a line git cannot read"]);
}

/// The parser reads what git reads: every entry of tricky files, compared
/// with `git config --list` of the same file.
#[test]
fn the_config_parser_agrees_with_git() {
    let r = TempRepo::new();
    let texts = [
        "[core] fsmonitor = x\n",
        "[Diff \"Pdf\"]\n\ttextconv = \"pdf to text\" ; c\n",
        "[diff.Pdf]\ntextconv = y\n",
        "[filter \"a\\\"b\"]\n\tclean = one\\\n two # c\n",
        "[a]\n\tbare\n\tk = \"  spaced  \"\n\tj = x\\ty\n",
        "\u{feff}[a]\r\nk = v\r\n",
        "[a]k=v\n[b \"x\"]k=w\n",
    ];
    for text in texts {
        let path = r.base.join("cfg");
        std::fs::write(&path, text).unwrap();
        let listed = r.git(&r.base, &["config", "--file", &path.to_string_lossy(), "--list", "-z"]);
        let theirs: Vec<(String, Option<String>)> = listed
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(|s| match s.split_once('\n') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (s.to_string(), None),
            })
            .collect();
        let ours: Vec<(String, Option<String>)> =
            ua_policy::gitrepo::config::parse(text.as_bytes()).entries.into_iter().map(|e| (e.name, e.value)).collect();
        assert_eq!(ours, theirs, "{text:?}");
    }
}
