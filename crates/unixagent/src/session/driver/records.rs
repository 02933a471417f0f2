//! What the agent side writes down: the session journal (every event,
//! enough to rebuild any model call), the session index fed from it, and
//! the audit log (every decision, with who made it and what came of it).
//!
//! [`Records`] owns all three writers and their "failed once" flags. A
//! write that fails is reported once, as a notice in the outbox, and the
//! session goes on without losing anything else.

use std::time::Duration;

use ua_backend::provider::Provider;
use ua_context::fit::Fitted;
use ua_context::prompt::UserCommand;
use ua_context::secrets::redact_secrets;
use ua_policy::audit::Record;
use ua_policy::gate::{Decision, Request};
use ua_protocol::agent::TokenUsage;
use ua_protocol::conversation::{Message, Role};
use ua_protocol::event::{StopReason, Usage};
use ua_protocol::journal::{CallPurpose, DecisionOutcome, JournalEntry, TurnEndReason};
use ua_protocol::tool::ToolDefinition;
use ua_store::journal::Journal;

use crate::agent::gate::Policy;
use crate::agent::turn::{End, Proposal};
use crate::session::Indexing;
use crate::session::outbox::Outbox;

/// The gate's last decision, as the audit log needs it.
pub(in crate::session) type Decided<'a> = Option<(&'a Request, &'a Decision)>;

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
    /// What children that ended since the last turn end used.
    descendants: TokenUsage,
    /// The session's spans, recorded as the journal lines are written.
    spans: Option<crate::trace::Live>,
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
            descendants: TokenUsage::default(),
            spans: None,
        }
    }

    /// Records the session's spans as its lines are journaled.
    pub(in crate::session) fn trace(&mut self, spans: Option<crate::trace::Live>) {
        self.spans = spans;
    }

    /// The spans' recorder, to finish when the session has ended.
    pub(in crate::session) fn take_spans(&mut self) -> Option<crate::trace::Live> {
        self.spans.take()
    }

    /// A child ended having used `usage` (its own children's included).
    pub(in crate::session) fn descendants_used(&mut self, usage: TokenUsage) {
        self.descendants.add(&usage);
    }

    /// What children used since the last turn end.
    pub(in crate::session) fn descendants(&self) -> TokenUsage {
        self.descendants
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
        if let Some(problem) = self.spans.as_mut().and_then(|s| s.line(ts, &entry)) {
            out.notice(problem);
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
    fn appended(&mut self, history: &[Message]) -> Vec<Message> {
        let appended = history[self.journaled.min(history.len())..].to_vec();
        self.journaled = history.len();
        appended
    }

    /// Journals a conversation call: what it appends to the journaled
    /// conversation `history`, what fitting left out, and the tools with
    /// the session's first call.
    pub(in crate::session) fn request(
        &mut self,
        (turn, call): (u32, u32),
        provider: &dyn Provider,
        (fitted, history): (&Fitted, &[Message]),
        tools: &[ToolDefinition],
        out: &mut Outbox,
    ) {
        let entry = JournalEntry::ModelRequest {
            turn,
            call,
            backend: provider.name().to_string(),
            model: provider.model().to_string(),
            system: fitted.system.clone(),
            messages_appended: self.appended(history),
            omitted: fitted.omitted.clone(),
            tools: (turn == 1 && call == 1).then(|| tools.to_vec()),
            purpose: CallPurpose::Conversation,
        };
        self.record(entry, out);
    }

    /// Journals the model's answer once the turn has added it after what
    /// the journal holds.
    pub(in crate::session) fn answer(
        &mut self,
        turn: u32,
        call: u32,
        history: &[Message],
        (usage, stop): (Option<Usage>, Option<StopReason>),
        out: &mut Outbox,
    ) {
        let Some(message) = history.get(self.journaled).filter(|m| m.role == Role::Assistant).cloned() else {
            return;
        };
        self.journaled += 1;
        let purpose = CallPurpose::Conversation;
        self.record(JournalEntry::ModelResponse { turn, call, message, usage, stop, purpose }, out);
    }

    /// Journals the commands the user ran since the last instruction,
    /// run in `cwd`. Redacted like everything the model is shown of them:
    /// the journal is readable from the session (`$UNIXAGENT_JOURNAL`),
    /// and a password inside a JSON string, its quotes escaped, is harder
    /// to find than on the command line it came from.
    pub(in crate::session) fn user_commands(&mut self, commands: &[UserCommand], cwd: &str, out: &mut Outbox) {
        for c in commands {
            let entry = JournalEntry::UserCommand {
                command: redact_secrets(&c.command).into_owned(),
                cwd: Some(cwd.to_string()),
                exit_code: c.exit_code,
                output: redact_secrets(&c.output).into_owned(),
            };
            self.record(entry, out);
        }
    }

    /// Journals a turn's end, with its usage, the commands it ran and its
    /// cost, and marks the boundary for a resume.
    pub(in crate::session) fn turn_end(
        &mut self,
        turn: u32,
        end: &End,
        (usage, steps, cost_micros): (Usage, usize, Option<u64>),
        out: &mut Outbox,
    ) {
        let reason = match end {
            End::Answered => TurnEndReason::Answered,
            End::Stopped => TurnEndReason::Stopped,
            End::Failed(_) => TurnEndReason::Failed,
            End::StepLimit => TurnEndReason::StepLimit,
        };
        let commands = u32::try_from(steps).unwrap_or(u32::MAX);
        let descendants = Some(std::mem::take(&mut self.descendants)).filter(|d| d.tokens() > 0);
        self.record(JournalEntry::TurnEnd { turn, reason, usage, commands, cost_micros, descendants }, out);
        self.checkpoint(out);
    }

    /// Journals a decision about a proposal, with who made it.
    pub(in crate::session) fn decision(
        &mut self,
        turn: u32,
        p: &Proposal,
        outcome: DecisionOutcome,
        (decided_by, approver): (&str, &str),
        risk: &str,
        out: &mut Outbox,
    ) {
        let entry = JournalEntry::Decision {
            turn,
            tool_use_id: p.id.clone(),
            command: p.command.clone(),
            risk: risk.to_string(),
            outcome,
            decided_by: decided_by.to_string(),
            approver: Some(approver.to_string()),
        };
        self.record(entry, out);
    }

    /// The first `upto` messages were replaced by one summary.
    pub(in crate::session) fn summarised(&mut self, upto: usize) {
        self.journaled = self.journaled.saturating_sub(upto) + 1;
    }

    /// An error of turn `turn`, for the journal.
    pub(in crate::session) fn error(&mut self, turn: u32, message: String, out: &mut Outbox) {
        self.record(JournalEntry::Error { turn: Some(turn), message }, out);
    }

    /// The command `p` is about to be typed: the ledger's line, synced
    /// (unless read-only) so that a crash leaves no doubt it started.
    pub(in crate::session) fn intent(&mut self, turn: u32, p: &Proposal, read_only: bool, out: &mut Outbox) {
        let entry =
            JournalEntry::CommandIntent { turn, tool_use_id: p.id.clone(), command: p.command.clone(), read_only };
        self.record(entry, out);
    }

    /// A session reopened with `--continue` or `--resume`: the journal
    /// says so and holds the conversation this far. `notices`: the
    /// resume's lines go out as notices (batch mode; a terminal printed
    /// them).
    pub(in crate::session) fn resumed(
        &mut self,
        r: &ua_store::resume::Resumed,
        (shell, cwd): (&std::path::Path, &str),
        notices: bool,
        out: &mut Outbox,
    ) {
        let entry = JournalEntry::Resumed {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            shell: shell.display().to_string(),
            cwd: cwd.to_string(),
            from_checkpoint: r.checkpoint.map(|c| c.seq),
        };
        self.record(entry, out);
        self.checkpoint(out);
        if notices {
            for line in crate::session::resume_lines(r, self.session_id()) {
                out.notice(line);
            }
        }
        self.journaled = r.journaled;
    }

    /// The policy's own decision (allow, deny, or the question it asked).
    pub(in crate::session) fn audit_decision(&mut self, policy: Option<&Policy>, last: Decided<'_>, out: &mut Outbox) {
        let Some((req, d)) = last else { return };
        let id = self.new_audit_id();
        self.audit(policy, &Record::decision(id, req, d), out);
    }

    /// The person's answer to a question.
    pub(in crate::session) fn audit_human(
        &mut self,
        policy: Option<&Policy>,
        last: Decided<'_>,
        approved: bool,
        out: &mut Outbox,
    ) {
        let Some((req, d)) = last else { return };
        let id = self.new_audit_id();
        self.audit(policy, &Record::human(id, req, d, approved), out);
    }

    /// How an approved command ended.
    pub(in crate::session) fn audit_outcome(
        &mut self,
        policy: Option<&Policy>,
        last: Decided<'_>,
        (exit_code, duration): (i32, Duration),
        out: &mut Outbox,
    ) {
        let Some((req, d)) = last else { return };
        let id = self.audit_id();
        self.audit(policy, &Record::outcome(id, req, d, Some(exit_code), duration), out);
    }

    /// Each host an agent command reached, or was refused, beside the
    /// command's own records.
    pub(in crate::session) fn audit_network(
        &mut self,
        policy: Option<&Policy>,
        last: Decided<'_>,
        decisions: &[ua_sandbox::proxy::Decision],
        out: &mut Outbox,
    ) {
        let Some((req, d)) = last else { return };
        let id = self.audit_id();
        for n in decisions {
            let target = format!("{}:{}", n.host, n.port);
            let record = Record::network(id.clone(), req, d, target, n.allowed, n.reason.as_deref());
            self.audit(policy, &record, out);
        }
    }

    /// A new audit id, for the records of a new decision.
    fn new_audit_id(&mut self) -> String {
        let id = self.next_audit_id();
        self.audit_id = Some(id.clone());
        id
    }

    /// The current command's audit id (a new one if it has none).
    fn audit_id(&mut self) -> String {
        self.audit_id.clone().unwrap_or_else(|| self.next_audit_id())
    }

    fn next_audit_id(&mut self) -> String {
        self.audit_seq += 1;
        format!("{}-{}", self.session_id, self.audit_seq)
    }

    /// Appends to the audit log the policy keeps (none until it loads).
    fn audit(&mut self, policy: Option<&Policy>, record: &Record, out: &mut Outbox) {
        let Some(policy) = policy else { return };
        if let Err(e) = policy.audit(record)
            && !self.audit_failed
        {
            self.audit_failed = true;
            out.notice(format!("unixagent: {e}"));
        }
    }
}
