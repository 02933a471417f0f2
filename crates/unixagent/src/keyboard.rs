//! The keyboard, read on the event loop itself.
//!
//! The terminal is watched with epoll like the PTY, but it stays in
//! blocking mode: making it non-blocking would change the file description
//! the shell that started unixagent shares, and leak `O_NONBLOCK` into it
//! after we exit. Raw mode sets `VMIN` to 0 instead (see
//! [`crate::terminal::RawMode`]), so a read returns at once with what is
//! waiting and never blocks. Compared with a reader thread this saves one
//! wake-up (and one chance to wait for the scheduler) per keystroke.
//!
//! While the user's `$EDITOR` owns the terminal the loop simply does not
//! read it.

use std::os::fd::{AsFd, OwnedFd};

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
        // `poll_read_ready` wakes through the task's one waker slot; the
        // `readable` future would join and leave a list of waiters on every
        // pass of the loop.
        let mut guard = match std::future::poll_fn(|cx| self.fd.poll_read_ready(cx)).await {
            Ok(g) => g,
            Err(_) => return Keys::Gone,
        };
        loop {
            match nix::unistd::read(guard.get_inner(), &mut self.buf) {
                // With VMIN 0 nothing waiting reads as 0 bytes: another
                // reader took them, or the terminal hung up.
                Ok(0) => {
                    if guard.ready().is_read_closed() {
                        return Keys::Gone;
                    }
                    guard.clear_ready();
                    return Keys::Nothing;
                }
                Ok(n) => {
                    // Less than asked for: the queue is empty now, and the
                    // next byte is a new edge. (A clear is dropped when an
                    // event came in since the wake-up, so none is lost.)
                    if n < self.buf.len() {
                        guard.clear_ready();
                    }
                    return Keys::Bytes(&self.buf[..n]);
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => {
                    guard.clear_ready();
                    return Keys::Nothing;
                }
                Err(_) => return Keys::Gone,
            }
        }
    }
}
