//! A fake LLM provider on loopback: a real HTTP server that plays scripted
//! turns in the Anthropic and OpenAI streaming formats and records every
//! request it received.
//!
//! One std thread accepts, one thread serves each connection. Every
//! response closes its connection, which keeps the server simple and makes
//! "the client went away" observable: while a stream is paused between
//! events the server is blocked in a read on the socket, which returns end
//! of file the moment the client closes.

pub mod scenario;
pub mod wire;

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use scenario::{Conversation, Scenario, SideAnswer, Turn};
use wire::Format;

/// How a recorded request's response ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestEnd {
    /// The whole scripted response was written.
    Completed,
    /// The client closed the connection before the response was done.
    ClientDisconnected,
    /// The scenario dropped the connection mid-stream (`drop_after`).
    ServerDropped,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `None` while the response is still being written.
    pub end: Option<RequestEnd>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct State {
    requests: Vec<RecordedRequest>,
    next_turn: usize,
    /// Each conversation's next turn, by its index in the scenario.
    conversation_next: Vec<usize>,
}

struct Shared {
    scenario: Scenario,
    state: Mutex<State>,
    changed: Condvar,
    stopping: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking connection thread must not take the recorder down.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finish(&self, index: usize, end: RequestEnd) {
        let mut st = self.lock();
        if let Some(r) = st.requests.get_mut(index) {
            r.end.get_or_insert(end);
        }
        self.changed.notify_all();
    }
}

/// The running server. Dropping it stops accepting connections.
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider").field("addr", &self.addr).finish()
    }
}

impl FakeProvider {
    /// Binds 127.0.0.1 on an ephemeral port and starts serving.
    pub fn start(scenario: Scenario) -> io::Result<Self> {
        Self::start_on(scenario, 0)
    }

    pub fn start_on(scenario: Scenario, port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            scenario,
            state: Mutex::default(),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let acceptor = thread::Builder::new().name("fake-provider".into()).spawn(move || accept_loop(&listener, &s))?;
        Ok(Self { addr, shared, acceptor: Some(acceptor) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL (`ANTHROPIC_BASE_URL`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI base URL (`OPENAI_BASE_URL`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Waits until `pred` holds for the recorded requests, or `timeout`.
    pub fn wait_until(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&[RecordedRequest]) -> bool,
    ) -> Result<Vec<RecordedRequest>, String> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        loop {
            if pred(&st.requests) {
                return Ok(st.requests.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(format!(
                    "condition not met within {timeout:?}; requests so far: {:#?}",
                    st.requests.iter().map(|r| (&r.path, r.end)).collect::<Vec<_>>()
                ));
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Waits for request `index` to end and says how it ended.
    pub fn wait_for_end(&self, index: usize, timeout: Duration) -> Result<RequestEnd, String> {
        let reqs = self.wait_until(timeout, |r| r.get(index).is_some_and(|r| r.end.is_some()))?;
        reqs[index].end.ok_or_else(|| "request ended without a recorded end".to_owned())
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

/// The text of a request's first user message (Anthropic: the first of
/// `messages`; OpenAI: the first after the system message), which is the
/// instruction an agent started with.
fn first_user_text(body: &Value) -> String {
    let Some(first) = body["messages"].as_array().and_then(|m| m.iter().find(|m| m["role"] == "user")) else {
        return String::new();
    };
    match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = conn else { continue };
        let s = Arc::clone(shared);
        let _ = thread::Builder::new().name("fake-provider-conn".into()).spawn(move || {
            let _ = serve(stream, &s);
        });
    }
}

struct Parsed {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Reads one request: headers with httparse, then a Content-Length body.
fn read_request(stream: &mut TcpStream) -> io::Result<Option<Parsed>> {
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        let status = req.parse(&buf).map_err(|e| io::Error::new(ErrorKind::InvalidData, e))?;
        if let httparse::Status::Complete(head_len) = status {
            let headers: Vec<(String, String)> = req
                .headers
                .iter()
                .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into_owned()))
                .collect();
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            let method = req.method.unwrap_or("").to_owned();
            let path = req.path.unwrap_or("").to_owned();
            let mut body = buf.split_off(head_len);
            while body.len() < len {
                let n = stream.read(&mut chunk)?;
                if n == 0 {
                    return Ok(None);
                }
                body.extend_from_slice(&chunk[..n]);
            }
            body.truncate(len);
            return Ok(Some(Parsed { method, path, headers, body }));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn write_plain(stream: &mut TcpStream, status: u16, headers: &[(String, String)], body: &str) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

/// Waits `dur` while watching the socket: `true` if the client closed it.
/// The client sends nothing after its request, so any end of file or
/// reset during the wait is the client going away.
fn client_gone_within(stream: &TcpStream, dur: Duration) -> bool {
    let mut probe = [0u8; 64];
    let deadline = Instant::now() + dur;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // One non-blocking look, so a zero delay still notices.
            if stream.set_nonblocking(true).is_err() {
                return true;
            }
            let gone = match (&*stream).read(&mut probe) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != ErrorKind::WouldBlock,
            };
            let _ = stream.set_nonblocking(false);
            return gone;
        }
        if stream.set_read_timeout(Some(left)).is_err() {
            return true;
        }
        match (&*stream).read(&mut probe) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return true,
        }
    }
}

fn serve(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let Some(req) = read_request(&mut stream)? else {
        return Ok(());
    };
    let format = Format::from_path(&req.path);
    // Both APIs list their models at `…/models`; clients ask it to see
    // that the endpoint answers and takes the key (`unixagent doctor`).
    let listing = req.method == "GET" && req.path.split('?').next().is_some_and(|p| p.ends_with("/models"));
    let model = serde_json::from_slice::<Value>(&req.body)
        .ok()
        .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "fake-model".to_owned());
    let (index, turn) = {
        let mut st = shared.lock();
        st.requests.push(RecordedRequest {
            method: req.method,
            path: req.path,
            headers: req.headers,
            body: req.body,
            end: None,
        });
        let index = st.requests.len() - 1;
        let turns = &shared.scenario.turns;
        let body = String::from_utf8_lossy(&st.requests[index].body).into_owned();
        let side = shared.scenario.side.iter().find(|s| body.contains(&s.body_contains));
        let first = first_user_text(&st.requests[index].json());
        let conversation = shared.scenario.conversations.iter().position(|c| first.contains(&c.instruction_contains));
        let turn = if format.is_none() {
            None
        } else if let Some(side) = side {
            Some(side.turn.clone())
        } else if let Some(i) = conversation {
            let c = &shared.scenario.conversations[i];
            if st.conversation_next.len() <= i {
                st.conversation_next.resize(i + 1, 0);
            }
            let next = st.conversation_next[i];
            match c.turns.get(next) {
                Some(t) => {
                    st.conversation_next[i] = next + 1;
                    Some(t.clone())
                }
                None if c.repeat && !c.turns.is_empty() => {
                    st.conversation_next[i] = 1;
                    c.turns.first().cloned()
                }
                None => None,
            }
        } else if st.next_turn < turns.len() {
            st.next_turn += 1;
            turns.get(st.next_turn - 1).cloned()
        } else if shared.scenario.repeat && !turns.is_empty() {
            st.next_turn = 1;
            turns.first().cloned()
        } else {
            None
        };
        shared.changed.notify_all();
        (index, turn)
    };
    let result = if listing {
        write_plain(&mut stream, 200, &[], r#"{"data":[{"id":"fake-model","type":"model"}],"object":"list"}"#)
    } else {
        respond(&mut stream, format, turn, &model, index, shared)
    };
    shared.finish(index, if result.is_err() { RequestEnd::ClientDisconnected } else { RequestEnd::Completed });
    result
}

fn respond(
    stream: &mut TcpStream,
    format: Option<Format>,
    turn: Option<Turn>,
    model: &str,
    index: usize,
    shared: &Shared,
) -> io::Result<()> {
    let Some(format) = format else {
        return write_plain(stream, 404, &[], r#"{"error":{"message":"fake provider: unknown path"}}"#);
    };
    let Some(turn) = turn else {
        let body = r#"{"error":{"type":"api_error","message":"fake provider: the scenario has no more turns"}}"#;
        return write_plain(stream, 500, &[], body);
    };
    let headers: Vec<(String, String)> = turn.headers.clone().into_iter().collect();
    if let Some(status) = turn.status {
        let body = turn.body.clone().unwrap_or_else(|| wire::error_body(format, status));
        return write_plain(stream, status, &headers, &body);
    }
    if turn.whole {
        if client_gone_within(stream, Duration::from_millis(turn.delay_ms)) {
            return Err(io::Error::new(ErrorKind::ConnectionAborted, "client went away"));
        }
        return write_plain(stream, 200, &headers, &wire::whole(format, &turn, model, index));
    }
    let events = match &turn.raw {
        Some(raw) => raw.clone(),
        None => wire::render(format, &turn, model, index),
    };
    let mut head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                    transfer-encoding: chunked\r\nconnection: close\r\n"
        .to_owned();
    for (k, v) in &headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.flush()?;
    let gone = || io::Error::new(ErrorKind::ConnectionAborted, "client went away");
    for (i, event) in events.iter().enumerate() {
        if turn.drop_after == Some(i) {
            // Abrupt close with the chunked body unfinished: the client's
            // HTTP layer sees an incomplete body, as with a real cut.
            let _ = stream.shutdown(Shutdown::Both);
            shared.finish(index, RequestEnd::ServerDropped);
            return Ok(());
        }
        if client_gone_within(stream, Duration::from_millis(turn.delay_ms)) {
            return Err(gone());
        }
        let mut bytes = format!("{:x}\r\n{event}\r\n", event.len()).into_bytes();
        if i + 1 == events.len() && !turn.hold {
            // The terminator goes in the same write as the last event: a
            // client that stops reading at the provider's end marker then
            // cannot make a complete response look like a disconnect.
            bytes.extend_from_slice(b"0\r\n\r\n");
        }
        stream.write_all(&bytes)?;
        stream.flush()?;
    }
    if !turn.hold {
        if events.is_empty() {
            stream.write_all(b"0\r\n\r\n")?;
        }
        return stream.flush();
    }
    // Keep the response open until the client leaves; bounded so a
    // forgotten server thread cannot outlive the test run for long.
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if client_gone_within(stream, Duration::from_millis(500)) {
            return Err(gone());
        }
    }
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}
