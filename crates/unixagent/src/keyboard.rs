//! The keyboard: keystrokes read on a thread of their own, which can be
//! paused while another program (the user's `$EDITOR`) owns the terminal.
//!
//! Blocking reads keep the user's terminal in blocking mode, which the
//! shell that started unixagent expects to find again afterwards. The
//! thread waits in `poll` on the terminal and on a wake-up pipe; pausing
//! writes to the pipe and waits until the thread has parked, so not one
//! keystroke meant for the editor is taken.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio::sync::mpsc;

#[derive(Debug, Default)]
struct Flags {
    paused: bool,
    parked: bool,
}

#[derive(Debug)]
struct Control {
    flags: Mutex<Flags>,
    changed: Condvar,
    wake: OwnedFd,
}

static CONTROL: OnceLock<Arc<Control>> = OnceLock::new();

/// Starts the reader; the channel closes when the terminal goes away.
pub fn spawn() -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel(64);
    let (wake_r, wake_w) = match nix::unistd::pipe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("unixagent: could not start the keyboard reader: {e}");
            return rx;
        }
    };
    let control = Arc::new(Control { flags: Mutex::default(), changed: Condvar::new(), wake: wake_w });
    let _ = CONTROL.set(control.clone());
    let spawned = std::thread::Builder::new().name("keyboard".into()).spawn(move || read_loop(&control, &wake_r, &tx));
    if spawned.is_err() {
        // Without a reader the channel closes at once, which the loop treats
        // as the terminal going away.
        eprintln!("unixagent: could not start the keyboard reader");
    }
    rx
}

fn read_loop(control: &Control, wake: &OwnedFd, tx: &mpsc::Sender<Vec<u8>>) {
    let stdin = std::io::stdin();
    let mut buf = [0u8; 4096];
    loop {
        if let Ok(mut flags) = control.flags.lock()
            && flags.paused
        {
            flags.parked = true;
            control.changed.notify_all();
            while flags.paused {
                flags = match control.changed.wait(flags) {
                    Ok(f) => f,
                    Err(_) => return,
                };
            }
            flags.parked = false;
        }
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN), PollFd::new(wake.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(_) => return,
        }
        let woken = fds[1].revents().is_some_and(|r| !r.is_empty());
        let ready = fds[0].revents().is_some_and(|r| !r.is_empty());
        if woken {
            let mut sink = [0u8; 64];
            let _ = nix::unistd::read(wake, &mut sink);
            continue;
        }
        if !ready {
            continue;
        }
        match nix::unistd::read(stdin.as_fd(), &mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx.blocking_send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(_) => return,
        }
    }
}

/// Stops reading keys until [`resume`]; returns once the reader is parked.
pub fn pause() {
    let Some(control) = CONTROL.get() else { return };
    let Ok(mut flags) = control.flags.lock() else { return };
    flags.paused = true;
    let _ = nix::unistd::write(&control.wake, b"p");
    while !flags.parked {
        flags = match control.changed.wait(flags) {
            Ok(f) => f,
            Err(_) => return,
        };
    }
}

/// Reads keys again after [`pause`].
pub fn resume() {
    let Some(control) = CONTROL.get() else { return };
    if let Ok(mut flags) = control.flags.lock() {
        flags.paused = false;
        control.changed.notify_all();
    }
}
