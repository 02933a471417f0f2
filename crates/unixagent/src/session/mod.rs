//! The interactive session: one event loop between the outer terminal and
//! the shell's PTY.
//!
//! A single-threaded tokio runtime waits on everything at once: the PTY
//! master (epoll on a non-blocking descriptor), keystrokes (read by one
//! blocking thread, since making the user's terminal non-blocking would leak
//! into the shell that started us), signals, and at most a few one-shot
//! deadlines. Nothing ticks: idle at a prompt the process sleeps in
//! `epoll_wait` until a key, an output byte or a signal arrives.
//!
//! Output from the shell is written to the terminal first and only then
//! looked at (markers, the current line), so the user never waits on
//! unixagent's bookkeeping.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use nix::errno::Errno;
use nix::sys::signal::Signal;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use ua_term::column::LineTail;
use ua_term::heuristic;
use ua_term::integration::{self, ScriptDir, ShellSpec};
use ua_term::intercept::{Action, Geometry, Interceptor, Mode};
use ua_term::osc::{OscScanner, ShellEvent};
use ua_term::pty::Pty;
use ua_term::state::{TermState, Transition};

use crate::agent::backend;
use crate::agent::turn::Limits;
use crate::keyboard::Keys;
use crate::{shell, terminal};

mod agent;
mod batch;
mod record;
mod startup;

/// How long a hung-up shell gets to exit before it is killed.
const HANGUP_GRACE: Duration = Duration::from_secs(3);

#[derive(Debug)]
pub struct Options {
    pub shell: PathBuf,
    pub login: bool,
    pub args: Vec<OsString>,
    pub integration: bool,
    pub integration_timeout: Duration,
    /// Trace the shell's start-up (`--shell-debug`).
    pub shell_debug: bool,
    /// The model backend and how turns run.
    pub agent: AgentOptions,
    /// `-c '# …'`: run this one instruction, then exit with the status of
    /// the last command it ran.
    pub oneshot: Option<String>,
    /// `--json`: batch mode (see `batch`).
    pub batch: Option<BatchOptions>,
    /// Start the shell inside the kernel sandbox with these rules (an
    /// error: they could not be compiled, and nothing may run).
    pub sandbox: Option<Result<ua_sandbox::Rules, String>>,
    /// Continue the session in this directory (`--continue`, `--resume`).
    pub resume: Option<Resume>,
}

/// A session to continue.
#[derive(Debug, Clone)]
pub struct Resume {
    /// Its directory.
    pub dir: PathBuf,
    /// Tokens it used before, as the index has them (they count against
    /// `max_tokens_per_session`).
    pub used: ua_protocol::event::Usage,
}

/// How a batch run gets its input and where its events go.
#[derive(Debug)]
pub struct BatchOptions {
    /// The first instruction (`--json -c '# …'`).
    pub first: Option<String>,
    pub input: BatchInput,
    /// A question unanswered this long is a denial.
    pub approval_timeout: Duration,
    /// `None`: NDJSON on stdout (`--json`). `Some`: plain text on stdout,
    /// no questions (each is a denial), and each turn's exit status sent
    /// here as it ends (a `#` line on a pipe, see `pipe`).
    pub plain: Option<std::sync::mpsc::Sender<i32>>,
}

/// Where a batch run's input lines come from.
#[derive(Debug)]
pub enum BatchInput {
    /// Nothing: the first instruction is all there is.
    None,
    /// stdin, read on a thread.
    Stdin,
    /// Lines handed over by the caller; the run ends when the sender is
    /// dropped.
    Lines(tokio::sync::mpsc::UnboundedReceiver<String>),
}

#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub backend: backend::Setup,
    pub limits: Limits,
    /// A command still running after this long is interrupted.
    pub command_timeout: Duration,
    /// Output kept per command for the model.
    pub output_cap: usize,
    /// Environment variables the model may see (names or globs).
    pub include_env: Vec<String>,
    /// Lines of recent terminal output sent with an instruction.
    pub terminal_lines: usize,
    pub confirm: crate::agent::ConfirmMode,
    /// `[judge]` settings for the safety pipeline.
    pub judge: crate::agent::gate::JudgeSettings,
    /// Policy files that narrow the policy (inherited, then `--policy`).
    pub policy_layers: Vec<PathBuf>,
    /// Prices by model, so each turn's cost goes into the journal.
    pub pricing: std::collections::BTreeMap<String, crate::config::Price>,
    /// `[telemetry]`: where spans go.
    pub telemetry: crate::trace::export::TelemetryConfig,
}

/// Runs the interactive session; returns the shell's exit status.
pub fn run(mut opts: Options) -> anyhow::Result<i32> {
    let batch = opts.batch.take();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(run_async(opts, batch))
}

async fn run_async(opts: Options, batch: Option<BatchOptions>) -> anyhow::Result<i32> {
    // Signals are registered before the shell exists so that none is lost.
    let mut signals = crate::signals::Signals::new()?;
    let mut launch = integration::prepare(&ShellSpec {
        program: opts.shell.clone(),
        login: opts.login,
        args: opts.args.clone(),
        integration: opts.integration,
    })?;
    if opts.shell_debug {
        launch.trace_startup();
    }
    let colour = terminal::colour(std::io::stderr().as_fd());
    let stdin_tty = nix::unistd::isatty(std::io::stdin().as_fd()).unwrap_or(false);
    let oneshot = opts.oneshot.is_some();
    if !launch.integrated && (oneshot || batch.is_some()) {
        anyhow::bail!(
            "{} has no unixagent shell integration, so a one-shot instruction cannot run commands in it; use bash, zsh or fish.",
            opts.shell.display()
        );
    }
    if !launch.integrated {
        let why = if opts.integration {
            format!("{} has no unixagent shell integration", opts.shell.display())
        } else {
            "shell integration is off (shell.integration = false)".to_string()
        };
        eprintln!("{}", dim(&format!("unixagent: {why}; start instructions with ## (prompts are guessed)."), colour));
    }
    let (cols, rows) = terminal::size();
    let trace = crate::trace::TraceContext::inherited();
    let (session_dir, journal, index, resumed) = match &opts.resume {
        Some(resume) => {
            let (d, j, index, r) = open_resumed(&resume.dir)?;
            if batch.as_ref().is_none_or(|b| b.plain.is_some()) {
                for line in resume_lines(&r, d.id()) {
                    eprintln!("{}", dim(&format!("unixagent: {line}"), colour));
                }
            }
            (Some(d), Some(j), index, Some(r))
        }
        None => match open_journal(&opts.shell, &trace) {
            Some((d, j, index)) => (Some(d), Some(j), index, None),
            None => (None, None, None, None),
        },
    };
    let id = session_dir.as_ref().map_or_else(session_id, |d| d.id().to_string());
    let mut env = vec![
        (OsString::from(shell::SESSION_ENV), OsString::from(&id)),
        (OsString::from("UNIXAGENT_PID"), OsString::from(std::process::id().to_string())),
    ];
    let telemetry = opts.agent.telemetry.clone();
    env.extend(trace.shell_env(telemetry.sink().ok().flatten().map(|s| s.url()).as_deref()));
    if let Some(j) = &journal {
        env.push((OsString::from("UNIXAGENT_JOURNAL"), j.path().as_os_str().to_owned()));
    }
    crate::board::attach(session_dir.as_ref(), &mut env);
    if !opts.agent.policy_layers.is_empty()
        && let Ok(joined) = std::env::join_paths(&opts.agent.policy_layers)
    {
        env.push((OsString::from(crate::agent::gate::LAYERS_ENV), joined));
    }
    // The shell starts in the sandbox: the proxy runs on this runtime for
    // as long as the session.
    let mut watch = None;
    let mut blocked = None;
    let _sandbox = match opts.sandbox.clone() {
        Some(rules) => match start_sandbox(rules, &mut launch) {
            Ok((prepared, w)) => {
                watch = Some(w);
                if batch.is_none() && (stdin_tty || !oneshot) {
                    eprintln!(
                        "{}",
                        dim(
                            "unixagent: the shell runs in the sandbox (unixagent sandbox status says what it enforces).",
                            colour
                        )
                    );
                }
                Some(prepared)
            }
            // Work nobody watches does not start at all.
            Err(why) if batch.is_some() || oneshot => return Ok(refuse_to_start(&why, batch.as_ref())),
            // An interactive shell still starts (unixagent may be the
            // login shell), but the agent runs no command in it.
            Err(why) => {
                eprintln!("unixagent: the sandbox cannot be applied, so agent commands will not run: {why}");
                blocked = Some(format!("the sandbox cannot be applied ({why})"));
                None
            }
        },
        None => None,
    };
    reset_job_control_signals();
    let pty = Pty::spawn(&launch, cols, rows, &env)?;
    // Readable only: the PTY turns writable every time the shell drains
    // its input, and watching that would wake the loop for nothing on
    // every keystroke. Writes that do not fit watch a second descriptor
    // only for as long as they wait (see `writer` in `Session::run`).
    // SAFETY: an OwnedFd is a valid open descriptor that stays open and
    // unchanged for as long as the AsyncFd owns it.
    let master = unsafe { AsyncFd::register_with_interest(pty.clone_fd()?, tokio::io::Interest::READABLE) }
        .map_err(|e| std::io::Error::other(e.to_string()))
        .context("watching the PTY")?;
    // A one-shot run without a terminal leaves terminal modes alone and
    // reads no keys: there is nobody to ask.
    let interactive_keys = (stdin_tty || !oneshot) && batch.is_none();
    let raw = if interactive_keys {
        Some(terminal::RawMode::enable().context("putting the terminal in raw mode")?)
    } else {
        None
    };
    let keys =
        if interactive_keys { Some(crate::keyboard::Keyboard::open().context("watching the keyboard")?) } else { None };
    let out_tty = nix::unistd::isatty(std::io::stdout().as_fd()).unwrap_or(false);

    let mode = if launch.integrated { Mode::Markers } else { Mode::Heuristic };
    let mut s = Session {
        pty,
        // Only our shell's markers move the session; a nested or remote
        // shell's pass through to the terminal untouched.
        scanner: OscScanner::following(launch.aid.as_deref()),
        state: TermState::new(),
        tail: LineTail::new(),
        input_col: None,
        icpt: Interceptor::new(mode),
        scripts: launch.scripts,
        shell_name: launch.kind.name(),
        shell_path: opts.shell.clone(),
        to_shell: Vec::new(),
        size: (cols, rows),
        integration_deadline: launch.integrated.then(|| Instant::now() + opts.integration_timeout),
        startup: launch.integrated.then(startup::StartupLog::default),
        started: Instant::now(),
        shell_debug: opts.shell_debug,
        quiet_deadline: None,
        kill_deadline: None,
        hung_up: false,
        out_broken: false,
        colour,
        events_at: Vec::new(),
        recorder: record::Recorder::new(),
        agent: agent::AgentSide::new(opts.agent, opts.oneshot, colour && out_tty, out_tty, stdin_tty, cols),
        exit_now: None,
        batch: None,
        batch_rx: None,
    };
    s.agent.journal = journal;
    s.agent.index = index;
    s.agent.sandbox = watch;
    s.agent.blocked = blocked;
    if let Some(opts) = batch {
        let (b, rx) = batch::Batch::new(opts);
        s.batch = Some(b);
        s.batch_rx = rx;
        s.agent.set_batch();
        s.set_can_ask(s.batch.as_ref().is_some_and(|b| b.can_ask()));
    }
    s.agent.session_id = id.clone();
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    // Journaled (and so in the index) before anyone is told the id: a
    // program that reads it and looks the session up finds it running.
    if resumed.is_none() {
        s.journal(ua_protocol::journal::JournalEntry::SessionStart {
            session: id.clone(),
            pid: std::process::id(),
            shell: opts.shell.display().to_string(),
            cwd: cwd.clone(),
            os: std::env::consts::OS.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        });
    }
    if s.json() {
        s.emit(ua_protocol::agent::AgentEvent::Session {
            v: ua_protocol::agent::SCHEMA_VERSION,
            id,
            journal: s.agent.journal.as_ref().map(|j| j.path().display().to_string()),
            shell: opts.shell.display().to_string(),
            cwd: cwd.clone(),
        });
    }
    if let Some(r) = resumed {
        s.continue_from(r, &opts.shell, &cwd, opts.resume.as_ref().map(|r| r.used).unwrap_or_default());
    }
    let code = s.run(&master, keys, &mut signals).await;
    s.journal(ua_protocol::journal::JournalEntry::SessionEnd { exit_code: Some(code) });
    drop(raw);
    let journal = s.agent.journal.as_ref().map(|j| j.path().to_path_buf());
    crate::trace::session_ended(journal.as_deref(), &s.agent.session_id, &telemetry);
    Ok(code)
}

/// Prepares the sandbox for the shell and points `launch` at it.
fn start_sandbox(
    rules: Result<ua_sandbox::Rules, String>,
    launch: &mut integration::Launch,
) -> Result<(crate::sandbox::Prepared, agent::SandboxWatch), String> {
    let rules = rules?;
    crate::sandbox::check(&rules)?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let prepared = crate::sandbox::Prepared::new(rules.clone(), Some(tx))?;
    let (program, args) = prepared.wrap(&launch.program, &launch.args)?;
    launch.program = program;
    launch.args = args;
    Ok((prepared, agent::SandboxWatch { rules, decisions: rx }))
}

/// The run ends before the shell starts: one line on stderr and, for
/// `--json`, an `error` and a `result` event. Returns the exit status.
fn refuse_to_start(why: &str, batch: Option<&BatchOptions>) -> i32 {
    let message = format!("the sandbox cannot be applied, so nothing runs: {why}");
    eprintln!("unixagent: {message}");
    if batch.is_some_and(|b| b.plain.is_none()) {
        use ua_protocol::agent::{AgentEvent, RunStatus, TokenUsage};
        let events = [
            AgentEvent::Error { message, kind: "sandbox".into() },
            AgentEvent::Result {
                status: RunStatus::Error,
                exit_code: crate::sandbox::REFUSED,
                usage: TokenUsage::default(),
                commands: 0,
            },
        ];
        for e in events {
            let _ = terminal::out(e.to_line().as_bytes());
        }
    }
    crate::sandbox::REFUSED
}

/// Job control needs SIGTSTP, SIGTTIN and SIGTTOU at their defaults in the
/// shell's children. An ignored signal stays ignored across exec, and the
/// shell hands its start-up dispositions on to every job, so if whatever
/// started unixagent ignored them, Ctrl+Z would silently do nothing.
/// (unixagent itself never receives them from the keyboard: its terminal is
/// in raw mode.)
fn reset_job_control_signals() {
    use nix::sys::signal::{SigHandler, signal};
    for sig in [Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU] {
        // SAFETY: installing SIG_DFL runs no handler code.
        let _ = unsafe { signal(sig, SigHandler::SigDfl) };
    }
}

fn dim(text: &str, colour: bool) -> String {
    if colour { format!("\x1b[2m{text}\x1b[0m") } else { text.to_string() }
}

/// The session index and what a session adds to it.
type Indexing = (ua_store::index::Index, ua_store::index::RecordFeed);

/// The session's directory, journal and index. Without them unixagent
/// still works; it says once why there is no journal. (Without the index,
/// the session is only missing from `sessions list` until a reindex.)
fn open_journal(
    shell: &std::path::Path,
    trace: &crate::trace::TraceContext,
) -> Option<(ua_store::session::SessionDir, ua_store::journal::Journal, Option<Indexing>)> {
    let opened = (|| {
        let data = ua_store::session::data_dir()?;
        let meta = ua_store::session::SessionMeta {
            id: String::new(),
            created_ms: u64::try_from(
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0),
            )
            .unwrap_or(0),
            pid: std::process::id(),
            shell: shell.display().to_string(),
            cwd: std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            parent: std::env::var("UNIXAGENT_SESSION").ok(),
            trace_id: Some(trace.trace_id.to_string()),
            trace_parent: trace.parent_span.map(|s| s.to_string()),
            parent_command: trace.command.clone(),
            depth: trace.depth,
        };
        let parent = meta.parent.clone();
        let dir = ua_store::session::SessionDir::create(&data, meta)?;
        let journal = ua_store::journal::Journal::open(dir.journal_path(), ua_store::journal::SyncPolicy::default())?;
        let index = ua_store::index::Index::open(&data).ok();
        let indexing = index.map(|i| (i, ua_store::index::RecordFeed::new(dir.id(), parent)));
        Ok::<_, ua_store::StoreError>((dir, journal, indexing))
    })();
    opened.map_err(|e| eprintln!("unixagent: no session journal this time: {e}")).ok()
}

/// What the person is told when a session continues: which one, what
/// could not be read, and each command whose outcome is unknown.
fn resume_lines(r: &ua_store::resume::Resumed, id: &str) -> Vec<String> {
    let turns = r.next_turn.saturating_sub(1);
    let mut lines = vec![format!("continuing session {id} ({turns} turn{} so far)", if turns == 1 { "" } else { "s" })];
    lines.extend(r.report.skipped.iter().map(ToString::to_string));
    if r.report.torn_tail {
        lines.push("the journal's last line was incomplete (the session was cut short) and was skipped".into());
    }
    for i in &r.unresolved {
        lines.push(format!(
            "`{}` was running when the session stopped: its outcome is unknown, and it was not run again",
            i.command.replace('\n', " ")
        ));
    }
    lines
}

/// An earlier session, reopened: its conversation rebuilt from the
/// journal (from the last checkpoint), and the journal opened to append.
fn open_resumed(
    dir: &std::path::Path,
) -> anyhow::Result<(
    ua_store::session::SessionDir,
    ua_store::journal::Journal,
    Option<Indexing>,
    ua_store::resume::Resumed,
)> {
    let session = ua_store::session::SessionDir::open(dir).context("reading the session to continue")?;
    // In the index first: from here on a prune sees it running.
    let index = dir.parent().and_then(std::path::Path::parent).and_then(|data| ua_store::index::Index::open(data).ok());
    if let Some(index) = &index {
        let _ = index.append(&ua_store::index::Record::Resumed {
            id: session.id().to_string(),
            ts: ua_store::session::now_ms(),
            pid: std::process::id(),
        });
    }
    let resumed = ua_store::resume::load(dir)
        .with_context(|| format!("reading the journal of session {} to continue it", session.id()))?;
    let journal = ua_store::journal::Journal::open(session.journal_path(), ua_store::journal::SyncPolicy::default())
        .with_context(|| format!("opening the journal of session {} to continue it", session.id()))?;
    let indexing = index.map(|i| (i, ua_store::index::RecordFeed::new(session.id(), resumed.meta.parent.clone())));
    Ok((session, journal, indexing, resumed))
}

/// A session id unique enough for one machine: start time and pid.
fn session_id() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("{t}-{}", std::process::id())
}

struct Session {
    pty: Pty,
    scanner: OscScanner,
    state: TermState,
    tail: LineTail,
    /// The column where the shell's input starts: where the cursor was at
    /// the last `133;B`.
    input_col: Option<u16>,
    icpt: Interceptor,
    scripts: Option<ScriptDir>,
    shell_name: &'static str,
    shell_path: PathBuf,
    /// Keystrokes the shell has not accepted yet (its input queue is full).
    to_shell: Vec<u8>,
    size: (u16, u16),
    integration_deadline: Option<Instant>,
    /// What the shell printed until its first marker (see `startup`).
    startup: Option<startup::StartupLog>,
    started: Instant,
    shell_debug: bool,
    quiet_deadline: Option<Instant>,
    kill_deadline: Option<Instant>,
    hung_up: bool,
    out_broken: bool,
    colour: bool,
    /// Markers found in the current read, with where each ends (kept to reuse
    /// the allocation).
    events_at: Vec<(usize, ShellEvent)>,
    recorder: record::Recorder,
    agent: agent::AgentSide,
    /// Set when the session should end now with this status (a one-shot
    /// instruction is done).
    exit_now: Option<i32>,
    /// Batch mode (`--json`).
    batch: Option<batch::Batch>,
    /// Batch mode's input lines, until stdin closes.
    batch_rx: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
}

impl Session {
    async fn run(
        &mut self,
        master: &AsyncFd<OwnedFd>,
        keys: Option<crate::keyboard::Keyboard>,
        sig: &mut crate::signals::Signals,
    ) -> i32 {
        let mut buf = vec![0u8; 64 * 1024];
        let mut pty_open = true;
        let mut keys_open = keys.is_some();
        let mut keys = keys;
        let mut writer: Option<AsyncFd<OwnedFd>> = None;
        loop {
            if self.to_shell.is_empty() {
                writer = None;
            } else if writer.is_none() && pty_open {
                writer = self
                    .pty
                    .clone_fd()
                    .ok()
                    // SAFETY: as for `master`: the AsyncFd owns the descriptor.
                    .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::WRITABLE) }.ok());
            }
            if let Some(code) = self.exit_now {
                return code;
            }
            let approval = self.batch.as_ref().and_then(|b| b.approval_deadline);
            let deadline =
                [self.integration_deadline, self.quiet_deadline, self.kill_deadline, self.agent.deadline(), approval]
                    .into_iter()
                    .flatten()
                    .min();
            tokio::select! {
                biased;
                fired = sig.next() => {
                    if fired.child
                        && let Some(code) = self.pty.try_wait()
                    {
                        self.drain(&mut buf);
                        if self.batch.is_some() {
                            self.batch_shell_exited(code.0);
                        }
                        return code.0;
                    }
                    if fired.term {
                        if self.batch.is_some() { self.batch_signal() } else { self.hang_up() }
                    }
                    if fired.hup {
                        self.hang_up();
                    }
                    if fired.int && self.batch.is_some() {
                        self.batch_signal();
                    }
                    // SIGQUIT is received only so that it cannot kill us.
                    if fired.winch {
                        self.resize();
                    }
                }
                ready = std::future::poll_fn(|cx| master.poll_read_ready(cx)), if pty_open => {
                    let Ok(mut guard) = ready else { pty_open = false; continue };
                    match nix::unistd::read(guard.get_inner(), &mut buf) {
                        Ok(n) if n > 0 => {
                            // A short read emptied the queue: wait for the
                            // next edge rather than read again only to hear
                            // EAGAIN. Data the line discipline had not taken
                            // in yet comes with a wake-up of its own, and a
                            // clear is dropped when an event came in since
                            // this one, so nothing is missed.
                            if n < buf.len() {
                                guard.clear_ready();
                            }
                            self.on_output(&buf[..n]);
                        }
                        Err(Errno::EAGAIN) => guard.clear_ready(),
                        Err(Errno::EINTR) => {}
                        // EOF or EIO: every process holding the shell's side
                        // has closed it; the shell's exit comes as SIGCHLD.
                        Ok(_) | Err(_) => pty_open = false,
                    }
                }
                ready = writable(&writer), if pty_open && writer.is_some() => {
                    if let Ok(mut guard) = ready {
                        let pending = std::mem::take(&mut self.to_shell);
                        match guard.try_io(|fd| nix::unistd::write(fd.get_ref(), &pending).map_err(std::io::Error::from)) {
                            Ok(Ok(n)) => self.to_shell = pending[n..].to_vec(),
                            Ok(Err(_)) => {}
                            Err(_would_block) => self.to_shell = pending,
                        }
                    }
                }
                key = read_keys(&mut keys), if keys_open && self.agent.editing.is_none() => match key {
                    Keys::Bytes(bytes) => self.on_input(bytes),
                    Keys::Nothing => {}
                    Keys::Gone => {
                        // The terminal is gone (closed window, dropped ssh).
                        keys_open = false;
                        self.hang_up();
                    }
                },
                event = agent::next_event(&mut self.agent.stream), if self.agent.stream.is_some() => {
                    self.on_model_event(event);
                }
                built = agent::recv_once(&mut self.agent.building), if self.agent.building.is_some() => {
                    self.on_backend_built(built);
                }
                gated = agent::join_once(&mut self.agent.gating), if self.agent.gating.is_some() => {
                    self.on_gated(gated);
                }
                edited = agent::recv_once(&mut self.agent.editing), if self.agent.editing.is_some() => {
                    self.on_edited(edited);
                }
                line = batch::next_line(&mut self.batch_rx), if self.batch_rx.is_some() => {
                    self.on_batch_line(line);
                }
                _ = sleep_until(deadline) , if deadline.is_some() => self.on_deadline(),
            }
        }
    }

    fn write_out(&mut self, bytes: &[u8]) {
        // With `--json` stdout carries JSON lines only (see `emit`).
        if self.json() {
            return;
        }
        if !self.out_broken && terminal::out(bytes).is_err() {
            self.out_broken = true;
            self.hang_up();
        }
    }

    /// Shell output: each stretch up to a marker goes where the agent's
    /// view says, then the marker takes effect, so what a marker changes
    /// (a turn starting at a fresh prompt, a command's output beginning)
    /// applies from the next byte on.
    fn on_output(&mut self, bytes: &[u8]) {
        if let Some(log) = &mut self.startup {
            log.feed(bytes);
        }
        let mut events = std::mem::take(&mut self.events_at);
        self.scanner.feed_at(bytes, |end, e| events.push((end, e)));
        let mut pos = 0;
        for (end, e) in events.drain(..) {
            // Up to the end of the marker: in plain output (a file or pipe,
            // `ssh host '# …'`) it is stripped with every other escape.
            self.route(&bytes[pos..end]);
            pos = end;
            self.on_marker(&e);
        }
        self.events_at = events;
        self.route(&bytes[pos..]);
        if self.agent.active() {
            return;
        }
        if self.icpt.editing() {
            self.editor_redraw();
        }
        if self.icpt.mode() == Mode::Heuristic && !self.icpt.at_prompt() {
            self.quiet_deadline = Some(Instant::now() + heuristic::QUIET);
        }
    }

    fn route(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.agent.active() {
            self.route_in_turn(bytes);
            return;
        }
        if self.startup.is_some() && self.shell_debug {
            self.write_out_debug(bytes);
        } else {
            self.write_out(bytes);
        }
        self.recorder.shown(bytes, true);
        self.tail.feed(bytes);
    }

    /// The one place a shell marker takes effect, whether or not a turn
    /// is running.
    fn on_marker(&mut self, e: &ShellEvent) {
        if !self.agent.active() {
            self.recorder.marker(e);
            if *e == ShellEvent::InputStart {
                self.input_col = self.tail.column(self.size.0);
            }
        }
        match self.state.apply(e) {
            Transition::IntegrationConfirmed => {
                self.integration_deadline = None;
                // The shell has read its startup files: the scripts are
                // no longer needed on disk.
                self.scripts = None;
                self.startup = None;
                self.icpt.set_mode(Mode::Markers);
            }
            Transition::FreshInput => {
                self.icpt.fresh_prompt();
                self.on_fresh_prompt();
            }
            Transition::RedrawnInput => self.icpt.redrawn_prompt(),
            Transition::CommandStarted => {
                self.icpt.left_prompt();
                self.agent_command_started();
            }
            Transition::CommandFinished(code) => self.agent_command_ended(code),
            Transition::CwdChanged | Transition::None => {}
        }
        if *e == ShellEvent::PromptStart {
            self.agent_prompt_started();
        }
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
        let ms = self.started.elapsed().as_millis();
        let msg = format!("unixagent: shell integration is working (first prompt marker after {ms} ms).");
        let line = format!("{}\r\n", dim(&msg, self.colour));
        self.write_out(line.as_bytes());
        self.write_out(&bytes[at..]);
    }

    fn on_input(&mut self, bytes: &[u8]) {
        if self.agent.takes_keys() {
            self.agent_keys(bytes);
            return;
        }
        // While a command runs every key goes to it as it is.
        if let Some(line_ended) = self.icpt.pass_through(bytes) {
            self.send(bytes);
            if line_ended {
                self.state.line_ended();
            }
            return;
        }
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
        for action in self.icpt.on_input(bytes, Geometry { prompt_col, width }) {
            match action {
                Action::ToShell(b) => self.send(&b),
                Action::ToTerminal(b) => self.write_out(&b),
                Action::LineEnded => self.state.line_ended(),
                Action::Instruction(text) => {
                    // The editor has ended its line.
                    self.start_turn(&text);
                }
            }
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
    fn send(&mut self, bytes: &[u8]) {
        if self.to_shell.is_empty() {
            match nix::unistd::write(self.pty.fd(), bytes) {
                Ok(n) => self.to_shell.extend_from_slice(&bytes[n..]),
                Err(_) => self.to_shell.extend_from_slice(bytes),
            }
        } else {
            self.to_shell.extend_from_slice(bytes);
        }
    }

    fn resize(&mut self) {
        let size = terminal::size();
        if size == self.size {
            return;
        }
        self.size = size;
        self.agent.render.set_width(size.0);
        let _ = self.pty.resize(size.0, size.1);
        for a in self.icpt.resize(size.0) {
            if let Action::ToTerminal(b) = a {
                self.write_out(&b);
            }
        }
    }

    fn on_deadline(&mut self) {
        let now = Instant::now();
        if self.integration_deadline.is_some_and(|d| d <= now) {
            self.integration_deadline = None;
            self.scripts = None;
            let printed = self.startup.take().and_then(|l| l.error_line());
            let waited = self.started.elapsed().as_millis();
            if !self.state.integrated() && (self.agent.oneshot() || self.batch.is_some()) {
                let msg = startup::failure_message(self.shell_name, waited, printed.as_deref(), true);
                self.write_err(&msg);
                if self.batch.is_some() {
                    self.emit(ua_protocol::agent::AgentEvent::Error { message: msg, kind: "integration".into() });
                    self.batch_finish(Some((ua_protocol::agent::RunStatus::Error, 1)));
                }
                self.exit_now = Some(1);
                return;
            }
            if !self.state.integrated() {
                self.icpt.set_mode(Mode::Heuristic);
                let msg = startup::failure_message(self.shell_name, waited, printed.as_deref(), false);
                let line = format!("\r\n{}\r\n", dim(&msg, self.colour));
                self.write_out(line.as_bytes());
                self.quiet_deadline = Some(now + heuristic::QUIET);
            }
        }
        if self.quiet_deadline.is_some_and(|d| d <= now) {
            self.quiet_deadline = None;
            if self.icpt.mode() == Mode::Heuristic
                && !self.icpt.at_prompt()
                && heuristic::looks_like_prompt(&self.tail.text())
            {
                self.icpt.fresh_prompt();
            }
        }
        self.agent_deadlines(now);
        self.batch_deadline(now);
        if self.kill_deadline.is_some_and(|d| d <= now) {
            self.kill_deadline = None;
            self.pty.signal(Signal::SIGKILL);
        }
    }

    /// The terminal went away or unixagent was asked to stop: hang up the
    /// shell as a closing terminal would, and kill it if it lingers.
    fn hang_up(&mut self) {
        if self.hung_up {
            return;
        }
        self.hung_up = true;
        self.pty.signal(Signal::SIGHUP);
        self.pty.signal(Signal::SIGCONT);
        self.kill_deadline = Some(Instant::now() + HANGUP_GRACE);
    }

    /// Copies what the shell wrote before exiting to the terminal.
    fn drain(&mut self, buf: &mut [u8]) {
        loop {
            match nix::unistd::read(self.pty.fd(), buf) {
                Ok(n) if n > 0 => self.write_out(&buf[..n]),
                Err(Errno::EINTR) => {}
                _ => break,
            }
        }
    }
}

/// The next keystrokes (the branch is disabled when there is no keyboard).
async fn read_keys(keys: &mut Option<crate::keyboard::Keyboard>) -> Keys<'_> {
    match keys {
        Some(k) => k.read().await,
        None => std::future::pending().await,
    }
}

/// Waits until the queued-write descriptor can take bytes.
async fn writable(
    writer: &Option<AsyncFd<OwnedFd>>,
) -> std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>> {
    match writer {
        Some(w) => w.writable().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
