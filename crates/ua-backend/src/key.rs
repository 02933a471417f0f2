//! API keys: where they come from and how they are kept out of output.

use std::fmt;
use std::process::{Command, Stdio};

use crate::error::BackendError;

/// A secret API key. It has no `Display`, its `Debug` prints a placeholder,
/// and the only way to read it is [`ApiKey::expose`], which the transport
/// calls when it sets the request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where a backend's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// No key: local OpenAI-compatible servers (ollama, llama.cpp) need none.
    None,
    /// An environment variable, read when the provider is built.
    Env(String),
    /// A shell command whose stdout is the key, run once when the provider
    /// is built (`pass show anthropic/api-key`).
    Command(String),
}

impl KeySource {
    /// What to tell the user to check when the key is rejected.
    pub fn hint(&self) -> String {
        match self {
            Self::None => "that the server needs no API key".to_owned(),
            Self::Env(var) => var.clone(),
            Self::Command(cmd) => format!("the output of api_key_cmd `{cmd}`"),
        }
    }

    /// Reads the key. `env` is the environment lookup (the process
    /// environment in the binary, a map in tests).
    pub fn resolve(&self, backend: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<ApiKey>, BackendError> {
        match self {
            Self::None => Ok(None),
            Self::Env(var) => match env(var) {
                Some(v) if !v.trim().is_empty() => Ok(Some(ApiKey(v.trim().to_owned()))),
                _ => Err(BackendError::Config(format!(
                    "backend '{backend}' needs an API key: set {var} or api_key_cmd in [backend.{backend}]"
                ))),
            },
            Self::Command(cmd) => run_key_command(backend, cmd).map(Some),
        }
    }
}

/// Runs `api_key_cmd` through `sh -c`. Its stdout is the key and never
/// appears in an error; its stderr (first line, bounded) does, because that
/// is where `pass` and friends say what went wrong.
fn run_key_command(backend: &str, cmd: &str) -> Result<ApiKey, BackendError> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            BackendError::Config(format!("api_key_cmd `{cmd}` for backend '{backend}' could not be started: {e}"))
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        let first: String = first.chars().take(200).collect();
        let why = if first.is_empty() { String::new() } else { format!(": {first}") };
        return Err(BackendError::Config(format!(
            "api_key_cmd `{cmd}` for backend '{backend}' failed with {}{why}",
            output.status
        )));
    }
    // `pass` prints the secret on the first line and metadata after it.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let key = stdout.lines().next().unwrap_or("").trim().to_owned();
    if key.is_empty() {
        return Err(BackendError::Config(format!("api_key_cmd `{cmd}` for backend '{backend}' printed no key")));
    }
    Ok(ApiKey(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn debug_never_shows_the_key() {
        let k = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
        assert_eq!(k.expose(), "sk-secret-123");
    }

    #[test]
    fn command_key_is_first_line_trimmed() {
        let k = KeySource::Command("printf 'sk-abc  \\nurl: x\\n'".into()).resolve("b", &no_env).unwrap().unwrap();
        assert_eq!(k.expose(), "sk-abc");
    }

    #[test]
    fn failing_command_names_the_command_not_the_key() {
        let src = KeySource::Command("echo sk-leaked; echo 'no such entry' >&2; exit 3".into());
        let e = src.resolve("anthropic", &no_env).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("api_key_cmd `echo sk-leaked;"), "{msg}");
        assert!(msg.contains("no such entry"), "{msg}");
        assert!(msg.contains("exit status: 3"), "{msg}");
        // The command text itself contains the string, so check the
        // rendered parts after it: stdout must not be quoted back.
        let after = msg.split('`').nth(2).unwrap_or("");
        assert!(!after.contains("sk-leaked"), "{msg}");
    }

    #[test]
    fn empty_output_is_an_error() {
        let e = KeySource::Command("true".into()).resolve("x", &no_env).unwrap_err();
        assert!(e.to_string().contains("printed no key"));
    }

    #[test]
    fn env_key_missing_says_what_to_set() {
        let e = KeySource::Env("OPENAI_API_KEY".into()).resolve("openai", &no_env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "backend 'openai' needs an API key: set OPENAI_API_KEY or api_key_cmd in [backend.openai]"
        );
        let k = KeySource::Env("K".into()).resolve("openai", &|_| Some("v\n".into())).unwrap();
        assert_eq!(k.map(|k| k.expose().to_owned()), Some("v".into()));
    }
}
