//! The outer terminal: raw mode that is always undone, its size, and
//! blocking writes that survive EINTR and a non-blocking descriptor.

use std::os::fd::{AsFd, BorrowedFd};

/// Raw mode on the outer terminal for as long as this value lives. A panic
/// hook restores the terminal too, so even a crash leaves a usable shell.
///
/// This is `cfmakeraw` with one difference: `VMIN` is 0, so a read of the
/// terminal returns at once with what is waiting (possibly nothing) instead
/// of waiting for a byte. The keyboard is read only when epoll says bytes
/// wait, and with `VMIN` 0 a read needs no `FIONREAD` before it to be sure
/// it cannot block: one system call less per keystroke. The descriptor
/// itself stays blocking, as the shell that started unixagent shares it.
#[derive(Debug)]
pub struct RawMode(());

/// The terminal's settings before raw mode, to put back.
static ORIGINAL: std::sync::Mutex<Option<nix::sys::termios::Termios>> = std::sync::Mutex::new(None);

impl RawMode {
    pub fn enable() -> std::io::Result<Self> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            raw_off();
            previous(info);
        }));
        raw_on()?;
        Ok(Self(()))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        raw_off();
    }
}

/// Puts the terminal on standard input in raw mode (see [`RawMode`]),
/// keeping its earlier settings the first time.
pub fn raw_on() -> std::io::Result<()> {
    use nix::sys::termios::{SetArg, SpecialCharacterIndices, cfmakeraw, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let current = tcgetattr(stdin.as_fd())?;
    let mut raw = current.clone();
    cfmakeraw(&mut raw);
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    if let Ok(mut original) = ORIGINAL.lock() {
        original.get_or_insert(current);
    }
    tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw)?;
    Ok(())
}

/// Puts back the settings [`raw_on`] found (a terminal never put in raw
/// mode is left alone).
pub fn raw_off() {
    let saved = ORIGINAL.lock().ok().and_then(|o| o.clone());
    if let Some(original) = saved {
        let _ = nix::sys::termios::tcsetattr(std::io::stdin().as_fd(), nix::sys::termios::SetArg::TCSANOW, &original);
    }
}

/// The outer terminal's size as (columns, rows), with a sane fallback.
pub fn size() -> (u16, u16) {
    // Only the terminal's own answer: `crossterm::terminal::size` runs
    // `tput` twice when there is no terminal, which cost every unattended
    // start (and every child agent) two processes for the same 80×24.
    match crossterm::terminal::window_size() {
        Ok(w) if w.columns > 0 && w.rows > 0 => (w.columns, w.rows),
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
