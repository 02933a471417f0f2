//! Enforcing [`Rules`] on Linux: Landlock, seccomp and namespaces.
//!
//! [`apply`] runs in a launcher process that is about to exec the
//! sandboxed program (unixagent re-executes itself for that: a ruleset
//! only binds the thread that applies it and what it starts). In order:
//!
//! 0. **Normalising** the rules against what is on disk now
//!    ([`crate::normalise`]): links followed, each path once, nothing
//!    inside what already covers it, so that no combination of what a
//!    home holds makes a step below fail.
//! 1. **Namespaces**, where unprivileged user namespaces exist: a user
//!    namespace (the user's own uid mapped to itself), a mount namespace
//!    and a network namespace.
//! 2. **Carve-outs** (`linux/mounts.rs`) in the mount namespace. Landlock only grants: it
//!    cannot take `.git/hooks` out of a writable working tree. Each
//!    protected path inside a write root is bound onto itself read-only,
//!    and each directory between the root and it is bound onto itself
//!    (still writable), which makes it a mount point: the kernel refuses to
//!    rename or remove a mount point (`EBUSY`), so `mv .git .g` followed by
//!    a new `.git/hooks` does not get around the protection. Hidden paths
//!    inside a write root are bound read-only the same way, so nothing can
//!    be created in or removed from them. A bind that fails names its path
//!    and rule and ends set-up (enforce), or is reported (best-effort).
//! 3. **Network**: in the network namespace only loopback exists. When
//!    hosts are allowed, the launcher listens on loopback there and hands
//!    the listening socket to unixagent over a Unix socket; unixagent's
//!    proxy serves it, so the only way out is the proxy. Without a network
//!    namespace, a Landlock rule allows TCP connections to the proxy's port
//!    only (any address on that port: weaker, and reported as such).
//! 4. **Landlock** for the filesystem. Reads are granted everywhere except
//!    the hidden paths, by enumeration: where a hidden path lies below a
//!    directory, that directory's entries are granted one by one instead
//!    of the directory as a whole. Writes are granted in the write roots
//!    (enumerated the same way around hidden paths). Signals and abstract
//!    Unix sockets are scoped to the sandbox; processes outside cannot be
//!    traced (nor their `/proc/PID/root` followed).
//! 5. **seccomp**: sockets other than Unix and TCP (UDP, raw, packet,
//!    netlink, vsock) and `io_uring` are refused.
//! 6. `NoNewPrivs` (set with the Landlock ruleset), and for root the
//!    capability bounding set emptied, so an exec'd program gains nothing.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use serde::{Deserialize, Serialize};

use crate::normalise::{Host, Normalised, normalise};
use crate::rules::{Mode, Rules};

mod mounts;

/// The Landlock ABI the rulesets are written for.
const TARGET_ABI: ABI = ABI::V7;

/// What the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Support {
    /// The Landlock ABI version, 0 when Landlock is off or missing.
    pub landlock_abi: i32,
    pub seccomp: bool,
    /// Whether an unprivileged process may create user namespaces.
    pub user_namespaces: bool,
}

/// Asks the kernel what it supports. The user namespace check forks a
/// child that tries to create one, so the answer is what this process
/// would get, whatever the sysctl or LSM that decides it.
pub fn probe() -> Support {
    Support { landlock_abi: landlock_abi(), seccomp: seccomp_available(), user_namespaces: user_namespaces_work() }
}

/// The kernel's Landlock ABI version (0: none).
pub fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    // SAFETY: with a null attribute and size 0 and the VERSION flag, the
    // syscall only returns a number; nothing is read or written.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

fn seccomp_available() -> bool {
    // PR_GET_SECCOMP fails with EINVAL on a kernel built without seccomp.
    // SAFETY: a query without pointers.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

fn user_namespaces_work() -> bool {
    // SAFETY: the child only calls async-signal-safe functions (unshare,
    // _exit) before exiting.
    match unsafe { libc::fork() } {
        0 => {
            // SAFETY: as above.
            let ok = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) } == 0;
            // SAFETY: as above.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid if pid > 0 => {
            let mut status = 0;
            // SAFETY: waiting for the child just forked.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
        _ => false,
    }
}

/// Set by the launcher in the sandboxed program's environment.
pub const ENCLOSED_ENV: &str = "UNIXAGENT_SANDBOXED";

/// Whether this process runs inside unixagent's sandbox already (a child
/// agent started in a sandboxed shell). The launcher's variable is only
/// believed when the kernel backs it: `NoNewPrivs` set and a seccomp
/// filter in force, which nothing outside a sandbox of this kind sets.
pub fn enclosed() -> bool {
    if std::env::var_os(ENCLOSED_ENV).is_none() {
        return false;
    }
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
    field("NoNewPrivs:") == Some("1") && field("Seccomp:") == Some("2")
}

/// What the launcher is asked to enforce.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    pub rules: Rules,
    /// How the sandbox reaches the proxy; `None`: no network at all.
    pub proxy: Option<ProxyPlan>,
    /// The launcher runs inside an enclosing sandbox of unixagent's (see
    /// [`enclosed`]): its namespaces, carve-outs and proxy hold already,
    /// and Landlock forbids a sandboxed process to mount, so only the
    /// narrowing layers are added: a Landlock ruleset (which the kernel
    /// stacks on the enclosing one: only what both allow is allowed) and
    /// seccomp.
    #[serde(default)]
    pub nested: bool,
}

/// Where unixagent's proxy waits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProxyPlan {
    /// Its port on the host's loopback, used when there is no network
    /// namespace.
    pub host_port: u16,
    /// A Unix socket on which unixagent takes the listening socket made
    /// inside the network namespace. The launcher connects to it before
    /// anything else (see [`connect_handoff`]).
    pub handoff: PathBuf,
}

/// What ended up enforced, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Enforced {
    /// The filesystem rules and how (Landlock ABI, carve-outs).
    pub filesystem: String,
    /// How the network is confined.
    pub network: String,
    /// The proxy port the sandboxed programs use, when there is network.
    pub proxy_port: Option<u16>,
    /// What the rules ask for and is not enforced here (best-effort only).
    pub gaps: Vec<String>,
}

/// Why the sandbox could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel lacks something the rules need, and the mode is enforce.
    #[error(
        "the sandbox cannot be enforced here: {0}; agent commands will not run (set sandbox.mode = \"best-effort\" in config.toml to run them with what can be enforced)"
    )]
    Unsupported(String),
    /// A step of setting it up failed; the text names the step, what it
    /// was for and what to do.
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
}

fn setup(what: &str) -> impl Fn(std::io::Error) -> SandboxError + '_ {
    move |e| SandboxError::Setup(format!("{what}: {e}"))
}

/// Connects to the proxy's hand-over socket. The launcher does this first,
/// before namespaces: the socket's directory can then be removed at once,
/// and the connected stream works from inside the new network namespace.
pub fn connect_handoff(plan: &ProxyPlan) -> Result<std::os::unix::net::UnixStream, SandboxError> {
    std::os::unix::net::UnixStream::connect(&plan.handoff).map_err(|e| {
        SandboxError::Setup(format!(
            "reaching unixagent's proxy at {} failed: {e}; the unixagent that started this command has probably exited",
            plan.handoff.display()
        ))
    })
}

/// Applies `spec` to this process, which must be single-threaded and
/// about to exec the sandboxed program; `handoff` is the stream
/// [`connect_handoff`] made when the spec has a proxy. Sets the proxy
/// variables in the environment when there is network.
pub fn apply(spec: &Spec, handoff: Option<std::os::unix::net::UnixStream>) -> Result<Enforced, SandboxError> {
    let mut report = Enforced::default();
    let abi = landlock_abi();
    let namespaces = !spec.nested && enter_namespaces().is_ok();
    let mut plan = normalise(&spec.rules, &Host);
    if namespaces && mounts::make_hook_dirs(&plan.rules) {
        plan = normalise(&spec.rules, &Host);
    }
    let rules = &plan.rules;
    let cwd = std::env::current_dir().map_err(setup("reading the working directory"))?;
    if let Some(h) = rules.read_deny.iter().find(|h| cwd.starts_with(&h.path)) {
        return Err(SandboxError::Setup(format!(
            "the working directory {} is hidden by the rule for {} ({}), so nothing could run there; start in another directory",
            cwd.display(),
            h.path.display(),
            h.source
        )));
    }
    let mut missing = if spec.nested { nested_shortfalls(abi) } else { shortfalls(abi, namespaces, rules) };
    // The task board is opened before anything hides the directory it is
    // in, so that it can be mounted back at its own path; and after the
    // mount namespace is entered, since a bind's source must be a mount of
    // the namespace it is made in.
    let board = mounts::open_board(rules)?;
    if namespaces {
        missing.extend(mounts::carve_out(&mounts::targets(rules), rules.mode, board.as_ref())?);
        // The working directory still points into the mounts as they were:
        // look it up again, through the carve-outs.
        std::env::set_current_dir(&cwd).map_err(setup("entering the working directory again"))?;
    }
    // The network.
    let mut connect_port = None;
    if spec.nested {
        report.network = "the enclosing sandbox's network namespace and proxy".into();
    } else if namespaces {
        loopback_up()?;
        if let Some(stream) = handoff.filter(|_| spec.proxy.is_some()) {
            let port = hand_over_listener(&stream)?;
            report.network = "network namespace: loopback only, the allowlisting proxy bridged in".into();
            report.proxy_port = Some(port);
        } else {
            report.network = "network namespace: loopback only, no network".into();
        }
    } else {
        if let Some(plan) = &spec.proxy {
            connect_port = Some(plan.host_port);
            report.proxy_port = Some(plan.host_port);
            report.network = format!(
                "Landlock TCP rule: connections to port {} only, on any address (no user namespaces for a network namespace)",
                plan.host_port
            );
        } else {
            report.network = "Landlock TCP rule: no connections (no user namespaces for a network namespace)".into();
        }
    }
    if !missing.is_empty() && rules.mode == Mode::Enforce {
        return Err(SandboxError::Unsupported(missing.join("; ")));
    }
    report.gaps = missing;
    landlock(
        &plan,
        abi,
        !namespaces && !spec.nested,
        connect_port,
        board.as_ref().map(|b| b.path.as_path()),
        &mut report,
    )?;
    seccomp()?;
    drop_root_capabilities()?;
    // SAFETY: the launcher is single-threaded.
    unsafe { std::env::set_var(ENCLOSED_ENV, "1") };
    if let Some(port) = report.proxy_port {
        let url = crate::proxy::url(port);
        for var in crate::proxy::PROXY_VARS {
            // SAFETY: the launcher is single-threaded.
            unsafe { std::env::set_var(var, &url) };
        }
        for var in crate::proxy::NO_PROXY_VARS {
            // SAFETY: as above.
            unsafe { std::env::remove_var(var) };
        }
    }
    Ok(report)
}

/// What a nested sandbox cannot enforce: it needs Landlock only, the rest
/// is the enclosing sandbox's.
pub fn nested_shortfalls(landlock_abi: i32) -> Vec<String> {
    if landlock_abi < 1 {
        vec!["Landlock is not available in this kernel, so nothing confines the filesystem".to_string()]
    } else {
        Vec::new()
    }
}

/// What normalised `rules` need and a kernel with this Landlock ABI, with
/// or without user namespaces, cannot enforce: one phrase each.
pub fn shortfalls(landlock_abi: i32, namespaces: bool, rules: &Rules) -> Vec<String> {
    let mut missing = Vec::new();
    if landlock_abi < 1 {
        missing.push("Landlock is not available in this kernel, so nothing confines the filesystem".to_string());
    }
    if !namespaces {
        let targets = mounts::targets(rules);
        let inside = rules.write_roots.iter().map(|r| r.path.as_path());
        let inside: Vec<&Path> =
            targets.iter().map(|t| t.path.as_path()).filter(|p| inside.clone().any(|r| p.starts_with(r))).collect();
        if !inside.is_empty() {
            // Outside the write roots Landlock alone keeps hidden contents
            // unread; inside them only the mounts protect anything.
            let names: Vec<String> = inside.iter().take(3).map(|p| p.display().to_string()).collect();
            missing.push(format!(
                "user namespaces are not available, so protected paths inside a writable directory ({}) stay writable",
                names.join(", ")
            ));
        }
        if landlock_abi < 4 {
            missing.push(
                "neither user namespaces nor Landlock TCP rules (ABI 4) are available, so the network is open".into(),
            );
        }
    }
    missing
}

/// Enters new user, mount and network namespaces, mapping our uid and gid
/// to themselves.
fn enter_namespaces() -> Result<(), SandboxError> {
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: unshare changes only this (single-threaded) process.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) } != 0 {
        return Err(setup("creating namespaces")(std::io::Error::last_os_error()));
    }
    let write = |file: &str, text: String| std::fs::write(file, text).map_err(setup(file));
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // Nothing mounted here may propagate back to the host.
    mounts::mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE)
        .map_err(setup("making mounts private"))?;
    Ok(())
}

/// Brings up `lo` in the new network namespace.
fn loopback_up() -> Result<(), SandboxError> {
    let err = setup("bringing up loopback in the network namespace");
    // Any socket will do for the ioctl.
    let fd = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Unix,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| err(e.into()))?;
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    // nix's wrappers, because the request's C type differs between glibc
    // (unsigned long) and musl (int).
    nix::ioctl_read_bad!(get_flags, libc::SIOCGIFFLAGS, libc::ifreq);
    nix::ioctl_write_ptr_bad!(set_flags, libc::SIOCSIFFLAGS, libc::ifreq);
    // SAFETY: SIOCGIFFLAGS and SIOCSIFFLAGS read and write the ifreq we own.
    unsafe {
        get_flags(fd.as_raw_fd(), &mut req).map_err(|e| err(e.into()))?;
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        set_flags(fd.as_raw_fd(), &req).map_err(|e| err(e.into()))?;
    }
    Ok(())
}

/// Listens on loopback inside the network namespace and sends the socket
/// to unixagent over `stream`. Returns the port.
fn hand_over_listener(stream: &std::os::unix::net::UnixStream) -> Result<u16, SandboxError> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(setup("listening for the proxy"))?;
    let port = listener.local_addr().map_err(setup("listening for the proxy"))?.port();
    let fds = [listener.as_raw_fd()];
    let payload = port.to_be_bytes();
    let iov = [std::io::IoSlice::new(&payload)];
    sendmsg::<()>(stream.as_raw_fd(), &iov, &[ControlMessage::ScmRights(&fds)], MsgFlags::empty(), None)
        .map_err(|e| SandboxError::Setup(format!("handing the proxy socket to unixagent: {e}")))?;
    Ok(port)
}

/// Applies the Landlock ruleset.
fn landlock(
    plan: &Normalised,
    abi: i32,
    restrict_tcp: bool,
    connect_port: Option<u16>,
    board: Option<&Path>,
    report: &mut Enforced,
) -> Result<(), SandboxError> {
    let ll = |e: landlock::RulesetError| SandboxError::Setup(format!("applying the Landlock rules failed: {e}"));
    let all = AccessFs::from_all(TARGET_ABI);
    let read = AccessFs::from_read(TARGET_ABI);
    // Best effort at first: what this kernel cannot enforce is judged
    // below from the status, by the mode.
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(all).map_err(ll)?;
    if restrict_tcp {
        ruleset = ruleset.handle_access(AccessNet::ConnectTcp | AccessNet::BindTcp).map_err(ll)?;
    }
    ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal).map_err(ll)?;
    let mut created = ruleset.create().map_err(ll)?;
    let rules = &plan.rules;
    let hidden: Vec<&Path> = rules.read_deny.iter().map(|r| r.path.as_path()).collect();
    let mut grants: Vec<Grant> = Vec::new();
    // Listing directories is allowed everywhere; a hidden directory's
    // names show, its contents do not.
    grants.push(Grant::new("/".into(), AccessFs::ReadDir.into(), Some(true)));
    enumerate(Path::new("/"), read, &hidden, &mut grants);
    // Write roots whole: a hidden path inside one is hidden by a mount
    // (see `carve_out_targets`), since enumerating a root would leave the
    // files created in it later unwritable.
    // A protected path that does not exist yet has nothing to bind: in the
    // directories it would be made in, nothing new may be made (see
    // `Normalised::no_create`); what is in them stays writable.
    for root in &rules.write_roots {
        writable(&root.path, all, plan, &mut grants);
    }
    // The task board, inside the hidden data directory.
    if let Some(b) = board {
        grants.push(Grant::new(b.to_path_buf(), all, None));
    }
    // The terminal and the devices every shell writes to.
    for dev in
        ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/random", "/dev/urandom"]
    {
        grants.push(Grant::new(dev.into(), all, None));
    }
    for Grant { path, access, dir } in &grants {
        let Ok(fd) = PathFd::new(path) else { continue };
        let dir = dir.unwrap_or_else(|| path.is_dir());
        let access = if dir { *access } else { *access & AccessFs::from_file(TARGET_ABI) };
        // Rights that only concern directories, on something that is not
        // one, leave nothing to grant (and Landlock refuses an empty rule).
        if access.is_empty() {
            continue;
        }
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(ll)?;
    }
    if let Some(port) = connect_port {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp)).map_err(ll)?;
    }
    let status = created.restrict_self().map_err(ll)?;
    report.filesystem = match status.ruleset {
        RulesetStatus::FullyEnforced => format!("Landlock ABI {abi}"),
        RulesetStatus::PartiallyEnforced => {
            format!("Landlock ABI {abi} (partly: an older kernel than the rules are written for)")
        }
        RulesetStatus::NotEnforced => {
            if rules.mode == Mode::Enforce {
                return Err(SandboxError::Unsupported("Landlock is not enforced by this kernel".into()));
            }
            report.gaps.push("Landlock is not enforced: reads and writes are not confined".into());
            "none (Landlock not enforced)".into()
        }
    };
    if !status.no_new_privs {
        return Err(SandboxError::Setup("NoNewPrivs could not be set".into()));
    }
    Ok(())
}

/// Grants `all` on `dir`; or, when `dir` is one of the `no_create`
/// directories, everything but making entries (and, in a `no_remove` one,
/// removing them) on `dir` itself and `all` on each of its entries
/// (recursively where another lies below).
fn writable(dir: &Path, all: BitFlags<AccessFs>, plan: &Normalised, out: &mut Vec<Grant>) {
    if !plan.no_create.iter().any(|n| n == dir) {
        out.push(Grant::new(dir.to_path_buf(), all, None));
        return;
    }
    let make = AccessFs::MakeChar
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeBlock
        | AccessFs::MakeSym;
    let remove = if plan.no_remove.iter().any(|n| n == dir) {
        AccessFs::RemoveFile | AccessFs::RemoveDir
    } else {
        BitFlags::empty()
    };
    out.push(Grant::new(dir.to_path_buf(), all & !make & !remove, Some(true)));
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        // A rule is made through an open descriptor, which follows a
        // symbolic link: granting one would grant wherever it points. The
        // link itself needs no rule (removing it is a right on `dir`).
        if kind.is_symlink() {
            continue;
        }
        if kind.is_dir() && plan.no_create.iter().any(|n| n.starts_with(&path)) {
            writable(&path, all, plan, out);
        } else {
            out.push(Grant::new(path, all, Some(kind.is_dir())));
        }
    }
}

/// One Landlock rule to add: the rights on a path, and whether it is a
/// directory when a listing said so already (asked of the filesystem
/// otherwise).
struct Grant {
    path: PathBuf,
    access: BitFlags<AccessFs>,
    dir: Option<bool>,
}

impl Grant {
    fn new(path: PathBuf, access: BitFlags<AccessFs>, dir: Option<bool>) -> Self {
        Self { path, access, dir }
    }
}

/// Grants `access` on `dir`, or where hidden paths lie below it, on its
/// entries one by one (recursively), leaving the hidden paths out.
///
/// Each entry is looked up by name among the hidden paths below `dir`, so
/// a large directory on the way to one (a `/tmp` holding a home, say)
/// costs one rule per entry and no comparison with every hidden path.
fn enumerate(dir: &Path, access: BitFlags<AccessFs>, hidden: &[&Path], out: &mut Vec<Grant>) {
    if hidden.iter().any(|h| dir.starts_with(h)) {
        return;
    }
    // The hidden paths below, by the name of the entry of `dir` they lie in.
    let mut below: HashMap<&OsStr, Vec<&Path>> = HashMap::new();
    for &h in hidden {
        if let Ok(rest) = h.strip_prefix(dir)
            && let Some(Component::Normal(first)) = rest.components().next()
        {
            below.entry(first).or_default().push(h);
        }
    }
    if below.is_empty() {
        out.push(Grant::new(dir.to_path_buf(), access, None));
        return;
    }
    // Some hidden path lies below: the directory itself gets the rights
    // that concern its entries (list, create, remove), which Landlock
    // applies below it too; the files beneath are granted one by one.
    let dir_rights = access & !(AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Execute | AccessFs::Truncate);
    if !dir_rights.is_empty() {
        out.push(Grant::new(dir.to_path_buf(), dir_rights, None));
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let kind = entry.file_type().ok();
        // A rule is made through an open descriptor, which follows a
        // symbolic link: granting one would grant where it points, hidden
        // paths included. Access through a link is checked where it leads,
        // and that place is enumerated under its own name.
        if kind.is_some_and(|t| t.is_symlink()) {
            continue;
        }
        match below.get(entry.file_name().as_os_str()) {
            None => out.push(Grant::new(entry.path(), access, kind.map(|t| t.is_dir()))),
            Some(hidden) => enumerate(&entry.path(), access, hidden, out),
        }
    }
}

/// Refuses sockets other than Unix and TCP, and `io_uring`.
fn seccomp() -> Result<(), SandboxError> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter,
        SeccompRule,
    };
    let err = |e: seccompiler::BackendError| SandboxError::Setup(format!("seccomp: {e}"));
    let cond = |arg, op, value: i32| Cond::new(arg, Len::Dword, op, u64::try_from(value).unwrap_or(0)).map_err(err);
    let mut socket_rules = vec![
        // Any family but Unix, IPv4 and IPv6.
        SeccompRule::new(vec![
            cond(0, Op::Ne, libc::AF_UNIX)?,
            cond(0, Op::Ne, libc::AF_INET)?,
            cond(0, Op::Ne, libc::AF_INET6)?,
        ])
        .map_err(err)?,
    ];
    // IPv4 and IPv6 sockets other than stream ones (the type's low bits;
    // the high bits are SOCK_NONBLOCK and SOCK_CLOEXEC).
    for family in [libc::AF_INET, libc::AF_INET6] {
        // 6 is SOCK_DCCP, 10 the obsolete SOCK_PACKET.
        for kind in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_RDM, libc::SOCK_SEQPACKET, 6, 10] {
            socket_rules.push(
                SeccompRule::new(vec![cond(0, Op::Eq, family)?, cond(1, Op::MaskedEq(0xf), kind)?]).map_err(err)?,
            );
        }
    }
    let rules = [
        (libc::SYS_socket, socket_rules),
        (libc::SYS_io_uring_setup, vec![]),
        (libc::SYS_io_uring_enter, vec![]),
        (libc::SYS_io_uring_register, vec![]),
    ];
    let arch = std::env::consts::ARCH.try_into().map_err(|_| {
        SandboxError::Setup(format!("seccomp does not know this architecture ({})", std::env::consts::ARCH))
    })?;
    let filter = SeccompFilter::new(
        rules.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1)),
        arch,
    )
    .map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?;
    let program: seccompiler::BpfProgram =
        filter.try_into().map_err(|e: seccompiler::BackendError| SandboxError::Setup(format!("seccomp: {e}")))?;
    seccompiler::apply_filter(&program).map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))
}

/// For root (inside the namespace or not), empties the capability
/// bounding set, so the program exec'd next starts without capabilities.
fn drop_root_capabilities() -> Result<(), SandboxError> {
    // SAFETY: a getter.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(());
    }
    for cap in 0..=63 {
        // Gone already (an enclosing sandbox emptied the set, and dropping
        // needs a capability this process no longer has); past the last
        // capability the kernel knows, reading fails.
        // SAFETY: PR_CAPBSET_READ takes a capability number and reads.
        match unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) } {
            0 => continue,
            r if r < 0 => break,
            _ => {}
        }
        // SAFETY: PR_CAPBSET_DROP takes a capability number; unknown ones
        // fail with EINVAL, which ends the list.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(setup("dropping capabilities")(e));
        }
    }
    Ok(())
}

/// Runs `program` with `args` in place of this process. Returns only on
/// failure, with the error to report.
pub fn exec(program: &std::ffi::OsStr, args: &[std::ffi::OsString]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let _ = std::io::stderr().flush();
    std::process::Command::new(program).args(args).exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumeration_leaves_hidden_paths_out() {
        let dir = std::env::temp_dir().join(format!("ua-sandbox-enum-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        std::fs::create_dir_all(dir.join("code/x")).unwrap();
        std::fs::write(dir.join(".bashrc"), "").unwrap();
        let hidden = [dir.join(".ssh")];
        let hidden: Vec<&Path> = hidden.iter().map(PathBuf::as_path).collect();
        let mut out = Vec::new();
        enumerate(&dir, AccessFs::from_read(TARGET_ABI), &hidden, &mut out);
        let paths: Vec<&Path> = out.iter().map(|g| g.path.as_path()).collect();
        assert!(paths.contains(&dir.join("code").as_path()) && paths.contains(&dir.join(".bashrc").as_path()));
        assert!(!paths.iter().any(|p| p.starts_with(dir.join(".ssh"))), "{paths:?}");
        // The directory itself only gets listing.
        let own = out.iter().find(|g| g.path == dir).unwrap();
        assert_eq!(own.access, BitFlags::from(AccessFs::ReadDir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A home inside a large directory (a `/tmp` of a thousand entries):
    /// every entry on the way is granted whole, by name, with its kind
    /// known from the listing; only the hidden paths and the directories
    /// above them are left out or listed alone, however alike the names.
    #[test]
    fn enumeration_by_name_leaves_out_only_what_is_hidden() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for i in 0..1000 {
            std::fs::create_dir(dir.join(format!("tmp.{i:04}"))).unwrap();
        }
        let home = dir.join("home");
        for d in [".ssh", ".ssh-old", ".config/gh", ".config/fish", "code"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::write(home.join(".sshrc"), "").unwrap();
        std::fs::write(home.join(".config/gh/hosts.yml"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let hidden = [home.join(".ssh"), home.join(".config/gh"), dir.join("elsewhere/.aws")];
        let hidden: Vec<&Path> = hidden.iter().map(PathBuf::as_path).collect();
        let mut out = Vec::new();
        enumerate(dir, AccessFs::from_read(TARGET_ABI), &hidden, &mut out);
        let whole: Vec<&Path> =
            out.iter().filter(|g| g.access == AccessFs::from_read(TARGET_ABI)).map(|g| g.path.as_path()).collect();
        let listed: Vec<&Path> =
            out.iter().filter(|g| g.access == BitFlags::from(AccessFs::ReadDir)).map(|g| g.path.as_path()).collect();
        assert_eq!(listed, vec![dir, home.as_path(), home.join(".config").as_path()]);
        let mut expected: Vec<PathBuf> = (0..1000).map(|i| dir.join(format!("tmp.{i:04}"))).collect();
        for p in [".ssh-old", ".sshrc", ".config/fish", "code"] {
            expected.push(home.join(p));
        }
        let mut got: Vec<PathBuf> = whole.iter().map(|p| p.to_path_buf()).collect();
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "granted whole");
        // Kinds come from the listing, so no rule asks the filesystem again.
        let kind = |p: &Path| out.iter().find(|g| g.path == p).unwrap().dir;
        assert_eq!(kind(&home.join(".sshrc")), Some(false));
        assert_eq!(kind(&home.join("code")), Some(true));
        assert_eq!(kind(&dir.join("tmp.0999")), Some(true));
    }

    #[test]
    fn the_kernel_here_has_what_the_tests_rely_on() {
        let s = probe();
        assert!(s.landlock_abi >= 4 && s.seccomp, "{s:?}");
    }
}
