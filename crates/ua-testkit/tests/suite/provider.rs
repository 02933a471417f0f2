//! The fake provider over plain sockets: what a client that knows nothing
//! of our backend crate would see.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use ua_testkit::provider::{FakeProvider, RequestEnd, Scenario, Turn};

const WAIT: Duration = Duration::from_secs(10);

fn post(server: &FakeProvider, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn plays_turns_in_order_in_the_requested_format_and_records_requests() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::text("one")).turn(Turn::text("two"))).unwrap();
    let a = post(&server, "/v1/messages", r#"{"model":"claude-x"}"#);
    assert!(a.starts_with("HTTP/1.1 200 OK\r\n"), "{a}");
    assert!(a.contains("transfer-encoding: chunked"));
    assert!(a.contains("event: message_start"));
    assert!(a.contains(r#""model":"claude-x""#));
    assert!(a.contains(r#""text":"one""#));
    assert!(a.ends_with("0\r\n\r\n"));
    let b = post(&server, "/v1/chat/completions", r#"{"model":"gpt-x"}"#);
    assert!(b.contains(r#""content":"two""#), "{b}");
    assert!(b.contains("data: [DONE]"));
    let reqs = server.wait_until(WAIT, |r| r.len() == 2 && r.iter().all(|r| r.end.is_some())).unwrap();
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("X-API-Key"), Some("k"));
    assert_eq!(reqs[1].json()["model"], "gpt-x");
    assert_eq!(reqs[1].end, Some(RequestEnd::Completed));
}

#[test]
fn exhausted_scripts_and_unknown_paths_answer_clearly() {
    let server = FakeProvider::start(Scenario::new()).unwrap();
    let r = post(&server, "/v1/messages", "{}");
    assert!(r.starts_with("HTTP/1.1 500"), "{r}");
    assert!(r.contains("the scenario has no more turns"));
    let r = post(&server, "/nope", "{}");
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
}

#[test]
fn repeat_starts_over() {
    let mut s = Scenario::new().turn(Turn::text("again"));
    s.repeat = true;
    let server = FakeProvider::start(s).unwrap();
    for _ in 0..3 {
        assert!(post(&server, "/v1/messages", "{}").contains("again"));
    }
}

#[test]
fn error_turns_carry_status_headers_and_a_provider_body() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::status(429).header("retry-after", "7"))).unwrap();
    let r = post(&server, "/v1/messages", "{}");
    assert!(r.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{r}");
    assert!(r.contains("retry-after: 7\r\n"));
    assert!(r.contains(r#""type":"rate_limit_error""#));
}

#[test]
fn a_client_that_leaves_is_observed() {
    let mut t = Turn::text("slow");
    t.hold = true;
    let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
    let mut s = TcpStream::connect(server.addr()).unwrap();
    write!(s, "POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n{{}}").unwrap();
    // Read until the text arrived, then hang up mid-stream.
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    while !line.contains("\"slow\"") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0);
    }
    assert_eq!(server.requests()[0].end, None);
    drop(reader);
    drop(s);
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ClientDisconnected));
}

#[test]
fn drop_after_cuts_the_body_short() {
    let mut t = Turn::text("cut");
    t.drop_after = Some(2);
    let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
    let r = post(&server, "/v1/messages", "{}");
    assert!(r.contains("event: ping"));
    assert!(!r.contains("content_block_start"));
    assert!(!r.ends_with("0\r\n\r\n"));
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ServerDropped));
}

#[test]
fn the_demo_scenario_parses() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../demo/scenarios/hello.toml");
    let s = Scenario::load(&path).unwrap();
    assert!(s.repeat);
    assert_eq!(s.turns.len(), 2);
    assert_eq!(s.turns[0].tool_calls[0].name, "shell");
}

#[test]
fn serve_prints_its_url_and_answers() {
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../demo/scenarios/hello.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ua-testkit"))
        .arg("serve")
        .arg(&scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let addr = url.trim().strip_prefix("http://").unwrap().to_owned();
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n{{}}").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(out.contains("\"reasoning_content\""), "{out}");
    assert!(out.contains("\"name\":\"shell\""), "{out}");
}
