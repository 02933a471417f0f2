//! Session directories: `$XDG_DATA_HOME/unixagent/sessions/<id>/`.
//!
//! Journals hold everything the user's shell printed, so every directory
//! unixagent creates here is 0700 and every file 0600, whatever the umask.

use std::ffi::OsString;
use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::StoreError;

/// The name of the journal file in a session directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The name of the metadata file in a session directory.
pub const META_FILE: &str = "meta.json";

/// `$XDG_DATA_HOME/unixagent`, or `~/.local/share/unixagent`.
pub fn data_dir() -> Result<PathBuf, StoreError> {
    data_dir_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// [`data_dir`] from explicit variable values. The XDG specification says
/// a relative `XDG_DATA_HOME` is invalid and must be ignored.
pub fn data_dir_from(xdg_data_home: Option<OsString>, home: Option<OsString>) -> Result<PathBuf, StoreError> {
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute(xdg_data_home) {
        return Ok(xdg.join("unixagent"));
    }
    absolute(home).map(|h| h.join(".local/share/unixagent")).ok_or(StoreError::NoDataDir)
}

/// What `meta.json` says about a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// Milliseconds since the Unix epoch, UTC.
    pub created_ms: u64,
    pub pid: u32,
    pub shell: String,
    pub cwd: String,
    pub version: String,
    /// The parent session, for agents started from inside another
    /// session (`UNIXAGENT_SESSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The trace this session belongs to (`TRACEPARENT` or `UA_TRACE_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The span this session's work hangs from: the `execute_tool` span of
    /// the parent's command, or a traced caller's span (`TRACEPARENT`),
    /// possibly on another machine. (Before child agents this held the
    /// parent's session id, which `parent` now has.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_parent: Option<String>,
    /// The parent's command that started this session: its tool call id
    /// (`UNIXAGENT_COMMAND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_command: Option<String>,
    /// How deep this session is: 0 for a first session, one more for each
    /// agent above it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A session directory on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionDir {
    id: String,
    path: PathBuf,
}

impl SessionDir {
    /// Creates a new session under `data_dir/sessions/` with a fresh id and
    /// writes `meta.json`. `meta.id` and `meta.created_ms` are filled in.
    pub fn create(data_dir: &Path, meta: SessionMeta) -> Result<Self, StoreError> {
        let sessions = data_dir.join("sessions");
        create_private_dir_all(&sessions)?;
        Self::create_in(&sessions, meta)
    }

    /// Creates a new session directory `parent/<fresh id>` (`parent` must
    /// exist) and writes `meta.json`: in the sessions directory, or in a
    /// spool (`crate::spool`) when the data directory cannot be written.
    pub fn create_in(sessions: &Path, mut meta: SessionMeta) -> Result<Self, StoreError> {
        let now = now_ms();
        let mut attempt = 0u64;
        let (id, path) = loop {
            let id = session_id(now, random_suffix(attempt));
            let path = sessions.join(&id);
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => break (id, path),
                // Another process picked the same millisecond and suffix.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => attempt += 1,
                Err(source) => return Err(StoreError::Create { path, source }),
            }
        };
        set_private(&path, 0o700)?;
        meta.id = id.clone();
        meta.created_ms = now;
        let dir = SessionDir { id, path };
        dir.write_meta(&meta)?;
        Ok(dir)
    }

    /// An existing session directory (for resuming or reading).
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let path = path.into();
        let meta = read_meta(&path.join(META_FILE))?;
        Ok(SessionDir { id: meta.id, path })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the journal lives; exported to the shell as `$UNIXAGENT_JOURNAL`.
    pub fn journal_path(&self) -> PathBuf {
        self.path.join(JOURNAL_FILE)
    }

    pub fn meta(&self) -> Result<SessionMeta, StoreError> {
        read_meta(&self.path.join(META_FILE))
    }

    /// Replaces `meta.json` atomically (write a temporary file, rename).
    pub fn write_meta(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let target = self.path.join(META_FILE);
        let tmp = self.path.join(".meta.json.tmp");
        let create = |source| StoreError::Create { path: tmp.clone(), source };
        let mut json = serde_json::to_vec_pretty(meta).map_err(|e| create(std::io::Error::other(e)))?;
        json.push(b'\n');
        let mut file =
            OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp).map_err(create)?;
        file.write_all(&json).and_then(|()| file.sync_all()).map_err(create)?;
        fs::rename(&tmp, &target).map_err(|source| StoreError::Create { path: target, source })
    }
}

/// Reads a session's `meta.json`.
pub fn read_meta(path: &Path) -> Result<SessionMeta, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Read { path: path.to_owned(), source })?;
    serde_json::from_slice(&bytes).map_err(|source| StoreError::Meta { path: path.to_owned(), source })
}

/// Creates `dir` and any missing parents as 0700. Existing directories
/// keep their mode: they may be shared on purpose.
pub(crate) fn create_private_dir_all(dir: &Path) -> Result<(), StoreError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| StoreError::Create { path: dir.to_owned(), source })
}

/// The mode given to `DirBuilder` is reduced by the umask; set it exactly.
fn set_private(path: &Path, mode: u32) -> Result<(), StoreError> {
    fs::set_permissions(path, Permissions::from_mode(mode))
        .map_err(|source| StoreError::Create { path: path.to_owned(), source })
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `YYYYMMDDTHHMMSS.mmmZ-xxxxxxxx`: sorts by creation time as a string,
/// reads as a UTC date, and is safe in a path on every platform.
pub fn session_id(unix_ms: u64, suffix: u32) -> String {
    let t = ua_protocol::time::Utc::from_unix_ms(unix_ms);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}.{:03}Z-{suffix:08x}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.millis
    )
}

/// Whether `s` has the form [`session_id`] gives: what a name read from
/// a place others can write must be before it becomes a path.
pub fn is_session_id(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    b.len() == 29
        && digits(0..8)
        && b[8] == b'T'
        && digits(9..15)
        && b[15] == b'.'
        && digits(16..19)
        && &b[19..21] == b"Z-"
        && b[21..].iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// Random bits without a dependency: std's `RandomState` is seeded from
/// the operating system's random source, once per process and then
/// advanced per instance.
fn random_suffix(attempt: u64) -> u32 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(attempt);
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    (h.finish() >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_utc_dates() {
        assert_eq!(session_id(0, 0xab), "19700101T000000.000Z-000000ab");
        // 2026-11-21 20:13:05.123 UTC
        assert_eq!(session_id(1_795_291_985_123, 1), "20261121T201305.123Z-00000001");
        // A leap day.
        assert_eq!(session_id(951_782_400_000, 0), "20000229T000000.000Z-00000000");
    }

    #[test]
    fn only_the_id_form_is_an_id() {
        assert!(is_session_id(&session_id(1_795_291_985_123, 0xdead_beef)));
        for bad in ["", "..", "../x", "20261121T201305.123Z-0000000/", "20261121T201305.123Z-0000000G", "a/b"] {
            assert!(!is_session_id(bad), "{bad}");
        }
        assert!(!is_session_id("20261121T201305.123Z-00000001x"));
    }

    #[test]
    fn ids_sort_by_time() {
        let a = session_id(1_795_292_385_123, u32::MAX);
        let b = session_id(1_795_292_385_124, 0);
        let c = session_id(1_895_292_385_000, 0);
        assert!(a < b && b < c);
    }

    #[test]
    fn data_dir_prefers_absolute_xdg() {
        let p = data_dir_from(Some("/x".into()), Some("/home/u".into())).unwrap();
        assert_eq!(p, PathBuf::from("/x/unixagent"));
        let p = data_dir_from(Some("relative".into()), Some("/home/u".into())).unwrap();
        assert_eq!(p, PathBuf::from("/home/u/.local/share/unixagent"));
        assert!(matches!(data_dir_from(None, None), Err(StoreError::NoDataDir)));
        assert!(matches!(data_dir_from(None, Some("".into())), Err(StoreError::NoDataDir)));
    }
}
