//! Every error class reaches the caller as one sentence and a kind.

use futures_util::StreamExt;
use ua_backend::config::{BackendSpec, Kind};
use ua_backend::error::{BackendError, ErrorKind};
use ua_backend::key::KeySource;
use ua_backend::provider::{HttpProvider, Provider, ProviderSettings, Request};
use ua_protocol::conversation::Message;
use ua_protocol::event::StreamEvent;
use ua_testkit::provider::scenario::StreamErrorSpec;
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

use super::{provider_for, quick_retry, transport};

fn request() -> Request {
    Request { messages: vec![Message::user_text("hi")], ..Request::default() }
}

async fn first_error(server: &FakeProvider, kind: Kind) -> (Vec<StreamEvent>, BackendError) {
    let p = provider_for(server, kind, quick_retry(0));
    let mut s = p.stream(&request());
    let mut got = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(ev) => got.push(ev),
            Err(e) => return (got, e),
        }
    }
    panic!("stream ended without an error: {got:?}");
}

fn one_line(e: &BackendError) -> String {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.len() < 400, "{msg}");
    msg
}

#[tokio::test]
async fn http_statuses_map_to_kinds_and_sentences() {
    let too_long = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}"#;
    let cases: Vec<(Turn, ErrorKind, &str)> = vec![
        (Turn::status(401), ErrorKind::InvalidKey, "rejected the API key (HTTP 401); check TEST_API_KEY"),
        (Turn::status(404), ErrorKind::UnknownModel, "does not know model"),
        (
            Turn { body: Some(too_long.into()), ..Turn::status(400) },
            ErrorKind::ContextTooLong,
            "the conversation is too long for backend 'fake-anthropic': prompt is too long",
        ),
        (
            Turn::status(429).header("retry-after", "3600"),
            ErrorKind::RateLimited,
            "is rate limiting requests (the server asks to wait 3600.0 s)",
        ),
        (Turn::status(529), ErrorKind::Overloaded, "is overloaded (HTTP 529: Overloaded)"),
        (Turn::status(503), ErrorKind::Overloaded, "is overloaded (HTTP 503"),
        (Turn::status(500), ErrorKind::Http, "answered HTTP 500: internal server error"),
    ];
    for (turn, kind, needle) in cases {
        let server = FakeProvider::start(Scenario::new().turn(turn)).unwrap();
        let (events, e) = first_error(&server, Kind::Anthropic).await;
        assert!(events.is_empty());
        assert_eq!(e.kind(), kind, "{e}");
        let msg = one_line(&e);
        assert!(msg.contains(needle), "{msg} lacks {needle}");
    }
}

#[tokio::test]
async fn unreachable_names_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let p = HttpProvider::new(super::settings("gone", Kind::Anthropic, &base), transport(quick_retry(2)));
    let e = p.complete(&request()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable);
    let msg = one_line(&e);
    assert!(msg.starts_with(&format!("cannot reach backend 'gone' at {base}/v1/messages: ")), "{msg}");
}

#[tokio::test]
async fn mid_stream_overload_after_output_keeps_the_output() {
    let mut t = Turn::text("Partial");
    t.stream_error = Some(StreamErrorSpec { kind: "overloaded_error".into(), message: "Overloaded".into() });
    for kind in [Kind::Anthropic, Kind::Openai] {
        let server = FakeProvider::start(Scenario::new().turn(t.clone())).unwrap();
        let (events, e) = first_error(&server, kind).await;
        assert_eq!(events, vec![StreamEvent::TextDelta("Partial".into())]);
        assert_eq!(e.kind(), ErrorKind::Overloaded, "{kind:?}: {e}");
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn malformed_stream_keeps_what_was_received() {
    let t = Turn::raw(&[
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"so far\"}}\n\n",
        "event: content_block_delta\ndata: {oops\n\n",
    ]);
    let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
    let (events, e) = first_error(&server, Kind::Anthropic).await;
    assert_eq!(events, vec![StreamEvent::TextDelta("so far".into())]);
    assert_eq!(e.kind(), ErrorKind::MalformedStream);
    assert_eq!(e.received(), &[StreamEvent::TextDelta("so far".into())]);
    let msg = one_line(&e);
    assert!(msg.starts_with("backend 'fake-anthropic' sent a malformed stream: invalid JSON"), "{msg}");
}

#[tokio::test]
async fn connection_cut_after_output_is_interrupted_not_retried() {
    let mut t = Turn::text("Hello");
    // message_start, ping, block start, one delta: then the cut.
    t.drop_after = Some(4);
    let server = FakeProvider::start(Scenario::new().turn(t).turn(Turn::text("again"))).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(3));
    let mut s = p.stream(&request());
    assert_eq!(s.next().await.unwrap().unwrap(), StreamEvent::TextDelta("Hello".into()));
    let e = s.next().await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e}");
    assert!(s.next().await.is_none());
    assert_eq!(e.received(), &[StreamEvent::TextDelta("Hello".into())]);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn in_stream_context_overflow_is_its_own_kind() {
    let t = Turn {
        stream_error: Some(StreamErrorSpec {
            kind: "invalid_request_error".into(),
            message: "prompt is too long: 300000 tokens > 200000 maximum".into(),
        }),
        ..Turn::default()
    };
    let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
    let (_, e) = first_error(&server, Kind::Anthropic).await;
    assert_eq!(e.kind(), ErrorKind::ContextTooLong);
}

#[tokio::test]
async fn api_key_from_command_never_appears_in_errors_or_debug() {
    const SECRET: &str = "sk-ant-very-secret-0123456789";
    let server = FakeProvider::start(Scenario::new().turn(Turn::status(401))).unwrap();
    let spec = BackendSpec {
        name: "anthropic".into(),
        kind: Kind::Anthropic,
        model: "claude-sonnet-4-5".into(),
        base_url: server.base_url(),
        // The command builds the key so its own text does not contain it.
        key: KeySource::Command("printf '%s-%s\\n' sk-ant-very secret-0123456789".into()),
        max_tokens: Some(100),
        context_window: None,
        thinking_budget: None,
    };
    let settings = ProviderSettings::from_spec(&spec, &|_| None).unwrap();
    let p = HttpProvider::new(settings, transport(quick_retry(0)));
    let e = p.complete(&request()).await.unwrap_err();
    // The key did reach the server, in its header only.
    assert_eq!(server.requests()[0].header("x-api-key"), Some(SECRET));
    for text in [e.to_string(), format!("{e:?}"), format!("{p:?}"), format!("{:?}", p.settings())] {
        assert!(!text.contains(SECRET), "key leaked into: {text}");
    }
    assert!(e.to_string().contains("check the output of api_key_cmd `printf"), "{e}");

    // A failing command that printed the key before failing.
    let spec = BackendSpec {
        key: KeySource::Command(
            "printf '%s-%s\\n' sk-ant-very secret-0123456789; echo 'gpg: decryption failed' >&2; exit 2".into(),
        ),
        ..spec
    };
    let e = ProviderSettings::from_spec(&spec, &|_| None).unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("gpg: decryption failed"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!format!("{e:?}").contains(SECRET), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::Config);
}
