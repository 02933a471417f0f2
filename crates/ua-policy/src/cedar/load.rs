//! Reading policy files into layers: placeholder substitution, parsing,
//! schema validation, and error messages that name the file and line.

use super::ACTIONS;
use super::{Indexed, Layer, PolicyInfo};
use crate::error::PolicyError;
use crate::policy_toml::{self, Modes};
use cedar_policy::{
    ActionConstraint, Effect, EntityId, EntityTypeName, EntityUid, Policy, PolicyId, PolicySet, ResourceConstraint,
    Schema, ValidationMode, Validator,
};
use miette::Diagnostic;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{LazyLock, Mutex};

/// The built-in schema text.
pub const SCHEMA: &str = include_str!("../../policy/schema.cedarschema");
/// The built-in policy text (with placeholders).
pub const DEFAULT_POLICY: &str = include_str!("../../policy/default.cedar");

/// The directories substituted for `${HOME}`, `${CONFIG_DIR}` and
/// `${DATA_DIR}` in Cedar files.
#[derive(Debug, Clone)]
pub struct Places {
    /// The user's home directory.
    pub home: String,
    /// unixagent's config directory.
    pub config_dir: String,
    /// unixagent's data directory (audit log, sessions).
    pub data_dir: String,
}

impl Places {
    /// Replaces the placeholders. Values are escaped for a Cedar string, and
    /// never contain a newline, so line numbers stay those of the file.
    pub fn substitute(&self, text: &str) -> String {
        let esc = |s: &str| {
            let q = policy_toml::quote(s);
            q[1..q.len() - 1].to_string()
        };
        let parents = self.protected_parents();
        let set = format!("[{}]", parents.iter().map(|p| policy_toml::quote(p)).collect::<Vec<_>>().join(", "));
        text.replace("${HOME}", &esc(&self.home))
            .replace("${CONFIG_DIR}", &esc(&self.config_dir))
            .replace("${DATA_DIR}", &esc(&self.data_dir))
            .replace("${PROTECTED_PARENTS}", &set)
    }

    /// `/`, the home directory, and every directory above the config and
    /// data directories: removing or moving one of them removes unixagent's
    /// own files, which no `resource in Directory` rule can see.
    pub fn protected_parents(&self) -> Vec<String> {
        let mut out = vec!["/".to_string(), self.home.clone()];
        for dir in [&self.config_dir, &self.data_dir] {
            let mut p = Path::new(dir.as_str()).parent();
            while let Some(d) = p {
                let s = d.to_string_lossy().into_owned();
                if !s.is_empty() && !out.contains(&s) {
                    out.push(s);
                }
                p = d.parent();
            }
        }
        out
    }
}

/// Parses the built-in schema.
pub fn schema() -> Result<Schema, PolicyError> {
    Schema::from_cedarschema_str(SCHEMA)
        .map(|(s, _warnings)| s)
        .map_err(|e| PolicyError::Builtin(format!("schema: {e}")))
}

/// One policy file's text as loaded (after substitution, or as translated
/// from policy.toml).
#[derive(Debug, Clone)]
pub struct Source {
    /// Where it came from (shown in errors and decisions).
    pub path: PathBuf,
    /// The Cedar text.
    pub text: String,
    /// True for Cedar generated from policy.toml (errors cannot point at a
    /// line of the TOML file).
    pub generated: bool,
}

/// Every policy file a configuration names, read: what the gate's layers
/// are built from, and what the kernel sandbox's rules are compiled from.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The built-in policy, then the user's `policy.cedar` if there is one.
    pub base: Vec<Source>,
    /// The user's `policy.toml`, translated, with its fallback modes.
    pub toml: Option<(Source, Modes)>,
    /// Each narrowing file (`--policy`), read or translated, with its modes.
    pub narrowing: Vec<(Source, Modes)>,
}

/// Builds one layer from sources, validating against the schema.
pub fn layer(name: &str, sources: &[Source], modes: Modes, schema: &Schema) -> Result<Layer, PolicyError> {
    let mut set = PolicySet::new();
    let mut info = HashMap::new();
    let mut origin: HashMap<PolicyId, usize> = HashMap::new();
    for (fi, src) in sources.iter().enumerate() {
        for (n, p) in parse(src)? {
            let id = PolicyId::new(format!("{name}/{fi}/{n}"));
            info.insert(
                id.clone(),
                PolicyInfo {
                    id: label(&p, n),
                    file: src.path.clone(),
                    forbid: p.effect() == Effect::Forbid,
                    reason: p.annotation("reason").map(str::to_string),
                },
            );
            origin.insert(id.clone(), fi);
            set.add(p.new_id(id)).map_err(|e| PolicyError::Builtin(e.to_string()))?;
        }
    }
    let result = Validator::new(schema.clone()).validate(&set, ValidationMode::Strict);
    if let Some(e) = result.validation_errors().next() {
        let fi = origin.get(e.policy_id()).copied().unwrap_or(0);
        let src = sources.get(fi).ok_or_else(|| PolicyError::Builtin(e.to_string()))?;
        let name = info.get(e.policy_id()).map_or(String::new(), |i| format!("policy {}: ", i.id));
        return Err(located(src, e, &format!("{name}{e}")));
    }
    let by_action = split_by_action(&set)?;
    Ok(Layer { name: name.to_string(), by_action, info, modes })
}

/// Parses one source into its policies, in the order they are written,
/// each with its position (0 for the first).
///
/// A session reads the same files for the kernel sandbox's rules and for
/// the gate, so what was parsed is kept by its text for the life of the
/// process (a parse of the built-in policy costs milliseconds; a copy of
/// the parsed policies costs microseconds).
pub(crate) fn parse(src: &Source) -> Result<Vec<(usize, Policy)>, PolicyError> {
    /// Policies by the text they were parsed from.
    type Parsed = HashMap<String, Vec<(usize, Policy)>>;
    static PARSED: LazyLock<Mutex<Parsed>> = LazyLock::new(Mutex::default);
    if let Some(policies) = PARSED.lock().ok().and_then(|m| m.get(&src.text).cloned()) {
        return Ok(policies);
    }
    let policies = parse_text(src)?;
    if let Ok(mut m) = PARSED.lock() {
        m.insert(src.text.clone(), policies.clone());
    }
    Ok(policies)
}

fn parse_text(src: &Source) -> Result<Vec<(usize, Policy)>, PolicyError> {
    let parsed = PolicySet::from_str(&src.text).map_err(|e| located(src, &e, &e.to_string()))?;
    if parsed.templates().next().is_some() {
        return Err(PolicyError::Policy {
            path: src.path.clone(),
            line: 0,
            message: "templates (policies with ?principal or ?resource) are not supported".into(),
        });
    }
    // `from_str` numbers policies policy0, policy1… in source order.
    let mut out: Vec<(usize, Policy)> = parsed
        .policies()
        .filter_map(|p| {
            let n = p.id().to_string().strip_prefix("policy")?.parse::<usize>().ok()?;
            Some((n, p.clone()))
        })
        .collect();
    out.sort_by_key(|(n, _)| *n);
    Ok(out)
}

/// How a policy is named to people: its `@id`, or `#N` (its position in
/// the file, from 1).
pub(crate) fn label(p: &Policy, n: usize) -> String {
    p.annotation("id").map_or_else(|| format!("#{}", n + 1), str::to_string)
}

/// The layer's policies per action, holding only the policies whose scope
/// can match it, and indexed by their resource scope (see [`Indexed`]).
/// Cedar builds and evaluates every policy's condition for every request,
/// so this cuts the work per request several times over. Actions have no
/// groups in the schema, so `action in [...]` is a list.
fn split_by_action(set: &PolicySet) -> Result<Vec<(&'static str, Indexed)>, PolicyError> {
    let builtin = |e: &dyn std::fmt::Display| PolicyError::Builtin(e.to_string());
    let action_type = EntityTypeName::from_str("Action").map_err(|e| builtin(&e))?;
    let mut out = Vec::new();
    for action in ACTIONS {
        let uid = EntityUid::from_type_name_and_id(action_type.clone(), EntityId::new(action));
        let mut part = Indexed::default();
        for p in set.policies() {
            let applies = match p.action_constraint() {
                ActionConstraint::Any => true,
                ActionConstraint::Eq(a) => a == uid,
                ActionConstraint::In(list) => list.contains(&uid),
            };
            if !applies {
                continue;
            }
            let target = match p.resource_constraint() {
                ResourceConstraint::Any | ResourceConstraint::Is(_) => &mut part.general,
                ResourceConstraint::In(e) | ResourceConstraint::IsIn(_, e) => part.within.entry(e).or_default(),
                ResourceConstraint::Eq(e) => part.exact.entry(e).or_default(),
            };
            target.add(p.clone()).map_err(|e| builtin(&e))?;
        }
        out.push((action, part));
    }
    Ok(out)
}

/// An error for `src` at the first labelled span of `diag`.
fn located(src: &Source, diag: &dyn Diagnostic, message: &str) -> PolicyError {
    let offset = diag.labels().and_then(|mut l| l.next()).map(|l| l.offset());
    let line = match (offset, src.generated) {
        (Some(off), false) => src.text.get(..off).map_or(0, |t| t.matches('\n').count() + 1),
        _ => 0,
    };
    let mut message = message.replace('\n', " ");
    if let Some(help) = diag.help() {
        message = format!("{message} ({help})");
    }
    PolicyError::Policy { path: src.path.clone(), line, message }
}

/// Reads a Cedar file and substitutes placeholders.
pub fn read_cedar(path: &Path, places: &Places) -> Result<Source, PolicyError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io { path: path.to_path_buf(), source })?;
    Ok(Source { path: path.to_path_buf(), text: places.substitute(&text), generated: false })
}

/// Reads and translates a policy.toml.
pub fn read_toml(path: &Path, places: &Places) -> Result<(Source, Modes), PolicyError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io { path: path.to_path_buf(), source })?;
    let t = policy_toml::translate(path, &text, &places.home)?;
    Ok((Source { path: path.to_path_buf(), text: t.cedar, generated: true }, t.modes))
}

/// The built-in policy as a source.
pub fn builtin(places: &Places) -> Source {
    Source {
        path: PathBuf::from("<built-in default.cedar>"),
        text: places.substitute(DEFAULT_POLICY),
        generated: false,
    }
}
