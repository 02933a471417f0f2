//! What a session does with its children's spools (`ua_store::spool`):
//! a child inside this session's sandbox cannot write the data directory,
//! so it keeps its session directory and spans in the report directory
//! this session watches, and this session imports them once the child is
//! gone: into the sessions and the index, and its spans into this
//! session's trace sink. A session that is itself spooled imports
//! nothing: its report directory is inside its own spool, so what its
//! children leave there travels with it to the root.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ua_protocol::agent::AgentEvent;
use ua_store::index::{Record, cap_instruction};
use ua_trace::sink::Sink;
use ua_trace::span::Span;

/// Where an importing session puts what it imports.
#[derive(Debug)]
pub(super) struct Importer {
    /// unixagent's data directory.
    data: PathBuf,
    /// This session: every spool in its report directory must name it
    /// as its parent.
    session: String,
    sink: Option<Sink>,
    /// Children indexed as they started, not imported yet.
    indexed: HashSet<String>,
}

impl Importer {
    pub(super) fn new(data: PathBuf, session: String, sink: Option<Sink>) -> Self {
        Self { data, session, sink, indexed: HashSet::new() }
    }

    /// A child started: if it spools its session here, it goes into the
    /// index now, under this session, so `sessions list` shows it while it
    /// runs (its import completes the record). A notice if the index could
    /// not be written.
    pub(super) fn started(&mut self, reports: &Path, child: super::children::Begun) -> Option<AgentEvent> {
        let start = Record::Start {
            id: child.session.clone(),
            ts: ua_store::session::now_ms(),
            cwd: child.cwd,
            shell: child.shell,
            pid: child.pid,
            parent: Some(self.session.clone()),
            first_instruction: Some(cap_instruction(&child.instruction)).filter(|i| !i.is_empty()),
        };
        match ua_store::spool::index_running(reports, &self.data, &start) {
            Ok(indexed) => {
                if indexed {
                    self.indexed.insert(child.session);
                }
                None
            }
            Err(e) => Some(AgentEvent::Notice { text: format!("child session {}: {e}", child.session) }),
        }
    }

    /// Imports the spool `name` in `reports`, if there is one (a child
    /// outside the sandbox keeps its session in the data directory and
    /// leaves none). Returns a notice for each spool refused, and for
    /// spans or index records that could not be written.
    pub(super) fn import(&mut self, reports: &Path, name: &str) -> Vec<AgentEvent> {
        if !ua_store::spool::exists(reports, name) {
            return Vec::new();
        }
        let mut said = Vec::new();
        for result in ua_store::spool::import(reports, name, &self.session, &self.data) {
            match result {
                Ok(imported) => {
                    self.indexed.remove(&imported.id);
                    if let Some(e) = imported.index_error {
                        said.push(format!("child session {}: {e}", imported.id));
                    }
                    if let Err(e) = self.spans(&imported.spans) {
                        said.push(format!(
                            "the spans of child session {} could not be written to the trace sink: {e}",
                            imported.id
                        ));
                    }
                }
                Err(refused) => {
                    // Listed as it ran, and now not to be imported.
                    if self.indexed.remove(&refused.name)
                        && let Err(e) = ua_store::spool::unindex(&self.data, &refused.name)
                    {
                        said.push(format!("child session {}: {e}", refused.name));
                    }
                    said.push(refused.to_string());
                }
            }
        }
        said.into_iter().map(|text| AgentEvent::Notice { text }).collect()
    }

    /// Every spool left in `reports`: at the session's end, for children
    /// whose end was not heard.
    pub(super) fn import_all(&mut self, reports: &Path) -> Vec<AgentEvent> {
        ua_store::spool::spools_in(reports).iter().flat_map(|name| self.import(reports, name)).collect()
    }

    /// The spooled spans, appended to this session's sink. A line that is
    /// not a span is left out, as `traces export` would skip it.
    fn spans(&self, bytes: &[u8]) -> std::io::Result<()> {
        let Some(sink) = &self.sink else { return Ok(()) };
        let spans: Vec<Span> =
            bytes.split(|b| *b == b'\n').filter_map(|line| serde_json::from_slice::<Span>(line).ok()).collect();
        sink.append(&spans)
    }
}
