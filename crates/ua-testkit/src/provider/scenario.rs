//! Scenario files: the scripted turns the fake provider plays.
//!
//! ```toml
//! repeat = true            # start over when the turns run out
//!
//! [[turn]]
//! text = ["I'll look.", " One moment."]
//! tool_calls = [{ name = "shell", input = { command = "ls /tmp" } }]
//! delay_ms = 40
//!
//! [[turn]]
//! text = "There are three files."
//! ```
//!
//! One turn answers one request, in whichever wire format the request
//! used (the path tells: `…/messages` is Anthropic, `…/chat/completions`
//! OpenAI), so one scenario serves both providers.
//!
//! Several agents can share one server (a parent and its children): a
//! `[[conversation]]` plays its own turns, with its own place in them, to
//! every request whose first user message contains `instruction_contains`
//! (the instruction that started that agent):
//!
//! ```toml
//! [[conversation]]
//! instruction_contains = "check the logs"
//! [[conversation.turn]]
//! tool_calls = [{ name = "shell", input = { command = "tail app.log" } }]
//! [[conversation.turn]]
//! text = "Two timeouts."
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// A whole scenario: turns in order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Start again from the first turn when all were played (for demos);
    /// otherwise further requests get HTTP 500 saying the script ran out.
    #[serde(default)]
    pub repeat: bool,
    #[serde(default, rename = "turn")]
    pub turns: Vec<Turn>,
    /// Answers given out of turn: a request whose body contains a side
    /// answer's text gets it, and the script does not move on (for calls a
    /// client makes on the side, such as a summary).
    #[serde(default)]
    pub side: Vec<SideAnswer>,
    /// Scripts of their own for the agents whose first instruction
    /// matches; the first match plays.
    #[serde(default, rename = "conversation")]
    pub conversations: Vec<Conversation>,
}

/// The turns for one agent's requests (see the module docs).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    pub instruction_contains: String,
    #[serde(default)]
    pub repeat: bool,
    #[serde(default, rename = "turn")]
    pub turns: Vec<Turn>,
}

/// An answer for requests that contain `body_contains`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideAnswer {
    pub body_contains: String,
    pub turn: Turn,
}

impl Scenario {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a turn (builder style, for tests).
    pub fn turn(mut self, turn: Turn) -> Self {
        self.turns.push(turn);
        self
    }

    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| format!("invalid scenario: {e}"))
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read scenario {}: {e}", path.display()))?;
        Self::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Text given as one string or as a list of deltas.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Pieces {
    One(String),
    Many(Vec<String>),
}

impl Default for Pieces {
    fn default() -> Self {
        Self::Many(Vec::new())
    }
}

impl Pieces {
    pub fn pieces(&self) -> Vec<String> {
        match self {
            Self::One(s) if s.is_empty() => vec![],
            Self::One(s) => vec![s.clone()],
            Self::Many(v) => v.clone(),
        }
    }
}

/// One scripted answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Turn {
    /// Visible text, streamed as one delta per piece.
    pub text: Pieces,
    /// Reasoning streamed before the text.
    pub thinking: Pieces,
    /// The Anthropic thinking signature (default `sig-fake`).
    pub signature: Option<String>,
    pub tool_calls: Vec<ToolCallSpec>,
    /// Anthropic-style stop reason (`end_turn`, `tool_use`, `max_tokens`);
    /// default `tool_use` when there are tool calls, else `end_turn`.
    pub stop_reason: Option<String>,
    pub usage: UsageSpec,
    /// Pause before each SSE event, in milliseconds.
    pub delay_ms: u64,
    /// Size of the pieces tool input JSON is split into (default 7 bytes),
    /// so clients must assemble partial JSON.
    pub json_chunk: Option<usize>,
    /// Answer with this HTTP status and no stream (errors).
    pub status: Option<u16>,
    /// Extra response headers (`retry-after`).
    pub headers: BTreeMap<String, String>,
    /// The error response body; default a provider-shaped error JSON.
    pub body: Option<String>,
    /// Close the connection abruptly after this many SSE events.
    pub drop_after: Option<usize>,
    /// An in-stream provider error sent after the content, ending the
    /// stream (Anthropic `event: error`, OpenAI `{"error": …}` chunk).
    pub stream_error: Option<StreamErrorSpec>,
    /// Add an event of a type no client knows, to test that it is skipped.
    pub unknown_event: bool,
    /// Send these bytes as the body verbatim, one chunk each, instead of a
    /// generated stream (malformed JSON, odd framing).
    pub raw: Option<Vec<String>>,
    /// After the last event, keep the connection open until the client
    /// goes away (cancellation tests).
    pub hold: bool,
    /// Answer with the whole response as one JSON body
    /// (`Content-Type: application/json`: a `chat.completion` or a Messages
    /// `message`) although the request asked for a stream, as some proxies
    /// do.
    pub whole: bool,
    /// The output limit strikes after this many characters of the last
    /// tool call's input JSON: the rest of it never comes and the answer
    /// stops with `max_tokens` (`finish_reason: "length"`), as a real model
    /// cut off mid-call does.
    pub cut_input_at: Option<usize>,
}

impl Turn {
    pub fn text(text: &str) -> Self {
        Self { text: Pieces::One(text.to_owned()), ..Self::default() }
    }

    pub fn tool_call(name: &str, input: Value) -> Self {
        Self { tool_calls: vec![ToolCallSpec { id: None, name: name.to_owned(), input }], ..Self::default() }
    }

    pub fn status(status: u16) -> Self {
        Self { status: Some(status), ..Self::default() }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name.to_owned(), value.to_owned());
        self
    }

    pub fn raw(chunks: &[&str]) -> Self {
        Self { raw: Some(chunks.iter().map(|c| (*c).to_owned()).collect()), ..Self::default() }
    }

    /// An error answer: this status with this body, verbatim.
    pub fn error(status: u16, body: &str) -> Self {
        Self { status: Some(status), body: Some(body.to_owned()), ..Self::default() }
    }

    pub fn stop_reason(&self) -> String {
        if let Some(reason) = &self.stop_reason {
            return reason.clone();
        }
        if self.cut_input_at.is_some() {
            "max_tokens".to_owned()
        } else if self.tool_calls.is_empty() {
            "end_turn".to_owned()
        } else {
            "tool_use".to_owned()
        }
    }

    /// The input JSON of tool call `i` as the model produced it: whole, or
    /// cut where `cut_input_at` says for the last call.
    pub fn tool_input_text(&self, i: usize) -> String {
        let text = self.tool_calls.get(i).map(|c| c.input.to_string()).unwrap_or_default();
        match self.cut_input_at {
            Some(n) if i + 1 == self.tool_calls.len() => text.chars().take(n).collect(),
            _ => text,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Default `toolu_fake_N` / `call_fake_N`.
    pub id: Option<String>,
    pub name: String,
    pub input: Value,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UsageSpec {
    pub input: u64,
    pub output: u64,
}

impl Default for UsageSpec {
    fn default() -> Self {
        Self { input: 10, output: 5 }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamErrorSpec {
    pub kind: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_scenarios_parse() {
        let s = Scenario::from_toml(
            r#"
            repeat = true
            [[turn]]
            text = ["a", "b"]
            tool_calls = [{ name = "shell", input = { command = "ls" } }]
            [[turn]]
            status = 429
            headers = { retry-after = "0" }
            "#,
        )
        .unwrap();
        assert!(s.repeat);
        assert_eq!(s.turns[0].text.pieces(), ["a", "b"]);
        assert_eq!(s.turns[0].stop_reason(), "tool_use");
        assert_eq!(s.turns[1].headers["retry-after"], "0");
        assert!(Scenario::from_toml("[[turn]]\ntxt = 1\n").is_err());

        let s = Scenario::from_toml(
            r#"
            [[turn]]
            whole = true
            tool_calls = [{ name = "shell", input = { command = "ls" } }]
            cut_input_at = 9
            "#,
        )
        .unwrap();
        assert!(s.turns[0].whole);
        assert_eq!(s.turns[0].stop_reason(), "max_tokens");
        assert_eq!(s.turns[0].tool_input_text(0), r#"{"command"#);

        let s = Scenario::from_toml(
            r#"
            [[conversation]]
            instruction_contains = "child"
            [[conversation.turn]]
            text = "from the child"
            "#,
        )
        .unwrap();
        assert_eq!(s.conversations[0].instruction_contains, "child");
        assert_eq!(s.conversations[0].turns[0].text.pieces(), ["from the child"]);
    }
}
