//! The decision cascade: one proposed command in, one [`Decision`] out.
//!
//! ```text
//! paging turned off in the command (crate::paging)
//!   -> classifier floor / deny list, git parts raised by their
//!      repository's configuration (crate::gitrepo)
//!   -> Cedar forbid -> pre-exec hooks
//!   -> Cedar permit, or the fallback mode (allow | ask | deny)
//!   -> session grants (only where the answer would be "ask")
//!   -> [judge, for risky commands: Gate::apply_judge]
//!   -> the human (the caller, for Outcome::Ask)
//! ```
//!
//! Each layer can end the cascade or pass the command on; later layers may
//! raise the outcome (allow -> ask -> deny) but nothing lowers the
//! classifier's floor: a command the classifier or the deny list calls
//! Denied is denied before any policy, hook, grant or judge is consulted.
//! A hook that modifies the command sends the new command through the
//! whole cascade again, at most [`PolicyConfig::max_rewrites`] times.
//!
//! [`Gate::decide`] is synchronous because hooks are processes: call it on
//! a thread that may block (`spawn_blocking`). The judge is a model call,
//! so it is not run here: when [`Decision::run_judge`] is true, the caller
//! runs [`crate::judge::judge`] with [`Decision::judge_input`] and folds
//! the answer in with [`Gate::apply_judge`]. An [`Outcome::Ask`] left after
//! that goes to the human; with no human attached it must be treated as a
//! denial (or passed to the parent agent as an approval request).
//!
//! ```
//! use ua_policy::gate::{DecidedBy, Gate, Outcome, PolicyConfig, Request};
//! use ua_policy::grants::{Grant, Grants};
//!
//! # fn main() -> Result<(), ua_policy::error::PolicyError> {
//! // Missing config files are fine: the built-in policy applies.
//! let cfg = PolicyConfig::new("/nonexistent/.config/unixagent", "/nonexistent/.local/share/unixagent", "/home/me");
//! let gate = Gate::load(&cfg)?;
//! let req = |command: &str| Request {
//!     command: command.into(),
//!     cwd: "/home/me/src".into(),
//!     session: "s1".into(),
//!     depth: 0,
//!     human_attached: true,
//!     instruction: Some("tidy the repository".into()),
//! };
//! let mut grants = Grants::new();
//! assert_eq!(gate.decide(&req("git status"), &grants).outcome, Outcome::Allow);
//! assert_eq!(gate.decide(&req("touch notes.txt"), &grants).outcome, Outcome::Ask);
//!
//! // The human answered "allow touch for this session".
//! grants.add(Grant::program("touch"));
//! let d = gate.decide(&req("touch notes.txt"), &grants);
//! assert!(matches!(d.decided_by, DecidedBy::Grant { .. }));
//!
//! // Nothing lowers the floor.
//! grants.add(Grant::exact("rm -rf /"));
//! assert_eq!(gate.decide(&req("rm -rf /"), &grants).outcome, Outcome::Deny);
//! # Ok(())
//! # }
//! ```

use crate::cedar::{self, Engine, Hit, Places, Subject, load};
use crate::classify::{self, Analysis};
use crate::error::PolicyError;
use crate::gitrepo;
use crate::grants::{Grant, Grants};
use crate::hooks::{self, Event, Failure, HookConfig, Reply};
use crate::judge::{JudgeConfig, JudgeError, JudgeInput, JudgeMode, Safety, Verdict};
use crate::paging;
use crate::policy_toml::{Mode, Modes};
use crate::risk::Risk;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where policies and hooks come from.
#[derive(Debug, Clone)]
pub struct PolicyConfig {
    /// `$XDG_CONFIG_HOME/unixagent`: policy.cedar, policy.toml, hooks/.
    pub config_dir: PathBuf,
    /// `$XDG_DATA_HOME/unixagent`: the audit log and sessions.
    pub data_dir: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// Policy files (`.cedar` or `.toml`) that narrow the base policy, one
    /// layer each: a child agent's `--policy`, and its parents'.
    pub narrowing: Vec<PathBuf>,
    /// Hooks listed in the configuration, and hook limits. Hooks in
    /// `config_dir/hooks/` are added at load.
    pub hooks: HookConfig,
    /// When the judge runs and how it counts.
    pub judge: JudgeConfig,
    /// How many times hooks may rewrite one command (default 3).
    pub max_rewrites: u8,
}

impl PolicyConfig {
    /// A configuration with the given directories and defaults otherwise.
    pub fn new(config_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        PolicyConfig {
            config_dir: config_dir.into(),
            data_dir: data_dir.into(),
            home: home.into(),
            narrowing: Vec::new(),
            hooks: HookConfig::default(),
            judge: JudgeConfig::default(),
            max_rewrites: 3,
        }
    }

    /// The XDG locations: `$XDG_CONFIG_HOME/unixagent` (or
    /// `~/.config/unixagent`) and `$XDG_DATA_HOME/unixagent` (or
    /// `~/.local/share/unixagent`).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, PolicyError> {
        let home = env("HOME").filter(|h| h.starts_with('/')).ok_or_else(|| PolicyError::Io {
            path: PathBuf::from("$HOME"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "HOME is not set to an absolute path"),
        })?;
        let xdg = |var: &str, fallback: &str| {
            env(var)
                .filter(|v| v.starts_with('/'))
                .map_or_else(|| Path::new(&home).join(fallback), PathBuf::from)
                .join("unixagent")
        };
        Ok(PolicyConfig::new(xdg("XDG_CONFIG_HOME", ".config"), xdg("XDG_DATA_HOME", ".local/share"), home.clone()))
    }

    /// The audit log's path.
    pub fn audit_path(&self) -> PathBuf {
        self.data_dir.join("audit.jsonl")
    }

    /// Reads the policy files: the built-in policy, `policy.cedar` and
    /// `policy.toml` in the config directory (each optional), and the
    /// narrowing files (required).
    pub fn sources(&self) -> Result<load::Sources, PolicyError> {
        let places = self.places();
        let mut base = vec![load::builtin(&places)];
        if let Some(src) = optional(&self.config_dir.join("policy.cedar"), |p| load::read_cedar(p, &places))? {
            base.push(src);
        }
        let toml = optional(&self.config_dir.join("policy.toml"), |p| load::read_toml(p, &places))?;
        let mut narrowing = Vec::new();
        for path in &self.narrowing {
            if path.extension().is_some_and(|e| e == "toml") {
                narrowing.push(load::read_toml(path, &places)?);
            } else {
                // A Cedar file has no modes: it leaves the fallback as is.
                narrowing.push((load::read_cedar(path, &places)?, Modes::uniform(Mode::Allow)));
            }
        }
        Ok(load::Sources { base, toml, narrowing })
    }

    pub(crate) fn places(&self) -> Places {
        let s = |p: &Path| crate::paths::normalize(&p.to_string_lossy());
        Places { home: s(&self.home), config_dir: s(&self.config_dir), data_dir: s(&self.data_dir) }
    }
}

/// One command proposed by the agent.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// The shell text.
    pub command: String,
    /// The absolute directory it would run in.
    pub cwd: String,
    /// Session id.
    pub session: String,
    /// Agent nesting depth (0 = started by a human).
    pub depth: u32,
    /// Whether a human can answer a prompt.
    pub human_attached: bool,
    /// The user's instruction (for hooks and the judge).
    pub instruction: Option<String>,
}

/// The cascade's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Run it.
    Allow,
    /// Ask the human; with no human attached, do not run it.
    Ask,
    /// Do not run it.
    Deny,
}

impl Outcome {
    /// `allow`, `ask` or `deny`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Ask => "ask",
            Outcome::Deny => "deny",
        }
    }
}

/// The layer that decided, with what it needs to be found again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "layer")]
pub enum DecidedBy {
    /// A deny-list rule matched.
    DenyList {
        /// The rule's id.
        rule: String,
    },
    /// The classifier: Denied risk, or nothing to run.
    Classifier,
    /// A Cedar policy (a forbid, or the permit of the first request).
    Policy {
        /// The policy's `@id`.
        policy: String,
        /// The file it is in.
        file: String,
        /// The request it answered.
        request: String,
    },
    /// Cedar could not evaluate a request.
    PolicyError,
    /// A pre-exec hook (denied, failed, or rewrote too often).
    Hook {
        /// The hook's file name.
        hook: String,
    },
    /// No policy permitted a request; the fallback mode decided.
    Mode {
        /// The mode.
        mode: Mode,
        /// The request that was not permitted.
        request: String,
    },
    /// A session grant.
    Grant {
        /// The grant.
        grant: Grant,
    },
    /// The judge.
    Judge,
}

impl DecidedBy {
    /// A short rule name for the audit log: `deny:rm-root`,
    /// `cedar:builtin.ssh`, `hook:pre-exec.sh`, `mode:ask`, `grant:…`.
    pub fn rule(&self) -> String {
        match self {
            DecidedBy::DenyList { rule } => format!("deny:{rule}"),
            DecidedBy::Classifier => "classifier".into(),
            DecidedBy::Policy { policy, .. } => format!("cedar:{policy}"),
            DecidedBy::PolicyError => "cedar:error".into(),
            DecidedBy::Hook { hook } => format!("hook:{hook}"),
            DecidedBy::Mode { mode, .. } => format!("mode:{}", mode.name()),
            DecidedBy::Grant { grant } => format!("grant:{}", grant.describe()),
            DecidedBy::Judge => "judge".into(),
        }
    }
}

/// Where the judge stands for this decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum JudgeStatus {
    /// Below the judge's risk threshold, judge off, or already denied.
    NotNeeded,
    /// The caller should run the judge and call [`Gate::apply_judge`].
    Pending {
        /// How its answer will count.
        mode: JudgeMode,
    },
    /// The judge answered.
    Done {
        /// How it counted.
        mode: JudgeMode,
        /// Its verdict.
        verdict: Verdict,
    },
    /// The judge call failed.
    Failed {
        /// How the failure counted.
        mode: JudgeMode,
        /// What went wrong.
        error: JudgeError,
    },
}

/// What one pre-exec hook said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookResult {
    /// The hook's file name.
    pub hook: String,
    /// The command it saw.
    pub command: String,
    /// Its reply, or why it counts as a denial.
    pub result: Result<Reply, Failure>,
}

/// Who rewrote a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Rewriter {
    /// unixagent itself turned paging off ([`crate::paging`]).
    Paging,
    /// A pre-exec hook.
    Hook {
        /// The hook's file name.
        hook: String,
    },
}

/// A rewrite of the command, by unixagent or a hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rewrite {
    /// Who rewrote it.
    #[serde(flatten)]
    pub by: Rewriter,
    /// The command before.
    pub from: String,
    /// The command after.
    pub to: String,
    /// Why.
    pub reason: Option<String>,
}

/// The reason given for [`Rewriter::Paging`].
pub const PAGING_REASON: &str = "paging turned off: a pager would hold the terminal and can run commands";

/// The structured result of the cascade for one command.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The command to run (after any rewrites).
    pub command: String,
    /// Rewrites (unixagent's paging edit, hooks'), in order; empty when
    /// the command runs as proposed.
    pub rewrites: Vec<Rewrite>,
    /// The classifier's analysis of [`Decision::command`].
    pub analysis: Analysis,
    /// The command's risk (the classifier's floor).
    pub risk: Risk,
    /// Allow, ask or deny.
    pub outcome: Outcome,
    /// The layer that decided.
    pub decided_by: DecidedBy,
    /// Why, for people.
    pub reason: String,
    /// Cedar's answer (absent when the cascade stopped before Cedar).
    pub policy: Option<cedar::Verdict>,
    /// What each pre-exec hook said (over all rewrites).
    pub hooks: Vec<HookResult>,
    /// The judge.
    pub judge: JudgeStatus,
    /// Notes to show with the decision (a judge warning, a judge failure).
    pub notes: Vec<String>,
}

impl Decision {
    /// True when the caller should run the judge before acting.
    pub fn run_judge(&self) -> bool {
        matches!(self.judge, JudgeStatus::Pending { .. })
    }

    /// What the judge may see: the command, the instruction, the cwd.
    pub fn judge_input(&self, req: &Request) -> JudgeInput {
        JudgeInput { commands: vec![self.command.clone()], instruction: req.instruction.clone(), cwd: req.cwd.clone() }
    }
}

/// Loaded policies and hooks. Cheap to share (`Send + Sync`); every call is
/// independent.
#[derive(Debug)]
pub struct Gate {
    engine: Engine,
    hooks: HookConfig,
    judge: JudgeConfig,
    max_rewrites: u8,
    home: String,
    repos: gitrepo::Inspector,
}

enum Step {
    Done(Box<Decision>),
    Rewrite(Box<Decision>, Rewrite),
}

impl Gate {
    /// Loads the built-in policy, the user's `policy.cedar` and
    /// `policy.toml`, the narrowing files and the hooks, validating every
    /// policy against the schema.
    pub fn load(cfg: &PolicyConfig) -> Result<Gate, PolicyError> {
        let places = cfg.places();
        let schema = load::schema()?;
        let sources = cfg.sources()?;
        let mut base = sources.base;
        let mut modes = Modes::uniform(Mode::Ask);
        if let Some((src, m)) = sources.toml {
            base.push(src);
            modes = m;
        }
        let mut layers = vec![load::layer("base", &base, modes, &schema)?];
        for (i, (src, modes)) in sources.narrowing.into_iter().enumerate() {
            let name = format!("narrowing {}", i + 1);
            layers.push(load::layer(&name, &[load::builtin(&places), src], modes, &schema)?);
        }
        let hooks = cfg.hooks.clone().discover(&cfg.config_dir)?;
        hooks.check()?;
        Ok(Gate {
            engine: Engine::new(schema, layers)?,
            hooks,
            judge: cfg.judge,
            max_rewrites: cfg.max_rewrites,
            home: places.home,
            repos: gitrepo::Inspector::default(),
        })
    }

    /// The Cedar engine (for `policy check` and tests).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The hooks that will run.
    pub fn hooks(&self) -> &HookConfig {
        &self.hooks
    }

    /// Runs the cascade. Blocking: pre-exec hooks are processes, and the
    /// repository of a git command is read from disk.
    pub fn decide(&self, req: &Request, grants: &Grants) -> Decision {
        let mut command = req.command.clone();
        let mut rewrites = Vec::new();
        let mut hook_rewrites = 0;
        let mut hook_log = Vec::new();
        loop {
            let mut analysis = classify::analyze(&command);
            if let Some(edit) = paging::turn_off(&analysis) {
                rewrites.push(Rewrite {
                    by: Rewriter::Paging,
                    from: command.clone(),
                    to: edit.command.clone(),
                    reason: Some(PAGING_REASON.into()),
                });
                command = edit.command;
                analysis = edit.analysis;
            }
            match self.once(&command, analysis, req, grants, &mut hook_log) {
                Step::Done(mut d) => {
                    d.rewrites = rewrites;
                    d.hooks = hook_log;
                    return *d;
                }
                Step::Rewrite(mut d, rw) => {
                    if hook_rewrites >= self.max_rewrites {
                        d.outcome = Outcome::Deny;
                        d.reason = format!("hooks rewrote the command more than {} times", self.max_rewrites);
                        d.decided_by = match rw.by {
                            Rewriter::Hook { hook } => DecidedBy::Hook { hook },
                            Rewriter::Paging => DecidedBy::Classifier,
                        };
                        d.judge = JudgeStatus::NotNeeded;
                        d.rewrites = rewrites;
                        d.hooks = hook_log;
                        return *d;
                    }
                    hook_rewrites += 1;
                    command = rw.to.clone();
                    rewrites.push(rw);
                }
            }
        }
    }

    /// Raises to Write each git part that the configuration of the
    /// repository it runs in makes run a program, with that as its reason;
    /// returns the reasons, to be shown with the decision.
    fn repository_floor(&self, analysis: &mut Analysis, cwd: &str) -> Vec<String> {
        let found = self.repos.inspect(analysis, cwd, &self.home);
        for (i, why) in &found {
            if let Some(p) = analysis.parts.get_mut(*i) {
                p.risk = p.risk.max(Risk::Write);
                p.reason.clone_from(why);
            }
        }
        if !found.is_empty() && analysis.denied.is_none() {
            analysis.risk = analysis.parts.iter().map(|p| p.risk).max().unwrap_or(Risk::ReadOnly).max(analysis.risk);
        }
        found.into_iter().map(|(_, why)| why).collect()
    }

    fn once(
        &self,
        command: &str,
        mut analysis: Analysis,
        req: &Request,
        grants: &Grants,
        hook_log: &mut Vec<HookResult>,
    ) -> Step {
        let notes = if analysis.denied.is_none() { self.repository_floor(&mut analysis, &req.cwd) } else { Vec::new() };
        let risk = analysis.risk;
        let mut d = Decision {
            command: command.to_string(),
            rewrites: Vec::new(),
            risk,
            outcome: Outcome::Deny,
            decided_by: DecidedBy::Classifier,
            reason: String::new(),
            policy: None,
            hooks: Vec::new(),
            judge: JudgeStatus::NotNeeded,
            notes,
            analysis,
        };

        // 1. The floor: the deny list and the classifier's Denied.
        if let Some(m) = &d.analysis.denied {
            d.decided_by = DecidedBy::DenyList { rule: m.rule.to_string() };
            d.reason = m.reason.clone();
            return Step::Done(Box::new(d));
        }
        if risk == Risk::Denied {
            d.reason = "the classifier denies this command".into();
            return Step::Done(Box::new(d));
        }
        if d.analysis.parsed.parts.is_empty() {
            d.reason = "the command runs nothing".into();
            return Step::Done(Box::new(d));
        }

        // 2. Cedar forbids (and evaluation errors, which fail closed).
        let who = Subject {
            session: &req.session,
            depth: req.depth,
            human_attached: req.human_attached,
            cwd: &req.cwd,
            home: &self.home,
        };
        let verdict = self.engine.evaluate(&d.analysis, &who);
        if let Some(f) = &verdict.forbid {
            d.decided_by = policy_by(f);
            d.reason = f.reason.clone().unwrap_or_else(|| format!("policy {} forbids {}", f.policy, f.request));
            d.policy = Some(verdict);
            return Step::Done(Box::new(d));
        }
        if let Some(e) = &verdict.error {
            d.decided_by = DecidedBy::PolicyError;
            d.reason = e.clone();
            d.policy = Some(verdict);
            return Step::Done(Box::new(d));
        }

        // 3. Pre-exec hooks.
        if !self.hooks.pre_exec.is_empty() {
            let input = hook_input(&d, req);
            for path in &self.hooks.pre_exec {
                let name = hooks::hook_name(path);
                let result = hooks::run(path, Event::PreExec, &input, &self.hooks.limits);
                hook_log.push(HookResult { hook: name.clone(), command: command.to_string(), result: result.clone() });
                match result {
                    Ok(Reply::Allow { .. }) => {}
                    Ok(Reply::Deny { reason }) => {
                        d.decided_by = DecidedBy::Hook { hook: name.clone() };
                        d.reason = reason.unwrap_or_else(|| format!("hook {name} denied the command"));
                        d.policy = Some(verdict);
                        return Step::Done(Box::new(d));
                    }
                    Ok(Reply::Modify { command: to, reason }) => {
                        if to.trim() != command.trim() {
                            d.policy = Some(verdict);
                            let rw =
                                Rewrite { by: Rewriter::Hook { hook: name }, from: command.to_string(), to, reason };
                            return Step::Rewrite(Box::new(d), rw);
                        }
                    }
                    Err(f) => {
                        d.decided_by = DecidedBy::Hook { hook: name.clone() };
                        d.reason = format!("hook {name} {f}");
                        d.policy = Some(verdict);
                        return Step::Done(Box::new(d));
                    }
                }
            }
        }

        // 4. Cedar permits, or the fallback mode.
        if verdict.permitted() {
            d.outcome = Outcome::Allow;
            match verdict.permits.first() {
                Some(p) => {
                    d.decided_by = policy_by(p);
                    d.reason = p.reason.clone().unwrap_or_else(|| format!("policy {} permits it", p.policy));
                }
                None => d.reason = "policy permits it".into(),
            }
        } else if let Some(u) = verdict.fallback() {
            d.outcome = match u.mode {
                Mode::Allow => Outcome::Allow,
                Mode::Ask => Outcome::Ask,
                Mode::Deny => Outcome::Deny,
            };
            d.decided_by = DecidedBy::Mode { mode: u.mode, request: u.request.clone() };
            d.reason = format!("no policy permits {}; the mode for {} is {}", u.request, u.action, u.mode.name());
        }
        d.policy = Some(verdict);

        // 5. Session grants answer for the human.
        if d.outcome == Outcome::Ask
            && let Some(g) = grants.covers(&d.analysis)
        {
            d.outcome = Outcome::Allow;
            d.reason = format!("allowed for this session: {}", g.describe());
            d.decided_by = DecidedBy::Grant { grant: g.clone() };
        }

        // 6. Whether the judge must look.
        let mode = self.judge.mode.unwrap_or_else(|| JudgeMode::default_for(req.depth, req.human_attached));
        if d.outcome != Outcome::Deny && mode != JudgeMode::Off && risk >= self.judge.min_risk {
            d.judge = JudgeStatus::Pending { mode };
        }
        Step::Done(Box::new(d))
    }

    /// Folds the judge's answer into a decision. It can only raise the
    /// outcome: a safe verdict changes nothing; an unsafe one denies (block)
    /// or turns an allow into an ask with a warning (warn); a failure denies
    /// (block) or adds a visible note (warn).
    pub fn apply_judge(&self, mut d: Decision, result: Result<Verdict, JudgeError>) -> Decision {
        let JudgeStatus::Pending { mode } = d.judge else {
            return d;
        };
        match result {
            Ok(v) => {
                if v.safety == Safety::Unsafe {
                    let alt = v.safer_alternative.as_ref().map_or(String::new(), |a| format!("; safer: {a}"));
                    let why = format!("the judge calls this unsafe: {}{alt}", v.reason);
                    match mode {
                        JudgeMode::Block => {
                            d.outcome = Outcome::Deny;
                            d.decided_by = DecidedBy::Judge;
                            d.reason = why;
                        }
                        JudgeMode::Warn | JudgeMode::Off => {
                            if d.outcome == Outcome::Allow {
                                d.outcome = Outcome::Ask;
                                d.decided_by = DecidedBy::Judge;
                                d.reason = why.clone();
                            }
                            d.notes.push(why);
                        }
                    }
                }
                d.judge = JudgeStatus::Done { mode, verdict: v };
            }
            Err(e) => {
                match mode {
                    JudgeMode::Block => {
                        d.outcome = Outcome::Deny;
                        d.decided_by = DecidedBy::Judge;
                        d.reason = format!("{e}, and the judge must approve risky commands here");
                    }
                    JudgeMode::Warn | JudgeMode::Off => {
                        d.notes.push(format!("{e}; the command was not reviewed"));
                    }
                }
                d.judge = JudgeStatus::Failed { mode, error: e };
            }
        }
        d
    }

    /// Runs the post-exec hooks for a command that ran. Their answers are
    /// not decisions; failures are returned for the caller to report.
    pub fn post_exec(
        &self,
        req: &Request,
        d: &Decision,
        exit_code: Option<i32>,
        duration: Duration,
    ) -> Vec<HookResult> {
        let mut input = hook_input(d, req);
        input["event"] = "post-exec".into();
        input["exit_code"] = exit_code.into();
        input["duration_ms"] = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).into();
        self.hooks
            .post_exec
            .iter()
            .map(|path| HookResult {
                hook: hooks::hook_name(path),
                command: d.command.clone(),
                result: hooks::run(path, Event::PostExec, &input, &self.hooks.limits),
            })
            .collect()
    }
}

fn policy_by(h: &Hit) -> DecidedBy {
    DecidedBy::Policy { policy: h.policy.clone(), file: h.file.clone(), request: h.request.clone() }
}

fn optional<T>(path: &Path, read: impl Fn(&Path) -> Result<T, PolicyError>) -> Result<Option<T>, PolicyError> {
    match read(path) {
        Ok(v) => Ok(Some(v)),
        Err(PolicyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What hooks see: the command, where and by whom, and the analysis.
fn hook_input(d: &Decision, req: &Request) -> serde_json::Value {
    let parts: Vec<serde_json::Value> = d
        .analysis
        .parsed
        .parts
        .iter()
        .zip(&d.analysis.parts)
        .map(|(p, r)| {
            serde_json::json!({
                "program": r.program,
                "argv": p.argv.iter().map(|a| a.text.as_str()).collect::<Vec<_>>(),
                "wrappers": p.wrappers,
                "risk": r.risk,
                "reason": r.reason,
                "reads": r.effects.reads,
                "writes": r.effects.writes,
                "hosts": r.effects.hosts,
            })
        })
        .collect();
    serde_json::json!({
        "event": "pre-exec",
        "type": "shell",
        "command": d.command,
        "cwd": req.cwd,
        "session": req.session,
        "depth": req.depth,
        "human_attached": req.human_attached,
        "instruction": req.instruction,
        "risk": d.risk,
        "parts": parts,
    })
}
