//! Sending spans to an OpenTelemetry collector over OTLP/HTTP, and the
//! [`Recorder`] a session hands its finished spans to.
//!
//! Nothing leaves the machine unless an endpoint is configured. Sending
//! runs on a thread of its own with short timeouts, after the session has
//! given the terminal back; a failure is reported once, in one line, and
//! the spans stay in `traces.jsonl` for `unixagent traces export`.

use std::time::Duration;

use crate::sink::Sink;
use crate::span::Span;

/// How long an OTLP/HTTP export may take in all.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// What a session does with the spans its tracer finishes: append them to
/// the sink at once, and keep them for the collector if one is configured.
/// Failures come back as one line, once.
#[derive(Debug)]
pub struct Recorder {
    sink: Option<Sink>,
    endpoint: Option<String>,
    kept: Vec<Span>,
    failed: bool,
}

/// At most this many spans are kept in memory for the collector; the rest
/// are in `traces.jsonl`.
const KEEP: usize = 20_000;

impl Recorder {
    pub fn new(sink: Option<Sink>, endpoint: Option<String>) -> Self {
        Self { sink, endpoint: endpoint.filter(|e| !e.is_empty()), kept: Vec::new(), failed: false }
    }

    /// Appends finished spans; the line to show the first time it fails.
    pub fn record(&mut self, spans: Vec<Span>) -> Option<String> {
        if spans.is_empty() {
            return None;
        }
        let mut problem = None;
        if let Some(sink) = &self.sink
            && let Err(e) = sink.append(&spans)
            && !self.failed
        {
            self.failed = true;
            problem = Some(format!(
                "unixagent: spans cannot be written to {} ({e}); this session's trace is incomplete there",
                sink.path().display()
            ));
        }
        if self.endpoint.is_some() {
            let room = KEEP.saturating_sub(self.kept.len());
            self.kept.extend(spans.into_iter().take(room));
        }
        problem
    }

    /// At the session's end: sends the kept spans to the collector, if one
    /// is configured, waiting at most [`SEND_TIMEOUT`]. The line to show
    /// if that failed.
    pub fn finish(self) -> Option<String> {
        let endpoint = self.endpoint?;
        if self.kept.is_empty() {
            return None;
        }
        let n = self.kept.len();
        let (tx, rx) = std::sync::mpsc::channel();
        let url = traces_url(&endpoint);
        let spawned = std::thread::Builder::new().name("otlp".into()).spawn(move || {
            let _ = tx.send(post(&url, &self.kept, true));
        });
        let outcome = match spawned {
            Ok(_) => {
                rx.recv_timeout(SEND_TIMEOUT + Duration::from_secs(1)).unwrap_or_else(|_| Err("it timed out".into()))
            }
            Err(e) => Err(format!("no thread to send them on: {e}")),
        };
        outcome.err().map(|why| {
            format!(
                "unixagent: {n} span{} could not be sent to {endpoint}: {why}; they are in traces.jsonl (`unixagent traces export` writes them as OTLP)",
                if n == 1 { "" } else { "s" }
            )
        })
    }
}

/// `http://host:4318` → `http://host:4318/v1/traces` (the OTLP/HTTP path);
/// a URL that already names a path is used as it is.
pub fn traces_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim_end_matches('/');
    let after_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    if after_scheme.contains('/') { trimmed.to_string() } else { format!("{trimmed}/v1/traces") }
}

/// POSTs the spans as OTLP/JSON, one request per chunk. `use_proxy`:
/// honour `HTTPS_PROXY` and the like (off only in loopback tests).
fn post(url: &str, spans: &[Span], use_proxy: bool) -> Result<(), String> {
    // The same TLS set-up as the model backends (rustls over ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(2)).timeout(SEND_TIMEOUT);
    if !use_proxy {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        for body in crate::otlp::lines(spans) {
            let answer = client
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| reqwest_reason(&e))?;
            let status = answer.status();
            if !status.is_success() {
                let text = answer.text().await.unwrap_or_default();
                let text: String = text.chars().take(200).collect();
                return Err(format!(
                    "the collector answered {status}{}",
                    if text.is_empty() { String::new() } else { format!(": {text}") }
                ));
            }
        }
        Ok(())
    })
}

/// The innermost cause, which says what happened (connection refused,
/// timed out) where reqwest's own text only says the request failed.
fn reqwest_reason(e: &reqwest::Error) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(inner) = cur.source() {
        cur = inner;
    }
    cur.to_string()
}

#[cfg(test)]
#[path = "collector_tests.rs"]
mod tests;
