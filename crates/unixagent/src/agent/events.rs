//! The turn's values as events of the agent's stream
//! ([`ua_protocol::agent::AgentEvent`]), which the terminal renderer
//! draws and `--json` writes as lines.

use ua_protocol::agent::{AgentEvent, GateDecision};

use super::turn::{Proposal, Settled, Verdict};

/// A proposal after the gate. When unixagent itself rewrote it (paging
/// turned off), the command is shown as the model wrote it and `runs_as`
/// says what is typed; a hook's rewrite is the command.
pub fn command(p: &Proposal, v: &Verdict, decision: GateDecision, rule: Option<String>) -> AgentEvent {
    let ours = v.rewritten.as_ref().filter(|r| !r.by_hook);
    AgentEvent::Command {
        id: p.id.clone(),
        command: ours.map_or(&p.command, |r| &r.from).clone(),
        risk: v.risk.clone(),
        decision,
        rule,
        runs_as: ours.map(|r| r.command.clone()),
        note: v.note.clone(),
        defines: v.defines.clone(),
    }
}

/// The question about a proposal.
pub fn approval(p: &Proposal, v: &Verdict) -> AgentEvent {
    AgentEvent::ApprovalRequest {
        id: p.id.clone(),
        command: p.command.clone(),
        risk: v.risk.clone(),
        reason: v.reason.clone(),
    }
}

/// A proposal's result.
pub fn result(s: Settled) -> AgentEvent {
    AgentEvent::CommandResult { id: s.id, exit_code: s.exit_code, output: s.output, status: s.status }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::turn::{Outcome, Rewritten};
    use ua_protocol::tool::OutputMode;

    fn verdict(rewritten: Option<Rewritten>) -> Verdict {
        Verdict {
            outcome: Outcome::Allow,
            risk: "read_only".into(),
            reason: "read-only".into(),
            note: None,
            strong: false,
            rewritten,
            defines: Vec::new(),
        }
    }

    #[test]
    fn a_paging_edit_shows_the_proposal_and_runs_the_edit() {
        let p = Proposal { id: "t".into(), command: "git --no-pager log".into(), mode: OutputMode::Full };
        let v =
            verdict(Some(Rewritten { from: "git log".into(), command: "git --no-pager log".into(), by_hook: false }));
        let AgentEvent::Command { command: shown, runs_as, .. } = command(&p, &v, GateDecision::Allow, None) else {
            panic!("not a command event")
        };
        assert_eq!((shown.as_str(), runs_as.as_deref()), ("git log", Some("git --no-pager log")));
        // A hook's rewrite is the command (the session says a hook did it).
        let v =
            verdict(Some(Rewritten { from: "git log".into(), command: "git --no-pager log".into(), by_hook: true }));
        let AgentEvent::Command { command: shown, runs_as, .. } = command(&p, &v, GateDecision::Allow, None) else {
            panic!("not a command event")
        };
        assert_eq!((shown.as_str(), runs_as), ("git --no-pager log", None));
    }
}
