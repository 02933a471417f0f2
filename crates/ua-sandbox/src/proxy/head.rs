//! HTTP/1.1 message heads, as much as a forwarding proxy needs: where a
//! head ends, what a request asks for, and the heads passed on (RFC 9112).
//!
//! The syntax is httparse's (the parser hyper and most of the Rust HTTP
//! stack rely on): request and status lines, field names and values, line
//! ends (CRLF, or a bare LF as RFC 9112 §2.2 lets a recipient accept). What
//! is checked here on top is what a proxy must decide itself: which host a
//! request names, and that the server will see that same host.

use std::io;
use std::net::Ipv6Addr;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest request or response head accepted; real ones are a few KiB.
const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a head may have; more is answered as a head too
/// large (431).
const MAX_FIELDS: usize = 256;

/// Why a head was not read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// The peer closed before the head was complete.
    Closed,
    /// Larger than [`MAX_HEAD`], or more than [`MAX_FIELDS`] fields.
    TooLarge,
    /// Not HTTP/1.x; why, as a clause.
    Malformed(String),
    Io(io::Error),
}

/// Which side's head is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Request,
    Response,
}

/// Reads into `buf` until it holds a whole head, and returns where the
/// head ends; what follows it in `buf` is the start of the body. A head
/// that cannot become valid is refused as soon as that shows.
pub(super) async fn read_head<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    side: Side,
) -> Result<usize, HeadError> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = head_end(buf, side)? {
            return if end > MAX_HEAD { Err(HeadError::TooLarge) } else { Ok(end) };
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        match reader.read(&mut chunk).await {
            Ok(0) => return Err(HeadError::Closed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(HeadError::Io(e)),
        }
    }
}

/// Where the head at the start of `buf` ends, `None` while it is
/// incomplete.
fn head_end(buf: &[u8], side: Side) -> Result<Option<usize>, HeadError> {
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let parsed = match side {
        Side::Request => httparse::Request::new(&mut fields).parse(buf),
        Side::Response => httparse::Response::new(&mut fields).parse(buf),
    };
    match parsed {
        Ok(httparse::Status::Complete(end)) => Ok(Some(end)),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(HeadError::TooLarge),
        Err(e) => Err(HeadError::Malformed(why(buf, side, e))),
    }
}

/// What httparse refused, in words.
fn why(head: &[u8], side: Side, e: httparse::Error) -> String {
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let start = lines.next().unwrap_or_default();
    let request_line = "the request line is not METHOD TARGET HTTP/1.1";
    match (side, e) {
        (Side::Response, _) => "the server did not send a valid HTTP status line or header".into(),
        (Side::Request, httparse::Error::Version) => "the request line does not end in HTTP/1.0 or HTTP/1.1".into(),
        (Side::Request, httparse::Error::Token) => {
            let words: Vec<&[u8]> = start.split(|&b| b == b' ').collect();
            if words.len() != 3 || words.iter().any(|w| w.is_empty()) {
                request_line.into()
            } else if !words[0].iter().copied().all(is_tchar) {
                "the method is not a token".into()
            } else {
                "the request target holds characters a URI cannot".into()
            }
        }
        (Side::Request, httparse::Error::HeaderName) => {
            let field = lines.find(|l| l.first().is_some_and(|&b| b == b' ' || b == b'\t') || !valid_field(l));
            match field {
                Some(l) if l.first().is_some_and(|&b| b == b' ' || b == b'\t') => {
                    "a header line is folded onto the next, which HTTP/1.1 no longer allows".into()
                }
                Some(l) if !l.contains(&b':') => "a header line has no colon".into(),
                _ => "a header name is not a token".into(),
            }
        }
        (Side::Request, httparse::Error::HeaderValue) => {
            "a header value holds a control character (a CR or a NUL)".into()
        }
        (Side::Request, _) => "the request head is not HTTP/1.1".into(),
    }
}

/// Whether a field line reads `token ":" …`.
fn valid_field(line: &[u8]) -> bool {
    line.iter().position(|&b| b == b':').is_some_and(|colon| colon > 0 && line[..colon].iter().copied().all(is_tchar))
}

/// A character of an HTTP token (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
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
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut req = httparse::Request::new(&mut fields);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("the request head is cut short".into()),
        Err(httparse::Error::TooManyHeaders) => return Err("the request has too many header fields".into()),
        Err(e) => return Err(why(head, Side::Request, e)),
    }
    let (Some(method), Some(target), Some(minor)) = (req.method, req.path, req.version) else {
        return Err("the request line is not METHOD TARGET HTTP/1.1".into());
    };
    // httparse lets bytes above 0x7F through; a URI has none.
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
    let mut out = format!("{method} {slash}{path} HTTP/1.{minor}\r\nHost: {authority}\r\n").into_bytes();
    for f in req.headers.iter() {
        if !REQUEST_HOP.iter().any(|hop| f.name.eq_ignore_ascii_case(hop)) {
            push_field(&mut out, f.name.as_bytes(), f.value);
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request::Http { host, port, head: out })
}

/// Rewrites a response head to say the connection closes after it, and
/// says whether it is an interim (1xx) response, passed on as it is.
pub(super) fn response_head(head: &[u8]) -> Result<(Vec<u8>, bool), String> {
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut res = httparse::Response::new(&mut fields);
    let code = match res.parse(head) {
        Ok(httparse::Status::Complete(_)) => res.code.unwrap_or_default(),
        _ => return Err("the server did not send a valid HTTP status line".into()),
    };
    // 101 Switching Protocols is final: the connection is someone else's after it.
    if (100..200).contains(&code) && code != 101 {
        return Ok((head.to_vec(), true));
    }
    // The status line as the server wrote it (its reason phrase may hold
    // any byte), after the empty lines httparse skips before it (RFC 9112
    // §2.2); without skipping them the client got an empty first line.
    let start = head.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(head.len());
    let line = head[start..].split(|&b| b == b'\n').next().unwrap_or_default();
    let mut out = line.strip_suffix(b"\r").unwrap_or(line).to_vec();
    out.extend_from_slice(b"\r\n");
    for f in res.headers.iter() {
        if !RESPONSE_HOP.iter().any(|hop| f.name.eq_ignore_ascii_case(hop)) {
            push_field(&mut out, f.name.as_bytes(), f.value);
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

/// The fuzz body for request and response heads, shared by the cargo-fuzz
/// target and the tests; see [`super::check_any_head`].
pub(super) fn check_any(data: &[u8]) {
    check_framing(data, Side::Request);
    check_framing(data, Side::Response);
    if let Ok(Some(end)) = head_end(data, Side::Request) {
        check_request(&data[..end]);
    }
    if let Ok(Some(end)) = head_end(data, Side::Response) {
        check_response(&data[..end]);
    }
}

/// A complete, valid head is found whole whichever prefix is read first:
/// every shorter prefix is still incomplete, never refused.
fn check_framing(data: &[u8], side: Side) {
    let Ok(Some(end)) = head_end(data, side) else { return };
    let cuts: Vec<usize> = if end <= 512 {
        (0..end).collect()
    } else {
        (0..8).map(|i| (usize::from(data[0]).wrapping_mul(7919) + i * end / 8) % end).collect()
    };
    for cut in cuts {
        assert!(
            matches!(head_end(&data[..cut], side), Ok(None)),
            "a prefix of {cut} bytes of a complete {side:?} head was not incomplete"
        );
    }
}

/// What goes upstream is one well-formed request for exactly the host the
/// allowlist was asked about, closing after it.
fn check_request(head: &[u8]) {
    let Ok(request) = parse_request(head) else { return };
    let (host, port) = match &request {
        Request::Connect { host, port } => (host, *port),
        Request::Http { host, port, .. } => (host, *port),
    };
    assert!(port != 0 && !host.is_empty(), "{request:?}");
    assert_eq!(*host, host.to_ascii_lowercase(), "the host is not lower-cased");
    let Request::Http { head: up, .. } = &request else { return };
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS + 4];
    let mut req = httparse::Request::new(&mut fields);
    assert_eq!(req.parse(up), Ok(httparse::Status::Complete(up.len())), "the head sent upstream is not one request");
    assert!(req.path.is_some_and(|p| p.starts_with('/')), "not origin-form: {:?}", req.path);
    let named = |name: &str| req.headers.iter().filter(|f| f.name.eq_ignore_ascii_case(name)).count();
    assert_eq!(named("host"), 1, "one Host header");
    assert_eq!(named("connection"), 1, "one Connection header");
    for hop in ["proxy-authorization", "proxy-connection", "keep-alive"] {
        assert_eq!(named(hop), 0, "{hop} went upstream");
    }
    let sent = req.headers.iter().find(|f| f.name.eq_ignore_ascii_case("host")).map(|f| f.value).unwrap_or_default();
    let sent = std::str::from_utf8(sent).unwrap_or_default();
    assert_eq!(parse_authority(sent, Some(80)).as_ref(), Ok(&(host.clone(), port)), "the server would see {sent:?}");
}

/// What goes back to the client is one well-formed response head that
/// closes the connection, with the server's status.
fn check_response(head: &[u8]) {
    let Ok((out, interim)) = response_head(head) else { return };
    if interim {
        assert_eq!(out, head);
        return;
    }
    let code = |bytes: &[u8]| {
        let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS + 4];
        let mut res = httparse::Response::new(&mut fields);
        let done = res.parse(bytes);
        let closes = res
            .headers
            .iter()
            .filter(|f| f.name.eq_ignore_ascii_case("connection"))
            .map(|f| f.value.to_vec())
            .collect::<Vec<_>>();
        (done, res.code, closes)
    };
    let (done, status, closes) = code(&out);
    assert_eq!(done, Ok(httparse::Status::Complete(out.len())), "the head sent back is not one response");
    assert_eq!(status, code(head).1, "the status changed");
    assert_eq!(closes, vec![b"close".to_vec()], "not exactly one Connection: close");
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

    fn end(buf: &[u8]) -> Option<usize> {
        head_end(buf, Side::Request).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_head_ends_at_its_empty_line_wherever_the_reads_split_it() {
        let head = b"GET http://x/ HTTP/1.1\r\nA: b\r\n\r\nbody";
        assert_eq!(end(head), Some(head.len() - 4));
        assert_eq!(end(b"GET http://x/ HTTP/1.1\nA: b\n\nbody"), Some(29));
        assert_eq!(end(b"GET http://x/ HTTP/1.1\r\nA: b\r\n"), None);
        // As read_head looks again after each read.
        for split in 1..head.len() {
            let want = (split >= head.len() - 4).then_some(head.len() - 4);
            assert_eq!(end(&head[..split]), want, "split at {split}");
        }
    }

    #[test]
    fn a_head_that_cannot_become_valid_is_refused_before_it_ends() {
        for partial in
            [&b"G(T http://x/ HTTP/1.1\r\n"[..], b"GET http://x/ HTTP/2\r\n", b"GET http://x/ HTTP/1.1\r\nA b"]
        {
            let got = head_end(partial, Side::Request);
            assert!(matches!(got, Err(HeadError::Malformed(_))), "{:?}: {got:?}", String::from_utf8_lossy(partial));
        }
        let mut many = b"GET http://x/ HTTP/1.1\r\n".to_vec();
        many.extend(std::iter::repeat_n(&b"A: b\r\n"[..], MAX_FIELDS + 1).flatten());
        assert!(matches!(head_end(&many, Side::Request), Err(HeadError::TooLarge)));
        assert!(matches!(head_end(b"SSH-2.0-OpenSSH\r\n", Side::Response), Err(HeadError::Malformed(_))));
    }

    #[tokio::test]
    async fn a_head_larger_than_the_limit_is_refused_and_one_cut_short_is_closed() {
        let mut big = b"GET http://x/ HTTP/1.1\r\nA: ".to_vec();
        big.resize(MAX_HEAD + 10, b'a');
        big.extend_from_slice(b"\r\n\r\n");
        assert!(matches!(read_head(&mut &big[..], &mut Vec::new(), Side::Request).await, Err(HeadError::TooLarge)));
        let short = b"GET http://x/ HTTP/1.1\r\n";
        assert!(matches!(read_head(&mut &short[..], &mut Vec::new(), Side::Request).await, Err(HeadError::Closed)));
        let mut buf = Vec::new();
        let got = read_head(&mut &b"GET http://x/ HTTP/1.1\r\n\r\nbody"[..], &mut buf, Side::Request).await;
        assert_eq!(got.ok(), Some(26));
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

    #[test]
    fn empty_lines_before_a_status_line_are_not_passed_on_as_the_status_line() {
        // Found by the proxy_head fuzz target: the rewritten head began
        // with an empty line.
        let (head, _) = response_head(b"\n\r\nHTTP/1.1 200 OK\r\nX: y\r\n\r\n").unwrap();
        assert_eq!(head, b"HTTP/1.1 200 OK\r\nX: y\r\nConnection: close\r\n\r\n");
        check_any(include_bytes!("../../tests/fixtures/proxy_head/leading-empty-line"));
    }

    #[test]
    fn the_fuzz_body_holds_for_the_heads_above() {
        for head in [
            &b"CONNECT Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            b"GET http://Example.com:8080/a/b?q=1#frag HTTP/1.1\r\nHost: evil.com\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\r\n",
            b"POST http://example.com HTTP/1.0\n\n",
            b"GET http://x/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nX: \xff\r\n\r\nbody",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            b"GET http://[::1]:8080/ HTTP/1.1\r\nX:\r\n\r\n",
        ] {
            check_any(head);
        }
    }
}
