//! Spans as OTLP/JSON: `ExportTraceServiceRequest` messages, as the
//! OpenTelemetry protocol specifies its JSON encoding (lowerCamelCase
//! field names, trace and span ids as hex rather than protobuf's base64,
//! 64-bit integers as decimal strings, enums as numbers). An OpenTelemetry
//! Collector's `otlpjsonfile` receiver reads such lines from a file; the
//! same text is the body of an OTLP/HTTP request (`POST /v1/traces`,
//! `Content-Type: application/json`), which Jaeger and Tempo accept.
//!
//! Written by hand over serde: the types are a few plain records, and the
//! opentelemetry crates would add prost and their own model of a span to
//! build only this (see DESIGN.md, "Traces", for what they cost). The
//! tests hold the output to the protocol's own protobuf definitions.

use std::collections::BTreeMap;

use serde::Serialize;

use super::span::{Attributes, Kind, Span, Status, Value};

/// The instrumentation scope every span comes from.
const SCOPE: &str = "unixagent";
/// Spans per request: the Collector's file receiver reads lines of up to
/// 1 MiB by default, and a span is rarely over 1 KiB.
pub const SPANS_PER_REQUEST: usize = 512;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    resource_spans: Vec<ResourceSpans<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans<'a> {
    resource: Resource,
    scope_spans: [ScopeSpans<'a>; 1],
}

#[derive(Serialize)]
struct Resource {
    attributes: Vec<KeyValue>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScopeSpans<'a> {
    scope: Scope,
    spans: Vec<OtlpSpan<'a>>,
}

#[derive(Serialize)]
struct Scope {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OtlpSpan<'a> {
    trace_id: &'a str,
    span_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_span_id: Option<&'a str>,
    name: &'a str,
    kind: u8,
    start_time_unix_nano: String,
    end_time_unix_nano: String,
    attributes: Vec<KeyValue>,
    status: OtlpStatus,
}

#[derive(Serialize)]
struct OtlpStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    code: u8,
}

#[derive(Serialize)]
struct KeyValue {
    key: String,
    value: AnyValue,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::enum_variant_names, reason = "the variants are OTLP/JSON's own field names")]
enum AnyValue {
    StringValue(String),
    BoolValue(bool),
    /// int64: a decimal string in OTLP/JSON.
    IntValue(String),
    DoubleValue(f64),
    ArrayValue(ArrayValue),
}

#[derive(Serialize)]
struct ArrayValue {
    values: Vec<AnyValue>,
}

fn any(v: &Value) -> AnyValue {
    match v {
        Value::Bool(b) => AnyValue::BoolValue(*b),
        Value::Int(n) => AnyValue::IntValue(n.to_string()),
        Value::Double(d) => AnyValue::DoubleValue(*d),
        Value::Str(s) => AnyValue::StringValue(s.clone()),
        Value::List(l) => {
            AnyValue::ArrayValue(ArrayValue { values: l.iter().map(|s| AnyValue::StringValue(s.clone())).collect() })
        }
    }
}

fn key_values(a: &Attributes) -> Vec<KeyValue> {
    a.iter().map(|(k, v)| KeyValue { key: k.clone(), value: any(v) }).collect()
}

fn otlp_span(s: &Span) -> OtlpSpan<'_> {
    let mut attributes = key_values(&s.attributes);
    if let Some(summary) = &s.summary
        && let Ok(json) = serde_json::to_string(summary)
    {
        attributes.push(KeyValue { key: "unixagent.summary".into(), value: AnyValue::StringValue(json) });
    }
    OtlpSpan {
        trace_id: &s.trace_id,
        span_id: &s.span_id,
        parent_span_id: s.parent_span_id.as_deref(),
        name: &s.name,
        // SpanKind: 1 internal, 3 client.
        kind: match s.kind {
            Kind::Internal => 1,
            Kind::Client => 3,
        },
        start_time_unix_nano: s.start_ns.to_string(),
        end_time_unix_nano: s.end_ns.to_string(),
        attributes,
        // StatusCode: 0 unset, 1 ok, 2 error.
        status: OtlpStatus {
            message: s.status_message.clone(),
            code: match s.status {
                Status::Unset => 0,
                Status::Ok => 1,
                Status::Error => 2,
            },
        },
    }
}

/// One `ExportTraceServiceRequest` as compact JSON (no newline): the
/// spans grouped by the process that recorded them.
pub fn request(spans: &[Span]) -> String {
    // Keyed by the resource's JSON, so equal resources share one group;
    // the groups keep the order their first span came in.
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, (Resource, Vec<OtlpSpan<'_>>)> = BTreeMap::new();
    for s in spans {
        let key = serde_json::to_string(&s.resource).unwrap_or_default();
        let entry = groups.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (Resource { attributes: key_values(&s.resource) }, Vec::new())
        });
        entry.1.push(otlp_span(s));
    }
    let resource_spans = order
        .iter()
        .filter_map(|k| groups.remove(k))
        .map(|(resource, spans)| ResourceSpans {
            resource,
            scope_spans: [ScopeSpans { scope: Scope { name: SCOPE, version: env!("CARGO_PKG_VERSION") }, spans }],
        })
        .collect();
    serde_json::to_string(&Request { resource_spans }).unwrap_or_default()
}

/// Requests of at most [`SPANS_PER_REQUEST`] spans, one per line.
pub fn lines(spans: &[Span]) -> impl Iterator<Item = String> + '_ {
    spans.chunks(SPANS_PER_REQUEST).map(|chunk| {
        let mut line = request(chunk);
        line.push('\n');
        line
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::TraceContext;
    use crate::tracer::{Command, ModelCall, ModelCallEnd, Tracer};

    fn spans() -> Vec<Span> {
        let mut t = Tracer::new(TraceContext::from_lookup(|_| None), "s-1", crate::span::resource("s-1"));
        t.instruction_started(1_000, 1, "check");
        t.model_call_started(2_000, &ModelCall { provider: "anthropic", model: "m", ..Default::default() });
        let mut out: Vec<Span> = t.model_call_ended(3_000, &ModelCallEnd::default()).into_iter().collect();
        t.command_started(4_000, &Command { id: "t1", command: "ls", decision: "allow", ..Default::default() });
        out.extend(t.command_ended(5_000, "t1", Some(2), "failed"));
        out.extend(t.instruction_ended(6_000, "ok"));
        out
    }

    #[test]
    fn spans_become_one_request_in_otlp_json() {
        let s = spans();
        let v: serde_json::Value = serde_json::from_str(&request(&s)).unwrap();
        let rs = &v["resourceSpans"];
        assert_eq!(rs.as_array().unwrap().len(), 1, "one process, one resource");
        let attrs = rs[0]["resource"]["attributes"].as_array().unwrap();
        assert!(attrs.iter().any(|a| a["key"] == "service.name" && a["value"]["stringValue"] == "unixagent"));
        let scope = &rs[0]["scopeSpans"][0];
        assert_eq!(scope["scope"]["name"], "unixagent");
        let spans = scope["spans"].as_array().unwrap();
        assert_eq!(spans.len(), 3);
        let tool = &spans[1];
        assert_eq!(tool["traceId"], s[1].trace_id.as_str());
        assert_eq!(tool["traceId"].as_str().unwrap().len(), 32);
        assert_eq!(tool["parentSpanId"], s[2].span_id.as_str());
        assert_eq!(tool["kind"], 1);
        assert_eq!(spans[0]["kind"], 3, "chat is a client span");
        assert_eq!(tool["startTimeUnixNano"], "4000");
        assert_eq!(tool["status"]["code"], 2);
        let exit = tool["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "process.exit.code").unwrap();
        assert_eq!(exit["value"]["intValue"], "2");
        assert!(spans[2].get("parentSpanId").is_none(), "a root span has none");
        let summary = spans[2]["attributes"].as_array().unwrap().iter().find(|a| a["key"] == "unixagent.summary");
        let summary: serde_json::Value =
            serde_json::from_str(summary.unwrap()["value"]["stringValue"].as_str().unwrap()).unwrap();
        assert_eq!(summary["instruction"], "check");
    }

    #[test]
    fn many_spans_split_into_lines() {
        let one = spans();
        let many: Vec<Span> = (0..SPANS_PER_REQUEST * 2 + 1).map(|i| one[i % 3].clone()).collect();
        let lines: Vec<String> = lines(&many).collect();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.ends_with('\n') && l.matches('\n').count() == 1));
    }
}
