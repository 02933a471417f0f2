//! The gate as a session uses it: the safety pipeline loaded once, a
//! decision per proposal made off the event loop, the session's grants,
//! the last decision (for the audit log and the journal), and the confirm
//! mode applied to each verdict.
//!
//! [`Gatekeeper`] owns all of it. The loop waits on [`Gatekeeper::decided`]
//! while a decision is on its way; the turn driver hands the result back
//! with [`Gatekeeper::settle`].

use std::sync::Arc;
use std::time::Duration;

use ua_backend::provider::Provider;
use ua_policy::gate::{Decision, Request as PolicyRequest};
use ua_policy::grants::{Grant, Grants};

use crate::agent::ConfirmMode;
use crate::agent::confirm::{self, Situation};
use crate::agent::gate::{Gated, JudgeSettings, Policy};
use crate::agent::turn::{Outcome, Proposal, Verdict};
use ua_protocol::journal::DecisionOutcome;

/// A gate decision, with the policy it was made by (loaded on first use).
#[derive(Debug)]
pub(in crate::session) struct GateDone {
    proposal: Proposal,
    gated: Gated,
    policy: Arc<Policy>,
    warnings: Vec<String>,
}

/// A verdict after the confirm mode and the plan ([`Gatekeeper::confirm`]).
#[derive(Debug)]
pub(in crate::session) struct Confirmed {
    pub verdict: Verdict,
    /// Decided without a question: the journal's outcome and approver.
    pub decided: Option<(DecisionOutcome, &'static str)>,
    /// What the audit log gets for it.
    pub audit: Option<Audit>,
    /// A `y` to the question about it approves the rest of the plan.
    pub approves_plan: bool,
}

/// The audit record of a decision made without a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) enum Audit {
    /// The person's `y` to the plan approved it.
    ApprovedByPlan,
    /// The policy's own decision (recorded when the policy made it).
    Policy,
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

    /// A policy already loaded (tests decide with one made for them).
    #[cfg(test)]
    pub(in crate::session) fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    pub(in crate::session) fn mode(&self) -> ConfirmMode {
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
        match &mut self.deciding {
            Some(task) => {
                let done = task.await;
                self.deciding = None;
                Some(done)
            }
            None => std::future::pending().await,
        }
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
    /// ([`confirm::step`]): what the turn takes, and what the journal and
    /// the audit log get now.
    pub(in crate::session) fn confirm(&self, mut verdict: Verdict, plan_approved: bool, can_ask: bool) -> Confirmed {
        let granted = self
            .last
            .as_ref()
            .and_then(|g| g.decision.as_ref())
            .is_some_and(|d| matches!(d.decided_by, ua_policy::gate::DecidedBy::Grant { .. }));
        let situation = Situation { mode: self.confirm, plan_approved, granted, can_ask };
        let step = confirm::step(&verdict, situation);
        let (decided, audit, approves_plan) = match step {
            confirm::Step::Run { by_plan: true } => {
                verdict.outcome = Outcome::Allow;
                verdict.reason = "approved with the plan".into();
                (Some((DecisionOutcome::Run, "human")), Some(Audit::ApprovedByPlan), false)
            }
            confirm::Step::Ask { approves_plan, .. } => {
                if verdict.outcome == Outcome::Allow {
                    verdict.reason = format!("{} (confirm_mode = each asks anyway)", verdict.reason);
                }
                verdict.outcome = Outcome::Ask;
                (None, None, approves_plan)
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
                (Some((outcome, if granted { "grant" } else { "policy" })), Some(Audit::Policy), false)
            }
        };
        Confirmed { verdict, decided, audit, approves_plan }
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
