//! The pseudo-terminal the shell runs in.
//!
//! Built on portable-pty for opening the PTY pair and spawning the shell as
//! a session leader with the PTY as its controlling terminal. unixagent then
//! reads and writes the master through its own non-blocking duplicate of
//! the master descriptor, so the event loop can wait on it with epoll
//! instead of a reader thread, and reaps the shell itself with `waitpid` to
//! learn the signal that killed it (portable-pty only keeps its name).

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::integration::Launch;

/// Errors from the terminal layer. All are fatal for the session being
/// started: unixagent cannot run the shell without its PTY.
#[derive(Debug, thiserror::Error)]
pub enum TermError {
    /// A system call failed; `context` says what was being done.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// The shell could not be started.
    #[error("could not start {program}: {reason}; check the shell path (--shell or shell.command in the config)")]
    Spawn { program: String, reason: String },
}

impl TermError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        TermError::Io { context: context.into(), source }
    }
}

/// How the shell ended, as a shell would report it: the exit code, or
/// 128 + the signal number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitCode(pub i32);

/// A running shell in a PTY.
pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    // Kept so portable-pty's handle lives as long as the shell; never waited
    // on through it (see `try_wait`).
    _child: Box<dyn portable_pty::Child + Send + Sync>,
    pid: Pid,
    fd: OwnedFd,
}

/// A job on the shell's terminal: its process group, and the program its
/// leader runs where `/proc` says. A shell forks a job's leader as a copy
/// of itself and only then starts the program: the same group with a new
/// program is a job that may have missed a signal sent before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub group: Pid,
    pub program: Option<PathBuf>,
}

impl std::fmt::Debug for Pty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pty").field("pid", &self.pid).field("fd", &self.fd).finish()
    }
}

impl Pty {
    /// Starts the shell described by `launch` on a PTY of `cols` x `rows`,
    /// in the current directory, with `env` added to the environment.
    pub fn spawn(launch: &Launch, cols: u16, rows: u16, env: &[(OsString, OsString)]) -> Result<Self, TermError> {
        let spawn_err = |reason: String| TermError::Spawn { program: launch.program.display().to_string(), reason };
        let pair = native_pty_system()
            .openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .map_err(|e| TermError::io("opening a pseudo-terminal", std::io::Error::other(e.to_string())))?;
        let mut cmd = CommandBuilder::new(&launch.program);
        cmd.args(&launch.args);
        for (k, v) in launch.env.iter().chain(env) {
            cmd.env(k, v);
        }
        // portable-pty defaults to $HOME; a shell should start where we are.
        let cwd: PathBuf = std::env::current_dir().map_err(|e| TermError::io("reading the current directory", e))?;
        cmd.cwd(cwd);
        let child = pair.slave.spawn_command(cmd).map_err(|e| spawn_err(e.to_string()))?;
        // The parent must not hold the slave open, or reads on the master
        // never see the shell's side close.
        drop(pair.slave);
        let pid = child.process_id().ok_or_else(|| spawn_err("no process id".into()))?;
        let raw = pair
            .master
            .as_raw_fd()
            .ok_or_else(|| TermError::io("reading the PTY descriptor", std::io::Error::other("none")))?;
        // SAFETY: `raw` is the live master descriptor owned by `pair.master`;
        // we only borrow it for the duration of the dup.
        let borrowed = unsafe { BorrowedFd::borrow_raw(raw) };
        let fd = borrowed.try_clone_to_owned().map_err(|e| TermError::io("duplicating the PTY descriptor", e))?;
        set_nonblocking(fd.as_fd())?;
        let pid = Pid::from_raw(i32::try_from(pid).map_err(|_| spawn_err("process id out of range".into()))?);
        Ok(Self { master: pair.master, _child: child, pid, fd })
    }

    /// The master side, non-blocking, for reads and writes.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// A second handle to the master, for an event loop that wants to own
    /// one (e.g. in `tokio::io::unix::AsyncFd`).
    pub fn clone_fd(&self) -> Result<OwnedFd, TermError> {
        self.fd.try_clone().map_err(|e| TermError::io("duplicating the PTY descriptor", e))
    }

    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// Tells the shell the terminal's new size (the kernel sends SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), TermError> {
        self.master
            .resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .map_err(|e| TermError::io("resizing the PTY", std::io::Error::other(e.to_string())))
    }

    /// Reaps the shell if it has exited. Call on SIGCHLD.
    pub fn try_wait(&self) -> Option<ExitCode> {
        match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => Some(ExitCode(code)),
            Ok(WaitStatus::Signaled(_, sig, _)) => Some(ExitCode(128 + sig as i32)),
            // ECHILD: already reaped; report a generic failure rather than
            // waiting forever.
            Err(nix::errno::Errno::ECHILD) => Some(ExitCode(1)),
            _ => None,
        }
    }

    /// Sends `sig` to the shell.
    pub fn signal(&self, sig: Signal) {
        let _ = nix::sys::signal::kill(self.pid, sig);
    }

    /// The job holding the terminal when it is one the shell started, not
    /// the shell itself (which leads its own process group).
    pub fn foreground_job(&self) -> Option<Job> {
        let group = nix::unistd::tcgetpgrp(self.fd.as_fd()).ok()?;
        (group != self.pid).then(|| Job { group, program: std::fs::read_link(format!("/proc/{group}/exe")).ok() })
    }

    /// Sends `sig` to every process of a job.
    pub fn signal_job(&self, job: &Job, sig: Signal) {
        let _ = nix::sys::signal::killpg(job.group, sig);
    }
}

fn set_nonblocking(fd: BorrowedFd<'_>) -> Result<(), TermError> {
    let flags = fcntl(fd, FcntlArg::F_GETFL).map_err(|e| TermError::io("reading PTY flags", e.into()))?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd, FcntlArg::F_SETFL(flags)).map_err(|e| TermError::io("making the PTY non-blocking", e.into()))?;
    Ok(())
}

/// Wraps an owned descriptor as a `File` for plain `read`/`write` calls.
pub fn fd_file(fd: OwnedFd) -> std::fs::File {
    // SAFETY: ownership of the descriptor moves into the File.
    unsafe { std::fs::File::from_raw_fd(fd_into_raw(fd)) }
}

fn fd_into_raw(fd: OwnedFd) -> std::os::fd::RawFd {
    use std::os::fd::IntoRawFd;
    fd.into_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integration::ShellKind;
    use std::io::Read;

    #[test]
    fn runs_a_program_and_reports_its_exit_and_signal() {
        for (script, want) in [("printf hi; exit 3", 3), ("kill -TERM $$", 128 + 15)] {
            let launch = Launch {
                program: "/bin/sh".into(),
                args: vec!["-c".into(), script.into()],
                env: vec![],
                kind: ShellKind::Other,
                integrated: false,
                aid: None,
                scripts: None,
            };
            let pty = Pty::spawn(&launch, 80, 24, &[]).unwrap();
            let mut f = fd_file(pty.clone_fd().unwrap());
            let mut out = Vec::new();
            let mut buf = [0u8; 256];
            // Read until the slave side closes (EIO); EAGAIN means "not yet".
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                match f.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        let mut fds = [nix::poll::PollFd::new(pty.fd(), nix::poll::PollFlags::POLLIN)];
                        let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(100u16));
                    }
                    Err(_) => break,
                }
                assert!(std::time::Instant::now() < deadline, "no EOF from the PTY");
            }
            if script.starts_with("printf") {
                assert_eq!(out, b"hi");
            }
            let code = loop {
                if let Some(c) = pty.try_wait() {
                    break c;
                }
                assert!(std::time::Instant::now() < deadline, "shell never exited");
                std::thread::yield_now();
            };
            assert_eq!(code, ExitCode(want));
        }
    }
}
