//! The filesystem steps a board is built on, each one atomic on a local
//! filesystem: creating a file only if its name is free, renaming without
//! replacing, and swapping two names.

use std::fs::{self, DirBuilder, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Creates `dir` and its parents (0700, like the rest of a session).
pub(crate) fn make_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// A name no other process picks: `.<base>.<pid>.<random>.tmp`. Names
/// starting with a dot are not tasks, so readers pass over them.
pub(crate) fn temp_name(dir: &Path, base: &str) -> PathBuf {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    dir.join(format!(".{base}.{}.{:08x}.tmp", std::process::id(), h.finish() as u32))
}

/// Writes `text` to a new temporary file in `dir` (0600) and returns its
/// path. Not synced: a board is a working record that a crash may leave a
/// step behind, never a torn one (readers only see renamed whole files).
pub(crate) fn write_temp(dir: &Path, base: &str, text: &str) -> io::Result<PathBuf> {
    let path = temp_name(dir, base);
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
    if let Err(e) = f.write_all(text.as_bytes()) {
        let _ = fs::remove_file(&path);
        return Err(e);
    }
    Ok(path)
}

/// Creates `path` empty, failing with `AlreadyExists` if anything has the
/// name: the one step id allocation rests on (`O_CREAT | O_EXCL`).
pub(crate) fn create_new(path: &Path) -> io::Result<()> {
    OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map(drop)
}

/// Renames `from` to `to` unless `to` exists (`AlreadyExists`), in one
/// step. A missing `from` is `NotFound`: someone else moved it first.
#[cfg(target_os = "linux")]
pub(crate) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        // Filesystems without the flag: a plain rename, which replaces an
        // existing name. Task names carry their unique id, so the only
        // file it could replace is a hand-made copy of the same task.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => fs::rename(from, to),
        r => r,
    }
}

/// `renameat2(2)` relative to the working directory, as the system call:
/// the C libraries differ in whether they wrap it (glibc does, and nix
/// offers it only there; the static build links musl).
#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput);
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both paths are valid NUL-terminated strings that outlive
    // the call; the kernel reads them and nothing else.
    let r = unsafe {
        libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), flags)
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    if to.symlink_metadata().is_ok() {
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, "the name is taken"));
    }
    fs::rename(from, to)
}

/// Puts the text in `new` (a temporary file) in place of `target`, but
/// only if `target` still exists: the names are swapped in one step
/// (`RENAME_EXCHANGE`) and the old text removed. A plain rename would
/// bring back a task that another process had just moved away.
/// `NotFound` means it was moved; `new` is removed either way.
#[cfg(target_os = "linux")]
pub(crate) fn replace_existing(new: &Path, target: &Path) -> io::Result<()> {
    let swapped = match renameat2(new, target, libc::RENAME_EXCHANGE) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => fallback_replace(new, target),
        r => r,
    };
    let _ = fs::remove_file(new);
    swapped
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn replace_existing(new: &Path, target: &Path) -> io::Result<()> {
    let r = fallback_replace(new, target);
    let _ = fs::remove_file(new);
    r
}

/// Without an exchange: check, then rename over. The gap between the two
/// is the one place where a task moved away at that instant could come
/// back; the filesystems Linux runs boards on have the exchange.
fn fallback_replace(new: &Path, target: &Path) -> io::Result<()> {
    target.symlink_metadata()?;
    fs::rename(new, target)
}

/// Replaces `target` whatever it was (PLAN.md): write then rename.
pub(crate) fn replace(dir: &Path, target: &Path, text: &str) -> io::Result<()> {
    let base = target.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = write_temp(dir, &base, text)?;
    fs::rename(&tmp, target).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}
