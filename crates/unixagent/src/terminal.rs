//! The outer terminal: raw mode that is always undone, its size, and
//! blocking writes that survive EINTR and a non-blocking descriptor.

use std::os::fd::{AsFd, BorrowedFd};

/// Raw mode on the outer terminal for as long as this value lives. A panic
/// hook restores the terminal too, so even a crash leaves a usable shell.
#[derive(Debug)]
pub struct RawMode(());

impl RawMode {
    pub fn enable() -> std::io::Result<Self> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::terminal::disable_raw_mode();
            previous(info);
        }));
        crossterm::terminal::enable_raw_mode()?;
        Ok(Self(()))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// The outer terminal's size as (columns, rows), with a sane fallback.
pub fn size() -> (u16, u16) {
    match crossterm::terminal::size() {
        Ok((c, r)) if c > 0 && r > 0 => (c, r),
        _ => (80, 24),
    }
}

/// Writes all of `bytes` to `fd`, waiting when the descriptor is full.
pub fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> std::io::Result<()> {
    use nix::errno::Errno;
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                let mut fds = [nix::poll::PollFd::new(fd, nix::poll::PollFlags::POLLOUT)];
                let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::NONE);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Writes to standard output, unbuffered.
pub fn out(bytes: &[u8]) -> std::io::Result<()> {
    write_all(std::io::stdout().as_fd(), bytes)
}

/// Whether output should be coloured: a terminal, and NO_COLOR unset.
pub fn colour(fd: BorrowedFd<'_>) -> bool {
    nix::unistd::isatty(fd).unwrap_or(false) && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
