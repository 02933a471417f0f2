//! Where finished spans go: one line each in `traces.jsonl`.
//!
//! `$XDG_DATA_HOME/unixagent/traces.jsonl` unless `UA_TRACE_SINK`
//! (`file:///abs/path`, as a parent session hands it down) or
//! `[telemetry] sink` in config.toml names another file; `[telemetry]
//! enabled = false` records nothing.
//!
//! Many processes append at once (a session and its children), so each
//! line goes out in one `write(2)` on a file opened with `O_APPEND`: Linux
//! serialises appends to a local file under the inode's lock, so lines
//! never interleave or tear, whatever their length. The file is opened for
//! each append rather than held: a rotation (a rename) then takes effect
//! for every writer at once, and nothing is written to a file retention
//! has deleted. Opening, writing and closing a line costs a few
//! microseconds (`crates/unixagent/benches/children.rs`), so the session may append from
//! its loop.

use std::fs::OpenOptions;
use std::io::{BufRead as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use super::span::Span;

/// The default file's name in the data directory.
pub const FILE: &str = "traces.jsonl";
/// Longest line written: a span past it loses its summary's actions and
/// then its longest attribute values, so one write stays one line.
pub const MAX_LINE: usize = 64 * 1024;

/// A `traces.jsonl` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sink {
    path: PathBuf,
}

/// What config.toml's `[telemetry]` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Where<'a> {
    /// `UA_TRACE_SINK`, as inherited.
    pub env: Option<&'a str>,
    /// `[telemetry] sink`.
    pub configured: Option<&'a str>,
    /// `[telemetry] enabled`.
    pub enabled: bool,
    /// unixagent's data directory.
    pub data_dir: Option<&'a Path>,
}

impl Sink {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The sink, or why there is none (`Ok(None)`: turned off). The
    /// inherited sink wins, so a whole process tree writes one file.
    pub fn resolve(w: &Where<'_>) -> Result<Option<Self>, String> {
        if !w.enabled {
            return Ok(None);
        }
        if let Some(v) = w.env.filter(|v| !v.is_empty()) {
            return parse_url(v).map(|p| Some(Self::at(p))).map_err(|e| format!("UA_TRACE_SINK: {e}"));
        }
        if let Some(v) = w.configured.filter(|v| !v.is_empty()) {
            return parse_url(v)
                .map(|p| Some(Self::at(p)))
                .map_err(|e| format!("[telemetry] sink in config.toml: {e}"));
        }
        match w.data_dir {
            Some(d) => Ok(Some(Self::at(d.join(FILE)))),
            None => Err("there is no data directory (neither XDG_DATA_HOME nor HOME is set)".into()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `file:///…`, for `UA_TRACE_SINK`.
    pub fn url(&self) -> String {
        format!("file://{}", self.path.display())
    }

    /// Appends each span as one line, each line in one write. The file is
    /// created 0600 (its directory 0700): commands and instructions are in
    /// it, scrubbed but private.
    pub fn append(&self, spans: &[Span]) -> std::io::Result<()> {
        if spans.is_empty() {
            return Ok(());
        }
        let file = OpenOptions::new().append(true).create(true).mode(0o600).open(&self.path);
        let mut file = match file {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = self.path.parent() {
                    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                }
                OpenOptions::new().append(true).create(true).mode(0o600).open(&self.path)?
            }
            other => other?,
        };
        for span in spans {
            file.write_all(line(span).as_bytes())?;
        }
        Ok(())
    }
}

/// `file:///abs/path` or an absolute path.
fn parse_url(v: &str) -> Result<PathBuf, String> {
    let path = v.strip_prefix("file://").unwrap_or(v);
    let p = PathBuf::from(path);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(format!(
            "{v:?} is not a file:// URL with an absolute path (file:///var/log/ua/traces.jsonl); spans are only written to a local file"
        ))
    }
}

/// A span's line, cut down to [`MAX_LINE`] if it is longer.
fn line(span: &Span) -> String {
    let text = span.to_line();
    if text.len() <= MAX_LINE {
        return text;
    }
    let mut s = span.clone();
    if let Some(summary) = &mut s.summary {
        summary.actions.truncate(16);
        for a in &mut summary.actions {
            a.command = cut(&a.command, 1024);
        }
        summary.instruction = cut(&summary.instruction, 4096);
    }
    for v in s.attributes.values_mut() {
        if let super::span::Value::Str(text) = v {
            *text = cut(text, 4096);
        }
    }
    let text = s.to_line();
    if text.len() <= MAX_LINE { text } else { span_without_detail(span) }
}

fn span_without_detail(span: &Span) -> String {
    let mut s = span.clone();
    s.summary = None;
    s.attributes.retain(|_, v| !matches!(v, super::span::Value::Str(t) if t.len() > 256));
    s.to_line()
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Renames `traces.jsonl` to `traces-<day>.jsonl` and deletes rotated
/// files last written more than `retain_days` ago: what `journal.retain_days`
/// does to sessions, done at the same moment (at most once a day). A
/// process appending meanwhile opens the new file on its next line.
pub fn rotate(dir: &Path, retain_days: u64, now: std::time::SystemTime) -> Vec<String> {
    let mut problems = Vec::new();
    let current = dir.join(FILE);
    if current.metadata().is_ok_and(|m| m.len() > 0) {
        let ms = u64::try_from(now.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(0);
        let t = ua_protocol::time::Utc::from_unix_ms(ms);
        let day = format!("{:04}{:02}{:02}", t.year, t.month, t.day);
        let mut target = dir.join(format!("traces-{day}.jsonl"));
        let mut n = 1;
        while target.exists() {
            n += 1;
            target = dir.join(format!("traces-{day}-{n}.jsonl"));
        }
        if let Err(e) = std::fs::rename(&current, &target) {
            problems.push(format!("rotating {}: {e}", current.display()));
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return problems };
    let keep = std::time::Duration::from_secs(retain_days.saturating_mul(86_400));
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("traces-") && name.ends_with(".jsonl")) {
            continue;
        }
        let old =
            e.metadata().and_then(|m| m.modified()).is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > keep));
        if old && let Err(err) = std::fs::remove_file(e.path()) {
            problems.push(format!("removing {}: {err}", e.path().display()));
        }
    }
    problems
}

/// Every trace file in `dir`, oldest first: the rotated ones, then
/// `traces.jsonl`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut rotated: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("traces-") && n.ends_with(".jsonl"))
                })
                .collect()
        })
        .unwrap_or_default();
    rotated.sort();
    rotated.push(dir.join(FILE));
    rotated
}

/// Reads every span in the trace files of `dir`, oldest file first;
/// counts the lines that are not spans (a torn last line, say).
pub fn read_all(dir: &Path, mut keep: impl FnMut(&Span) -> bool) -> (Vec<Span>, usize) {
    let mut spans = Vec::new();
    let mut skipped = 0;
    for path in files(dir) {
        let Ok(file) = std::fs::File::open(&path) else { continue };
        for line in std::io::BufReader::new(file).lines() {
            let Ok(line) = line else {
                skipped += 1;
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Span>(&line) {
                Ok(s) if keep(&s) => spans.push(s),
                Ok(_) => {}
                Err(_) => skipped += 1,
            }
        }
    }
    (spans, skipped)
}

/// Every span in one file (a sink configured under another name has no
/// rotated siblings); counts the lines that are not spans.
pub fn read_file(path: &Path, mut keep: impl FnMut(&Span) -> bool) -> (Vec<Span>, usize) {
    let Ok(text) = std::fs::read_to_string(path) else { return (Vec::new(), 0) };
    let mut skipped = 0;
    let spans = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Span>(l).map_err(|_| skipped += 1).ok())
        .filter(|s| keep(s))
        .collect();
    (spans, skipped)
}

#[cfg(test)]
#[path = "sink_tests.rs"]
mod tests;
