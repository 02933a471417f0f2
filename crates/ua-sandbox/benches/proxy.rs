//! What the allowlisting proxy adds to a request: small HTTP GETs to a
//! local server, one after another and each on a new connection, sent
//! straight to the server and through the proxy, with p50 and p99 of each
//! and the difference.
//!
//! Through the proxy the request names the server twice over: by address
//! (`127.0.0.1` listed exactly, nothing to resolve) and by name
//! (`localhost`, resolved through `/etc/hosts` on every request, as the
//! proxy caches nothing). The three kinds of request take turns, so that
//! a machine busy with something else slows all three alike.
//!
//! Run with `cargo bench -p ua-sandbox --bench proxy`; `UA_BENCH_QUICK=1`
//! sends 200 of each instead of 2000. It prints one table and asserts
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use ua_sandbox::proxy::{Allowlist, serve};
use ua_sandbox::{HostPattern, HostRule};

/// Requests sent unmeasured first, so that every path is warm.
const WARM_UP: usize = 100;

fn main() {
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0");
    let n = if quick { 200 } else { 2000 };
    let (server, proxy) = start();
    let port = server.port();
    let kinds = [
        ("direct", server, format!("GET /small HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")),
        (
            "proxy, address",
            proxy,
            format!("GET http://127.0.0.1:{port}/small HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        ),
        ("proxy, name", proxy, format!("GET http://localhost:{port}/small HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n")),
    ];
    for _ in 0..WARM_UP {
        for (_, to, request) in &kinds {
            get(*to, request);
        }
    }
    let mut times = vec![Vec::with_capacity(n); kinds.len()];
    for _ in 0..n {
        for ((_, to, request), times) in kinds.iter().zip(&mut times) {
            times.push(get(*to, request));
        }
    }
    for t in &mut times {
        t.sort();
    }
    let pct = |t: &[Duration], p: usize| t[(t.len() * p / 100).min(t.len() - 1)].as_secs_f64() * 1e6;
    println!("{n} sequential GETs of each kind, a new connection each (µs)");
    println!("{:<16} {:>9} {:>9} {:>14} {:>14}", "", "p50", "p99", "p50 added", "p99 added");
    for ((name, _, _), t) in kinds.iter().zip(&times) {
        let (p50, p99) = (pct(t, 50), pct(t, 99));
        let (d50, d99) = (p50 - pct(&times[0], 50), p99 - pct(&times[0], 99));
        println!("{name:<16} {p50:>9.1} {p99:>9.1} {d50:>14.1} {d99:>14.1}");
    }
}

/// One GET on a new connection, read to the end; how long it took.
fn get(to: SocketAddr, request: &str) -> Duration {
    let start = Instant::now();
    let mut stream = TcpStream::connect(to).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::with_capacity(256);
    stream.read_to_end(&mut answer).unwrap();
    let took = start.elapsed();
    assert!(answer.starts_with(b"HTTP/1.1 200 OK\r\n"), "{}", String::from_utf8_lossy(&answer));
    took
}

/// Starts the server and the proxy on a thread of their own; returns
/// their addresses.
fn start() -> (SocketAddr, SocketAddr) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send((server.local_addr().unwrap(), proxy.local_addr().unwrap())).unwrap();
            let rules = ["127.0.0.1", "localhost"]
                .map(|e| HostRule { host: HostPattern::parse(e).unwrap(), source: "bench".into() });
            tokio::spawn(serve(proxy, Arc::new(Allowlist::new(rules.to_vec())), None));
            loop {
                let (stream, _) = server.accept().await.unwrap();
                tokio::spawn(answer(stream));
            }
        });
    });
    rx.recv().unwrap()
}

/// Reads a request head and answers a small page, then closes.
async fn answer(mut stream: tokio::net::TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the request ended early");
        head.extend_from_slice(&chunk[..n]);
    }
    let page = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
    stream.write_all(page).await.unwrap();
    stream.shutdown().await.unwrap();
}
