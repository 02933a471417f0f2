//! What the kernel sandbox takes from Cedar policies: the directories,
//! files and hosts their scopes and conditions name, read off each
//! policy's syntax tree (`cedar_policy::pst`).
//!
//! Only what maps exactly is compiled:
//!
//! - a `forbid` of `read` (or of every action) on `resource in
//!   Directory::"P"` or `resource == File::"P"`, or whose one condition is
//!   `when { resource in Directory::"P" }`: P is hidden and never written;
//! - a `forbid` of `write` naming P the same way: P is never written;
//! - a `permit` of `write` on `resource in Directory::"P"` (in the scope or
//!   as its one condition) and nothing else: P is a write root;
//! - a `permit` of `connect` on `resource == Host::"h"`, or whose one
//!   condition is `resource.name == "h"` or `["a", "b"].contains(resource.name)`:
//!   those hosts are allowed;
//! - a `forbid` of `connect` naming hosts the same way takes them off the
//!   allowlist, and one with no condition at all leaves no network.
//!
//! `||` between such conditions names the union. Everything else stays
//! with the gate: `like` patterns, `context.cwd`, the principal's
//! attributes, `unless`, several conditions. A permit that is not compiled
//! is safe to leave out, since the kernel then allows less; in particular
//! a permit conditioned on anything (`principal.human_attached`) is never
//! widened into the kernel, which cannot see the condition. Such permits
//! are listed in [`SandboxTerms::skipped`]. A forbid that is not compiled
//! is a rule the kernel does not back; it is listed in
//! [`SandboxTerms::not_compiled`] so `unixagent sandbox status` can say so.
//! Rules on `exec` and `spawn_agent` are about programs, which the sandbox
//! does not see: they are neither compiled nor listed. Nor are permits of
//! `read`, since the sandbox reads everywhere it does not hide.
//!
//! A file named with `resource == File::"P"` is taken with what lies
//! below it: when P is a directory, the kernel covers more than the gate.

use super::load::{self, Source, Sources};
use crate::error::PolicyError;
use cedar_policy::pst::{
    ActionConstraint, BinaryOp, Clause, Effect, EntityOrSlot, EntityUID, Expr, Literal, PrincipalConstraint,
    ResourceConstraint, Template, Var,
};
use serde::Serialize;
use std::path::PathBuf;

/// A path a policy names, and the policy (`"<file>: @id(\"…\")"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathTerm {
    pub path: PathBuf,
    pub source: String,
}

/// A host a policy names, and the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostTerm {
    pub host: String,
    pub source: String,
}

/// What a policy that was not compiled is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Target {
    /// A directory or file (and what is below it).
    Path(PathBuf),
    /// One host.
    Host(String),
    /// No single place: the policy picks its resources by a condition.
    Unnamed,
}

/// A policy (on `read`, `write` or `connect`) the sandbox does not compile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uncompiled {
    /// The policy, as in [`PathTerm::source`].
    pub source: String,
    pub action: &'static str,
    pub target: Target,
    /// Why, as a clause: "its unless clause uses a like pattern".
    pub why: String,
}

/// The sandbox's part of a set of Cedar policies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxTerms {
    /// Hidden from reads. Each is in `write_protect` as well.
    pub read_deny: Vec<PathTerm>,
    /// Never written.
    pub write_protect: Vec<PathTerm>,
    /// Where writes may go.
    pub write_roots: Vec<PathTerm>,
    /// Hosts the proxy may let through.
    pub allow_hosts: Vec<HostTerm>,
    /// Hosts forbidden, to be taken off the allowlist whatever allows them.
    pub deny_hosts: Vec<HostTerm>,
    /// Policies that forbid every connection: no network at all.
    pub no_network: Vec<String>,
    /// Forbids the kernel does not back: gate-only rules.
    pub not_compiled: Vec<Uncompiled>,
    /// Forbids (in `read_deny` or `write_protect`) that exempt the task
    /// boards in the directory they name, with `unless { resource.path
    /// like "P/sessions/*/board/*" }`: the path is P.
    pub board_exempt: Vec<PathTerm>,
    /// Permits not widened into the kernel.
    pub skipped: Vec<Uncompiled>,
}

impl SandboxTerms {
    fn extend(&mut self, other: SandboxTerms) {
        self.read_deny.extend(other.read_deny);
        self.write_protect.extend(other.write_protect);
        self.write_roots.extend(other.write_roots);
        self.allow_hosts.extend(other.allow_hosts);
        self.deny_hosts.extend(other.deny_hosts);
        self.no_network.extend(other.no_network);
        self.not_compiled.extend(other.not_compiled);
        self.board_exempt.extend(other.board_exempt);
        self.skipped.extend(other.skipped);
    }
}

/// The sandbox terms of every loaded Cedar policy: the built-in policy and
/// `policy.cedar` in full, and the forbids of each narrowing file. A
/// narrowing file's permits are listed as skipped, since a layer can only
/// narrow what its parent allows. `policy.toml` is left to
/// [`crate::policy_toml::sandbox_terms`], which reads its globs directly.
pub fn layered(sources: &Sources) -> Result<SandboxTerms, PolicyError> {
    let mut out = SandboxTerms::default();
    for src in &sources.base {
        out.extend(sandbox_terms(src)?);
    }
    for (src, _) in &sources.narrowing {
        let mut t = sandbox_terms(src)?;
        let widening = t.write_roots.drain(..).map(|p| ("write", Target::Path(p.path), p.source));
        let widening = widening.chain(t.allow_hosts.drain(..).map(|h| ("connect", Target::Host(h.host), h.source)));
        let skipped: Vec<Uncompiled> = widening
            .map(|(action, target, source)| Uncompiled {
                source,
                action,
                target,
                why: "a --policy layer only narrows what its parent allows".into(),
            })
            .collect();
        t.skipped.extend(skipped);
        out.extend(t);
    }
    Ok(out)
}

/// The sandbox terms of one Cedar source (see the module docs). Parses the
/// text; validating it against the schema is the gate's part.
pub fn sandbox_terms(src: &Source) -> Result<SandboxTerms, PolicyError> {
    let mut out = SandboxTerms::default();
    for (n, policy) in load::parse(src)? {
        let source = format!("{}: {}", src.path.display(), shown(&load::label(&policy, n), policy.annotation("id")));
        match policy.to_pst() {
            Ok(p) => compile(p.body(), &source, &mut out),
            Err(e) => {
                // Not expected for a parsed policy; a forbid stays the gate's.
                if policy.effect() == cedar_policy::Effect::Forbid {
                    for action in Action::ALL {
                        out.not_compiled.push(Uncompiled {
                            source: source.clone(),
                            action: action.name(),
                            target: Target::Unnamed,
                            why: format!("its syntax tree cannot be read ({e})"),
                        });
                    }
                }
            }
        }
    }
    dedup(&mut out.read_deny);
    dedup(&mut out.write_protect);
    dedup(&mut out.write_roots);
    Ok(out)
}

/// `@id("x")` when the policy has one, else its `#N`.
fn shown(label: &str, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("@id({})", crate::policy_toml::quote(id)),
        None => label.to_string(),
    }
}

fn dedup(list: &mut Vec<PathTerm>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|t| seen.insert(t.path.clone()));
}

/// The resources a policy is about, before its actions are considered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reach {
    /// Every resource.
    All,
    /// Directories and files (a directory: `true`), with what is below.
    Paths(Vec<(String, bool)>),
    /// Hosts named as entities (`Host::"h"`).
    Hosts(Vec<String>),
    /// Resources by their `name` attribute: hosts for `connect`, file names
    /// for `read` and `write`.
    Names(Vec<String>),
    /// Not exactly: what the scope names, if anything, and why.
    Inexact(Target, String),
}

/// The actions the sandbox has a part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Read,
    Write,
    Connect,
}

impl Action {
    const ALL: [Action; 3] = [Action::Read, Action::Write, Action::Connect];

    fn name(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Connect => "connect",
        }
    }
}

/// What one action of a policy is about.
enum Place {
    All,
    Paths(Vec<(String, bool)>),
    Hosts(Vec<String>),
    Inexact(Target, String),
}

fn compile(t: &Template, source: &str, out: &mut SandboxTerms) {
    let reach = reach(t);
    let forbid = t.effect == Effect::Forbid;
    if let (true, Some(p)) = (forbid, exempts_boards(t)) {
        out.board_exempt.push(PathTerm { path: PathBuf::from(crate::paths::normalize(&p)), source: source.into() });
    }
    for action in actions(&t.action) {
        let place = match (action, &reach) {
            (_, Reach::All) => Place::All,
            (Action::Connect, Reach::Hosts(h) | Reach::Names(h)) => Place::Hosts(h.clone()),
            // A host is in no directory, and a file is no host.
            (Action::Connect, Reach::Paths(_)) | (_, Reach::Hosts(_)) => continue,
            (_, Reach::Paths(p)) => Place::Paths(p.clone()),
            (_, Reach::Names(_)) => {
                Place::Inexact(Target::Unnamed, "its condition picks files by name, wherever they are".into())
            }
            (_, Reach::Inexact(target, why)) => Place::Inexact(target.clone(), why.clone()),
        };
        let note = |target: Target, why: &str| Uncompiled {
            source: source.into(),
            action: action.name(),
            target,
            why: why.into(),
        };
        if forbid {
            forbidden(action, place, source, out, &note);
        } else if action != Action::Read {
            permitted(place, source, out, &note);
        }
    }
}

fn forbidden(
    action: Action,
    place: Place,
    source: &str,
    out: &mut SandboxTerms,
    note: &dyn Fn(Target, &str) -> Uncompiled,
) {
    match place {
        Place::Inexact(target, why) => out.not_compiled.push(note(target, &why)),
        Place::All if action == Action::Connect => out.no_network.push(source.into()),
        Place::All => out.not_compiled.push(note(Target::Unnamed, "it covers every file")),
        Place::Hosts(hosts) => {
            for h in hosts {
                if h == "*" {
                    out.not_compiled
                        .push(note(Target::Unnamed, "Host::\"*\" stands for the hosts the gate cannot name"));
                } else {
                    out.deny_hosts.push(HostTerm { host: host(&h), source: source.into() });
                }
            }
        }
        Place::Paths(paths) => {
            for (p, _) in paths {
                let abs = crate::paths::normalize(&p);
                let term = PathTerm { path: PathBuf::from(&abs), source: source.into() };
                if !abs.starts_with('/') {
                    out.not_compiled.push(note(Target::Path(p.into()), "it is not an absolute path"));
                } else if action == Action::Write {
                    out.write_protect.push(term);
                } else if abs == "/" {
                    out.not_compiled.push(note(Target::Path(abs.into()), "hiding / would leave nothing to run"));
                } else {
                    out.read_deny.push(term.clone());
                    out.write_protect.push(term);
                }
            }
        }
    }
}

fn permitted(place: Place, source: &str, out: &mut SandboxTerms, note: &dyn Fn(Target, &str) -> Uncompiled) {
    match place {
        Place::Inexact(target, why) => out.skipped.push(note(target, &why)),
        Place::All => out.skipped.push(note(Target::Unnamed, "it names no single directory or host")),
        Place::Hosts(hosts) => {
            for h in hosts {
                // The gate names hosts in lower case, without a port; any
                // other spelling (`*`, `A.org`, `a.org:443`) never matches.
                let named = !h.is_empty()
                    && h.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_' | '[' | ']')
                    });
                if named {
                    out.allow_hosts.push(HostTerm { host: host(&h), source: source.into() });
                } else {
                    out.skipped.push(note(Target::Host(h), "it is not a host name as the gate sees one"));
                }
            }
        }
        Place::Paths(paths) => {
            for (p, dir) in paths {
                if !dir {
                    let why = "it names a file, which may be a directory; only `resource in Directory` widens";
                    out.skipped.push(note(Target::Path(p.into()), why));
                } else if crate::paths::normalize(&p) != p || !p.starts_with('/') {
                    let why = "it is not an absolute, normalised path, so the gate never matches it";
                    out.skipped.push(note(Target::Path(p.into()), why));
                } else {
                    out.write_roots.push(PathTerm { path: p.into(), source: source.into() });
                }
            }
        }
    }
}

/// A host as the gate and the proxy compare it.
fn host(h: &str) -> String {
    h.trim_end_matches('.').to_ascii_lowercase()
}

/// The actions of the sandbox's concern a policy applies to.
fn actions(c: &ActionConstraint) -> Vec<Action> {
    let named = |uid: &EntityUID| typed(uid, "Action").then(|| uid.eid.to_string());
    let listed: Vec<String> = match c {
        ActionConstraint::Any => return Action::ALL.to_vec(),
        ActionConstraint::Eq(a) => named(a).into_iter().collect(),
        ActionConstraint::In(list) => list.iter().filter_map(named).collect(),
    };
    Action::ALL.into_iter().filter(|a| listed.iter().any(|l| l == a.name())).collect()
}

/// Whether `uid` is of the unqualified entity type `ty`.
fn typed(uid: &EntityUID, ty: &str) -> bool {
    uid.ty.0.namespace.is_empty() && uid.ty.0.id.as_str() == ty
}

/// The resources a policy's scope and conditions pick.
fn reach(t: &Template) -> Reach {
    let scope = match &t.resource {
        ResourceConstraint::Any | ResourceConstraint::Is(_) => None,
        ResourceConstraint::In(EntityOrSlot::Entity(e)) | ResourceConstraint::IsIn(_, EntityOrSlot::Entity(e))
            if typed(e, "Directory") =>
        {
            Some(Reach::Paths(vec![(e.eid.to_string(), true)]))
        }
        ResourceConstraint::Eq(EntityOrSlot::Entity(e)) if typed(e, "File") => {
            Some(Reach::Paths(vec![(e.eid.to_string(), false)]))
        }
        ResourceConstraint::Eq(EntityOrSlot::Entity(e)) if typed(e, "Host") => {
            Some(Reach::Hosts(vec![e.eid.to_string()]))
        }
        _ => return Reach::Inexact(Target::Unnamed, "its scope names no directory, file or host".into()),
    };
    let target = match &scope {
        Some(Reach::Paths(p)) => p.first().map_or(Target::Unnamed, |(p, _)| Target::Path(p.into())),
        Some(Reach::Hosts(h)) => h.first().map_or(Target::Unnamed, |h| Target::Host(h.clone())),
        _ => Target::Unnamed,
    };
    if !matches!(t.principal, PrincipalConstraint::Any | PrincipalConstraint::Is(_)) {
        return Reach::Inexact(target, "its scope names a principal".into());
    }
    match (scope, t.clauses().as_slice()) {
        (Some(r), []) => r,
        // The task boards' exemption: the forbid holds everywhere else in
        // P, and the kernel opens a board only where this exemption is.
        (Some(r), [Clause::Unless(_)]) if exempts_boards(t).is_some() => r,
        (None, []) => Reach::All,
        (None, [Clause::When(e)]) => selector(e).unwrap_or_else(|| {
            let why = format!("its condition uses {}", features(e));
            Reach::Inexact(target, why)
        }),
        (_, clauses) => {
            let why = clauses
                .iter()
                .map(|c| match c {
                    Clause::When(e) => format!("its when clause uses {}", features(e)),
                    Clause::Unless(e) => format!("its unless clause uses {}", features(e)),
                })
                .collect::<Vec<_>>()
                .join("; ");
            Reach::Inexact(target, why)
        }
    }
}

/// P, for a policy scoped `resource in Directory::"P"` whose one clause is
/// `unless { resource.path like "P/sessions/*/board/*" }`: everything in
/// P but the task boards of the sessions there.
fn exempts_boards(t: &Template) -> Option<String> {
    let ResourceConstraint::In(EntityOrSlot::Entity(dir)) = &t.resource else { return None };
    if !typed(dir, "Directory") {
        return None;
    }
    let [Clause::Unless(e)] = t.clauses().as_slice() else { return None };
    let Expr::Like { expr, pattern } = &**e else { return None };
    let is_path = matches!(expr.as_ref(), Expr::GetAttr { expr, attr } if is_resource(expr) && attr.as_str() == "path");
    let text: String = pattern
        .iter()
        .map(|p| match p {
            cedar_policy::pst::PatternElem::Char(c) => *c,
            cedar_policy::pst::PatternElem::Wildcard => '*',
        })
        .collect();
    let p = dir.eid.to_string();
    (is_path && text == format!("{p}/sessions/*/board/*")).then_some(p)
}

/// A condition that only picks resources: `resource in Directory::"P"`,
/// `resource == File::"P"`, `resource == Host::"h"`, `resource.name ==
/// "h"`, `["a", "b"].contains(resource.name)`, and `||` of those.
fn selector(e: &Expr) -> Option<Reach> {
    let Expr::BinaryOp { op, left, right } = e else { return None };
    let (l, r) = (left.as_ref(), right.as_ref());
    match op {
        BinaryOp::Or => match (selector(l)?, selector(r)?) {
            (Reach::Paths(mut a), Reach::Paths(b)) => {
                a.extend(b);
                Some(Reach::Paths(a))
            }
            (Reach::Hosts(mut a), Reach::Hosts(b)) => {
                a.extend(b);
                Some(Reach::Hosts(a))
            }
            (Reach::Names(mut a), Reach::Names(b)) => {
                a.extend(b);
                Some(Reach::Names(a))
            }
            _ => None,
        },
        BinaryOp::In if is_resource(l) => {
            let dirs = match r {
                Expr::Set(items) => items.iter().map(|i| directory(i)).collect::<Option<Vec<_>>>()?,
                one => vec![directory(one)?],
            };
            Some(Reach::Paths(dirs.into_iter().map(|d| (d, true)).collect()))
        }
        BinaryOp::Eq => {
            let (res, lit) = if is_resource(l) || is_name(l) { (l, r) } else { (r, l) };
            match (res, lit) {
                (res, Expr::Literal(Literal::EntityUID(e))) if is_resource(res) && typed(e, "File") => {
                    Some(Reach::Paths(vec![(e.eid.to_string(), false)]))
                }
                (res, Expr::Literal(Literal::EntityUID(e))) if is_resource(res) && typed(e, "Host") => {
                    Some(Reach::Hosts(vec![e.eid.to_string()]))
                }
                (res, Expr::Literal(Literal::String(s))) if is_name(res) => Some(Reach::Names(vec![s.to_string()])),
                _ => None,
            }
        }
        BinaryOp::Contains if is_name(r) => {
            let Expr::Set(items) = l else { return None };
            let names = items.iter().map(|i| match i.as_ref() {
                Expr::Literal(Literal::String(s)) => Some(s.to_string()),
                _ => None,
            });
            Some(Reach::Names(names.collect::<Option<Vec<_>>>()?))
        }
        _ => None,
    }
}

fn is_resource(e: &Expr) -> bool {
    matches!(e, Expr::Var(Var::Resource))
}

/// `resource.name`.
fn is_name(e: &Expr) -> bool {
    matches!(e, Expr::GetAttr { expr, attr } if is_resource(expr) && attr.as_str() == "name")
}

fn directory(e: &Expr) -> Option<String> {
    match e {
        Expr::Literal(Literal::EntityUID(d)) if typed(d, "Directory") => Some(d.eid.to_string()),
        _ => None,
    }
}

/// What a condition uses that the sandbox cannot see, for people: "a like
/// pattern, principal.depth".
fn features(e: &Expr) -> String {
    let mut found = Vec::new();
    walk(e, &mut found);
    if found.is_empty() { "a condition".into() } else { found.join(", ") }
}

fn walk(e: &Expr, found: &mut Vec<String>) {
    let note = |found: &mut Vec<String>, s: String| {
        if !found.contains(&s) {
            found.push(s);
        }
    };
    match e {
        Expr::Like { expr, .. } => {
            note(found, "a like pattern".into());
            walk(expr, found);
        }
        Expr::GetAttr { expr, attr } => match expr.as_ref() {
            Expr::Var(Var::Principal) => note(found, format!("principal.{attr}")),
            Expr::Var(Var::Context) => note(found, format!("context.{attr}")),
            Expr::Var(Var::Resource) => note(found, format!("resource.{attr}")),
            inner => walk(inner, found),
        },
        Expr::Var(Var::Action) => note(found, "the action".into()),
        Expr::Var(Var::Principal) => note(found, "the principal".into()),
        Expr::Var(Var::Context) => note(found, "the context".into()),
        Expr::UnaryOp { expr, .. } => walk(expr, found),
        Expr::BinaryOp { left, right, .. } => {
            walk(left, found);
            walk(right, found);
        }
        Expr::HasAttr { expr, .. } => walk(expr, found),
        Expr::Is { expr, in_expr, .. } => {
            walk(expr, found);
            if let Some(i) = in_expr {
                walk(i, found);
            }
        }
        Expr::IfThenElse { cond, then_expr, else_expr } => {
            for x in [cond, then_expr, else_expr] {
                walk(x, found);
            }
        }
        Expr::Set(items) => items.iter().for_each(|i| walk(i, found)),
        Expr::Record(fields) => fields.values().for_each(|v| walk(v, found)),
        // Literals, the resource itself, slots; and whatever later Cedar
        // versions add, which then reads as "a condition".
        _ => {}
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
