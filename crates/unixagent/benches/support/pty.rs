//! A program on a PTY this benchmark owns, as a terminal emulator runs
//! it: the benchmark types into the master side and reads what comes back.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use memchr::memmem;
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::pty::{Winsize, openpty};

/// How long any one step may take before the benchmark gives up.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A program running in a PTY whose master side this program reads.
#[derive(Debug)]
pub struct Session {
    master: OwnedFd,
    child: Child,
    /// Output read but not consumed yet (only a tail is kept).
    seen: Vec<u8>,
    buf: Vec<u8>,
}

impl Session {
    /// Starts `cmd` on a new 80x24 PTY; `what` names it in errors.
    pub fn spawn(mut cmd: Command, what: &str) -> anyhow::Result<Self> {
        let size = Winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = openpty(&size, None).context("opening a PTY")?;
        for fd in [&pty.master, &pty.slave] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).context("setting close-on-exec on the PTY")?;
        }
        cmd.stdin(Stdio::from(pty.slave.try_clone()?))
            .stdout(Stdio::from(pty.slave.try_clone()?))
            .stderr(Stdio::from(pty.slave));
        // SAFETY: the hook runs between fork and exec and only makes
        // async-signal-safe system calls.
        unsafe { cmd.pre_exec(take_terminal) };
        let child = cmd.spawn().with_context(|| format!("starting {what}"))?;
        // The parent's copies of the slave side close here, so a closed
        // session reads as EOF instead of hanging.
        drop(cmd);
        Ok(Self { master: pty.master, child, seen: Vec::new(), buf: vec![0; 64 * 1024] })
    }

    /// Spawns `cmd` and waits until `prompt` is on the terminal.
    pub fn start(cmd: Command, what: &str, prompt: &[u8]) -> anyhow::Result<Self> {
        let mut s = Self::spawn(cmd, what)?;
        s.wait_for(prompt, STEP_TIMEOUT).with_context(|| format!("{what} never showed its prompt"))?;
        Ok(s)
    }

    /// The process whose cost is measured: the proxy, or the shell itself
    /// on a bare PTY.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&self, mut bytes: &[u8]) -> anyhow::Result<()> {
        while !bytes.is_empty() {
            match nix::unistd::write(&self.master, bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(Errno::EINTR) => {}
                Err(e) => return Err(e).context("writing to the PTY"),
            }
        }
        Ok(())
    }

    /// Reads until `needle` has arrived and consumes everything up to and
    /// including it.
    pub fn wait_for(&mut self, needle: &[u8], timeout: Duration) -> anyhow::Result<()> {
        let finder = memmem::Finder::new(needle);
        let deadline = Instant::now() + timeout;
        let mut from = 0;
        loop {
            if let Some(i) = finder.find(&self.seen[from..]) {
                self.seen.drain(..from + i + needle.len());
                return Ok(());
            }
            // A match may straddle the next read.
            from = self.seen.len().saturating_sub(needle.len().saturating_sub(1));
            if self.seen.len() > 256 * 1024 {
                let cut = self.seen.len() - 4096;
                self.seen.drain(..cut);
                from -= cut;
            }
            match self.read(deadline)? {
                Some(0) => bail!("the terminal closed before {:?} appeared", String::from_utf8_lossy(needle)),
                Some(n) => self.seen.extend_from_slice(&self.buf[..n]),
                None => {
                    let tail = &self.seen[self.seen.len().saturating_sub(300)..];
                    bail!(
                        "{:?} did not appear within {:?}; the terminal last showed {:?}",
                        String::from_utf8_lossy(needle),
                        timeout,
                        String::from_utf8_lossy(tail)
                    );
                }
            }
        }
    }

    /// One read from the master: `None` at the deadline, `Some(0)` once the
    /// slave side is closed.
    pub fn read(&mut self, deadline: Instant) -> anyhow::Result<Option<usize>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(ms)) {
                Ok(0) | Err(Errno::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(e).context("waiting on the PTY"),
            }
            match nix::unistd::read(&self.master, &mut self.buf) {
                Ok(n) => return Ok(Some(n)),
                Err(Errno::EINTR | Errno::EAGAIN) => {}
                // Linux reports a master whose slave side is closed as EIO.
                Err(Errno::EIO) => return Ok(Some(0)),
                Err(e) => return Err(e).context("reading from the PTY"),
            }
        }
    }

    /// Types `exit` and waits for the process to end, reading its output so
    /// it never blocks on a full terminal.
    pub fn close(mut self) -> anyhow::Result<()> {
        self.send(b"exit\r")?;
        let deadline = Instant::now() + STEP_TIMEOUT;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            if self.read(Instant::now() + Duration::from_millis(20))? == Some(0) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        bail!("process {} did not exit after `exit`", self.pid())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs in the child before exec: a new session whose controlling terminal
/// is the PTY on standard input, as a terminal emulator sets it up.
fn take_terminal() -> std::io::Result<()> {
    nix::unistd::setsid()?;
    // SAFETY: TIOCSCTTY takes an integer argument and touches no memory.
    if unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
