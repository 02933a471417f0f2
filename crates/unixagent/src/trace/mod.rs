//! Traces as the binary uses them: `ua-trace`'s context, spans, tracer,
//! sink and OTLP, and `[telemetry]` with `unixagent traces export`.
//!
//! What a session does with them (see DESIGN.md, "Traces"): it builds a
//! `Tracer` from [`TraceContext::inherited`], gives its shell
//! [`TraceContext::shell_env`], tells the tracer what happens and hands the
//! spans it returns to a `ua_trace::collector::Recorder` (which appends
//! them to the sink), types each agent command as
//! `ua_term::command_env::with_env` makes it, and at its end calls
//! `Recorder::finish`.

pub mod export;

pub use ua_trace::{TraceContext, context, sink, span, tracer};
