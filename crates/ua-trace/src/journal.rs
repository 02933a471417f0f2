//! A session's spans rebuilt from its journal: the [`Tracer`] driven by
//! the journal's lines instead of by the live turn.
//!
//! The journal already records every instruction, model call and response
//! (with model, provider and usage), every decision (risk, outcome, who
//! decided), every command's intent and result (exit status, duration)
//! and every turn's end, each with its time. So a session can record its
//! spans when it ends without the turn knowing about tracing, and the
//! span ids agree with the `TRACEPARENT` each command was typed with,
//! because both are derived from the same names ([`SpanId::derive`]).
//! Times are the journal's (milliseconds).
//!
//! [`SpanId::derive`]: crate::context::SpanId::derive

use std::collections::HashMap;

use ua_protocol::journal::{DecisionOutcome, JournalEntry, JournalLine, TurnEndReason};

use crate::span::Span;
use crate::tracer::{Command, ModelCall, ModelCallEnd, Tracer};

/// A decision waiting for its command to start or be settled.
struct Decided {
    at: u64,
    command: String,
    risk: String,
    decision: &'static str,
    rule: String,
    started: bool,
}

/// The spans of `lines` (a whole journal, or what a resumed run added).
pub fn spans(tracer: &mut Tracer, lines: &[JournalLine]) -> Vec<Span> {
    let mut feed = Feed::default();
    let mut out = Vec::new();
    for line in lines {
        out.extend(feed.line(tracer, line.ts, &line.entry));
    }
    out.extend(feed.finish(tracer));
    out
}

/// The journal's lines fed one at a time, as a session writes them: each
/// gives the spans it finishes, so a session records its spans as they
/// end and one that crashes keeps those.
#[derive(Default)]
pub struct Feed {
    turn_open: Option<u32>,
    decided: HashMap<String, Decided>,
    last: u64,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed").field("turn_open", &self.turn_open).finish_non_exhaustive()
    }
}

impl Feed {
    /// One journal line, written at `ts` (milliseconds since the epoch).
    pub fn line(&mut self, tracer: &mut Tracer, ts: u64, entry: &JournalEntry) -> Vec<Span> {
        let mut out = Vec::new();
        let (turn_open, decided) = (&mut self.turn_open, &mut self.decided);
        let at = ts.saturating_mul(1_000_000);
        self.last = at;
        match entry {
            // A second instruction line in a turn is the person steering it.
            JournalEntry::Instruction { turn, text } if *turn_open != Some(*turn) => {
                let (_, left) = tracer.instruction_started(at, *turn, text);
                out.extend(left);
                *turn_open = Some(*turn);
            }
            JournalEntry::ModelRequest { backend, model, .. } => {
                tracer.model_call_started(at, &ModelCall { provider: backend, model, ..ModelCall::default() });
            }
            JournalEntry::ModelResponse { usage, stop, .. } => {
                let stop = stop.as_ref().and_then(|s| serde_json::to_value(s).ok());
                let end = ModelCallEnd {
                    finish_reason: stop.as_ref().and_then(|v| v.as_str()),
                    usage: usage.unwrap_or_default(),
                    ..ModelCallEnd::default()
                };
                out.extend(tracer.model_call_ended(at, &end));
            }
            JournalEntry::Error { .. } => {
                out.extend(tracer.model_call_ended(at, &ModelCallEnd { error: Some("error"), ..Default::default() }));
            }
            JournalEntry::Decision { tool_use_id, command, risk, outcome, decided_by, approver, .. } => {
                let decision = match outcome {
                    DecisionOutcome::Denied => "deny",
                    _ if approver.is_some() || decided_by == "user" => "ask",
                    DecisionOutcome::Skipped | DecisionOutcome::Stopped => "ask",
                    DecisionOutcome::Run | DecisionOutcome::Edited { .. } => "allow",
                };
                let command = match outcome {
                    DecisionOutcome::Edited { command } => command.clone(),
                    _ => command.clone(),
                };
                let mut d =
                    Decided { at, command, risk: risk.clone(), decision, rule: decided_by.clone(), started: false };
                // A command that will not run has no result line of its
                // own (its refusal goes to the model with the next call):
                // its span ends with the decision.
                let settled = match outcome {
                    DecisionOutcome::Denied => Some("denied"),
                    DecisionOutcome::Skipped | DecisionOutcome::Stopped => Some("skipped"),
                    DecisionOutcome::Run | DecisionOutcome::Edited { .. } => None,
                };
                match settled {
                    Some(outcome) => {
                        start(tracer, at, tool_use_id, &mut d);
                        out.extend(tracer.command_ended(at, tool_use_id, None, outcome));
                    }
                    None => {
                        decided.insert(tool_use_id.clone(), d);
                    }
                }
            }
            JournalEntry::CommandIntent { tool_use_id, command, .. } => {
                let d = decided.entry(tool_use_id.clone()).or_insert_with(|| Decided {
                    at,
                    command: command.clone(),
                    risk: String::new(),
                    decision: "allow",
                    rule: String::new(),
                    started: false,
                });
                start(tracer, at, tool_use_id, d);
            }
            JournalEntry::ToolResult { tool_use_id, exit_code, .. } => {
                // Settled already at its decision, or never decided here.
                let Some(mut d) = decided.remove(tool_use_id) else { return out };
                let outcome = match exit_code {
                    Some(0) => "ok",
                    Some(_) => "failed",
                    None if d.started => "interrupted",
                    None => "skipped",
                };
                let started_at = d.at;
                start(tracer, started_at, tool_use_id, &mut d);
                out.extend(tracer.command_ended(at, tool_use_id, *exit_code, outcome));
            }
            JournalEntry::TurnEnd { turn, reason, .. } if *turn_open == Some(*turn) => {
                let result = match reason {
                    TurnEndReason::Answered => "ok",
                    TurnEndReason::Stopped => "cancelled",
                    TurnEndReason::Failed | TurnEndReason::StepLimit | TurnEndReason::Budget => "error",
                };
                out.extend(tracer.instruction_ended(at, result));
                *turn_open = None;
            }
            _ => {}
        }
        out
    }

    /// The end of the lines: what is still open ends with the last one
    /// (a journal cut short, or a session ending mid-turn).
    pub fn finish(self, tracer: &mut Tracer) -> Vec<Span> {
        if self.turn_open.is_some() { tracer.instruction_ended(self.last, "error") } else { Vec::new() }
    }
}

fn start(tracer: &mut Tracer, at: u64, id: &str, d: &mut Decided) {
    if d.started {
        return;
    }
    d.started = true;
    let rule = (!d.rule.is_empty()).then_some(d.rule.as_str());
    tracer.command_started(at, &Command { id, command: &d.command, risk: &d.risk, decision: d.decision, rule });
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
