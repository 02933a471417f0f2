//! The carve-outs: binds in the launcher's mount namespace that keep
//! protected paths inside write roots intact and hide hidden paths, since
//! Landlock only grants and cannot take a subtree out of a granted one.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::SandboxError;
use crate::rules::{Mode, Rules};

/// How a carve-out is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Bind {
    /// Onto itself, writable: pinned, so it cannot be renamed or removed.
    Pin,
    /// Onto itself, read-only.
    ReadOnly,
    /// Hidden: an empty, unreadable directory or device over it.
    Hide,
}

/// One bind to make, and the rule it serves (for the error that names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub path: PathBuf,
    pub bind: Bind,
    pub source: String,
}

/// A repository without `.git/hooks` gets it, empty (as `git init` makes
/// it), so that it can be bound read-only: `.git` itself must stay open to
/// new entries (lock files), so a missing hook directory could otherwise
/// be made inside the sandbox and run outside it. That holds for the hook
/// directory of any git directory (`.git`, `.git/modules/NAME`, a linked
/// worktree's common directory). Says whether it made any.
pub(super) fn make_hook_dirs(rules: &Rules) -> bool {
    use std::os::unix::fs::DirBuilderExt;
    let mut made = false;
    for p in &rules.write_protect {
        let writable = rules.write_roots.iter().any(|w| p.path.starts_with(&w.path));
        let is_hooks = writable
            && p.path.file_name().is_some_and(|n| n == "hooks")
            && p.path.parent().is_some_and(|g| g.join("HEAD").is_file());
        if is_hooks && p.path.symlink_metadata().is_err() {
            made |= std::fs::DirBuilder::new().mode(0o755).create(&p.path).is_ok();
        }
    }
    made
}

/// The binds for normalised `rules`, in the order they must be made (a
/// directory before what lies below it, since a later bind above would not
/// carry the earlier one).
pub(super) fn targets(rules: &Rules) -> Vec<Target> {
    let exists = |p: &Path| p.symlink_metadata().is_ok();
    // Inside a read-only bind or a hidden mount nothing can be renamed or
    // removed any more; a pin there would be a fresh, writable mount.
    let sealed: Vec<&Path> =
        rules.write_protect.iter().chain(&rules.read_deny).map(|r| r.path.as_path()).filter(|p| exists(p)).collect();
    let mut out: Vec<Target> = Vec::new();
    let protected = rules.write_protect.iter().map(|r| (r, Bind::ReadOnly));
    let hidden = rules.read_deny.iter().map(|r| (r, Bind::Hide));
    for (rule, bind) in protected.chain(hidden) {
        let path = rule.path.as_path();
        if !exists(path) {
            continue;
        }
        // The outermost root holding it: every directory between that root
        // and the path could be renamed away.
        let roots = rules.write_roots.iter().map(|r| r.path.as_path()).filter(|root| path.starts_with(root));
        let Some(root) = roots.min_by_key(|root| root.components().count()) else {
            // Outside every write root Landlock already refuses writes and,
            // by enumeration, reads; a hidden directory's names would still
            // list, so it is covered too.
            if bind == Bind::Hide && !out.iter().any(|t| t.path == path) {
                out.push(Target { path: path.to_path_buf(), bind, source: rule.source.clone() });
            }
            continue;
        };
        let mut between: Vec<&Path> =
            path.ancestors().skip(1).take_while(|a| *a != root && a.starts_with(root)).collect();
        between.reverse();
        for a in between {
            if sealed.iter().any(|s| a.starts_with(s)) {
                break;
            }
            if !out.iter().any(|t| t.path == a) {
                let source = format!("kept in place for {} ({})", path.display(), rule.source);
                out.push(Target { path: a.to_path_buf(), bind: Bind::Pin, source });
            }
        }
        match out.iter_mut().find(|t| t.path == path) {
            Some(t) if t.bind < bind => {
                t.bind = bind;
                t.source.clone_from(&rule.source);
            }
            Some(_) => {}
            None => out.push(Target { path: path.to_path_buf(), bind, source: rule.source.clone() }),
        }
    }
    // Shallow first, so each bind carries the ones above it.
    out.sort_by_key(|t| t.path.components().count());
    out
}

/// The task board to open, held open by a descriptor (`O_PATH`).
#[derive(Debug)]
pub(super) struct OpenBoard {
    /// Where it is, links resolved.
    pub path: PathBuf,
    dir: std::fs::File,
}

/// The board [`crate::rules::BOARD_ENV`] names, if it is one the rules
/// open ([`Rules::board_to_open`]).
pub(super) fn open_board(rules: &Rules) -> Result<Option<OpenBoard>, SandboxError> {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(named) = std::env::var_os(crate::rules::BOARD_ENV).map(PathBuf::from) else { return Ok(None) };
    let Some(path) = rules.board_to_open(&named) else { return Ok(None) };
    let opening = |e: std::io::Error| SandboxError::Setup(format!("opening the task board {}: {e}", path.display()));
    let path = path.canonicalize().map_err(opening)?;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(&path)
        .map_err(opening)?;
    Ok(Some(OpenBoard { path, dir }))
}

/// Makes the binds. In enforce mode the first that fails ends set-up with
/// a sentence naming the path, the rule and what to do; in best-effort
/// mode each failure is returned as a gap and the rest are made. The task
/// board, when there is one, stays open through whatever hides or
/// protects the directories around it.
pub(super) fn carve_out(
    targets: &[Target],
    mode: Mode,
    board: Option<&OpenBoard>,
) -> Result<Vec<String>, SandboxError> {
    let mut gaps = Vec::new();
    let mut board_mounted = false;
    for t in targets {
        let around_board = board.filter(|b| t.bind == Bind::Hide && b.path.starts_with(&t.path) && t.path.is_dir());
        let made = match around_board {
            Some(b) => {
                board_mounted = true;
                hide_around_board(&t.path, b)
            }
            None => bind(t),
        };
        if let Err(e) = made {
            let verb = match t.bind {
                Bind::Pin => "keeping in place",
                Bind::ReadOnly => "making read-only",
                Bind::Hide => "hiding",
            };
            let what = format!("{verb} {} ({}) failed: {e}", t.path.display(), t.source);
            if mode == Mode::Enforce {
                return Err(SandboxError::Setup(format!(
                    "{what}; nothing was run. `unixagent sandbox status` lists the rules: take the path out of the rule that names it, or set sandbox.mode = \"best-effort\" in config.toml to run without this protection"
                )));
            }
            gaps.push(what);
        }
    }
    // A board inside a path bound read-only (not hidden) is bound onto
    // itself again, writable, on top.
    if let Some(b) = board.filter(|b| !board_mounted && targets.iter().any(|t| b.path.starts_with(&t.path))) {
        mount(Some(&b.path), &b.path, None, libc::MS_BIND)
            .map_err(|e| SandboxError::Setup(format!("opening the task board {}: {e}", b.path.display())))?;
    }
    Ok(gaps)
}

/// Hides `dir` but for the task board inside it: an empty tmpfs whose
/// directories down to the board can be passed through but not listed
/// (mode 0111), the board bound back at its own path from the descriptor
/// opened before, and then the tmpfs made read-only. Nothing else of
/// `dir` can be read, listed, or written; the board can.
fn hide_around_board(dir: &Path, board: &OpenBoard) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::DirBuilderExt;
    let hide = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let writable = hide & !libc::MS_RDONLY;
    mount_data(Some(Path::new("none")), dir, Some("tmpfs"), writable, "mode=0111,size=16k")?;
    let mut at = dir.to_path_buf();
    for part in board.path.strip_prefix(dir).map_err(std::io::Error::other)?.components() {
        at.push(part);
        match std::fs::DirBuilder::new().mode(0o111).create(&at) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    let source = PathBuf::from(format!("/proc/self/fd/{}", board.dir.as_raw_fd()));
    mount(Some(&source), &board.path, None, libc::MS_BIND)?;
    mount(None, dir, None, libc::MS_BIND | libc::MS_REMOUNT | hide)
}

fn bind(t: &Target) -> std::io::Result<()> {
    let path = t.path.as_path();
    if t.bind == Bind::Hide {
        let hide = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if path.is_dir() {
            return mount_data(Some(Path::new("none")), path, Some("tmpfs"), hide, "mode=000,size=4k");
        }
        // The null device, on a mount where devices cannot be opened:
        // every open fails with EACCES.
        mount(Some(Path::new("/dev/null")), path, None, libc::MS_BIND)?;
        return mount(None, path, None, libc::MS_BIND | libc::MS_REMOUNT | hide);
    }
    mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC)?;
    if t.bind == Bind::ReadOnly {
        // A remount must keep the flags the kernel locked on the original
        // mount (nosuid, nodev, noexec), or it is refused.
        let locked = locked_flags(path);
        mount(None, path, None, libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked)?;
    }
    Ok(())
}

/// The mount flags of the filesystem holding `path` that a remount in a
/// user namespace must keep.
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else { return 0 };
    // SAFETY: statvfs writes into the zeroed struct we pass.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs.iter().filter(|(st_flag, _)| st.f_flag & st_flag != 0).fold(0, |acc, (_, ms)| acc | ms)
}

/// Linux's `ST_RELATIME` from `<sys/statvfs.h>`: the libc crate defines it
/// for glibc only, and the static (musl) build needs it too.
const ST_RELATIME: libc::c_ulong = 0x1000;

pub(super) fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> std::io::Result<()> {
    mount_data(source, target, fstype, flags, "")
}

fn mount_data(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: &str,
) -> std::io::Result<()> {
    let c = |p: &Path| CString::new(p.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other);
    let source = source.map(c).transpose()?;
    let target = c(target)?;
    let fstype = fstype.map(CString::new).transpose().map_err(std::io::Error::other)?;
    let data = (!data.is_empty()).then(|| CString::new(data)).transpose().map_err(std::io::Error::other)?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a valid C string that outlives the call.
    let rc =
        unsafe { libc::mount(ptr(&source), target.as_ptr(), ptr(&fstype), flags, ptr(&data).cast::<libc::c_void>()) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::PathRule;

    fn binds(t: &[Target]) -> Vec<(PathBuf, Bind)> {
        t.iter().map(|t| (t.path.clone(), t.bind)).collect()
    }

    #[test]
    fn carve_outs_pin_the_directories_between_root_and_protected_path() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join("proj/.git/hooks")).unwrap();
        std::fs::write(dir.join("proj/.git/config"), "").unwrap();
        let rules = Rules {
            write_roots: vec![PathRule::new(dir.join("proj"), "t")],
            write_protect: vec![
                PathRule::new(dir.join("proj/.git/hooks"), "t"),
                PathRule::new(dir.join("proj/.git/config"), "t"),
                PathRule::new(dir.join("proj/missing"), "t"),
                PathRule::new("/etc/passwd", "t"),
            ],
            ..Rules::default()
        };
        assert_eq!(
            binds(&targets(&rules)),
            vec![
                (dir.join("proj/.git"), Bind::Pin),
                (dir.join("proj/.git/hooks"), Bind::ReadOnly),
                (dir.join("proj/.git/config"), Bind::ReadOnly),
            ]
        );
    }

    #[test]
    fn nothing_inside_a_read_only_bind_is_pinned_writable_again() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join("home/.config/app/keys/deep")).unwrap();
        let rules = Rules {
            write_roots: vec![PathRule::new(dir.join("home"), "t")],
            write_protect: vec![PathRule::new(dir.join("home/.config/app"), "t")],
            read_deny: vec![PathRule::new(dir.join("home/.config/app/keys/deep"), "t")],
            ..Rules::default()
        };
        assert_eq!(
            binds(&targets(&rules)),
            vec![
                (dir.join("home/.config"), Bind::Pin),
                (dir.join("home/.config/app"), Bind::ReadOnly),
                (dir.join("home/.config/app/keys/deep"), Bind::Hide),
            ]
        );
    }
}
