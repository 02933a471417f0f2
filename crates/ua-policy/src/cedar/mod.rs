//! Cedar authorization of one analysed command.
//!
//! The schema (`policy/schema.cedarschema`) has one principal type, `Agent`,
//! and five actions: `exec` and `spawn_agent` on a `Command` (one per
//! program the command runs), `read` and `write` on a `File` (files are `in`
//! every ancestor `Directory`), and `connect` on a `Host`. A command is one
//! batch of requests; see [`Engine::evaluate`] for how their answers
//! combine.
//!
//! Policies come in **layers**. The base layer is the built-in policy plus
//! the user's `policy.cedar` and translated `policy.toml`. Each policy file
//! given to a child agent (`--policy`) adds a layer made of the built-in
//! policy plus that file. A request is forbidden when any layer forbids it
//! and permitted only when every layer permits it, and its fallback mode is
//! the strictest of the layers' modes: a child's policy can only narrow what
//! its parent allowed, never widen it.

pub mod load;
pub(crate) mod request;
pub mod sandbox;

use crate::classify::Analysis;
use crate::error::PolicyError;
use crate::policy_toml::{Mode, Modes};
use cedar_policy::{Authorizer, Context, Decision as CedarDecision, EntityUid, PolicyId, PolicySet, Request, Schema};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

pub use load::{Places, Source, Sources};
pub use request::Subject;
pub use sandbox::{SandboxTerms, sandbox_terms};

/// The actions of the schema.
pub const ACTIONS: [&str; 5] = ["exec", "spawn_agent", "read", "write", "connect"];

/// What we know about one loaded policy.
#[derive(Debug, Clone)]
pub struct PolicyInfo {
    /// Its `@id` annotation, or `#N` (its position in the file).
    pub id: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Forbid or permit.
    pub forbid: bool,
    /// Its `@reason` annotation.
    pub reason: Option<String>,
}

/// A set of policies evaluated together, with its fallback modes.
#[derive(Debug)]
pub struct Layer {
    /// `base`, or the narrowing file's position.
    pub name: String,
    /// The layer's policies split by the action they can apply to.
    pub(crate) by_action: Vec<(&'static str, Indexed)>,
    pub(crate) info: HashMap<PolicyId, PolicyInfo>,
    /// What requests no policy of this layer permits fall back to.
    pub modes: Modes,
}

impl Layer {
    /// How many policies this layer holds.
    pub fn len(&self) -> usize {
        self.info.len()
    }

    /// True when the layer holds no policy.
    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }
}

/// One action's policies of a layer, indexed by their resource scope.
///
/// A policy scoped `resource in E` can only be satisfied by a request whose
/// resource is `E` or in `E`, and one scoped `resource == E` only by `E`:
/// Cedar tests the scope before the conditions and evaluates nothing after
/// a test fails, so such a policy can neither match nor err on any other
/// resource. They are asked only about those resources, which leaves most
/// requests two or three policies to evaluate instead of every credential
/// store's.
#[derive(Debug, Default)]
pub(crate) struct Indexed {
    /// Policies whose scope names no resource: asked about every request.
    pub general: PolicySet,
    /// Policies scoped `resource in E` (or `resource is T in E`), by `E`.
    pub within: HashMap<EntityUid, PolicySet>,
    /// Policies scoped `resource == E`, by `E`.
    pub exact: HashMap<EntityUid, PolicySet>,
}

impl Indexed {
    /// The sets to ask about a resource that is `in` each of `ancestors`.
    fn sets<'a>(&'a self, resource: &EntityUid, ancestors: &'a [EntityUid]) -> impl Iterator<Item = &'a PolicySet> {
        let own = self.within.get(resource).into_iter().chain(self.exact.get(resource));
        let above = ancestors.iter().filter_map(|a| self.within.get(a));
        std::iter::once(&self.general).chain(own).chain(above).filter(|s| !s.is_empty())
    }

    fn policies(&self) -> impl Iterator<Item = &cedar_policy::Policy> {
        let sets = std::iter::once(&self.general).chain(self.within.values()).chain(self.exact.values());
        sets.flat_map(PolicySet::policies)
    }
}

/// A policy that answered a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The policy's `@id` (or `#N`).
    pub policy: String,
    /// The file it came from.
    pub file: String,
    /// Its `@reason`, if any.
    pub reason: Option<String>,
    /// The request it answered (`write /home/u/.ssh/id_rsa`).
    pub request: String,
}

/// A request no policy permitted (nor forbade).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    /// The request.
    pub request: String,
    /// Its action.
    pub action: &'static str,
    /// Its fallback mode (strictest over the layers).
    pub mode: Mode,
}

/// Cedar's answer for a whole command.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verdict {
    /// The first forbid that matched, if any.
    pub forbid: Option<Hit>,
    /// A request that could not be evaluated (a policy errored, or the
    /// request could not be built). Treated as a denial.
    pub error: Option<String>,
    /// Permits that answered the requests that were permitted.
    pub permits: Vec<Hit>,
    /// Requests no policy permitted.
    pub unmatched: Vec<Unmatched>,
}

impl Verdict {
    /// True when every request was permitted and none forbidden.
    pub fn permitted(&self) -> bool {
        self.forbid.is_none() && self.error.is_none() && self.unmatched.is_empty()
    }

    /// The strictest fallback among the unmatched requests, and the request.
    pub fn fallback(&self) -> Option<&Unmatched> {
        self.unmatched.iter().max_by_key(|u| u.mode)
    }
}

/// The loaded policies, ready to answer.
#[derive(Debug)]
pub struct Engine {
    schema: Schema,
    layers: Vec<Layer>,
    authorizer: Authorizer,
    types: request::Types,
    directories: request::Directories,
}

enum Answer {
    Permit(Vec<PolicyId>),
    Forbid(Vec<PolicyId>),
    NoMatch,
    Error(String),
}

impl Engine {
    /// Builds an engine from layers (the first is the base layer).
    pub fn new(schema: Schema, layers: Vec<Layer>) -> Result<Engine, PolicyError> {
        let types = request::Types::new().map_err(PolicyError::Builtin)?;
        let directories = layers
            .iter()
            .flat_map(|l| l.by_action.iter())
            .flat_map(|(_, set)| set.policies())
            .flat_map(|p| p.entity_literals())
            .filter(|uid| uid.type_name() == &types.directory)
            .map(|uid| uid.id().unescaped().to_string())
            .collect();
        Ok(Engine { schema, layers, authorizer: Authorizer::new(), types, directories })
    }

    /// The schema policies were validated against.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The layers, base first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Evaluates every request the command makes: one `exec` per part (and
    /// `spawn_agent` for unixagent), one `read`/`write` per path, one
    /// `connect` per host. Evaluation errors deny (fail closed).
    pub fn evaluate(&self, analysis: &Analysis, who: &Subject<'_>) -> Verdict {
        let mut v = Verdict::default();
        let batch = match request::build(&self.types, &self.directories, analysis, who) {
            Ok(b) => b,
            Err(e) => {
                v.error = Some(format!("cannot build the policy request: {e}"));
                return v;
            }
        };
        let command = analysis.parsed.source.as_str();
        let level = analysis.risk.level();
        // Queries come grouped by program, and the context differs only in
        // the program: build it once per program.
        let mut context: Option<(&str, Result<Context, String>)> = None;
        for q in &batch.queries {
            let ctx = match &context {
                Some((program, ctx)) if *program == q.program => ctx.clone(),
                _ => {
                    let ctx = request::context(&batch, q, command, level);
                    context = Some((&q.program, ctx.clone()));
                    ctx
                }
            };
            let req = ctx.and_then(|ctx| {
                Request::new(batch.principal.clone(), self.types.action(q.action), q.resource.clone(), ctx, None)
                    .map_err(|e| e.to_string())
            });
            let req = match req {
                Ok(r) => r,
                Err(e) => {
                    v.error.get_or_insert(format!("cannot build the policy request for {}: {e}", q.label));
                    continue;
                }
            };
            let mut permits = Vec::new();
            let mut mode = Mode::Allow;
            let mut unmatched = false;
            for layer in &self.layers {
                match self.ask(layer, q, &req, &batch) {
                    Answer::Forbid(ids) => {
                        if v.forbid.is_none() {
                            v.forbid = self.hit(layer, &ids, &q.label);
                        }
                    }
                    Answer::Error(e) => {
                        v.error.get_or_insert(format!("{} failed for {}: {e}", layer.name, q.label));
                    }
                    Answer::Permit(ids) => permits.extend(self.hit(layer, &ids, &q.label)),
                    Answer::NoMatch => unmatched = true,
                }
                mode = mode.max(layer.modes.of(q.action));
            }
            if unmatched {
                v.unmatched.push(Unmatched { request: q.label.clone(), action: q.action, mode });
            } else {
                v.permits.extend(permits);
            }
        }
        v
    }

    fn ask(&self, layer: &Layer, q: &request::Query, req: &Request, batch: &request::Batch) -> Answer {
        let Some((_, indexed)) = layer.by_action.iter().find(|(a, _)| *a == q.action) else {
            return Answer::Error(format!("unknown action {}", q.action));
        };
        // Several sets answer as one: any error fails, any forbid denies,
        // any permit allows.
        let mut errors = Vec::new();
        let (mut forbids, mut permits) = (Vec::new(), Vec::new());
        for set in indexed.sets(&q.resource, &q.ancestors) {
            let resp = self.authorizer.is_authorized(req, set, &batch.entities);
            errors.extend(resp.diagnostics().errors().map(ToString::to_string));
            let ids = resp.diagnostics().reason().cloned();
            match resp.decision() {
                CedarDecision::Allow => permits.extend(ids),
                CedarDecision::Deny => forbids.extend(ids),
            }
        }
        if !errors.is_empty() {
            return Answer::Error(errors.join("; "));
        }
        // Several policies can match; report them in a stable order.
        let sorted = |mut ids: Vec<PolicyId>| {
            ids.sort_by_key(ToString::to_string);
            ids
        };
        if !forbids.is_empty() {
            Answer::Forbid(sorted(forbids))
        } else if !permits.is_empty() {
            Answer::Permit(sorted(permits))
        } else {
            Answer::NoMatch
        }
    }

    fn hit(&self, layer: &Layer, ids: &[PolicyId], request: &str) -> Option<Hit> {
        let info = layer.info.get(ids.first()?)?;
        Some(Hit {
            policy: info.id.clone(),
            file: info.file.display().to_string(),
            reason: info.reason.clone(),
            request: request.to_string(),
        })
    }
}

#[cfg(test)]
mod tests;
