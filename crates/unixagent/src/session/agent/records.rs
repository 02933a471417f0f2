//! What the agent side writes down: the session journal (every event,
//! enough to rebuild any model call), the session index fed from it, and
//! the audit log (every decision, with who made it and what came of it).
//!
//! [`Records`] owns all three writers and their "failed once" flags. A
//! write that fails is reported once, as a notice in the outbox, and the
//! session goes on without losing anything else.

use super::*;
use crate::session::Indexing;
use crate::session::outbox::Outbox;

/// The journal, the index and the audit log of one session.
#[derive(Debug)]
pub(in crate::session) struct Records {
    /// The session's id (for audit records and the policy's requests).
    session_id: String,
    /// The session journal; `None` when it could not be opened.
    journal: Option<Journal>,
    /// A journal write failed and the user has been told once.
    journal_failed: bool,
    /// Messages of the conversation already in the journal.
    journaled: usize,
    /// The session index and what this session adds to it, as the journal
    /// gets the entries that matter (start, turns, end).
    index: Option<Indexing>,
    /// An index update failed and the user has been told once.
    index_failed: bool,
    audit_seq: u64,
    /// The audit id of the current command's records.
    audit_id: Option<String>,
    audit_failed: bool,
}

impl Records {
    pub(in crate::session) fn new(session_id: String, journal: Option<Journal>, index: Option<Indexing>) -> Self {
        Self {
            session_id,
            journal,
            journal_failed: false,
            journaled: 0,
            index,
            index_failed: false,
            audit_seq: 0,
            audit_id: None,
            audit_failed: false,
        }
    }

    pub(in crate::session) fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The journal's path, when there is one.
    pub(in crate::session) fn journal_path(&self) -> Option<&std::path::Path> {
        self.journal.as_ref().map(Journal::path)
    }

    /// Appends to the session journal, and to the index what it takes
    /// from the entry.
    pub(in crate::session) fn record(&mut self, entry: JournalEntry, out: &mut Outbox) {
        let Some(j) = self.journal.as_mut() else { return };
        let ts = ua_store::session::now_ms();
        if let Err(e) = j.append_at(&entry, ts) {
            self.journal_write_failed(&e, out);
        }
        let Some((index, feed)) = self.index.as_mut() else { return };
        let Some(record) = feed.feed(ts, &entry) else { return };
        if let Err(e) = index.append(&record)
            && !std::mem::replace(&mut self.index_failed, true)
        {
            out.notice(format!("unixagent: {e}"));
        }
    }

    /// Marks a turn boundary in the journal, so a resume reads from here
    /// rather than from the start. A side file that could not be written
    /// only makes the next resume look for the line; that is not news.
    pub(in crate::session) fn checkpoint(&mut self, out: &mut Outbox) {
        let Some(j) = self.journal.as_mut() else { return };
        match j.checkpoint() {
            Ok(_) | Err(ua_store::StoreError::Checkpoint { .. }) => {}
            Err(e) => self.journal_write_failed(&e, out),
        }
    }

    /// Says once that the journal cannot be written; the session goes on.
    fn journal_write_failed(&mut self, e: &ua_store::StoreError, out: &mut Outbox) {
        if !std::mem::replace(&mut self.journal_failed, true) {
            out.notice(format!("unixagent: the session journal could not be written ({e}); carrying on without it."));
        }
    }

    /// The messages of `history` not in the journal yet, which a model
    /// request now carries there.
    pub(in crate::session) fn appended(&mut self, history: &[Message]) -> Vec<Message> {
        let appended = history[self.journaled.min(history.len())..].to_vec();
        self.journaled = history.len();
        appended
    }

    /// The model's answer, once the turn has added it after what the
    /// journal holds.
    pub(in crate::session) fn answer(&mut self, history: &[Message]) -> Option<Message> {
        let message = history.get(self.journaled).filter(|m| m.role == Role::Assistant).cloned()?;
        self.journaled += 1;
        Some(message)
    }

    /// The first `upto` messages were replaced by one summary.
    pub(in crate::session) fn summarised(&mut self, upto: usize) {
        self.journaled = self.journaled.saturating_sub(upto) + 1;
    }

    /// A continued session: the journal already holds this many messages.
    pub(in crate::session) fn set_journaled(&mut self, journaled: usize) {
        self.journaled = journaled;
    }

    /// A new audit id, for the records of a new decision.
    pub(in crate::session) fn new_audit_id(&mut self) -> String {
        let id = self.next_audit_id();
        self.audit_id = Some(id.clone());
        id
    }

    /// The current command's audit id (a new one if it has none).
    pub(in crate::session) fn audit_id(&mut self) -> String {
        self.audit_id.clone().unwrap_or_else(|| self.next_audit_id())
    }

    fn next_audit_id(&mut self) -> String {
        self.audit_seq += 1;
        format!("{}-{}", self.session_id, self.audit_seq)
    }

    /// Appends to the audit log the policy keeps (none until it loads).
    pub(in crate::session) fn audit(
        &mut self,
        policy: Option<&Policy>,
        record: &ua_policy::audit::Record,
        out: &mut Outbox,
    ) {
        let Some(policy) = policy else { return };
        if let Err(e) = policy.audit(record)
            && !self.audit_failed
        {
            self.audit_failed = true;
            out.notice(format!("unixagent: {e}"));
        }
    }
}

impl Session {
    /// Appends to the session journal through [`Records`].
    pub(in crate::session) fn journal(&mut self, entry: JournalEntry) {
        self.agent.records.record(entry, &mut self.out);
        self.flush_out();
    }

    pub(in crate::session) fn journal_checkpoint(&mut self) {
        self.agent.records.checkpoint(&mut self.out);
        self.flush_out();
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
        let Some(message) = self.agent.records.answer(turn.messages()) else { return };
        let (usage, stop) = self.agent.model.answer_meta();
        self.journal(JournalEntry::ModelResponse {
            turn: self.agent.turn_no,
            call: self.agent.model.call_no(),
            message,
            usage,
            stop,
            purpose: ua_protocol::journal::CallPurpose::Conversation,
        });
    }

    pub(super) fn audit(&mut self, record: ua_policy::audit::Record) {
        self.agent.records.audit(self.agent.gate.policy(), &record, &mut self.out);
        self.flush_out();
    }

    /// The policy's own decision (allow, deny, or the question it asked).
    pub(super) fn audit_decision(&mut self) {
        let Some((req, d)) = self.agent.gate.last() else { return };
        let id = self.agent.records.new_audit_id();
        let record = ua_policy::audit::Record::decision(id, req, d);
        self.audit(record);
    }

    /// The person's answer to a question.
    pub(super) fn audit_human(&mut self, approved: bool) {
        let Some((req, d)) = self.agent.gate.last() else { return };
        let id = self.agent.records.new_audit_id();
        let record = ua_policy::audit::Record::human(id, req, d, approved);
        self.audit(record);
    }

    /// How an approved command ended.
    pub(super) fn audit_outcome(&mut self, exit_code: i32, duration: Duration) {
        let Some((req, d)) = self.agent.gate.last() else { return };
        let id = self.agent.records.audit_id();
        let record = ua_policy::audit::Record::outcome(id, req, d, Some(exit_code), duration);
        self.audit(record);
        self.agent.gate.post_exec(exit_code, duration);
    }

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
            let lines = super::super::resume_lines(&r, self.agent.records.session_id());
            for line in lines {
                self.notice(line);
            }
        }
        // The same session: what it used before counts against its budget.
        if let Some(warning) = self.agent.model.used_before(&before) {
            self.notice(warning);
        }
        self.agent.history = r.conversation;
        self.agent.records.set_journaled(r.journaled);
        self.agent.turn_no = r.next_turn.saturating_sub(1);
    }
}
