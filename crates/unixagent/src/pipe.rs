//! Lines from a pipe: stdin is not a terminal.
//!
//! unixagent does not touch terminal modes here. It starts the shell with
//! its stdin connected to unixagent and reads its own stdin line by line:
//! a line starting with `#` is an instruction, any other line goes to the
//! shell (a `#!` first line is a script's interpreter line and is skipped).
//! Before handling an instruction, unixagent waits until the shell has run
//! every line sent before it, so output appears in script order. The shell's
//! stdout and stderr are unixagent's own.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::Context;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::{shell, sink, terminal};

pub fn run(shell_path: &Path, login: bool, args: &[OsString]) -> anyhow::Result<i32> {
    let dir = PrivateDir::create()?;
    let fifo = dir.0.join("sync");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).context("creating the sync FIFO")?;
    let mut cmd = Command::new(shell_path);
    if login {
        cmd.arg("-l");
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .env(shell::SESSION_ENV, format!("pipe-{}", std::process::id()))
        .spawn()
        .with_context(|| format!("could not start {}", shell_path.display()))?;
    let mut to_shell = child.stdin.take();
    let colour = terminal::colour(std::io::stderr().as_fd());
    let stdin = std::io::stdin();
    let mut first = true;
    for line in stdin.lock().split(b'\n') {
        let line = line.context("reading standard input")?;
        let is_shebang = first && line.starts_with(b"#!");
        first = false;
        if is_shebang {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim_start().starts_with('#') {
            let Some(w) = to_shell.as_mut() else { break };
            if !wait_for_shell(w, &fifo, &child)? {
                break;
            }
            let instruction = text.trim_start().trim_start_matches('#').trim();
            eprintln!("{}", sink::captured_line(instruction, colour));
            continue;
        }
        let Some(w) = to_shell.as_mut() else { break };
        if w.write_all(&line).and_then(|()| w.write_all(b"\n")).is_err() {
            // The shell exited (e.g. an `exit` line); the rest is unread,
            // as it would be with the shell reading the pipe itself.
            break;
        }
    }
    drop(to_shell);
    let status = child.wait().context("waiting for the shell")?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Has the shell run everything sent so far, by asking it to write one byte
/// into a FIFO and waiting for that byte or for the shell's exit. Returns
/// false when the shell is gone.
fn wait_for_shell(w: &mut impl Write, fifo: &Path, child: &Child) -> anyhow::Result<bool> {
    let quoted = fifo.to_string_lossy().replace('\'', "'\\''");
    if w.write_all(format!("printf . > '{quoted}'\n").as_bytes()).and_then(|()| w.flush()).is_err() {
        return Ok(false);
    }
    let reader = nix::fcntl::open(
        fifo,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_NONBLOCK,
        nix::sys::stat::Mode::empty(),
    )
    .context("opening the sync FIFO")?;
    let pidfd = pidfd_open(child.id()).context("watching the shell")?;
    loop {
        let mut fds = [PollFd::new(reader.as_fd(), PollFlags::POLLIN), PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e).context("waiting for the shell"),
            Ok(_) => {}
        }
        if fds[0].revents().is_some_and(|r| r.contains(PollFlags::POLLIN)) {
            let mut b = [0u8; 8];
            if matches!(nix::unistd::read(&reader, &mut b), Ok(n) if n > 0) {
                return Ok(true);
            }
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            return Ok(false);
        }
    }
}

/// A descriptor that becomes readable when process `pid` exits.
fn pidfd_open(pid: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| std::io::Error::other("descriptor out of range"))?;
    // SAFETY: the kernel just returned this descriptor to us and nothing
    // else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A mode-0700 temporary directory, removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn create() -> anyhow::Result<Self> {
        let template = std::env::temp_dir().join("unixagent-XXXXXX");
        let path = nix::unistd::mkdtemp(&template).with_context(|| format!("creating {}", template.display()))?;
        Ok(Self(path))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
