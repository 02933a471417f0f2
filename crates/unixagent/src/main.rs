//! unixagent: an agent that lives in your terminal.
//!
//! This binary is thin: it parses the command line, loads the config, picks
//! the mode (interactive session, `-c`, or lines from a pipe) and hands over
//! to the module for that mode. `main` prints an error once and exits with
//! the shell's status, or 1 for unixagent's own failures.

mod acp;
mod agent;
mod board;
mod child;
mod cli;
mod completions;
mod config;
mod doctor;
mod editor;
mod keyboard;
mod man;
mod pipe;
mod policy_cmd;
mod sandbox;
mod session;
mod sessions;
mod shell;
mod signals;
mod terminal;
mod trace;

use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// The static build's allocator: musl's own made loading the policy two
/// to three times slower than glibc's malloc (see Cargo.toml).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // The sandbox launcher first, while the process is single-threaded.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    #[cfg(target_os = "linux")]
    if args.get(1).is_some_and(|a| a == sandbox::LAUNCHER) {
        return ExitCode::from(u8::try_from(sandbox::launcher(&args[2..])).unwrap_or(1));
    }
    // A completion script asking for candidates (UNIXAGENT_COMPLETE set):
    // answered before anything else runs, and the process exits.
    completions::answer_if_asked();
    home_from_account();
    with_room_to_recurse(body)
}

/// Everything after the launcher and the completion answer.
fn body() -> ExitCode {
    // Login programs start a login shell with a leading `-` in argv[0].
    let login_by_name = std::env::args_os()
        .next()
        .and_then(|a| std::path::PathBuf::from(a).file_name().map(|n| n.to_string_lossy().starts_with('-')))
        .unwrap_or(false);
    let cli = cli::Cli::parse();
    end_quietly_when_the_reader_goes(cli.sub.as_ref());
    match run(cli, login_by_name) {
        Ok(code) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        Err(e) => {
            eprintln!("unixagent: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The stack the static build runs on: what glibc's main thread gets.
#[cfg(target_env = "musl")]
const STACK: usize = 8 << 20;

/// Runs `f` on a thread with [`STACK`] of stack. musl reports to
/// `pthread_getattr_np` only the part of the main thread's stack mapped so
/// far; cedar's evaluator measures the stack it has left before each level
/// of recursion and took that for exhaustion, so in the static build every
/// decision failed with "recursion limit reached". The launcher stays on
/// the main thread: it must be single-threaded to enter namespaces.
#[cfg(target_env = "musl")]
fn with_room_to_recurse(f: fn() -> ExitCode) -> ExitCode {
    match std::thread::Builder::new().name("unixagent".into()).stack_size(STACK).spawn(f).map(|t| t.join()) {
        Ok(Ok(code)) => code,
        // The panic hook has printed the message already.
        Ok(Err(_)) => ExitCode::from(101),
        Err(e) => {
            eprintln!("unixagent: could not start its main thread: {e}");
            ExitCode::from(1)
        }
    }
}

/// glibc's main thread reports its whole stack: `f` runs right here.
#[cfg(not(target_env = "musl"))]
fn with_room_to_recurse(f: fn() -> ExitCode) -> ExitCode {
    f()
}

/// The subcommands that only print (`policy explain … | head`, `sessions
/// list | less` quit early) end as other Unix filters do when their reader
/// goes: killed by SIGPIPE, rather than panicking at the next write. Not
/// the session, `sandbox` or `doctor`: they hold sockets and a terminal to
/// restore, and take a closed pipe as an error to handle.
fn end_quietly_when_the_reader_goes(sub: Option<&cli::Sub>) {
    use cli::Sub;
    if matches!(
        sub,
        Some(
            Sub::Policy { .. }
                | Sub::Sessions { .. }
                | Sub::Traces { .. }
                | Sub::Board { .. }
                | Sub::Completions { .. }
                | Sub::Man
        )
    ) {
        // SAFETY: no thread has started yet; this restores the default
        // disposition Rust's runtime replaced with "ignore".
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
}

fn run(cli: cli::Cli, login_by_name: bool) -> anyhow::Result<i32> {
    let login = cli.login || login_by_name;
    match &cli.sub {
        Some(cli::Sub::Completions { shell }) => return Ok(completions::print(*shell)),
        Some(cli::Sub::Man) => return Ok(man::print()),
        Some(cli::Sub::Doctor { json, offline }) => {
            return Ok(doctor::run(&doctor::Options { config: cli.config.clone(), json: *json, offline: *offline }));
        }
        _ => {}
    }
    if let Some(cli::Sub::Policy { action }) = &cli.sub {
        return Ok(match action {
            cli::PolicyAction::Explain { json, command } => policy_cmd::explain(command, *json),
            cli::PolicyAction::Check => policy_cmd::check(),
        });
    }
    if let Some(cli::Sub::Acp { shell }) = &cli.sub {
        return acp::run(acp_options(&cli, shell.as_ref().or(cli.shell.as_ref()))?);
    }
    if let Some(cli::Sub::Board { action, json, session }) = &cli.sub {
        return Ok(board::run(action.as_ref(), *json, session.as_deref()));
    }
    // A broken config must never lock anyone out of their shell (unixagent
    // may be the login shell): report it and carry on with defaults.
    let cfg = match config::load(cli.config.as_deref()) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                eprintln!("unixagent: {w}");
            }
            loaded.config
        }
        Err(e) => {
            eprintln!("unixagent: {e}; using the default settings.");
            config::Config::default()
        }
    };
    if let Some(cli::Sub::Sessions { action }) = &cli.sub {
        let done = match action {
            cli::SessionsAction::List { json, all } => sessions::list(*json, *all),
            cli::SessionsAction::Show { id } => sessions::show(id),
            cli::SessionsAction::Export { id, format } => sessions::export(id, format),
            cli::SessionsAction::Prune { older_than } => sessions::prune(older_than),
            cli::SessionsAction::Reindex => sessions::reindex(),
        };
        return Ok(done.unwrap_or_else(|e| {
            eprintln!("unixagent: {e}");
            1
        }));
    }
    if let Some(cli::Sub::Traces { action: cli::TracesAction::Export { trace, since } }) = &cli.sub {
        return Ok(trace::export::export(&cfg.telemetry, trace.as_deref(), since.as_deref()).unwrap_or_else(|e| {
            eprintln!("unixagent: {e}");
            1
        }));
    }
    if let Some(cli::Sub::Sandbox { action, command }) = &cli.sub {
        return Ok(match action {
            Some(cli::SandboxAction::Status { json }) => sandbox::status(&cfg.sandbox, *json),
            None => sandbox::run(&cfg.sandbox, command),
        });
    }
    if cli.usage {
        return Ok(sessions::usage(cli.json, cli.since.as_deref()).unwrap_or_else(|e| {
            eprintln!("unixagent: {e}");
            1
        }));
    }
    let shell = shell::resolve(cli.shell.as_deref(), cfg.shell.command.as_deref());
    // The session to continue, found before anything starts.
    let resume = sessions::to_resume(cli.continue_, cli.any, cli.resume.as_deref()).map_err(anyhow::Error::msg)?;

    let agent = session::AgentOptions {
        backend: agent::backend::Setup {
            section: cfg.backend.clone(),
            backend: cli.backend.clone(),
            model: cli.model.clone(),
        },
        limits: agent::turn::Limits { max_steps: cfg.agent.max_steps.max(1) },
        command_timeout: Duration::from_secs(cfg.agent.command_timeout_secs.max(1)),
        output_cap: cfg.agent.output_cap_bytes.max(1024),
        include_env: cfg.context.include_env.clone(),
        terminal_lines: cfg.context.terminal_lines,
        confirm: confirm_mode(cfg.shell.confirm_mode.as_deref()),
        judge: cfg.judge.clone(),
        policy_layers: agent::gate::layers(cli.policy.as_deref()).map_err(anyhow::Error::msg)?,
        pricing: cfg.pricing.clone(),
        telemetry: cfg.telemetry.clone(),
    };
    let stdin_tty = nix::unistd::isatty(std::io::stdin().as_fd()).unwrap_or(false);
    let oneshot = cli.command.as_deref().is_some_and(is_instruction);
    // Agent work: a one-shot instruction, batch mode, or a pipe (whose `#`
    // lines start a session). From inside a session it is a child, held to
    // the depth and fan-out limits before anything starts.
    let agent_run = oneshot || cli.json || (!stdin_tty && cli.command.is_none());
    let limits = child::admission::Limits { max_depth: cfg.agent.max_depth, max_children: cfg.agent.max_children };
    let instruction = cli.command.as_deref().filter(|c| is_instruction(c)).map_or("", instruction_text);
    // A one-shot in the foreground of a terminal: its parent draws its
    // progress there.
    let in_front = oneshot
        && !cli.json
        && stdin_tty
        && nix::unistd::isatty(std::io::stdout().as_fd()).unwrap_or(false)
        && !child::in_background();
    let admitted = match child::admit(agent_run, limits, (instruction, in_front)) {
        Ok(a) => a,
        Err(refusal) => return Ok(child::refuse(&refusal, cli.json)),
    };
    let is_child = agent_run && admitted.lineage.child;
    // A plain `-c` (and a nested interactive one) runs the shell, not a
    // session: it has no trace of its own to print.
    let plain = cli.command.as_deref().is_some_and(|c| !is_instruction(c)) && !cli.json;
    if cli.trace && !plain {
        eprintln!("unixagent: trace {}", trace::TraceContext::inherited().trace_id);
    }
    // Agent work nobody watches always runs in the kernel sandbox, and so
    // does every child's shell (a child never holds more than its parent);
    // an interactive shell when asked (the user's own commands run there too).
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let unattended = cli.json || !stdin_tty;
    let sandboxed = unattended || is_child || cli.sandbox || cfg.sandbox.interactive;
    // Compiled only when a session starts, so a broken policy never stops
    // a plain `-c` or a piped script without `#` lines.
    // While this session may still start a child, its own model endpoints
    // are allowed through the sandbox's proxy: that is how a child in the
    // sandboxed shell reaches its model.
    let may_delegate = admitted.lineage.depth < cfg.agent.max_depth;
    let sandbox = || {
        sandboxed.then(|| {
            let hosts = if may_delegate { sandbox::model_endpoints(&agent.backend) } else { Vec::new() };
            sandbox::rules_allowing(&cfg.sandbox, &cwd, &agent.policy_layers, hosts)
        })
    };
    // A session over the shell: interactive, one-shot or batch.
    let session_options = |integration: bool, shell_debug: bool, oneshot: Option<String>, batch: Option<_>| {
        // Work nobody types into calls the model at once: its backend (the
        // HTTP client reads the system's certificates) is built from here
        // on, and the patterns that scrub its first context are compiled,
        // beside the sandbox's trial and the session's set-up.
        let backend_building =
            (oneshot.is_some() || batch.is_some()).then(|| agent::backend::prepare(agent.backend.clone()));
        let sandbox = sandbox();
        // Tried from here on, while the rest is set up; the shell waits
        // for the verdict.
        let sandbox_check = sandbox.as_ref().and_then(|r| r.as_ref().ok()).map(sandbox::start_check);
        session::Options {
            shell: shell.clone(),
            login,
            args: cli.shell_args.clone(),
            integration,
            integration_timeout: Duration::from_millis(cfg.shell.integration_timeout_ms),
            shell_debug,
            agent: agent.clone(),
            oneshot,
            batch,
            sandbox,
            sandbox_check,
            resume: resume.clone(),
            backend_building,
        }
    };
    let session = |integration: bool, shell_debug: bool, oneshot, batch| {
        let options = session_options(integration, shell_debug, oneshot, batch);
        sessions::prune_retained(cfg.journal.retain_days);
        for w in agent::gate::policy_warnings(&agent.policy_layers) {
            eprintln!("unixagent: {w}");
        }
        options
    };
    let approval_timeout = Duration::from_secs(cfg.batch.approval_timeout_secs.max(1));
    if cli.json {
        let first = cli.command.as_deref().filter(|s| is_instruction(s)).map(|s| instruction_text(s).to_string());
        if let Some(c) = cli.command.as_deref().filter(|s| !is_instruction(s)) {
            anyhow::bail!("--json runs instructions; `-c {c:?}` is a shell command: run it without --json");
        }
        let batch = session::BatchOptions {
            // With `-c` on a terminal there is nothing to read; otherwise
            // stdin carries instructions, approvals and shell lines.
            input: if first.is_some() && stdin_tty { session::BatchInput::None } else { session::BatchInput::Stdin },
            first,
            approval_timeout,
            plain: None,
        };
        return session::run(session(true, false, None, Some(batch)));
    }
    if let Some(string) = &cli.command {
        if is_instruction(string) {
            let text = instruction_text(string).to_string();
            // A child nobody watches (no terminal on either side, or in the
            // background): a batch run that asks nobody, printing its
            // summary and answer (everything with -v). A question it drew
            // where nobody looks would hang it.
            // A child in the foreground of its parent's terminal: the same,
            // with a progress line there while it runs; with -v an ordinary
            // one-shot, which shows everything and may ask.
            let stdout_tty = nix::unistd::isatty(std::io::stdout().as_fd()).unwrap_or(false);
            let watched = stdin_tty && stdout_tty && !child::in_background();
            if is_child && (!watched || !cli.verbose) {
                return run_child(text, cli.verbose, approval_timeout, &session);
            }
            return session::run(session(true, cli.shell_debug, Some(text), None));
        }
        let err = shell::exec_dash_c(&shell, login, string, &cli.shell_args);
        anyhow::bail!("could not run {}: {err}", shell.display());
    }

    if !stdin_tty {
        // `#` lines run in a batch session of their own, started at the
        // first one; each turn's exit status comes back to the pipe.
        let agent = |lines, turns| {
            let plain = session::BatchOptions {
                first: None,
                input: session::BatchInput::Lines(lines),
                approval_timeout,
                plain: Some(turns),
            };
            session(true, false, None, Some(plain))
        };
        return pipe::run(&shell, login, &cli.shell_args, agent);
    }
    // --shell-debug is asked for from inside a session whose integration
    // failed: run it there rather than start a plain shell.
    if let Some(outer) = std::env::var_os(shell::SESSION_ENV).filter(|_| !cli.shell_debug) {
        eprintln!(
            "unixagent: already running inside unixagent (session {}); starting {} without it.",
            outer.to_string_lossy(),
            shell.display()
        );
        let err = shell::exec_plain(&shell, login, &cli.shell_args);
        anyhow::bail!("could not run {}: {err}", shell.display());
    }
    session::run(session(cfg.shell.integration, cli.shell_debug, None, None))
}

/// `unixagent acp`: each session is this binary with `--json` and the
/// options `acp` was given that choose the model, policy and shell.
fn acp_options(cli: &cli::Cli, shell: Option<&std::path::PathBuf>) -> anyhow::Result<acp::Options> {
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("unixagent cannot find its own executable to start sessions ({e})"))?;
    let mut forward: Vec<std::ffi::OsString> = Vec::new();
    let paths = [("--config", cli.config.as_ref()), ("--policy", cli.policy.as_ref()), ("--shell", shell)];
    for (flag, value) in paths {
        if let Some(v) = value {
            forward.extend([flag.into(), v.clone().into_os_string()]);
        }
    }
    for (flag, value) in [("--backend", &cli.backend), ("--model", &cli.model)] {
        if let Some(v) = value {
            forward.extend([flag.into(), v.into()]);
        }
    }
    Ok(acp::Options { program, forward })
}

/// Started with no HOME (`env -i`, an init system, a bare container),
/// takes it from the account's passwd entry, as login(1) and sshd set it:
/// the config, the policy and the data directory are all found from it.
fn home_from_account() {
    if std::env::var_os("HOME").is_some_and(|h| !h.is_empty()) {
        return;
    }
    if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        // SAFETY: called from main before any thread is started.
        unsafe { std::env::set_var("HOME", &user.dir) };
    }
}

/// A child's one-shot: its instruction as a batch run with no input (a
/// question is a denial), its output folded into one line and its answer
/// (see `child::quiet`), or with `verbose` batch mode's plain text.
fn run_child(
    text: String,
    verbose: bool,
    approval_timeout: Duration,
    session: &dyn Fn(bool, bool, Option<String>, Option<session::BatchOptions>) -> session::Options,
) -> anyhow::Result<i32> {
    if verbose {
        let (turns, _) = std::sync::mpsc::channel();
        let (_, lines) = tokio::sync::mpsc::unbounded_channel();
        let batch = session::BatchOptions {
            first: Some(text),
            input: session::BatchInput::Lines(lines),
            approval_timeout,
            plain: Some(turns),
        };
        return session::run(session(true, false, None, Some(batch)));
    }
    let quiet = child::quiet::Quiet::start(&text)?;
    let batch =
        session::BatchOptions { first: Some(text), input: session::BatchInput::None, approval_timeout, plain: None };
    let code = session::run(session(true, false, None, Some(batch)));
    quiet.finish();
    code
}

fn confirm_mode(configured: Option<&str>) -> agent::ConfirmMode {
    let Some(name) = configured else { return agent::ConfirmMode::default() };
    agent::ConfirmMode::parse(name).unwrap_or_else(|| {
        eprintln!("unixagent: shell.confirm_mode = {name:?} is not one of auto, each, plan; using auto.");
        agent::ConfirmMode::default()
    })
}

/// `#…` is an instruction; `\#…` and everything else belong to the shell.
fn is_instruction(s: &str) -> bool {
    s.trim_start().starts_with('#')
}

fn instruction_text(s: &str) -> &str {
    s.trim_start().trim_start_matches('#').trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_start_with_hash() {
        assert!(is_instruction("# list files"));
        assert!(is_instruction("  #x"));
        assert!(!is_instruction("echo # hi"));
        assert!(!is_instruction("\\# literal"));
        assert_eq!(instruction_text("## two"), "two");
    }
}
