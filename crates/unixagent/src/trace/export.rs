//! `[telemetry]` in config.toml and `unixagent traces export`, which
//! writes the recorded spans as OTLP/JSON.

use std::io::Write as _;
use std::path::Path;

use super::sink::{self, Sink};
use super::span::Span;

/// `[telemetry]` in config.toml.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct TelemetryConfig {
    /// Record spans at all (locally, in `traces.jsonl`).
    pub enabled: bool,
    /// Another file for the spans: `file:///abs/path` (or an absolute path).
    pub sink: Option<String>,
    /// An OTLP/HTTP collector (`http://host:4318`): each session sends its
    /// spans there when it ends.
    pub otlp_endpoint: Option<String>,
    /// Which agent commands are typed carrying their trace context
    /// (`TRACEPARENT` …): those that start a unixagent, all, or none.
    pub command_context: CommandContext,
}

/// `[telemetry] command_context`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandContext {
    /// Commands that start a child agent (the default): the person's own
    /// hooks see the wrapping only there.
    #[default]
    Children,
    /// Every agent command, for traced programs of one's own.
    All,
    Off,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self { enabled: true, sink: None, otlp_endpoint: None, command_context: CommandContext::Children }
    }
}

impl TelemetryConfig {
    /// This process's sink: the inherited `UA_TRACE_SINK`, else the
    /// configured one, else the data directory's.
    pub fn sink(&self) -> Result<Option<Sink>, String> {
        let env = std::env::var(super::context::SINK_ENV).ok();
        let data = ua_store::session::data_dir().ok();
        Sink::resolve(&sink::Where {
            env: env.as_deref(),
            configured: self.sink.as_deref(),
            enabled: self.enabled,
            data_dir: data.as_deref(),
        })
    }
}

/// `unixagent traces export [--trace ID] [--since AGE]`: OTLP/JSON lines
/// on stdout, each an `ExportTraceServiceRequest`.
pub fn export(cfg: &TelemetryConfig, trace: Option<&str>, since: Option<&str>) -> Result<i32, String> {
    let since_ns = match since {
        Some(age) => {
            let age = ua_store::index::parse_age(age)?;
            super::tracer::now_ns().saturating_sub(u64::try_from(age.as_nanos()).unwrap_or(u64::MAX))
        }
        None => 0,
    };
    let trace = trace.map(str::trim).filter(|t| !t.is_empty());
    if let Some(t) = trace
        && super::context::TraceId::parse(t).is_none()
    {
        return Err(format!("{t:?} is not a trace id (32 hex digits, as `unixagent --trace` prints)"));
    }
    let Some(sink) = cfg.sink()? else {
        return Err("tracing is off ([telemetry] enabled = false in config.toml), so there is nothing to export".into());
    };
    let dir = sink.path().parent().unwrap_or(Path::new("/"));
    let file = sink.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let keep = |s: &Span| s.end_ns >= since_ns && trace.is_none_or(|t| s.trace_id == t);
    let (mut spans, skipped) =
        if file == sink::FILE { sink::read_all(dir, keep) } else { sink::read_file(sink.path(), keep) };
    if skipped > 0 {
        eprintln!(
            "unixagent: {skipped} line{} of the trace files are not spans and were skipped",
            if skipped == 1 { "" } else { "s" }
        );
    }
    if spans.is_empty() {
        eprintln!("unixagent: no spans{}", if trace.is_some() { " in that trace" } else { "" });
        return Ok(0);
    }
    spans.sort_by_key(|s| s.start_ns);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in ua_trace::otlp::lines(&spans) {
        out.write_all(line.as_bytes()).map_err(|e| format!("writing the export failed: {e}"))?;
    }
    out.flush().map_err(|e| format!("writing the export failed: {e}"))?;
    Ok(0)
}
