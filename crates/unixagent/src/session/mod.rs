//! The interactive session: one event loop between the outer terminal and
//! the shell's PTY, and the parts it routes between.
//!
//! A single-threaded tokio runtime waits on everything at once: the PTY
//! master (epoll on a non-blocking descriptor), keystrokes (read on the
//! loop itself, see `keyboard`), signals, and at most a few one-shot
//! deadlines. Nothing ticks: idle at a prompt the process sleeps in
//! `epoll_wait` until a key, an output byte or a signal arrives.
//!
//! Each part owns its state and is reached only through its methods:
//! [`proxy`] (the PTY and the shell's state), [`executor`] (running the
//! agent's commands in the shell), [`driver`] (the agent's turns, with the
//! model call, the gate, the question and the records), [`front`] (what
//! draws the agent's stream and where its inputs come from). The driver
//! answers through an [`outbox`] that [`event_loop`] carries out after each
//! call. This file starts a session: the shell, its journal, its sandbox.
//!
//! Output from the shell is written to the terminal first and only then
//! looked at (markers, the current line), so the user never waits on
//! unixagent's bookkeeping.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::Signal;
use tokio::io::unix::AsyncFd;
use ua_term::integration::{self, ShellSpec};
use ua_term::pty::Pty;

use crate::agent::backend;
use crate::agent::turn::Limits;
use crate::{shell, terminal};

mod above_prompt;
mod board;
mod children;
mod driver;
mod event_loop;
mod executor;
mod front;
mod outbox;
mod proxy;
mod record;
mod spool;
pub(crate) mod startup;
mod waits;

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
    /// The check of `sandbox`'s rules, started as early as they were known
    /// (`sandbox::start_check`); checked when the shell starts otherwise.
    pub sandbox_check: Option<crate::sandbox::SandboxCheck>,
    /// Continue the session in this directory (`--continue`, `--resume`).
    pub resume: Option<Resume>,
    /// The model backend, already being built for work that will surely
    /// call it (a one-shot or batch run); built at the first call
    /// otherwise.
    pub backend_building: Option<crate::agent::backend::Building>,
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

async fn run_async(mut opts: Options, batch: Option<BatchOptions>) -> anyhow::Result<i32> {
    // Signals are registered before the shell exists so that none is lost.
    let mut signals = crate::signals::Signals::new()?;
    let mut check = opts.sandbox_check.take();
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
    let mut spooled = false;
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
            Some(Opened { dir, journal, index, spooled: s }) => {
                spooled = s;
                (Some(dir), Some(journal), index, None)
            }
            None => (None, None, None, None),
        },
    };
    let id = session_dir.as_ref().map_or_else(session_id, |d| d.id().to_string());
    let own_id = id.clone();
    let mut env = vec![
        (OsString::from(shell::SESSION_ENV), OsString::from(&id)),
        (OsString::from("UNIXAGENT_PID"), OsString::from(std::process::id().to_string())),
    ];
    let telemetry = opts.agent.telemetry.clone();
    env.extend(trace.shell_env(telemetry.sink().ok().flatten().map(|s| s.url()).as_deref()));
    if let Some(j) = &journal {
        env.push((OsString::from("UNIXAGENT_JOURNAL"), j.path().as_os_str().to_owned()));
    }
    let attached = crate::board::attach(session_dir.as_ref(), &mut env);
    // A spooled session's children report and spool inside its spool, so
    // its parent imports them with it; any other session imports theirs.
    let place = match (&session_dir, spooled) {
        (Some(d), true) => children::Place::Spooled(ua_store::spool::children_of(d.path())),
        (Some(_), false) => children::Place::Own(
            ua_store::session::data_dir()
                .ok()
                .map(|data| spool::Importer::new(data, id.clone(), telemetry.sink().ok().flatten())),
        ),
        (None, _) => children::Place::Own(None),
    };
    // Watched before the shell starts, so no child can report unheard.
    let children =
        children::Children::start(attached.as_ref().map(ua_store::board::Board::root), place).map(|(c, var)| {
            env.push(var);
            c
        });
    // Watched from before the shell starts, so no change is missed.
    let mut board = attached.and_then(|b| {
        board::TaskBoard::start(b, resumed.is_some())
            .map_err(|e| eprintln!("unixagent: the task board is not watched this time: {e}"))
            .ok()
    });
    let board_lines = match (&resumed, board.as_mut()) {
        (Some(_), Some(b)) => b.resume_lines(),
        _ => Vec::new(),
    };
    if batch.as_ref().is_none_or(|b| b.plain.is_some()) {
        for line in &board_lines {
            eprintln!("{}", dim(&format!("unixagent: {line}"), colour));
        }
    }
    if !opts.agent.policy_layers.is_empty()
        && let Ok(joined) = std::env::join_paths(&opts.agent.policy_layers)
    {
        env.push((OsString::from(crate::agent::gate::LAYERS_ENV), joined));
    }
    // Work nobody watches starts its shell while the sandbox's trial still
    // runs, and hears the verdict before anything else happens: a set-up
    // that fails there fails in the shell's launcher too, which then runs
    // nothing (it exits 125), so the trial's time is not added to the
    // start. An interactive shell waits for the verdict first: without a
    // sandbox it still starts, outside one.
    let unattended = batch.is_some() || oneshot;
    // The shell starts in the sandbox: the proxy runs on this runtime for
    // as long as the session.
    let mut watch = None;
    let mut blocked = None;
    let _sandbox = match opts.sandbox.clone() {
        Some(rules) => match start_sandbox(rules, check.take_if(|c| !unattended || !c.pending()), &mut launch) {
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
    if let Some(why) = check.and_then(|c| c.finish().err()) {
        pty.signal(nix::sys::signal::Signal::SIGKILL);
        return Ok(refuse_to_start(&why, batch.as_ref()));
    }
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

    let quiet = batch.as_ref().is_some_and(|b| b.plain.is_none());
    let proxy = proxy::Proxy::new(proxy::ProxySetup {
        pty,
        aid: launch.aid.clone(),
        integrated: launch.integrated,
        scripts: launch.scripts,
        shell_name: launch.kind.name(),
        shell_path: opts.shell.clone(),
        size: (cols, rows),
        integration_timeout: opts.integration_timeout,
        shell_debug: opts.shell_debug,
        colour,
        quiet,
    });
    let agent = opts.agent;
    let mut exec = executor::Executor::new(agent.command_timeout, agent.output_cap, oneshot && !out_tty, oneshot);
    let turns = driver::TurnOptions {
        limits: agent.limits,
        include_env: agent.include_env,
        terminal_lines: agent.terminal_lines,
        pricing: agent.pricing,
        telemetry: agent.telemetry,
        shell: opts.shell.clone(),
    };
    let mut driver = driver::Driver::new(
        turns,
        driver::ModelCall::new(agent.backend, opts.backend_building),
        driver::Gatekeeper::new(agent.confirm, agent.judge, agent.policy_layers),
        driver::Records::new(id.clone(), journal, index),
    );
    driver.set_can_ask(stdin_tty);
    let spool_spans = session_dir.as_ref().filter(|_| spooled).map(|d| ua_store::spool::spans_of(d.path()));
    driver.trace(crate::trace::Live::start(&own_id, &telemetry, spool_spans));
    if let Some(w) = watch {
        driver.set_sandbox(w);
    }
    if let Some(why) = blocked {
        driver.set_blocked(why);
    }
    let batch = batch.map(front::Batch::new);
    let front: Box<dyn front::FrontEnd> = if batch.as_ref().is_some_and(front::Batch::ndjson) {
        Box::new(front::NdjsonFront)
    } else {
        let render = crate::agent::render::Renderer::new(colour && out_tty, cols, out_tty);
        Box::new(front::TerminalFront::new(render, batch.is_some() || (oneshot && !out_tty)))
    };
    if let Some(b) = &batch {
        exec.set_batch();
        driver.set_can_ask(b.can_ask());
    }
    let mut s = event_loop::Session::new((proxy, exec, driver), front, batch, (opts.oneshot, board));
    if let Some(c) = children {
        s.watch_children(c);
    }
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    // Journaled (and so in the index) before anyone is told the id: a
    // program that reads it and looks the session up finds it running.
    if resumed.is_none() {
        let entry = ua_protocol::journal::JournalEntry::SessionStart {
            session: id.clone(),
            pid: std::process::id(),
            shell: opts.shell.display().to_string(),
            cwd: cwd.clone(),
            os: std::env::consts::OS.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        s.drive(|d, out| d.record(entry, out));
    }
    // The first event of the stream (a terminal draws nothing for it).
    s.drive(|d, out| {
        out.event(ua_protocol::agent::AgentEvent::Session {
            v: ua_protocol::agent::SCHEMA_VERSION,
            id,
            journal: d.journal_path().map(|p| p.display().to_string()),
            shell: opts.shell.display().to_string(),
            cwd: cwd.clone(),
        });
    });
    if let Some(r) = resumed {
        let used = opts.resume.as_ref().map(|r| r.used).unwrap_or_default();
        // A terminal was told of the resume as the session started.
        s.drive(|d, out| d.continue_from(r, (&opts.shell, &cwd), used, quiet, out));
        if quiet {
            s.drive(|_, out| board_lines.into_iter().for_each(|line| out.notice(line)));
        }
    }
    let code = s.run(&master, keys, &mut signals).await;
    s.finish_children();
    let mut spans = None;
    s.drive(|d, out| {
        d.record(ua_protocol::journal::JournalEntry::SessionEnd { exit_code: Some(code) }, out);
        spans = d.take_spans();
    });
    drop(raw);
    if let Some(spans) = spans {
        spans.finish();
    }
    Ok(code)
}

/// Prepares the sandbox for the shell and points `launch` at it.
fn start_sandbox(
    rules: Result<ua_sandbox::Rules, String>,
    check: Option<crate::sandbox::SandboxCheck>,
    launch: &mut integration::Launch,
) -> Result<(crate::sandbox::Prepared, driver::SandboxWatch), String> {
    let rules = rules?;
    if let Some(check) = check {
        check.finish()?;
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let prepared = crate::sandbox::Prepared::new(rules.clone(), Some(tx))?;
    let (program, args) = prepared.wrap(&launch.program, &launch.args)?;
    launch.program = program;
    launch.args = args;
    Ok((prepared, driver::SandboxWatch::new(rules, rx)))
}

/// The run ends before the shell starts: one line on stderr and, for
/// `--json`, an `error` and a `result` event. Returns the exit status.
fn refuse_to_start(why: &str, batch: Option<&BatchOptions>) -> i32 {
    use ua_protocol::agent::{AgentEvent, RunStatus, TokenUsage};
    let message = format!("the sandbox cannot be applied, so nothing runs: {why}");
    eprintln!("unixagent: {message}");
    let json = batch.is_some_and(|b| b.plain.is_none());
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
        crate::child::report::event(&e);
        if json {
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

/// A new session's directory, journal and index.
struct Opened {
    dir: ua_store::session::SessionDir,
    journal: ua_store::journal::Journal,
    index: Option<Indexing>,
    /// Kept in a spool in the parent's report directory (no index).
    spooled: bool,
}

/// The session's directory, journal and index. Without them unixagent
/// still works; it says once why there is no journal. (Without the index,
/// the session is only missing from `sessions list` until a reindex.) A
/// child inside its parent's sandbox, where the data directory cannot be
/// written, keeps them in a spool its parent imports (`ua_store::spool`).
fn open_journal(shell: &std::path::Path, trace: &crate::trace::TraceContext) -> Option<Opened> {
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
        let (dir, spooled) = match ua_store::session::SessionDir::create(&data, meta.clone()) {
            Ok(dir) => (dir, false),
            Err(e) => match spool_dir() {
                Some(reports) => (ua_store::spool::create(&reports, meta).map_err(|_| e)?, true),
                None => return Err(e),
            },
        };
        let journal = ua_store::journal::Journal::open(dir.journal_path(), ua_store::journal::SyncPolicy::default())?;
        let index = if spooled { None } else { ua_store::index::Index::open(&data).ok() };
        let index = index.map(|i| (i, ua_store::index::RecordFeed::new(dir.id(), parent)));
        Ok::<_, ua_store::StoreError>(Opened { dir, journal, index, spooled })
    })();
    opened.map_err(|e| eprintln!("unixagent: no session journal this time: {e}")).ok()
}

/// Where a child whose data directory could not be written keeps its
/// session instead: its parent's report directory, when it runs inside
/// its parent's sandbox (the launcher's variable, and the kernel showing
/// the process confined) and the directory is there.
fn spool_dir() -> Option<PathBuf> {
    let reports = PathBuf::from(std::env::var_os(crate::child::report::CHILDREN_ENV)?);
    (ua_sandbox::linux::enclosed() && reports.is_absolute() && reports.is_dir()).then_some(reports)
}

/// What the person is told when a session continues: which one, what
/// could not be read, and each command whose outcome is unknown.
pub(in crate::session) fn resume_lines(r: &ua_store::resume::Resumed, id: &str) -> Vec<String> {
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
