//! The deny list: commands that never run, whatever any policy, hook,
//! grant, judge or human says.
//!
//! Rules match the parsed form ([`crate::parse::Parsed`]), never the text:
//! by the time a rule looks, quotes and escapes are removed, `${IFS}` has
//! split words, `$HOME` is `~`, paths are normalised and wrappers (`sudo`,
//! `env`, `sh -c`, `eval`, `xargs`, `find -exec`, …) are peeled. Rules match
//! a program by its basename wherever it lives: `/tmp/x/rm -rf /` is as
//! denied as `rm -rf /` (the classifier is the stricter of the two about
//! paths in the other direction: `./cat` is not read-only).
//!
//! Each rule has a stable id (`rm-root`, `download-pipe-shell`, …) that
//! audit records, `policy explain` and tests name. [`RULES`] lists them.

mod rules;
mod scope;
mod targets;

pub use rules::RULES;

/// True for the interpreters that read a program from stdin or a file
/// (python, perl, ruby, node…), by program name.
pub(crate) fn is_interpreter(program: &str) -> bool {
    scope::INTERPRETERS.contains(&program) || program.starts_with("python3.")
}

use crate::classify::PartRisk;
use crate::parse::Parsed;
pub(crate) use scope::Scope;
use serde::Serialize;

/// A deny-list rule that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenyMatch {
    /// Stable id of the rule, such as `rm-root`.
    pub rule: &'static str,
    /// What the rule stops and the part that matched.
    pub reason: String,
}

/// One rule: an id, what it stops, and a test over one part in the context
/// of the whole command.
#[derive(Clone, Copy)]
pub struct Rule {
    /// Stable id.
    pub id: &'static str,
    /// What it stops, as a short phrase.
    pub what: &'static str,
    pub(crate) test: fn(&Scope<'_>, usize) -> bool,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("id", &self.id).finish()
    }
}

/// Returns the first rule (in [`RULES`] order) that matches any part.
/// `risks` is the classifier's verdict per part, in the same order.
pub fn check(parsed: &Parsed, risks: &[PartRisk]) -> Option<DenyMatch> {
    let scope = Scope::new(parsed, risks);
    for rule in RULES {
        for i in 0..parsed.parts.len() {
            if (rule.test)(&scope, i) {
                let part = &parsed.parts[i];
                let line = part.line();
                let shown = if line.is_empty() { parsed.source.clone() } else { line };
                // `rm -rf /*` read from `rm -rf "$D"/*`: say when.
                let when =
                    part.wrappers.iter().find(|w| w.starts_with("if $")).map_or(String::new(), |w| format!(" {w}"));
                return Some(DenyMatch { rule: rule.id, reason: format!("{} (`{shown}`{when})", rule.what) });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
