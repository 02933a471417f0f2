//! The safety pipeline as the agent uses it: the policy loaded once per
//! session, a decision per proposed command (on a blocking thread, since
//! hooks are processes, then the judge for risky commands), session
//! grants, and the audit log.
//!
//! The cascade itself lives in `ua-policy`. This module only decides what
//! happens when it cannot load: commands are still classified, the deny
//! list still holds, and everything else asks, with one line saying why.

use std::sync::Arc;

use ua_backend::provider::Provider;
use ua_context::secrets::redact_secrets;
use ua_policy::audit::{AuditLog, Record};
use ua_policy::classify::analyze;
use ua_policy::gate::{Decision, Gate, Outcome as PolicyOutcome, PolicyConfig, Request, Rewriter};
use ua_policy::grants::{Grant, Grants};
use ua_policy::judge::{JudgeMode, judge};
use ua_policy::risk::Risk;

use super::turn::{Outcome, Rewritten, Verdict};

/// How long the judge may take before its silence counts as a failure
/// (which warn mode notes and block mode denies).
const JUDGE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// `[judge]` in config.toml.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct JudgeSettings {
    /// off | warn | block; unset: warn with a person at the terminal,
    /// block otherwise.
    pub mode: Option<String>,
    /// The judge runs from this risk up (default `destructive`, which
    /// includes network and privileged).
    pub min_risk: Option<String>,
}

/// The loaded policy, or why it did not load.
#[derive(Debug)]
pub struct Policy {
    gate: Result<Arc<Gate>, String>,
    audit: Option<AuditLog>,
}

/// What the gate decided about one command, with what the audit log and
/// the journal need.
#[derive(Debug, Clone)]
pub struct Gated {
    pub verdict: Verdict,
    /// The full decision, when the policy loaded.
    pub decision: Option<Decision>,
    pub request: Request,
}

impl Policy {
    /// Loads policy files and hooks from the XDG locations. Never fails:
    /// a broken policy is reported in the returned warnings.
    pub fn load(judge: &JudgeSettings, layers: &[std::path::PathBuf]) -> (Self, Vec<String>) {
        Self::load_from(&|k: &str| std::env::var(k).ok(), judge, layers)
    }

    /// [`Policy::load`] from the locations `env` names (`HOME`, the XDG
    /// directories).
    pub fn load_from(
        env: &dyn Fn(&str) -> Option<String>,
        judge: &JudgeSettings,
        layers: &[std::path::PathBuf],
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let cfg = match PolicyConfig::from_env(env) {
            Ok(mut cfg) => {
                cfg.narrowing = layers.to_vec();
                match judge.mode.as_deref() {
                    None => {}
                    Some("off") => cfg.judge.mode = Some(JudgeMode::Off),
                    Some("warn") => cfg.judge.mode = Some(JudgeMode::Warn),
                    Some("block") => cfg.judge.mode = Some(JudgeMode::Block),
                    Some(other) => {
                        warnings.push(format!("judge.mode = {other:?} is not off, warn or block; ignoring it"))
                    }
                }
                if let Some(name) = &judge.min_risk {
                    match Risk::from_name(name) {
                        Some(r) => cfg.judge.min_risk = r,
                        None => warnings.push(format!("judge.min_risk = {name:?} is not a risk level; ignoring it")),
                    }
                }
                Ok(cfg)
            }
            Err(e) => Err(e.to_string()),
        };
        let (gate, audit, audit_error) = match cfg {
            Ok(cfg) => {
                let (audit, audit_error) = match AuditLog::open(&cfg.audit_path()) {
                    Ok(a) => (Some(a), None),
                    Err(e) => (None, Some(format!("the audit log cannot be written: {e}"))),
                };
                let gate = Gate::load(&cfg).map(Arc::new).map_err(|e| e.to_string());
                (gate, audit, audit_error)
            }
            Err(e) => (Err(e), None, None),
        };
        if let Err(e) = &gate {
            warnings.push(format!("the policy did not load ({e}); every agent command will ask until it is fixed"));
        }
        if let Some(e) = &audit_error {
            warnings.push(e.clone());
        }
        (Self { gate, audit }, warnings)
    }

    /// A policy that did not load: as when [`Policy::load`] finds a broken
    /// file, the classifier and the deny list still decide denials and
    /// everything else asks (or is refused when nobody can answer). Used
    /// when loading itself failed, so it does no I/O.
    pub fn unloaded(why: &str) -> (Arc<Self>, Vec<String>) {
        let warning = format!("the policy did not load ({why}); every agent command will ask until unixagent restarts");
        (Arc::new(Self { gate: Err(why.to_string()), audit: None }), vec![warning])
    }

    /// Decides about `req` (blocking: hooks may run), then asks the judge
    /// when the decision calls for it.
    pub async fn decide(&self, req: Request, grants: Grants, provider: Option<Arc<dyn Provider>>) -> Gated {
        let gate = match &self.gate {
            Ok(g) => g.clone(),
            Err(why) => return fallback(req, &grants, why),
        };
        let (g, r) = (gate.clone(), req.clone());
        let decided = tokio::task::spawn_blocking(move || g.decide(&r, &grants)).await;
        let mut decision = match decided {
            Ok(d) => d,
            Err(e) => return refused(req, &format!("the safety pipeline failed: {e}")),
        };
        if decision.run_judge() {
            let verdict = match provider {
                Some(p) => match tokio::time::timeout(JUDGE_TIMEOUT, judge(&*p, &judge_input(&decision, &req))).await {
                    Ok(v) => v,
                    Err(_) => Err(ua_policy::judge::JudgeError::Backend(format!(
                        "no answer within {} s",
                        JUDGE_TIMEOUT.as_secs()
                    ))),
                },
                None => Err(ua_policy::judge::JudgeError::Backend("no model backend for the judge".into())),
            };
            decision = gate.apply_judge(decision, verdict);
        }
        Gated { verdict: verdict_of(&decision, req.human_attached), decision: Some(decision), request: req }
    }

    /// Runs the post-exec hooks for a command that ran, on a blocking
    /// thread; what they say is for their own records, so nothing waits.
    pub fn post_exec(&self, req: Request, d: Decision, exit_code: i32, duration: std::time::Duration) {
        let Ok(gate) = &self.gate else { return };
        let gate = gate.clone();
        tokio::task::spawn_blocking(move || gate.post_exec(&req, &d, Some(exit_code), duration));
    }

    /// Appends to the audit log; the error, if any, is for one notice.
    pub fn audit(&self, record: &Record) -> Result<(), String> {
        match &self.audit {
            Some(a) => a.append(record).map_err(|e| format!("the audit log could not be written: {e}")),
            None => Ok(()),
        }
    }
}

/// What the judge sees, with secrets redacted as in everything else sent
/// to a model: the command may be the user's edit of a proposal, or a
/// hook's rewrite, with a password in it. The instruction is the user's
/// own message and goes as written, as it does to the agent's model.
fn judge_input(d: &Decision, req: &Request) -> ua_policy::judge::JudgeInput {
    let mut input = d.judge_input(req);
    for c in &mut input.commands {
        *c = redact_secrets(c).into_owned();
    }
    input.cwd = redact_secrets(&input.cwd).into_owned();
    input
}

/// The turn's view of a decision.
pub fn verdict_of(d: &Decision, human: bool) -> Verdict {
    let mut outcome = match d.outcome {
        PolicyOutcome::Allow => Outcome::Allow,
        PolicyOutcome::Ask => Outcome::Ask,
        PolicyOutcome::Deny => Outcome::Deny,
    };
    let mut reason = format!("{} ({})", d.reason, d.decided_by.rule());
    if outcome == Outcome::Ask && !human {
        outcome = Outcome::Deny;
        reason = format!("approval is needed and there is no terminal to ask on: {reason}");
    }
    Verdict {
        outcome,
        risk: d.risk.name().to_string(),
        reason,
        note: (!d.notes.is_empty()).then(|| d.notes.join("; ")),
        strong: d.risk >= Risk::Privileged,
        rewritten: d.rewrites.first().map(|first| Rewritten {
            from: first.from.clone(),
            command: d.command.clone(),
            by_hook: d.rewrites.iter().any(|r| matches!(r.by, Rewriter::Hook { .. })),
        }),
        defines: d.analysis.parsed.defines.clone(),
    }
}

/// Without a loaded policy: the classifier's floor still holds, and
/// everything it does not deny asks.
fn fallback(req: Request, grants: &Grants, why: &str) -> Gated {
    let a = analyze(&req.command);
    let (mut outcome, reason) = match (&a.denied, a.risk) {
        (Some(m), _) => (Outcome::Deny, format!("{} (deny:{})", m.reason, m.rule)),
        (None, Risk::Denied) => (Outcome::Deny, "the classifier denies it".to_string()),
        (None, _) if grants.covers(&a).is_some() => (Outcome::Allow, "allowed for this session".to_string()),
        (None, _) => (Outcome::Ask, format!("the policy did not load ({why})")),
    };
    if outcome == Outcome::Ask && !req.human_attached {
        outcome = Outcome::Deny;
    }
    let verdict = Verdict {
        outcome,
        risk: a.risk.name().to_string(),
        reason,
        note: None,
        strong: a.risk >= Risk::Privileged,
        rewritten: None,
        defines: a.parsed.defines.clone(),
    };
    Gated { verdict, decision: None, request: req }
}

fn refused(req: Request, why: &str) -> Gated {
    let verdict = Verdict {
        outcome: Outcome::Deny,
        risk: "unrated".into(),
        reason: why.to_string(),
        note: None,
        strong: false,
        rewritten: None,
        defines: Vec::new(),
    };
    Gated { verdict, decision: None, request: req }
}

/// The environment variable that carries the narrowing policy files to
/// agents started inside a session, colon-separated.
pub const LAYERS_ENV: &str = "UNIXAGENT_POLICY_LAYERS";

/// The narrowing layers of this process: those inherited from the session
/// it was started in, then its own `--policy`. A file that does not exist
/// is an error: silently dropping a restriction would widen the policy.
pub fn layers(own: Option<&std::path::Path>) -> Result<Vec<std::path::PathBuf>, String> {
    let mut layers: Vec<std::path::PathBuf> = std::env::var_os(LAYERS_ENV)
        .map(|v| std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()).collect())
        .unwrap_or_default();
    if let Some(p) = own {
        let abs = std::fs::canonicalize(p).map_err(|e| {
            format!("the policy file {} cannot be read ({e}); check the path given to --policy", p.display())
        })?;
        layers.push(abs);
    }
    Ok(layers)
}

/// Warnings about the policy.toml files in force (the user's and each
/// narrowing layer): sections unixagent accepts but does not act on. Read
/// without compiling anything, so a session can say so as it starts.
pub fn policy_warnings(layers: &[std::path::PathBuf]) -> Vec<String> {
    let env = |k: &str| std::env::var(k).ok();
    let own = ua_policy::gate::PolicyConfig::from_env(&env).ok().map(|c| c.config_dir.join("policy.toml"));
    own.iter()
        .chain(layers.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")))
        .filter_map(|p| std::fs::read_to_string(p).ok().map(|text| (p, text)))
        .flat_map(|(p, text)| ua_policy::policy_toml::unused_sections(p, &text))
        .collect()
}

/// The grant `A` adds: the program the command runs, with any arguments,
/// when the command is one simple program.
pub fn grant_program(command: &str) -> Option<Grant> {
    let a = analyze(command);
    match a.parts.as_slice() {
        [part] if !part.program.is_empty() => Some(Grant::program(part.program.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(policy: &Policy, command: &str, human: bool) -> Verdict {
        let req = Request {
            command: command.into(),
            cwd: "/tmp".into(),
            session: "s".into(),
            depth: 0,
            human_attached: human,
            instruction: None,
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(policy.decide(req, Grants::new(), None)).verdict
    }

    #[test]
    fn an_unloaded_policy_asks_and_never_allows() {
        let (policy, warnings) = Policy::unloaded("loading it failed: the task panicked");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("the task panicked"), "{warnings:?}");
        // Even read-only commands ask: no policy permits anything.
        for command in ["ls", "touch notes.txt", "git status"] {
            let v = decide(&policy, command, true);
            assert_eq!(v.outcome, Outcome::Ask, "{command}: {v:?}");
            assert!(v.reason.contains("the task panicked"), "{v:?}");
            assert_eq!(decide(&policy, command, false).outcome, Outcome::Deny, "{command} without a person");
        }
        assert_eq!(decide(&policy, "rm -rf /", true).outcome, Outcome::Deny);
    }
}
