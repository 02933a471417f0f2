//! Trace context: which chain of unixagent sessions a session belongs to,
//! on this machine or on the far side of `ssh`.
//!
//! These are the only names; README shows how to send them over ssh:
//!
//! | variable | value |
//! |---|---|
//! | `UA_TRACE_ID` | the trace: every session started from one first session shares it |
//! | `UA_TRACE_PARENT` | the session that started this one (its session id) |
//!
//! A session takes both from its environment when they are well formed,
//! starts a new trace otherwise, records them in its `meta.json`, and
//! hands its shell the same trace with itself as the parent. Nothing here
//! is a secret; a value that is not a plain token (letters, digits, `.`,
//! `_`, `:`, `-`, at most 128 bytes) is ignored, so a stray variable cannot
//! carry text into the journal.

use std::ffi::OsString;

pub const TRACE_ID_ENV: &str = "UA_TRACE_ID";
pub const TRACE_PARENT_ENV: &str = "UA_TRACE_PARENT";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: String,
    /// The session that started this one, if it said so.
    pub parent: Option<String>,
}

impl TraceContext {
    /// The context this process inherited, or a new trace.
    pub fn inherited() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let trace_id = get(TRACE_ID_ENV).filter(|v| well_formed(v)).unwrap_or_else(new_trace_id);
        let parent = get(TRACE_PARENT_ENV).filter(|v| well_formed(v));
        Self { trace_id, parent }
    }

    /// What the session's shell inherits: this trace, with `session` as
    /// the parent of whatever runs there.
    pub fn for_children(&self, session: &str) -> [(OsString, OsString); 2] {
        [(TRACE_ID_ENV.into(), self.trace_id.as_str().into()), (TRACE_PARENT_ENV.into(), session.into())]
    }
}

fn well_formed(v: &str) -> bool {
    !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_:".contains(&b))
}

/// 32 hex digits (as a W3C trace id), from two randomly keyed hashes.
fn new_trace_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let half = |salt: u8| {
        let mut h = state.build_hasher();
        h.write_u8(salt);
        h.write_u32(std::process::id());
        h.write_u128(now);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn an_inherited_trace_is_kept_and_this_session_becomes_the_parent() {
        let t = TraceContext::from_lookup(env(&[(TRACE_ID_ENV, "4bf92f3577b34da6"), (TRACE_PARENT_ENV, "s-1")]));
        assert_eq!(t.trace_id, "4bf92f3577b34da6");
        assert_eq!(t.parent.as_deref(), Some("s-1"));
        let [(k1, v1), (k2, v2)] = t.for_children("s-2");
        assert_eq!((k1.to_str(), v1.to_str()), (Some("UA_TRACE_ID"), Some("4bf92f3577b34da6")));
        assert_eq!((k2.to_str(), v2.to_str()), (Some("UA_TRACE_PARENT"), Some("s-2")));
    }

    #[test]
    fn without_a_well_formed_trace_a_new_one_starts() {
        let fresh = TraceContext::from_lookup(env(&[]));
        assert_eq!(fresh.trace_id.len(), 32);
        assert!(fresh.parent.is_none());
        let bad = TraceContext::from_lookup(env(&[(TRACE_ID_ENV, "a b\n"), (TRACE_PARENT_ENV, "")]));
        assert_ne!(bad.trace_id, "a b\n");
        assert!(bad.parent.is_none());
        assert_ne!(TraceContext::from_lookup(env(&[])).trace_id, fresh.trace_id);
    }
}
