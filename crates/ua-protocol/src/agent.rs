//! The agent's side of a session as one stream of events out and one of
//! inputs in. A terminal renders the events for a person and turns keys
//! into inputs; `unixagent --json` writes each event as one JSON line and
//! reads inputs as JSON lines. Both are the same values, so the two modes
//! cannot drift apart. `docs/ndjson.md` documents the wire form and
//! `docs/ndjson.schema.json` is its JSON Schema.
//!
//! Every field is always present on the wire; a field with no value is
//! `null`.
//!
//! ```
//! use ua_protocol::agent::{AgentEvent, Input, Line};
//!
//! let e = AgentEvent::Text { text: "Looking.".into() };
//! assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"type":"text","text":"Looking."}"#);
//!
//! assert_eq!(Line::parse("# list the files"), Line::Input(Input::Instruction { text: "list the files".into() }));
//! assert_eq!(Line::parse(r#"{"type":"cancel"}"#), Line::Input(Input::Cancel));
//! assert_eq!(Line::parse("ls -la"), Line::Shell("ls -la".into()));
//! ```

use serde::{Deserialize, Serialize};

/// The version of the NDJSON schema, in the `session` event's `v`.
pub const SCHEMA_VERSION: u32 = 1;

/// What the gate decided about a proposed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    Allow,
    Ask,
    Deny,
}

/// How a command ended, or why it did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandStatus {
    /// Ran and exited 0.
    Ok,
    /// Ran and exited non-zero.
    Failed,
    /// The gate, a hook, the judge or an unanswered question refused it.
    Denied,
    /// A person skipped it, or an earlier failure or a new direction
    /// dropped it.
    Skipped,
    /// It ran past the command timeout and was interrupted.
    Timeout,
    /// It was interrupted (Ctrl+C, a cancel, a signal).
    Interrupted,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Error,
    Cancelled,
}

/// Where a child agent stands, as its parent reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildStatus {
    /// Its session has started.
    Running,
    /// It ended with its result `ok`.
    Ok,
    /// It ended with an error, or its process died without a result.
    Error,
    /// It was cancelled (Ctrl+C, a signal).
    Cancelled,
    /// The depth or fan-out limits, or the sandbox, kept it from starting.
    Refused,
}

/// Tokens used, summed over the run's model calls, and what they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    /// In millionths of a US dollar, over the turns whose model has a price
    /// in config.toml's `[pricing]`; `cost_usd` on the wire, in dollars,
    /// null when none had one. Lines written before it existed read as
    /// null.
    #[serde(rename = "cost_usd", default, with = "usd")]
    pub cost_micros: Option<u64>,
}

impl TokenUsage {
    /// Input and output tokens together.
    pub fn tokens(&self) -> u64 {
        self.input + self.output
    }

    /// The cost in US dollars, when it is known.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_micros.map(usd::dollars)
    }

    /// Adds `other`'s tokens and cost: a cost is known when either is.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input += other.input;
        self.output += other.output;
        self.cost_micros = match (self.cost_micros, other.cost_micros) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }
}

/// Millionths of a dollar held, dollars on the wire.
mod usd {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn dollars(micros: u64) -> f64 {
        micros as f64 / 1e6
    }

    pub fn serialize<S: Serializer>(micros: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match micros {
            Some(m) => s.serialize_f64(dollars(*m)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        let dollars = Option::<f64>::deserialize(d)?;
        dollars
            .map(|x| {
                if x.is_finite() && x >= 0.0 {
                    // Rounded to the micro-dollar the value was written from.
                    Ok((x * 1e6).round() as u64)
                } else {
                    Err(serde::de::Error::custom("a cost is a non-negative number of dollars"))
                }
            })
            .transpose()
    }
}

/// One thing that happened, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The first event of a run.
    Session {
        /// [`SCHEMA_VERSION`].
        v: u32,
        /// The session id.
        id: String,
        /// The session journal's path, if it could be opened.
        journal: Option<String>,
        /// The shell commands run in.
        shell: String,
        /// Its working directory at the start.
        cwd: String,
    },
    /// Answer text from the model (a delta: concatenate them).
    Text { text: String },
    /// The model's thinking, when the provider shows it (a delta).
    Thinking { text: String },
    /// A command the model proposed, after the gate decided.
    Command {
        id: String,
        command: String,
        /// The risk level's name (`read_only` … `denied`).
        risk: String,
        decision: GateDecision,
        /// The rule, hook, grant or mode that decided.
        rule: Option<String>,
        /// What is typed instead, when unixagent or a hook rewrote it
        /// (`git --no-pager log`).
        runs_as: Option<String>,
        /// A warning to read before approving (the judge's).
        note: Option<String>,
        /// What the command leaves in the live shell to run later, one
        /// line each (`alias ls: rm -rf ~/src`, `trap on EXIT: …`); empty
        /// when it defines nothing.
        #[serde(default)]
        defines: Vec<String>,
    },
    /// The command with this id waits for an approval.
    ApprovalRequest { id: String, command: String, risk: String, reason: String },
    /// What a running command printed, as it runs (`--json` only; a
    /// terminal shows the output itself): whole lines, escapes removed,
    /// secrets redacted. `command_result` still carries the whole output.
    Output { id: String, text: String },
    /// A command finished, or will not run.
    CommandResult {
        id: String,
        /// `null` when it did not run.
        exit_code: Option<i32>,
        /// What it printed, capped and scrubbed exactly as the model gets it.
        output: String,
        status: CommandStatus,
    },
    /// A short line the terminal shows dimmed (a rewrite, a retry).
    Notice { text: String },
    /// Something went wrong; `message` is the one sentence a person sees.
    Error { message: String, kind: String },
    /// A task on the session's task board entered a state, whichever
    /// process moved it (the agent, a child agent, the person). A task new
    /// on the board enters `todo` with `from` null.
    Task {
        /// The task's id on the board.
        id: u32,
        title: String,
        /// `todo`, `doing`, `blocked`, `review` or `done`.
        state: String,
        /// The state it left; null for a new task.
        from: Option<String>,
        /// The session id (or person) that claimed it.
        assignee: Option<String>,
        /// Why it is blocked, when `state` is `blocked`.
        reason: Option<String>,
    },
    /// A turn is over (one per instruction), before the shell runs what
    /// waits next: how it ended, and what a run ending with it exits with.
    TurnEnd {
        stop: TurnStop,
        /// The last command's status when it finished, non-zero when it
        /// did not, 130 when it was stopped.
        exit_code: i32,
        /// The turn's own model calls.
        usage: TokenUsage,
        /// What the child agents that ended during the turn used, their
        /// own children's included: apart from `usage`, never in it.
        descendants: TokenUsage,
    },
    /// A child agent started from this session's shell started or ended
    /// (a refused one only ends).
    Child {
        /// Names the child within this session (`c1`, `c2`, …), the same
        /// in its start and end events.
        id: String,
        /// The child's session id; null when it never started one.
        session: Option<String>,
        /// Its instruction, as given to `-c`; empty for one read from stdin.
        instruction: String,
        status: ChildStatus,
        /// Tokens the child and its own children used, and their cost.
        usage: TokenUsage,
    },
    /// The last event of a run, always.
    Result {
        status: RunStatus,
        /// What the process exits with.
        exit_code: i32,
        /// The run's own model calls (its child agents' are in their
        /// `child` events).
        usage: TokenUsage,
        /// Commands that ran.
        commands: u32,
    },
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStop {
    /// The model answered without asking to run anything.
    EndTurn,
    /// The model's last answer was cut off by its output limit.
    MaxTokens,
    /// The provider refused to answer.
    Refusal,
    /// The turn ran as many commands as it may (`agent.max_steps`).
    StepLimit,
    /// A person, a cancel input or a signal stopped it.
    Cancelled,
    /// The model call failed (an `error` event says how).
    Error,
}

/// What a person or a program tells the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Input {
    /// Start a turn (queued while one runs).
    Instruction { text: String },
    /// Answer an [`AgentEvent::ApprovalRequest`].
    Approval { id: String, decision: Approval },
    /// New direction for the running turn: what is queued is dropped and
    /// the model revises its plan.
    Steer { text: String },
    /// End the running turn now.
    Cancel,
}

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Run it, this once.
    Allow,
    /// Run it, and run this exact command again without asking for the
    /// rest of the session (the terminal's `a`).
    AllowAlways,
    Deny,
}

/// One line read on stdin in batch mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A JSON input, or a `#` line (an instruction).
    Input(Input),
    /// Any other line: it goes to the shell, as in pipe mode.
    Shell(String),
    /// A line that starts like JSON but is not a valid input; the message
    /// says why in one sentence.
    Invalid(String),
}

impl Line {
    /// Reads one line (without its newline).
    pub fn parse(line: &str) -> Line {
        let trimmed = line.trim_start();
        if let Some(text) = trimmed.strip_prefix('#') {
            return Line::Input(Input::Instruction { text: text.trim().to_string() });
        }
        if trimmed.starts_with('{') {
            return match serde_json::from_str::<Input>(trimmed) {
                Ok(input) => Line::Input(input),
                Err(e) => Line::Invalid(format!(
                    "this input line is not one of instruction, approval, steer or cancel ({e}); see docs/ndjson.md"
                )),
            };
        }
        Line::Shell(line.to_string())
    }
}

impl AgentEvent {
    /// The event as one line of JSON, newline included.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|e| {
            // Serialising these plain values cannot fail; if it ever did,
            // the stream must still be valid JSON lines.
            format!(r#"{{"type":"error","message":"an event could not be written ({e})","kind":"internal"}}"#)
        });
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn wire(e: &AgentEvent) -> Value {
        serde_json::from_str(&e.to_line()).unwrap_or(Value::Null)
    }

    #[test]
    fn every_field_is_present_and_null_when_empty() {
        let e = AgentEvent::Command {
            id: "t1".into(),
            command: "ls".into(),
            risk: "read_only".into(),
            decision: GateDecision::Allow,
            rule: None,
            runs_as: None,
            note: None,
            defines: Vec::new(),
        };
        assert_eq!(
            wire(&e),
            json!({"type": "command", "id": "t1", "command": "ls", "risk": "read_only", "decision": "allow", "rule": null, "runs_as": null, "note": null, "defines": []})
        );
        let r = AgentEvent::CommandResult {
            id: "t1".into(),
            exit_code: None,
            output: String::new(),
            status: CommandStatus::Denied,
        };
        assert_eq!(wire(&r)["exit_code"], Value::Null);
        assert_eq!(wire(&r)["status"], "denied");
    }

    #[test]
    fn a_cost_is_dollars_on_the_wire_and_adds_up_where_any_is_known() {
        let priced = TokenUsage { input: 10, output: 2, cost_micros: Some(12_345) };
        let v = serde_json::to_value(priced).unwrap();
        assert_eq!(v, serde_json::json!({ "input": 10, "output": 2, "cost_usd": 0.012345 }));
        assert_eq!(serde_json::from_value::<TokenUsage>(v).unwrap(), priced);
        // Written before costs were: unpriced.
        let old: TokenUsage = serde_json::from_str(r#"{"input":3,"output":4}"#).unwrap();
        assert_eq!(old, TokenUsage { input: 3, output: 4, cost_micros: None });
        assert!(serde_json::from_str::<TokenUsage>(r#"{"input":3,"output":4,"cost_usd":-1}"#).is_err());
        let mut sum = old;
        sum.add(&old);
        assert_eq!(sum, TokenUsage { input: 6, output: 8, cost_micros: None });
        sum.add(&priced);
        assert_eq!((sum.tokens(), sum.cost_micros), (26, Some(12_345)));
    }

    #[test]
    fn events_round_trip() {
        let events = [
            AgentEvent::Session {
                v: SCHEMA_VERSION,
                id: "s".into(),
                journal: Some("/j".into()),
                shell: "/bin/bash".into(),
                cwd: "/w".into(),
            },
            AgentEvent::Task {
                id: 3,
                title: "Test the parser".into(),
                state: "blocked".into(),
                from: Some("doing".into()),
                assignee: Some("s".into()),
                reason: Some("needs a key".into()),
            },
            AgentEvent::Result {
                status: RunStatus::Cancelled,
                exit_code: 130,
                usage: TokenUsage { input: 10, output: 2, cost_micros: Some(1250) },
                commands: 1,
            },
        ];
        for e in events {
            let line = e.to_line();
            assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
            assert_eq!(serde_json::from_str::<AgentEvent>(&line).ok(), Some(e));
        }
    }

    #[test]
    fn input_lines() {
        assert_eq!(
            Line::parse(r#"{"type":"approval","id":"t1","decision":"deny"}"#),
            Line::Input(Input::Approval { id: "t1".into(), decision: Approval::Deny })
        );
        assert_eq!(
            Line::parse(r#" {"type":"steer","text":"smaller"}"#),
            Line::Input(Input::Steer { text: "smaller".into() })
        );
        assert_eq!(Line::parse("#   what is here  "), Line::Input(Input::Instruction { text: "what is here".into() }));
        assert!(matches!(Line::parse(r#"{"type":"approve"}"#), Line::Invalid(m) if m.contains("docs/ndjson.md")));
        assert!(matches!(Line::parse("{not json"), Line::Invalid(_)));
        assert_eq!(Line::parse("echo {x}"), Line::Shell("echo {x}".into()));
    }
}
