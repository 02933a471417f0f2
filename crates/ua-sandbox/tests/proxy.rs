//! The allowlisting proxy on real sockets on 127.0.0.1: tunnels and plain
//! requests to local servers, refusals as clients see them, and curl
//! through it.

// Helpers outside #[test] functions are not covered by clippy.toml's
// allow-*-in-tests; a failing helper should panic loudly like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::oneshot;
use ua_sandbox::proxy::{Allowlist, Decision, serve};
use ua_sandbox::{HostPattern, HostRule};

/// How long any one exchange may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(20);

fn rules(entries: &[String]) -> Vec<HostRule> {
    entries.iter().map(|e| HostRule { host: HostPattern::parse(e).unwrap(), source: "test".into() }).collect()
}

/// A running proxy and what it decided.
struct Proxy {
    addr: SocketAddr,
    decisions: UnboundedReceiver<Decision>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    async fn start(allow: Allowlist) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, decisions) = unbounded_channel();
        let task = tokio::spawn(serve(listener, Arc::new(allow), Some(tx)));
        Self { addr, decisions, task }
    }

    async fn allowing(entries: &[String]) -> Self {
        Self::start(Allowlist::new(rules(entries))).await
    }

    /// Sends `request` and returns everything the proxy answers until it closes.
    async fn exchange(&self, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(DEADLINE, stream.read_to_end(&mut answer)).await.unwrap().unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    async fn next_decision(&mut self) -> Decision {
        tokio::time::timeout(DEADLINE, self.decisions.recv()).await.unwrap().unwrap()
    }
}

/// A TCP server that echoes one connection back.
async fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut rx, mut tx) = stream.split();
                let _ = tokio::io::copy(&mut rx, &mut tx).await;
            });
        }
    });
    port
}

/// An HTTP server that answers one request with `hello`, sending back the
/// request it saw (head and body) on the channel.
async fn http_server() -> (u16, oneshot::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen_tx, seen) = oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        // The head, and a body as long as Content-Length says.
        loop {
            let n = stream.read(&mut chunk).await.unwrap();
            request.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&request).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                    .map_or(0, |v| v.parse::<usize>().unwrap());
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            assert!(n > 0, "the request ended early: {text}");
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello";
        stream.write_all(answer.as_bytes()).await.unwrap();
        stream.shutdown().await.unwrap();
        let _ = seen_tx.send(String::from_utf8(request).unwrap());
    });
    (port, seen)
}

#[tokio::test]
async fn a_connect_tunnel_to_an_allowed_host_carries_bytes_both_ways() {
    let echo = echo_server().await;
    let mut proxy = Proxy::allowing(&["localhost".into()]).await;
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    // The first bytes of the tunnel come with the head, as TLS clients send them.
    stream
        .write_all(format!("CONNECT localhost:{echo} HTTP/1.1\r\nHost: localhost\r\n\r\nping").as_bytes())
        .await
        .unwrap();
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut answer = vec![0u8; established.len() + 4];
    tokio::time::timeout(DEADLINE, stream.read_exact(&mut answer)).await.unwrap().unwrap();
    assert_eq!(String::from_utf8_lossy(&answer), "HTTP/1.1 200 Connection established\r\n\r\nping");
    stream.write_all(b"pong").await.unwrap();
    let mut echoed = [0u8; 4];
    tokio::time::timeout(DEADLINE, stream.read_exact(&mut echoed)).await.unwrap().unwrap();
    assert_eq!(&echoed, b"pong");
    let decision = proxy.next_decision().await;
    assert_eq!(decision, Decision { host: "localhost".into(), port: echo, allowed: true, reason: None });
}

#[tokio::test]
async fn a_plain_request_reaches_the_server_in_origin_form_without_proxy_headers() {
    let (port, seen) = http_server().await;
    let mut proxy = Proxy::allowing(&["localhost".into()]).await;
    let answer = proxy
        .exchange(
            format!(
                "POST http://localhost:{port}/path?q=1 HTTP/1.1\r\nHost: localhost:{port}\r\n\
                 Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic dTpw\r\nContent-Length: 4\r\n\r\nbody"
            )
            .as_bytes(),
        )
        .await;
    assert_eq!(answer, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
    let seen = seen.await.unwrap();
    assert_eq!(
        seen,
        format!(
            "POST /path?q=1 HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody"
        )
    );
    assert!(proxy.next_decision().await.allowed);
}

#[tokio::test]
async fn an_unlisted_host_is_refused_with_403_and_the_reason() {
    let mut proxy = Proxy::allowing(&["localhost".into()]).await;
    let answer = proxy.exchange(b"CONNECT evil.com:443 HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    let reason = "evil.com:443 is not in the sandbox's network allowlist (policy.toml [approval.network] allow_hosts)";
    assert!(answer.ends_with(&format!("\r\n\r\n{reason}\n")), "{answer}");
    let decision = proxy.next_decision().await;
    assert_eq!(decision, Decision { host: "evil.com".into(), port: 443, allowed: false, reason: Some(reason.into()) });
    let answer = proxy.exchange(b"GET http://evil.com/ HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n") && answer.contains("evil.com:80 is not in"), "{answer}");
    assert!(!proxy.next_decision().await.allowed);
}

#[tokio::test]
async fn an_address_is_refused_unless_listed_exactly() {
    let echo = echo_server().await;
    let connect = format!("CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n");
    let proxy = Proxy::allowing(&["localhost".into()]).await;
    let answer = proxy.exchange(connect.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n") && answer.contains("listed exactly"), "{answer}");
    let proxy = Proxy::allowing(&["127.0.0.1".into()]).await;
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    stream.write_all(connect.as_bytes()).await.unwrap();
    let mut answer = [0u8; 12];
    tokio::time::timeout(DEADLINE, stream.read_exact(&mut answer)).await.unwrap().unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
}

#[tokio::test]
async fn a_wildcard_match_that_resolves_to_loopback_is_refused() {
    let echo = echo_server().await;
    let resolve = |host: &str| match host {
        "x.localhost" => Ok(vec![IpAddr::from([127, 0, 0, 1])]),
        _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such name")),
    };
    let proxy = Proxy::start(Allowlist::with_resolver(rules(&["*.localhost".into()]), resolve)).await;
    let answer = proxy.exchange(format!("CONNECT x.localhost:{echo} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(answer.contains("x.localhost resolves to 127.0.0.1, an internal address"), "{answer}");
    let answer = proxy.exchange(format!("CONNECT y.localhost:{echo} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n") && answer.contains("does not resolve"), "{answer}");
}

#[tokio::test]
async fn the_proxy_connects_to_the_addresses_it_checked_without_resolving_again() {
    let echo = echo_server().await;
    let lookups = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&lookups);
    let resolve = move |_: &str| {
        // A rebinding name: somewhere else at every later lookup.
        match counted.fetch_add(1, Ordering::SeqCst) {
            0 => Ok(vec![IpAddr::from([127, 0, 0, 1])]),
            _ => Ok(vec![IpAddr::from([169, 254, 169, 254])]),
        }
    };
    let proxy = Proxy::start(Allowlist::with_resolver(rules(&["svc.test".into()]), resolve)).await;
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    stream.write_all(format!("CONNECT svc.test:{echo} HTTP/1.1\r\n\r\nping").as_bytes()).await.unwrap();
    let mut answer = vec![0u8; "HTTP/1.1 200 Connection established\r\n\r\nping".len()];
    tokio::time::timeout(DEADLINE, stream.read_exact(&mut answer)).await.unwrap().unwrap();
    assert!(answer.ends_with(b"ping"));
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_empty_allowlist_refuses_everything() {
    let echo = echo_server().await;
    let mut proxy = Proxy::allowing(&[]).await;
    for request in
        [format!("CONNECT localhost:{echo} HTTP/1.1\r\n\r\n"), format!("GET http://127.0.0.1:{echo}/ HTTP/1.1\r\n\r\n")]
    {
        let answer = proxy.exchange(request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n") && answer.contains("allows no network"), "{answer}");
        assert!(!proxy.next_decision().await.allowed);
    }
}

#[tokio::test]
async fn an_entry_with_a_port_refuses_other_ports() {
    let echo = echo_server().await;
    let other = echo_server().await;
    let proxy = Proxy::allowing(&[format!("localhost:{echo}")]).await;
    let answer = proxy.exchange(format!("CONNECT localhost:{other} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    stream.write_all(format!("CONNECT localhost:{echo} HTTP/1.1\r\n\r\n").as_bytes()).await.unwrap();
    let mut answer = [0u8; 12];
    tokio::time::timeout(DEADLINE, stream.read_exact(&mut answer)).await.unwrap().unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
}

#[tokio::test]
async fn malformed_and_oversized_requests_are_answered_400_and_431() {
    let mut proxy = Proxy::allowing(&["localhost".into()]).await;
    let answer = proxy.exchange(b"GARBAGE\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
    let answer = proxy.exchange(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n") && answer.contains("absolute http:// URI"), "{answer}");
    let mut huge = b"GET http://localhost/ HTTP/1.1\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b"X-Filler: 0123456789abcdef\r\n", 4000).flatten());
    huge.extend_from_slice(b"\r\n");
    let answer = proxy.exchange(&huge).await;
    assert!(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{answer}");
    // Nothing was decided: there was no host to decide on.
    assert!(proxy.decisions.try_recv().is_err());
}

#[tokio::test]
async fn an_unreachable_allowed_host_is_answered_502() {
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let proxy = Proxy::allowing(&["localhost".into()]).await;
    let answer = proxy.exchange(format!("GET http://localhost:{port}/ HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
    assert!(answer.contains(&format!("could not connect to localhost:{port}")), "{answer}");
}

/// curl, with no proxy settings but the ones given.
fn curl(args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let found = std::process::Command::new("curl").arg("--version").output();
    assert!(found.is_ok(), "curl is not installed: install it (scripts/test-deps.sh does)");
    let mut command = std::process::Command::new("curl");
    command.args(["-sS", "--max-time", "20"]).args(args);
    for var in
        ["http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"]
    {
        command.env_remove(var);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.output().unwrap()
}

#[tokio::test]
async fn curl_gets_an_allowed_page_through_the_proxy_and_403_for_an_unlisted_https_host() {
    let (port, seen) = http_server().await;
    let proxy = Proxy::allowing(&["localhost".into()]).await;
    let (proxy_url, page) = (format!("http://{}", proxy.addr), format!("http://localhost:{port}/page"));
    let out = tokio::task::spawn_blocking(move || curl(&["-x", &proxy_url, &page], &[])).await.unwrap();
    assert!(out.status.success(), "curl failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, b"hello");
    assert!(seen.await.unwrap().starts_with("GET /page HTTP/1.1\r\n"));

    let env = [("https_proxy", format!("http://{}", proxy.addr))];
    let out = tokio::task::spawn_blocking(move || curl(&["https://unlisted.example/"], &env)).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(56), "curl: {stderr}");
    assert!(stderr.contains("403"), "curl: {stderr}");
}
