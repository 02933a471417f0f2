//! OSC 133 / OSC 7 scanner.
//!
//! The scanner watches the shell's output for the few escape sequences
//! unixagent cares about and reports them as [`ShellEvent`]s. It never
//! changes or removes a byte: the caller forwards every byte to the outer
//! terminal unchanged and only *looks* through the scanner.
//!
//! Like a VT parser it assigns no meaning to anything else and never fails:
//! an overlong or malformed OSC is dropped silently, and a sequence split
//! across reads is reassembled because the scanner keeps its state between
//! calls to [`OscScanner::feed`].
//!
//! Markers are told apart by the `aid=` (application id) option of the
//! semantic-prompts proposal: `133;A;aid=ID`, `133;B;aid=ID`,
//! `133;C;aid=ID`, and for D after the exit code, `133;D;0;aid=ID`. A
//! nested shell, a shell on the far side of `ssh`, fish 4 or an editor's
//! integration print markers of their own, without our id or with theirs;
//! a scanner made with [`OscScanner::following`] reports only ours (see
//! [`Follow`]). Every byte still reaches the terminal: the scanner only
//! decides what unixagent itself reacts to.

use memchr::{memchr, memchr2};

/// Longest OSC payload we keep. OSC 7 carries a percent-encoded path, which
/// can be long; anything longer than this is not ours (or is garbage) and is
/// ignored.
const MAX_PAYLOAD: usize = 4096;

/// A shell-integration event seen in the output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellEvent {
    /// `OSC 133;A`: the shell starts drawing its prompt.
    PromptStart,
    /// `OSC 133;B`: the prompt is drawn; the shell now reads the user's line.
    InputStart,
    /// `OSC 133;C`: the user's command starts executing.
    CommandStart,
    /// `OSC 133;D[;code]`: the command finished. `None` when the shell did not
    /// report a code.
    CommandEnd(Option<i32>),
    /// `OSC 7;file://host/path`: the shell's working directory (decoded).
    Cwd(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Plain output; looking for ESC.
    Ground,
    /// Saw ESC; an `]` starts an OSC.
    Escape,
    /// Inside an OSC payload, until BEL or ESC `\`.
    Osc,
    /// Inside an OSC, saw ESC: a `\` terminates.
    OscEscape,
}

/// Whose sequences a scanner reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// Every OSC 133 and OSC 7, whoever printed it (reading a transcript).
    Anyone,
    /// Only OSC 133 markers carrying `aid=` this id, and OSC 7 (which
    /// has no id: [`crate::state::TermState`] takes it only outside a
    /// running command).
    Aid(Box<[u8]>),
    /// Nothing: the shell runs without our integration, so no marker and
    /// no working-directory report can be its own.
    Nobody,
}

/// Incremental scanner over PTY output.
#[derive(Debug)]
pub struct OscScanner {
    state: State,
    payload: Vec<u8>,
    overflow: bool,
    follow: Follow,
}

impl Default for OscScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl OscScanner {
    /// A scanner that reports every marker ([`Follow::Anyone`]).
    pub fn new() -> Self {
        Self::with(Follow::Anyone)
    }

    /// A scanner for one session: only markers with `aid=ID` when the
    /// shell's integration carries this id, nothing without integration.
    pub fn following(aid: Option<&str>) -> Self {
        Self::with(aid.map_or(Follow::Nobody, |a| Follow::Aid(a.as_bytes().into())))
    }

    pub fn with(follow: Follow) -> Self {
        Self { state: State::Ground, payload: Vec::with_capacity(64), overflow: false, follow }
    }

    /// Scans `bytes`, calling `emit` for every complete event found, in order.
    ///
    /// Plain output is skipped with `memchr`, so the cost on bulk output is a
    /// vectorised search for ESC rather than a per-byte state step.
    pub fn feed(&mut self, bytes: &[u8], mut emit: impl FnMut(ShellEvent)) {
        self.feed_at(bytes, |_, e| emit(e));
    }

    /// Like [`OscScanner::feed`], also giving each event's end: the index in
    /// `bytes` just past the sequence's terminator, so a caller can split
    /// the output at a marker (what a command printed starts after its
    /// `133;C`).
    pub fn feed_at(&mut self, bytes: &[u8], mut emit: impl FnMut(usize, ShellEvent)) {
        self.feed_spans(bytes, |span, e| emit(span.end, e));
    }

    /// Like [`OscScanner::feed_at`], giving the whole span of each sequence
    /// in `bytes`: from its ESC (0 when it began in an earlier read) to
    /// just past its terminator.
    fn feed_spans(&mut self, bytes: &[u8], mut emit: impl FnMut(std::ops::Range<usize>, ShellEvent)) {
        let mut i = 0;
        let mut start = 0;
        while i < bytes.len() {
            match self.state {
                State::Ground => match memchr(0x1b, &bytes[i..]) {
                    Some(off) => {
                        self.state = State::Escape;
                        start = i + off;
                        i += off + 1;
                    }
                    None => return,
                },
                State::Escape => {
                    if bytes[i] == b']' {
                        self.state = State::Osc;
                        self.payload.clear();
                        self.overflow = false;
                        i += 1;
                    } else {
                        // Any other escape is not ours; re-examine this byte
                        // in ground state (it may itself be ESC).
                        self.state = State::Ground;
                    }
                }
                State::Osc => match memchr2(0x07, 0x1b, &bytes[i..]) {
                    Some(off) => {
                        self.push(&bytes[i..i + off]);
                        if bytes[i + off] == 0x07 {
                            let end = i + off + 1;
                            self.finish(&mut |e| emit(start..end, e));
                            self.state = State::Ground;
                        } else {
                            self.state = State::OscEscape;
                        }
                        i += off + 1;
                    }
                    None => {
                        self.push(&bytes[i..]);
                        return;
                    }
                },
                State::OscEscape => {
                    if bytes[i] == b'\\' {
                        let end = i + 1;
                        self.finish(&mut |e| emit(start..end, e));
                        i += 1;
                    }
                    // ESC followed by anything else aborts the OSC; that
                    // byte is re-read in ground state.
                    self.state = State::Ground;
                }
            }
        }
    }

    fn push(&mut self, part: &[u8]) {
        if self.overflow {
            return;
        }
        if self.payload.len() + part.len() > MAX_PAYLOAD {
            self.overflow = true;
            self.payload.clear();
        } else {
            self.payload.extend_from_slice(part);
        }
    }

    fn finish(&mut self, emit: &mut impl FnMut(ShellEvent)) {
        if !self.overflow
            && let Some(seen) = parse_payload(&self.payload)
            && self.reports(&seen)
        {
            emit(seen.event);
        }
        self.payload.clear();
        self.overflow = false;
    }

    fn reports(&self, seen: &Seen<'_>) -> bool {
        match &self.follow {
            Follow::Anyone => true,
            Follow::Nobody => false,
            Follow::Aid(ours) => match seen.event {
                ShellEvent::Cwd(_) => true,
                _ => seen.aid == Some(&ours[..]),
            },
        }
    }
}

/// One sequence as parsed, with the `aid=` it carried.
#[derive(Debug)]
struct Seen<'a> {
    event: ShellEvent,
    aid: Option<&'a [u8]>,
}

/// Parses one complete OSC payload (between `ESC ]` and the terminator).
fn parse_payload(p: &[u8]) -> Option<Seen<'_>> {
    if let Some(rest) = p.strip_prefix(b"133;") {
        let mut fields = rest.split(|&b| b == b';');
        let kind = fields.next()?;
        let event = match kind {
            b"A" => ShellEvent::PromptStart,
            b"B" => ShellEvent::InputStart,
            b"C" => ShellEvent::CommandStart,
            b"D" => {
                // `D;code`, then the `key=value` options. The code is
                // positional; a D without one may still carry options.
                let code = rest
                    .split(|&b| b == b';')
                    .nth(1)
                    .and_then(|c| std::str::from_utf8(c).ok())
                    .and_then(|c| c.parse().ok());
                ShellEvent::CommandEnd(code)
            }
            _ => return None,
        };
        // Options are `key=value`; the first `aid` wins, and fields that
        // are not options (D's code) are skipped, as the proposal says to
        // ignore what is not understood.
        let aid = fields.find_map(|f| f.strip_prefix(b"aid="));
        return Some(Seen { event, aid });
    }
    if let Some(url) = p.strip_prefix(b"7;") {
        return parse_file_url(url).map(|cwd| Seen { event: ShellEvent::Cwd(cwd), aid: None });
    }
    None
}

/// `file://host/some%20path` -> `/some path`. The host part is ignored: the
/// shell runs on this machine (or reports a remote path we only display).
fn parse_file_url(url: &[u8]) -> Option<String> {
    let rest = url.strip_prefix(b"file://")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let decoded = percent_decode(&rest[slash..]);
    String::from_utf8(decoded).ok()
}

fn percent_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && i + 2 < s.len()
            && let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The id the fuzz body follows: any fixed one will do, the fuzzer finds
/// it through its comparisons.
const FUZZ_AID: &str = "uafuzz";

/// The fuzz body shared by the cargo-fuzz target `osc` and the tests: any
/// bytes scan without a panic; cutting them into pieces (at a point the
/// input chooses, and byte by byte) changes neither the events nor where
/// each ends; every event ends just past its terminator (BEL or ESC `\`),
/// in order; a working directory is absolute; and a scanner following one
/// id reports, in order, a part of what a scanner for anyone reports, all
/// of its markers carrying that id, while one following nobody reports
/// nothing.
pub fn check_any_output(data: &[u8]) {
    let scan = |follow: Follow, pieces: &[&[u8]]| {
        let mut s = OscScanner::with(follow);
        let mut out = Vec::new();
        let mut at = 0;
        for p in pieces {
            s.feed_at(p, |end, e| out.push((at + end, e)));
            at += p.len();
        }
        out
    };
    let whole = scan(Follow::Anyone, &[data]);
    let cut = data.first().map_or(0, |&b| (usize::from(b) * 7919) % data.len());
    let (a, b) = data.split_at(cut);
    assert_eq!(scan(Follow::Anyone, &[a, b]), whole, "cutting the output at byte {cut} changed the events");
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(scan(Follow::Anyone, &bytes), whole, "feeding the output byte by byte changed the events");
    let mut last = 0;
    for (end, e) in &whole {
        assert!(*end > last && *end <= data.len(), "event {e:?} ends at {end}, after {last}");
        let terminated = data[..*end].ends_with(b"\x07") || data[..*end].ends_with(b"\x1b\\");
        assert!(terminated, "event {e:?} does not end just past a terminator");
        if let ShellEvent::Cwd(path) = e {
            assert!(path.starts_with('/'), "a working directory that is not absolute: {path:?}");
        }
        last = *end;
    }
    let ours = scan(Follow::Aid(FUZZ_AID.as_bytes().into()), &[data]);
    let mut rest = whole.iter();
    for event in &ours {
        assert!(rest.any(|e| e == event), "{event:?} was reported for our id but not for anyone");
    }
    for (end, e) in &ours {
        if matches!(e, ShellEvent::Cwd(_)) {
            continue;
        }
        // The payload holds no ESC (one would have ended it), so the
        // sequence starts at the last `ESC ]` before its end.
        let body = &data[..*end];
        let body = body.strip_suffix(b"\x07").or_else(|| body.strip_suffix(b"\x1b\\")).unwrap_or(body);
        let start = memchr::memmem::rfind(body, b"\x1b]").map_or(0, |i| i + 2);
        let aid = body[start..].split(|&b| b == b';').find_map(|f| f.strip_prefix(b"aid="));
        assert_eq!(aid, Some(FUZZ_AID.as_bytes()), "{e:?} was reported for our id without it");
    }
    assert!(scan(Follow::Nobody, &[data]).is_empty(), "a scanner following nobody reported something");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_point_just_past_each_terminator() {
        let bytes = b"$ ls\x1b]133;C\x07out\r\n\x1b]133;D;0\x1b\\next";
        let mut s = OscScanner::new();
        let mut seen = Vec::new();
        s.feed_at(bytes, |end, e| seen.push((end, e)));
        assert_eq!(seen.len(), 2);
        assert_eq!(&bytes[seen[0].0..seen[0].0 + 3], b"out");
        assert_eq!(seen[1].1, ShellEvent::CommandEnd(Some(0)));
        assert_eq!(&bytes[seen[1].0..], b"next");
        // A marker split across reads ends inside the second read.
        let mut s = OscScanner::new();
        let mut ends = Vec::new();
        s.feed_at(b"a\x1b]133;", |end, _| ends.push(end));
        s.feed_at(b"C\x07rest", |end, _| ends.push(end));
        assert_eq!(ends, vec![2]);
    }

    fn scan(chunks: &[&[u8]]) -> Vec<ShellEvent> {
        let mut s = OscScanner::new();
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, |e| out.push(e));
        }
        out
    }

    const CYCLE: &[u8] =
        b"\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07file\r\n\x1b]133;D;2\x07\x1b]7;file://host/tmp/a%20b\x1b\\";

    fn cycle_events() -> Vec<ShellEvent> {
        vec![
            ShellEvent::PromptStart,
            ShellEvent::InputStart,
            ShellEvent::CommandStart,
            ShellEvent::CommandEnd(Some(2)),
            ShellEvent::Cwd("/tmp/a b".into()),
        ]
    }

    #[test]
    fn full_cycle_in_one_chunk() {
        assert_eq!(scan(&[CYCLE]), cycle_events());
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        for i in 0..=CYCLE.len() {
            for j in i..=CYCLE.len() {
                let got = scan(&[&CYCLE[..i], &CYCLE[i..j], &CYCLE[j..]]);
                assert_eq!(got, cycle_events(), "split at {i},{j}");
            }
        }
    }

    #[test]
    fn byte_at_a_time() {
        let chunks: Vec<&[u8]> = CYCLE.chunks(1).collect();
        assert_eq!(scan(&chunks), cycle_events());
    }

    #[test]
    fn d_without_code_and_with_options() {
        assert_eq!(
            scan(&[b"\x1b]133;D\x07\x1b]133;D;0;aid=7\x07\x1b]133;D;x\x07"]),
            vec![ShellEvent::CommandEnd(None), ShellEvent::CommandEnd(Some(0)), ShellEvent::CommandEnd(None)]
        );
    }

    #[test]
    fn foreign_sequences_are_ignored() {
        let input = b"\x1b]0;title\x07\x1b[31mred\x1b[0m\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b]133;Z\x07";
        assert!(scan(&[input]).is_empty());
    }

    #[test]
    fn esc_inside_osc_aborts_it_and_is_rescanned() {
        // ESC [ inside an OSC aborts the OSC; the following 133;A still counts.
        assert_eq!(scan(&[b"\x1b]133;B\x1b[m\x1b]133;A\x07"]), vec![ShellEvent::PromptStart]);
        // ESC ESC ] : the second ESC starts a real sequence.
        assert_eq!(scan(&[b"\x1b\x1b]133;C\x07"]), vec![ShellEvent::CommandStart]);
    }

    #[test]
    fn overlong_payload_is_dropped_then_scanning_recovers() {
        let mut input = b"\x1b]7;file://h/".to_vec();
        input.extend(std::iter::repeat_n(b'a', MAX_PAYLOAD + 10));
        input.extend_from_slice(b"\x07\x1b]133;A\x07");
        assert_eq!(scan(&[&input]), vec![ShellEvent::PromptStart]);
    }

    const OURS: &str = "ua-5eed";

    fn scan_following(aid: Option<&str>, chunks: &[&[u8]]) -> Vec<ShellEvent> {
        let mut s = OscScanner::following(aid);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, |e| out.push(e));
        }
        out
    }

    #[test]
    fn aid_is_read_from_every_marker_kind() {
        let cases: &[(&[u8], Option<&[u8]>)] = &[
            (b"133;A;aid=x", Some(b"x")),
            (b"133;B;aid=x", Some(b"x")),
            (b"133;C;aid=x", Some(b"x")),
            (b"133;D;0;aid=x", Some(b"x")),
            (b"133;D;aid=x", Some(b"x")),
            (b"133;A;cl=m;aid=x;k=i", Some(b"x")),
            (b"133;A;aid=x;aid=y", Some(b"x")),
            (b"133;A;aid=a=b", Some(b"a=b")),
            (b"133;A;aid=", Some(b"")),
            (b"133;A;aidx=1", None),
            (b"133;A;xaid=1", None),
            (b"133;A", None),
            (b"133;D;7", None),
        ];
        for (payload, aid) in cases {
            let seen = parse_payload(payload).expect("a marker");
            assert_eq!(seen.aid, *aid, "{}", String::from_utf8_lossy(payload));
        }
        assert_eq!(parse_payload(b"133;D;aid=x").map(|s| s.event), Some(ShellEvent::CommandEnd(None)));
        assert_eq!(parse_payload(b"133;D;3;aid=x").map(|s| s.event), Some(ShellEvent::CommandEnd(Some(3))));
        assert!(parse_payload(b"133;Aaid=x").is_none());
    }

    #[test]
    fn only_markers_with_our_aid_are_followed() {
        let input = b"\x1b]133;A\x07\x1b]133;A;aid=ua-5eed0\x07\x1b]133;A;aid=ua-5ee\x07\x1b]133;A;aid=\x07\
            \x1b]133;B;aid=other\x07\x1b]133;D;0\x07\x1b]133;C;cmdline_url=ls\x07\x1b]133;A;aid=ua-5eed\x07";
        assert_eq!(scan_following(Some(OURS), &[input]), vec![ShellEvent::PromptStart]);
        assert_eq!(scan(&[input]).len(), 8, "an unfiltered scanner sees them all");
    }

    #[test]
    fn without_integration_nothing_is_ours() {
        let input = b"\x1b]7;file://h/tmp\x07\x1b]133;A\x07\x1b]133;A;aid=ua-5eed\x07";
        assert!(scan_following(None, &[input]).is_empty());
    }

    /// Our shell runs a nested one whose prompt has markers of its own
    /// (no aid, another aid) and reports its own cwd; then it exits.
    const NESTED: &[u8] = b"\x1b]133;A;aid=ua-5eed\x07$ \x1b]133;B;aid=ua-5eed\x07bash\r\n\x1b]133;C;aid=ua-5eed\x07\
        \x1b]7;file://h/nested\x07\x1b]133;A\x07> \x1b]133;B\x07# hi\r\n\x1b]133;C;aid=ua-5eed1\x1b\\\
        \x1b]133;D;0;aid=ua-5ee\x1b\\\x1b]133;D;1\x07exit\r\n\x1b]133;D;4;aid=ua-5eed\x1b\\\
        \x1b]7;file://h/ours\x1b\\\x1b]133;A;aid=ua-5eed\x07$ \x1b]133;B;aid=ua-5eed\x07";

    fn nested_events() -> Vec<ShellEvent> {
        vec![
            ShellEvent::PromptStart,
            ShellEvent::InputStart,
            ShellEvent::CommandStart,
            ShellEvent::Cwd("/nested".into()),
            ShellEvent::CommandEnd(Some(4)),
            ShellEvent::Cwd("/ours".into()),
            ShellEvent::PromptStart,
            ShellEvent::InputStart,
        ]
    }

    #[test]
    fn aid_filtering_at_every_split_point() {
        for i in 0..=NESTED.len() {
            for j in i..=NESTED.len() {
                let got = scan_following(Some(OURS), &[&NESTED[..i], &NESTED[i..j], &NESTED[j..]]);
                assert_eq!(got, nested_events(), "split at {i},{j}");
            }
        }
        let bytes: Vec<&[u8]> = NESTED.chunks(1).collect();
        assert_eq!(scan_following(Some(OURS), &bytes), nested_events());
    }

    #[test]
    fn spans_cover_each_sequence_from_its_escape() {
        let bytes = b"out\x1b\x1b]133;D;0\x07\x1b[m\x1b]7;file:///x\x1b\\";
        let mut s = OscScanner::new();
        let mut spans = Vec::new();
        s.feed_spans(bytes, |span, _| spans.push(span));
        assert_eq!(spans, vec![4..14, 17..32]);
        // Split inside a sequence: its span starts at 0 of the second read.
        for cut in 4..14 {
            let mut s = OscScanner::new();
            let mut spans = Vec::new();
            s.feed_spans(&bytes[..cut], |span, _| spans.push(span));
            s.feed_spans(&bytes[cut..14], |span, _| spans.push(span));
            assert_eq!(spans, vec![0..14 - cut], "cut at {cut}");
        }
    }

    #[test]
    fn filtered_offsets_still_point_past_our_markers() {
        let bytes = b"\x1b]133;C\x07x\x1b]133;C;aid=ua-5eed\x07out";
        let mut s = OscScanner::following(Some(OURS));
        let mut seen = Vec::new();
        s.feed_at(bytes, |end, e| seen.push((end, e)));
        assert_eq!(seen.len(), 1);
        assert_eq!(&bytes[seen[0].0..], b"out");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode(b"/a%2Fb%zz%4"), b"/a/b%zz%4");
        assert_eq!(scan(&[b"\x1b]7;file:///\x07"]), vec![ShellEvent::Cwd("/".into())]);
        assert!(scan(&[b"\x1b]7;http://x/y\x07"]).is_empty());
    }

    #[test]
    fn the_fuzz_body_holds_for_markers_split_anywhere() {
        let samples: [&[u8]; 5] = [
            b"$ ls\x1b]133;C\x07out\r\n\x1b]133;D;0\x1b\\next",
            b"\x1b]133;A;aid=uafuzz\x07PS1> \x1b]133;B;aid=uafuzz\x07\x1b]133;D;7;aid=other\x07",
            b"\x1b]7;file://host/tmp/a%20b\x07\x1b]7;file://host\x07\x1b]133;A\x1b]133;B\x07",
            b"\x1b\x1b]133;C;aid=uafuzz;aid=x\x1b\\\x1b]133;D;aid=uafuzz\x07",
            b"",
        ];
        for data in samples {
            check_any_output(data);
        }
    }
}
