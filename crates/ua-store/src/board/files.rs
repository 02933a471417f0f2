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
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        // Filesystems without the flag: a plain rename, which replaces an
        // existing name. Task names carry their unique id, so the only
        // file it could replace is a hand-made copy of the same task.
        Err(nix::errno::Errno::EINVAL) => fs::rename(from, to),
        Err(e) => Err(e.into()),
    }
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
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    let swapped = match renameat2(AT_FDCWD, new, AT_FDCWD, target, RenameFlags::RENAME_EXCHANGE) {
        Ok(()) => Ok(()),
        Err(nix::errno::Errno::EINVAL) => fallback_replace(new, target),
        Err(e) => Err(io::Error::from(e)),
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
