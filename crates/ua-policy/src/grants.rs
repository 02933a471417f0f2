//! Session grants: the human's earlier "allow for this session" answers.
//!
//! Three shapes, as people expect them (design 004, permission UX):
//!
//! - [`Grant::Exact`]: this exact command line;
//! - [`Grant::Pattern`]: this program with arguments matching a pattern
//!   (`*` matches any text, `?` one character): `grep *`, `find . -name *`;
//! - [`Grant::Program`]: this program, whatever its arguments.
//!
//! A program grant covers a command only when it covers every part of it:
//! `ls` granted does not cover `ls; rm -rf x`, nor `sudo ls` (a wrapper
//! changes what runs), nor a program named by another path (`./ls`).
//! Grants live in memory for one session; they are consulted only when the
//! cascade would otherwise ask, so they never override a denial.

use crate::classify::Analysis;
use crate::parse::PartKind;
use serde::{Deserialize, Serialize};
use ua_protocol::text::wildcard;

/// One remembered answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum Grant {
    /// This exact command line (surrounding whitespace ignored).
    Exact {
        /// The command.
        command: String,
    },
    /// This program with arguments matching `args`.
    Pattern {
        /// The program as written (`git`, `/usr/bin/make`).
        program: String,
        /// The arguments joined by single spaces must match this pattern.
        args: String,
    },
    /// This program, whatever its arguments.
    Program {
        /// The program as written.
        program: String,
    },
}

impl Grant {
    /// This exact command line.
    pub fn exact(command: impl Into<String>) -> Grant {
        Grant::Exact { command: command.into().trim().to_string() }
    }

    /// This program with arguments matching `args`.
    pub fn pattern(program: impl Into<String>, args: impl Into<String>) -> Grant {
        Grant::Pattern { program: program.into(), args: args.into() }
    }

    /// This program.
    pub fn program(program: impl Into<String>) -> Grant {
        Grant::Program { program: program.into() }
    }

    /// For people: `exactly "git push"`, `git push *`, `any git command`.
    pub fn describe(&self) -> String {
        match self {
            Grant::Exact { command } => format!("exactly {command:?}"),
            Grant::Pattern { program, args } => format!("{program} {args}"),
            Grant::Program { program } => format!("any {program} command"),
        }
    }
}

/// The grants of one session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Grants {
    list: Vec<Grant>,
}

impl Grants {
    /// No grants.
    pub fn new() -> Grants {
        Grants::default()
    }

    /// Remembers a grant (once).
    pub fn add(&mut self, g: Grant) {
        if !self.list.contains(&g) {
            self.list.push(g);
        }
    }

    /// Forgets a grant; true when it was there.
    pub fn remove(&mut self, g: &Grant) -> bool {
        let before = self.list.len();
        self.list.retain(|x| x != g);
        before != self.list.len()
    }

    /// Every grant, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Grant> {
        self.list.iter()
    }

    /// The grant that covers the whole command, if any: an exact grant for
    /// its text, or program grants that together cover every part.
    pub fn covers(&self, analysis: &Analysis) -> Option<&Grant> {
        let source = analysis.parsed.source.trim();
        if let Some(g) = self.list.iter().find(|g| matches!(g, Grant::Exact { command } if command == source)) {
            return Some(g);
        }
        let parts = &analysis.parsed.parts;
        if parts.is_empty() {
            return None;
        }
        let mut first = None;
        for part in parts {
            // Only plain programs, run as written: no wrapper, no privilege,
            // nothing that changes the live shell or is unknown until run.
            if part.kind != PartKind::Exec
                || !part.wrappers.is_empty()
                || part.privileged
                || part.argv.iter().any(|a| a.dynamic)
            {
                return None;
            }
            let args = part.args().iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ");
            let g = self.list.iter().find(|g| match g {
                Grant::Exact { .. } => false,
                Grant::Program { program } => program == part.program(),
                Grant::Pattern { program, args: pat } => program == part.program() && wildcard(pat, &args),
            })?;
            first.get_or_insert(g);
        }
        first
    }
}
