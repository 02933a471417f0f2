//! Retries, cancellation and fallback, observed from the server's side.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use ua_backend::config::Kind;
use ua_backend::error::ErrorKind;
use ua_backend::provider::{Fallback, HttpProvider, Provider, Request};
use ua_backend::retry::RetryPolicy;
use ua_protocol::conversation::Message;
use ua_protocol::event::StreamEvent;
use ua_testkit::provider::scenario::StreamErrorSpec;
use ua_testkit::provider::{FakeProvider, RequestEnd, Scenario, Turn};

use super::{WAIT, provider_for, quick_retry, settings, transport};

fn request() -> Request {
    Request { messages: vec![Message::user_text("hi")], ..Request::default() }
}

/// Guards against a hang turning into a stuck test run.
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.expect("the call did not finish within 30 s")
}

#[tokio::test]
async fn retry_after_is_honoured_instead_of_backoff() {
    // Backoff alone would wait an hour: only the short retry-after lets
    // the second attempt happen at all.
    let slow_backoff = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_secs(3600),
        max_delay: Duration::from_secs(3600),
        max_retry_after: Duration::from_secs(5),
    };
    for kind in [Kind::Anthropic, Kind::Openai] {
        let scenario =
            Scenario::new().turn(Turn::status(429).header("retry-after", "0.01")).turn(Turn::text("after the wait"));
        let server = FakeProvider::start(scenario).unwrap();
        let p = provider_for(&server, kind, slow_backoff.clone());
        let done = bounded(p.complete(&request())).await.unwrap();
        assert_eq!(done.message.text(), "after the wait");
        assert_eq!(server.request_count(), 2, "{kind:?}");
    }
}

#[tokio::test]
async fn retryable_statuses_are_retried_up_to_the_limit() {
    let scenario = Scenario::new()
        .turn(Turn::status(529))
        .turn(Turn::status(503))
        .turn(Turn::status(429))
        .turn(Turn::text("fourth time lucky"));
    let server = FakeProvider::start(scenario).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(3));
    let done = bounded(p.complete(&request())).await.unwrap();
    assert_eq!(done.message.text(), "fourth time lucky");
    assert_eq!(server.request_count(), 4);

    let scenario = Scenario::new().turn(Turn::status(529)).turn(Turn::status(529)).turn(Turn::text("never reached"));
    let server = FakeProvider::start(scenario).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(1));
    let e = bounded(p.complete(&request())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overloaded);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn fatal_statuses_are_not_retried() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::status(401)).turn(Turn::text("x"))).unwrap();
    let p = provider_for(&server, Kind::Openai, quick_retry(3));
    let e = bounded(p.complete(&request())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidKey);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn failures_before_the_first_event_are_retried() {
    // The connection drops before any event, then an in-stream overload
    // arrives before any output: neither showed the user anything.
    let mut dropped = Turn::text("lost");
    dropped.drop_after = Some(0);
    let overloaded = Turn {
        stream_error: Some(StreamErrorSpec { kind: "overloaded_error".into(), message: "Overloaded".into() }),
        ..Turn::default()
    };
    let scenario = Scenario::new().turn(dropped).turn(overloaded).turn(Turn::text("fine"));
    let server = FakeProvider::start(scenario).unwrap();
    let p = provider_for(&server, Kind::Anthropic, quick_retry(3));
    let done = bounded(p.complete(&request())).await.unwrap();
    assert_eq!(done.message.text(), "fine");
    assert_eq!(server.request_count(), 3);
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ServerDropped));
}

// Multi-threaded: the test blocks on the server while the HTTP
// connection task must run to close the socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_aborts_the_request_at_the_server() {
    for kind in [Kind::Anthropic, Kind::Openai] {
        let mut t = Turn::text("first words");
        t.hold = true;
        let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
        let p = provider_for(&server, kind, quick_retry(0));
        let mut s = p.stream(&request());
        let first = bounded(s.next()).await.unwrap().unwrap();
        assert_eq!(first, StreamEvent::TextDelta("first words".into()));
        assert_eq!(server.requests()[0].end, None, "still streaming");
        drop(s);
        assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ClientDisconnected), "{kind:?}");
    }
}

// Multi-threaded: the test blocks on the server while the HTTP
// connection task must run to close the socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_a_slow_stream_stops_it_promptly() {
    let mut t = Turn::text("x");
    t.text = ua_testkit::provider::scenario::Pieces::Many(vec!["tick".into(); 200]);
    t.delay_ms = 100;
    let server = FakeProvider::start(Scenario::new().turn(t)).unwrap();
    let p = provider_for(&server, Kind::Openai, quick_retry(0));
    let mut s = p.stream(&request());
    assert_eq!(bounded(s.next()).await.unwrap().unwrap(), StreamEvent::TextDelta("tick".into()));
    drop(s);
    // 200 ticks would take 20 s to play; the server sees the end long
    // before the scripted stream could have finished on its own.
    assert_eq!(server.wait_for_end(0, WAIT), Ok(RequestEnd::ClientDisconnected));
}

fn unreachable_base() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn fallback_moves_on_in_order_and_says_so() {
    let overloaded = FakeProvider::start(Scenario::new().turn(Turn::status(529))).unwrap();
    let healthy = FakeProvider::start(Scenario::new().turn(Turn::text("from the third"))).unwrap();
    let t = transport(quick_retry(0));
    let chain: Vec<Arc<dyn Provider>> = vec![
        Arc::new(HttpProvider::new(settings("first", Kind::Anthropic, &unreachable_base()), t.clone())),
        Arc::new(HttpProvider::new(settings("second", Kind::Anthropic, &overloaded.base_url()), t.clone())),
        Arc::new(HttpProvider::new(settings("third", Kind::Openai, &healthy.openai_base_url()), t)),
    ];
    let notes = Arc::new(Mutex::new(Vec::new()));
    let n = Arc::clone(&notes);
    let fb = Fallback::new(chain).unwrap().with_notice(Arc::new(move |failed, e, next| {
        n.lock().unwrap().push(format!("{failed} -> {next}: {:?}", e.kind()));
    }));
    assert_eq!(fb.name(), "first");
    let done = bounded(fb.complete(&request())).await.unwrap();
    assert_eq!(done.message.text(), "from the third");
    assert_eq!(overloaded.request_count(), 1);
    assert_eq!(healthy.request_count(), 1);
    assert_eq!(*notes.lock().unwrap(), ["first -> second: Unreachable", "second -> third: Overloaded"]);
}

#[tokio::test]
async fn fallback_does_not_hide_fatal_errors_or_repeat_output() {
    let bad_key = FakeProvider::start(Scenario::new().turn(Turn::status(401))).unwrap();
    let spare = FakeProvider::start(Scenario::new().turn(Turn::text("spare"))).unwrap();
    let t = transport(quick_retry(0));
    let chain: Vec<Arc<dyn Provider>> = vec![
        Arc::new(HttpProvider::new(settings("main", Kind::Anthropic, &bad_key.base_url()), t.clone())),
        Arc::new(HttpProvider::new(settings("spare", Kind::Anthropic, &spare.base_url()), t.clone())),
    ];
    let e = bounded(Fallback::new(chain).unwrap().complete(&request())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidKey);
    assert_eq!(spare.request_count(), 0);

    // Output already shown, then an overload: no switch, the error stands.
    let mut partial = Turn::text("half");
    partial.stream_error = Some(StreamErrorSpec { kind: "overloaded_error".into(), message: "Overloaded".into() });
    let flaky = FakeProvider::start(Scenario::new().turn(partial)).unwrap();
    let chain: Vec<Arc<dyn Provider>> = vec![
        Arc::new(HttpProvider::new(settings("flaky", Kind::Anthropic, &flaky.base_url()), t.clone())),
        Arc::new(HttpProvider::new(settings("spare", Kind::Anthropic, &spare.base_url()), t)),
    ];
    let fb = Fallback::new(chain).unwrap();
    let items: Vec<_> = bounded(fb.stream(&request()).collect::<Vec<_>>()).await;
    assert_eq!(items.len(), 2);
    assert!(matches!(&items[0], Ok(StreamEvent::TextDelta(t)) if t == "half"));
    assert!(matches!(&items[1], Err(e) if e.kind() == ErrorKind::Overloaded));
    assert_eq!(spare.request_count(), 0);
}
