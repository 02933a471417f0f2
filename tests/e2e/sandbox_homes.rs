//! The sandbox on homes as developers have them, against the real kernel:
//! every credential store the defaults name present at once (as the files
//! and directories they are expected to be, and the other way round),
//! dotfiles that are symbolic links into a repository (stow, chezmoi and
//! yadm users), `~/.config` itself a link, a start-up file whose link
//! leads nowhere yet, a project that is a linked git worktree. Set-up must
//! succeed on each, from each working directory, and the protections must
//! hold where the links lead.
//!
//! The homes live in /var/tmp: /tmp is a write root (see sandbox.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::sandbox::{Out, batch_in, output};
use crate::support::*;

/// What a credential path is expected to be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// Every credential store and secret file the defaults and the built-in
/// Cedar policy name, relative to the home, with what it usually is.
fn credentials() -> Vec<(String, Kind)> {
    let dirs = [
        ".ssh",
        ".gnupg",
        ".aws",
        ".config/gcloud",
        ".azure",
        ".kube",
        ".password-store",
        ".local/share/keyrings",
        ".pki",
    ];
    let mut out: Vec<(String, Kind)> = Vec::new();
    // `.docker` is the built-in policy's, its `config.json` the defaults'.
    out.push((".docker".into(), Kind::Dir));
    for s in ua_sandbox::rules::SECRETS {
        let kind = if dirs.contains(s) { Kind::Dir } else { Kind::File };
        out.push(((*s).to_string(), kind));
    }
    for s in [".pgpass", ".npmrc", ".pypirc", ".config/gh/hosts.yml"] {
        out.push((s.into(), Kind::File));
    }
    out
}

/// The text a secret holds: what must never show in a sandboxed command's
/// output.
fn secret(rel: &str) -> String {
    format!("SECRET-{}", rel.replace('/', "_"))
}

struct DevHome {
    dir: tempfile::TempDir,
}

impl DevHome {
    fn empty() -> Self {
        Self { dir: tempfile::tempdir_in("/var/tmp").expect("tempdir in /var/tmp") }
    }

    /// The home of someone who keeps dotfiles in a repository: stow-style
    /// relative links, `~/.config` a link into it, every credential where
    /// it usually is, and a project checked out as a linked worktree.
    fn linked() -> Self {
        let h = Self::empty();
        h.write("dotfiles/bash/.bashrc", "# the real bashrc\n");
        h.write("dotfiles/zsh/.zshrc", "# the real zshrc\n");
        h.write("dotfiles/config/fish/config.fish", "set -g fish_greeting\n");
        h.write("dotfiles/config/git/config", "[user]\n\tname = t\n");
        h.write("dotfiles/README.md", "my dotfiles\n");
        h.write("dotfiles/misc/notes", "misc\n");
        h.link(".bashrc", "dotfiles/bash/.bashrc");
        h.link(".zshrc", "dotfiles/zsh/.zshrc");
        h.link(".config", "dotfiles/config");
        // chezmoi and yadm leave real files; this one is a link whose
        // target is not there yet.
        h.link(".profile", "dotfiles/bash/.profile");
        h.write(".gitconfig", "[user]\n\tname = t\n");
        h.write("notes.txt", "READABLE-NOTES\n");
        for (rel, kind) in credentials() {
            h.credential(&rel, kind);
        }
        h.worktree();
        h
    }

    /// Every credential path the other kind than expected: directories as
    /// files, files as directories (`.docker` a file, so its `config.json`
    /// cannot be there), and the start-up and git paths below `~/.config`
    /// files where directories belong.
    fn swapped() -> Self {
        let h = Self::empty();
        for (rel, kind) in credentials() {
            if h.below_a_file(&rel) {
                continue;
            }
            h.credential(&rel, if kind == Kind::Dir { Kind::File } else { Kind::Dir });
        }
        h.write(".config/fish", "not a directory\n");
        h.write(".config/git", "[user]\n\tname = t\n");
        h.write(".bashrc", "# rc\n");
        h.write("proj/src.txt", "PROJECT\n");
        h
    }

    fn credential(&self, rel: &str, kind: Kind) {
        match kind {
            Kind::File => self.write(rel, &format!("{}\n", secret(rel))),
            Kind::Dir => self.write(&format!("{rel}/inner"), &format!("{}\n", secret(rel))),
        }
    }

    fn below_a_file(&self, rel: &str) -> bool {
        Path::new(rel)
            .ancestors()
            .skip(1)
            .any(|a| !a.as_os_str().is_empty() && self.path(&a.to_string_lossy()).is_file())
    }

    /// `src/main`, a repository, and `src/wt`, a worktree of it.
    fn worktree(&self) {
        self.write("src/main/README", "main\n");
        let git = |args: &[&str]| {
            let o = Command::new("git").args(args).current_dir(self.path("src/main")).output().expect("git");
            assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        };
        git(&["init", "-q", "."]);
        git(&["add", "README"]);
        git(&["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "start"]);
        git(&["worktree", "add", "-q", "../wt"]);
        assert!(self.path("src/wt/.git").is_file(), "a worktree's .git is a file");
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    fn link(&self, rel: &str, target: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("symlink");
    }

    fn command(&self, cwd: &str, sandboxed: bool) -> Command {
        let mut c = if sandboxed {
            let mut c = Command::new(unixagent());
            c.arg("sandbox");
            c
        } else {
            Command::new("env")
        };
        c.current_dir(self.path(cwd))
            .env("HOME", self.dir.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("UNIXAGENT_CONFIG")
            .env_remove("TMPDIR")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null());
        c
    }

    /// `script` under the sandbox, in `cwd` (relative to the home).
    fn run(&self, cwd: &str, script: &str) -> Out {
        let mut c = self.command(cwd, true);
        c.args(["--", "bash", "-c", script]);
        output(c)
    }

    /// The same without the sandbox: the control.
    fn run_plain(&self, cwd: &str, script: &str) -> Out {
        let mut c = self.command(cwd, false);
        c.args(["bash", "-c", script]);
        output(c)
    }

    fn status(&self, cwd: &str) -> Value {
        let mut c = self.command(cwd, true);
        c.args(["status", "--json"]);
        let o = output(c);
        assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
        serde_json::from_str(&o.stdout).expect("status is JSON")
    }

    /// A script that prints every secret it can read.
    fn read_every_secret(&self) -> String {
        let mut script = String::new();
        for (rel, _) in credentials() {
            let p = self.path(&rel);
            script.push_str(&format!("cat {0} {0}/inner 2>/dev/null; ", shell_quote(&p)));
        }
        script.push_str("true");
        script
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[track_caller]
fn ok(o: &Out) {
    assert_eq!(o.code, Some(0), "stdout: {}\nstderr: {}", o.stdout, o.stderr);
}

#[track_caller]
fn refused(o: &Out, what: &str) {
    assert_ne!(o.code, Some(0), "{what} should have failed; stdout: {}\nstderr: {}", o.stdout, o.stderr);
    assert_ne!(o.code, Some(125), "{what}: the sandbox did not start: {}", o.stderr);
}

#[track_caller]
fn no_secret(o: &Out, cwd: &str) {
    assert!(!o.stdout.contains("SECRET-"), "a secret was read from {cwd}: {}", o.stdout);
}

#[test]
fn a_home_with_dotfiles_in_a_repository_starts_from_every_directory_and_hides_every_credential() {
    let h = DevHome::linked();
    // Control: every secret is there and readable without the sandbox.
    let control = h.run_plain(".", &h.read_every_secret());
    for (rel, _) in credentials() {
        assert!(control.stdout.contains(&secret(&rel)), "{rel} missing from the control: {}", control.stdout);
    }
    for cwd in [".", "src/wt", "dotfiles", "dotfiles/config"] {
        ok(&h.run(cwd, "true"));
        let o = h.run(cwd, &h.read_every_secret());
        ok(&o);
        no_secret(&o, cwd);
        // Through the link and by the path it leads to alike.
        let o =
            h.run(cwd, "cat ~/.config/gcloud/inner; cat ~/dotfiles/config/gcloud/inner; cat ~/.config/gh/hosts.yml");
        no_secret(&o, cwd);
    }
    // The rest of the home reads fine inside.
    let o = h.run("src/wt", "cat ~/notes.txt ~/.bashrc ~/.config/fish/config.fish");
    ok(&o);
    assert!(o.stdout.contains("READABLE-NOTES") && o.stdout.contains("the real bashrc"), "{}", o.stdout);
}

#[test]
fn a_linked_start_up_file_cannot_be_written_where_it_leads_nor_its_link_replaced() {
    let h = DevHome::linked();
    // The home as working directory: everything below it is writable but
    // for what the rules keep.
    for attack in [
        "echo evil >> ~/.bashrc",
        "echo evil >> ~/dotfiles/bash/.bashrc",
        "echo evil >> ~/.config/fish/config.fish",
        "echo evil >> ~/.config/git/config",
        "echo evil > ~/dotfiles/bash/.profile",
        "rm ~/.bashrc",
        "ln -sfn /tmp/evil ~/.zshrc",
        "echo evil > ~/x && mv ~/x ~/.zshrc",
        "mv ~/.config ~/.c",
        "mv ~/dotfiles ~/d",
    ] {
        refused(&h.run(".", attack), attack);
    }
    // The dotfiles repository as working directory: the files the links
    // lead to are inside it, and stay read-only.
    for attack in [
        "echo evil >> bash/.bashrc",
        "echo evil >> zsh/.zshrc",
        "echo evil >> config/fish/config.fish",
        "mv bash b",
        "echo evil > bash/.profile",
    ] {
        refused(&h.run("dotfiles", attack), attack);
    }
    assert_eq!(std::fs::read_to_string(h.path("dotfiles/bash/.bashrc")).expect("bashrc"), "# the real bashrc\n");
    assert_eq!(std::fs::read_link(h.path(".zshrc")).expect("link"), Path::new("dotfiles/zsh/.zshrc"));
    assert_eq!(std::fs::read_link(h.path(".bashrc")).expect("link"), Path::new("dotfiles/bash/.bashrc"));
    assert!(h.path(".config").is_symlink() && !h.path("dotfiles/bash/.profile").exists());
    // Controls: the same write works without the sandbox, and ordinary
    // work in those directories works inside it.
    let o = h.run_plain("dotfiles", "test -w bash/.bashrc && test -w ~/.bashrc && echo writable");
    assert!(o.stdout.contains("writable"), "{}{}", o.stdout, o.stderr);
    ok(&h.run(".", "echo more >> notes.txt && mkdir -p src/new/deep && rm -r src/new"));
    // (`bash/.profile` is missing, so nothing new is made in `bash` or
    // the repository's top.)
    ok(&h.run("dotfiles", "echo more >> README.md && mkdir -p misc/d && rm -r misc/d"));
}

#[test]
fn a_worktrees_git_file_is_kept_and_git_still_works_there() {
    let h = DevHome::linked();
    refused(&h.run("src/wt", "echo 'gitdir: /tmp/evil' > .git"), "rewriting the worktree's .git");
    refused(&h.run("src/wt", "rm .git"), "removing the worktree's .git");
    assert!(std::fs::read_to_string(h.path("src/wt/.git")).expect(".git").starts_with("gitdir: "));
    let o = h.run("src/wt", "git status --short && git log --oneline | wc -l && echo x > new.txt && rm new.txt");
    ok(&o);
    assert!(o.stdout.trim().ends_with('1'), "{}", o.stdout);
}

#[test]
fn a_home_where_files_and_directories_are_the_other_way_round_starts_and_hides_them() {
    let h = DevHome::swapped();
    let control = h.run_plain(".", &h.read_every_secret());
    assert!(control.stdout.contains(&secret(".ssh")) && control.stdout.contains(&secret(".netrc")));
    for cwd in [".", "proj"] {
        ok(&h.run(cwd, "true"));
        let o = h.run(cwd, &h.read_every_secret());
        ok(&o);
        no_secret(&o, cwd);
    }
    // A file where a protected directory was expected is kept itself.
    for attack in ["echo evil >> ~/.config/git", "echo evil >> ~/.config/fish", "rm ~/.config/fish"] {
        refused(&h.run(".", attack), attack);
    }
    assert_eq!(std::fs::read_to_string(h.path(".config/fish")).expect("fish"), "not a directory\n");
}

#[test]
fn the_status_lists_each_path_once_and_says_the_sandbox_applies() {
    let h = DevHome::linked();
    let v = h.status(".");
    assert_eq!(v["applies"], true, "{v}");
    let list = |key: &str| -> Vec<String> {
        v["rules"][key].as_array().expect(key).iter().map(|r| r["path"].as_str().expect("path").to_string()).collect()
    };
    let hidden = list("read_deny");
    let protected = list("write_protect");
    let mut all: Vec<&String> = hidden.iter().chain(&protected).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a path listed twice: {hidden:?} {protected:?}");
    for p in &hidden {
        let inside = hidden.iter().find(|o| *o != p && Path::new(p).starts_with(o));
        assert!(inside.is_none(), "{p} is listed inside {inside:?}");
    }
    let home = h.dir.path().display().to_string();
    assert!(hidden.contains(&format!("{home}/.docker")), "{hidden:?}");
    assert!(!hidden.iter().chain(&protected).any(|p| p.ends_with(".docker/config.json")), "{hidden:?}");
    // Rules through ~/.config name where it leads.
    assert!(hidden.contains(&format!("{home}/dotfiles/config/gcloud")), "{hidden:?}");
    assert!(protected.contains(&format!("{home}/dotfiles/bash/.bashrc")), "{protected:?}");
    // The human form lists each once too.
    let mut c = h.command(".", true);
    c.arg("status");
    let o = output(c);
    ok(&o);
    let docker = format!("  {home}/.docker  (");
    assert_eq!(o.stdout.matches(&docker).count(), 1, "{}", o.stdout);
    assert!(o.stdout.contains("set-up: applies here"), "{}", o.stdout);
}

#[test]
fn an_agent_command_runs_sandboxed_in_a_worktree_of_a_linked_home() {
    let h = DevHome::linked();
    h.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    // A script, so that the gate cannot see what it does: the kernel is
    // what stops it.
    h.write(
        "src/wt/peek.sh",
        "cat ~/.docker/config.json ~/.config/gcloud/inner\necho evil >> ~/dotfiles/bash/.bashrc\necho ran-$((6*7))\n",
    );
    let command = "sh peek.sh";
    let server = crate::agent::model(&format!(
        "[[turn]]\ntool_calls = [{{ id = \"t1\", name = \"shell\", input = {{ command = {command:?} }} }}]\n[[turn]]\ntext = \"done\"\n"
    ));
    let (o, lines) = batch_in(h.dir.path(), &h.path("src/wt"), &server, "look around", false);
    assert!(!lines.iter().any(|l| l["type"] == "error"), "{}{}", o.stdout, o.stderr);
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    let (text, _) = &results[0];
    assert!(text.contains("ran-42"), "the command did not run: {text}\n{}{}", o.stdout, o.stderr);
    assert!(!text.contains("SECRET-"), "{text}");
    assert_eq!(std::fs::read_to_string(h.path("dotfiles/bash/.bashrc")).expect("bashrc"), "# the real bashrc\n");
}

#[test]
fn a_working_directory_the_rules_hide_is_refused_with_the_reason() {
    let h = DevHome::linked();
    h.write(".ssh/work/file", "x\n");
    h.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let server = crate::agent::model("[[turn]]\ntext = \"should not be asked\"\n");
    let (o, lines) = batch_in(h.dir.path(), &h.path(".ssh/work"), &server, "list files", false);
    assert_eq!(o.code, Some(125), "{}{}", o.stdout, o.stderr);
    let kinds: Vec<&str> = lines.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(kinds, ["error", "result"], "{}", o.stdout);
    let message = lines[0]["message"].as_str().unwrap_or_default();
    let cwd = h.path(".ssh/work").display().to_string();
    assert!(message.contains(&cwd) && message.contains("start in another directory"), "{message}");
    assert!(server.requests().is_empty(), "the model was asked although nothing could run");
    let v = h.status(".ssh/work");
    assert_eq!(v["applies"], false, "{v}");
    assert!(v["problem"].as_str().is_some_and(|p| p.contains(&cwd)), "{v}");
}

/// A child agent started by a sandboxed parent on a developer's home: the
/// child's own sandbox nests inside the parent's (stacked rules, no
/// namespaces), starts on the linked dotfiles and worktree, and keeps
/// the credentials and the start-up files out of reach as the parent's
/// does.
#[test]
fn a_child_agent_nested_in_the_sandbox_of_a_linked_home_runs_and_is_kept_in() {
    use crate::children::{EVERYTHING, Script, scenario};
    let h = DevHome::linked();
    h.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    h.write(".config/unixagent/policy.cedar", EVERYTHING);
    h.write(
        "src/wt/peek.sh",
        "cat ~/.docker/config.json ~/.config/gcloud/inner\necho evil >> ~/dotfiles/bash/.bashrc\necho ran-$((6*7))\n",
    );
    let delegate = format!("{} -c '# peek as a child' < /dev/null; echo child=$?", unixagent().display());
    let server = crate::agent::model(&scenario(&[
        Script { instruction: "delegate the peek", answers: &[&format!("$ {delegate}"), "parent done"] },
        Script { instruction: "peek as a child", answers: &["$ sh peek.sh", "child done"] },
    ]));
    let (o, lines) = batch_in(h.dir.path(), &h.path("src/wt"), &server, "delegate the peek", false);
    assert!(!lines.iter().any(|l| l["type"] == "error"), "{}{}", o.stdout, o.stderr);
    // What each agent's model got back for its command.
    let saw = |who: &str| {
        let reqs = server.requests();
        (0..reqs.len())
            .filter(|i| reqs[*i].json()["messages"][0]["content"].to_string().contains(who))
            .find_map(|i| crate::agent::tool_results(&crate::agent::messages(&server, i)).into_iter().next())
            .map(|(text, _)| text)
            .unwrap_or_else(|| panic!("{who:?} never got its command's output\n{}{}", o.stdout, o.stderr))
    };
    let child = saw("peek as a child");
    assert!(child.contains("ran-42"), "the child's command did not run: {child}");
    assert!(!child.contains("SECRET-"), "{child}");
    let parent = saw("delegate the peek");
    assert!(parent.contains("child done") && parent.contains("child=0"), "{parent}");
    assert_eq!(std::fs::read_to_string(h.path("dotfiles/bash/.bashrc")).expect("bashrc"), "# the real bashrc\n");
    let ended: Vec<&Value> = lines.iter().filter(|l| l["type"] == "child" && l["status"] != "running").collect();
    assert_eq!(ended.len(), 1, "{}", o.stdout);
    assert_eq!(ended[0]["status"], "ok", "{}", ended[0]);
}
