//! Shared set-up: an isolated home directory and unixagent started in it.

use std::path::{Path, PathBuf};

use ua_term::osc::{OscScanner, ShellEvent};
pub use ua_testkit::term::{Spawn, Term};

pub fn unixagent() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_unixagent"))
}

/// The shells every interactive test runs against.
pub const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// Absolute path of a program from PATH. No test skips for want of a
/// program: one that is missing fails the test, saying what installs it.
/// Whether `cond` holds within `wait`, asked every 10 ms.
pub fn eventually(wait: std::time::Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if cond() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed: scripts/test-deps.sh installs it"))
}

/// A throwaway HOME with a recognisable prompt for each shell, so tests
/// never read or write the real user's files or history.
pub struct Home {
    dir: tempfile::TempDir,
    /// The model every unixagent started here talks to: it answers each
    /// instruction with [`REPLY`] and records what it was sent.
    pub model: ua_testkit::provider::FakeProvider,
}

/// What the home's model answers to every instruction.
pub const REPLY: &str = "agent-reply-ok";

pub const PROMPT: &str = "PS1-MARK> ";

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let scenario =
            ua_testkit::provider::Scenario::from_toml(&format!("repeat = true\n[[turn]]\ntext = \"{REPLY}\"\n"))
                .expect("scenario");
        let model = ua_testkit::provider::FakeProvider::start(scenario).expect("fake model");
        let h = Self { dir, model };
        h.write(".bashrc", "PS1='PS1-MARK> '\nHISTFILE=~/.bash_history_test\n");
        h.write(".zshrc", "PS1='PS1-MARK> '\nHISTFILE=~/.zsh_history_test\n");
        h.write(".config/fish/config.fish", "set -g fish_greeting\nfunction fish_prompt; printf 'PS1-MARK> '; end\n");
        h
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    /// A unixagent command in this home, with `shell` as its shell.
    pub fn spawn(&self, shell: &str) -> Spawn {
        let shell = which(shell);
        Spawn::new(unixagent())
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .env("XDG_DATA_HOME", self.path().join(".local/share"))
            .env("SHELL", &shell)
            .env("UA_TEST_VAR", "from-env")
            .env("ANTHROPIC_BASE_URL", self.model.base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("OPENAI_API_KEY", "")
            .cwd(self.path())
            .arg("--shell")
            .arg(shell)
    }

    /// The instructions the model received, in order: the text the user
    /// typed after `#`, as the last text of each request.
    pub fn instructions(&self) -> Vec<String> {
        self.model
            .requests()
            .iter()
            .filter_map(|r| {
                let body = r.json();
                let last = body["messages"].as_array()?.last()?.clone();
                let texts: Vec<String> = last["content"]
                    .as_array()?
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect();
                texts.last().cloned()
            })
            .collect()
    }

    /// Waits until the model has received `n` instructions.
    pub fn wait_instructions(&self, n: usize) -> Vec<String> {
        self.model.wait_until(std::time::Duration::from_secs(20), |r| r.len() >= n).expect("instructions arrive");
        self.instructions()
    }

    /// unixagent over `shell`, waited on until its first prompt is drawn.
    pub fn start(&self, shell: &str) -> Term {
        let t = self.spawn(shell).start();
        wait_prompt(&t, 1);
        t
    }
}

/// Waits until the shell has drawn its prompt `n` times in all (counted by
/// the B marker that ends each prompt) and it is on screen.
pub fn wait_prompt(t: &Term, n: usize) {
    t.wait_for(&format!("prompt #{n}"), |s| {
        our_markers(s.raw(), 'B') >= n && s.cursor_row().ends_with(PROMPT.trim_end())
    });
}

/// The application id of the session's own markers: the one on the first
/// `133;A` printed (our shell's first prompt comes before anything nested).
pub fn our_aid(raw: &[u8]) -> Option<&[u8]> {
    const A: &[u8] = b"\x1b]133;A;aid=";
    let at = memchr::memmem::find(raw, A)? + A.len();
    let len = raw[at..].iter().position(|&b| matches!(b, 0x07 | 0x1b | b';'))?;
    Some(&raw[at..at + len])
}

/// How many of the session's own `kind` markers (A, B or C) are in `raw`:
/// `ESC ] 133;B;aid=ID BEL` with the session's id.
pub fn our_markers(raw: &[u8], kind: char) -> usize {
    let Some(aid) = our_aid(raw) else { return 0 };
    let mut needle = format!("\x1b]133;{kind};aid=").into_bytes();
    needle.extend_from_slice(aid);
    needle.push(0x07);
    memchr::memmem::find_iter(raw, &needle).count()
}

/// Runs `line` at the prompt and waits for the next prompt.
pub fn run(t: &mut Term, line: &str) {
    let n = prompts(t);
    t.send(format!("{line}\r"));
    wait_prompt(t, n + 1);
}

/// How many prompts have been drawn so far.
pub fn prompts(t: &Term) -> usize {
    t.with(|s| our_markers(s.raw(), 'B'))
}

/// The OSC 133 / OSC 7 events of our own shell in the output so far (a
/// nested shell's, or fish 4's own markers beside ours, are left out).
pub fn events(t: &Term) -> Vec<ShellEvent> {
    let raw = t.raw();
    let mut out = Vec::new();
    let aid = our_aid(&raw).map(|a| String::from_utf8_lossy(a).into_owned());
    let mut scanner = if aid.is_some() { OscScanner::following(aid.as_deref()) } else { OscScanner::new() };
    scanner.feed(&raw, |e| out.push(e));
    out
}

/// How the shell spells the last exit status.
pub fn status_var(shell: &str) -> &'static str {
    if shell == "fish" { "$status" } else { "$?" }
}

/// The one session directory under `sessions` (which also holds the
/// session index and its lock).
pub fn only_session(sessions: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(sessions)
        .expect("sessions directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "one session: {dirs:?}");
    dirs.into_iter().next().expect("one session")
}
