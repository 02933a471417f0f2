//! The completion scripts in their real shells, each installed where that
//! shell looks for it and loaded as it loads one (bash-completion's
//! on-demand directory, zsh's fpath with compinit, fish's completions
//! directory), then asked at a prompt with Tab: a subcommand, a flag, and
//! a session id read from the session index.

use std::path::PathBuf;
use std::process::Command;

use crate::support::*;

const PROMPT: &str = "CMP> ";

/// The session the completions offer.
const SESSION: &str = "20261121T201305.123Z-0000002a";

/// A home with one session in its index, unixagent on PATH (the scripts
/// call it by name) and `shell`'s completion script where `shell` finds it.
struct Rig {
    home: tempfile::TempDir,
    bin: PathBuf,
}

impl Rig {
    fn new(shell: &str) -> Self {
        let home = tempfile::tempdir().expect("tempdir");
        let bin = home.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(unixagent(), bin.join("unixagent")).unwrap();
        let rig = Self { home, bin };
        let index = ua_store::index::Index::open(&rig.path(".local/share/unixagent")).unwrap();
        index
            .append(&ua_store::index::Record::Start {
                id: SESSION.into(),
                ts: 1_795_291_985_123,
                cwd: "/src".into(),
                shell: "/bin/bash".into(),
                pid: 1,
                parent: None,
                first_instruction: None,
            })
            .unwrap();
        let script = Command::new(unixagent()).args(["completions", shell]).output().unwrap();
        assert!(script.status.success(), "{}", String::from_utf8_lossy(&script.stderr));
        let (place, rc, rc_text) = match shell {
            "bash" => (
                ".local/share/bash-completion/completions/unixagent",
                ".bashrc",
                format!(
                    "PS1='{PROMPT}'\nHISTFILE=~/.bash_history_test\n. /usr/share/bash-completion/bash_completion\n"
                ),
            ),
            "zsh" => (
                "zfuncs/_unixagent",
                ".zshrc",
                format!(
                    "PS1='{PROMPT}'\nHISTFILE=~/.zsh_history_test\nfpath=(~/zfuncs $fpath)\nautoload -Uz compinit\ncompinit -u -d ~/.zcompdump\n"
                ),
            ),
            _ => (
                ".config/fish/completions/unixagent.fish",
                ".config/fish/config.fish",
                format!("set -g fish_greeting\nfunction fish_prompt; printf '{PROMPT}'; end\n"),
            ),
        };
        rig.write(place, &String::from_utf8_lossy(&script.stdout));
        rig.write(rc, &rc_text);
        rig
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn start(&self, shell: &str) -> Term {
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default());
        let t = Spawn::new(which(shell))
            .env("HOME", self.home.path())
            .env("PATH", path)
            .env("XDG_DATA_HOME", self.path(".local/share"))
            .env("XDG_CONFIG_HOME", self.path(".config"))
            .env("SHELL", which(shell))
            .cwd(self.home.path())
            .size(120, 24)
            .start();
        t.wait_for("the prompt", |s| s.cursor_row().trim_end() == PROMPT.trim_end());
        t
    }
}

/// Types `typed`, then Tab, and waits until the line reads `want`.
fn complete(t: &mut Term, typed: &str, want: &str) {
    t.send(format!("{typed}\t"));
    let line = format!("{PROMPT}{want}");
    t.wait_for(&format!("{line:?} after Tab"), |s| s.cursor_row().trim_end() == line.trim_end());
    // Nothing else on screen: no error from loading or running the script.
    let text = t.screen_text();
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    assert_eq!(lines, [line.trim_end()], "the screen shows more than the completed line:\n{text}");
    // Clear the line for the next one.
    t.send("\x15");
    t.wait_for("an empty line", |s| s.cursor_row().trim_end() == PROMPT.trim_end());
}

fn check(shell: &str) {
    let rig = Rig::new(shell);
    let mut t = rig.start(shell);
    complete(&mut t, "unixagent sess", "unixagent sessions ");
    complete(&mut t, "unixagent doc", "unixagent doctor ");
    complete(&mut t, "unixagent doctor --off", "unixagent doctor --offline ");
    complete(&mut t, "unixagent completions z", "unixagent completions zsh ");
    complete(&mut t, "unixagent sessions show 2026", &format!("unixagent sessions show {SESSION} "));
    complete(&mut t, "unixagent --resume 2026", &format!("unixagent --resume {SESSION} "));
}

#[test]
fn bash_completes_subcommands_flags_and_session_ids() {
    check("bash");
}

#[test]
fn zsh_completes_subcommands_flags_and_session_ids() {
    check("zsh");
}

#[test]
fn fish_completes_subcommands_flags_and_session_ids() {
    check("fish");
}

/// What each script is, so a package or `make install` puts it in the
/// right place: bash's is named for the command it completes, zsh's is an
/// autoloadable `#compdef` function.
#[test]
fn each_script_is_in_its_shells_own_form() {
    let out = |shell: &str| {
        let o = Command::new(unixagent()).args(["completions", shell]).output().unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    assert!(out("bash").contains("-F _clap_complete_unixagent unixagent"));
    assert!(out("zsh").starts_with("#compdef unixagent\n"));
    assert!(out("fish").contains("complete --keep-order --exclusive --command unixagent"));
    let bad = Command::new(unixagent()).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
