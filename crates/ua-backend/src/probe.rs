//! Whether a backend's endpoint answers, and takes its key, without
//! spending a token: one GET of the API's model list, which both APIs
//! serve, which needs the key (a rejected one comes back as 401 or 403),
//! and whose TLS handshake is the one every call makes.

use std::time::{Duration, Instant};

use crate::config::Kind;
use crate::provider::ProviderSettings;
use crate::transport::Transport;

/// What the endpoint did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The URL asked.
    pub url: String,
    /// The HTTP status, or why no response came (one line).
    pub outcome: Result<u16, String>,
    pub took: Duration,
}

/// What a status means for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 2xx: reachable and the key is taken.
    Fine,
    /// 401 or 403: reachable, the key is refused.
    KeyRefused,
    /// Any other status (404 from a server without a model list, 429,
    /// 5xx): reachable, but this says nothing about the key.
    Answered,
}

/// What `status` says.
pub fn answer(status: u16) -> Answer {
    match status {
        200..=299 => Answer::Fine,
        401 | 403 => Answer::KeyRefused,
        _ => Answer::Answered,
    }
}

/// The model list's URL for each API.
pub fn models_url(kind: Kind, base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    match kind {
        Kind::Anthropic => format!("{base}/v1/models"),
        Kind::Openai => format!("{base}/models"),
    }
}

/// Asks `settings`' endpoint for its model list with its key, giving up
/// after `timeout`.
pub async fn probe(settings: &ProviderSettings, transport: &Transport, timeout: Duration) -> Probe {
    let url = models_url(settings.kind, &settings.base_url);
    let headers = match settings.kind {
        Kind::Anthropic => crate::anthropic::headers(settings),
        Kind::Openai => crate::openai::headers(settings),
    };
    let started = Instant::now();
    let outcome = transport.status(&url, &headers, timeout).await;
    Probe { url, outcome, took: started.elapsed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_lists_its_models_beside_its_calls() {
        assert_eq!(models_url(Kind::Anthropic, "https://api.anthropic.com/"), "https://api.anthropic.com/v1/models");
        assert_eq!(models_url(Kind::Openai, "http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434/v1/models");
        assert_eq!(answer(200), Answer::Fine);
        assert_eq!(answer(401), Answer::KeyRefused);
        assert_eq!(answer(404), Answer::Answered);
    }
}
