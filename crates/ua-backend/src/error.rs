//! One error type for everything that can go wrong talking to a model.

use std::time::Duration;

use ua_protocol::event::StreamEvent;

use crate::limits::{Overflow, Stated, overflow};

/// The class of a [`BackendError`], for code that must react differently
/// (the agent trims its context on `ContextTooLong`, lowers `max_tokens` on
/// `OutputTooLong`, falls back to the next backend on `Unreachable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidKey,
    UnknownModel,
    OutOfCredit,
    ContextTooLong,
    OutputTooLong,
    RateLimited,
    Overloaded,
    Unreachable,
    Interrupted,
    MalformedStream,
    Http,
    Remote,
    Config,
}

/// Everything a provider call can fail with. Every variant's message is one
/// sentence that says what happened and, where the user can act, what to do.
///
/// Retryable variants (see [`BackendError::is_retryable`]) are retried by
/// the transport only before the first byte of a response arrived; once
/// output was yielded nothing is retried silently.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Fatal: the provider rejected the key (HTTP 401/403).
    #[error("backend '{backend}' rejected the API key (HTTP {status}); check {hint} and try again")]
    InvalidKey { backend: String, status: u16, hint: String },
    /// Fatal: the model does not exist for this key (HTTP 404).
    #[error(
        "backend '{backend}' does not know model '{model}' (HTTP 404); set a model it serves with --model or in config.toml"
    )]
    UnknownModel { backend: String, model: String },
    /// Fatal, not retried: the account has no credit or quota left (OpenAI's
    /// `insufficient_quota` 429, Anthropic's "credit balance is too low"
    /// 400, HTTP 402). Waiting does not help, so unlike a rate limit it is
    /// never retried; another backend may still serve, so it falls back.
    #[error(
        "backend '{backend}' refused the request because the account is out of credit or quota ({detail}); add credit or raise the limit in the provider's billing settings, or pick another backend with --backend"
    )]
    OutOfCredit { backend: String, detail: String },
    /// Fatal as sent, but recoverable: trim the conversation (into the
    /// window the server stated, if it did) and call again.
    #[error("the conversation is too long for backend '{backend}': {detail}")]
    ContextTooLong { backend: String, detail: String, stated: Stated },
    /// Fatal as sent, but recoverable: the prompt fits but not with the
    /// output asked for; call again with a smaller `max_tokens`.
    #[error(
        "backend '{backend}' has no room for an answer of the requested length ({detail}); lower max_tokens for it in config.toml"
    )]
    OutputTooLong { backend: String, detail: String, stated: Stated },
    /// Retryable: HTTP 429.
    #[error("backend '{backend}' is rate limiting requests{}; wait and try again", wait_phrase(.retry_after))]
    RateLimited { backend: String, retry_after: Option<Duration> },
    /// Retryable: HTTP 529 or 503, or an `overloaded_error` in the stream.
    #[error("backend '{backend}' is overloaded ({detail}); try again shortly")]
    Overloaded { backend: String, detail: String },
    /// Retryable: no connection could be made, or none answered in time.
    #[error("cannot reach backend '{backend}' at {url}: {detail}")]
    Unreachable { backend: String, url: String, detail: String },
    /// Fatal: the connection broke after output was shown; not retried so
    /// nothing is repeated behind the user's back.
    #[error("the response from backend '{backend}' was cut off: {detail}")]
    Interrupted { backend: String, detail: String, received: Vec<StreamEvent> },
    /// Fatal: the stream could not be decoded. `received` keeps every event
    /// decoded before the fault.
    #[error("backend '{backend}' sent a malformed stream: {detail}")]
    MalformedStream { backend: String, detail: String, received: Vec<StreamEvent> },
    /// Any other HTTP failure; retryable when the status is 5xx.
    #[error("backend '{backend}' answered HTTP {status}: {message}")]
    Http { backend: String, status: u16, message: String },
    /// Fatal: the provider reported an error inside the stream, of a kind
    /// with no better variant.
    #[error("backend '{backend}' reported an error mid-response ({kind}): {message}")]
    Remote { backend: String, kind: String, message: String },
    /// Fatal: configuration or key retrieval is wrong; the message names the
    /// setting or command to fix.
    #[error("{0}")]
    Config(String),
}

fn wait_phrase(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" (the server asks to wait {:.1} s)", d.as_secs_f64()),
        None => String::new(),
    }
}

impl BackendError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidKey { .. } => ErrorKind::InvalidKey,
            Self::UnknownModel { .. } => ErrorKind::UnknownModel,
            Self::OutOfCredit { .. } => ErrorKind::OutOfCredit,
            Self::ContextTooLong { .. } => ErrorKind::ContextTooLong,
            Self::OutputTooLong { .. } => ErrorKind::OutputTooLong,
            Self::RateLimited { .. } => ErrorKind::RateLimited,
            Self::Overloaded { .. } => ErrorKind::Overloaded,
            Self::Unreachable { .. } => ErrorKind::Unreachable,
            Self::Interrupted { .. } => ErrorKind::Interrupted,
            Self::MalformedStream { .. } => ErrorKind::MalformedStream,
            Self::Http { .. } => ErrorKind::Http,
            Self::Remote { .. } => ErrorKind::Remote,
            Self::Config(_) => ErrorKind::Config,
        }
    }

    /// Whether calling again, unchanged, may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. } | Self::Overloaded { .. } | Self::Unreachable { .. } => true,
            Self::Http { status, .. } => *status >= 500,
            Self::InvalidKey { .. }
            | Self::UnknownModel { .. }
            | Self::OutOfCredit { .. }
            | Self::ContextTooLong { .. }
            | Self::OutputTooLong { .. }
            | Self::Interrupted { .. }
            | Self::MalformedStream { .. }
            | Self::Remote { .. }
            | Self::Config(_) => false,
        }
    }

    /// Whether the next configured backend should be tried (design §14.8):
    /// this one cannot serve us now, for reasons another one may not share.
    pub fn warrants_fallback(&self) -> bool {
        matches!(
            self,
            Self::Unreachable { .. } | Self::Overloaded { .. } | Self::RateLimited { .. } | Self::OutOfCredit { .. }
        ) || matches!(self, Self::Http { status, .. } if *status >= 500)
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Events decoded before a mid-stream failure.
    pub fn received(&self) -> &[StreamEvent] {
        match self {
            Self::Interrupted { received, .. } | Self::MalformedStream { received, .. } => received,
            _ => &[],
        }
    }
}

/// Maps an HTTP error response to a [`BackendError`].
///
/// `body` is the provider's error JSON (or anything else); both providers
/// nest `{"error": {"type"|"code": …, "message": …}}`.
pub(crate) fn from_status(
    backend: &str,
    model: &str,
    key_hint: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> BackendError {
    let message = error_message(body);
    let backend = backend.to_owned();
    if is_out_of_credit(status, body) {
        return BackendError::OutOfCredit { backend, detail: format!("HTTP {status}: {message}") };
    }
    match overflow(status, body) {
        Some(Overflow::Context) => {
            return BackendError::ContextTooLong { backend, detail: message, stated: Stated::parse(body) };
        }
        Some(Overflow::Output) => {
            return BackendError::OutputTooLong { backend, detail: message, stated: Stated::parse(body) };
        }
        None => {}
    }
    match status {
        401 | 403 => BackendError::InvalidKey { backend, status, hint: key_hint.to_owned() },
        404 => BackendError::UnknownModel { backend, model: model.to_owned() },
        429 => BackendError::RateLimited { backend, retry_after },
        503 | 529 => BackendError::Overloaded { backend, detail: format!("HTTP {status}: {message}") },
        _ => BackendError::Http { backend, status, message },
    }
}

/// The human part of a provider error body, bounded so a stray HTML page
/// does not flood the terminal.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
        .and_then(|m| m.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| body.trim().to_owned());
    let msg = if msg.is_empty() { "no details given".to_owned() } else { msg };
    truncate_chars(&msg, 300)
}

fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// An error a provider reported inside a stream, classified as if it had
/// come as an HTTP 400 with the same type and message.
pub(crate) fn from_stream(backend: &str, kind: String, message: String) -> BackendError {
    let backend = backend.to_owned();
    let body = serde_json::json!({"error": {"type": kind, "message": message}}).to_string();
    match kind.as_str() {
        "overloaded_error" => return BackendError::Overloaded { backend, detail: message },
        "rate_limit_error" | "rate_limit_exceeded" => return BackendError::RateLimited { backend, retry_after: None },
        _ => {}
    }
    if is_out_of_credit(400, &body) {
        return BackendError::OutOfCredit { backend, detail: message };
    }
    match overflow(400, &body) {
        Some(Overflow::Context) => {
            BackendError::ContextTooLong { backend, detail: message, stated: Stated::parse(&body) }
        }
        Some(Overflow::Output) => {
            BackendError::OutputTooLong { backend, detail: message, stated: Stated::parse(&body) }
        }
        None => BackendError::Remote { backend, kind, message },
    }
}

/// Error types and phrases that mean the account cannot pay: OpenAI's
/// `insufficient_quota` (a 429 that looks like a rate limit but is not),
/// Anthropic's `billing_error` and its 400s about credit and spend limits,
/// OpenRouter's 402. Proxies such as LiteLLM may keep only the message,
/// so both the type and the wording count.
const CREDIT_MARKERS: &[&str] = &[
    "insufficient_quota",
    "billing_error",
    "billing_hard_limit_reached",
    "exceeded your current quota",
    "credit balance is too low",
    "insufficient credits",
    "reached your specified api usage limits",
    "reached your specified workspace api usage limits",
];

/// Whether an error response says the account is out of credit or quota.
pub(crate) fn is_out_of_credit(status: u16, body: &str) -> bool {
    if status == 402 {
        return true;
    }
    if !matches!(status, 400 | 403 | 429) {
        return false;
    }
    let lower = body.to_ascii_lowercase();
    if !CREDIT_MARKERS.iter().any(|m| lower.contains(m)) {
        return false;
    }
    // Gemini says "You exceeded your current quota" for its per-minute
    // limits too; those pass, so they stay rate limits.
    let per_time = ["per minute", "perminute", "per_minute", "per day", "perday", "retry in"];
    lower.contains("insufficient_quota") || !per_time.iter().any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(status: u16, body: &str) -> BackendError {
        from_status("anthropic", "claude-x", "ANTHROPIC_API_KEY", status, Some(Duration::from_secs(2)), body)
    }

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(err(401, "{}").kind(), ErrorKind::InvalidKey);
        assert_eq!(err(404, "").kind(), ErrorKind::UnknownModel);
        assert_eq!(err(429, "").kind(), ErrorKind::RateLimited);
        assert_eq!(err(529, "").kind(), ErrorKind::Overloaded);
        assert_eq!(err(503, "").kind(), ErrorKind::Overloaded);
        assert_eq!(err(500, "").kind(), ErrorKind::Http);
        assert!(err(500, "").is_retryable());
        assert!(!err(400, "bad").is_retryable());
        let long = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert_eq!(err(400, long).kind(), ErrorKind::ContextTooLong);
        let oa = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","code":"context_length_exceeded"}}"#;
        assert_eq!(err(400, oa).kind(), ErrorKind::ContextTooLong);
    }

    #[test]
    fn messages_are_one_sentence_with_the_fix() {
        assert_eq!(
            err(401, "").to_string(),
            "backend 'anthropic' rejected the API key (HTTP 401); check ANTHROPIC_API_KEY and try again"
        );
        assert_eq!(
            err(429, "").to_string(),
            "backend 'anthropic' is rate limiting requests (the server asks to wait 2.0 s); wait and try again"
        );
        assert!(err(404, "").to_string().contains("'claude-x'"));
        let e = err(
            400,
            r#"{"error":{"type":"invalid_request_error","message":"prompt is too long: 5 tokens > 4 maximum"}}"#,
        );
        assert_eq!(
            e.to_string(),
            "the conversation is too long for backend 'anthropic': prompt is too long: 5 tokens > 4 maximum"
        );
    }

    #[test]
    fn llama_cpp_context_overflow_is_context_too_long_with_its_window() {
        let body = r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}"#;
        let e = err(400, body);
        assert_eq!(e.kind(), ErrorKind::ContextTooLong);
        let BackendError::ContextTooLong { stated, .. } = &e else { panic!("{e:?}") };
        assert_eq!((stated.window, stated.prompt), (Some(4096), Some(4390)));
        assert_eq!(
            e.to_string(),
            "the conversation is too long for backend 'anthropic': request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it"
        );
        assert!(!e.is_retryable());
    }

    #[test]
    fn output_that_does_not_fit_is_output_too_long_not_context_too_long() {
        let body = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 8292 tokens (100 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
        let e = err(400, body);
        assert_eq!(e.kind(), ErrorKind::OutputTooLong);
        assert!(!e.is_retryable() && !e.warrants_fallback());
        let msg = e.to_string();
        assert!(
            msg.starts_with("backend 'anthropic' has no room for an answer of the requested length (This model"),
            "{msg}"
        );
        assert!(msg.ends_with("; lower max_tokens for it in config.toml"), "{msg}");
    }

    #[test]
    fn insufficient_quota_is_out_of_credit_not_a_rate_limit() {
        let body = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let e = err(429, body);
        assert_eq!(e.kind(), ErrorKind::OutOfCredit);
        assert!(!e.is_retryable(), "waiting does not bring credit back");
        assert_eq!(e.retry_after(), None);
        assert!(e.warrants_fallback(), "another backend may have credit");
        let msg = e.to_string();
        assert!(
            msg.contains("out of credit or quota (HTTP 429: You exceeded your current quota, please check your plan"),
            "{msg}"
        );
        assert!(msg.ends_with("or pick another backend with --backend"), "{msg}");
        // A plain 429 is still a rate limit.
        assert_eq!(err(429, r#"{"error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#).kind(), ErrorKind::RateLimited);
    }

    #[test]
    fn anthropic_billing_errors_are_out_of_credit_and_keep_the_message() {
        let low = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#;
        let e = err(400, low);
        assert_eq!(e.kind(), ErrorKind::OutOfCredit);
        assert!(e.to_string().contains("Your credit balance is too low to access the Anthropic API"), "{e}");
        let spend = r#"{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."}}"#;
        assert_eq!(err(400, spend).kind(), ErrorKind::OutOfCredit);
        let billing = r#"{"type":"error","error":{"type":"billing_error","message":"Your organization has no valid payment method."}}"#;
        assert_eq!(err(402, billing).kind(), ErrorKind::OutOfCredit);
        // LiteLLM keeps the wording but not the type.
        let proxied = r#"{"error":{"message":"litellm.RateLimitError: RateLimitError: OpenAIException - You exceeded your current quota, please check your plan and billing details.","type":null,"param":null,"code":"429"}}"#;
        assert_eq!(err(429, proxied).kind(), ErrorKind::OutOfCredit);
        // Gemini's per-minute limit uses the same words but passes.
        let gemini = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.0-flash\nPlease retry in 29.4s.","status":"RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(err(429, gemini).kind(), ErrorKind::RateLimited);
    }

    #[test]
    fn errors_inside_a_stream_are_classified_like_bodies() {
        let e = from_stream("b", "insufficient_quota".into(), "You exceeded your current quota".into());
        assert_eq!(e.kind(), ErrorKind::OutOfCredit);
        assert_eq!(
            e.to_string(),
            "backend 'b' refused the request because the account is out of credit or quota (You exceeded your current quota); add credit or raise the limit in the provider's billing settings, or pick another backend with --backend"
        );
        let e = from_stream(
            "b",
            "exceed_context_size_error".into(),
            "request (300 tokens) exceeds the available context size (256 tokens), try increasing it".into(),
        );
        assert_eq!(e.kind(), ErrorKind::ContextTooLong);
        assert_eq!(from_stream("b", "overloaded_error".into(), "Overloaded".into()).kind(), ErrorKind::Overloaded);
        assert_eq!(from_stream("b", "server_error".into(), "boom".into()).kind(), ErrorKind::Remote);
    }

    #[test]
    fn long_bodies_are_bounded() {
        let body = "x".repeat(5000);
        let msg = err(500, &body).to_string();
        assert!(msg.len() < 400, "{}", msg.len());
    }
}
