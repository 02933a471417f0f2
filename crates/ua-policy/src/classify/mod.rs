//! The risk classifier: a pure function from shell text to a [`Risk`] per
//! part and for the whole command.
//!
//! Each part the walker found gets the rule of the program that actually
//! runs ([`programs::rule`]; a program named by a path outside the system
//! directories is unknown, hence Write), then floors that do not depend on
//! the program: redirections that write, assignments that steer later
//! programs, privilege from a wrapper, background jobs that outlive the
//! command, dynamic and unparseable text. The command's risk is the maximum
//! over its parts, or Denied when a [`crate::deny`] rule matched.
//!
//! ```
//! use ua_policy::classify::analyze;
//! use ua_policy::risk::Risk;
//!
//! assert_eq!(analyze("git status").risk, Risk::ReadOnly);
//! assert_eq!(analyze("ls > listing.txt").risk, Risk::Write);
//! assert_eq!(analyze("r''m -rf \"/\"").risk, Risk::Denied);
//! ```

pub mod args;
pub mod code;
mod context;
pub mod effects;
mod git;
pub mod programs;
mod writes;

pub use effects::Effects;

use crate::deny::{self, DenyMatch};
use crate::parse::{self, Parsed, Part, PartKind};
use crate::paths::system_program;
use crate::risk::Risk;
use serde::Serialize;

/// The classifier's verdict on one command line.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// The parse: every part the command would run.
    pub parsed: Parsed,
    /// The maximum over [`Analysis::parts`], or Denied if a deny rule matched.
    pub risk: Risk,
    /// One entry per parsed part, in the same order.
    pub parts: Vec<PartRisk>,
    /// The first deny-list rule that matched.
    pub denied: Option<DenyMatch>,
}

/// The verdict on one part.
#[derive(Debug, Clone, Serialize)]
pub struct PartRisk {
    /// The part's risk.
    pub risk: Risk,
    /// Why, in a few words (the rule or floor that set the risk).
    pub reason: String,
    /// Paths read and written, hosts contacted.
    pub effects: Effects,
    /// The program as run, path kept (`./cat`, `/usr/bin/sed`); empty for
    /// parts that run no program.
    pub program: String,
}

/// Parses and classifies a command line. Never fails: what cannot be parsed
/// is at least Write.
pub fn analyze(command: &str) -> Analysis {
    let parsed = parse::parse(command);
    let mut parts: Vec<PartRisk> = parsed.parts.iter().map(classify_part).collect();
    context::raise(&parsed, &mut parts);
    let denied = deny::check(&parsed, &parts);
    let risk =
        if denied.is_some() { Risk::Denied } else { parts.iter().map(|p| p.risk).max().unwrap_or(Risk::ReadOnly) };
    Analysis { parsed, risk, parts, denied }
}

/// Variables that make later programs run other code or read other
/// configuration. Setting one (as a prefix, through `env`, or in the live
/// shell) is at least Write.
pub const STEERING_VARS: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT",
    "RPROMPT",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "BAT_PAGER",
    "DELTA_PAGER",
    "LESS",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "LESSEDIT",
    "MANOPT",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_TEMPLATE_DIR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "CDPATH",
    "FPATH",
    "ZDOTDIR",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PYTHONWARNINGS",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "HISTFILE",
    "HISTSIZE",
    "HISTFILESIZE",
    "HISTCONTROL",
    "HISTIGNORE",
    "BROWSER",
    "GCONV_PATH",
    "RUSTC_WRAPPER",
    "RUSTC",
    "CC",
    "CXX",
    "MAKEFLAGS",
    "TERMINFO",
    "INPUTRC",
    "TMOUT",
];

fn steers(name: &str) -> bool {
    STEERING_VARS.contains(&name) || name.starts_with("GIT_CONFIG") || name.starts_with("BASH_FUNC_")
}

fn is_pager_var(name: &str) -> bool {
    matches!(name, "PAGER" | "GIT_PAGER" | "MANPAGER" | "SYSTEMD_PAGER" | "BAT_PAGER")
}

fn pager_off(value: &str) -> bool {
    matches!(value, "" | "cat" | "/bin/cat" | "/usr/bin/cat")
}

/// True when the part's own assignments turn paging off through one of
/// `vars` (`GIT_PAGER=cat git log`, `SYSTEMD_PAGER= systemctl status`).
pub(crate) fn pager_disabled(part: &Part, vars: &[&str]) -> bool {
    // The first variable the program consults that is set decides.
    vars.iter()
        .find_map(|v| part.assignments.iter().rev().find(|(n, _)| n == v))
        .is_some_and(|(_, val)| !val.dynamic && pager_off(&val.text))
}

/// A program whose name is only known at run time (`$cmd -rf x`, `"$@"`,
/// `sh -c "$X"`) could be any program, `rm` included: it is rated as the
/// worst its words could do, which is at least Destructive, and Network
/// when a word names another host. Names the walker can work out (`$(echo
/// rm)`, `a=r; b=m; $a$b`) never get here.
fn dynamic(part: &Part) -> (Risk, String) {
    let names_host = part.args().iter().any(|a| {
        let t = a.text.as_str();
        t.contains("://") || !t.starts_with('-') && t.contains('@') && t.contains(':')
    });
    if names_host {
        (Risk::Network, "the program is only known at run time, and its arguments name another host".into())
    } else {
        (Risk::Destructive, "the program is only known at run time: it could be any program, rm included".into())
    }
}

/// Classifies one part on its own (the deny list looks across parts).
pub fn classify_part(part: &Part) -> PartRisk {
    let fx = effects::effects(part);
    let (mut risk, mut reason): (Risk, String) = match &part.kind {
        PartKind::Exec => match system_program(part.program()) {
            Some(name) => {
                let v = programs::rule(name, part);
                (v.risk, v.reason.to_string())
            }
            None => (Risk::Write, "a program named by path is unknown: it may do anything".into()),
        },
        PartKind::FunctionDef(_) => (Risk::Write, "defines a function in the live shell".into()),
        PartKind::Assignment => (Risk::Write, "sets a variable in the live shell".into()),
        PartKind::Redirection => (Risk::ReadOnly, "redirection only".into()),
        PartKind::Dynamic => dynamic(part),
        PartKind::Unparseable(e) => (Risk::Write, format!("cannot be parsed ({e})")),
    };
    let mut raise = |to: Risk, why: &str| {
        if to > risk {
            risk = to;
            reason = why.to_string();
        }
    };
    if part.wrappers.iter().any(|w| w == "exec") {
        raise(Risk::Write, "exec replaces the live shell");
    }
    if let Some((name, _)) =
        part.assignments.iter().find(|(n, v)| steers(n) && !(is_pager_var(n) && pager_off(&v.text)))
    {
        raise(Risk::Write, &format!("sets {name}, which steers the programs it runs"));
    }
    for r in &part.redirects {
        let t = &r.target.text;
        if t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/") {
            raise(Risk::Network, "opens a network connection through /dev/tcp");
        } else if r.kind.writes() && (r.target.dynamic || !effects::is_sink(t)) {
            raise(Risk::Write, "redirection writes a file");
        }
    }
    if !fx.writes.is_empty() {
        raise(Risk::Write, "writes files");
    }
    if !fx.hosts.is_empty() {
        raise(Risk::Network, "talks to another host");
    }
    if part.kind == PartKind::Exec
        && system_program(part.program()).is_none()
        && part.wrappers.iter().any(|w| w.ends_with(" option") || w.starts_with('$'))
    {
        // `rg --pre ./x`, `git -c core.pager=/tmp/x`, `LESSOPEN='|./x %s'`:
        // the command people approve is another one.
        raise(Risk::Destructive, "another program's option runs a program named by path: it could be any program");
    }
    if part.kind == PartKind::Exec
        && system_program(part.program()).is_some_and(|p| crate::parse::is_shell(p) || crate::deny::is_interpreter(p))
        && args::Args(part.args()).operands().first().is_some_and(|o| o.dynamic)
    {
        raise(Risk::Destructive, "runs a script only known at run time: it cannot be read");
    }
    if part.background {
        raise(Risk::Write, "runs in the background after the command returns");
    }
    if part.privileged {
        raise(Risk::Privileged, "runs with raised privilege");
    }
    if part.wrappers.iter().any(|w| w.starts_with("ssh ")) {
        raise(Risk::Network, "runs on another host over ssh");
    }
    PartRisk { risk, reason, effects: fx, program: part.program().to_string() }
}

#[cfg(test)]
mod tests;
