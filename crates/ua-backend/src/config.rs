//! `[backend]` configuration and the choice of backends to use.
//!
//! ```toml
//! [backend]
//! default = "anthropic"
//! fallback = ["local"]            # tried in order when the default is unreachable
//! max_tokens_per_session = 100000
//!
//! [backend.anthropic]
//! api_key_cmd = "pass show anthropic/api-key"
//! model = "claude-sonnet-4-5"
//!
//! [backend.local]
//! kind = "openai"
//! base_url = "http://127.0.0.1:8080/v1"
//! model = "qwen2.5-coder"
//! ```

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde::Deserialize;

use crate::error::BackendError;
use crate::key::KeySource;

/// The wire protocol a backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions, and every server that imitates it (ollama,
    /// llama.cpp, vLLM, LM Studio, OpenRouter).
    Openai,
}

/// The `[backend]` table of config.toml.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BackendSection {
    /// The backend to use unless `--backend` or `UNIXAGENT_BACKEND` says
    /// otherwise.
    pub default: Option<String>,
    /// Backends to try, in order, when the chosen one is unreachable.
    /// Without it, every other configured backend in name order.
    pub fallback: Option<Vec<String>>,
    /// Warn at 80 % of this many tokens in a session, stop at 100 %.
    pub max_tokens_per_session: Option<u64>,
    pub connect_timeout_secs: Option<u64>,
    /// The longest silence tolerated inside a response.
    pub read_timeout_secs: Option<u64>,
    pub max_retries: Option<u32>,
    /// `[backend.NAME]` tables.
    #[serde(flatten)]
    pub backends: BTreeMap<String, BackendConfig>,
}

/// One `[backend.NAME]` table. Every field is optional: the name
/// `anthropic`, `openai` or `ollama` alone implies sensible values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    pub kind: Option<Kind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable holding the key.
    pub api_key_env: Option<String>,
    /// A command printing the key, run once (wins over `api_key_env`).
    pub api_key_cmd: Option<String>,
    /// The output limit per response; default 8192, or a quarter of the
    /// context window if that is less.
    pub max_tokens: Option<u32>,
    /// Overrides the built-in context window table for this model.
    pub context_window: Option<u64>,
    /// Anthropic extended thinking budget in tokens; off when absent.
    pub thinking_budget: Option<u32>,
}

/// Command-line overrides (`--backend`, `--model`). Each wins over its
/// environment variable (`UNIXAGENT_BACKEND`, `UNIXAGENT_MODEL`), which wins
/// over config.toml.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub backend: Option<String>,
    pub model: Option<String>,
}

/// A backend with every setting decided, ready to build a provider from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendSpec {
    pub name: String,
    pub kind: Kind,
    pub model: String,
    pub base_url: String,
    pub key: KeySource,
    /// `None`: the default, which depends on the context window (see
    /// [`crate::limits::output_limit`]).
    pub max_tokens: Option<u32>,
    pub context_window: Option<u64>,
    pub thinking_budget: Option<u32>,
}

/// Built-in knowledge about the three well-known backend names.
struct Builtin {
    name: &'static str,
    kind: Kind,
    key_env: Option<&'static str>,
    base_env: Option<&'static str>,
    base_url: &'static str,
    model: &'static str,
}

const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "anthropic",
        kind: Kind::Anthropic,
        key_env: Some("ANTHROPIC_API_KEY"),
        base_env: Some("ANTHROPIC_BASE_URL"),
        base_url: "https://api.anthropic.com",
        model: "claude-sonnet-4-5",
    },
    Builtin {
        name: "openai",
        kind: Kind::Openai,
        key_env: Some("OPENAI_API_KEY"),
        base_env: Some("OPENAI_BASE_URL"),
        base_url: "https://api.openai.com/v1",
        model: "gpt-4o",
    },
    Builtin {
        name: "ollama",
        kind: Kind::Openai,
        key_env: None,
        base_env: None,
        base_url: "http://127.0.0.1:11434/v1",
        model: "llama3.2",
    },
];

/// ollama's default port on loopback.
pub const OLLAMA_ADDR: ([u8; 4], u16) = ([127, 0, 0, 1], 11434);

/// The one line shown when nothing at all is configured.
pub const NO_BACKEND: &str = "no LLM backend is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, start ollama, or add a [backend] section to ~/.config/unixagent/config.toml";

fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

fn builtin_for_kind(kind: Kind) -> &'static Builtin {
    match kind {
        Kind::Anthropic => &BUILTINS[0],
        Kind::Openai => &BUILTINS[1],
    }
}

fn set(env: &dyn Fn(&str) -> Option<String>, var: &str) -> Option<String> {
    env(var).filter(|v| !v.trim().is_empty())
}

impl BackendSection {
    /// Decides which backends to use, first the one to call and then its
    /// fallbacks in order.
    ///
    /// Precedence for the first: `--backend`, then `UNIXAGENT_BACKEND`, then
    /// `default`; its model is `--model`, then `UNIXAGENT_MODEL`, then its
    /// configured or built-in model. Fallbacks keep their own models. With none of those and no `[backend.NAME]` tables:
    /// anthropic if `ANTHROPIC_API_KEY` is set, else openai if
    /// `OPENAI_API_KEY` is set, else ollama if `ollama_answers()` says a
    /// server listens; else [`NO_BACKEND`] as the error.
    pub fn resolve(
        &self,
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        ollama_answers: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<BackendSpec>, BackendError> {
        let requested =
            overrides.backend.clone().or_else(|| set(env, "UNIXAGENT_BACKEND")).or_else(|| self.default.clone());
        let mut names: Vec<String> = Vec::new();
        match requested {
            Some(name) => names.push(name),
            None if self.backends.is_empty() => {
                for (name, var) in [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")] {
                    if set(env, var).is_some() {
                        names.push(name.to_owned());
                    }
                }
                if names.is_empty() && ollama_answers() {
                    names.push("ollama".to_owned());
                }
                if names.is_empty() {
                    return Err(BackendError::Config(NO_BACKEND.to_owned()));
                }
            }
            None => {}
        }
        let fallbacks: Vec<String> = match &self.fallback {
            Some(list) => list.clone(),
            None => self.backends.keys().cloned().collect(),
        };
        for name in fallbacks {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut specs = names.iter().map(|n| self.spec(n, env)).collect::<Result<Vec<_>, _>>()?;
        let model = overrides.model.clone().or_else(|| set(env, "UNIXAGENT_MODEL"));
        if let (Some(model), Some(first)) = (model, specs.first_mut()) {
            first.model = model;
        }
        Ok(specs)
    }

    fn spec(&self, name: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<BackendSpec, BackendError> {
        let configured = self.backends.get(name);
        let named = builtin(name);
        if configured.is_none() && named.is_none() {
            let known: Vec<&str> =
                self.backends.keys().map(String::as_str).chain(BUILTINS.iter().map(|b| b.name)).collect();
            return Err(BackendError::Config(format!(
                "unknown backend '{name}': add [backend.{name}] to config.toml or use one of {}",
                known.join(", ")
            )));
        }
        let cfg = configured.cloned().unwrap_or_default();
        let kind = match (cfg.kind, named) {
            (Some(k), _) => k,
            (None, Some(b)) => b.kind,
            (None, None) => {
                return Err(BackendError::Config(format!(
                    "[backend.{name}] needs kind = \"anthropic\" or kind = \"openai\""
                )));
            }
        };
        // A well-known name supplies its own defaults (ollama's port); any
        // other name borrows the defaults of its kind.
        let defaults = named.filter(|b| b.kind == kind).unwrap_or(builtin_for_kind(kind));
        let default_base = defaults.base_env.and_then(|v| set(env, v)).unwrap_or_else(|| defaults.base_url.to_owned());
        let base_url = cfg.base_url.clone().unwrap_or(default_base);
        let key = if let Some(cmd) = &cfg.api_key_cmd {
            KeySource::Command(cmd.clone())
        } else if let Some(var) = &cfg.api_key_env {
            KeySource::Env(var.clone())
        } else {
            match defaults.key_env {
                Some(var) if set(env, var).is_some() => KeySource::Env(var.to_owned()),
                // A self-hosted OpenAI-compatible server usually wants no
                // key; the hosted APIs always do, and the error says so.
                Some(_) if kind == Kind::Openai && base_url != defaults.base_url => KeySource::None,
                Some(var) => KeySource::Env(var.to_owned()),
                None => KeySource::None,
            }
        };
        Ok(BackendSpec {
            name: name.to_owned(),
            kind,
            model: cfg.model.unwrap_or_else(|| defaults.model.to_owned()),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            max_tokens: cfg.max_tokens,
            context_window: cfg.context_window,
            thinking_budget: cfg.thinking_budget,
        })
    }

    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.connect_timeout_secs.unwrap_or(10))
    }

    pub fn read_timeout(&self) -> Duration {
        Duration::from_secs(self.read_timeout_secs.unwrap_or(120))
    }
}

/// Whether something accepts TCP connections on ollama's default port. A
/// refused connection on loopback answers at once, so this costs nothing
/// when ollama is absent.
pub fn ollama_answers(timeout: Duration) -> bool {
    TcpStream::connect_timeout(&SocketAddr::from(OLLAMA_ADDR), timeout).is_ok()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
