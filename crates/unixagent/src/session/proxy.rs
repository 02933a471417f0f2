//! The terminal proxy: the shell's PTY between the user's terminal and the
//! shell, and everything that follows the shell's state from its output
//! and the user's keys.
//!
//! It owns the PTY, the OSC scanner, [`TermState`], the tail of the
//! current line, the `#` interceptor, keystrokes the shell has not taken
//! yet, the recorder of what the terminal showed, and the deadlines of
//! its own (integration confirmation, the heuristic quiet period, the
//! kill after a hang-up). It knows nothing of models, gates or journals:
//! the session routes what it reports to the agent's parts, and the shell
//! executor reaches the shell through its [`ShellPort`].
//!
//! Shell output is written to the terminal before anything looks at it,
//! so the user never waits on unixagent's bookkeeping.

use std::path::PathBuf;

use nix::errno::Errno;
use nix::sys::signal::Signal;
use tokio::time::Instant;
use ua_term::column::LineTail;
use ua_term::heuristic;
use ua_term::integration::ScriptDir;
use ua_term::intercept::{Action, Geometry, Interceptor, Mode};
use ua_term::osc::{OscScanner, ShellEvent};
use ua_term::pty::{Job, Pty};
use ua_term::state::{TermState, Transition};

use super::record::Recorder;
use super::startup;
use crate::terminal;

/// How long a hung-up shell gets to exit before it is killed.
const HANGUP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);
/// When a hung-up shell that still runs is sent its SIGHUP once more.
const HANGUP_AGAIN: std::time::Duration = std::time::Duration::from_millis(200);

/// Where a hang-up of the shell stands. A closing terminal both signals
/// the shell and ends its reads; a signal alone can be missed. bash at its
/// prompt catches SIGHUP in readline, and when it lands just before the
/// read that waits for a key, that read goes on waiting. The same signal
/// a second time ends bash at once, wherever it is; a shell that outlives
/// the grace is killed.
#[derive(Debug, Default)]
enum HangUp {
    #[default]
    No,
    Sent {
        again: Option<Instant>,
        kill: Option<Instant>,
    },
}

impl HangUp {
    fn deadline(&self) -> Option<Instant> {
        match self {
            HangUp::No => None,
            HangUp::Sent { again, kill } => [*again, *kill].into_iter().flatten().min(),
        }
    }

    /// The signal due at `now`, if any.
    fn due(&mut self, now: Instant) -> Option<Signal> {
        let HangUp::Sent { again, kill } = self else { return None };
        if kill.is_some_and(|d| d <= now) {
            *kill = None;
            *again = None;
            return Some(Signal::SIGKILL);
        }
        if again.is_some_and(|d| d <= now) {
            *again = None;
            return Some(Signal::SIGHUP);
        }
        None
    }
}

/// What the shell executor may do to the shell.
pub(in crate::session) trait ShellPort {
    /// Types `bytes` into the shell. `line_ended`: they end the shell's
    /// line (a command, an empty line, Ctrl+C at the prompt), so the next
    /// prompt is a fresh one.
    fn type_in(&mut self, bytes: &[u8], line_ended: bool);
    /// The job holding the terminal, when it is not the shell itself.
    fn foreground_job(&self) -> Option<Job>;
    /// Sends SIGINT to every process of a job.
    fn interrupt_job(&self, job: &Job);
    /// The shell's markers are confirmed.
    fn integrated(&self) -> bool;
    /// The status of the shell's last command.
    fn last_exit(&self) -> Option<i32>;
}

/// The shell's start-up, until its first prompt marker.
#[derive(Debug)]
struct Startup {
    /// The integration scripts, removed once the shell has read them.
    scripts: Option<ScriptDir>,
    /// Integration is given up on at this time.
    deadline: Option<Instant>,
    /// What the shell printed until its first marker (see `startup`).
    log: Option<startup::StartupLog>,
    started: Instant,
    /// `--shell-debug`: say when integration works.
    debug: bool,
    shell_name: &'static str,
}

/// Integration did not confirm in time.
#[derive(Debug)]
pub(in crate::session) struct Unconfirmed {
    pub shell_name: &'static str,
    pub waited_ms: u128,
    /// The line of the shell's start-up output that reads as an error.
    pub printed: Option<String>,
}

/// The PTY and the shell's state.
#[derive(Debug)]
pub(in crate::session) struct Proxy {
    pty: Pty,
    scanner: OscScanner,
    state: TermState,
    tail: LineTail,
    /// The column where the shell's input starts: where the cursor was at
    /// the last `133;B`.
    input_col: Option<u16>,
    icpt: Interceptor,
    /// Keystrokes the shell has not accepted yet (its input queue is full).
    to_shell: Vec<u8>,
    size: (u16, u16),
    startup: Startup,
    quiet_deadline: Option<Instant>,
    hangup: HangUp,
    out_broken: bool,
    colour: bool,
    /// Nothing of the shell reaches stdout (`--json`: stdout carries JSON
    /// lines only).
    quiet: bool,
    /// Markers found in the current read, with where each ends (kept to reuse
    /// the allocation).
    events_at: Vec<(usize, ShellEvent)>,
    recorder: Recorder,
    shell_path: PathBuf,
}

/// How the proxy is set up.
#[derive(Debug)]
pub(in crate::session) struct ProxySetup {
    pub pty: Pty,
    pub aid: Option<String>,
    pub integrated: bool,
    pub scripts: Option<ScriptDir>,
    pub shell_name: &'static str,
    pub shell_path: PathBuf,
    pub size: (u16, u16),
    pub integration_timeout: std::time::Duration,
    pub shell_debug: bool,
    pub colour: bool,
    pub quiet: bool,
}

impl Proxy {
    pub(in crate::session) fn new(s: ProxySetup) -> Self {
        let mode = if s.integrated { Mode::Markers } else { Mode::Heuristic };
        Self {
            pty: s.pty,
            // Only our shell's markers move the session; a nested or remote
            // shell's pass through to the terminal untouched.
            scanner: OscScanner::following(s.aid.as_deref()),
            state: TermState::new(),
            tail: LineTail::new(),
            input_col: None,
            icpt: Interceptor::new(mode),
            to_shell: Vec::new(),
            size: s.size,
            startup: Startup {
                scripts: s.scripts,
                deadline: s.integrated.then(|| Instant::now() + s.integration_timeout),
                log: s.integrated.then(startup::StartupLog::default),
                started: Instant::now(),
                debug: s.shell_debug,
                shell_name: s.shell_name,
            },
            quiet_deadline: None,
            hangup: HangUp::No,
            out_broken: false,
            colour: s.colour,
            quiet: s.quiet,
            events_at: Vec::new(),
            recorder: Recorder::new(),
            shell_path: s.shell_path,
        }
    }

    pub(in crate::session) fn pty(&self) -> &Pty {
        &self.pty
    }

    /// The terminal's width in columns.
    pub(in crate::session) fn width(&self) -> u16 {
        self.size.0
    }

    pub(in crate::session) fn shell_path(&self) -> &std::path::Path {
        &self.shell_path
    }

    /// Instructions start with `#` and commands run (markers), or with
    /// `##` and commands are refused (prompts guessed).
    pub(in crate::session) fn markers(&self) -> bool {
        self.icpt.mode() == Mode::Markers
    }

    /// Keystrokes are waiting for the shell to take them.
    pub(in crate::session) fn has_queued(&self) -> bool {
        !self.to_shell.is_empty()
    }

    /// The deadlines of the proxy's own.
    pub(in crate::session) fn deadline(&self) -> Option<Instant> {
        [self.startup.deadline, self.quiet_deadline, self.hangup.deadline()].into_iter().flatten().min()
    }

    /// Shell output and other text for the terminal.
    pub(in crate::session) fn write_out(&mut self, bytes: &[u8]) {
        // With `--json` stdout carries JSON lines only (see `write_events`).
        if self.quiet {
            return;
        }
        if !self.out_broken && terminal::out(bytes).is_err() {
            self.out_broken = true;
            self.hang_up();
        }
    }

    /// NDJSON lines on stdout. A reader that went away stops them, and
    /// nothing else.
    pub(in crate::session) fn write_events(&mut self, bytes: &[u8]) {
        if !self.out_broken && terminal::out(bytes).is_err() {
            self.out_broken = true;
        }
    }

    /// Finds the markers in one read of shell output: each with the offset
    /// where it ends. Hand the vector back with [`Proxy::scanned`].
    pub(in crate::session) fn scan(&mut self, bytes: &[u8]) -> Vec<(usize, ShellEvent)> {
        if let Some(log) = &mut self.startup.log {
            log.feed(bytes);
        }
        let mut events = std::mem::take(&mut self.events_at);
        self.scanner.feed_at(bytes, |end, e| events.push((end, e)));
        events
    }

    /// Keeps the allocation of the markers of one read.
    pub(in crate::session) fn scanned(&mut self, events: Vec<(usize, ShellEvent)>) {
        self.events_at = events;
    }

    /// Output no turn routes: to the terminal, and into what the next
    /// instruction's context recalls.
    pub(in crate::session) fn show(&mut self, bytes: &[u8]) {
        if self.startup.log.is_some() && self.startup.debug {
            self.write_out_debug(bytes);
        } else {
            self.write_out(bytes);
        }
        self.recorder.shown(bytes, true);
        self.tail.feed(bytes);
    }

    /// Output of the agent's command, shown: it is in the terminal's
    /// recent lines, not the user's commands.
    pub(in crate::session) fn shown_for_agent(&mut self, bytes: &[u8]) {
        self.recorder.shown(bytes, false);
    }

    /// After a read no turn routed: the editor comes back over what the
    /// shell drew, and without markers a quiet period may mean a prompt.
    pub(in crate::session) fn after_output(&mut self) {
        if self.icpt.editing() {
            self.editor_redraw();
        }
        if self.icpt.mode() == Mode::Heuristic && !self.icpt.at_prompt() {
            self.quiet_deadline = Some(Instant::now() + heuristic::QUIET);
        }
    }

    /// A marker takes effect on the shell's state. `in_turn`: a turn
    /// routes the output, so the marker is not the user's.
    pub(in crate::session) fn marker(&mut self, e: &ShellEvent, in_turn: bool) -> Transition {
        if !in_turn {
            self.recorder.marker(e);
            if *e == ShellEvent::InputStart {
                self.input_col = self.tail.column(self.size.0);
            }
        }
        let transition = self.state.apply(e);
        match transition {
            Transition::IntegrationConfirmed => {
                self.startup.deadline = None;
                // The shell has read its startup files: the scripts are
                // no longer needed on disk.
                self.startup.scripts = None;
                self.startup.log = None;
                self.icpt.set_mode(Mode::Markers);
            }
            Transition::FreshInput => self.icpt.fresh_prompt(),
            Transition::RedrawnInput => self.icpt.redrawn_prompt(),
            Transition::CommandStarted => self.icpt.left_prompt(),
            Transition::CommandFinished(_) | Transition::CwdChanged | Transition::None => {}
        }
        transition
    }

    /// A prompt is drawn at the start of a line after a turn: the current
    /// line starts over.
    pub(in crate::session) fn line_starts(&mut self) {
        self.tail = LineTail::new();
    }

    /// Output before integration is confirmed, under `--shell-debug`: the
    /// line saying integration works goes just before the first prompt
    /// marker, so it does not land in the middle of the prompt.
    fn write_out_debug(&mut self, bytes: &[u8]) {
        const A: &[u8] = b"\x1b]133;A";
        let Some(at) = bytes.windows(A.len()).position(|w| w == A) else {
            self.write_out(bytes);
            return;
        };
        self.write_out(&bytes[..at]);
        let ms = self.startup.started.elapsed().as_millis();
        let msg = format!("unixagent: shell integration is working (first prompt marker after {ms} ms).");
        let line = format!("{}\r\n", super::dim(&msg, self.colour));
        self.write_out(line.as_bytes());
        self.write_out(&bytes[at..]);
    }

    /// Keys that need no decoding (a command runs: no prompt, editor or
    /// paste) go to the shell as they are. True when `bytes` went.
    pub(in crate::session) fn pass_through(&mut self, bytes: &[u8]) -> bool {
        let Some(line_ended) = self.icpt.pass_through(bytes) else { return false };
        self.send(bytes);
        if line_ended {
            self.state.line_ended();
        }
        true
    }

    /// Keys for the shell, through the `#` interceptor: what each comes to.
    pub(in crate::session) fn keys(&mut self, bytes: &[u8]) -> Vec<Action> {
        // Without markers, a key typed at a line that looks like a prompt
        // settles the question at once, even inside the quiet period.
        if self.icpt.mode() == Mode::Heuristic
            && !self.icpt.at_prompt()
            && heuristic::looks_like_prompt(&self.tail.text())
        {
            self.quiet_deadline = None;
            self.icpt.fresh_prompt();
        }
        let (width, _) = self.size;
        // Where the prompt ends matters only when an instruction may start.
        let prompt_col = if self.icpt.at_prompt() { self.prompt_col() } else { 0 };
        self.icpt.on_input(bytes, Geometry { prompt_col, width })
    }

    /// The instruction editor owns the line: an instruction is being typed.
    pub(in crate::session) fn editing(&self) -> bool {
        self.icpt.editing()
    }

    /// Carries out what a key came to, but an instruction (the session's).
    pub(in crate::session) fn act(&mut self, action: Action) {
        match action {
            Action::ToShell(b) => self.send(&b),
            Action::ToTerminal(b) => self.write_out(&b),
            Action::LineEnded => self.state.line_ended(),
            Action::Instruction(_) => {}
        }
    }

    /// Where an instruction starts on the prompt's row. With markers that is
    /// where the shell's input starts (the cursor may not be there yet when
    /// the shell has not finished echoing keys typed before the `#`).
    fn prompt_col(&self) -> u16 {
        match (self.icpt.mode(), self.input_col) {
            (Mode::Markers, Some(col)) => col,
            _ => self.tail.column(self.size.0).unwrap_or(0),
        }
    }

    /// The shell drew over the instruction being edited: draw it again.
    fn editor_redraw(&mut self) {
        let col = self.prompt_col();
        for a in self.icpt.shell_redrew(col) {
            if let Action::ToTerminal(b) = a {
                self.write_out(&b);
            }
        }
    }

    /// Queues bytes for the shell, writing at once when nothing is queued.
    pub(in crate::session) fn send(&mut self, bytes: &[u8]) {
        if self.to_shell.is_empty() {
            match nix::unistd::write(self.pty.fd(), bytes) {
                Ok(n) => self.to_shell.extend_from_slice(&bytes[n..]),
                Err(_) => self.to_shell.extend_from_slice(bytes),
            }
        } else {
            self.to_shell.extend_from_slice(bytes);
        }
    }

    /// The shell's line is done; asks the shell for a fresh prompt (an
    /// empty line runs nothing and keeps `$?`).
    pub(in crate::session) fn fresh_prompt(&mut self) {
        self.state.line_ended();
        self.send(b"\r");
    }

    /// The shell's line is done: its next prompt is a fresh one.
    pub(in crate::session) fn line_ended(&mut self) {
        self.state.line_ended();
    }

    /// Takes what is queued for the shell, to write when it can take it.
    pub(in crate::session) fn take_queued(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.to_shell)
    }

    /// Puts back what the shell did not take.
    pub(in crate::session) fn requeue(&mut self, rest: Vec<u8>) {
        self.to_shell = rest;
    }

    /// The terminal's new size, when it changed; the PTY and the editor
    /// follow it.
    pub(in crate::session) fn resize(&mut self) -> Option<u16> {
        let size = terminal::size();
        if size == self.size {
            return None;
        }
        self.size = size;
        let _ = self.pty.resize(size.0, size.1);
        for a in self.icpt.resize(size.0) {
            if let Action::ToTerminal(b) = a {
                self.write_out(&b);
            }
        }
        Some(size.0)
    }

    /// Integration was not confirmed in time: what to say about it.
    pub(in crate::session) fn integration_expired(&mut self, now: Instant) -> Option<Unconfirmed> {
        if self.startup.deadline.is_none_or(|d| d > now) {
            return None;
        }
        self.startup.deadline = None;
        self.startup.scripts = None;
        let printed = self.startup.log.take().and_then(|l| l.error_line());
        let waited_ms = self.startup.started.elapsed().as_millis();
        (!self.state.integrated()).then_some(Unconfirmed { shell_name: self.startup.shell_name, waited_ms, printed })
    }

    /// Without markers, prompts are guessed from here on; `line` says so.
    pub(in crate::session) fn go_heuristic(&mut self, line: &str, now: Instant) {
        self.icpt.set_mode(Mode::Heuristic);
        let line = format!("\r\n{}\r\n", super::dim(line, self.colour));
        self.write_out(line.as_bytes());
        self.quiet_deadline = Some(now + heuristic::QUIET);
    }

    /// The quiet period and the kill after a hang-up.
    pub(in crate::session) fn on_deadline(&mut self, now: Instant) {
        if self.quiet_deadline.is_some_and(|d| d <= now) {
            self.quiet_deadline = None;
            if self.icpt.mode() == Mode::Heuristic
                && !self.icpt.at_prompt()
                && heuristic::looks_like_prompt(&self.tail.text())
            {
                self.icpt.fresh_prompt();
            }
        }
        if let Some(sig) = self.hangup.due(now) {
            self.pty.signal(sig);
        }
    }

    /// The terminal went away or unixagent was asked to stop: hang up the
    /// shell as a closing terminal would, and kill it if it lingers.
    pub(in crate::session) fn hang_up(&mut self) {
        if matches!(self.hangup, HangUp::Sent { .. }) {
            return;
        }
        let now = Instant::now();
        self.hangup = HangUp::Sent { again: Some(now + HANGUP_AGAIN), kill: Some(now + HANGUP_GRACE) };
        self.pty.signal(Signal::SIGHUP);
        self.pty.signal(Signal::SIGCONT);
    }

    /// Copies what the shell wrote before exiting to the terminal.
    pub(in crate::session) fn drain(&mut self, buf: &mut [u8]) {
        loop {
            match nix::unistd::read(self.pty.fd(), buf) {
                Ok(n) if n > 0 => self.write_out(&buf[..n]),
                Err(Errno::EINTR) => {}
                _ => break,
            }
        }
    }

    /// The shell's working directory: OSC 7 when the shell reports it,
    /// else what the kernel says.
    pub(in crate::session) fn cwd(&self) -> String {
        if let Some(cwd) = self.state.cwd() {
            return cwd.to_string();
        }
        let link = format!("/proc/{}/cwd", self.pty.pid());
        std::fs::read_link(link).map(|p| p.display().to_string()).unwrap_or_else(|_| "unknown".into())
    }

    /// The instruction's line is not a command the user ran: the recorder
    /// forgets it, and hands over the user's commands since the last one.
    pub(in crate::session) fn take_commands(&mut self) -> Vec<ua_context::prompt::UserCommand> {
        self.recorder.line_taken();
        self.recorder.take_commands()
    }

    /// The last `n` lines the terminal showed, as plain text.
    pub(in crate::session) fn recent_lines(&self, n: usize) -> Vec<String> {
        self.recorder.recent_lines(n)
    }
}

impl ShellPort for Proxy {
    fn type_in(&mut self, bytes: &[u8], line_ended: bool) {
        if line_ended {
            self.state.line_ended();
        }
        self.send(bytes);
    }

    fn foreground_job(&self) -> Option<Job> {
        self.pty.foreground_job()
    }

    fn interrupt_job(&self, job: &Job) {
        self.pty.signal_job(job, Signal::SIGINT);
    }

    fn integrated(&self) -> bool {
        self.state.integrated()
    }

    fn last_exit(&self) -> Option<i32> {
        self.state.last_exit()
    }
}
