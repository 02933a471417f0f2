//! `unixagent policy explain` and `unixagent policy check`, as functions the
//! binary calls: a [`Decision`] rendered for people or as JSON, the exit
//! status scripts test, and a validation report of the policy files.

use crate::error::PolicyError;
use crate::gate::{DecidedBy, Decision, Gate, JudgeStatus, Outcome, PolicyConfig, Rewriter};
use crate::parse::PartKind;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The exit status of `policy explain`: 0 allowed, 1 asks, 2 denied.
pub fn exit_code(d: &Decision) -> i32 {
    match d.outcome {
        Outcome::Allow => 0,
        Outcome::Ask => 1,
        Outcome::Deny => 2,
    }
}

/// The decision as pretty JSON (the whole [`Decision`]).
pub fn render_json(d: &Decision) -> String {
    serde_json::to_string_pretty(d).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}

/// The decision for people: what runs, its risk, the decision and the rule.
pub fn render_text(d: &Decision) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "command: {}", d.rewrites.first().map_or(&d.command, |rw| &rw.from));
    for rw in &d.rewrites {
        let why = rw.reason.as_deref().map_or(String::new(), |r| format!(" ({r})"));
        match &rw.by {
            Rewriter::Paging => {
                let _ = writeln!(s, "runs as: {}{why}", rw.to);
            }
            Rewriter::Hook { hook } => {
                let _ = writeln!(s, "  rewritten by hook {hook}: {} -> {}{why}", rw.from, rw.to);
            }
        }
    }
    let _ = writeln!(s, "parts:");
    for (p, r) in d.analysis.parsed.parts.iter().zip(&d.analysis.parts) {
        let what = match &p.kind {
            PartKind::Exec => p.line(),
            PartKind::FunctionDef(name) => format!("function {name}"),
            PartKind::Assignment => "assignment".into(),
            PartKind::Redirection => "redirection".into(),
            PartKind::Dynamic => format!("dynamic: {}", p.line()),
            PartKind::Unparseable(e) => format!("unparseable: {e}"),
        };
        let wrappers = if p.wrappers.is_empty() { String::new() } else { format!(" (via {})", p.wrappers.join(", ")) };
        let _ = writeln!(s, "  {:<11} {what}{wrappers} — {}", r.risk.name(), r.reason);
        for (label, list) in [("reads", &r.effects.reads), ("writes", &r.effects.writes), ("hosts", &r.effects.hosts)] {
            if !list.is_empty() {
                let _ = writeln!(s, "              {label}: {}", list.join(" "));
            }
        }
    }
    let _ = writeln!(s, "risk: {}", d.risk.name());
    let _ = writeln!(s, "decision: {} — {}", d.outcome.name(), d.reason);
    let _ = writeln!(s, "decided by: {}", decided_by(&d.decided_by));
    if let Some(v) = &d.policy {
        for u in &v.unmatched {
            let _ = writeln!(s, "  not permitted by any policy: {} (mode {})", u.request, u.mode.name());
        }
    }
    for h in &d.hooks {
        let what = match &h.result {
            Ok(r) => serde_json::to_string(r).unwrap_or_default(),
            Err(f) => f.to_string(),
        };
        let _ = writeln!(s, "hook {}: {what}", h.hook);
    }
    match &d.judge {
        JudgeStatus::NotNeeded => {}
        JudgeStatus::Pending { mode } => {
            let _ = writeln!(s, "judge: would review this command (mode {mode:?})");
        }
        JudgeStatus::Done { verdict, .. } => {
            let _ = writeln!(s, "judge: {:?} — {}", verdict.safety, verdict.reason);
        }
        JudgeStatus::Failed { error, .. } => {
            let _ = writeln!(s, "judge: {error}");
        }
    }
    for n in &d.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

fn decided_by(d: &DecidedBy) -> String {
    match d {
        DecidedBy::DenyList { rule } => format!("deny-list rule {rule}"),
        DecidedBy::Classifier => "the classifier".into(),
        DecidedBy::Policy { policy, file, request } => format!("policy {policy} in {file} (on {request})"),
        DecidedBy::PolicyError => "a policy that could not be evaluated".into(),
        DecidedBy::Hook { hook } => format!("hook {hook}"),
        DecidedBy::Mode { mode, request } => format!("the fallback mode {} (on {request})", mode.name()),
        DecidedBy::Grant { grant } => format!("session grant: {}", grant.describe()),
        DecidedBy::Judge => "the judge".into(),
    }
}

/// What `policy check` found valid.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// Each layer's name and number of policies.
    pub layers: Vec<(String, usize)>,
    /// Files that were read (policy files and hooks).
    pub files: Vec<PathBuf>,
    /// Pre-exec hooks that will run.
    pub pre_exec: Vec<PathBuf>,
    /// Post-exec hooks that will run.
    pub post_exec: Vec<PathBuf>,
}

impl CheckReport {
    /// For people.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (name, n) in &self.layers {
            let _ = writeln!(s, "{name}: {n} policies, valid against the schema");
        }
        for f in &self.files {
            let _ = writeln!(s, "read {}", f.display());
        }
        for h in &self.pre_exec {
            let _ = writeln!(s, "pre-exec hook {}", h.display());
        }
        for h in &self.post_exec {
            let _ = writeln!(s, "post-exec hook {}", h.display());
        }
        s
    }
}

/// Validates the policy files and hooks `cfg` names, as [`Gate::load`]
/// would. The first error stops loading (it names the file and line).
pub fn check(cfg: &PolicyConfig) -> Result<CheckReport, PolicyError> {
    let gate = Gate::load(cfg)?;
    let mut files: Vec<PathBuf> =
        ["policy.cedar", "policy.toml"].iter().map(|f| cfg.config_dir.join(f)).filter(|p| p.exists()).collect();
    files.extend(cfg.narrowing.iter().cloned());
    Ok(CheckReport {
        layers: gate.engine().layers().iter().map(|l| (l.name.clone(), l.len())).collect(),
        files,
        pre_exec: gate.hooks().pre_exec.clone(),
        post_exec: gate.hooks().post_exec.clone(),
    })
}
