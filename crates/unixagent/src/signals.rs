//! The signals the session waits on, as one event source.
//!
//! Each signal sets a flag and writes a byte to a socket pair (signal-hook's
//! self-pipe); the event loop watches the socket's read end with epoll and,
//! when it wakes, reads the flags. One branch of the loop's `select!` then
//! stands for all six signals. A branch per signal (tokio's `Signal`) costs
//! a future built and polled for each of them on every pass of the loop,
//! which is every keystroke and every chunk of output: that was a third of
//! the instructions spent echoing a key.
//!
//! The handlers replace the default actions, so SIGINT and SIGQUIT sent to
//! unixagent itself (not typed: in raw mode Ctrl+C is a byte for the shell)
//! cannot kill it and leave the terminal raw. They are reset to the
//! defaults in the shell, as every handler is by `exec`.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use tokio::io::unix::AsyncFd;

/// The signals, in the order the loop handles them.
const WATCHED: [libc::c_int; 6] = [SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGWINCH];

/// Which signals arrived since the last look.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub child: bool,
    pub term: bool,
    pub hup: bool,
    pub int: bool,
    pub quit: bool,
    pub winch: bool,
}

/// The session's signals, registered for as long as this value lives.
#[derive(Debug)]
pub struct Signals {
    wake: AsyncFd<UnixStream>,
    flags: [Arc<AtomicBool>; 6],
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Registers the handlers. Called before the shell starts, so that no
    /// signal about it is lost.
    pub fn new() -> std::io::Result<Self> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let flags: [Arc<AtomicBool>; 6] = Default::default();
        let mut ids = Vec::with_capacity(WATCHED.len() * 2);
        for (sig, flag) in WATCHED.iter().zip(&flags) {
            // The flag first: by the time the byte wakes the loop, it is set.
            ids.push(signal_hook::flag::register(*sig, Arc::clone(flag))?);
            ids.push(signal_hook::low_level::pipe::register(*sig, write.try_clone()?)?);
        }
        // SAFETY: the AsyncFd owns the socket, which stays open and
        // unchanged for as long as it is registered.
        let wake = unsafe { AsyncFd::register_with_interest(read, tokio::io::Interest::READABLE) }?;
        Ok(Self { wake, flags, ids })
    }

    /// Waits until at least one signal has arrived, and says which.
    pub async fn next(&mut self) -> Fired {
        loop {
            let Ok(mut guard) = std::future::poll_fn(|cx| self.wake.poll_read_ready(cx)).await else {
                return std::future::pending().await;
            };
            // Drained before the flags are read: a signal arriving in
            // between leaves a byte, and the next pass finds its flag.
            let mut sink = [0u8; 64];
            loop {
                let mut socket: &UnixStream = guard.get_inner();
                match socket.read(&mut sink) {
                    Ok(n) if n > 0 => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
            guard.clear_ready();
            let [child, term, hup, int, quit, winch] = self.flags.each_ref().map(|f| f.swap(false, Ordering::SeqCst));
            let fired = Fired { child, term, hup, int, quit, winch };
            if fired != Fired::default() {
                return fired;
            }
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_is_reported_once() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let mut signals = Signals::new().unwrap();
            signal_hook::low_level::raise(SIGWINCH).unwrap();
            signal_hook::low_level::raise(SIGQUIT).unwrap();
            let fired = signals.next().await;
            assert_eq!(fired, Fired { quit: true, winch: true, ..Fired::default() });
            // Nothing more until the next one.
            let again = tokio::time::timeout(std::time::Duration::from_millis(50), signals.next()).await;
            assert!(again.is_err(), "{again:?}");
            signal_hook::low_level::raise(SIGHUP).unwrap();
            assert_eq!(signals.next().await, Fired { hup: true, ..Fired::default() });
        });
    }
}
