//! Sending a proposal through the safety pipeline (off the event loop)
//! and turning its verdict into a run, a question or a denial.

use super::*;

impl Session {
    /// The gate. Until the safety pipeline decides, every command asks,
    /// except one the user allowed for the session with `a`.
    /// Sends a proposal through the safety pipeline. The policy is loaded
    /// on first use; hooks run on a blocking thread and the judge on the
    /// network, so the loop goes on meanwhile and the answer comes back
    /// through [`Session::on_gated`].
    pub(super) fn start_gate(&mut self, p: Proposal) {
        if self.icpt.mode() == ua_term::intercept::Mode::Heuristic {
            let verdict = Verdict {
                outcome: Outcome::Deny,
                risk: "unrated".into(),
                reason: "shell integration is not working in this shell, so unixagent cannot run commands in it".into(),
                note: None,
                strong: false,
                rewritten: None,
                defines: Vec::new(),
            };
            self.on_verdict(p, verdict, false);
            return;
        }
        let request = PolicyRequest {
            command: p.command.clone(),
            cwd: self.agent.snapshot.cwd.clone(),
            session: self.agent.session_id.clone(),
            depth: crate::trace::TraceContext::inherited().depth,
            human_attached: self.agent.can_ask,
            instruction: self.agent.instruction.clone(),
        };
        let policy = self.agent.policy.clone();
        let loader = self.agent.policy_loader.take();
        let judge = self.agent.opts.judge.clone();
        let layers = self.agent.opts.policy_layers.clone();
        let grants = self.agent.grants.clone();
        let provider: Option<Arc<dyn Provider>> = self.agent.provider.clone().map(|p| p as Arc<dyn Provider>);
        self.agent.spin_at = Some(Instant::now());
        self.agent.gating = Some(tokio::spawn(async move {
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
        if self.agent.policy.is_none() {
            for w in &done.warnings {
                self.notice(format!("unixagent: {w}"));
            }
            self.agent.policy = Some(done.policy);
        }
        let verdict = done.gated.verdict.clone();
        self.agent.gated = Some(done.gated);
        self.on_verdict(done.proposal, verdict, true);
    }

    /// Applies the confirm mode to the gate's verdict ([`confirm::step`])
    /// and hands it to the turn.
    pub(super) fn on_verdict(&mut self, p: Proposal, mut verdict: Verdict, from_policy: bool) {
        let granted = self
            .agent
            .gated
            .as_ref()
            .and_then(|g| g.decision.as_ref())
            .is_some_and(|d| matches!(d.decided_by, ua_policy::gate::DecidedBy::Grant { .. }));
        let situation = Situation {
            mode: self.agent.opts.confirm,
            plan_approved: self.agent.plan_approved,
            granted,
            can_ask: self.agent.can_ask,
        };
        let step = confirm::step(&verdict, situation);
        self.agent.question_approves_plan = false;
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
                self.agent.question_approves_plan = approves_plan;
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
