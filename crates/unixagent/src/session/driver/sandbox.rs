//! What a session whose shell runs in the kernel sandbox knows of it: the
//! rules and the proxy's decisions, to say when a command ran into them
//! (see `ua_sandbox::explain`).

use std::path::Path;

use ua_sandbox::explain::{MAY_BE_THE_SANDBOX, explain};
use ua_sandbox::proxy::Decision;

/// The sandbox's rules and the decisions its proxy reports.
#[derive(Debug)]
pub(in crate::session) struct SandboxWatch {
    rules: ua_sandbox::Rules,
    decisions: tokio::sync::mpsc::UnboundedReceiver<Decision>,
}

/// What the sandbox may have refused a command.
#[derive(Debug, Default)]
pub(in crate::session) struct Refusals {
    /// One line each, for the model (`[sandbox: …]`).
    pub lines: Vec<String>,
    /// The proxy's decisions while the command ran, for the audit log.
    pub decisions: Vec<Decision>,
}

impl SandboxWatch {
    pub(in crate::session) fn new(
        rules: ua_sandbox::Rules,
        decisions: tokio::sync::mpsc::UnboundedReceiver<Decision>,
    ) -> Self {
        Self { rules, decisions }
    }

    /// The proxy's decisions since the last call.
    pub(in crate::session) fn decisions(&mut self) -> Vec<Decision> {
        let mut out = Vec::new();
        while let Ok(d) = self.decisions.try_recv() {
            out.push(d);
        }
        out
    }

    /// Reads a finished command's output (run in `cwd`) against the rules
    /// and the proxy's decisions while it ran.
    pub(in crate::session) fn explain(&mut self, cwd: &str, output: &str, failed: bool) -> Refusals {
        let decisions = self.decisions();
        let lines = explain(&self.rules, Path::new(cwd), output, &decisions, failed);
        Refusals { lines, decisions }
    }
}

impl Refusals {
    /// The refusals the person is shown: those that name a rule.
    pub(in crate::session) fn notice(&self) -> Option<String> {
        let named: Vec<String> =
            self.lines.iter().filter(|l| *l != MAY_BE_THE_SANDBOX).map(|l| format!("sandbox: {l}")).collect();
        (!named.is_empty()).then(|| named.join("\r\n"))
    }
}
