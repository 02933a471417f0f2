//! A finished span as `traces.jsonl` holds it: one JSON object per line,
//! readable with `jq` and complete on its own (each line carries the
//! process's resource), which [`super::otlp`] turns into OTLP.
//!
//! ```json
//! {"trace_id":"4bf9…4736","span_id":"00f0…02b7","parent_span_id":null,
//!  "name":"invoke_agent unixagent","kind":"internal","start_ns":1795…,"end_ns":1795…,
//!  "status":"ok","attributes":{"gen_ai.operation.name":"invoke_agent",…},
//!  "resource":{"service.name":"unixagent","process.pid":1001,…},
//!  "summary":{"instruction":"check the logs","actions":[…],…}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An attribute's value: the scalar and list types OTLP carries. Written
/// as the bare JSON value; read by its JSON type (below), not by trying
/// each variant in turn, which costs an error per miss on every value of
/// a large export.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(String),
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// Reads a [`Value`]: an integer that fits `i64` is an `Int`, any other
/// number a `Double`, an array of strings a `List`.
struct ValueVisitor;

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a boolean, a number, a string or a list of strings")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(i64::try_from(n).map_or(Value::Double(n as f64), Value::Int))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::Double(n))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(s) = seq.next_element::<String>()? {
            list.push(s);
        }
        Ok(Value::List(list))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Str(s)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Self::Int(n)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Self::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

/// OTLP's span kinds that unixagent uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Work inside the process: an agent's turn, a command.
    Internal,
    /// A call to another service: the model.
    Client,
}

/// How a span ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Unset,
    Ok,
    Error,
}

pub type Attributes = BTreeMap<String, Value>;

/// One finished span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub name: String,
    pub kind: Kind,
    /// Unix time in nanoseconds.
    pub start_ns: u64,
    pub end_ns: u64,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    #[serde(default)]
    pub attributes: Attributes,
    /// The process that recorded it (`service.name`, `process.pid`, …).
    #[serde(default)]
    pub resource: Attributes,
    /// The seed's per-instruction record, on `invoke_agent` spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

/// What one instruction did, in one record (design §10.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub session: String,
    pub instruction: String,
    pub backend: Option<String>,
    pub model: Option<String>,
    pub actions: Vec<Action>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// `policy` (every command allowed by the policy), `human` (someone
    /// approved at least one), `none` (nothing ran).
    pub approval: String,
    /// `success`, `error` or `cancelled`.
    pub result: String,
}

/// One command of an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    #[serde(rename = "type")]
    pub kind: String,
    /// Scrubbed of secrets.
    pub command: String,
    pub exit: Option<i32>,
    pub duration_ms: u64,
    /// `allow`, `ask` or `deny`: what the gate said.
    pub decision: String,
}

impl Span {
    /// The line for `traces.jsonl`, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }

    /// The string value of attribute `key`.
    pub fn attr(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// What the process reports about itself on every span.
pub fn resource(session: &str) -> Attributes {
    let mut r = Attributes::new();
    r.insert("service.name".into(), "unixagent".into());
    r.insert("service.version".into(), env!("CARGO_PKG_VERSION").into());
    r.insert("process.pid".into(), i64::from(std::process::id()).into());
    if let Some(h) = hostname() {
        r.insert("host.name".into(), h.into());
    }
    r.insert("unixagent.session.id".into(), session.into());
    r
}

/// The host's name, as `uname -n` says it.
fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    std::str::from_utf8(&buf[..end]).ok().filter(|h| !h.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_one_json_line_and_reads_back() {
        let mut attributes = Attributes::new();
        attributes.insert("gen_ai.operation.name".into(), "chat".into());
        attributes.insert("gen_ai.usage.input_tokens".into(), 12u64.into());
        attributes.insert("gen_ai.response.finish_reasons".into(), Value::List(vec!["stop".into()]));
        let span = Span {
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            span_id: "00f067aa0ba902b7".into(),
            parent_span_id: None,
            name: "chat m".into(),
            kind: Kind::Client,
            start_ns: 1,
            end_ns: 2,
            status: Status::Unset,
            status_message: None,
            attributes,
            resource: resource("s-1"),
            summary: None,
        };
        let line = span.to_line();
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "{line}");
        let back: Span = serde_json::from_str(&line).unwrap();
        assert_eq!(back, span);
        assert_eq!(back.attributes["gen_ai.usage.input_tokens"], Value::Int(12));
        assert_eq!(back.attr("gen_ai.operation.name"), Some("chat"));
    }

    #[test]
    fn values_are_read_by_their_json_type() {
        let read = |j: &str| serde_json::from_str::<Value>(j);
        assert_eq!(read("true").unwrap(), Value::Bool(true));
        assert_eq!(read("-3").unwrap(), Value::Int(-3));
        assert_eq!(read("18446744073709551615").unwrap(), Value::Double(18_446_744_073_709_551_615.0));
        assert_eq!(read("2.5").unwrap(), Value::Double(2.5));
        assert_eq!(read("\"a\\nb\"").unwrap(), Value::Str("a\nb".into()));
        assert_eq!(read("[\"stop\"]").unwrap(), Value::List(vec!["stop".into()]));
        assert!(read("{}").is_err() && read("[1]").is_err() && read("null").is_err());
        for v in [Value::Bool(false), Value::Int(7), Value::Double(0.5), Value::Str("x".into())] {
            assert_eq!(read(&serde_json::to_string(&v).unwrap()).unwrap(), v);
        }
    }
}
