//! The allowlisting HTTP/HTTPS proxy: a sandboxed process's only way out
//! to the network.
//!
//! Clients find it through `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`. It
//! takes `CONNECT host:port` (TLS tunnels, any port) and plain HTTP with an
//! absolute URI (`GET http://host/path`), asks the [`Allowlist`], and then
//! connects to the very addresses the allowlist checked, so that a name
//! cannot resolve to one address at the check and to another at the
//! connect (DNS rebinding).
//!
//! It does not look inside tunnels, cache, authenticate, or keep plain
//! HTTP connections alive: each plain request goes upstream on its own
//! connection with `Connection: close`, which keeps the relay a byte copy.
//!
//! ```no_run
//! # async fn run(rules: Vec<ua_sandbox::HostRule>) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use ua_sandbox::proxy::{Allowlist, serve};
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let proxy_url = format!("http://{}", listener.local_addr()?); // HTTP_PROXY, HTTPS_PROXY
//! let proxy = tokio::spawn(serve(listener, Arc::new(Allowlist::new(rules)), None));
//! // … run the sandboxed command with the proxy variables set …
//! proxy.abort(); // ends its tunnels too
//! # Ok(()) }
//! ```

mod allowlist;
mod head;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;

pub use allowlist::{Allowlist, Refusal, RefusalKind, Resolve, SystemResolver, is_internal};
use allowlist::{bare, host_port};
use head::{HeadError, Request, Side, parse_request, read_head, response_head};

/// How long a client has to send its request head: a client that sends
/// nothing would otherwise hold a task and a socket for ever.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long to try a host's addresses before answering 502.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a refused client may go on sending before the connection is
/// closed: closing with unread data resets the connection, and the client
/// could lose the answer that says why.
const LINGER: Duration = Duration::from_secs(1);

/// The variables that point clients at the proxy.
pub const PROXY_VARS: &[&str] = &["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];
/// The variables that would let clients go around it; removed.
pub const NO_PROXY_VARS: &[&str] = &["NO_PROXY", "no_proxy"];

/// The fuzz body shared by the cargo-fuzz target `proxy_head` and the
/// tests: any bytes, read as a request head and as a response head, must
/// not panic; a complete head must be found whole whatever prefix of it is
/// read first; a request the proxy accepts must go upstream as exactly one
/// well-formed request whose `Host` is the host the allowlist was asked
/// about, without the proxy's own headers and closing after it; and a
/// response must come back as one well-formed head with the server's
/// status and exactly one `Connection: close`.
pub fn check_any_head(data: &[u8]) {
    head::check_any(data);
}

/// The proxy's URL for the variables, when it listens on loopback `port`.
pub fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// One request the proxy decided on, for the journal and `sandbox status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// As the client asked for it, lower-cased, without brackets.
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// Why it was refused.
    pub reason: Option<String>,
}

/// Serves proxy clients on `listener` until the task is dropped or
/// aborted, which ends the connections it serves too.
///
/// `listener` may come from elsewhere (say, a socket made in the
/// sandbox's network namespace); see [`adopt`].
pub async fn serve(listener: TcpListener, allow: Arc<Allowlist>, decisions: Option<UnboundedSender<Decision>>) {
    // Connections are owned here, so that dropping this future aborts them.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    let allow = Arc::clone(&allow);
                    let decisions = decisions.clone();
                    connections.spawn(async move {
                        // An I/O error ends that one connection; there is no one else to tell.
                        let _ = handle(client, &allow, decisions.as_ref(), HEAD_TIMEOUT).await;
                    });
                }
                // Out of descriptors or memory, accept fails at once: wait for
                // connections to end rather than spin on it.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
        }
    }
}

/// A listening socket made elsewhere, ready for [`serve`]: tokio needs it
/// non-blocking, and a blocking one would stall the runtime.
pub fn adopt(listener: std::net::TcpListener) -> io::Result<TcpListener> {
    listener.set_nonblocking(true)?;
    TcpListener::from_std(listener)
}

/// One client: its request head, the decision, then the relay.
async fn handle(
    mut client: TcpStream,
    allow: &Allowlist,
    decisions: Option<&UnboundedSender<Decision>>,
    head_timeout: Duration,
) -> io::Result<()> {
    client.set_nodelay(true)?;
    let mut buf = Vec::new();
    let end = match tokio::time::timeout(head_timeout, read_head(&mut client, &mut buf, Side::Request)).await {
        Ok(Ok(end)) => end,
        Ok(Err(HeadError::TooLarge)) => {
            let why = "the request head is larger than 64 KiB or has more than 256 header fields";
            return refuse(client, Status::TooLarge, why).await;
        }
        Ok(Err(HeadError::Malformed(why))) => return refuse(client, Status::BadRequest, &why).await,
        Ok(Err(HeadError::Closed)) => return Ok(()),
        Ok(Err(HeadError::Io(e))) => return Err(e),
        Err(_) => {
            let why = format!("the request head did not arrive within {} seconds", head_timeout.as_secs());
            return refuse(client, Status::Timeout, &why).await;
        }
    };
    let request = match parse_request(&buf[..end]) {
        Ok(request) => request,
        Err(why) => return refuse(client, Status::BadRequest, &why).await,
    };
    let (host, port) = request.target();
    let checked = allow.check(host, port).await;
    if let Some(tx) = decisions {
        let reason = checked.as_ref().err().map(|r| r.reason.clone());
        // A dropped receiver means no one records decisions any more.
        let _ = tx.send(Decision { host: bare(host), port, allowed: checked.is_ok(), reason });
    }
    let addrs = match checked {
        Ok(addrs) => addrs,
        Err(r) if r.kind == RefusalKind::Forbidden => return refuse(client, Status::Forbidden, &r.reason).await,
        Err(r) => return refuse(client, Status::BadGateway, &r.reason).await,
    };
    let mut upstream = match connect(&addrs).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let why = format!("could not connect to {}: {e}", host_port(&bare(host), port));
            return refuse(client, Status::BadGateway, &why).await;
        }
    };
    upstream.set_nodelay(true)?;
    // What the client sent after its head (a TLS hello, a request body) goes up first.
    let early = &buf[end..];
    match request {
        Request::Connect { .. } => {
            client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
            upstream.write_all(early).await?;
            tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
            Ok(())
        }
        Request::Http { mut head, .. } => {
            head.extend_from_slice(early);
            relay_http(client, upstream, head).await
        }
    }
}

/// Tries each address in turn, as the resolver ordered them.
async fn connect(addrs: &[SocketAddr]) -> io::Result<TcpStream> {
    let attempt = async {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = io::Error::new(e.kind(), format!("{addr}: {e}")),
            }
        }
        Err(last)
    };
    tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")))
}

/// Sends `first` (the rewritten head and what followed it) upstream, then
/// streams the rest of the request body up while the response comes down.
/// The exchange is over when the response is: upstream closes after it,
/// as `Connection: close` asked.
async fn relay_http(mut client: TcpStream, mut upstream: TcpStream, first: Vec<u8>) -> io::Result<()> {
    upstream.write_all(&first).await?;
    let (mut client_rx, mut client_tx) = client.split();
    let (mut upstream_rx, mut upstream_tx) = upstream.split();
    let up = async {
        let _ = tokio::io::copy(&mut client_rx, &mut upstream_tx).await;
        let _ = upstream_tx.shutdown().await;
        std::future::pending::<()>().await
    };
    let down = async {
        let mut buf = Vec::new();
        // Interim responses (100 Continue) pass as they are; the final one
        // is told the connection closes after it.
        loop {
            let end = match read_head(&mut upstream_rx, &mut buf, Side::Response).await {
                Ok(end) => end,
                Err(HeadError::Io(e)) => return Err(e),
                Err(HeadError::Closed | HeadError::TooLarge | HeadError::Malformed(_)) => {
                    let why = "the server did not send a valid HTTP response";
                    client_tx.write_all(&response(Status::BadGateway, why)).await?;
                    return client_tx.shutdown().await;
                }
            };
            let (head, interim) = match response_head(&buf[..end]) {
                Ok(parsed) => parsed,
                Err(why) => {
                    client_tx.write_all(&response(Status::BadGateway, &why)).await?;
                    return client_tx.shutdown().await;
                }
            };
            client_tx.write_all(&head).await?;
            buf.drain(..end);
            if !interim {
                break;
            }
        }
        client_tx.write_all(&buf).await?;
        tokio::io::copy(&mut upstream_rx, &mut client_tx).await?;
        client_tx.shutdown().await
    };
    tokio::select! {
        done = down => done,
        () = up => Ok(()),
    }
}

/// Answers `status` with `why` as the body and closes the connection.
async fn refuse(mut client: TcpStream, status: Status, why: &str) -> io::Result<()> {
    client.write_all(&response(status, why)).await?;
    client.shutdown().await?;
    let _ = tokio::time::timeout(LINGER, tokio::io::copy(&mut client, &mut tokio::io::sink())).await;
    Ok(())
}

/// The answers the proxy makes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    BadRequest,
    Forbidden,
    Timeout,
    TooLarge,
    BadGateway,
}

fn response(status: Status, why: &str) -> Vec<u8> {
    let line = match status {
        Status::BadRequest => "400 Bad Request",
        Status::Forbidden => "403 Forbidden",
        Status::Timeout => "408 Request Timeout",
        Status::TooLarge => "431 Request Header Fields Too Large",
        Status::BadGateway => "502 Bad Gateway",
    };
    format!(
        "HTTP/1.1 {line}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}\n",
        why.len() + 1
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostPattern, HostRule};
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_client_that_sends_nothing_is_answered_408_and_let_go() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let allow =
            Allowlist::new(vec![HostRule { host: HostPattern::parse("localhost").unwrap(), source: "test".into() }]);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let handled = tokio::spawn(async move { handle(server, &allow, Some(&tx), Duration::from_millis(100)).await });
        client.write_all(b"GET http://localhost/ HTTP/1.1\r\n").await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{answer}");
        drop(client);
        handled.await.unwrap().unwrap();
        assert!(rx.try_recv().is_err(), "nothing was decided");
    }
}
