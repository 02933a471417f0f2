//! Child agents: a unixagent started with `-c '# …'`, `--json` or a pipe
//! from inside a session's shell is that session's child.
//!
//! Everything here happens before the child's own session starts:
//!
//! | piece | file |
//! |---|---|
//! | depth and fan-out: admitted or refused, and the slot held meanwhile | `admission.rs` |
//! | a child in one line (`▸ child 3f2a "…" · done · …`), from NDJSON or a journal | `fold.rs` |
//! | a child's own output when nobody watches: that line and its answer | `quiet.rs` |
//! | what a child tells the session that started it, refused or not | `report.rs` |
//!
//! What the parent's session does with its children (the fold view, the
//! `child` events, the `+N` in the footer) plugs in there; the pure
//! pieces it needs are [`fold::Fold`] and [`admission::Refusal`].

pub mod admission;
pub mod fold;
pub mod quiet;
pub mod report;

use std::os::fd::AsFd as _;

use admission::{Limits, Lineage, Refusal, Slot};
use ua_protocol::agent::{AgentEvent, RunStatus, TokenUsage};

use crate::trace::TraceContext;

/// This process's place in the tree, fixed for its life, and the slot it
/// holds while it runs (for a child).
#[derive(Debug)]
pub struct Admitted {
    pub lineage: Lineage,
    _slot: Option<Slot>,
}

/// Works out where this process stands (and fixes the trace context to
/// that depth); for agent work (`agent_run`), reports to the parent
/// session (before the limits are checked, so that a refusal reaches it
/// too), checks the limits and takes a slot. The process must keep the
/// returned value until it exits.
/// `report`: the instruction and whether the child is in the foreground of
/// its parent's terminal.
pub fn admit(agent_run: bool, limits: Limits, report: (&str, bool)) -> Result<Admitted, Refusal> {
    let env = TraceContext::inherited();
    let session = std::env::var(crate::shell::SESSION_ENV).ok().filter(|s| !s.is_empty());
    let lineage = Lineage::find(env.depth, session.as_deref(), &admission::ancestors(), &admission::own_comm());
    TraceContext::fix(TraceContext { depth: lineage.depth, ..env });
    if agent_run && lineage.child {
        report::open(report.0, report.1);
    }
    let slot = if agent_run { admission::admit(&lineage, limits, &std::env::temp_dir())? } else { None };
    Ok(Admitted { lineage, _slot: slot })
}

/// A refused child: one line on stderr (the parent's model reads it) and,
/// for `--json`, an `error` and a `result` event, which the parent's
/// report gets in any case. Returns the exit status.
pub fn refuse(r: &Refusal, json: bool) -> i32 {
    eprintln!("{}", r.line());
    let events = [
        AgentEvent::Error { message: r.line(), kind: r.kind().into() },
        AgentEvent::Result {
            status: RunStatus::Error,
            exit_code: r.exit_code(),
            usage: TokenUsage::default(),
            commands: 0,
        },
    ];
    for e in events {
        report::event(&e);
        if json {
            let _ = crate::terminal::out(e.to_line().as_bytes());
        }
    }
    r.exit_code()
}

/// True when stdin is a terminal but this process runs in the background
/// there (`cmd &`): touching the terminal would stop it (SIGTTOU,
/// SIGTTIN), and nobody is looking at it to answer a question.
pub fn in_background() -> bool {
    let stdin = std::io::stdin();
    match nix::unistd::tcgetpgrp(stdin.as_fd()) {
        Ok(fg) => fg != nix::unistd::getpgrp(),
        Err(_) => false,
    }
}
