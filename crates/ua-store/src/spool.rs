//! Spools: the session directory of a child agent that runs inside its
//! parent's sandbox, where the data directory is hidden, kept where the
//! child can write, and imported by the parent when the child is gone.
//!
//! A spool is `<reports>/<id>/`, where `<reports>` is the report directory
//! the parent watches (`UNIXAGENT_CHILDREN`, a dot-directory in the task
//! board, the one place of the data directory the sandbox leaves
//! writable). It is an ordinary session directory (`meta.json`,
//! `journal.jsonl`, `checkpoint.json`) with two additions:
//!
//! - `spans.jsonl`, the spans the session finished (its trace sink);
//! - `children/`, the session's own report directory: its children report
//!   there and spool there, so a spool carries the spools of its subtree
//!   and the root, importing it, imports the whole subtree.
//!
//! [`import`] moves a spool into `<data>/sessions/`, adds it to the index
//! (from its journal, as a reindex would) and hands back its spans. What it
//! reads was written from inside the sandbox by a process that may be
//! hostile, so the spool is first moved out of the sandbox's reach (a
//! rename into a private directory beside the sessions), then checked
//! there: its name must be a session id, every entry a regular file (with
//! one link) or a directory, nothing followed through a symbolic link,
//! sizes and counts bounded. Its files are then copied into a session
//! directory made for it (a name that exists is never reused, so no
//! session is replaced), where nothing a sandboxed process opened before
//! the move can reach, and its `meta.json` there must name the spool and
//! the importing session as its parent. Anything else is a [`SpoolError`]
//! and the spool is discarded.
//!
//! Not done here: the spans go to whatever trace sink the caller has
//! (`ua-store` knows nothing of traces).

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use crate::error::StoreError;
use crate::index::{Index, Record, records_from_journal};
use crate::journal::read_journal;
use crate::session::{JOURNAL_FILE, META_FILE, SessionDir, SessionMeta, is_session_id};

/// The spans a spooled session finished, one JSON span a line.
pub const SPANS_FILE: &str = "spans.jsonl";
/// A spooled session's own report directory.
pub const CHILDREN_DIR: &str = "children";

/// Largest file a spool may hold (a long child's journal fits).
pub const MAX_FILE: u64 = 256 * 1024 * 1024;
/// Largest `meta.json`.
const MAX_META: u64 = 64 * 1024;
/// Largest `spans.jsonl`, which is read whole.
pub const MAX_SPANS: u64 = 64 * 1024 * 1024;
/// Most entries read from one directory of a spool.
const MAX_ENTRIES: usize = 4096;
/// Deepest spool inside spools (`agent.max_depth` is far below it).
const MAX_NESTING: usize = 16;

/// A spool that was not imported, and why. Its name is as found (a
/// forged one may be anything printable).
#[derive(Debug, thiserror::Error)]
#[error(
    "the spool of child session {name:?} was not imported ({why}); a command in the sandbox can write there, so it was discarded"
)]
pub struct SpoolError {
    pub name: String,
    pub why: Why,
}

/// Why a spool was not imported.
#[derive(Debug, thiserror::Error)]
pub enum Why {
    #[error("its name is not a session id")]
    Name,
    #[error("{0} is not a regular file or a directory")]
    NotPlain(String),
    #[error("{0} has more than one link")]
    Linked(String),
    #[error("{0} is larger than {1} bytes")]
    TooLarge(String, u64),
    #[error("{0} holds more than {max} entries", max = MAX_ENTRIES)]
    TooMany(String),
    #[error("spools are nested more than {max} deep", max = MAX_NESTING)]
    TooDeep,
    #[error("its meta.json {0}")]
    Meta(String),
    #[error("a session with that id already exists and was left as it was")]
    Exists,
    #[error("{0}")]
    Io(io::Error),
}

/// A session imported from a spool.
#[derive(Debug)]
pub struct Imported {
    pub id: String,
    /// The bytes of its `spans.jsonl` (at most [`MAX_SPANS`]), for the
    /// caller's trace sink.
    pub spans: Vec<u8>,
    /// Adding it to the index failed (it is in `sessions list` after a
    /// reindex).
    pub index_error: Option<StoreError>,
}

/// Makes a spooled session in `reports` (the directory the parent
/// watches): its directory and `meta.json` as [`SessionDir::create_in`]
/// makes them, and its `children/` report directory.
pub fn create(reports: &Path, meta: SessionMeta) -> Result<SessionDir, StoreError> {
    let dir = SessionDir::create_in(reports, meta)?;
    let children = children_of(dir.path());
    DirBuilder::new().mode(0o700).create(&children).map_err(|source| StoreError::Create { path: children, source })?;
    Ok(dir)
}

/// Where a spooled session's finished spans go.
pub fn spans_of(spool: &Path) -> PathBuf {
    spool.join(SPANS_FILE)
}

/// A spooled session's report directory.
pub fn children_of(spool: &Path) -> PathBuf {
    spool.join(CHILDREN_DIR)
}

/// Adds a spooled session that still runs to the index, as its parent
/// heard it start, so that `sessions list` shows it under its root while
/// it runs; its import adds the rest from its journal once it is gone.
/// `start` is the session's [`Record::Start`]. Nothing is added (and
/// `false` returned) unless its id is a session id, `reports` holds a
/// spool by that name, and no session by that id exists: a report may be
/// forged, and must not rewrite another session's record.
pub fn index_running(reports: &Path, data: &Path, start: &Record) -> Result<bool, StoreError> {
    let id = start.id();
    if !matches!(start, Record::Start { .. })
        || !is_session_id(id)
        || reports.join(id).symlink_metadata().is_err()
        || has_session(data, id)
    {
        return Ok(false);
    }
    Index::open(data)?.append(start)?;
    Ok(true)
}

/// Takes a session indexed while it ran ([`index_running`]) out of the
/// index again, when its spool was not imported; a session that has a
/// directory after all is left as it is.
pub fn unindex(data: &Path, id: &str) -> Result<(), StoreError> {
    if !is_session_id(id) || has_session(data, id) {
        return Ok(());
    }
    Index::open(data)?.append(&Record::Pruned { id: id.to_string(), ts: crate::session::now_ms() })
}

/// Whether `data` has a session directory (or anything) by the name `id`.
fn has_session(data: &Path, id: &str) -> bool {
    data.join("sessions").join(id).symlink_metadata().is_ok()
}

/// Imports the spool `name` of the report directory `reports` (whose
/// parent session is `parent`) into `data`, then the spools it carries,
/// each after its parent. One result per spool met, in that order; the
/// spool is gone from `reports` afterwards unless its name or an existing
/// session stopped it before it was moved. `name` is checked to be a
/// session id before it is joined to `reports`: it may come from a report.
pub fn import(reports: &Path, name: &str, parent: &str, data: &Path) -> Vec<Result<Imported, SpoolError>> {
    let mut out = Vec::new();
    import_into(reports, name, parent, data, 0, &mut out);
    out
}

/// Whether `reports` holds something by the name `name` (a spool to import,
/// or a forgery to refuse).
pub fn exists(reports: &Path, name: &str) -> bool {
    !is_session_id(name) || reports.join(name).symlink_metadata().is_ok()
}

/// The spools in a report directory: every name that is not a report's (a
/// dot-name), sorted.
pub fn spools_in(reports: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(reports) else { return Vec::new() };
    let mut found: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .take(MAX_ENTRIES)
        .collect();
    found.sort();
    found
}

fn import_into(
    reports: &Path,
    name: &str,
    parent: &str,
    data: &Path,
    depth: usize,
    out: &mut Vec<Result<Imported, SpoolError>>,
) {
    let name = name.to_string();
    if depth > MAX_NESTING {
        out.push(Err(SpoolError { name, why: Why::TooDeep }));
        return;
    }
    match import_one(reports, &name, parent, data) {
        Ok((imported, staging)) => {
            let id = imported.id.clone();
            out.push(Ok(imported));
            let carried = staging.path().join(CHILDREN_DIR);
            for child in spools_in(&carried) {
                import_into(&carried, &child, &id, data, depth + 1, out);
            }
            // Dropping the staging directory removes what was left in it
            // (reports, refused spools), without following links.
        }
        Err(why) => out.push(Err(SpoolError { name, why })),
    }
}

/// Moves one spool into the sessions; returns it and the private staging
/// directory that holds its `children/`.
fn import_one(reports: &Path, name: &str, parent: &str, data: &Path) -> Result<(Imported, tempfile::TempDir), Why> {
    if !is_session_id(name) {
        return Err(Why::Name);
    }
    let spool = &reports.join(name);
    if has_session(data, name) {
        return Err(Why::Exists);
    }
    let target = data.join("sessions").join(name);
    // Out of the sandbox's reach before anything is read: a check made
    // where a sandboxed process can still write would not hold.
    let staging = tempfile::Builder::new()
        .prefix(".spool-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir_in(data)
        .map_err(Why::Io)?;
    let staged = staging.path().join(name);
    move_dir(spool, &staged)?;
    check_spool(&staged)?;
    let spans = match read_bounded(&staged.join(SPANS_FILE), MAX_SPANS) {
        Ok(bytes) => bytes,
        Err(Why::Io(e)) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    remove_if_there(&staged.join(SPANS_FILE))?;
    let children = staged.join(CHILDREN_DIR);
    if children.symlink_metadata().is_ok() {
        fs::rename(&children, staging.path().join(CHILDREN_DIR)).map_err(Why::Io)?;
    }
    copy_session(&staged, &target)?;
    // Checked in the copy, which nothing else can have open.
    let meta = match read_meta(&target, name, parent) {
        Ok(meta) => meta,
        Err(e) => {
            let _ = fs::remove_dir_all(&target);
            return Err(e);
        }
    };
    let index_error = add_to_index(data, &meta, &target).err();
    Ok((Imported { id: meta.id, spans, index_error }, staging))
}

/// The staged spool's files, copied into `target`, a directory made now
/// (and never one that exists). A copy, not a rename: a sandboxed process
/// may hold a descriptor of the spool or of a file in it, taken before the
/// move, and whatever it could still write through that stays in the
/// staging directory, which is removed.
fn copy_session(staged: &Path, target: &Path) -> Result<(), Why> {
    match DirBuilder::new().mode(0o700).create(target) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(Why::Exists),
        Err(e) => return Err(Why::Io(e)),
    }
    let copied = (|| {
        for (path, m) in entries(staged)? {
            let Some(file) = path.file_name() else { continue };
            if m.is_dir() {
                continue;
            }
            copy_file(&path, &target.join(file))?;
        }
        Ok(())
    })();
    if copied.is_err() {
        let _ = fs::remove_dir_all(target);
    }
    copied
}

/// A rename, or where the two are on different filesystems, a copy of
/// plain files and directories and then the removal of the original.
fn move_dir(from: &Path, to: &Path) -> Result<(), Why> {
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            copy_tree(from, to, 0)?;
            fs::remove_dir_all(from).map_err(Why::Io)
        }
        Err(e) => Err(Why::Io(e)),
    }
}

fn copy_tree(from: &Path, to: &Path, depth: usize) -> Result<(), Why> {
    let shown = from.display().to_string();
    let m = from.symlink_metadata().map_err(Why::Io)?;
    if !m.is_dir() {
        return Err(Why::NotPlain(shown));
    }
    if depth > MAX_NESTING * 2 {
        return Err(Why::TooDeep);
    }
    DirBuilder::new().mode(0o700).create(to).map_err(Why::Io)?;
    for entry in entries(from)? {
        let (path, m) = entry;
        let Some(file) = path.file_name() else { continue };
        if m.is_dir() {
            copy_tree(&path, &to.join(file), depth + 1)?;
        } else if m.is_file() {
            copy_file(&path, &to.join(file))?;
        } else {
            return Err(Why::NotPlain(path.display().to_string()));
        }
    }
    Ok(())
}

/// A regular file of at most [`MAX_FILE`], copied to `to`, which must not
/// exist yet.
fn copy_file(from: &Path, to: &Path) -> Result<(), Why> {
    let bytes = read_bounded(from, MAX_FILE)?;
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(to).map_err(Why::Io)?;
    io::Write::write_all(&mut f, &bytes).map_err(Why::Io)
}

/// A directory's entries with their `lstat`, at most [`MAX_ENTRIES`].
fn entries(dir: &Path) -> Result<Vec<(PathBuf, fs::Metadata)>, Why> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).map_err(Why::Io)? {
        let e = e.map_err(Why::Io)?;
        if out.len() == MAX_ENTRIES {
            return Err(Why::TooMany(dir.display().to_string()));
        }
        let path = e.path();
        let m = path.symlink_metadata().map_err(Why::Io)?;
        out.push((path, m));
    }
    Ok(out)
}

/// The staged spool: a directory of regular files (one link each, each at
/// most [`MAX_FILE`]) and its `children/` directory, nothing else. The
/// spools inside `children/` are checked when they are imported.
fn check_spool(spool: &Path) -> Result<(), Why> {
    let m = spool.symlink_metadata().map_err(Why::Io)?;
    if !m.is_dir() {
        return Err(Why::NotPlain("the spool".into()));
    }
    for (path, m) in entries(spool)? {
        let shown = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if m.is_dir() && shown == CHILDREN_DIR {
            continue;
        }
        if !m.is_file() {
            return Err(Why::NotPlain(shown));
        }
        // A hard link would make the session's file another one's.
        if m.nlink() != 1 {
            return Err(Why::Linked(shown));
        }
        if m.len() > MAX_FILE {
            return Err(Why::TooLarge(shown, MAX_FILE));
        }
    }
    Ok(())
}

/// `meta.json`, which must name the spool and `parent`.
fn read_meta(spool: &Path, name: &str, parent: &str) -> Result<SessionMeta, Why> {
    let bytes = read_bounded(&spool.join(META_FILE), MAX_META)?;
    let meta: SessionMeta = serde_json::from_slice(&bytes).map_err(|e| Why::Meta(format!("is not valid ({e})")))?;
    if meta.id != name {
        return Err(Why::Meta(format!("names another session ({:?})", meta.id)));
    }
    if meta.parent.as_deref() != Some(parent) {
        return Err(Why::Meta(format!("names another parent ({:?})", meta.parent)));
    }
    Ok(meta)
}

/// A regular file's bytes, opened without following a link, at most
/// `limit` of them.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, Why> {
    let shown = || path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| if e.raw_os_error() == Some(libc::ELOOP) { Why::NotPlain(shown()) } else { Why::Io(e) })?;
    let m = file.metadata().map_err(Why::Io)?;
    if !m.is_file() {
        return Err(Why::NotPlain(shown()));
    }
    if m.nlink() != 1 {
        return Err(Why::Linked(shown()));
    }
    if m.len() > limit {
        return Err(Why::TooLarge(shown(), limit));
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).map_err(Why::Io)?;
    Ok(bytes)
}

fn remove_if_there(path: &Path) -> Result<(), Why> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Why::Io(e)),
        _ => Ok(()),
    }
}

/// The records its journal implies, as a reindex would add them.
fn add_to_index(data: &Path, meta: &SessionMeta, dir: &Path) -> Result<(), StoreError> {
    let lines = match read_journal(&dir.join(JOURNAL_FILE)) {
        Ok(contents) => contents.lines,
        Err(StoreError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let index = Index::open(data)?;
    for record in records_from_journal(meta, &lines) {
        index.append(&record)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "spool_tests.rs"]
mod tests;
