//! One error type for everything that can go wrong talking to a model.

use std::time::Duration;

use ua_protocol::event::StreamEvent;

/// The class of a [`BackendError`], for code that must react differently
/// (the agent trims its context on `ContextTooLong`, falls back to the next
/// backend on `Unreachable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidKey,
    UnknownModel,
    ContextTooLong,
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
    /// Fatal as sent, but recoverable: trim the conversation and call again.
    #[error("the conversation is too long for backend '{backend}': {detail}")]
    ContextTooLong { backend: String, detail: String },
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
            Self::ContextTooLong { .. } => ErrorKind::ContextTooLong,
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
            | Self::ContextTooLong { .. }
            | Self::Interrupted { .. }
            | Self::MalformedStream { .. }
            | Self::Remote { .. }
            | Self::Config(_) => false,
        }
    }

    /// Whether the next configured backend should be tried (design §14.8):
    /// this one cannot serve us now, for reasons another one may not share.
    pub fn warrants_fallback(&self) -> bool {
        matches!(self, Self::Unreachable { .. } | Self::Overloaded { .. } | Self::RateLimited { .. })
            || matches!(self, Self::Http { status, .. } if *status >= 500)
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
    if is_context_too_long(status, body) {
        return BackendError::ContextTooLong { backend, detail: message };
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

/// Both providers say "too long" with a 400 (Anthropic also with 413), and
/// only the body tells it apart from other bad requests.
pub(crate) fn is_context_too_long(status: u16, body: &str) -> bool {
    if status != 400 && status != 413 {
        return false;
    }
    let lower = body.to_ascii_lowercase();
    [
        "prompt is too long",
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "too many tokens",
        "request_too_large",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
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
    fn long_bodies_are_bounded() {
        let body = "x".repeat(5000);
        let msg = err(500, &body).to_string();
        assert!(msg.len() < 400, "{}", msg.len());
    }
}
