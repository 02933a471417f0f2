//! Paging turned off in the agent's commands, before the cascade decides.
//!
//! Agent commands run in the user's own terminal, so `git log`,
//! `systemctl status` and `man` start a pager. A pager holds the terminal
//! until someone presses `q`, which stalls the agent's turn, and it can run
//! commands (`!cmd` in less, `LESSOPEN`), so the classifier rates a paging
//! program Write and it asks. Most such commands are reads an agent makes
//! all the time. unixagent therefore edits the command it is about to type:
//! each top-level invocation that would page gets the program's own switch
//! for not paging, and the edited command is what is classified, shown and
//! run. The user's environment and configuration are not touched, so the
//! user's own `git log` still pages.
//!
//! | program | edit |
//! |---|---|
//! | `git` | `git --no-pager …` |
//! | `journalctl`, `systemctl`, `loginctl`, `timedatectl`, `localectl`, `networkctl`, `resolvectl` | `… --no-pager …` right after the program |
//! | `man` | `MANPAGER=cat man …` (only without a wrapper before `man`) |
//!
//! An invocation is edited only when the classifier says so: its program's
//! rule must rate it higher on a terminal than with stdout redirected (it
//! pages), and the edited invocation must rate like the redirected one (the
//! switch turns paging off). Only top-level words are edited (depth 0,
//! not inside `sh -c '…'` strings, `eval` or substitutions, whose text is
//! not the command's text), and only when that word alone named the program.
//! The edited text is parsed again and must give the same parts with just
//! the switch added; anything else leaves the command as it was (which
//! asks).
//!
//! ```
//! use ua_policy::classify::analyze;
//! use ua_policy::paging::turn_off;
//!
//! let a = analyze("git log --oneline -5 && git status");
//! let edit = turn_off(&a).unwrap();
//! assert_eq!(edit.command, "git --no-pager log --oneline -5 && git status");
//! assert!(turn_off(&analyze("git log | head")).is_none());
//! assert!(turn_off(&analyze("sh -c 'git log'")).is_none());
//! ```

use crate::classify::{self, Analysis, programs};
use crate::parse::{Arg, Part, PartKind};
use crate::paths::system_program;

/// What one program needs to stop paging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Switch {
    /// An option inserted right after the program word.
    Flag(&'static str),
    /// An assignment inserted before the program word.
    Var(&'static str, &'static str),
}

/// The paging programs unixagent knows how to quiet.
fn switch(program: &str) -> Option<Switch> {
    match program {
        "git" | "journalctl" | "systemctl" | "loginctl" | "timedatectl" | "localectl" | "networkctl" | "resolvectl" => {
            Some(Switch::Flag("--no-pager"))
        }
        "man" => Some(Switch::Var("MANPAGER", "cat")),
        _ => None,
    }
}

/// A command with paging turned off.
#[derive(Debug, Clone)]
pub struct Edit {
    /// The command as it will run.
    pub command: String,
    /// Its analysis.
    pub analysis: Analysis,
}

/// The command with paging turned off in every top-level invocation that
/// would page, or `None` when nothing needs (or can safely get) the edit.
pub fn turn_off(analysis: &Analysis) -> Option<Edit> {
    if analysis.denied.is_some() {
        return None;
    }
    let source = &analysis.parsed.source;
    // (character offset, text to insert, part index)
    let mut inserts: Vec<(usize, String, usize)> = Vec::new();
    for (i, part) in analysis.parsed.parts.iter().enumerate() {
        let Some(at) = part.program_at.clone() else { continue };
        let Some(sw) = system_program(part.program()).and_then(switch) else { continue };
        if !pages(part) || !quiets(part, sw) {
            continue;
        }
        match sw {
            Switch::Flag(f) => inserts.push((at.end, format!(" {f}"), i)),
            Switch::Var(name, value) if part.wrappers.is_empty() => {
                inserts.push((at.start, format!("{name}={value} "), i));
            }
            Switch::Var(..) => {}
        }
    }
    if inserts.is_empty() {
        return None;
    }
    let command = insert(source, &inserts)?;
    let edited = classify::analyze(&command);
    same_but_quiet(analysis, &edited, &inserts).then_some(Edit { command, analysis: edited })
}

/// True when the part's program pages here: its rule rates it higher with
/// stdout on the terminal than with stdout redirected.
fn pages(part: &Part) -> bool {
    if part.stdout_redirected || part.kind != PartKind::Exec {
        return false;
    }
    let redirected = Part { stdout_redirected: true, ..part.clone() };
    rule(part) != rule(&redirected)
}

/// True when the switch makes the rule rate it as if redirected.
fn quiets(part: &Part, sw: Switch) -> bool {
    let redirected = Part { stdout_redirected: true, ..part.clone() };
    rule(&with_switch(part, sw)) == rule(&redirected)
}

fn rule(part: &Part) -> Option<programs::Verdict> {
    system_program(part.program()).map(|name| programs::rule(name, part))
}

fn with_switch(part: &Part, sw: Switch) -> Part {
    let mut p = part.clone();
    match sw {
        Switch::Flag(f) => p.argv.insert(1, Arg::literal(f)),
        Switch::Var(name, value) => p.assignments.push((name.to_string(), Arg::literal(value))),
    }
    p
}

/// `source` with each text inserted at its character offset.
fn insert(source: &str, inserts: &[(usize, String, usize)]) -> Option<String> {
    let mut by_offset: Vec<&(usize, String, usize)> = inserts.iter().collect();
    by_offset.sort_by_key(|(at, ..)| *at);
    // Two parts from one invocation (`git -C "$D" log`, also read with D
    // unset) share its program word: one switch serves both.
    by_offset.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut out = String::with_capacity(source.len() + 16 * inserts.len());
    let mut chars = source.char_indices().map(|(b, _)| b).chain(std::iter::once(source.len()));
    let mut last = 0;
    let mut seen = 0;
    for (at, text, _) in by_offset {
        let byte = chars.nth(at.checked_sub(seen)?)?;
        seen = at + 1;
        out.push_str(source.get(last..byte)?);
        out.push_str(text);
        last = byte;
    }
    out.push_str(source.get(last..)?);
    Some(out)
}

/// True when `edited` has the same parts as `orig`, except that each part
/// named in `inserts` has gained its switch, and nothing rates higher.
fn same_but_quiet(orig: &Analysis, edited: &Analysis, inserts: &[(usize, String, usize)]) -> bool {
    // The walker reads a pager variable's value as the command it is
    // (`MANPAGER=cat` adds a part `cat`): those parts are left out of the
    // comparison, on both sides.
    let vars: Vec<String> = inserts
        .iter()
        .filter_map(|(.., i)| match system_program(orig.parsed.parts[*i].program()).and_then(switch) {
            Some(Switch::Var(name, _)) => Some(format!("${name}")),
            _ => None,
        })
        .collect();
    let kept = |a: &Analysis| -> Vec<usize> {
        (0..a.parsed.parts.len()).filter(|&i| !a.parsed.parts[i].wrappers.iter().any(|w| vars.contains(w))).collect()
    };
    let (ka, kb) = (kept(orig), kept(edited));
    if ka.len() != kb.len() || edited.denied.is_some() {
        return false;
    }
    ka.iter().zip(&kb).all(|(&i, &j)| {
        let (pa, pb) = (&orig.parsed.parts[i], &edited.parsed.parts[j]);
        let expected = match inserts.iter().find(|(.., j)| *j == i) {
            Some(_) => match system_program(pa.program()).and_then(switch) {
                Some(sw) => with_switch(pa, sw),
                None => return false,
            },
            None => pa.clone(),
        };
        let texts = |p: &Part| p.argv.iter().map(|x| x.text.clone()).collect::<Vec<_>>();
        let assigns = |p: &Part| p.assignments.iter().map(|(n, v)| (n.clone(), v.text.clone())).collect::<Vec<_>>();
        pb.kind == expected.kind
            && texts(pb) == texts(&expected)
            && assigns(pb) == assigns(&expected)
            && pb.wrappers == expected.wrappers
            && pb.redirects == expected.redirects
            && edited.parts[j].risk <= orig.parts[i].risk
    })
}

#[cfg(test)]
#[path = "paging_tests.rs"]
mod tests;
