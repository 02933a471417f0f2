//! The gate as a session uses it: the safety pipeline loaded once, a
//! decision per proposal made off the event loop, the session's grants,
//! the last decision (for the audit log and the journal), and the confirm
//! mode applied to each verdict.
//!
//! [`Gatekeeper`] owns all of it. The loop waits on [`Gatekeeper::decided`]
//! while a decision is on its way; the turn driver hands the result back
//! with [`Gatekeeper::settle`].

use super::*;
use crate::agent::gate::JudgeSettings;
use ua_policy::gate::Decision;
use ua_policy::grants::Grant;

/// A gate decision, with the policy it was made by (loaded on first use).
#[derive(Debug)]
pub(in crate::session) struct GateDone {
    proposal: Proposal,
    gated: Gated,
    policy: Arc<Policy>,
    warnings: Vec<String>,
}

/// The safety pipeline, its pending decision and the session's grants.
#[derive(Debug)]
pub(in crate::session) struct Gatekeeper {
    confirm: ConfirmMode,
    judge: JudgeSettings,
    /// Policy files that narrow the policy.
    layers: Vec<std::path::PathBuf>,
    /// The safety pipeline, loaded at the first proposal.
    policy: Option<Arc<Policy>>,
    /// The policy loading in the background since the first instruction.
    loader: Option<tokio::task::JoinHandle<(Policy, Vec<String>)>>,
    /// A decision on its way.
    deciding: Option<tokio::task::JoinHandle<GateDone>>,
    /// Commands approved with `a` / `A` for the rest of the session.
    grants: Grants,
    /// The last decision, for the audit log.
    last: Option<Gated>,
}

impl Gatekeeper {
    pub(in crate::session) fn new(confirm: ConfirmMode, judge: JudgeSettings, layers: Vec<std::path::PathBuf>) -> Self {
        Self { confirm, judge, layers, policy: None, loader: None, deciding: None, grants: Grants::new(), last: None }
    }

    pub(in crate::session) fn confirm(&self) -> ConfirmMode {
        self.confirm
    }

    /// Starts loading the policy, so the first proposal does not wait.
    pub(in crate::session) fn preload(&mut self) {
        if self.policy.is_none() && self.loader.is_none() {
            let (judge, layers) = (self.judge.clone(), self.layers.clone());
            self.loader = Some(tokio::task::spawn_blocking(move || Policy::load(&judge, &layers)));
        }
    }

    /// Sends a proposal through the safety pipeline. The policy is loaded
    /// on first use; hooks run on a blocking thread and the judge on the
    /// network, so the loop goes on meanwhile and the answer comes back
    /// through [`Gatekeeper::decided`].
    pub(in crate::session) fn decide(
        &mut self,
        p: Proposal,
        request: PolicyRequest,
        provider: Option<Arc<dyn Provider>>,
    ) {
        let policy = self.policy.clone();
        let loader = self.loader.take();
        let judge = self.judge.clone();
        let layers = self.layers.clone();
        let grants = self.grants.clone();
        self.deciding = Some(tokio::spawn(async move {
            let (policy, warnings) = match policy {
                Some(p) => (p, Vec::new()),
                None => {
                    let loaded = match loader {
                        Some(l) => l.await,
                        None => tokio::task::spawn_blocking(move || Policy::load(&judge, &layers)).await,
                    };
                    match loaded {
                        Ok((p, w)) => (Arc::new(p), w),
                        // Never a second load with fewer layers or other
                        // judge settings: that would be a wider policy.
                        Err(e) => Policy::unloaded(&format!("loading it failed: {e}")),
                    }
                }
            };
            let gated = policy.decide(request, grants, provider).await;
            GateDone { proposal: p, gated, policy, warnings }
        }));
    }

    /// A decision is on its way.
    pub(in crate::session) fn deciding(&self) -> bool {
        self.deciding.is_some()
    }

    /// The decision on its way, once it is made (`None` when there is
    /// none: the branch waiting on it is off).
    pub(in crate::session) async fn decided(&mut self) -> Option<Result<GateDone, tokio::task::JoinError>> {
        join_once(&mut self.deciding).await
    }

    /// Drops the decision on its way (the turn ended).
    pub(in crate::session) fn abort(&mut self) {
        if let Some(task) = self.deciding.take() {
            task.abort();
        }
    }

    /// Takes in a decision: the proposal and its verdict, and the warnings
    /// of a policy that has just loaded.
    pub(in crate::session) fn settle(&mut self, done: GateDone) -> (Proposal, Verdict, Vec<String>) {
        let mut warnings = Vec::new();
        if self.policy.is_none() {
            warnings = done.warnings;
            self.policy = Some(done.policy);
        }
        let verdict = done.gated.verdict.clone();
        self.last = Some(done.gated);
        (done.proposal, verdict, warnings)
    }

    /// The confirm mode and the plan applied to a verdict
    /// ([`confirm::step`]), and whether a session grant allowed it.
    pub(in crate::session) fn step(
        &self,
        verdict: &Verdict,
        plan_approved: bool,
        can_ask: bool,
    ) -> (confirm::Step, bool) {
        let granted = self
            .last
            .as_ref()
            .and_then(|g| g.decision.as_ref())
            .is_some_and(|d| matches!(d.decided_by, ua_policy::gate::DecidedBy::Grant { .. }));
        let situation = Situation { mode: self.confirm, plan_approved, granted, can_ask };
        (confirm::step(verdict, situation), granted)
    }

    /// The rule, hook, grant or mode behind the last decision.
    pub(in crate::session) fn decided_by(&self) -> Option<String> {
        self.last.as_ref().and_then(|g| g.decision.as_ref()).map(|d| d.decided_by.rule())
    }

    /// Whether the last decision rated its command read-only.
    pub(in crate::session) fn read_only(&self) -> bool {
        self.last.as_ref().is_some_and(|g| g.verdict.risk == "read_only")
    }

    /// The last decision's request and the policy's decision, when the
    /// policy made one (for the audit log).
    pub(in crate::session) fn last(&self) -> Option<(&PolicyRequest, &Decision)> {
        let g = self.last.as_ref()?;
        Some((&g.request, g.decision.as_ref()?))
    }

    /// The policy, once loaded (its audit log).
    pub(in crate::session) fn policy(&self) -> Option<&Policy> {
        self.policy.as_deref()
    }

    /// Allows more commands for the rest of the session (`a`, `A`).
    pub(in crate::session) fn grant(&mut self, grant: Grant) {
        self.grants.add(grant);
    }

    /// Runs the post-exec hooks for the last decision's command.
    pub(in crate::session) fn post_exec(&self, exit_code: i32, duration: Duration) {
        if let (Some(policy), Some((req, d))) = (&self.policy, self.last()) {
            policy.post_exec(req.clone(), d.clone(), exit_code, duration);
        }
    }
}

impl Session {
    /// The gate. Until the safety pipeline decides, every command asks,
    /// except one the user allowed for the session with `a`.
    /// Sends a proposal through the safety pipeline. The policy is loaded
    /// on first use; hooks run on a blocking thread and the judge on the
    /// network, so the loop goes on meanwhile and the answer comes back
    /// through [`Session::on_gated`].
    pub(super) fn start_gate(&mut self, p: Proposal) {
        if !self.proxy.markers() {
            let verdict = Verdict {
                outcome: Outcome::Deny,
                risk: "unrated".into(),
                reason: "shell integration is not working in this shell, so unixagent cannot run commands in it".into(),
                note: None,
                strong: false,
                rewritten: None,
            };
            self.on_verdict(p, verdict, false);
            return;
        }
        let request = PolicyRequest {
            command: p.command.clone(),
            cwd: self.agent.snapshot.cwd.clone(),
            session: self.agent.records.session_id().to_string(),
            depth: 0,
            human_attached: self.agent.can_ask,
            instruction: self.agent.instruction.clone(),
        };
        let provider = self.agent.model.provider();
        self.agent.spin_at = Some(Instant::now());
        self.agent.gate.decide(p, request, provider);
    }

    pub(in crate::session) fn on_gated(&mut self, done: Option<Result<GateDone, tokio::task::JoinError>>) {
        self.agent.spin_at = None;
        let out = self.agent.render.clear();
        self.show(&out);
        let Some(Ok(done)) = done else {
            // Cancelled (the turn ended) or the task failed: nothing to do
            // for a turn that is gone; a live one is told.
            if self.agent.turn.as_ref().is_some_and(|t| t.current().is_some()) {
                let effects = self.turn_input(|t| t.cancel());
                self.apply(effects);
            }
            return;
        };
        let (proposal, verdict, warnings) = self.agent.gate.settle(done);
        for w in &warnings {
            self.notice(format!("unixagent: {w}"));
        }
        self.on_verdict(proposal, verdict, true);
    }

    /// Applies the confirm mode to the gate's verdict ([`confirm::step`])
    /// and hands it to the turn.
    pub(super) fn on_verdict(&mut self, p: Proposal, mut verdict: Verdict, from_policy: bool) {
        let (step, granted) = self.agent.gate.step(&verdict, self.agent.asking.plan_approved(), self.agent.can_ask);
        self.agent.asking.set_approves_plan(false);
        match step {
            confirm::Step::Run { by_plan: true } => {
                verdict.outcome = Outcome::Allow;
                verdict.reason = "approved with the plan".into();
                self.journal_decision(&p, DecisionOutcome::Run, &verdict.reason, "human", &verdict.risk);
                self.audit_human(true);
            }
            confirm::Step::Ask { approves_plan, .. } => {
                if verdict.outcome == Outcome::Allow {
                    verdict.reason = format!("{} (confirm_mode = each asks anyway)", verdict.reason);
                }
                verdict.outcome = Outcome::Ask;
                self.agent.asking.set_approves_plan(approves_plan);
            }
            confirm::Step::Run { by_plan: false } | confirm::Step::Deny => {
                let outcome = if step == confirm::Step::Deny {
                    if verdict.outcome == Outcome::Ask {
                        verdict.reason =
                            format!("approval is needed and there is no terminal to ask on: {}", verdict.reason);
                    }
                    verdict.outcome = Outcome::Deny;
                    DecisionOutcome::Denied
                } else {
                    DecisionOutcome::Run
                };
                let approver = if granted { "grant" } else { "policy" };
                self.journal_decision(&p, outcome, &verdict.reason, approver, &verdict.risk);
                if from_policy {
                    self.audit_decision();
                }
            }
        }
        if let Some(r) = verdict.rewritten.as_ref().filter(|r| r.by_hook) {
            self.notice(format!("a hook rewrote the command: {}", r.command));
        }
        if verdict.outcome == Outcome::Deny {
            let rule = self.decided_by();
            self.emit(events::command(&p, &verdict, GateDecision::Deny, rule));
        }
        let effects = self.turn_input(|t| t.verdict(verdict));
        self.apply(effects);
    }
}
