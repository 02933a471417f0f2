//! Each installed bash, zsh and fish started exactly as a session starts
//! it (`integration::prepare`, a PTY, the user's own start-up files), to
//! see whether our prompt markers arrive and how long the first prompt
//! takes. When they do not, the line quotes the shell's first error, as
//! the session's start-up message does (`session::startup`).
//!
//! The shell is killed with SIGKILL once it has drawn its prompt: a hang-up
//! would make bash and fish write their history files, and doctor must
//! change nothing in the user's home.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use ua_term::integration::{self, ShellKind, ShellSpec};
use ua_term::osc::{OscScanner, ShellEvent};
use ua_term::pty::Pty;

use super::Check;
use crate::session::startup::StartupLog;

const AREA: &str = "shells";

/// After our first `133;A`, how long to wait for the `133;B` that ends the
/// prompt before reporting the prompt as started.
const PROMPT_GRACE: Duration = Duration::from_secs(2);

/// What starting one shell showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Our markers arrived; the prompt was drawn after `first_prompt`.
    /// `error` is an error line it printed before (start-up went on).
    Markers { first_prompt: Duration, error: Option<String> },
    /// No marker within `waited`; `error` is the first error it printed,
    /// `exited` whether it ended by itself meanwhile.
    NoMarkers { waited: Duration, error: Option<String>, exited: bool },
    /// It could not be started at all.
    Failed(String),
}

/// The shells being started, each on its own thread.
#[derive(Debug)]
pub struct Running {
    user_shell: PathBuf,
    probes: Vec<(&'static str, PathBuf, JoinHandle<Outcome>)>,
}

/// Starts bash, zsh and fish (those installed) at once. `user_shell` is the
/// one unixagent runs: its version is the one tried, and a failure there
/// is a problem, elsewhere a warning.
pub fn start(user_shell: &Path, timeout: Duration) -> Running {
    let mut probes = Vec::new();
    for (name, kind) in [("bash", ShellKind::Bash), ("zsh", ShellKind::Zsh), ("fish", ShellKind::Fish)] {
        let path = if ShellKind::detect(user_shell) == kind { Some(user_shell.to_path_buf()) } else { on_path(name) };
        let Some(path) = path else { continue };
        let p = path.clone();
        match std::thread::Builder::new().name(format!("doctor-{name}")).spawn(move || probe(&p, timeout)) {
            Ok(handle) => probes.push((name, path, handle)),
            Err(e) => eprintln!("unixagent: could not start a thread to try {name}: {e}"),
        }
    }
    Running { user_shell: user_shell.to_path_buf(), probes }
}

/// Waits for every shell and turns what each showed into a line.
/// `integration` is `shell.integration` from the config.
pub fn finish(running: Running, integration: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    if !integration {
        checks.push(Check::warning(
            AREA,
            "integration",
            "shell.integration = false in config.toml, so prompts are guessed and instructions start with ##",
            "remove that line once the shells below are ok",
        ));
    }
    if ShellKind::detect(&running.user_shell) == ShellKind::Other {
        checks.push(Check::warning(
            AREA,
            running.user_shell.display().to_string(),
            "your shell has no unixagent shell integration, so prompts are guessed and instructions start with ##",
            "set shell.command in config.toml (or $SHELL) to bash, zsh or fish for the full integration",
        ));
    }
    if running.probes.is_empty() {
        checks.push(Check::problem(
            AREA,
            "shells",
            "none of bash, zsh and fish is installed",
            "install one of them (bash 4.4 or later, zsh, fish)",
        ));
    }
    for (name, path, handle) in running.probes {
        let outcome = handle.join().unwrap_or_else(|_| Outcome::Failed("the check itself failed".into()));
        checks.push(verdict(name, &path, path == running.user_shell, &outcome));
    }
    checks
}

/// The line for one shell. A shell that is not the user's own only warns:
/// unixagent does not start it unless asked to.
pub fn verdict(name: &str, path: &Path, is_users: bool, outcome: &Outcome) -> Check {
    let debug = format!("`unixagent --shell-debug --shell {}` traces its start-up to show why", path.display());
    let theirs = if is_users { " (your shell)" } else { "" };
    let label = format!("{name}{theirs}");
    let bad = |message: String, fix: String| {
        if is_users {
            Check::problem(AREA, label.clone(), message, fix)
        } else {
            Check::warning(AREA, label.clone(), message, fix)
        }
    };
    match outcome {
        Outcome::Markers { first_prompt, error: None } => Check::ok(
            AREA,
            label,
            format!("{}: markers arrive, first prompt after {}", path.display(), seconds(*first_prompt)),
        ),
        Outcome::Markers { first_prompt, error: Some(e) } => Check::warning(
            AREA,
            label,
            format!(
                "{}: markers arrive, first prompt after {}, but it printed an error while starting ({e})",
                path.display(),
                seconds(*first_prompt)
            ),
            format!("fix that line of its start-up files; {debug}"),
        ),
        Outcome::NoMarkers { waited, error, exited } => {
            let printed = match error {
                Some(e) => format!("{name} printed: {e}"),
                None => format!("{name} printed no error"),
            };
            let what = if *exited {
                "it exited before its first prompt".to_string()
            } else {
                format!("no prompt marker after {}", seconds(*waited))
            };
            bad(
                format!("{}: {what}, so shell integration would not work ({printed})", path.display()),
                format!(
                    "fix what it printed in its start-up files, or look for an `exec` of another shell there; {debug}"
                ),
            )
        }
        Outcome::Failed(why) => bad(
            format!("{}: could not be started: {why}", path.display()),
            format!("check that {} runs", path.display()),
        ),
    }
}

/// "0.21 s", "5 s".
fn seconds(d: Duration) -> String {
    let hundredths = (d.as_millis() + 5) / 10;
    if hundredths.is_multiple_of(100) {
        format!("{} s", hundredths / 100)
    } else {
        format!("{}.{:02} s", hundredths / 100, hundredths % 100)
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Starts the shell on a PTY of its own, with the environment a session
/// gives it, and reads until its prompt is drawn or `timeout` passes.
fn probe(program: &Path, timeout: Duration) -> Outcome {
    let spec = ShellSpec { program: program.to_path_buf(), login: false, args: Vec::new(), integration: true };
    let launch = match integration::prepare(&spec) {
        Ok(l) => l,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let started = Instant::now();
    let pty = match Pty::spawn(&launch, 80, 24, &[]) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let outcome = watch(&pty, launch.aid.as_deref(), started, timeout);
    pty.signal(Signal::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while pty.try_wait().is_none() && Instant::now() < deadline {
        let mut fds = [PollFd::new(pty.fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(20u8));
        let mut sink = [0u8; 4096];
        let _ = nix::unistd::read(pty.fd(), &mut sink);
    }
    outcome
}

fn watch(pty: &Pty, aid: Option<&str>, started: Instant, timeout: Duration) -> Outcome {
    let mut scanner = OscScanner::following(aid);
    let mut log = StartupLog::default();
    let mut first_a: Option<Duration> = None;
    let mut buf = vec![0u8; 16 * 1024];
    let deadline = started + timeout;
    loop {
        let now = Instant::now();
        let until = first_a.map_or(deadline, |a| started + a + PROMPT_GRACE);
        if now >= until {
            return match first_a {
                Some(a) => Outcome::Markers { first_prompt: a, error: log.error_line() },
                None => Outcome::NoMarkers { waited: now - started, error: log.error_line(), exited: false },
            };
        }
        let wait = u16::try_from((until - now).as_millis().min(1000)).unwrap_or(1000);
        let mut fds = [PollFd::new(pty.fd(), PollFlags::POLLIN)];
        if poll(&mut fds, PollTimeout::from(wait)).is_err() {
            continue;
        }
        let n = match nix::unistd::read(pty.fd(), &mut buf) {
            Ok(0) => 0,
            Ok(n) => n,
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => continue,
            // EIO: the shell's side closed, it is gone.
            Err(_) => 0,
        };
        if n == 0 {
            return match first_a {
                Some(a) => Outcome::Markers { first_prompt: a, error: log.error_line() },
                None => Outcome::NoMarkers { waited: started.elapsed(), error: log.error_line(), exited: true },
            };
        }
        let bytes = &buf[..n];
        let mut prompt_drawn = false;
        let mut marker_at = None;
        scanner.feed_at(bytes, |end, e| match e {
            ShellEvent::PromptStart if marker_at.is_none() => marker_at = Some(end),
            ShellEvent::InputStart => prompt_drawn = true,
            _ => {}
        });
        // Start-up output is what came before our first marker, as in a
        // session.
        if first_a.is_none() {
            log.feed(&bytes[..marker_at.unwrap_or(n)]);
            if marker_at.is_some() {
                first_a = Some(started.elapsed());
            }
        }
        if prompt_drawn {
            return Outcome::Markers { first_prompt: started.elapsed(), error: log.error_line() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_start_up_is_a_problem_in_your_shell_and_a_warning_in_another() {
        let broken = Outcome::NoMarkers {
            waited: Duration::from_millis(1500),
            error: Some("bash: /home/u/.bashrc: line 1: nope: command not found".into()),
            exited: false,
        };
        let c = verdict("bash", Path::new("/bin/bash"), true, &broken);
        assert_eq!(c.status, super::super::Status::Problem);
        assert_eq!(c.name, "bash (your shell)");
        assert!(c.message.contains("no prompt marker after 1.50 s"), "{}", c.message);
        assert!(
            c.message.contains("bash printed: bash: /home/u/.bashrc: line 1: nope: command not found"),
            "{}",
            c.message
        );
        assert!(c.fix.as_deref().unwrap().contains("unixagent --shell-debug --shell /bin/bash"));
        let c = verdict("bash", Path::new("/bin/bash"), false, &broken);
        assert_eq!(c.status, super::super::Status::Warning);
        let ok = Outcome::Markers { first_prompt: Duration::from_millis(213), error: None };
        let c = verdict("zsh", Path::new("/bin/zsh"), false, &ok);
        assert_eq!(c.line(false), "ok       zsh: /bin/zsh: markers arrive, first prompt after 0.21 s");
    }

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(seconds(Duration::from_millis(5000)), "5 s");
        assert_eq!(seconds(Duration::from_millis(1234)), "1.23 s");
        assert_eq!(seconds(Duration::from_millis(40)), "0.04 s");
    }
}
