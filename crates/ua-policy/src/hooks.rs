//! Hooks: the user's executables that see every proposed command.
//!
//! A hook gets the proposed action as one JSON object on standard input
//! and answers on standard output with
//! `{"decision": "allow" | "deny" | "modify", "reason": "…", "command": "…"}`.
//! `allow` means "no objection": the command continues through the cascade
//! (policy, grants, the human); `deny` stops it; `modify` replaces it, and
//! the replacement goes through the whole pipeline again.
//!
//! Hooks fail closed. A hook that cannot start, exits with a non-zero
//! status or by a signal, misses its deadline, writes more than the output
//! cap, or answers with anything but one such JSON object denies the
//! command. At the deadline (30 s unless configured) the hook's process
//! group gets SIGTERM, and SIGKILL after a grace period (5 s), so a hook
//! that ignores SIGTERM or leaves children behind cannot stall unixagent.
//!
//! Hooks are found in the config directory's `hooks/` (files whose names
//! start with `pre-exec` or `post-exec`, in name order) and in the
//! configuration. Running one is blocking: call [`run`] from a thread that
//! may block.

use crate::error::PolicyError;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// Before a command runs; the hook's answer counts.
    PreExec,
    /// After a command ran; the answer is only checked for failures.
    PostExec,
}

impl Event {
    /// `pre-exec` or `post-exec`.
    pub fn name(self) -> &'static str {
        match self {
            Event::PreExec => "pre-exec",
            Event::PostExec => "post-exec",
        }
    }
}

/// Which hooks run, and their limits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookConfig {
    /// Pre-exec hooks, run in order; the first that denies or modifies wins.
    pub pre_exec: Vec<PathBuf>,
    /// Post-exec hooks.
    pub post_exec: Vec<PathBuf>,
    /// Limits for every hook.
    pub limits: Limits,
}

/// Deadlines and caps for one hook run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time from start to SIGTERM.
    pub timeout: Duration,
    /// Time from SIGTERM to SIGKILL.
    pub kill_grace: Duration,
    /// Most bytes of standard output read; more denies.
    pub output_cap: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(30), kill_grace: Duration::from_secs(5), output_cap: 64 * 1024 }
    }
}

impl HookConfig {
    /// Adds the executables in `config_dir/hooks/` whose names start with
    /// `pre-exec` or `post-exec` (in name order) before the hooks already
    /// listed. A file there that is not executable is an error, not
    /// silently skipped: the user meant it to run.
    pub fn discover(mut self, config_dir: &Path) -> Result<HookConfig, PolicyError> {
        let dir = config_dir.join("hooks");
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(self),
            Err(source) => return Err(PolicyError::Io { path: dir, source }),
        };
        let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        found.sort();
        let mut pre = Vec::new();
        let mut post = Vec::new();
        for path in found {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let list = if name.starts_with("pre-exec") {
                &mut pre
            } else if name.starts_with("post-exec") {
                &mut post
            } else {
                continue;
            };
            check_executable(&path)?;
            list.push(path);
        }
        pre.append(&mut self.pre_exec);
        post.append(&mut self.post_exec);
        self.pre_exec = pre;
        self.post_exec = post;
        Ok(self)
    }

    /// Checks that every listed hook exists and is executable.
    pub fn check(&self) -> Result<(), PolicyError> {
        self.pre_exec.iter().chain(&self.post_exec).try_for_each(|p| check_executable(p))
    }
}

fn check_executable(path: &Path) -> Result<(), PolicyError> {
    let meta = std::fs::metadata(path).map_err(|source| PolicyError::Io { path: path.to_path_buf(), source })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(PolicyError::Hook {
            path: path.to_path_buf(),
            message: "it is not an executable file (chmod +x it)".into(),
        });
    }
    Ok(())
}

/// What a hook answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum Reply {
    /// No objection.
    Allow {
        /// Why, if the hook said.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Refuse the command.
    Deny {
        /// Why, if the hook said.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Replace the command.
    Modify {
        /// The replacement.
        command: String,
        /// Why, if the hook said.
        #[serde(default)]
        reason: Option<String>,
    },
}

/// Why a hook run counts as a denial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "failure", content = "detail")]
pub enum Failure {
    /// It could not be started.
    Spawn(String),
    /// It missed its deadline and was killed (with the signal that ended it).
    Timeout(String),
    /// It exited with a non-zero status or was killed by a signal.
    Crashed(String),
    /// Its output was not one reply object, or was too long.
    Unreadable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Spawn(m) => write!(f, "could not start: {m}"),
            Failure::Timeout(m) => write!(f, "missed its deadline and was stopped with {m}"),
            Failure::Crashed(m) => write!(f, "failed: {m}"),
            Failure::Unreadable(m) => write!(f, "gave an unreadable answer: {m}"),
        }
    }
}

/// The short name of a hook for decisions and the audit log.
pub fn hook_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn spawn_reader<R: Read + Send + 'static>(mut r: R, cap: usize) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (tx, rx) = mpsc::channel();
    let _ = thread::Builder::new().name("hook-output".into()).spawn(move || {
        let mut kept = Vec::new();
        let mut overflow = false;
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    // Keep draining past the cap so the hook never blocks on
                    // a full pipe; only the first `cap` bytes are kept.
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    overflow |= n > room;
                }
            }
        }
        let _ = tx.send((kept, overflow));
    });
    rx
}

fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we
    // created for the hook (`process_group(0)` makes its pid the pgid); it
    // touches no memory.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown status".into(),
    }
}

/// Runs one hook with `input` on its standard input. Blocks until the hook
/// has answered or been killed, at most `timeout + kill_grace` plus a
/// moment.
pub fn run(hook: &Path, event: Event, input: &serde_json::Value, limits: &Limits) -> Result<Reply, Failure> {
    let start = Instant::now();
    let mut child = Command::new(hook)
        .env("UNIXAGENT_HOOK", event.name())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| Failure::Spawn(e.to_string()))?;
    let pgid = i32::try_from(child.id()).map_err(|e| Failure::Spawn(e.to_string()))?;
    let out = child.stdout.take().map(|o| spawn_reader(o, limits.output_cap));
    let err = child.stderr.take().map(|e| spawn_reader(e, 4096));
    if let Some(mut stdin) = child.stdin.take() {
        let mut line = input.to_string();
        line.push('\n');
        // The hook may not read its input at all; a broken pipe is its
        // business, so this runs on its own thread and errors are ignored.
        let _ = thread::Builder::new().name("hook-input".into()).spawn(move || {
            let _ = stdin.write_all(line.as_bytes());
        });
    }
    let (tx, rx) = mpsc::channel();
    let waiter = thread::Builder::new().name("hook-wait".into()).spawn(move || {
        let _ = tx.send(child.wait());
    });
    if let Err(e) = waiter {
        signal_group(pgid, libc::SIGKILL);
        return Err(Failure::Spawn(e.to_string()));
    }

    let status = match rx.recv_timeout(limits.timeout) {
        Ok(s) => s.map_err(|e| Failure::Crashed(e.to_string()))?,
        Err(_) => {
            signal_group(pgid, libc::SIGTERM);
            let how = match rx.recv_timeout(limits.kill_grace) {
                Ok(_) => "SIGTERM",
                Err(_) => {
                    signal_group(pgid, libc::SIGKILL);
                    let _ = rx.recv_timeout(Duration::from_secs(5));
                    "SIGKILL"
                }
            };
            // Children that outlived the leader still hold the pipes.
            signal_group(pgid, libc::SIGKILL);
            return Err(Failure::Timeout(format!("{how} after {:?}", limits.timeout)));
        }
    };

    // The hook exited; its output is complete once every holder of the
    // pipe is gone. A background child keeping it open past the deadline
    // is killed.
    let deadline = (start + limits.timeout).max(Instant::now() + Duration::from_millis(200));
    let wait_output = |rx: Option<mpsc::Receiver<(Vec<u8>, bool)>>| {
        let rx = rx?;
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(v) => Some(v),
            Err(_) => {
                signal_group(pgid, libc::SIGKILL);
                rx.recv_timeout(Duration::from_secs(1)).ok()
            }
        }
    };
    let stdout = wait_output(out);
    let stderr = wait_output(err);
    if !status.success() {
        let note = stderr
            .map(|(e, _)| String::from_utf8_lossy(&e).lines().next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .map_or(String::new(), |l| format!(" ({l})"));
        return Err(Failure::Crashed(format!("{}{note}", describe(status))));
    }
    let Some((bytes, overflow)) = stdout else {
        return Err(Failure::Unreadable("its output could not be read".into()));
    };
    if overflow {
        return Err(Failure::Unreadable(format!("more than {} bytes of output", limits.output_cap)));
    }
    parse_reply(&bytes)
}

/// Parses a hook's standard output: exactly one reply object.
pub fn parse_reply(bytes: &[u8]) -> Result<Reply, Failure> {
    let text = std::str::from_utf8(bytes).map_err(|_| Failure::Unreadable("output is not UTF-8".into()))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(Failure::Unreadable("no output".into()));
    }
    let reply: Reply = serde_json::from_str(text).map_err(|e| {
        let shown: String = text.chars().take(80).collect();
        Failure::Unreadable(format!("{e} in {shown:?}"))
    })?;
    if let Reply::Modify { command, .. } = &reply
        && command.trim().is_empty()
    {
        return Err(Failure::Unreadable("\"modify\" without a command".into()));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_strictly() {
        assert_eq!(parse_reply(br#"{"decision":"allow"}"#), Ok(Reply::Allow { reason: None }));
        assert_eq!(
            parse_reply(b" {\"decision\":\"modify\",\"command\":\"ls -l\",\"reason\":\"long\"}\n"),
            Ok(Reply::Modify { command: "ls -l".into(), reason: Some("long".into()) })
        );
        for bad in [
            &b""[..],
            b"allow",
            br#"{"decision":"maybe"}"#,
            br#"{"decision":"modify"}"#,
            br#"{"decision":"modify","command":" "}"#,
            br#"{"decision":"allow"} {"decision":"deny"}"#,
            b"\xff",
        ] {
            assert!(matches!(parse_reply(bad), Err(Failure::Unreadable(_))), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
