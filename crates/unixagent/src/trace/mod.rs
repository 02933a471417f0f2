//! Traces as the binary uses them: `ua-trace`'s context, spans, tracer,
//! sink and OTLP, and `[telemetry]` with `unixagent traces export`.
//!
//! What a session does with them (see DESIGN.md, "Traces"): it gives its
//! shell [`TraceContext::shell_env`], types each agent command as
//! [`typed_command`] makes it (so the command runs under its own
//! `execute_tool` span), and records its spans as its journal lines are
//! written ([`Live`]): appended to the sink as each finishes, and sent to
//! the collector, if one is configured, when it ends.

pub mod export;

use std::path::Path;

use ua_protocol::journal::JournalEntry;
pub use ua_trace::{TraceContext, context, sink, span, tracer};

/// The line to type for an agent command: the command, carrying its trace
/// context for the shell it is typed into when it starts a unixagent (or,
/// with `[telemetry] command_context = "all"`, always; `"off"`: never).
/// The wrapping is what the person's own hooks, history and terminal title
/// see of the command, so by default only delegation carries it.
pub fn typed_command(
    cfg: &export::TelemetryConfig,
    shell: &Path,
    session: &str,
    turn: u32,
    p: &crate::agent::turn::Proposal,
) -> String {
    let wanted = match cfg.command_context {
        export::CommandContext::All => true,
        export::CommandContext::Children => starts_unixagent(&p.command),
        export::CommandContext::Off => false,
    };
    if !wanted {
        return p.command.clone();
    }
    let env = TraceContext::inherited().command_env_for(session, turn, &p.id);
    ua_term::command_env::with_env(ua_term::integration::ShellKind::detect(shell), &p.command, &env)
}

/// Whether a word of `command` names the unixagent program: a cheap test
/// on the text, which errs towards carrying the context.
pub fn starts_unixagent(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || ";|&()`'\"$<>{}".contains(c))
        .any(|w| w.rsplit('/').next() == Some("unixagent"))
}

/// A session's spans as it goes: each journal line it writes is fed to a
/// [`ua_trace::Tracer`] (through [`ua_trace::journal::Feed`], the same
/// reading of the journal that `traces` tools use), and the spans each line
/// finishes go to the sink at once, so a session that crashes or runs for
/// days keeps the spans it finished. [`Live::finish`], at its end, closes
/// what is open and sends the spans to the collector if one is configured.
#[derive(Debug)]
pub struct Live {
    tracer: ua_trace::Tracer,
    feed: ua_trace::journal::Feed,
    recorder: ua_trace::collector::Recorder,
}

impl Live {
    /// `None` when spans go nowhere; a sink that cannot be named is said
    /// once, on stderr. `spool`: the spooled session's spans file, which
    /// replaces the sink (its parent appends them to the sink it has).
    pub fn start(session: &str, cfg: &export::TelemetryConfig, spool: Option<std::path::PathBuf>) -> Option<Self> {
        let sink = match cfg.sink() {
            Ok(Some(s)) => Some(spool.map_or(s, ua_trace::sink::Sink::at)),
            Ok(None) if cfg.otlp_endpoint.is_none() => return None,
            Ok(None) => None,
            Err(e) => {
                eprintln!("unixagent: spans are not recorded: {e}");
                return None;
            }
        };
        Some(Self {
            tracer: ua_trace::Tracer::new(TraceContext::inherited(), session, ua_trace::span::resource(session)),
            feed: ua_trace::journal::Feed::default(),
            recorder: ua_trace::collector::Recorder::new(sink, cfg.otlp_endpoint.clone()),
        })
    }

    /// One journal line, written at `ts`; the line to show if the spans it
    /// finished could not be written (once).
    pub fn line(&mut self, ts: u64, entry: &JournalEntry) -> Option<String> {
        let spans = self.feed.line(&mut self.tracer, ts, entry);
        self.recorder.record(spans)
    }

    /// At the session's end, after the terminal is given back: closes what
    /// is open and sends the spans to the collector. Prints at most one
    /// line per failure.
    pub fn finish(mut self) {
        let spans = self.feed.finish(&mut self.tracer);
        for line in self.recorder.record(spans).into_iter().chain(self.recorder.finish()) {
            eprintln!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegation_is_recognised_wherever_it_stands() {
        for c in [
            "unixagent -c '# x'",
            "/usr/local/bin/unixagent --json -c '# x'",
            "a=$(unixagent -c '# x')",
            "cd src && unixagent -c '# x' & wait",
            "(unixagent -c '# y')",
        ] {
            assert!(starts_unixagent(c), "{c}");
        }
        for c in ["ls unixagent-notes", "echo unixagents", "cat ~/unixagent.log", "grep unixagentx f"] {
            assert!(!starts_unixagent(c), "{c}");
        }
    }

    #[test]
    fn only_delegation_carries_the_context_unless_configured() {
        let p = |c: &str| crate::agent::turn::Proposal {
            id: "toolu_1".into(),
            command: c.into(),
            mode: ua_protocol::tool::OutputMode::default(),
        };
        let mut cfg = export::TelemetryConfig::default();
        let bash = Path::new("/bin/bash");
        assert_eq!(typed_command(&cfg, bash, "s", 1, &p("ls -l")), "ls -l");
        let typed = typed_command(&cfg, bash, "s", 1, &p("unixagent -c '# x'"));
        assert!(
            typed.starts_with("TRACEPARENT=00-") && typed.ends_with(r#" eval 'unixagent -c '\''# x'\'''"#),
            "{typed}"
        );
        cfg.command_context = export::CommandContext::All;
        assert!(typed_command(&cfg, bash, "s", 1, &p("ls -l")).contains("UNIXAGENT_COMMAND=toolu_1 eval 'ls -l'"));
        cfg.command_context = export::CommandContext::Off;
        assert_eq!(typed_command(&cfg, bash, "s", 1, &p("unixagent -c '# x'")), "unixagent -c '# x'");
    }
}
