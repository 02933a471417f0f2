//! The keyboard, read on the event loop itself.
//!
//! The terminal is watched with epoll like the PTY, but it stays in
//! blocking mode: making it non-blocking would change the file description
//! the shell that started unixagent shares, and leak `O_NONBLOCK` into it
//! after we exit. A blocking descriptor is safe to read only when bytes are
//! waiting, so each wake-up asks the terminal how many there are
//! (`FIONREAD`) and reads no more than that; a read never waits. Compared
//! with a reader thread this saves one wake-up (and one chance to wait for
//! the scheduler) per keystroke.
//!
//! While the user's `$EDITOR` owns the terminal the loop simply does not
//! read it.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::errno::Errno;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The terminal, registered with the event loop.
#[derive(Debug)]
pub struct Keyboard {
    fd: AsyncFd<OwnedFd>,
    buf: Vec<u8>,
}

/// What one wake-up brought.
#[derive(Debug)]
pub enum Keys<'a> {
    /// Keystrokes.
    Bytes(&'a [u8]),
    /// Nothing after all (another reader took it, or a spurious wake-up).
    Nothing,
    /// The terminal is gone: closed window, dropped ssh.
    Gone,
}

impl Keyboard {
    /// Watches standard input, which must be a terminal.
    pub fn open() -> std::io::Result<Self> {
        let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
        // SAFETY: the AsyncFd owns this duplicate, which stays open and
        // unchanged for as long as it is registered.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self { fd, buf: vec![0; 4096] })
    }

    /// Waits for keystrokes and reads what is there.
    pub async fn read(&mut self) -> Keys<'_> {
        let mut guard = match self.fd.readable().await {
            Ok(g) => g,
            Err(_) => return Keys::Gone,
        };
        let raw = guard.get_inner().as_raw_fd();
        let waiting = match waiting(raw) {
            Ok(n) => n,
            Err(_) => return Keys::Gone,
        };
        if waiting == 0 {
            if guard.ready().is_read_closed() {
                return Keys::Gone;
            }
            guard.clear_ready();
            return Keys::Nothing;
        }
        let want = waiting.min(self.buf.len());
        if want == waiting {
            // All of it is read now; the next byte is a new edge.
            guard.clear_ready();
        }
        loop {
            match nix::unistd::read(guard.get_inner(), &mut self.buf[..want]) {
                Ok(0) => return Keys::Gone,
                Ok(n) => return Keys::Bytes(&self.buf[..n]),
                Err(Errno::EINTR) => {}
                Err(_) => return Keys::Gone,
            }
        }
    }
}

/// Bytes waiting in the terminal's input queue.
fn waiting(fd: std::os::fd::RawFd) -> std::io::Result<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which is valid.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(usize::try_from(n).unwrap_or(0))
}
