//! The agent's stream as ACP session updates: a pure renderer of
//! [`AgentEvent`], as `TerminalFront` and `NdjsonFront` are. It keeps only
//! what the protocol makes a renderer keep: the board's tasks (a `plan`
//! update carries the whole plan each time), what a running command
//! printed so far (a tool call's content is replaced, not appended to, by
//! each update) and the last error (the prompt's answer when its turn
//! fails).

use std::collections::{BTreeMap, HashMap};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, StopReason, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::json;
use ua_protocol::agent::{AgentEvent, CommandStatus, GateDecision, TurnStop};

/// The permission options' ids, as the client sends them back.
pub(super) const ALLOW_ONCE: &str = "allow_once";
pub(super) const ALLOW_ALWAYS: &str = "allow_always";
pub(super) const REJECT: &str = "reject";

/// What one event comes to on the connection.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Out {
    /// A `session/update` notification.
    Update(SessionUpdate),
    /// A `session/request_permission` request for this tool call.
    Ask { tool_call: ToolCallUpdate, options: Vec<PermissionOption> },
    /// The prompt's turn is over: its answer.
    TurnOver(Result<StopReason, String>),
    /// The session's process ended its run (the shell exited, a signal).
    Ended,
}

/// Renders one session's events.
#[derive(Debug, Default)]
pub(super) struct AcpFront {
    /// The board's tasks by id: title and state.
    tasks: BTreeMap<u32, (String, String)>,
    /// What each running command printed so far, its last
    /// [`LIVE_TAIL`] bytes.
    live: HashMap<String, String>,
    /// The last error, the answer to a turn that fails.
    error: Option<String>,
}

/// How much of a running command's output each update shows: the whole
/// output comes with its result, and resending all of it with every line
/// would grow as its square.
const LIVE_TAIL: usize = 16 * 1024;

impl AcpFront {
    pub(super) fn event(&mut self, event: &AgentEvent) -> Vec<Out> {
        match event {
            AgentEvent::Session { .. } => Vec::new(),
            AgentEvent::Text { text } => vec![Out::Update(SessionUpdate::AgentMessageChunk(chunk(text)))],
            AgentEvent::Thinking { text } => vec![Out::Update(SessionUpdate::AgentThoughtChunk(chunk(text)))],
            // A dim line in a terminal: the client shows it as thought, so
            // it stays out of the answer's text.
            AgentEvent::Notice { text } => {
                vec![Out::Update(SessionUpdate::AgentThoughtChunk(chunk(&format!("{text}\n"))))]
            }
            AgentEvent::Error { message, .. } => {
                self.error = Some(message.clone());
                vec![Out::Update(SessionUpdate::AgentMessageChunk(chunk(&format!("\n\nunixagent: {message}\n"))))]
            }
            AgentEvent::Command { id, command, risk, decision, rule, runs_as, note, defines } => {
                let mut gate = format!("risk {risk}; the gate: {}", decision_name(*decision));
                if let Some(rule) = rule {
                    gate.push_str(&format!(" ({rule})"));
                }
                let mut text = vec![gate];
                text.extend(runs_as.iter().map(|r| format!("runs as: {r}")));
                text.extend(note.iter().map(|n| format!("note: {n}")));
                text.extend(defines.iter().map(|d| format!("defines: {d}")));
                let call = ToolCall::new(id.clone(), command.clone())
                    .kind(ToolKind::Execute)
                    .status(ToolCallStatus::Pending)
                    .content(vec![ToolCallContent::from(text.join("\n"))])
                    .raw_input(json!({
                        "command": command,
                        "risk": risk,
                        "decision": decision,
                        "rule": rule,
                        "runs_as": runs_as,
                    }));
                let mut out = vec![Out::Update(SessionUpdate::ToolCall(call))];
                // An allowed command is typed into the shell at once.
                if *decision == GateDecision::Allow {
                    out.push(status(id, ToolCallStatus::InProgress));
                }
                out
            }
            AgentEvent::ApprovalRequest { id, command, risk, reason } => {
                let privileged = risk == "privileged";
                let title = if privileged {
                    format!("Privileged command (runs with elevated rights): {command}")
                } else {
                    format!("Run {command}?")
                };
                let why = if privileged {
                    format!("This command is privileged: it runs with root or elevated rights. {reason}")
                } else {
                    format!("risk {risk}: {reason}")
                };
                let tool_call = ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new()
                        .title(title)
                        .kind(ToolKind::Execute)
                        .status(ToolCallStatus::Pending)
                        .content(vec![ToolCallContent::from(why)]),
                );
                let mut options =
                    vec![PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce)];
                // A privileged command is asked about every time, as the
                // terminal asks for `yes` typed out each time.
                if !privileged {
                    options.push(PermissionOption::new(
                        ALLOW_ALWAYS,
                        "Allow this command for the session",
                        PermissionOptionKind::AllowAlways,
                    ));
                }
                options.push(PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce));
                vec![Out::Ask { tool_call, options }]
            }
            AgentEvent::Output { id, text } => {
                let so_far = self.live.entry(id.clone()).or_default();
                so_far.push_str(text);
                if so_far.len() > LIVE_TAIL {
                    let mut cut = so_far.len() - LIVE_TAIL;
                    while !so_far.is_char_boundary(cut) {
                        cut += 1;
                    }
                    so_far.drain(..cut);
                }
                let fields = ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![ToolCallContent::from(format!("```\n{so_far}```"))]);
                vec![Out::Update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.clone(), fields)))]
            }
            AgentEvent::CommandResult { id, exit_code, output, status: s } => {
                self.live.remove(id);
                let done = if *s == CommandStatus::Ok { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
                let code = exit_code.map_or_else(|| "did not run".to_string(), |c| format!("exit code {c}"));
                let text = format!(
                    "```\n{}{}```\n{code} ({})",
                    output,
                    if output.ends_with('\n') { "" } else { "\n" },
                    status_name(*s)
                );
                let fields = ToolCallUpdateFields::new()
                    .status(done)
                    .content(vec![ToolCallContent::from(text)])
                    .raw_output(json!({ "exit_code": exit_code, "status": s, "output": output }));
                vec![Out::Update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.clone(), fields)))]
            }
            // The command that started it is already a tool call, whose
            // output is the child's fold line and answer: its start and
            // end are lines of thought beside it.
            AgentEvent::Child { id, instruction, status, usage, .. } => {
                let status = format!("{status:?}").to_lowercase();
                let tokens = usage.input + usage.output;
                let line = format!("▸ child {id} {instruction:?} · {status} · {tokens} tokens\n");
                vec![Out::Update(SessionUpdate::AgentThoughtChunk(chunk(&line)))]
            }
            AgentEvent::Task { id, title, state, .. } => {
                self.tasks.insert(*id, (title.clone(), state.clone()));
                let entries = self
                    .tasks
                    .values()
                    .map(|(title, state)| PlanEntry::new(title.clone(), PlanEntryPriority::Medium, plan_status(state)))
                    .collect();
                vec![Out::Update(SessionUpdate::Plan(Plan::new(entries)))]
            }
            AgentEvent::TurnEnd { stop, .. } => {
                let error = self.error.take();
                let answer = match stop {
                    TurnStop::EndTurn => Ok(StopReason::EndTurn),
                    TurnStop::MaxTokens => Ok(StopReason::MaxTokens),
                    TurnStop::Refusal => Ok(StopReason::Refusal),
                    TurnStop::StepLimit => Ok(StopReason::MaxTurnRequests),
                    TurnStop::Cancelled => Ok(StopReason::Cancelled),
                    TurnStop::Error => Err(error.unwrap_or_else(|| "the turn failed".into())),
                };
                vec![Out::TurnOver(answer)]
            }
            AgentEvent::Result { .. } => vec![Out::Ended],
        }
    }
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_string()))
}

fn status(id: &str, status: ToolCallStatus) -> Out {
    Out::Update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(status),
    )))
}

/// The tool call goes on after the person allowed it.
pub(super) fn running(id: &str) -> SessionUpdate {
    match status(id, ToolCallStatus::InProgress) {
        Out::Update(u) => u,
        _ => SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), ToolCallUpdateFields::new())),
    }
}

fn decision_name(d: GateDecision) -> &'static str {
    match d {
        GateDecision::Allow => "allow",
        GateDecision::Ask => "ask",
        GateDecision::Deny => "deny",
    }
}

fn status_name(s: CommandStatus) -> &'static str {
    match s {
        CommandStatus::Ok => "ok",
        CommandStatus::Failed => "failed",
        CommandStatus::Denied => "denied",
        CommandStatus::Skipped => "skipped",
        CommandStatus::Timeout => "timeout",
        CommandStatus::Interrupted => "interrupted",
    }
}

/// A board state as a plan entry's status: what nobody works on yet is
/// pending, whatever is claimed is in progress.
fn plan_status(state: &str) -> PlanEntryStatus {
    match state {
        "done" => PlanEntryStatus::Completed,
        "doing" | "review" => PlanEntryStatus::InProgress,
        _ => PlanEntryStatus::Pending,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(decision: GateDecision, risk: &str) -> AgentEvent {
        AgentEvent::Command {
            id: "t1".into(),
            command: "ls".into(),
            risk: risk.into(),
            decision,
            rule: Some("builtin.read-only".into()),
            runs_as: None,
            note: None,
            defines: Vec::new(),
        }
    }

    fn wire(out: &Out) -> serde_json::Value {
        match out {
            Out::Update(u) => serde_json::to_value(u).unwrap_or_default(),
            Out::Ask { tool_call, options } => json!({ "tool_call": tool_call, "options": options }),
            other => json!(format!("{other:?}")),
        }
    }

    #[test]
    fn an_allowed_command_is_an_execute_tool_call_in_progress_at_once() {
        let out = AcpFront::default().event(&command(GateDecision::Allow, "read_only"));
        assert_eq!(out.len(), 2);
        let call = wire(&out[0]);
        assert_eq!(call["sessionUpdate"], "tool_call");
        // Pending is the protocol's default, left off the wire.
        assert_eq!((call["kind"].as_str(), call["status"].as_str().unwrap_or("pending")), (Some("execute"), "pending"));
        assert_eq!(call["rawInput"]["decision"], "allow");
        assert_eq!(call["rawInput"]["rule"], "builtin.read-only");
        assert_eq!(wire(&out[1])["status"], "in_progress");
        // One that waits for a question is not running yet.
        assert_eq!(AcpFront::default().event(&command(GateDecision::Ask, "write")).len(), 1);
    }

    #[test]
    fn a_privileged_command_says_so_and_cannot_be_allowed_for_the_session() {
        let ask = |risk: &str| {
            AcpFront::default().event(&AgentEvent::ApprovalRequest {
                id: "t1".into(),
                command: "sudo rm x".into(),
                risk: risk.into(),
                reason: "asks".into(),
            })
        };
        let Some(Out::Ask { tool_call, options }) = ask("privileged").pop() else { panic!("no question") };
        assert!(tool_call.fields.title.as_deref().is_some_and(|t| t.starts_with("Privileged command")));
        let ids: Vec<String> = options.iter().map(|o| o.option_id.0.to_string()).collect();
        assert_eq!(ids, [ALLOW_ONCE, REJECT]);
        let Some(Out::Ask { options, .. }) = ask("write").pop() else { panic!("no question") };
        assert_eq!(options.len(), 3);
        assert_eq!(options[1].kind, PermissionOptionKind::AllowAlways);
    }

    #[test]
    fn results_end_tool_calls_and_turns_end_prompts() {
        let mut f = AcpFront::default();
        let failed = f.event(&AgentEvent::CommandResult {
            id: "t1".into(),
            exit_code: Some(2),
            output: "nope\n".into(),
            status: CommandStatus::Failed,
        });
        let v = wire(&failed[0]);
        assert_eq!(v["status"], "failed");
        assert_eq!(v["rawOutput"]["exit_code"], 2);
        assert!(v["content"].to_string().contains("exit code 2"), "{v}");
        assert_eq!(
            f.event(&AgentEvent::TurnEnd {
                stop: TurnStop::Cancelled,
                exit_code: 130,
                usage: Default::default(),
                descendants: Default::default()
            }),
            [Out::TurnOver(Ok(StopReason::Cancelled))]
        );
        f.event(&AgentEvent::Error { message: "the model is down".into(), kind: "http".into() });
        assert_eq!(
            f.event(&AgentEvent::TurnEnd {
                stop: TurnStop::Error,
                exit_code: 1,
                usage: Default::default(),
                descendants: Default::default()
            }),
            [Out::TurnOver(Err("the model is down".into()))]
        );
    }

    #[test]
    fn output_streams_as_the_tool_calls_content_so_far() {
        let mut f = AcpFront::default();
        f.event(&AgentEvent::Output { id: "t1".into(), text: "one\n".into() });
        let out = f.event(&AgentEvent::Output { id: "t1".into(), text: "two\n".into() });
        let v = wire(&out[0]);
        assert_eq!(v["status"], "in_progress");
        assert_eq!(v["content"][0]["content"]["text"], "```\none\ntwo\n```");
        let long = "é".repeat(LIVE_TAIL);
        let out = f.event(&AgentEvent::Output { id: "t1".into(), text: long });
        let shown = wire(&out[0])["content"][0]["content"]["text"].as_str().unwrap_or_default().len();
        assert!(shown <= LIVE_TAIL + 8, "{shown}");
    }

    #[test]
    fn board_tasks_go_out_as_the_whole_plan() {
        let mut f = AcpFront::default();
        let task = |id, state: &str| AgentEvent::Task {
            id,
            title: format!("task {id}"),
            state: state.into(),
            from: None,
            assignee: None,
            reason: None,
        };
        f.event(&task(1, "todo"));
        let out = f.event(&task(2, "doing"));
        let v = wire(&out[0]);
        assert_eq!(v["sessionUpdate"], "plan");
        let statuses: Vec<&str> =
            v["entries"].as_array().into_iter().flatten().filter_map(|e| e["status"].as_str()).collect();
        assert_eq!(statuses, ["pending", "in_progress"]);
        let out = f.event(&task(1, "done"));
        assert_eq!(wire(&out[0])["entries"][0]["status"], "completed");
    }
}
