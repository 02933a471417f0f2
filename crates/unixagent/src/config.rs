//! Configuration: `config.toml`.
//!
//! Looked up in `--config`, then `$UNIXAGENT_CONFIG`, then
//! `$XDG_CONFIG_HOME/unixagent/config.toml` (`~/.config/…` when
//! XDG_CONFIG_HOME is unset). A missing default file is not an error; a
//! missing file that was asked for by name is. Invalid TOML is reported with
//! file, line and column. Unknown keys are warned about, never fatal, so a
//! config written for a newer unixagent still starts an older one.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    pub shell: ShellConfig,
    /// Sections read by parts of unixagent that load them themselves; kept
    /// here so they are not reported as unknown.
    pub agent: AgentConfig,
    pub context: ContextConfig,
    pub backend: Option<toml::Table>,
    pub judge: crate::agent::gate::JudgeSettings,
    pub journal: JournalConfig,
    pub sandbox: SandboxConfig,
    pub batch: BatchConfig,
    /// Prices by model name, for what turns cost (`--usage`).
    pub pricing: std::collections::BTreeMap<String, Price>,
    /// Spans: where they are written and where they are sent.
    pub telemetry: crate::trace::export::TelemetryConfig,
}

/// What a model costs, in US dollars per million tokens. Cache reads and
/// writes cost what input does unless given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of `u`, in millionths of a dollar.
    pub fn micros(&self, u: &ua_protocol::event::Usage) -> u64 {
        // Dollars per million tokens times tokens is millionths of dollars.
        #[allow(clippy::cast_precision_loss)]
        let cost = u.input_tokens as f64 * self.input
            + u.output_tokens as f64 * self.output
            + u.cache_read_tokens as f64 * self.cache_read.unwrap_or(self.input)
            + u.cache_write_tokens as f64 * self.cache_write.unwrap_or(self.input);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let micros = cost.max(0.0).round() as u64;
        micros
    }
}

/// Session journals.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct JournalConfig {
    /// Sessions last active longer ago than this many days are deleted
    /// (checked at most once a day, when a session starts). Unset: kept.
    pub retain_days: Option<u64>,
}

/// The kernel sandbox for agent commands.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SandboxConfig {
    /// `enforce` (what cannot be enforced stops agent commands) or
    /// `best-effort` (they run with what can be, and that is reported).
    pub mode: Option<String>,
    /// Start the interactive shell itself sandboxed (as `--sandbox`).
    pub interactive: bool,
}

/// Batch mode (`--json`).
#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct BatchConfig {
    /// A command waiting for an approval this long is denied.
    pub approval_timeout_secs: u64,
}

impl Default for BatchConfig {
    fn default() -> Self {
        Self { approval_timeout_secs: 120 }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct ShellConfig {
    /// The shell to run instead of $SHELL.
    pub command: Option<PathBuf>,
    /// Install OSC 133 shell integration (bash, zsh, fish).
    pub integration: bool,
    /// How long to wait for the first prompt marker before falling back to
    /// heuristic prompt detection, in milliseconds.
    pub integration_timeout_ms: u64,
    /// How the agent asks before running commands: auto | each | plan.
    pub confirm_mode: Option<String>,
}

impl Default for ShellConfig {
    fn default() -> Self {
        Self { command: None, integration: true, integration_timeout_ms: 5000, confirm_mode: None }
    }
}

/// How agent turns run.
#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// A command still running after this many seconds is interrupted.
    pub command_timeout_secs: u64,
    /// Output kept per command for the model, in bytes.
    pub output_cap_bytes: usize,
    /// Commands one turn may run.
    pub max_steps: usize,
    /// How deep child agents may nest (the first session is 0).
    pub max_depth: u32,
    /// How many agents under one first session may run at once.
    pub max_children: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self { command_timeout_secs: 300, output_cap_bytes: 1024 * 1024, max_steps: 50, max_depth: 3, max_children: 8 }
    }
}

/// What the model is told about the user's terminal.
#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct ContextConfig {
    /// Environment variables (names or globs like `LC_*`) the model may
    /// see. Names that look like secrets are never sent, whatever this says.
    pub include_env: Vec<String>,
    /// Lines of recent terminal output sent with an instruction.
    pub terminal_lines: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            include_env: ["LANG", "LC_*", "TERM", "EDITOR", "VIRTUAL_ENV", "CONDA_DEFAULT_ENV"]
                .map(String::from)
                .to_vec(),
            terminal_lines: 50,
        }
    }
}

/// A loaded config and the warnings met while loading it.
#[derive(Debug, Default)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("config file {path}, line {line}, column {column}: {message}")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
}

/// Where the config is, by the lookup order above. The bool says whether
/// the user named it (then it must exist).
pub fn locate(cli: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(p) = cli {
        return Some((p.to_path_buf(), true));
    }
    if let Some(p) = std::env::var_os("UNIXAGENT_CONFIG").filter(|p| !p.is_empty()) {
        return Some((PathBuf::from(p), true));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some((base.join("unixagent").join("config.toml"), false))
}

pub fn load(cli: Option<&Path>) -> Result<Loaded, ConfigError> {
    let Some((path, named)) = locate(cli) else {
        return Ok(Loaded::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => return Ok(Loaded::default()),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let (config, warnings) = parse(&path, &text)?;
    Ok(Loaded { config, warnings })
}

pub fn parse(path: &Path, text: &str) -> Result<(Config, Vec<String>), ConfigError> {
    let mut unknown = Vec::new();
    let de = toml::Deserializer::parse(text).map_err(|e| syntax(path, text, &e))?;
    let config: Config =
        serde_ignored::deserialize(de, |p| unknown.push(p.to_string())).map_err(|e| syntax(path, text, &e))?;
    let mut warnings: Vec<String> = unknown.into_iter().map(|k| unknown_key(path, text, &k)).collect();
    warnings.extend(backend_problem(path, text, config.backend.as_ref()));
    Ok((config, warnings))
}

/// The warning for a key unixagent does not read, with where it is.
fn unknown_key(path: &Path, text: &str, key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    let at = ua_policy::policy_toml::position(text, &parts)
        .map_or_else(|| path.display().to_string(), |(line, _)| format!("{}, line {line}", path.display()));
    if parts.first() == Some(&"policy") {
        return format!(
            "{at}: `[policy]` is not read from config.toml; the policy lives in policy.toml and policy.cedar beside it (`unixagent policy check` shows what is in force)"
        );
    }
    format!("{at}: unknown key `{key}` (ignored; check its spelling)")
}

/// `[backend]` is kept as a table and read when the model is first needed;
/// a mistake in it is found now, with its line, rather than at the first
/// instruction.
fn backend_problem(path: &Path, text: &str, table: Option<&toml::Table>) -> Option<String> {
    let table = table?;
    let e = toml::Value::Table(table.clone()).try_into::<ua_backend::config::BackendSection>().err()?;
    let (line, column) = backend_position(text, table, e.message()).unwrap_or((1, 1));
    Some(format!(
        "config file {}, line {line}, column {column}: the [backend] section is invalid ({}); instructions cannot reach a model until it is fixed",
        path.display(),
        e.message().trim()
    ))
}

/// Where in `[backend]` the setting a message names (its first word in
/// backticks) was written. The section's backends are flattened into it,
/// which leaves serde's errors without a position.
fn backend_position(text: &str, table: &toml::Table, message: &str) -> Option<(usize, usize)> {
    let named = message.split('`').nth(1);
    let here = |parts: &[&str]| ua_policy::policy_toml::position(text, parts);
    if let Some(key) = named {
        // The backend whose table holds the key, else the section itself.
        for (name, value) in table {
            if value.as_table().is_some_and(|t| t.contains_key(key)) {
                return here(&["backend", name, key]);
            }
        }
        if table.contains_key(key) {
            return here(&["backend", key]);
        }
    }
    here(&["backend"])
}

fn syntax(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let (line, column) = e.span().map_or((1, 1), |span| line_col(text, span.start));
    ConfigError::Syntax { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<(Config, Vec<String>), ConfigError> {
        parse(Path::new("/x/config.toml"), text)
    }

    #[test]
    fn prices_are_dollars_per_million_tokens() {
        let text = "[pricing.\"claude-sonnet-4-5\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\n\
                    [pricing.local]\ninput = 0.0\noutput = 0.0\n";
        let (c, w) = p(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let price = c.pricing["claude-sonnet-4-5"];
        let usage = ua_protocol::event::Usage {
            input_tokens: 1_000,
            output_tokens: 200,
            cache_read_tokens: 10_000,
            cache_write_tokens: 100,
        };
        // 1000 × 3 + 200 × 15 + 10000 × 0.3 + 100 × 3 (cache writes at the input price)
        assert_eq!(price.micros(&usage), 3_000 + 3_000 + 3_000 + 300);
        assert_eq!(c.pricing["local"].micros(&usage), 0);
        assert!(p("[pricing.m]\ninput = 1.0\n").is_err(), "output is required");
    }

    #[test]
    fn defaults_and_values() {
        let (c, w) = p("").unwrap();
        assert!(c.shell.integration && c.shell.command.is_none() && w.is_empty());
        assert_eq!(c.agent.command_timeout_secs, 300);
        assert_eq!(c.context.terminal_lines, 50);
        assert_eq!((c.agent.max_depth, c.agent.max_children), (3, 8));
        assert!(c.telemetry.enabled && c.telemetry.otlp_endpoint.is_none());
        let (c, w) = p("[agent]\nmax_depth = 1\nmax_children = 2\n[telemetry]\notlp_endpoint = \"http://c:4318\"\ncommand_context = \"all\"\n").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((c.agent.max_depth, c.agent.max_children), (1, 2));
        assert_eq!(c.telemetry.otlp_endpoint.as_deref(), Some("http://c:4318"));
        assert_eq!(c.telemetry.command_context, crate::trace::export::CommandContext::All);
        let (c, _) = p("[agent]\ncommand_timeout_secs = 2\n[context]\ninclude_env = [\"FOO\"]\n").unwrap();
        assert_eq!(c.agent.command_timeout_secs, 2);
        assert_eq!(c.context.include_env, vec!["FOO"]);
        let (c, w) = p("[shell]\ncommand = \"/bin/zsh\"\nintegration = false\n[backend]\ndefault = \"x\"\n").unwrap();
        assert_eq!(c.shell.command.as_deref(), Some(Path::new("/bin/zsh")));
        assert!(!c.shell.integration);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let e = p("[shell]\ncommand = \"/bin/zsh\"\nintegration = maybe\n").unwrap_err().to_string();
        assert!(e.starts_with("config file /x/config.toml, line 3, column 15:"), "{e}");
    }

    #[test]
    fn type_errors_are_located_too() {
        let e = p("[shell]\nintegration = \"yes\"\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn unknown_keys_warn() {
        let (c, w) = p("[shell]\nintegratoin = false\n[colours]\nx = 1\n").unwrap();
        assert!(c.shell.integration);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|w| w.contains("line 2: unknown key `shell.integratoin`")), "{w:?}");
        assert!(w.iter().any(|w| w.contains("line 3: unknown key `colours`")), "{w:?}");
    }

    #[test]
    fn a_policy_section_says_where_the_policy_lives() {
        let (_, w) = p("[shell]\n[policy]\ndefault = \"allow\"\n").unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("/x/config.toml, line 2: `[policy]` is not read from config.toml"), "{w:?}");
    }

    #[test]
    fn an_invalid_backend_is_reported_at_load_with_its_line() {
        let text = "[backend]\ndefault = \"local\"\nmax_tokens_per_session = 1000\n\n[backend.local]\nkind = \"openai\"\nmodle = \"x\"\n";
        let (c, w) = p(text).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("config file /x/config.toml, line 7, column 1: the [backend] section is invalid"),
            "{w:?}"
        );
        assert!(w[0].contains("modle"), "{w:?}");
        // The rest of the file still counts, and so does the session's
        // budget, which a mistake elsewhere in the section used to drop.
        let setup = crate::agent::backend::Setup { section: c.backend, ..Default::default() };
        assert!(setup.section().is_err());
        assert_eq!(setup.session_limit(), Some(1000));
        let (_, w) = p("[backend]\ndefault = \"local\"\n[backend.local]\nkind = \"openai\"\n").unwrap();
        assert!(w.is_empty(), "{w:?}");
    }
}
