//! Admission: before a child agent starts anything, is it within the
//! depth and fan-out limits?
//!
//! **Depth.** A session's shell exports `UA_TRACE_DEPTH` (its own depth;
//! the root's is 0) and a child is one deeper. The environment is only
//! what the caller passed, so the depth is also counted from the process
//! tree: every unixagent between this process and the top of its
//! ancestry is a level. The deeper of the two counts.
//!
//! **Fan-out.** `agent.max_children` bounds how many agents under one root
//! run at once, whatever their depth. Each holds one of N slot files for
//! its whole life: an exclusive `flock` on `slot-K` in a directory named
//! after the root. Taking a slot is one non-blocking `flock` per file, so
//! two children starting together can never both take the last one; the
//! lock goes with the process however it ends (`kill -9` included), so a
//! crashed child frees its slot at once. The descriptor is close-on-exec:
//! the child's own shell and what it starts do not hold the slot.
//!
//! The slot directory lives in the temporary directory, which every
//! sandbox unixagent makes leaves writable (a child started inside a
//! sandboxed shell must take a slot there too), under a directory of the
//! user's own (mode 0700, checked to be theirs). These limits bound
//! runaway recursion; they are not a security boundary against a command
//! that may write the temporary directory (the gate and the sandbox are).

use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Exit status of a child refused for depth (sysexits' EX_NOPERM: it
/// will not be allowed however often it is tried).
pub const DEPTH_REFUSED: i32 = 77;
/// Exit status of a child refused for fan-out (EX_TEMPFAIL: it may be
/// admitted once another child has ended).
pub const FAN_OUT_REFUSED: i32 = 75;

/// `agent.max_depth` and `agent.max_children`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_depth: u32,
    pub max_children: u32,
}

/// Why a child does not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It would be `depth` deep.
    Depth { depth: u32, max: u32 },
    /// `max` agents of this root already run.
    FanOut { max: u32 },
    /// The slot directory could not be used.
    Slots(String),
}

impl Refusal {
    /// The one line the parent's model reads.
    pub fn line(&self) -> String {
        match self {
            Refusal::Depth { depth, max } => format!(
                "unixagent: not started: this agent would be {depth} deep, and agent.max_depth in config.toml allows {max}; do this step in the current agent instead"
            ),
            Refusal::FanOut { max } => format!(
                "unixagent: not started: {max} agents of this session already run at once, the most agent.max_children in config.toml allows; wait for one to end (`wait`) and start it again"
            ),
            Refusal::Slots(why) => {
                format!(
                    "unixagent: not started: the count of running agents cannot be kept ({why}); run it from a session whose temporary directory is writable"
                )
            }
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Refusal::Depth { .. } => DEPTH_REFUSED,
            Refusal::FanOut { .. } | Refusal::Slots(_) => FAN_OUT_REFUSED,
        }
    }

    /// The `error` event's `kind` in `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::Depth { .. } => "depth",
            Refusal::FanOut { .. } | Refusal::Slots(_) => "fan_out",
        }
    }
}

/// A process in the ancestry: its pid, name and start time (clock ticks
/// since boot, which with the pid names it uniquely).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    pub pid: i32,
    pub comm: String,
    pub start: u64,
}

/// `/proc/PID/stat`'s pid, name, parent and start time. The name is in
/// parentheses and may hold anything, so fields are counted from the last
/// `)`.
pub fn parse_stat(text: &str) -> Option<(Ancestor, i32)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // After the name: state (3), ppid (4), … starttime (22).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((Ancestor { pid, comm, start }, ppid))
}

/// This process's ancestors, nearest first, up to (not including) init.
/// `/proc/PID/stat` is readable across sandboxes, unlike `exe`.
pub fn ancestors() -> Vec<Ancestor> {
    let read = |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    let mut out = Vec::new();
    let mut next = read(std::process::id().cast_signed()).and_then(|t| parse_stat(&t)).map(|(_, ppid)| ppid);
    while let Some(pid) = next.filter(|&p| p > 1) {
        let Some((a, ppid)) = read(pid).and_then(|t| parse_stat(&t)) else { break };
        out.push(a);
        next = Some(ppid);
        if out.len() > 4096 {
            break;
        }
    }
    out
}

/// This process's own name (`/proc/self/comm`), which its ancestors that
/// are unixagent share.
pub fn own_comm() -> String {
    std::fs::read_to_string("/proc/self/comm").map(|s| s.trim_end().to_string()).unwrap_or_else(|_| "unixagent".into())
}

/// Where this process stands: how deep, and the root it counts against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lineage {
    pub depth: u32,
    /// Names the root's slot directory.
    pub root: String,
    /// Started from inside a session (or by another unixagent).
    pub child: bool,
}

impl Lineage {
    /// From the depth the environment gives (`env_depth`: already one
    /// more than the parent's), the session it names, and the ancestry.
    pub fn find(env_depth: u32, session: Option<&str>, ancestors: &[Ancestor], comm: &str) -> Self {
        let ours: Vec<&Ancestor> = ancestors.iter().filter(|a| a.comm == comm).collect();
        let counted = u32::try_from(ours.len()).unwrap_or(u32::MAX);
        let root = match ours.last() {
            Some(top) => format!("{}-{}", top.pid, top.start),
            None => session.map_or_else(|| format!("{}", std::process::id()), |s| format!("s{s}")),
        };
        let child = session.is_some() || counted > 0;
        Self { depth: env_depth.max(counted), root, child }
    }
}

/// A held slot: the lock lasts as long as this value (and the process).
#[derive(Debug)]
pub struct Slot {
    _file: File,
}

/// Checks the depth and takes a slot. Roots (not children) are always
/// admitted and take no slot; a process deeper than 0 that is not a
/// child (the far side of ssh, say) is held to the depth limit only.
pub fn admit(lineage: &Lineage, limits: Limits, base: &Path) -> Result<Option<Slot>, Refusal> {
    if lineage.depth > limits.max_depth {
        return Err(Refusal::Depth { depth: lineage.depth, max: limits.max_depth });
    }
    if !lineage.child {
        return Ok(None);
    }
    let dir = slot_dir(base, &lineage.root).map_err(Refusal::Slots)?;
    for index in 0..limits.max_children {
        let path = dir.join(format!("slot-{index}"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| Refusal::Slots(format!("{}: {e}", path.display())))?;
        match file.try_lock() {
            Ok(()) => return Ok(Some(Slot { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(Refusal::Slots(format!("{}: {e}", path.display()))),
        }
    }
    Err(Refusal::FanOut { max: limits.max_children })
}

/// `BASE/unixagent-UID/children-ROOT/`, made if missing. The per-user
/// directory must be a real directory of this user's, mode 0700: another
/// account could otherwise make it first and hold every slot.
fn slot_dir(base: &Path, root: &str) -> Result<PathBuf, String> {
    let uid = nix::unistd::getuid().as_raw();
    let user = base.join(format!("unixagent-{uid}"));
    match DirBuilder::new().mode(0o700).create(&user) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", user.display())),
    }
    let meta = std::fs::symlink_metadata(&user).map_err(|e| format!("{}: {e}", user.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(format!("{} is not a private directory of this user's", user.display()));
    }
    let dir = user.join(format!("children-{root}"));
    match DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => remove_stale(&user, root),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    Ok(dir)
}

/// Slot directories of roots that have ended. A new root's first child
/// clears them: nobody can count against a root that is gone, since the
/// name comes from the live process.
fn remove_stale(user: &Path, keep: &str) {
    let Ok(entries) = std::fs::read_dir(user) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(root) = name.strip_prefix("children-") else { continue };
        if root == keep {
            continue;
        }
        let alive = root.split_once('-').and_then(|(pid, start)| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (a, _) = parse_stat(&text)?;
            Some(a.start.to_string() == start)
        });
        // Only roots named by a process: a session-named one has no pid.
        if alive == Some(false)
            || (alive.is_none() && root.split_once('-').is_some_and(|(p, _)| p.parse::<i32>().is_ok()))
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
