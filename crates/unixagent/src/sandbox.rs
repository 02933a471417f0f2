//! The kernel sandbox as unixagent uses it: the rules compiled from the
//! config and the policies (`sandbox/policy.rs`), the launcher that
//! applies them and runs the shell or a command, and `unixagent sandbox
//! status` / `sandbox -- CMD`.
//!
//! On Linux a sandboxed process is started as `unixagent __sandbox-exec
//! SPEC -- PROGRAM ARGS…`: that launcher reads the spec, connects to the
//! proxy's hand-over socket, and removes both and their private directory
//! before anything else (so nothing is left in the temporary directory
//! even if unixagent is killed); then it applies the spec to itself
//! (`ua_sandbox::linux::apply`, which normalises the rules against what is
//! on disk first) and execs PROGRAM, which keeps the launcher's process
//! id, terminal and environment. `__sandbox-exec SPEC --check` applies the
//! spec and exits: a trial run, so that a sandbox that cannot be set up
//! is refused with the launcher's own sentence before a shell starts (it
//! runs while the session sets the rest up: [`start_check`]). On
//! macOS it is started as `sandbox-exec -p PROFILE -- env PROXY… PROGRAM
//! ARGS…` with the profile `ua_sandbox::seatbelt` compiles from the same
//! rules. Either way the parent runs the allowlisting proxy for it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ua_sandbox::normalise::{Host, normalise};
use ua_sandbox::rules::{Mode, PathRule, Rules};

mod endpoints;
mod policy;

pub use endpoints::rules as model_endpoints;

pub use policy::{compile, rules, rules_allowing};

/// The hidden subcommand that applies a spec and execs (Linux).
pub const LAUNCHER: &str = "__sandbox-exec";

/// In place of `-- PROGRAM`: apply the spec and exit 0 (a trial).
const CHECK: &str = "--check";

/// Exit status when the sandbox cannot be applied (the command did not
/// run), as container runtimes use it.
pub const REFUSED: i32 = 125;

/// A check of the sandbox under way: what the kernel lacks, judged at
/// once, and the trial launcher, which runs while the session goes on
/// setting up (its journal, board and scripts) and is waited for only
/// before the shell starts.
#[derive(Debug)]
pub struct SandboxCheck {
    refused: Option<String>,
    /// The spec's private directory and the launcher trying it.
    trial: Option<(tempfile::TempDir, std::process::Child)>,
}

/// Starts checking `rules`: refused, with the one sentence to show, when
/// they ask for more than this kernel can enforce and the mode is
/// enforce, or when setting them up fails here (tried in a launcher of
/// its own); the shell is then not started at all.
#[cfg(target_os = "linux")]
pub fn start_check(rules: &Rules) -> SandboxCheck {
    if ua_sandbox::linux::enclosed() {
        // A child agent in a sandboxed shell: the enclosing sandbox holds.
        // No namespace or mount is made, so a trial would only repeat the
        // Landlock and seccomp the launcher applies anyway, and a child's
        // start would pay for the sandbox twice.
        let missing = ua_sandbox::linux::nested_shortfalls(ua_sandbox::linux::landlock_abi());
        let refused = (!missing.is_empty() && rules.mode == Mode::Enforce)
            .then(|| ua_sandbox::linux::SandboxError::Unsupported(missing.join("; ")).to_string());
        return SandboxCheck { refused, trial: None };
    }
    // The trial judges what the kernel lacks itself (the launcher refuses
    // with the same sentence, having tried the namespaces rather than
    // probed for them), so nothing is probed here first.
    match trial(rules) {
        Ok(running) => SandboxCheck { refused: None, trial: Some(running) },
        Err(why) => SandboxCheck { refused: Some(why), trial: None },
    }
}

/// Refuses when macOS has no `sandbox-exec` (best-effort mode has nothing
/// weaker to fall back on, so it refuses too).
#[cfg(target_os = "macos")]
pub fn start_check(_rules: &Rules) -> SandboxCheck {
    let refused = (!Path::new(ua_sandbox::seatbelt::SANDBOX_EXEC).exists())
        .then(|| format!("{} is missing, so Seatbelt cannot be applied", ua_sandbox::seatbelt::SANDBOX_EXEC));
    SandboxCheck { refused, trial: None }
}

impl SandboxCheck {
    /// The trial launcher still runs: the verdict is not known yet.
    pub fn pending(&self) -> bool {
        self.trial.is_some()
    }

    /// The verdict: the trial launcher waited for, and its own sentence
    /// when it failed.
    pub fn finish(mut self) -> Result<(), String> {
        if let Some(why) = self.refused.take() {
            return Err(why);
        }
        let Some((_dir, child)) = self.trial.take() else { return Ok(()) };
        let out = child.wait_with_output().map_err(|e| format!("trying the sandbox: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.trim().trim_start_matches("unixagent: ");
        if said.is_empty() {
            Err(format!("trying the sandbox failed ({}), without a reason", out.status))
        } else {
            Err(said.to_string())
        }
    }
}

impl Drop for SandboxCheck {
    /// A check given up (the session ended before its shell started)
    /// leaves no launcher behind.
    fn drop(&mut self) {
        if let Some((_, child)) = self.trial.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts setting `rules` up in a launcher that exits instead of running
/// anything.
#[cfg(target_os = "linux")]
fn trial(rules: &Rules) -> Result<(tempfile::TempDir, std::process::Child), String> {
    let dir = private_dir()?;
    let path = dir.path().join("spec.json");
    let spec = ua_sandbox::linux::Spec { rules: rules.clone(), proxy: None, nested: false };
    let text = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let me = std::env::current_exe().map_err(|e| format!("finding unixagent's own binary: {e}"))?;
    let child = std::process::Command::new(me)
        .arg(LAUNCHER)
        .arg(&path)
        .arg(CHECK)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("trying the sandbox: {e}"))?;
    Ok((dir, child))
}

/// Where the proxy reports what it let through and what it refused.
pub type Decisions = tokio::sync::mpsc::UnboundedSender<ua_sandbox::proxy::Decision>;

/// Where a process is confined.
#[derive(Debug)]
enum Confine {
    /// Linux: unixagent's own launcher applies the spec in this file.
    Launcher { spec: PathBuf },
    /// macOS: `sandbox-exec` with the profile compiled from these rules.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    Seatbelt { rules: Box<Rules>, proxy_port: Option<u16> },
}

/// A sandbox prepared for one process: how to confine it and the proxy
/// serving it.
#[derive(Debug)]
pub struct Prepared {
    /// Holds the spec and the proxy's hand-over socket until the launcher
    /// has them (it removes all three then); removed on drop otherwise.
    _dir: tempfile::TempDir,
    confine: Confine,
    /// The proxy's tasks; they end with this value.
    _proxy: Option<ProxyTasks>,
}

#[derive(Debug)]
struct ProxyTasks(Vec<tokio::task::JoinHandle<()>>);

impl Drop for ProxyTasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// The proxy on the host's loopback, serving on the current runtime.
fn host_proxy(
    allow: &Arc<ua_sandbox::proxy::Allowlist>,
    decisions: Option<Decisions>,
) -> Result<(u16, tokio::task::JoinHandle<()>), String> {
    let failed = |e: std::io::Error| format!("starting the proxy: {e}");
    let host = std::net::TcpListener::bind("127.0.0.1:0").map_err(failed)?;
    let port = host.local_addr().map_err(failed)?.port();
    host.set_nonblocking(true).map_err(failed)?;
    let host = tokio::net::TcpListener::from_std(host).map_err(failed)?;
    let a = Arc::clone(allow);
    Ok((port, tokio::spawn(async move { ua_sandbox::proxy::serve(host, a, decisions).await })))
}

impl Prepared {
    /// Writes the spec for `rules` and, when hosts are allowed, starts the
    /// proxy on the current tokio runtime; `decisions` hears of every
    /// request it decides on.
    #[cfg(target_os = "linux")]
    pub fn new(rules: Rules, decisions: Option<Decisions>) -> Result<Self, String> {
        let dir = private_dir()?;
        let mut tasks = Vec::new();
        let mut plan = None;
        // Inside a sandbox already, the enclosing one's proxy serves (its
        // variables are inherited): a proxy here could reach nothing.
        let nested = ua_sandbox::linux::enclosed();
        if rules.network() && !nested {
            let allow = Arc::new(ua_sandbox::proxy::Allowlist::new(rules.allow_hosts.clone()));
            let (host_port, host) = host_proxy(&allow, decisions.clone())?;
            let handoff_path = dir.path().join("proxy.sock");
            let handoff =
                tokio::net::UnixListener::bind(&handoff_path).map_err(|e| format!("starting the proxy: {e}"))?;
            tasks.push(host);
            tasks.push(tokio::spawn(async move { serve_handed_over(handoff, allow, decisions).await }));
            plan = Some(ua_sandbox::linux::ProxyPlan { host_port, handoff: handoff_path });
        }
        let spec = ua_sandbox::linux::Spec { rules, proxy: plan, nested };
        let path = dir.path().join("spec.json");
        let text = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(Self { _dir: dir, confine: Confine::Launcher { spec: path }, _proxy: Some(ProxyTasks(tasks)) })
    }

    /// Compiles the profile's rules and, when hosts are allowed, starts the
    /// proxy on the host's loopback (macOS has no network namespaces; the
    /// profile lets the process reach that one port).
    #[cfg(target_os = "macos")]
    pub fn new(rules: Rules, decisions: Option<Decisions>) -> Result<Self, String> {
        let dir = private_dir()?;
        let mut tasks = Vec::new();
        let mut proxy_port = None;
        if rules.network() {
            let allow = Arc::new(ua_sandbox::proxy::Allowlist::new(rules.allow_hosts.clone()));
            let (port, task) = host_proxy(&allow, decisions)?;
            tasks.push(task);
            proxy_port = Some(port);
        }
        let confine = Confine::Seatbelt { rules: Box::new(normalise(&rules, &Host).rules), proxy_port };
        Ok(Self { _dir: dir, confine, _proxy: Some(ProxyTasks(tasks)) })
    }

    /// The argv that runs `program args…` under this sandbox.
    pub fn wrap(&self, program: &Path, args: &[OsString]) -> Result<(PathBuf, Vec<OsString>), String> {
        match &self.confine {
            Confine::Launcher { spec } => {
                let me = std::env::current_exe().map_err(|e| format!("finding unixagent's own binary: {e}"))?;
                let mut argv: Vec<OsString> = vec![LAUNCHER.into(), spec.clone().into(), "--".into(), program.into()];
                argv.extend(args.iter().cloned());
                Ok((me, argv))
            }
            Confine::Seatbelt { rules, proxy_port } => Ok(seatbelt_argv(rules, *proxy_port, program, args)),
        }
    }
}

/// `sandbox-exec -p PROFILE -- env PROXY… -- program args…`, split into
/// the program to start and its arguments.
fn seatbelt_argv(
    rules: &Rules,
    proxy_port: Option<u16>,
    program: &Path,
    args: &[OsString],
) -> (PathBuf, Vec<OsString>) {
    let mut command: Vec<OsString> = vec![program.into()];
    command.extend(args.iter().cloned());
    let mut argv = ua_sandbox::seatbelt::command_with_proxy(rules, proxy_port, &command);
    let first = PathBuf::from(argv.remove(0));
    (first, argv)
}

#[cfg(target_os = "linux")]
/// Takes the listening sockets launchers make inside their network
/// namespaces and serves the proxy on each.
async fn serve_handed_over(
    handoff: tokio::net::UnixListener,
    allow: Arc<ua_sandbox::proxy::Allowlist>,
    decisions: Option<Decisions>,
) {
    while let Ok((stream, _)) = handoff.accept().await {
        let Ok(std) = stream.into_std() else { continue };
        let Ok(listener) = tokio::task::spawn_blocking(move || receive_listener(&std)).await else { continue };
        let Some(listener) = listener else { continue };
        let a = Arc::clone(&allow);
        let d = decisions.clone();
        tokio::spawn(async move { ua_sandbox::proxy::serve(listener, a, d).await });
    }
}

#[cfg(target_os = "linux")]
fn receive_listener(stream: &std::os::unix::net::UnixStream) -> Option<tokio::net::TcpListener> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    use std::os::fd::{AsRawFd, FromRawFd};
    stream.set_nonblocking(false).ok()?;
    let mut buf = [0u8; 2];
    let mut iov = [std::io::IoSliceMut::new(&mut buf)];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
    let msg = recvmsg::<()>(stream.as_raw_fd(), &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC).ok()?;
    let fd = msg.cmsgs().ok()?.find_map(|c| match c {
        ControlMessageOwned::ScmRights(fds) => fds.first().copied(),
        _ => None,
    })?;
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    listener.set_nonblocking(true).ok()?;
    tokio::net::TcpListener::from_std(listener).ok()
}

/// A fresh directory only this user can enter, for a spec and the proxy's
/// hand-over socket.
fn private_dir() -> Result<tempfile::TempDir, String> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix("unixagent-sandbox-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|e| format!("creating a private directory in {}: {e}", std::env::temp_dir().display()))
}

#[cfg(target_os = "linux")]
/// `unixagent __sandbox-exec SPEC -- PROGRAM ARGS…`: never returns on
/// success. `__sandbox-exec SPEC --check` returns 0 once the spec is
/// applied.
pub fn launcher(args: &[OsString]) -> i32 {
    let usage = || {
        eprintln!("unixagent: {LAUNCHER} SPEC -- PROGRAM [ARGS…] is how unixagent starts sandboxed processes.");
        2
    };
    let (Some(spec), Some(sep)) = (args.first(), args.get(1)) else { return usage() };
    let program = match (sep.to_str(), args.get(2)) {
        (Some(CHECK), None) => None,
        (Some("--"), Some(program)) => Some(program),
        _ => return usage(),
    };
    let (spec, handoff) = match take_spec(Path::new(spec)) {
        Ok(taken) => taken,
        Err(e) => {
            eprintln!("unixagent: {e}");
            return REFUSED;
        }
    };
    match ua_sandbox::linux::apply(&spec, handoff) {
        Ok(enforced) if program.is_some() => {
            for gap in &enforced.gaps {
                eprintln!("unixagent: sandbox (best-effort): not enforced: {gap}");
            }
        }
        Ok(_) => return 0,
        Err(e) => {
            eprintln!("unixagent: {e}");
            return REFUSED;
        }
    }
    let Some(program) = program else { return 0 };
    let err = ua_sandbox::linux::exec(program, &args[3..]);
    eprintln!("unixagent: could not run {} in the sandbox: {err}", Path::new(program).display());
    if err.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 }
}

/// Reads the spec at `path` and connects to its proxy, then removes the
/// spec, the hand-over socket and the private directory holding them:
/// from here on nothing of this run is left on disk, however it ends.
#[cfg(target_os = "linux")]
fn take_spec(
    path: &Path,
) -> Result<(ua_sandbox::linux::Spec, Option<std::os::unix::net::UnixStream>), ua_sandbox::linux::SandboxError> {
    use ua_sandbox::linux::SandboxError;
    let failed = |what: String| SandboxError::Setup(format!("{what}; nothing was run"));
    let text = std::fs::read_to_string(path).map_err(|e| failed(format!("reading {} failed: {e}", path.display())))?;
    let _ = std::fs::remove_file(path);
    let spec: ua_sandbox::linux::Spec =
        serde_json::from_str(&text).map_err(|e| failed(format!("its spec {} is malformed: {e}", path.display())))?;
    let handoff = spec.proxy.as_ref().map(ua_sandbox::linux::connect_handoff).transpose();
    if let Some(plan) = &spec.proxy {
        let _ = std::fs::remove_file(&plan.handoff);
    }
    if let Some(dir) = path.parent() {
        // Only ever empty by now; anything else in it stays.
        let _ = std::fs::remove_dir(dir);
    }
    Ok((spec, handoff?))
}

/// `unixagent sandbox -- COMMAND ARGS…`: COMMAND under the sandbox agent
/// commands get here; its exit status, or [`REFUSED`].
pub fn run(cfg: &crate::config::SandboxConfig, command: &[OsString]) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("unixagent: sandbox needs a command: unixagent sandbox -- COMMAND [ARGS…]");
        return 2;
    };
    run_sandboxed(cfg, Path::new(program), args).unwrap_or_else(|e| {
        eprintln!("unixagent: the sandbox cannot be applied: {e}");
        REFUSED
    })
}

fn run_sandboxed(cfg: &crate::config::SandboxConfig, program: &Path, args: &[OsString]) -> Result<i32, String> {
    sandboxed(cfg, program, args, false).map(|(code, _)| code)
}

/// Runs unixagent's own `--version` under the sandbox agent commands get
/// in this directory, as `unixagent doctor`'s trial of the rules on this
/// home: `Ok` with what the launcher said it could not enforce (best
/// effort), or `Err` with the line it failed with.
pub fn trial_run(cfg: &crate::config::SandboxConfig) -> Result<Vec<String>, String> {
    let me = std::env::current_exe().map_err(|e| format!("finding unixagent's own binary: {e}"))?;
    let (code, stderr) = sandboxed(cfg, &me, &["--version".into()], true)?;
    let said: Vec<String> = String::from_utf8_lossy(&stderr)
        .lines()
        .map(|l| l.trim_start_matches("unixagent: ").to_string())
        .filter(|l| !l.is_empty())
        .collect();
    if code == 0 {
        return Ok(said);
    }
    Err(said.last().cloned().unwrap_or_else(|| format!("a command in the sandbox exited with status {code}")))
}

/// `program args…` under the sandbox; its exit status and, when `quiet`
/// (its stdout dropped, its stderr kept), what it wrote to stderr.
fn sandboxed(
    cfg: &crate::config::SandboxConfig,
    program: &Path,
    args: &[OsString],
    quiet: bool,
) -> Result<(i32, Vec<u8>), String> {
    use std::process::Stdio;
    let cwd = std::env::current_dir().map_err(|e| format!("reading the current directory: {e}"))?;
    let rules = rules(cfg, &cwd, &crate::agent::gate::layers(None)?)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let prepared = Prepared::new(rules, None)?;
        let (me, argv) = prepared.wrap(program, args)?;
        let child = std::process::Command::new(me)
            .args(argv)
            .stdout(if quiet { Stdio::null() } else { Stdio::inherit() })
            .stderr(if quiet { Stdio::piped() } else { Stdio::inherit() })
            .spawn()
            .map_err(|e| format!("starting the launcher: {e}"))?;
        // The proxy runs on this thread's runtime while the child runs.
        let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await;
        drop(prepared);
        match output {
            Ok(Ok(o)) => Ok((exit_status(o.status), o.stderr)),
            Ok(Err(e)) => Err(format!("waiting for the command: {e}")),
            Err(e) => Err(format!("waiting for the command: {e}")),
        }
    })
}

fn exit_status(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().or_else(|| s.signal().map(|n| 128 + n)).unwrap_or(1)
}

/// `unixagent sandbox status [--json]`.
pub fn status(cfg: &crate::config::SandboxConfig, json: bool) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let compiled = match crate::agent::gate::layers(None).and_then(|layers| policy::compile(cfg, &cwd, &layers)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("unixagent: {e}");
            return 1;
        }
    };
    // As the launcher will apply them: against what is on disk now.
    let normalised = normalise(&compiled.rules, &Host);
    let rules = &normalised.rules;
    let (kernel, summary, enforcement) = platform(rules);
    let applies = start_check(&compiled.rules).finish();
    if json {
        let v = serde_json::json!({
            "kernel": kernel,
            "rules": rules,
            "enforcement": enforcement,
            "no_create": normalised.no_create,
            "normalised": normalised.notes,
            "applies": applies.is_ok(),
            "problem": applies.as_ref().err(),
            "gate_only": compiled.gate_only,
            "not_widened": compiled.not_widened,
        });
        println!("{v}");
        return 0;
    }
    println!("kernel: {summary}");
    println!("mode: {}", if rules.mode == Mode::Enforce { "enforce" } else { "best-effort" });
    match &applies {
        Ok(()) => println!("set-up: applies here (tried just now)"),
        Err(why) => println!("set-up: FAILS, so agent commands will not run: {why}"),
    }
    for (k, v) in &enforcement {
        println!("{k}: {v}");
    }
    let show = |title: &str, list: &[PathRule]| {
        println!("{title}:");
        for r in list {
            println!("  {}  ({})", r.path.display(), r.source);
        }
    };
    show("hidden (not read, not written)", &rules.read_deny);
    show("writable", &rules.write_roots);
    if let Some(b) = &rules.boards {
        // Only the board UNIXAGENT_BOARD names is opened.
        let named = crate::board::inherited().and_then(|p| rules.board_to_open(&p));
        let shown = named.unwrap_or_else(|| b.path.join("<session>/board"));
        println!("  {}  ({}; inside the hidden data directory)", shown.display(), b.source);
    }
    show("never written", &rules.write_protect);
    if !normalised.no_create.is_empty() {
        println!(
            "nothing new made directly in (a protected path there does not exist yet, or a symbolic link there leads to one):"
        );
        for d in &normalised.no_create {
            println!("  {}", d.display());
        }
    }
    if !normalised.notes.is_empty() {
        println!("as written in the rules, and how they apply here:");
        for n in &normalised.notes {
            println!("  {n}");
        }
    }
    println!("network:");
    if rules.allow_hosts.is_empty() {
        println!("  none (no host is allowed by policy.toml or the Cedar policies)");
    }
    for h in &rules.allow_hosts {
        println!("  {}  ({})", h.host, h.source);
    }
    if !compiled.gate_only.is_empty() {
        println!("gate only (the gate still applies these; the kernel does not back them):");
        for u in &compiled.gate_only {
            println!("  {}", policy::sentence(u, true));
        }
    }
    if !compiled.not_widened.is_empty() {
        println!("not widened (the gate may allow these; the kernel does not):");
        for u in &compiled.not_widened {
            println!("  {}", policy::sentence(u, false));
        }
    }
    0
}

/// What this kernel supports (as JSON and as one line) and which
/// mechanism enforces each part of `rules` here.
#[cfg(target_os = "linux")]
fn platform(rules: &Rules) -> (serde_json::Value, String, Vec<(&'static str, String)>) {
    let support = ua_sandbox::linux::probe();
    let line = format!(
        "Landlock ABI {}, seccomp {}, user namespaces {}",
        support.landlock_abi,
        yes(support.seccomp),
        yes(support.user_namespaces)
    );
    let json = serde_json::to_value(&support).unwrap_or_default();
    (json, line, enforcement(&support, rules))
}

#[cfg(target_os = "macos")]
fn platform(rules: &Rules) -> (serde_json::Value, String, Vec<(&'static str, String)>) {
    let present = Path::new(ua_sandbox::seatbelt::SANDBOX_EXEC).exists();
    let json = serde_json::json!({ "seatbelt": present });
    let line = format!(
        "macOS Seatbelt ({} {})",
        ua_sandbox::seatbelt::SANDBOX_EXEC,
        if present { "present" } else { "missing" }
    );
    let reach = if rules.network() { "HTTP(S) through the allowlisting proxy on loopback" } else { "no network" };
    let enforcement = vec![
        ("filesystem", "Seatbelt profile (`unixagent sandbox status` lists its rules)".to_string()),
        ("network", format!("Seatbelt: {reach}")),
        ("syscalls", "not filtered (no seccomp on macOS)".to_string()),
    ];
    (json, line, enforcement)
}

#[cfg(target_os = "linux")]
fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[cfg(target_os = "linux")]
/// Which mechanism enforces each part here.
fn enforcement(s: &ua_sandbox::linux::Support, r: &Rules) -> Vec<(&'static str, String)> {
    let fs = match (s.landlock_abi, s.user_namespaces) {
        (0, _) => "not enforced: no Landlock".to_string(),
        (abi, true) => format!("Landlock ABI {abi}; protected paths inside writable directories by a mount namespace"),
        (abi, false) => format!(
            "Landlock ABI {abi}; protected paths inside writable directories NOT protected (no user namespaces)"
        ),
    };
    let reach = if r.network() { "HTTP(S) through the allowlisting proxy" } else { "no network" };
    let net = if s.user_namespaces {
        format!("network namespace with loopback only; {reach}")
    } else if s.landlock_abi >= 4 && r.network() {
        "Landlock TCP rule: the proxy's port only, on any address (weaker: no user namespaces)".to_string()
    } else if s.landlock_abi >= 4 {
        "Landlock TCP rule: no connections (no user namespaces)".to_string()
    } else {
        "not enforced: neither user namespaces nor Landlock TCP rules".to_string()
    };
    let sc = if s.seccomp {
        "seccomp: no UDP, raw, packet, netlink or vsock sockets; no io_uring"
    } else {
        "seccomp: not available"
    };
    vec![("filesystem", fs), ("network", net), ("syscalls", sc.to_string()), ("privileges", "NoNewPrivs".to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_sandbox::rules::{HostPattern, HostRule};

    #[test]
    fn on_macos_the_shell_starts_under_sandbox_exec_with_the_proxy_variables() {
        let mut rules = Rules::default();
        rules.write_roots.push(PathRule::new("/Users/u/proj", "default: the working directory"));
        rules.allow_hosts.push(HostRule { host: HostPattern::parse("crates.io").unwrap(), source: "t".into() });
        let (program, args) = seatbelt_argv(&rules, Some(4000), Path::new("/bin/zsh"), &["-l".into()]);
        assert_eq!(program, Path::new("/usr/bin/sandbox-exec"));
        assert_eq!(args[0], "-p");
        let profile = args[1].to_string_lossy();
        assert!(profile.contains("/Users/u/proj") && profile.contains("4000"), "{profile}");
        let tail: Vec<String> = args[2..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(tail[..2], ["--", "/usr/bin/env"]);
        assert!(tail.contains(&"HTTPS_PROXY=http://127.0.0.1:4000".to_string()), "{tail:?}");
        assert_eq!(tail[tail.len() - 3..], ["--", "/bin/zsh", "-l"]);
    }
}
