//! From an [`Analysis`] to Cedar entities and requests.
//!
//! Entities and contexts are built directly as Cedar values: building them
//! from JSON costs several times the evaluation itself.

use crate::classify::Analysis;
use crate::parse::{Part, PartKind};
use crate::paths;
use cedar_policy::{Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, RestrictedExpression};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;

/// Who proposes the command, and where it runs.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// Session id (the principal's id).
    pub session: &'a str,
    /// Agent nesting depth (0 = started by a human).
    pub depth: u32,
    /// Whether a human can answer prompts.
    pub human_attached: bool,
    /// Absolute working directory of the command.
    pub cwd: &'a str,
    /// The user's home, for `~`.
    pub home: &'a str,
}

/// One Cedar question about the command.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub action: &'static str,
    pub resource: EntityUid,
    /// The directories the resource is `in` (see [`Directories`]).
    pub ancestors: Vec<EntityUid>,
    /// The program asking, for `context.program`.
    pub program: String,
    /// For people: `write /home/u/x`, `exec rm -rf x`, `connect example.com`.
    pub label: String,
}

/// Type names, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct Types {
    agent: EntityTypeName,
    command: EntityTypeName,
    file: EntityTypeName,
    pub(crate) directory: EntityTypeName,
    host: EntityTypeName,
    action: EntityTypeName,
    /// The uids of [`super::ACTIONS`], in that order.
    actions: Vec<EntityUid>,
}

impl Types {
    pub fn new() -> Result<Types, String> {
        let t = |s: &str| EntityTypeName::from_str(s).map_err(|e| e.to_string());
        let action = t("Action")?;
        let actions = super::ACTIONS
            .iter()
            .map(|a| EntityUid::from_type_name_and_id(action.clone(), EntityId::new(*a)))
            .collect();
        Ok(Types {
            agent: t("Agent")?,
            command: t("Command")?,
            file: t("File")?,
            directory: t("Directory")?,
            host: t("Host")?,
            action,
            actions,
        })
    }

    pub fn action(&self, name: &str) -> EntityUid {
        match super::ACTIONS.iter().position(|a| *a == name) {
            Some(i) => self.actions[i].clone(),
            None => EntityUid::from_type_name_and_id(self.action.clone(), EntityId::new(name)),
        }
    }

    fn uid(&self, ty: &EntityTypeName, id: &str) -> EntityUid {
        EntityUid::from_type_name_and_id(ty.clone(), EntityId::new(id))
    }
}

/// Everything one decision evaluates.
#[derive(Debug)]
pub(crate) struct Batch {
    pub entities: Entities,
    pub principal: EntityUid,
    pub queries: Vec<Query>,
    pub cwd: EntityUid,
}

struct Builder<'t> {
    types: &'t Types,
    /// The directories the policies name (see [`Directories`]).
    named: &'t Directories,
    /// The working directory, which `context.cwd` names.
    cwd: &'t str,
    entities: HashMap<EntityUid, Entity>,
}

/// The directories a policy set can ask about.
///
/// The hierarchy Cedar sees is pruned to these: a file is `in` its own path,
/// the working directory and whichever directories above it a policy names
/// (`resource in Directory::"/home/me/.ssh"`), each listed as a direct
/// parent. The only directory a policy can reach other than by naming it is
/// `context.cwd`. Cedar computes the transitive closure of the entities of
/// every request batch, and with the full chain of directories (a dozen
/// levels is common) that closure was a third of the decision's time. The
/// answers are the same: an `in` test against a directory no policy names
/// is never evaluated.
pub(crate) type Directories = HashSet<String>;

impl Builder<'_> {
    fn str(s: &str) -> RestrictedExpression {
        RestrictedExpression::new_string(s.to_string())
    }

    /// The directories a `path` entity is `in`: the path itself and every
    /// directory above it that a policy can ask about.
    fn ancestors(&self, path: &str) -> Vec<EntityUid> {
        let mut out = Vec::new();
        let mut p = Some(path);
        while let Some(dir) = p {
            if dir == self.cwd || self.named.contains(dir) {
                out.push(self.types.uid(&self.types.directory, dir));
            }
            p = parent_of(dir);
        }
        out
    }

    /// Adds `File::path`, `in` its parent directory and in the directory of
    /// its own path (the operand may be a directory: `rm -r ~/.ssh`).
    /// `glob` marks the directory a glob starts in, asked about on the
    /// glob's behalf (its id is prefixed so it stays apart from the same
    /// path named plainly).
    /// Returns its uid and the directories it is `in`.
    fn file(&mut self, path: &str, glob: bool) -> Result<(EntityUid, Vec<EntityUid>), String> {
        let id = if glob { format!("glob:{path}") } else { path.to_string() };
        let uid = self.types.uid(&self.types.file, &id);
        let ancestors = self.ancestors(path);
        if self.entities.contains_key(&uid) {
            return Ok((uid, ancestors));
        }
        let parents = ancestors.iter().cloned().collect();
        let name = path.rsplit('/').next().unwrap_or(path);
        let attrs = HashMap::from([
            ("path".to_string(), Self::str(path)),
            ("name".to_string(), Self::str(name)),
            ("glob".to_string(), RestrictedExpression::new_bool(glob)),
        ]);
        let e = Entity::new(uid.clone(), attrs, parents).map_err(|e| e.to_string())?;
        self.entities.insert(uid.clone(), e);
        Ok((uid, ancestors))
    }

    fn host(&mut self, name: &str) -> Result<EntityUid, String> {
        let uid = self.types.uid(&self.types.host, name);
        let attrs = HashMap::from([("name".to_string(), Self::str(name))]);
        let e = Entity::new(uid.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?;
        self.entities.insert(uid.clone(), e);
        Ok(uid)
    }
}

fn parent_of(path: &str) -> Option<&str> {
    if path == "/" || !path.starts_with('/') {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// For a path with a glob character, the directory before the first
/// component that has one (`/home/u/.s*/x` -> `/home/u`).
fn glob_base(path: &str) -> Option<&str> {
    let first = path.find(['*', '?', '['])?;
    match path[..first].rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// The part as people should read it in a request's label: its words, or
/// what it is when it has none.
fn shown(part: &Part, invocation: &str) -> String {
    if !invocation.is_empty() {
        return invocation.to_string();
    }
    match &part.kind {
        PartKind::FunctionDef(name) => format!("(the definition of {name})"),
        PartKind::Assignment => "(a variable assignment)".into(),
        PartKind::Redirection => "(a redirection)".into(),
        PartKind::Unparseable(_) => "(text that cannot be parsed)".into(),
        PartKind::Exec | PartKind::Dynamic => "(an empty command)".into(),
    }
}

/// True when `part` starts another unixagent agent (not one of its tools:
/// see [`crate::own_cli`]).
fn spawns_agent(part: &Part) -> bool {
    if part.program().rsplit('/').next() != Some("unixagent") {
        return false;
    }
    let args: Vec<&str> = part.args().iter().map(|a| a.text.as_str()).collect();
    crate::own_cli::invocation(&args) == crate::own_cli::Invocation::Agent
}

/// True when `part` starts a child agent with nothing but its instruction
/// (see [`crate::own_cli::plain_child`]).
fn plain_child(part: &Part) -> bool {
    let args: Vec<&str> = part.args().iter().map(|a| a.text.as_str()).collect();
    spawns_agent(part) && crate::own_cli::plain_child(&args)
}

/// Builds the entities and queries for one command.
pub(crate) fn build(
    types: &Types,
    named: &Directories,
    analysis: &Analysis,
    who: &Subject<'_>,
) -> Result<Batch, String> {
    let cwd_path = paths::normalize(who.cwd);
    let mut b = Builder { types, named, cwd: &cwd_path, entities: HashMap::new() };
    let principal = types.uid(&types.agent, who.session);
    let attrs = HashMap::from([
        ("session".to_string(), Builder::str(who.session)),
        ("depth".to_string(), RestrictedExpression::new_long(i64::from(who.depth))),
        ("human_attached".to_string(), RestrictedExpression::new_bool(who.human_attached)),
    ]);
    let agent = Entity::new(principal.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?;
    b.entities.insert(principal.clone(), agent);
    let cwd = types.uid(&types.directory, &cwd_path);
    let above = b.ancestors(&cwd_path).into_iter().filter(|d| *d != cwd).collect();
    b.entities.insert(cwd.clone(), Entity::new_no_attrs(cwd.clone(), above));

    let mut queries = Vec::new();
    for (i, (part, pr)) in analysis.parsed.parts.iter().zip(&analysis.parts).enumerate() {
        let line = part.line();
        let invocation =
            if part.wrappers.is_empty() { line.clone() } else { format!("{} {line}", part.wrappers.join(" ")) };
        let uid = types.uid(&types.command, &format!("{i}:{invocation}"));
        let name = paths::system_program(part.program()).unwrap_or("");
        let attrs = HashMap::from([
            ("program".to_string(), Builder::str(part.program())),
            ("name".to_string(), Builder::str(name)),
            ("args".to_string(), RestrictedExpression::new_set(part.args().iter().map(|a| Builder::str(&a.text)))),
            ("line".to_string(), Builder::str(&line)),
            ("invocation".to_string(), Builder::str(&invocation)),
            ("wrappers".to_string(), RestrictedExpression::new_set(part.wrappers.iter().map(|w| Builder::str(w)))),
            ("risk".to_string(), Builder::str(pr.risk.name())),
            ("risk_level".to_string(), RestrictedExpression::new_long(pr.risk.level())),
            ("privileged".to_string(), RestrictedExpression::new_bool(part.privileged)),
            ("plain_child".to_string(), RestrictedExpression::new_bool(plain_child(part))),
        ]);
        let e = Entity::new(uid.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?;
        b.entities.insert(uid.clone(), e);
        let program = part.program().to_string();
        queries.push(Query {
            action: "exec",
            resource: uid.clone(),
            ancestors: Vec::new(),
            program: program.clone(),
            label: format!("exec {}", shown(part, &invocation)),
        });
        if spawns_agent(part) {
            queries.push(Query {
                action: "spawn_agent",
                resource: uid,
                ancestors: Vec::new(),
                program: program.clone(),
                label: format!("spawn_agent {}", shown(part, &invocation)),
            });
        }
        for (action, list) in [("read", &pr.effects.reads), ("write", &pr.effects.writes)] {
            for p in list {
                let abs = paths::absolute(p, &cwd_path, who.home);
                // A glob may expand to anything in the directory where it
                // starts (`~/.s*` is `~/.ssh`), so that directory is asked
                // about too: rules on what lies below it cannot see through
                // the pattern.
                if let Some(dir) = glob_base(&abs) {
                    let (resource, ancestors) = b.file(dir, true)?;
                    let label = format!("{action} {dir} (through {abs})");
                    queries.push(Query { action, resource, ancestors, program: program.clone(), label });
                }
                let (resource, ancestors) = b.file(&abs, false)?;
                let label = format!("{action} {abs}");
                queries.push(Query { action, resource, ancestors, program: program.clone(), label });
            }
        }
        for h in &pr.effects.hosts {
            let host = h.to_ascii_lowercase();
            let resource = b.host(&host)?;
            queries.push(Query {
                action: "connect",
                resource,
                ancestors: Vec::new(),
                program: program.clone(),
                label: format!("connect {host}"),
            });
        }
    }
    let entities = Entities::from_entities(b.entities.into_values(), None).map_err(|e| e.to_string())?;
    Ok(Batch { entities, principal, queries, cwd })
}

/// The context of one query.
pub(crate) fn context(batch: &Batch, q: &Query, command: &str, risk_level: i64) -> Result<Context, String> {
    Context::from_pairs([
        ("cwd".to_string(), RestrictedExpression::new_entity_uid(batch.cwd.clone())),
        ("command".to_string(), RestrictedExpression::new_string(command.to_string())),
        ("program".to_string(), RestrictedExpression::new_string(q.program.clone())),
        ("risk_level".to_string(), RestrictedExpression::new_long(risk_level)),
    ])
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_walk_to_the_root() {
        assert_eq!(parent_of("/a/b"), Some("/a"));
        assert_eq!(parent_of("/a"), Some("/"));
        assert_eq!(parent_of("/"), None);
        assert_eq!(parent_of("rel"), None);
    }

    #[test]
    fn glob_base_is_the_directory_where_the_pattern_starts() {
        assert_eq!(glob_base("/home/u/.s*/id_rsa"), Some("/home/u"));
        assert_eq!(glob_base("/home/u/build/*.o"), Some("/home/u/build"));
        assert_eq!(glob_base("/*"), Some("/"));
        assert_eq!(glob_base("/home/u/x"), None);
    }

    #[test]
    fn only_unixagent_agents_spawn_agents() {
        let part = |line: &str| crate::parse::parse(line).parts.into_iter().next().unwrap();
        assert!(spawns_agent(&part("unixagent -c '# look at the logs'")));
        assert!(spawns_agent(&part("/usr/local/bin/unixagent --json")));
        assert!(!spawns_agent(&part("unixagentx -c '# x'")));
        // Its tools are not agents.
        assert!(!spawns_agent(&part("unixagent board claim")));
        assert!(!spawns_agent(&part("unixagent sessions list")));
    }
}
