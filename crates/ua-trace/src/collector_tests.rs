use std::io::{Read as _, Write as _};
use std::net::TcpListener;

use super::*;
use crate::context::TraceContext;
use crate::tracer::{Command, Tracer};

fn some_spans() -> Vec<Span> {
    let mut t = Tracer::new(TraceContext::from_lookup(|_| None), "s", crate::span::resource("s"));
    t.instruction_started(1, 1, "x");
    t.command_started(2, &Command { id: "a", command: "true", decision: "allow", ..Default::default() });
    let mut spans: Vec<Span> = t.command_ended(3, "a", Some(0), "ok").into_iter().collect();
    spans.extend(t.instruction_ended(4, "ok"));
    spans
}

/// A one-request OTLP/HTTP receiver on loopback: answers `status` and
/// hands back the request's head and body.
fn receiver(status: u16) -> (String, std::thread::JoinHandle<(String, Vec<u8>)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let head_end = loop {
            let n = conn.read(&mut chunk).unwrap();
            assert!(n > 0, "the client closed before sending a request");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
            .expect("a content-length");
        while buf.len() < head_end + len {
            let n = conn.read(&mut chunk).unwrap();
            buf.extend_from_slice(&chunk[..n]);
        }
        let answer = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"
        );
        conn.write_all(answer.as_bytes()).unwrap();
        (head, buf[head_end..head_end + len].to_vec())
    });
    (format!("http://{addr}"), handle)
}

#[test]
fn spans_go_to_the_collector_as_otlp_json() {
    let (endpoint, server) = receiver(200);
    let spans = some_spans();
    post(&traces_url(&endpoint), &spans, false).unwrap();
    let (head, body) = server.join().unwrap();
    assert!(head.starts_with("POST /v1/traces HTTP/1.1\r\n"), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{head}");
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let sent = v["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1]["name"], "invoke_agent unixagent");
}

#[test]
fn a_failure_is_one_line_naming_the_endpoint() {
    let (endpoint, server) = receiver(503);
    let e = post(&traces_url(&endpoint), &some_spans(), false).unwrap_err();
    server.join().unwrap();
    assert!(e.contains("503"), "{e}");
    // Nobody listening: one line from the recorder, naming the endpoint.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut r = Recorder::new(None, Some(format!("http://{closed}")));
    assert!(r.record(some_spans()).is_none());
    let line = r.finish().expect("a failure is reported");
    assert!(line.starts_with("unixagent: 2 spans could not be sent to http://127.0.0.1:"), "{line}");
    assert!(line.contains("traces export") && !line.contains('\n'), "{line}");
}

#[test]
fn the_traces_path_is_added_to_a_bare_endpoint() {
    assert_eq!(traces_url("http://c:4318"), "http://c:4318/v1/traces");
    assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
    assert_eq!(traces_url("https://c/otlp/v1/traces"), "https://c/otlp/v1/traces");
}

#[test]
fn a_sink_that_cannot_be_written_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "").unwrap();
    // A path under a regular file can never be created.
    let mut r = Recorder::new(Some(Sink::at(file.join("traces.jsonl"))), None);
    let first = r.record(some_spans()).expect("reported");
    assert!(first.starts_with("unixagent: spans cannot be written to"), "{first}");
    assert!(r.record(some_spans()).is_none(), "only once");
    assert!(r.finish().is_none(), "no endpoint: nothing to send");
}
