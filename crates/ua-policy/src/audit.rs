//! The audit log: one JSON object per line, appended, never rewritten.
//!
//! Every decision is a [`Record`]; when the command has run, a second record
//! with the same `id` carries the exit code and duration. The file is opened
//! with `O_APPEND` and each record is written with a single `write`, so
//! records from several unixagent processes do not interleave, and a crash
//! can at worst leave a torn last line, which [`read`] skips. The default
//! policy forbids agent commands to write anywhere in the data directory
//! except the session task boards, so the agent cannot edit or remove the
//! log.

use crate::error::PolicyError;
use crate::gate::{DecidedBy, Decision, Request};
use crate::risk::Risk;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use ua_protocol::time::Utc;

/// Who let the command run (or stopped it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approver {
    /// A person answered a prompt.
    Human,
    /// The deny list, the classifier, Cedar, the fallback mode or the judge.
    Policy,
    /// A pre-exec hook.
    Hook,
    /// A session grant.
    Grant,
}

impl Approver {
    /// The approver of an automatic decision.
    pub fn of(d: &DecidedBy) -> Approver {
        match d {
            DecidedBy::Hook { .. } => Approver::Hook,
            DecidedBy::Grant { .. } => Approver::Grant,
            _ => Approver::Policy,
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Identifies the command; the outcome record repeats it.
    pub id: String,
    /// RFC 3339 UTC time.
    pub time: String,
    /// Session id.
    pub session: String,
    /// The unixagent process.
    pub pid: u32,
    /// Agent nesting depth.
    pub depth: u32,
    /// The command (after hook rewrites).
    pub command: String,
    /// Its risk.
    pub risk: Risk,
    /// `allow`, `ask`, `deny`, or the human's `approved` / `refused`;
    /// `ran` for an outcome record.
    pub decision: String,
    /// The rule that decided (`deny:rm-root`, `cedar:builtin.ssh`, …).
    pub rule: String,
    /// Who decided.
    pub approver: Approver,
    /// Exit code, on an outcome record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Run time in milliseconds, on an outcome record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// `host:port`, on a record of the sandbox's proxy letting the command
    /// reach a host or refusing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

impl Record {
    /// The record of an automatic decision.
    pub fn decision(id: impl Into<String>, req: &Request, d: &Decision) -> Record {
        Record {
            id: id.into(),
            time: now(),
            session: req.session.clone(),
            pid: std::process::id(),
            depth: req.depth,
            command: d.command.clone(),
            risk: d.risk,
            decision: d.outcome.name().to_string(),
            rule: d.decided_by.rule(),
            approver: Approver::of(&d.decided_by),
            exit_code: None,
            duration_ms: None,
            network: None,
        }
    }

    /// The record of the sandbox's proxy deciding on a request the command
    /// made to `host:port`: `allow` or `deny`, with the proxy's reason as
    /// the rule.
    pub fn network(
        id: impl Into<String>,
        req: &Request,
        d: &Decision,
        target: String,
        allowed: bool,
        reason: Option<&str>,
    ) -> Record {
        Record {
            decision: if allowed { "allow" } else { "deny" }.to_string(),
            rule: format!("sandbox:proxy{}", reason.map(|r| format!(" ({r})")).unwrap_or_default()),
            approver: Approver::Policy,
            risk: Risk::Network,
            network: Some(target),
            ..Record::decision(id, req, d)
        }
    }

    /// The record of a human's answer to an `ask`.
    pub fn human(id: impl Into<String>, req: &Request, d: &Decision, approved: bool) -> Record {
        Record {
            decision: if approved { "approved" } else { "refused" }.to_string(),
            approver: Approver::Human,
            ..Record::decision(id, req, d)
        }
    }

    /// The record of a command that ran.
    pub fn outcome(
        id: impl Into<String>,
        req: &Request,
        d: &Decision,
        exit_code: Option<i32>,
        duration: Duration,
    ) -> Record {
        Record {
            decision: "ran".to_string(),
            exit_code,
            duration_ms: Some(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)),
            ..Record::decision(id, req, d)
        }
    }
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl AuditLog {
    /// Opens (creating, mode 0600) the log for appending; creates its
    /// directory.
    pub fn open(path: &Path) -> Result<AuditLog, PolicyError> {
        let io = |source| PolicyError::Io { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new().append(true).create(true).mode(0o600).open(path).map_err(io)?;
        Ok(AuditLog { path: path.to_path_buf(), file: Mutex::new(file) })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line, in one write.
    pub fn append(&self, record: &Record) -> Result<(), PolicyError> {
        let io = |source| PolicyError::Io { path: self.path.clone(), source };
        let mut line = serde_json::to_vec(record).map_err(|e| io(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        // With O_APPEND each write lands at the end as a whole; a record is
        // far below the size where a regular-file write could be split.
        let n = f.write(&line).map_err(io)?;
        if n != line.len() {
            return Err(io(std::io::Error::new(std::io::ErrorKind::WriteZero, "short write to the audit log")));
        }
        Ok(())
    }
}

/// Reads every complete record. A last line without its newline (a write
/// cut short by a crash) is skipped; any other bad line is an error naming
/// its line number.
pub fn read(path: &Path) -> Result<Vec<Record>, PolicyError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io { path: path.to_path_buf(), source })?;
    let complete = match text.rfind('\n') {
        Some(i) => &text[..i],
        None => "",
    };
    let mut out = Vec::new();
    for (n, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r = serde_json::from_str(line).map_err(|e| PolicyError::Policy {
            path: path.to_path_buf(),
            line: n + 1,
            message: format!("not an audit record: {e}"),
        })?;
        out.push(r);
    }
    Ok(out)
}

/// The current time as RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Utc::from_unix_ms(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)).rfc3339()
}
