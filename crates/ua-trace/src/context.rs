//! Trace context: which trace a unixagent belongs to and which span its
//! work hangs from, read from the environment once per process and handed
//! on to its shell and to each agent command.
//!
//! | variable | value | who sets it |
//! |---|---|---|
//! | `TRACEPARENT` | W3C trace context, `00-<trace id>-<span id>-01` | each agent command (its `execute_tool` span); any traced caller |
//! | `UA_TRACE_ID` | the trace, 32 hex digits | the session's shell and each agent command |
//! | `UA_SPAN_ID` | the span the program runs under (the command's) | each agent command |
//! | `UA_PARENT_SPAN_ID` | the span above that (the instruction's `invoke_agent`) | each agent command |
//! | `UA_TRACE_DEPTH` | the session's depth: 0 for a root, one more per child | the session's shell |
//! | `UA_TRACE_SINK` | where spans go (`file:///…/traces.jsonl`) | the session's shell |
//! | `UNIXAGENT_COMMAND` | the id of the agent command that started a child | each agent command |
//!
//! A process continues the trace it inherits: `TRACEPARENT` first (the
//! W3C form, which any traced program between the two may have updated),
//! else `UA_TRACE_ID` with `UA_SPAN_ID`; otherwise it starts a trace.
//! Values that are not well formed are ignored, so a stray variable cannot
//! carry text into a journal or a span. Nothing here is a secret.

use std::ffi::OsString;
use std::fmt;
use std::sync::OnceLock;

pub const TRACEPARENT_ENV: &str = "TRACEPARENT";
pub const TRACE_ID_ENV: &str = "UA_TRACE_ID";
pub const SPAN_ID_ENV: &str = "UA_SPAN_ID";
pub const PARENT_SPAN_ID_ENV: &str = "UA_PARENT_SPAN_ID";
pub const DEPTH_ENV: &str = "UA_TRACE_DEPTH";
pub const SINK_ENV: &str = "UA_TRACE_SINK";
pub const COMMAND_ENV: &str = "UNIXAGENT_COMMAND";

/// A W3C trace id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub [u8; 16]);

/// A W3C span (parent) id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanId(pub [u8; 8]);

impl TraceId {
    pub fn random() -> Self {
        Self(random_nonzero())
    }

    /// 32 lower-case hex digits, not all zero (upper case is invalid in
    /// `traceparent`, and the same rule keeps one spelling everywhere).
    pub fn parse(s: &str) -> Option<Self> {
        parse_hex(s).map(Self)
    }
}

impl SpanId {
    pub fn random() -> Self {
        Self(random_nonzero())
    }

    /// The span of a named thing in `trace`: the same names give the same
    /// id, so the `TRACEPARENT` a command is typed with names the span the
    /// session records for it later, without the two sharing state. Keyed
    /// by the (random) trace id, so the ids are as unguessable as it is.
    pub fn derive(trace: TraceId, parts: &[&str]) -> Self {
        let mut bytes = Vec::with_capacity(64);
        for p in parts {
            bytes.extend_from_slice(p.as_bytes());
            bytes.push(0);
        }
        let h = siphasher::sip::SipHasher13::new_with_key(&trace.0).hash(&bytes);
        Self(h.max(1).to_be_bytes())
    }

    /// The `invoke_agent` span of a session's turn.
    pub fn agent(trace: TraceId, session: &str, turn: u32) -> Self {
        Self::derive(trace, &[session, "invoke_agent", &turn.to_string()])
    }

    /// The `execute_tool` span of a session's command (its tool call id).
    pub fn tool(trace: TraceId, session: &str, tool_use_id: &str) -> Self {
        Self::derive(trace, &[session, "execute_tool", tool_use_id])
    }

    /// 16 lower-case hex digits, not all zero.
    pub fn parse(s: &str) -> Option<Self> {
        parse_hex(s).map(Self)
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
}

fn parse_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N || !b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        let digit = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'a' + 10 };
        out[i] = digit(pair[0]) << 4 | digit(pair[1]);
    }
    out.iter().any(|&x| x != 0).then_some(out)
}

/// Random bytes from the kernel, never all zero (an all-zero id is
/// invalid in W3C trace context). Falls back to a randomly keyed hash of
/// the time and pid if the kernel refuses, so an id is always there.
fn random_nonzero<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    if getrandom::fill(&mut out).is_err() || out.iter().all(|&b| b == 0) {
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let mut h = state.build_hasher();
            h.write_usize(i);
            h.write_u32(std::process::id());
            h.write_u128(now);
            let bytes = (h.finish() | 1).to_be_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
    out
}

/// A parsed `traceparent` value (W3C Trace Context, level 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    pub parent_id: SpanId,
    /// Bit 0: sampled.
    pub flags: u8,
}

impl TraceParent {
    /// Parses `version-traceid-parentid-flags`. Version `ff` is invalid;
    /// version 00 is exactly 55 characters; a later version may carry more
    /// fields after the flags, which are ignored (the specification's rule
    /// for versions a parser does not know).
    pub fn parse(value: &str) -> Option<Self> {
        let v = value.trim_matches(|c| c == ' ' || c == '\t');
        let mut fields = v.splitn(5, '-');
        let version = hex_byte(fields.next()?)?;
        let (trace, parent, flags) = (fields.next()?, fields.next()?, fields.next()?);
        let rest = fields.next();
        match version {
            0xff => return None,
            0 if rest.is_some() || v.len() != 55 => return None,
            _ => {}
        }
        Some(Self { trace_id: TraceId::parse(trace)?, parent_id: SpanId::parse(parent)?, flags: hex_byte(flags)? })
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "00-{}-{}-{:02x}", self.trace_id, self.parent_id, self.flags)
    }
}

/// One byte as two lower-case hex digits, zero allowed (version, flags).
fn hex_byte(s: &str) -> Option<u8> {
    let ok = s.len() == 2 && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    ok.then(|| u8::from_str_radix(s, 16).ok()).flatten()
}

/// This process's place in a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: TraceId,
    /// The span this process's work hangs from: the `execute_tool` span of
    /// the agent command that started it, or a traced caller's span.
    pub parent_span: Option<SpanId>,
    /// The span above that, when the caller said (`UA_PARENT_SPAN_ID`).
    pub grandparent_span: Option<SpanId>,
    /// 0 for a root session; a child is one deeper than its parent.
    pub depth: u32,
    /// The agent command that started this process (`UNIXAGENT_COMMAND`).
    pub command: Option<String>,
    /// The trace was inherited rather than started here.
    pub continued: bool,
}

/// Set once, before any session starts (see [`TraceContext::fix`]).
static PROCESS: OnceLock<TraceContext> = OnceLock::new();

impl TraceContext {
    /// This process's context: the one [`TraceContext::fix`] set, else the
    /// one the environment gives. It does not change for the life of the
    /// process, so every span and every child agrees on it.
    pub fn inherited() -> Self {
        PROCESS.get_or_init(|| Self::from_lookup(|name| std::env::var(name).ok())).clone()
    }

    /// Fixes this process's context (admission may find it deeper than
    /// the environment says). A second call changes nothing.
    pub fn fix(ctx: Self) -> Self {
        PROCESS.get_or_init(|| ctx).clone()
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let w3c = get(TRACEPARENT_ENV).and_then(|v| TraceParent::parse(&v));
        let ua_trace = get(TRACE_ID_ENV).and_then(|v| TraceId::parse(v.trim()));
        let (trace_id, parent_span, continued) = match (w3c, ua_trace) {
            (Some(tp), _) => (tp.trace_id, Some(tp.parent_id), true),
            (None, Some(t)) => (t, get(SPAN_ID_ENV).and_then(|v| SpanId::parse(v.trim())), true),
            (None, None) => (TraceId::random(), None, false),
        };
        // The grandparent only means something beside the same parent.
        let grandparent_span = get(PARENT_SPAN_ID_ENV)
            .and_then(|v| SpanId::parse(v.trim()))
            .filter(|_| parent_span.is_some() && get(SPAN_ID_ENV).and_then(|v| SpanId::parse(v.trim())) == parent_span);
        let depth = get(DEPTH_ENV).and_then(|v| v.trim().parse::<u32>().ok()).map_or(0, |d| d.saturating_add(1));
        let command = get(COMMAND_ENV).filter(|v| plain_token(v));
        Self { trace_id, parent_span, grandparent_span, depth, command, continued }
    }

    /// What the session's shell inherits: the trace, this session's depth
    /// and where spans go, so that a unixagent started there (by the agent
    /// or by the person) joins this trace one level deeper.
    pub fn shell_env(&self, sink: Option<&str>) -> Vec<(OsString, OsString)> {
        let mut env = vec![
            (TRACE_ID_ENV.into(), self.trace_id.to_string().into()),
            (DEPTH_ENV.into(), self.depth.to_string().into()),
        ];
        if let Some(s) = sink {
            env.push((SINK_ENV.into(), s.into()));
        }
        env
    }

    /// The environment agent command `tool_use_id` of `session`'s turn
    /// `turn` runs with: its `execute_tool` span under the turn's
    /// `invoke_agent` span, as [`crate::Tracer`] records them.
    pub fn command_env_for(&self, session: &str, turn: u32, tool_use_id: &str) -> Vec<(&'static str, String)> {
        let span = SpanId::tool(self.trace_id, session, tool_use_id);
        self.command_env(span, SpanId::agent(self.trace_id, session, turn), tool_use_id)
    }

    /// The environment one agent command runs with: `span` is its
    /// `execute_tool` span, `parent` the instruction's `invoke_agent` span,
    /// `command` its tool call id.
    pub fn command_env(&self, span: SpanId, parent: SpanId, command: &str) -> Vec<(&'static str, String)> {
        let tp = TraceParent { trace_id: self.trace_id, parent_id: span, flags: 1 };
        let mut env = vec![
            (TRACEPARENT_ENV, tp.to_string()),
            (TRACE_ID_ENV, self.trace_id.to_string()),
            (SPAN_ID_ENV, span.to_string()),
            (PARENT_SPAN_ID_ENV, parent.to_string()),
        ];
        if plain_token(command) {
            env.push((COMMAND_ENV, command.to_string()));
        }
        env
    }
}

/// Letters, digits, `.`, `_`, `:`, `-`; at most 128 bytes. Tool call ids
/// (`toolu_…`, `call_…`) are such tokens; anything else is not passed on.
fn plain_token(v: &str) -> bool {
    !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traceparent_parses_and_prints_back() {
        let tp = TraceParent::parse(TP).unwrap();
        assert_eq!(tp.trace_id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(tp.parent_id.to_string(), "00f067aa0ba902b7");
        assert_eq!(tp.flags, 1);
        assert_eq!(tp.to_string(), TP);
        // A later version may add fields; they are ignored.
        let v1 = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-ever";
        assert_eq!(TraceParent::parse(v1).unwrap().flags, 9);
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-xz",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn traceparent_wins_and_the_depth_is_one_more() {
        let t = TraceContext::from_lookup(env(&[
            (TRACEPARENT_ENV, TP),
            (TRACE_ID_ENV, "11111111111111111111111111111111"),
            (SPAN_ID_ENV, "2222222222222222"),
            (DEPTH_ENV, "2"),
            (COMMAND_ENV, "toolu_01"),
        ]));
        assert_eq!(t.trace_id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_span.map(|s| s.to_string()).as_deref(), Some("00f067aa0ba902b7"));
        assert_eq!(t.depth, 3);
        assert_eq!(t.command.as_deref(), Some("toolu_01"));
        assert!(t.continued);
    }

    #[test]
    fn the_seeds_variables_continue_a_trace_too() {
        let t = TraceContext::from_lookup(env(&[
            (TRACE_ID_ENV, "4bf92f3577b34da6a3ce929d0e0e4736"),
            (SPAN_ID_ENV, "00f067aa0ba902b7"),
            (PARENT_SPAN_ID_ENV, "1111111111111111"),
        ]));
        assert_eq!(t.trace_id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_span.unwrap().to_string(), "00f067aa0ba902b7");
        assert_eq!(t.grandparent_span.unwrap().to_string(), "1111111111111111");
        assert_eq!(t.depth, 0, "no depth in the environment: a root");
    }

    #[test]
    fn without_a_well_formed_trace_a_new_one_starts() {
        let fresh = TraceContext::from_lookup(env(&[]));
        assert!(!fresh.continued && fresh.parent_span.is_none());
        let bad = TraceContext::from_lookup(env(&[
            (TRACE_ID_ENV, "a b\n"),
            (TRACEPARENT_ENV, "nonsense"),
            (DEPTH_ENV, "-1"),
            (COMMAND_ENV, "rm -rf /"),
        ]));
        assert!(!bad.continued);
        assert_eq!(bad.depth, 0);
        assert!(bad.command.is_none());
        assert_ne!(TraceContext::from_lookup(env(&[])).trace_id, fresh.trace_id);
        assert_eq!(fresh.trace_id.to_string().len(), 32);
    }

    #[test]
    fn a_command_runs_under_its_own_span() {
        let t = TraceContext::from_lookup(env(&[(TRACEPARENT_ENV, TP), (DEPTH_ENV, "0")]));
        let span = SpanId::parse("aaaaaaaaaaaaaaaa").unwrap();
        let agent = SpanId::parse("bbbbbbbbbbbbbbbb").unwrap();
        let env = t.command_env(span, agent, "toolu_9");
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get(TRACEPARENT_ENV), Some("00-4bf92f3577b34da6a3ce929d0e0e4736-aaaaaaaaaaaaaaaa-01"));
        assert_eq!(get(SPAN_ID_ENV), Some("aaaaaaaaaaaaaaaa"));
        assert_eq!(get(PARENT_SPAN_ID_ENV), Some("bbbbbbbbbbbbbbbb"));
        assert_eq!(get(COMMAND_ENV), Some("toolu_9"));
        // What the command's child reads back from it.
        let child = TraceContext::from_lookup(|k| {
            get(k).map(str::to_string).or_else(|| (k == DEPTH_ENV).then(|| t.depth.to_string()))
        });
        assert_eq!((child.trace_id, child.parent_span, child.grandparent_span), (t.trace_id, Some(span), Some(agent)));
        assert_eq!(child.depth, 2);
        let shell = t.shell_env(Some("file:///x/traces.jsonl"));
        assert!(shell.contains(&(DEPTH_ENV.into(), "1".into())), "{shell:?}");
    }

    #[test]
    fn derived_ids_depend_on_every_name_and_the_trace() {
        let t = TraceId::random();
        let a = SpanId::tool(t, "s-1", "toolu_1");
        assert_eq!(a, SpanId::tool(t, "s-1", "toolu_1"));
        assert_ne!(a, SpanId::tool(t, "s-2", "toolu_1"));
        assert_ne!(a, SpanId::tool(TraceId::random(), "s-1", "toolu_1"));
        assert_ne!(SpanId::agent(t, "s-1", 1), SpanId::agent(t, "s-1", 2));
        // No ambiguity where one name ends and the next begins.
        assert_ne!(SpanId::derive(t, &["ab", "c"]), SpanId::derive(t, &["a", "bc"]));
        let ctx = TraceContext { trace_id: t, ..TraceContext::from_lookup(|_| None) };
        let env = ctx.command_env_for("s-1", 3, "toolu_1");
        assert_eq!(env[2], (SPAN_ID_ENV, a.to_string()));
        assert_eq!(env[3], (PARENT_SPAN_ID_ENV, SpanId::agent(t, "s-1", 3).to_string()));
    }

    #[test]
    fn ids_are_random_and_never_zero() {
        let a = SpanId::random();
        assert_ne!(a, SpanId::random());
        assert!(a.0.iter().any(|&b| b != 0));
        assert_eq!(SpanId::parse(&a.to_string()), Some(a));
    }
}
