//! What the agent side writes down: the session journal (every event,
//! enough to rebuild any model call) and the audit log (every decision,
//! with who made it and what came of it).

use super::*;

impl Session {
    /// Appends to the session journal. A failure is reported once and the
    /// session goes on without losing anything else.
    pub(in crate::session) fn journal(&mut self, entry: JournalEntry) {
        let Some(j) = self.agent.journal.as_mut() else { return };
        let ts = ua_store::session::now_ms();
        if let Err(e) = j.append_at(&entry, ts) {
            self.journal_write_failed(&e);
        }
        let Some((index, feed)) = self.agent.index.as_mut() else { return };
        let Some(record) = feed.feed(ts, &entry) else { return };
        if let Err(e) = index.append(&record)
            && !std::mem::replace(&mut self.agent.index_failed, true)
        {
            self.notice(format!("unixagent: {e}"));
        }
    }

    /// Marks a turn boundary in the journal, so a resume reads from here
    /// rather than from the start. A side file that could not be written
    /// only makes the next resume look for the line; that is not news.
    pub(in crate::session) fn journal_checkpoint(&mut self) {
        let Some(j) = self.agent.journal.as_mut() else { return };
        match j.checkpoint() {
            Ok(_) | Err(ua_store::StoreError::Checkpoint { .. }) => {}
            Err(e) => self.journal_write_failed(&e),
        }
    }

    /// Says once that the journal cannot be written; the session goes on.
    fn journal_write_failed(&mut self, e: &ua_store::StoreError) {
        if !std::mem::replace(&mut self.agent.journal_failed, true) {
            self.notice(format!("unixagent: the session journal could not be written ({e}); carrying on without it."));
        }
    }

    pub(super) fn journal_decision(
        &mut self,
        p: &Proposal,
        outcome: DecisionOutcome,
        decided_by: &str,
        approver: &str,
        risk: &str,
    ) {
        self.journal(JournalEntry::Decision {
            turn: self.agent.turn_no,
            tool_use_id: p.id.clone(),
            command: p.command.clone(),
            risk: risk.to_string(),
            outcome,
            decided_by: decided_by.to_string(),
            approver: Some(approver.to_string()),
        });
    }

    /// Journals the model's answer once the turn has added it.
    pub(super) fn journal_response(&mut self) {
        let Some(turn) = self.agent.turn.as_ref() else { return };
        let Some(message) = turn.messages().get(self.agent.journaled).filter(|m| m.role == Role::Assistant).cloned()
        else {
            return;
        };
        self.agent.journaled += 1;
        self.journal(JournalEntry::ModelResponse {
            turn: self.agent.turn_no,
            call: self.agent.call_no,
            message,
            usage: self.agent.call_usage,
            stop: self.agent.call_stop.clone(),
            purpose: ua_protocol::journal::CallPurpose::Conversation,
        });
    }

    pub(super) fn audit(&mut self, record: ua_policy::audit::Record) {
        let Some(policy) = self.agent.policy.clone() else { return };
        if let Err(e) = policy.audit(&record)
            && !self.agent.audit_failed
        {
            self.agent.audit_failed = true;
            self.notice(format!("unixagent: {e}"));
        }
    }

    pub(super) fn next_audit_id(&mut self) -> String {
        self.agent.audit_seq += 1;
        format!("{}-{}", self.agent.session_id, self.agent.audit_seq)
    }

    /// The policy's own decision (allow, deny, or the question it asked).
    pub(super) fn audit_decision(&mut self) {
        let Some(g) = self.agent.gated.clone() else { return };
        let Some(d) = &g.decision else { return };
        let id = self.next_audit_id();
        self.agent.audit_id = Some(id.clone());
        self.audit(ua_policy::audit::Record::decision(id, &g.request, d));
    }

    /// The person's answer to a question.
    pub(super) fn audit_human(&mut self, approved: bool) {
        let Some(g) = self.agent.gated.clone() else { return };
        let Some(d) = &g.decision else { return };
        let id = self.next_audit_id();
        self.agent.audit_id = Some(id.clone());
        self.audit(ua_policy::audit::Record::human(id, &g.request, d, approved));
    }

    /// How an approved command ended.
    pub(super) fn audit_outcome(&mut self, exit_code: i32, duration: Duration) {
        let Some(g) = self.agent.gated.clone() else { return };
        let Some(d) = &g.decision else { return };
        let id = self.agent.audit_id.clone().unwrap_or_else(|| self.next_audit_id());
        self.audit(ua_policy::audit::Record::outcome(id, &g.request, d, Some(exit_code), duration));
        if let Some(policy) = &self.agent.policy {
            policy.post_exec(g.request.clone(), d.clone(), exit_code, duration);
        }
    }
}

impl Session {
    /// Carries on a session reopened with `--continue` or `--resume`: the
    /// journal says so, and the conversation, its journaled part and the
    /// turn count are where the journal left them.
    pub(in crate::session) fn continue_from(
        &mut self,
        r: ua_store::resume::Resumed,
        shell: &std::path::Path,
        cwd: &str,
        before: ua_protocol::event::Usage,
    ) {
        self.journal(JournalEntry::Resumed {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            shell: shell.display().to_string(),
            cwd: cwd.to_string(),
            from_checkpoint: r.checkpoint.map(|c| c.seq),
        });
        self.journal_checkpoint();
        if self.json() {
            for line in super::super::resume_lines(&r, &self.agent.session_id.clone()) {
                self.notice(line);
            }
        }
        // The same session: what it used before counts against its budget.
        if let ua_backend::tokens::BudgetStatus::Warn { used, limit } = self.agent.budget.record(&before) {
            self.notice(format!("this session has used {used} of its {limit} tokens (max_tokens_per_session)"));
        }
        self.agent.history = r.conversation;
        self.agent.journaled = r.journaled;
        self.agent.turn_no = r.next_turn.saturating_sub(1);
    }
}
