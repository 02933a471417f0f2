//! Spans as OTLP/JSON: `ExportTraceServiceRequest` messages, as the
//! OpenTelemetry protocol specifies its JSON encoding (lowerCamelCase
//! field names, trace and span ids as hex rather than protobuf's base64,
//! 64-bit integers as decimal strings, enums as numbers). An OpenTelemetry
//! Collector's `otlpjsonfile` receiver reads such lines from a file; the
//! same text is the body of an OTLP/HTTP request (`POST /v1/traces`,
//! `Content-Type: application/json`), which Jaeger and Tempo accept.
//!
//! The messages are the `opentelemetry-proto` crate's, generated from the
//! protocol's own definitions, with its serde encoding of OTLP/JSON; this
//! module only maps unixagent's spans onto them.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span as OtlpSpan, Status as OtlpStatus};

use super::span::{Attributes, Kind, Span, Status, Value};

/// The instrumentation scope every span comes from.
const SCOPE: &str = "unixagent";
/// Spans per request: the Collector's file receiver reads lines of up to
/// 1 MiB by default, and a span is rarely over 1 KiB.
pub const SPANS_PER_REQUEST: usize = 512;

fn any(v: &Value) -> AnyValue {
    let value = match v {
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::Int(n) => any_value::Value::IntValue(*n),
        Value::Double(d) => any_value::Value::DoubleValue(*d),
        Value::Str(s) => any_value::Value::StringValue(s.clone()),
        Value::List(l) => any_value::Value::ArrayValue(ArrayValue {
            values: l.iter().map(|s| AnyValue { value: Some(any_value::Value::StringValue(s.clone())) }).collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

fn key_value(key: &str, value: AnyValue) -> KeyValue {
    KeyValue { key: key.to_string(), value: Some(value), ..Default::default() }
}

fn key_values(a: &Attributes) -> Vec<KeyValue> {
    a.iter().map(|(k, v)| key_value(k, any(v))).collect()
}

/// Hex ids as bytes. The tracer only makes well-formed lower-case ids; a
/// malformed one (a hand-edited sink) becomes empty, which OTLP reads as
/// "no id" rather than failing the whole request.
fn id_bytes(hex: &str) -> Vec<u8> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return Vec::new();
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
        .collect::<Result<_, _>>()
        .unwrap_or_default()
}

fn otlp_span(s: &Span) -> OtlpSpan {
    let mut attributes = key_values(&s.attributes);
    if let Some(summary) = &s.summary
        && let Ok(json) = serde_json::to_string(summary)
    {
        attributes.push(key_value("unixagent.summary", AnyValue { value: Some(any_value::Value::StringValue(json)) }));
    }
    OtlpSpan {
        trace_id: id_bytes(&s.trace_id),
        span_id: id_bytes(&s.span_id),
        parent_span_id: s.parent_span_id.as_deref().map(id_bytes).unwrap_or_default(),
        name: s.name.clone(),
        kind: match s.kind {
            Kind::Internal => SpanKind::Internal,
            Kind::Client => SpanKind::Client,
        } as i32,
        start_time_unix_nano: s.start_ns,
        end_time_unix_nano: s.end_ns,
        attributes,
        status: Some(OtlpStatus {
            message: s.status_message.clone().unwrap_or_default(),
            code: match s.status {
                Status::Unset => StatusCode::Unset,
                Status::Ok => StatusCode::Ok,
                Status::Error => StatusCode::Error,
            } as i32,
        }),
        ..Default::default()
    }
}

/// One `ExportTraceServiceRequest` as compact JSON (no newline): the
/// spans grouped by the process that recorded them.
pub fn request(spans: &[Span]) -> String {
    // Equal resources share one group, in the order their first span came
    // in. A request holds a few processes' spans, so a look along the
    // groups so far costs less than a key made for every span.
    let mut groups: Vec<(&Attributes, Vec<OtlpSpan>)> = Vec::new();
    for s in spans {
        match groups.iter_mut().find(|(r, _)| **r == s.resource) {
            Some((_, group)) => group.push(otlp_span(s)),
            None => groups.push((&s.resource, vec![otlp_span(s)])),
        }
    }
    let scope =
        InstrumentationScope { name: SCOPE.into(), version: env!("CARGO_PKG_VERSION").into(), ..Default::default() };
    let resource_spans = groups
        .into_iter()
        .map(|(resource, spans)| ResourceSpans {
            resource: Some(Resource { attributes: key_values(resource), ..Default::default() }),
            scope_spans: vec![ScopeSpans { scope: Some(scope.clone()), spans, ..Default::default() }],
            ..Default::default()
        })
        .collect();
    serde_json::to_string(&ExportTraceServiceRequest { resource_spans }).unwrap_or_default()
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
        assert!(spans[2].get("parentSpanId").is_none_or(|p| p == ""), "a root span has none: {}", spans[2]);
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
