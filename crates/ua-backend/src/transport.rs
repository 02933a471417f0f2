//! HTTP: one shared client, and the driver that turns a request into a
//! stream of canonical events with retries before the first event.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use ua_protocol::event::{ProviderError, StreamEvent};

use crate::config::{BackendSection, Kind};
use crate::error::{BackendError, from_status, from_stream};
use crate::provider::EventStream;
use crate::retry::{RetryPolicy, jitter, parse_retry_after};
use crate::sse::{DecodeError, Decoder, Normalized, decoder_for};

/// Timeouts, retries and proxy use for every backend.
#[derive(Debug, Clone)]
pub struct TransportOptions {
    pub connect_timeout: Duration,
    /// The longest silence tolerated while waiting for the next bytes.
    pub read_timeout: Duration,
    pub retry: RetryPolicy,
    /// Honour HTTP(S)_PROXY. Tests on loopback turn it off so a proxy set
    /// in the environment cannot intercept them.
    pub use_proxy: bool,
}

impl Default for TransportOptions {
    fn default() -> Self {
        Self::from_section(&BackendSection::default())
    }
}

impl TransportOptions {
    pub fn from_section(section: &BackendSection) -> Self {
        let mut retry = RetryPolicy::default();
        if let Some(n) = section.max_retries {
            retry.max_retries = n;
        }
        Self {
            connect_timeout: section.connect_timeout(),
            read_timeout: section.read_timeout(),
            retry,
            use_proxy: true,
        }
    }
}

/// The shared HTTP client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    retry: RetryPolicy,
}

impl Transport {
    pub fn new(options: &TransportOptions) -> Result<Self, BackendError> {
        // reqwest is built without a bundled crypto provider (ring instead
        // of aws-lc keeps the C build out); rustls needs a process default
        // before any client exists. An Err means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder =
            reqwest::Client::builder().connect_timeout(options.connect_timeout).read_timeout(options.read_timeout);
        if !options.use_proxy {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| BackendError::Config(format!("cannot set up the HTTP client: {}", chain(&e))))?;
        Ok(Self { client, retry: options.retry.clone() })
    }

    /// One GET with `headers`, given up after `timeout`: the response's
    /// status, or why there was none, as one line (for [`crate::probe`]).
    pub(crate) async fn status(
        &self,
        url: &str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<u16, String> {
        let mut req = self.client.get(url).timeout(timeout);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        req.send().await.map(|r| r.status().as_u16()).map_err(|e| chain(&e))
    }
}

/// One prepared provider request. Deliberately not `Debug`: its headers
/// hold the API key in clear.
pub(crate) struct Call {
    pub backend: String,
    pub model: String,
    pub kind: Kind,
    pub url: String,
    /// Includes the key header; never formatted into any message.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub key_hint: String,
}

/// An error with its sources, as one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = inner.source();
    }
    s
}

type Frames = Pin<Box<dyn Stream<Item = Result<eventsource_stream::Event, EventStreamError<reqwest::Error>>> + Send>>;

/// What a successful response turned out to be.
enum Body {
    /// Server-sent events, as asked for.
    Stream(Frames),
    /// One JSON document (`Content-Type: application/json`): some proxies
    /// answer a streaming request with the whole response at once.
    Whole(Bytes),
}

/// The canonical events of a whole JSON response.
fn decode_whole(kind: Kind, body: &[u8]) -> Result<Vec<StreamEvent>, DecodeError> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| DecodeError::Malformed(format!("invalid JSON in a non-streamed response: {e}")))?;
    match kind {
        Kind::Anthropic => crate::anthropic::whole::events(&v),
        Kind::Openai => crate::openai::whole::events(&v),
    }
}

enum Phase {
    Connect,
    Streaming(Frames),
    Done,
}

struct Driver {
    transport: Transport,
    call: Call,
    phase: Phase,
    decoder: Box<dyn Decoder>,
    pending: VecDeque<Result<StreamEvent, BackendError>>,
    /// Every event decoded this attempt, kept for error reports.
    received: Vec<StreamEvent>,
    /// Whether the consumer has seen an event: from then on nothing is
    /// retried, so nothing is shown twice.
    yielded: bool,
    retries: u32,
}

/// Starts a call; nothing happens until the stream is polled, and dropping
/// the stream drops the response, which closes the connection at once.
pub(crate) fn run(transport: Transport, call: Call) -> EventStream {
    let driver = Driver {
        decoder: decoder_for(call.kind),
        transport,
        call,
        phase: Phase::Connect,
        pending: VecDeque::new(),
        received: Vec::new(),
        yielded: false,
        retries: 0,
    };
    Box::pin(futures_util::stream::unfold(driver, |mut d| async move {
        let item = d.next().await?;
        Some((item, d))
    }))
}

impl Driver {
    async fn next(&mut self) -> Option<Result<StreamEvent, BackendError>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                self.yielded |= item.is_ok();
                return Some(item);
            }
            let frame = match &mut self.phase {
                Phase::Done => return None,
                Phase::Connect => {
                    match self.connect().await {
                        Ok(Body::Stream(frames)) => self.phase = Phase::Streaming(frames),
                        Ok(Body::Whole(bytes)) => match decode_whole(self.call.kind, &bytes) {
                            Ok(events) => {
                                self.phase = Phase::Done;
                                // An error body fails (and may retry) here.
                                self.accept(events).await;
                            }
                            Err(e) => self.decode_failed(e).await,
                        },
                        Err(e) => self.fail(e).await,
                    }
                    continue;
                }
                Phase::Streaming(frames) => frames.next().await,
            };
            match frame {
                Some(Ok(ev)) => match self.decoder.feed(&ev.event, &ev.data) {
                    Ok(events) => self.accept(events).await,
                    Err(e) => self.decode_failed(e).await,
                },
                Some(Err(EventStreamError::Transport(e))) => {
                    let err = self.lost(&chain(&e));
                    self.fail(err).await;
                }
                Some(Err(e)) => self.decode_failed(DecodeError::Malformed(format!("bad SSE framing: {e}"))).await,
                None => match self.decoder.finish() {
                    Ok(events) => {
                        self.accept(events).await;
                        self.phase = Phase::Done;
                    }
                    Err(e) => self.decode_failed(e).await,
                },
            }
        }
    }

    async fn connect(&mut self) -> Result<Body, BackendError> {
        let c = &self.call;
        let mut req = self
            .transport
            .client
            .post(&c.url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(c.body.clone());
        for (k, v) in &c.headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|e| BackendError::Unreachable {
            backend: c.backend.clone(),
            url: c.url.clone(),
            detail: chain(&e),
        })?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let wait = parse_retry_after(header("retry-after").as_deref(), header("retry-after-ms").as_deref());
            let body = resp.text().await.unwrap_or_default();
            return Err(from_status(&c.backend, &c.model, &c.key_hint, status, wait, &body));
        }
        let json = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("application/json"));
        if json {
            let body = resp.bytes().await.map_err(|e| self.lost(&chain(&e)))?;
            return Ok(Body::Whole(body));
        }
        let bytes = Box::pin(resp.bytes_stream());
        Ok(Body::Stream(Box::pin(Normalized::new(bytes).eventsource())))
    }

    async fn accept(&mut self, events: Vec<StreamEvent>) {
        for ev in events {
            if let StreamEvent::Error(pe) = ev {
                let err = self.remote(pe);
                self.fail(err).await;
                return;
            }
            self.received.push(ev.clone());
            self.pending.push_back(Ok(ev));
        }
        if self.decoder.is_done() {
            // The end marker came: stop reading now rather than wait for
            // the server to close.
            self.phase = Phase::Done;
        }
    }

    /// The connection broke after a successful status.
    fn lost(&self, detail: &str) -> BackendError {
        if self.yielded {
            BackendError::Interrupted {
                backend: self.call.backend.clone(),
                detail: detail.to_owned(),
                received: self.received.clone(),
            }
        } else {
            // Nothing shown yet, so this is as good as a failed connect.
            BackendError::Unreachable {
                backend: self.call.backend.clone(),
                url: self.call.url.clone(),
                detail: format!("connection lost before the response began: {detail}"),
            }
        }
    }

    fn remote(&self, pe: ProviderError) -> BackendError {
        from_stream(&self.call.backend, pe.kind, pe.message)
    }

    async fn decode_failed(&mut self, e: DecodeError) {
        let backend = self.call.backend.clone();
        let received = self.received.clone();
        self.phase = Phase::Done;
        self.pending.push_back(Err(match e {
            DecodeError::Truncated => BackendError::Interrupted { backend, detail: e.to_string(), received },
            DecodeError::Malformed(detail) => BackendError::MalformedStream { backend, detail, received },
        }));
    }

    /// Retries when nothing has been shown and the policy allows it;
    /// otherwise ends the stream with the error.
    async fn fail(&mut self, err: BackendError) {
        self.phase = Phase::Done;
        if !self.yielded
            && let Some(wait) = self.transport.retry.delay(self.retries, &err, jitter())
        {
            self.retries += 1;
            tokio::time::sleep(wait).await;
            self.decoder = decoder_for(self.call.kind);
            self.received.clear();
            self.pending.clear();
            self.phase = Phase::Connect;
            return;
        }
        self.pending.push_back(Err(err));
    }
}
