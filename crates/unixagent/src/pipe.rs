//! Lines from a pipe: stdin is not a terminal.
//!
//! unixagent does not touch terminal modes here. It starts the shell with
//! its stdin connected to unixagent and reads its own stdin line by line:
//! a line starting with `#` is an instruction, any other line goes to the
//! shell (a `#!` first line is a script's interpreter line and is skipped).
//! The shell's stdout and stderr are unixagent's own, so shell lines behave
//! exactly as they would piped into the shell itself.
//!
//! Before an instruction, unixagent waits until the shell has run every
//! line sent before it (so output appears in script order) and asks it for
//! its directory, which the shell writes into a pipe it inherited (a
//! descriptor numbered 100 or above, out of the way of scripts' own
//! redirections): nothing of this lives on disk. The instruction goes to a batch session (see
//! `session::batch`) started at the first `#` line in that directory, with
//! a shell of its own under a PTY; later instructions continue the same
//! conversation, and its shell follows the pipe's shell to its directory
//! first. The agent writes plain text to stdout, asks nobody (a command
//! that needs a person is denied and the model told), and the next line
//! waits until its turn has ended. The run's exit status is that of the
//! last line: the shell's, or the turn's when an instruction came last.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::fd::{AsFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::{session, shell};

/// Runs the pipe. `setup` builds the options of the batch session that
/// runs `#` lines, given the channel its lines come on and the one its
/// turns' exit statuses go to.
pub fn run(
    shell_path: &Path,
    login: bool,
    args: &[OsString],
    setup: impl FnOnce(UnboundedReceiver<String>, std::sync::mpsc::Sender<i32>) -> session::Options,
) -> anyhow::Result<i32> {
    let (mut sync, shells_end) = SyncPipe::new()?;
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
    // The shell has its copy; ours would only keep the pipe open and leak
    // into other children.
    drop(shells_end);
    let mut to_shell = child.stdin.take();
    let cannot_instruct = no_instructions(shell_path);
    let mut setup = Some(setup);
    let mut agent: Option<Agent> = None;
    // The exit status of the turn when an instruction was the last line.
    let mut last_turn = None;
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
            if let Some(why) = &cannot_instruct {
                eprintln!("unixagent: skipped `{}`: {why}", text.trim());
                last_turn = Some(1);
                continue;
            }
            let Some(w) = to_shell.as_mut() else { break };
            let Some(dir) = sync.shell_dir(w, &child)? else { break };
            let instruction = text.trim_start().trim_start_matches('#').trim();
            if instruction.is_empty() {
                continue;
            }
            let a = match agent.as_mut() {
                Some(a) => a,
                None => {
                    let Some(setup) = setup.take() else { break };
                    agent.insert(Agent::start(setup, &dir)?)
                }
            };
            last_turn = Some(a.instruct(instruction, dir)?);
            continue;
        }
        last_turn = None;
        let Some(w) = to_shell.as_mut() else { break };
        if w.write_all(&line).and_then(|()| w.write_all(b"\n")).is_err() {
            // The shell exited (e.g. an `exit` line); the rest is unread,
            // as it would be with the shell reading the pipe itself.
            break;
        }
    }
    drop(to_shell);
    if let Some(a) = agent {
        a.finish();
    }
    let status = child.wait().context("waiting for the shell")?;
    use std::os::unix::process::ExitStatusExt;
    let shell_status = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    Ok(last_turn.unwrap_or(shell_status))
}

/// Why `#` lines cannot run between the lines of a script piped into
/// this shell, if they cannot.
fn no_instructions(shell_path: &Path) -> Option<String> {
    use ua_term::integration::ShellKind;
    match ShellKind::detect(shell_path) {
        ShellKind::Bash | ShellKind::Zsh => None,
        // fish reads its whole input before it runs any of it: the wait
        // for the lines before an instruction would never end.
        ShellKind::Fish => Some(
            "fish runs a piped script only after reading all of it, so an instruction cannot run between its lines; pipe the script through bash or zsh (`unixagent --shell bash`), or use --json".into(),
        ),
        ShellKind::Other => Some(format!(
            "{} has no unixagent shell integration for the agent's commands; use bash or zsh (`unixagent --shell bash`)",
            shell_path.display()
        )),
    }
}

/// The batch session running the pipe's instructions, on a thread of its
/// own.
struct Agent {
    lines: UnboundedSender<String>,
    turns: std::sync::mpsc::Receiver<i32>,
    thread: std::thread::JoinHandle<i32>,
    /// Where its shell is.
    dir: String,
    /// The pipe has ended its input: the session ending is expected.
    input_closed: Arc<AtomicBool>,
}

impl Agent {
    /// Starts the session in `dir`, the pipe's shell's directory.
    fn start(
        setup: impl FnOnce(UnboundedReceiver<String>, std::sync::mpsc::Sender<i32>) -> session::Options,
        dir: &str,
    ) -> anyhow::Result<Self> {
        let (lines, rx) = unbounded_channel();
        let (turns_tx, turns) = std::sync::mpsc::channel();
        let opts = setup(rx, turns_tx);
        if !dir.is_empty() {
            // Nothing else runs on another thread yet; the shell the
            // session starts inherits it.
            std::env::set_current_dir(dir).with_context(|| format!("changing to {dir}"))?;
        }
        let input_closed = Arc::new(AtomicBool::new(false));
        let closed = Arc::clone(&input_closed);
        let thread = std::thread::spawn(move || {
            let code = match session::run(opts) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("unixagent: {e:#}");
                    1
                }
            };
            if !closed.load(Ordering::SeqCst) {
                // The session ended by itself (SIGTERM or SIGINT, its shell
                // exited, it could not start): the run ends with it, as it
                // would have without an agent.
                std::process::exit(code);
            }
            code
        });
        Ok(Self { lines, turns, thread, dir: dir.to_string(), input_closed })
    }

    /// Runs one instruction from `dir`; returns the turn's exit status.
    fn instruct(&mut self, instruction: &str, dir: String) -> anyhow::Result<i32> {
        if !dir.is_empty() && dir != self.dir {
            if let Some(dir) = quote(&dir) {
                let _ = self.lines.send(format!("cd {dir}"));
            }
            self.dir = dir;
        }
        let _ = self.lines.send(format!("# {instruction}"));
        // The session thread ends the process if it stops on its own, so a
        // closed channel here is a session that failed between the two.
        self.turns.recv().context("the agent session ended before the instruction ran")
    }

    /// Ends the session once it has finished what it was given.
    fn finish(self) {
        self.input_closed.store(true, Ordering::SeqCst);
        drop(self.lines);
        let _ = self.thread.join();
    }
}

/// `text` as one word that bash, zsh and fish all read back as `text`;
/// `None` for text with a NUL byte, which no shell word can hold.
fn quote(text: &str) -> Option<String> {
    shlex::try_quote(text).ok().map(std::borrow::Cow::into_owned)
}

/// The lowest descriptor number the shell's end of the sync pipe takes:
/// scripts redirect 0 to 9, and bash and zsh put their own above 9 where
/// free, so a number this high is nobody else's.
const SYNC_FD_MIN: RawFd = 100;

/// A pipe the shell writes its directory into, each answer ended by a NUL
/// (the one byte a path cannot hold).
struct SyncPipe {
    reader: OwnedFd,
    /// The shell's end, as numbered in the shell.
    fd: RawFd,
    /// What was read past the last answer.
    pending: Vec<u8>,
}

impl SyncPipe {
    /// The pipe, and the shell's end of it: inherited (not close-on-exec),
    /// to be dropped once the shell is started.
    fn new() -> anyhow::Result<(Self, OwnedFd)> {
        use nix::fcntl::{FcntlArg, OFlag, fcntl};
        let (reader, writer) = nix::unistd::pipe2(OFlag::O_CLOEXEC).context("creating the sync pipe")?;
        // F_DUPFD makes a copy without close-on-exec at the lowest free
        // number from SYNC_FD_MIN on.
        let fd = fcntl(&writer, FcntlArg::F_DUPFD(SYNC_FD_MIN)).context("numbering the sync pipe")?;
        // SAFETY: fcntl just returned this new descriptor; nothing else owns it.
        let shells = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok((Self { reader, fd, pending: Vec::new() }, shells))
    }

    /// Waits until the shell has run everything sent so far, by asking it
    /// to write its directory into the pipe and reading that or seeing it
    /// exit. Returns the directory (empty if the shell printed none), or
    /// `None` when the shell is gone.
    fn shell_dir(&mut self, w: &mut impl Write, child: &Child) -> anyhow::Result<Option<String>> {
        let line = format!("printf '%s\\0' \"$PWD\" >&{}\n", self.fd);
        if w.write_all(line.as_bytes()).and_then(|()| w.flush()).is_err() {
            return Ok(None);
        }
        let pidfd = pidfd_open(child.id()).context("watching the shell")?;
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == 0) {
                let dir = String::from_utf8_lossy(&self.pending[..end]).into_owned();
                self.pending.drain(..=end);
                return Ok(Some(dir));
            }
            let mut fds =
                [PollFd::new(self.reader.as_fd(), PollFlags::POLLIN), PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e).context("waiting for the shell"),
                Ok(_) => {}
            }
            if fds[0].revents().is_some_and(|r| r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP)) {
                let mut b = [0u8; 4096];
                match nix::unistd::read(&self.reader, &mut b) {
                    Ok(n) if n > 0 => {
                        self.pending.extend_from_slice(&b[..n]);
                        continue;
                    }
                    // Every copy of the shell's end is closed: the shell
                    // (and all it started) is gone.
                    Ok(_) => return Ok(None),
                    Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
                    Err(e) => return Err(e).context("reading the sync pipe"),
                }
            }
            if fds[1].revents().is_some_and(|r| !r.is_empty()) {
                return Ok(None);
            }
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
