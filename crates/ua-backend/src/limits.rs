//! Token limits: the numbers servers state when a request does not fit,
//! whether the prompt or the requested output is what does not fit, and
//! what to ask for next time. Pure: no I/O, no clock.
//!
//! The shapes read here (with the servers that send them):
//!
//! | server | body |
//! |---|---|
//! | llama.cpp | `{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}` |
//! | OpenAI, older vLLM | `This model's maximum context length is 4096 tokens. However, you requested 8292 tokens (100 in the messages, 8192 in the completion). …` |
//! | vLLM | `'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).` |
//! | vLLM | `This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens. …` |
//! | OpenAI | `max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.` |
//! | Anthropic | `input length and \`max_tokens\` exceed context limit: 178959 + 64000 > 200000, decrease input length or \`max_tokens\` and try again` |
//! | Anthropic | `max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-…` |
//! | Anthropic | `prompt is too long: 210000 tokens > 200000 maximum` |
//! | LiteLLM | any of the above behind `litellm.ContextWindowExceededError: …` |
//!
//! A request whose prompt fits but whose prompt plus `max_tokens` does not
//! is an *output* overflow: the cure is a smaller `max_tokens`, not a
//! shorter conversation. Everything else that says "too long" is a
//! *context* overflow: trim and call again.

use serde_json::Value;

use crate::error::BackendError;

/// Token counts a server stated in an error; any may be missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stated {
    /// The model's whole window (prompt and output together).
    pub window: Option<u64>,
    /// The prompt as the server counted it.
    pub prompt: Option<u64>,
    /// The output limit the request asked for.
    pub output: Option<u64>,
    /// The most output the model may produce, whatever the window.
    pub max_output: Option<u64>,
}

/// Which part of a request did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// The prompt itself: trim the conversation.
    Context,
    /// The prompt fits, but not with the output asked for: lower
    /// `max_tokens`.
    Output,
}

/// Phrases that mean "too long" in the bodies of the servers above. Matched
/// on the lowercased body.
const CONTEXT_PHRASES: &[&str] = &[
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    // LiteLLM's class name, kept in its messages.
    "contextwindowexceedederror",
    "too many tokens",
    "request_too_large",
    "exceed context limit",
    // llama.cpp.
    "exceed_context_size_error",
    "exceeds the available context size",
    "larger than the max context size",
    "context size has been exceeded",
];

/// Phrases that name the output limit.
const OUTPUT_PHRASES: &[&str] =
    &["max_tokens", "max_completion_tokens", "in the completion", "completion tokens", "output tokens"];

/// llama.cpp answers its own phrases with HTTP 500 in some versions.
const LLAMA_PHRASES: &[&str] =
    &["exceed_context_size_error", "exceeds the available context size", "context size has been exceeded"];

/// Whether an error response says the request did not fit, and which part.
pub fn overflow(status: u16, body: &str) -> Option<Overflow> {
    let lower = body.to_ascii_lowercase();
    let status_fits = matches!(status, 400 | 413) || (status == 500 && LLAMA_PHRASES.iter().any(|p| lower.contains(p)));
    if !status_fits {
        return None;
    }
    let about_context = CONTEXT_PHRASES.iter().any(|p| lower.contains(p));
    let about_output = OUTPUT_PHRASES.iter().any(|p| lower.contains(p));
    let stated = Stated::parse(body);
    if about_output && stated.max_output.is_some() {
        return Some(Overflow::Output);
    }
    if about_output
        && let (Some(window), Some(prompt), Some(output)) = (stated.window, stated.prompt, stated.output)
        && prompt < window
        && prompt + output > window
    {
        return Some(Overflow::Output);
    }
    about_context.then_some(Overflow::Context)
}

impl Stated {
    /// Reads what numbers an error body states: llama.cpp's `n_ctx` and
    /// `n_prompt_tokens` fields, then the sentences of the table in the
    /// module docs.
    pub fn parse(body: &str) -> Self {
        let json: Option<Value> = serde_json::from_str(body).ok();
        let field = |name: &str| {
            json.as_ref()
                .and_then(|v| v.pointer(&format!("/error/{name}")).or_else(|| v.get(name)))
                .and_then(Value::as_u64)
        };
        let message = json
            .as_ref()
            .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
            .and_then(Value::as_str)
            .unwrap_or(body);
        let text = message.to_ascii_lowercase();
        let mut s = Self { window: field("n_ctx"), prompt: field("n_prompt_tokens"), ..Self::default() };

        // "request (4390 tokens) exceeds the available context size (4096 tokens)"
        if s.window.is_none() {
            s.window = number_after(&text, "available context size (");
        }
        if s.prompt.is_none() && text.contains("exceeds the available context size") {
            s.prompt = number_after(&text, "request (");
        }
        // "maximum context length is 4096 tokens"
        s.window = s.window.or_else(|| number_after(&text, "maximum context length is"));
        // "(100 in the messages, 50 in the functions, 8192 in the completion)"
        if let Some(messages) = number_before(&text, "in the messages") {
            s.prompt = Some(messages + number_before(&text, "in the functions").unwrap_or(0));
        }
        s.output = s.output.or_else(|| number_before(&text, "in the completion"));
        // "your request has 2778 input tokens", "your messages resulted in 5000 tokens"
        s.prompt = s.prompt.or_else(|| number_after(&text, "your request has"));
        s.prompt = s.prompt.or_else(|| number_after(&text, "your messages resulted in"));
        // "'max_tokens' or 'max_completion_tokens' is too large: 8000", "max_tokens is too large: 100000"
        s.output = s.output.or_else(|| number_after(&text, "is too large:"));
        // "supports at most 16384 completion tokens"
        s.max_output = number_after(&text, "supports at most");
        // "exceed context limit: 178959 + 64000 > 200000"
        if let Some([prompt, output, window]) = three_after(&text, "exceed context limit:") {
            s.prompt = Some(prompt);
            s.output = Some(output);
            s.window = Some(window);
        }
        // "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens"
        if text.contains("maximum allowed number of output tokens")
            && let Some([output, max, _]) = numbers_after(&text, "max_tokens:")
        {
            s.output = Some(output);
            s.max_output = Some(max);
        }
        // "prompt is too long: 210000 tokens > 200000 maximum"
        if let Some([prompt, window, _]) = numbers_after(&text, "prompt is too long:") {
            s.prompt = s.prompt.or(Some(prompt));
            s.window = s.window.or(Some(window));
        }
        s
    }

    /// The most output that fits beside the stated prompt, if the numbers
    /// say.
    pub fn room_for_output(&self) -> Option<u64> {
        let from_window = match (self.window, self.prompt) {
            (Some(w), Some(p)) if p < w => Some(w - p),
            _ => None,
        };
        match (from_window, self.max_output) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The first run of digits after `phrase`, skipping spaces and opening
/// punctuation.
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let at = text.find(phrase)? + phrase.len();
    leading_number(&text[at..])
}

fn leading_number(text: &str) -> Option<u64> {
    let rest = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '(' | '\'' | '"' | ':' | '`'));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The number right before `phrase` ("8192 in the completion").
fn number_before(text: &str, phrase: &str) -> Option<u64> {
    let at = text.find(phrase)?;
    let head = text[..at].trim_end();
    let start = head.rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    head[start..].parse().ok()
}

/// Up to three numbers after `phrase`, within the same sentence; missing
/// ones are 0.
fn numbers_after(text: &str, phrase: &str) -> Option<[u64; 3]> {
    let at = text.find(phrase)? + phrase.len();
    let sentence = text[at..].split(['.', ',']).next().unwrap_or("");
    let mut found = sentence.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()).map(str::parse::<u64>);
    let first = found.next()?.ok()?;
    let second = found.next()?.ok()?;
    let third = found.next().and_then(Result::ok).unwrap_or(0);
    Some([first, second, third])
}

fn three_after(text: &str, phrase: &str) -> Option<[u64; 3]> {
    numbers_after(text, phrase).filter(|n| n[2] > 0)
}

/// The default output limit when none is configured.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Below this many output tokens a retry with a lowered `max_tokens` is not
/// worth it (the answer would be cut off): the conversation is trimmed
/// instead.
pub const MIN_OUTPUT_TOKENS: u32 = 512;

/// The output limit to ask for: `configured`, or [`DEFAULT_MAX_TOKENS`]
/// when nothing is configured, kept inside the window so the prompt keeps
/// room. The default takes at most a quarter of the window (the share the
/// agent reserves for the answer when it fits a call), an explicit setting
/// at most half.
pub fn output_limit(configured: Option<u32>, window: u64) -> u32 {
    let share = match configured {
        None => window / 4,
        Some(_) => window / 2,
    };
    let share = u32::try_from(share).unwrap_or(u32::MAX);
    configured.unwrap_or(DEFAULT_MAX_TOKENS).min(share).max(1)
}

/// What to do after a call failed because something did not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// Call again, unchanged but for this smaller `max_tokens`.
    LowerMaxTokens { from: u32, to: u32 },
    /// The server's window is smaller than assumed: fit the conversation
    /// into it and call again.
    Refit { window: u64, assumed: u64 },
    /// Trim harder (half the budget) and call again.
    Trim,
}

impl Recovery {
    /// The one line to show, if this retry is worth telling about.
    pub fn notice(&self) -> Option<String> {
        match self {
            Self::LowerMaxTokens { from, to } => Some(format!(
                "the answer's limit of {from} tokens does not fit beside the conversation; asking again with max_tokens = {to}"
            )),
            Self::Refit { window, assumed } => Some(format!(
                "the server's context window is {window} tokens, not the {assumed} assumed; \
                 trimming the conversation to fit and asking again (set context_window in config.toml to start there)"
            )),
            Self::Trim => None,
        }
    }
}

/// At most this many retries for one call, whatever they are.
const MAX_RETRIES_PER_CALL: u32 = 3;

/// What a session has learned of its backend's limits, and the retry in
/// progress. The session asks it for the window and the output limit of
/// each call, tells it when a call starts, and hands it each failure.
///
/// Learned limits last for the session: a window the server stated is the
/// window from then on. A lowered `max_tokens` is for the retry only, since
/// the next prompt will be longer; later calls reserve a quarter of the
/// learned window for the answer and fit the prompt into the rest.
#[derive(Debug, Clone, Default)]
pub struct CallLimits {
    window: Option<u64>,
    max_output: Option<u32>,
    retry_max_tokens: Option<u32>,
    trim: bool,
    refitted: bool,
    retries: u32,
    retrying: bool,
}

impl CallLimits {
    /// A call starts: a retry keeps what [`CallLimits::recover`] decided,
    /// anything else starts clean.
    pub fn start_call(&mut self) {
        if !std::mem::take(&mut self.retrying) {
            self.retry_max_tokens = None;
            self.trim = false;
            self.refitted = false;
            self.retries = 0;
        }
    }

    /// The window to fit calls into: the provider's, or the smaller one the
    /// server stated.
    pub fn window(&self, assumed: u64) -> u64 {
        self.window.map_or(assumed, |w| w.min(assumed))
    }

    /// The output limit of calls in general (not of a lowered retry).
    pub fn max_tokens(&self, configured: u32) -> u32 {
        let mut n = configured;
        if let Some(w) = self.window {
            n = n.min(output_limit(None, w));
        }
        if let Some(m) = self.max_output {
            n = n.min(m);
        }
        n
    }

    /// The `max_tokens` to put in this call's request: `None` to leave the
    /// backend's own.
    pub fn request_max_tokens(&self, configured: u32) -> Option<u32> {
        let n = self.retry_max_tokens.unwrap_or_else(|| self.max_tokens(configured));
        (n != configured).then_some(n)
    }

    /// The tokens the system prompt and messages may use: the window less
    /// the answer's reserve (at least a quarter of the window, at most 16k,
    /// and never less than the output limit asked for) and `tools`.
    pub fn prompt_budget(&self, assumed_window: u64, configured_max: u32, tools: u64) -> u64 {
        let window = self.window(assumed_window);
        let reserve = (window / 4).min(16_384).max(u64::from(self.max_tokens(configured_max)));
        window.saturating_sub(reserve + tools)
    }

    /// Whether this call is a retry that should halve its prompt budget.
    pub fn trimming(&self) -> bool {
        self.trim
    }

    /// Decides how to retry after `err`, given the provider's assumed window
    /// and configured output limit; `None` when it is not an overflow or no
    /// retry is left. A `Some` means the next [`CallLimits::start_call`] is
    /// that retry.
    pub fn recover(&mut self, err: &BackendError, assumed_window: u64, configured_max: u32) -> Option<Recovery> {
        if self.retries >= MAX_RETRIES_PER_CALL {
            return None;
        }
        let recovery = match err {
            BackendError::OutputTooLong { stated, .. } => self.output_overflow(stated, assumed_window, configured_max),
            BackendError::ContextTooLong { stated, .. } => self.context_overflow(stated, assumed_window),
            _ => None,
        }?;
        self.retries += 1;
        self.retrying = true;
        Some(recovery)
    }

    fn learn_window(&mut self, stated: &Stated, assumed: u64) -> Option<u64> {
        let w = stated.window.filter(|w| *w > 0 && *w < self.window(assumed))?;
        self.window = Some(w);
        Some(w)
    }

    fn output_overflow(&mut self, stated: &Stated, assumed_window: u64, configured_max: u32) -> Option<Recovery> {
        let before = self.window(assumed_window);
        let learned = self.learn_window(stated, assumed_window);
        if let Some(m) = stated.max_output.and_then(|m| u32::try_from(m).ok()) {
            self.max_output = Some(self.max_output.map_or(m, |old| old.min(m)));
        }
        let sent = self.retry_max_tokens.unwrap_or_else(|| self.max_tokens(configured_max));
        let sent = stated.output.and_then(|o| u32::try_from(o).ok()).unwrap_or(sent);
        let room = stated.room_for_output().map_or(sent / 2, |r| u32::try_from(r).unwrap_or(u32::MAX));
        if room >= MIN_OUTPUT_TOKENS.min(self.max_tokens(configured_max)) && room < sent {
            self.retry_max_tokens = Some(room);
            return Some(Recovery::LowerMaxTokens { from: sent, to: room });
        }
        // Too little room beside this prompt: make room instead, fitting
        // into what is now known of the window.
        match learned {
            Some(window) if !self.refitted => {
                self.refitted = true;
                self.retry_max_tokens = None;
                Some(Recovery::Refit { window, assumed: before })
            }
            _ => self.trim_once(),
        }
    }

    fn context_overflow(&mut self, stated: &Stated, assumed_window: u64) -> Option<Recovery> {
        let before = self.window(assumed_window);
        match self.learn_window(stated, assumed_window) {
            Some(window) if !self.refitted => {
                self.refitted = true;
                Some(Recovery::Refit { window, assumed: before })
            }
            _ => self.trim_once(),
        }
    }

    fn trim_once(&mut self) -> Option<Recovery> {
        if self.trim {
            return None;
        }
        self.trim = true;
        self.retry_max_tokens = None;
        Some(Recovery::Trim)
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
