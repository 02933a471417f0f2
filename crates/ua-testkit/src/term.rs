//! Drive a program in a PTY that the test owns, like a person at a
//! terminal would, and read what they would see.
//!
//! A reader thread feeds every byte from the program into a raw transcript
//! and a [`vt100`] screen; tests wait on conditions over either with a
//! deadline (never a sleep), and a timeout panics with the screen and the
//! tail of the transcript so failures explain themselves.

// This is test code: a failure to set up the terminal is a test failure, and
// panicking with a message is how it is reported.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::ffi::OsString;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How long a wait lasts before the test fails. Generous: CI machines are
/// slow and shells start slowly under load.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// What to start and how.
#[derive(Debug, Clone)]
pub struct Spawn {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    cols: u16,
    rows: u16,
}

impl Spawn {
    /// `program` with a small, fixed environment: PATH from the test's
    /// environment, TERM=xterm-256color, LANG=C.UTF-8. Add HOME and the rest
    /// with [`Spawn::env`].
    pub fn new(program: impl Into<PathBuf>) -> Self {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        Self {
            program: program.into(),
            args: Vec::new(),
            env: vec![
                ("PATH".into(), path),
                ("TERM".into(), "xterm-256color".into()),
                ("LANG".into(), "C.UTF-8".into()),
            ],
            cwd: None,
            cols: 80,
            rows: 24,
        }
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        let k = k.into();
        self.env.retain(|(key, _)| *key != k);
        self.env.push((k, v.into()));
        self
    }

    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.cols = cols;
        self.rows = rows;
        self
    }

    pub fn start(self) -> Term {
        Term::start(self)
    }
}

struct Inner {
    raw: Vec<u8>,
    vt: vt100::Parser,
    eof: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A view of the terminal at one moment.
pub struct Snapshot<'a> {
    inner: &'a Inner,
}

impl std::fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("screen", &self.text()).finish()
    }
}

impl Snapshot<'_> {
    /// Every byte the program wrote so far.
    pub fn raw(&self) -> &[u8] {
        &self.inner.raw
    }
    pub fn screen(&self) -> &vt100::Screen {
        self.inner.vt.screen()
    }
    /// The visible screen as text, rows joined with newlines.
    pub fn text(&self) -> String {
        self.inner.vt.screen().contents()
    }
    pub fn rows(&self) -> Vec<String> {
        let s = self.inner.vt.screen();
        s.rows(0, s.size().1.get()).map(|r| r.trim_end().to_string()).collect()
    }
    /// The row the cursor is on, trailing blanks trimmed.
    pub fn cursor_row(&self) -> String {
        let (r, _) = self.inner.vt.screen().cursor_position();
        self.rows().get(usize::from(r)).cloned().unwrap_or_default()
    }
    pub fn eof(&self) -> bool {
        self.inner.eof
    }
    /// How many times `needle` occurs in the raw transcript.
    pub fn count(&self, needle: &[u8]) -> usize {
        if needle.is_empty() {
            return 0;
        }
        self.inner.raw.windows(needle.len()).filter(|w| *w == needle).count()
    }
}

/// A program running in a PTY owned by the test.
pub struct Term {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    shared: Arc<Shared>,
    reader: Option<std::thread::JoinHandle<()>>,
    timeout: Duration,
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term").field("pid", &self.child.process_id()).finish()
    }
}

impl Term {
    fn start(spec: Spawn) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize { rows: spec.rows, cols: spec.cols, pixel_width: 0, pixel_height: 0 })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(&spec.program);
        cmd.args(&spec.args);
        cmd.env_clear();
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let cwd = spec.cwd.clone().unwrap_or_else(|| std::env::current_dir().expect("cwd"));
        cmd.cwd(cwd);
        let child =
            pair.slave.spawn_command(cmd).unwrap_or_else(|e| panic!("spawning {}: {e}", spec.program.display()));
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let nz = |n: u16| NonZeroU16::new(n).expect("non-zero size");
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                raw: Vec::new(),
                vt: vt100::Parser::new(nz(spec.rows), nz(spec.cols), 0),
                eof: false,
            }),
            changed: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut g = s.lock();
                        g.raw.extend_from_slice(&buf[..n]);
                        g.vt.process(&buf[..n]);
                        drop(g);
                        s.changed.notify_all();
                    }
                }
            }
            s.lock().eof = true;
            s.changed.notify_all();
        });
        Self { master: pair.master, writer, child, shared, reader: Some(handle), timeout: DEFAULT_TIMEOUT }
    }

    /// Types `bytes` (use `\r` for Enter, as a terminal sends).
    pub fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.writer.write_all(bytes.as_ref()).expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Waits until `cond` holds for the terminal, or panics after the
    /// timeout with `what` and the screen.
    pub fn wait_for(&self, what: &str, cond: impl Fn(&Snapshot<'_>) -> bool) {
        let deadline = Instant::now() + self.timeout;
        let mut g = self.shared.lock();
        loop {
            if cond(&Snapshot { inner: &g }) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                let snap = Snapshot { inner: &g };
                let tail_start = snap.raw().len().saturating_sub(1500);
                panic!(
                    "timed out waiting for {what}\n--- screen ---\n{}\n--- last raw bytes ---\n{:?}",
                    snap.text(),
                    String::from_utf8_lossy(&snap.raw()[tail_start..])
                );
            }
            g = self
                .shared
                .changed
                .wait_timeout(g, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_text(&self, text: &str) {
        self.wait_for(&format!("{text:?} on screen"), |s| s.text().contains(text));
    }

    /// Waits until the raw output contains `needle` at least `n` times.
    pub fn wait_raw_count(&self, needle: &[u8], n: usize) {
        let what = format!("{n} x {:?} in output", String::from_utf8_lossy(needle));
        self.wait_for(&what, |s| s.count(needle) >= n);
    }

    /// Runs `f` on the current state.
    pub fn with<R>(&self, f: impl FnOnce(&Snapshot<'_>) -> R) -> R {
        let g = self.shared.lock();
        f(&Snapshot { inner: &g })
    }

    pub fn raw(&self) -> Vec<u8> {
        self.with(|s| s.raw().to_vec())
    }

    pub fn screen_text(&self) -> String {
        self.with(|s| s.text())
    }

    /// Resizes the terminal (the kernel sends SIGWINCH to the program).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).expect("resize");
        if let (Some(r), Some(c)) = (NonZeroU16::new(rows), NonZeroU16::new(cols)) {
            self.shared.lock().vt.set_size(r, c);
        }
    }

    /// The test's side of the PTY, e.g. to read the terminal modes the
    /// program left behind (`tcgetattr` on the master reports the slave's).
    pub fn master_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        let raw = self.master.as_raw_fd().expect("master fd");
        // SAFETY: the descriptor is owned by `self.master`, which outlives
        // the returned borrow.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) }
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("pid")
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.exit_code();
            }
            assert!(Instant::now() < deadline, "program did not exit\n{}", self.screen_text());
            // The exit is not observable through the PTY alone (other
            // processes may hold it), so wait for output or EOF changes
            // between checks instead of spinning.
            let g = self.shared.lock();
            let _ = self.shared.changed.wait_timeout(g, Duration::from_millis(20));
        }
    }

    /// Waits until the program's side of the PTY is closed.
    pub fn wait_eof(&self) {
        self.wait_for("end of output", |s| s.eof());
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader ends when the PTY closes; don't hang a failing test on it.
        if let Some(h) = self.reader.take()
            && h.is_finished()
        {
            let _ = h.join();
        }
    }
}
