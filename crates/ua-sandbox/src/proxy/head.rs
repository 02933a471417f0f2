//! HTTP/1.1 message heads, as much as a forwarding proxy needs: where a
//! head ends, what a request asks for, and the heads passed on (RFC 9112).

use std::io;
use std::net::Ipv6Addr;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest request or response head accepted; real ones are a few KiB.
const MAX_HEAD: usize = 64 * 1024;

/// Why a head was not read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// The peer closed before the head was complete.
    Closed,
    TooLarge,
    Io(io::Error),
}

/// Reads into `buf` until it holds a whole head, and returns where the
/// head ends; what follows it in `buf` is the start of the body.
pub(super) async fn read_head<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut Vec<u8>) -> Result<usize, HeadError> {
    let mut chunk = [0u8; 8192];
    let mut from = 0;
    loop {
        if let Some(end) = head_end(buf, from) {
            return if end > MAX_HEAD { Err(HeadError::TooLarge) } else { Ok(end) };
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        // The end of a head is at most 3 bytes before what is new.
        from = buf.len().saturating_sub(3);
        match reader.read(&mut chunk).await {
            Ok(0) => return Err(HeadError::Closed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(HeadError::Io(e)),
        }
    }
}

/// Where the head in `buf` ends (just after its empty line), looking at
/// line ends from `from` on. Bare LFs count as line ends, as RFC 9112 §2.2
/// lets a recipient accept.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(offset) = buf[at..].iter().position(|&b| b == b'\n') {
        let next = at + offset + 1;
        if buf[next..].starts_with(b"\n") {
            return Some(next + 1);
        }
        if buf[next..].starts_with(b"\r\n") {
            return Some(next + 2);
        }
        at = next;
    }
    None
}

/// What a client asked for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// `CONNECT host:port`: a tunnel.
    Connect { host: String, port: u16 },
    /// A plain HTTP request, its head rewritten to go upstream.
    Http { host: String, port: u16, head: Vec<u8> },
}

impl Request {
    pub(super) fn target(&self) -> (&str, u16) {
        match self {
            Self::Connect { host, port } | Self::Http { host, port, .. } => (host, *port),
        }
    }
}

/// Request headers that are not passed on: the proxy's own
/// (`Proxy-Authorization` would hand credentials meant for it to the
/// server), the connection's, and `Host`, which is rewritten.
const REQUEST_HOP: &[&str] = &["host", "connection", "keep-alive", "proxy-connection", "proxy-authorization"];
/// Response headers replaced by `Connection: close`.
const RESPONSE_HOP: &[&str] = &["connection", "keep-alive", "proxy-connection"];

/// Reads a request head: `CONNECT host:port`, or a request for an absolute
/// `http://` URI, rewritten to what the server expects (RFC 9112 §3.2.2):
/// the path as the target, `Host` from the URI, `Connection: close`.
pub(super) fn parse_request(head: &[u8]) -> Result<Request, String> {
    let (line, fields) = split_head(head)?;
    let line = std::str::from_utf8(line).map_err(|_| "the request line is not text".to_string())?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the request line is not METHOD TARGET HTTP/1.1".into());
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(format!("{version:?} is not HTTP/1.0 or HTTP/1.1"));
    }
    if method.is_empty() || !method.bytes().all(is_tchar) {
        return Err("the method is not a token".into());
    }
    if !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the request target holds characters a URI cannot".into());
    }
    if method == "CONNECT" {
        let (host, port) = parse_authority(target, None)?;
        return Ok(Request::Connect { host, port });
    }
    let scheme_end = target.find("://").map_or(0, |i| i + 3);
    let (scheme, rest) = target.split_at(scheme_end);
    if !scheme.eq_ignore_ascii_case("http://") {
        return Err(if scheme.eq_ignore_ascii_case("https://") {
            "https:// goes through the proxy as CONNECT (HTTPS_PROXY), not as a plain request".into()
        } else {
            "this is a proxy: a plain request names an absolute http:// URI".into()
        });
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (host, port) = parse_authority(authority, Some(80))?;
    let path = path.split('#').next().unwrap_or_default();
    let slash = if path.starts_with('/') { "" } else { "/" };
    let mut out = format!("{method} {slash}{path} {version}\r\nHost: {authority}\r\n").into_bytes();
    for (name, value) in fields {
        if !REQUEST_HOP.iter().any(|hop| name.eq_ignore_ascii_case(hop.as_bytes())) {
            push_field(&mut out, name, value);
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request::Http { host, port, head: out })
}

/// Rewrites a response head to say the connection closes after it, and
/// says whether it is an interim (1xx) response, passed on as it is.
pub(super) fn response_head(head: &[u8]) -> Result<(Vec<u8>, bool), String> {
    let (line, fields) = split_head(head)?;
    let code = line.strip_prefix(b"HTTP/1.").filter(|rest| rest.get(1) == Some(&b' ')).and_then(|rest| rest.get(2..5));
    let Some(code) = code.and_then(|c| std::str::from_utf8(c).ok()?.parse::<u16>().ok()) else {
        return Err("the server did not send a valid HTTP status line".into());
    };
    // 101 Switching Protocols is final: the connection is someone else's after it.
    if (100..200).contains(&code) && code != 101 {
        return Ok((head.to_vec(), true));
    }
    let mut out = line.to_vec();
    out.extend_from_slice(b"\r\n");
    for (name, value) in fields {
        if !RESPONSE_HOP.iter().any(|hop| name.eq_ignore_ascii_case(hop.as_bytes())) {
            push_field(&mut out, name, value);
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok((out, false))
}

fn push_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

type Field<'a> = (&'a [u8], &'a [u8]);

/// Splits a head into its start line and its fields (RFC 9112 §5).
/// Field values are bytes: servers send non-ASCII ones.
fn split_head(head: &[u8]) -> Result<(&[u8], Vec<Field<'_>>), String> {
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let start = lines.next().unwrap_or_default();
    let mut fields = Vec::new();
    for line in lines {
        let Some(&first) = line.first() else { break };
        if first == b' ' || first == b'\t' {
            return Err("a header line is folded onto the next, which HTTP/1.1 no longer allows".into());
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err("a header line has no colon".into());
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.is_empty() || !name.iter().copied().all(is_tchar) {
            return Err("a header name is not a token".into());
        }
        if value.iter().any(|&b| b == b'\r' || b == 0) {
            return Err("a header value holds a CR or a NUL".into());
        }
        fields.push((name, value));
    }
    Ok((start, fields))
}

/// A character of an HTTP token (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Reads `host[:port]`, a bracketed IPv6 address allowed. Names are held
/// to letters, digits, `-`, `.` and `_`: anything else (`user@host`,
/// percent-escapes) could make the proxy check one host and the server
/// see another.
fn parse_authority(authority: &str, default_port: Option<u16>) -> Result<(String, u16), String> {
    let bad = |why: &str| format!("{authority:?} is not a host and port: {why}");
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else { return Err(bad("an IPv6 address needs its closing ]")) };
        if v6.parse::<Ipv6Addr>().is_err() {
            return Err(bad("the brackets do not hold an IPv6 address"));
        }
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err(bad("unexpected text after ]")),
        };
        (v6, port)
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        let name_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_');
        if host.is_empty() || host.len() > 253 || !host.bytes().all(name_byte) {
            return Err(bad("a host name holds letters, digits, '-', '.' and '_' only"));
        }
        (host, port)
    };
    let port = match port {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| bad("the port is not 1 to 65535"))?
        }
        Some(_) => return Err(bad("the port is not a number")),
        None => default_port.ok_or_else(|| bad("CONNECT needs a port"))?,
    };
    Ok((host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(request: &str) -> String {
        match parse_request(request.as_bytes()) {
            Ok(Request::Http { head, .. }) => String::from_utf8(head).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    fn bad(request: &str) -> String {
        match parse_request(request.as_bytes()) {
            Err(why) => why,
            Ok(r) => panic!("{request:?} was read as {r:?}"),
        }
    }

    #[test]
    fn connect_names_a_host_and_a_port() {
        let connect = |t: &str| parse_request(format!("CONNECT {t} HTTP/1.1\r\nHost: {t}\r\n\r\n").as_bytes());
        assert_eq!(connect("Example.com:443"), Ok(Request::Connect { host: "example.com".into(), port: 443 }));
        assert_eq!(connect("[::1]:8443"), Ok(Request::Connect { host: "::1".into(), port: 8443 }));
        for t in ["example.com", "example.com:0", "example.com:99999", "example.com:+80", "[::1", "[nope]:1", ":443"] {
            assert!(connect(t).is_err(), "{t}");
        }
    }

    #[test]
    fn plain_requests_go_up_in_origin_form_without_the_proxys_headers() {
        let head = http(
            "GET http://Example.com:8080/a/b?q=1#frag HTTP/1.1\r\nHost: evil.com\r\nUser-Agent: t\r\n\
             Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\
             Keep-Alive: 5\r\nAccept:  */*  \r\n\r\n",
        );
        assert_eq!(
            head,
            "GET /a/b?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\nUser-Agent: t\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert!(matches!(
            parse_request(b"POST http://example.com HTTP/1.0\n\n"),
            Ok(Request::Http { ref host, port: 80, ref head }) if host == "example.com"
                && head == b"POST / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n"
        ));
        assert!(http("GET http://example.com?x HTTP/1.1\r\n\r\n").starts_with("GET /?x HTTP/1.1\r\n"));
    }

    #[test]
    fn malformed_requests_are_refused_with_a_reason() {
        assert!(bad("GET / HTTP/1.1\r\n\r\n").contains("absolute http:// URI"));
        assert!(bad("GET https://example.com/ HTTP/1.1\r\n\r\n").contains("CONNECT"));
        assert!(bad("GARBAGE\r\n\r\n").contains("METHOD TARGET"));
        assert!(bad("GET http://x/ HTTP/2\r\n\r\n").contains("HTTP/1.1"));
        assert!(bad("GET  http://x/ HTTP/1.1\r\n\r\n").contains("METHOD TARGET"));
        assert!(bad("G(T http://x/ HTTP/1.1\r\n\r\n").contains("token"));
        assert!(bad("GET http://x/\x01 HTTP/1.1\r\n\r\n").contains("URI"));
        assert!(bad("GET http://x/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n").contains("folded"));
        assert!(bad("GET http://x/ HTTP/1.1\r\nno colon\r\n\r\n").contains("colon"));
        assert!(bad("GET http://x/ HTTP/1.1\r\nA b: c\r\n\r\n").contains("token"));
        assert!(bad("GET http://x/ HTTP/1.1\r\nA: b\rc\r\n\r\n").contains("CR"));
        // The proxy must check the host the server will see.
        assert!(bad("GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n").contains("letters, digits"));
        assert!(bad("GET http://evil%2ecom/ HTTP/1.1\r\n\r\n").contains("letters, digits"));
        assert!(bad("GET http://:80/ HTTP/1.1\r\n\r\n").contains("letters, digits"));
        assert!(bad("GET http://x:/ HTTP/1.1\r\n\r\n").contains("not a number"));
    }

    #[test]
    fn a_head_ends_at_its_empty_line_wherever_the_reads_split_it() {
        let head = b"GET http://x/ HTTP/1.1\r\nA: b\r\n\r\nbody";
        assert_eq!(head_end(head, 0), Some(head.len() - 4));
        assert_eq!(head_end(b"GET http://x/ HTTP/1.1\nA: b\n\nbody", 0), Some(29));
        assert_eq!(head_end(b"GET http://x/ HTTP/1.1\r\nA: b\r\n", 0), None);
        // As read_head looks again after each read: from 3 bytes before what is new.
        for split in 1..head.len() {
            let found = head_end(&head[..split], 0).or_else(|| head_end(head, split.saturating_sub(3)));
            assert_eq!(found, Some(head.len() - 4), "split at {split}");
        }
    }

    #[tokio::test]
    async fn a_head_larger_than_the_limit_is_refused_and_one_cut_short_is_closed() {
        let mut big = b"GET http://x/ HTTP/1.1\r\n".to_vec();
        big.resize(MAX_HEAD + 10, b'a');
        big.extend_from_slice(b"\r\n\r\n");
        assert!(matches!(read_head(&mut &big[..], &mut Vec::new()).await, Err(HeadError::TooLarge)));
        let short = b"GET http://x/ HTTP/1.1\r\n";
        assert!(matches!(read_head(&mut &short[..], &mut Vec::new()).await, Err(HeadError::Closed)));
        let mut buf = Vec::new();
        assert_eq!(read_head(&mut &b"GET http://x/ HTTP/1.1\r\n\r\nbody"[..], &mut buf).await.ok(), Some(26));
        assert_eq!(&buf[26..], b"body");
    }

    #[test]
    fn responses_say_the_connection_closes_and_interim_ones_pass_as_they_are() {
        let (head, interim) =
            response_head(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nX: \xff\r\n\r\n").unwrap();
        assert_eq!(head, b"HTTP/1.1 200 OK\r\nX: \xff\r\nConnection: close\r\n\r\n");
        assert!(!interim);
        let continue_ = b"HTTP/1.1 100 Continue\r\n\r\n";
        assert_eq!(response_head(continue_).unwrap(), (continue_.to_vec(), true));
        assert!(!response_head(b"HTTP/1.1 101 Switching Protocols\r\n\r\n").unwrap().1);
        for bad in [&b"SSH-2.0-OpenSSH\r\n\r\n"[..], b"HTTP/1.1 2OO OK\r\n\r\n", b"HTTP/1.1200 OK\r\n\r\n"] {
            assert!(response_head(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
