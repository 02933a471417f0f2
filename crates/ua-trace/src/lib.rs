//! Traces for unixagent: one trace across a whole tree of agent processes,
//! spans that follow the OpenTelemetry GenAI semantic conventions, and
//! the file and the wire format they go out in.
//!
//! | module | what it owns | I/O |
//! |---|---|---|
//! | [`context`] | the inherited context: W3C `TRACEPARENT`, `UA_TRACE_ID`, `UA_SPAN_ID`, `UA_PARENT_SPAN_ID`, `UA_TRACE_DEPTH`, `UA_TRACE_SINK` | reads the environment once |
//! | [`span`] | a finished span as `traces.jsonl` holds it | no |
//! | [`tracer`] | a session's spans: `invoke_agent`, `chat`, `execute_tool` | no |
//! | [`sink`] | appending spans, one `write(2)` a line; rotation | yes |
//! | [`otlp`] | spans as OTLP/JSON `ExportTraceServiceRequest`s | no |
//! | [`collector`] | what a session does with finished spans: the sink, and OTLP/HTTP at its end | yes |
//!
//! Nothing leaves the machine unless a collector is configured. The
//! tracer reads no clock (it is told the time) and knows nothing of
//! terminals or sessions beyond their ids.
//!
//! ```
//! use ua_trace::context::TraceContext;
//! use ua_trace::tracer::{Command, Tracer};
//!
//! let ctx = TraceContext::from_lookup(|_| None); // a new trace
//! let mut t = Tracer::new(ctx, "session-1", ua_trace::span::resource("session-1"));
//! t.instruction_started(1_000, 1, "check the logs");
//! let cmd = t.command_started(2_000, &Command { id: "toolu_1", command: "tail app.log", decision: "allow", ..Default::default() });
//! // The command runs with cmd.env (its TRACEPARENT names cmd.span) …
//! let mut spans: Vec<_> = t.command_ended(3_000, "toolu_1", Some(0), "ok").into_iter().collect();
//! spans.extend(t.instruction_ended(4_000, "ok"));
//! assert_eq!(spans[0].parent_span_id.as_deref(), Some(spans[1].span_id.as_str()));
//! let otlp = ua_trace::otlp::request(&spans); // one ExportTraceServiceRequest
//! assert!(otlp.starts_with("{\"resourceSpans\""));
//! ```

pub mod collector;
pub mod context;
pub mod journal;
pub mod otlp;
pub mod sink;
pub mod span;
pub mod tracer;

pub use context::TraceContext;
pub use sink::Sink;
pub use span::Span;
pub use tracer::Tracer;
