//! The model provider, built from config when the first instruction needs
//! it, or as the process starts for work that will surely call the model
//! (building may run `api_key_cmd` or probe for a local ollama, and the
//! HTTP client reads the system's certificates, so it runs on a thread of
//! its own and the session waits without blocking).

use std::sync::Arc;

use ua_backend::config::{BackendSection, Overrides, ollama_answers};
use ua_backend::error::BackendError;
use ua_backend::provider::{Fallback, build_chain};
use ua_backend::transport::{Transport, TransportOptions};

/// How to find the backend: the `[backend]` config section and the
/// command line's `--backend` / `--model`.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub section: Option<toml::Table>,
    pub backend: Option<String>,
    pub model: Option<String>,
}

impl Setup {
    /// Reads the `[backend]` table; an invalid one is an error naming it.
    pub fn section(&self) -> Result<BackendSection, String> {
        match &self.section {
            None => Ok(BackendSection::default()),
            Some(t) => toml::Value::Table(t.clone()).try_into().map_err(|e: toml::de::Error| {
                format!("the [backend] section of the config is invalid: {}", e.message())
            }),
        }
    }

    /// `max_tokens_per_session`, read on its own so that a mistake
    /// elsewhere in `[backend]` does not drop the session's budget.
    pub fn session_limit(&self) -> Option<u64> {
        let v = self.section.as_ref()?.get("max_tokens_per_session")?.as_integer()?;
        u64::try_from(v).ok()
    }
}

/// A provider chain and warnings about fallbacks left out of it.
pub type Built = (Arc<Fallback>, Vec<String>);

/// Builds the provider chain. Blocking; `notice` is told of each fallback.
pub fn build(setup: &Setup, notice: ua_backend::provider::FallbackNotice) -> Result<Built, String> {
    let section = setup.section()?;
    let env = |k: &str| std::env::var(k).ok();
    let overrides = Overrides { backend: setup.backend.clone(), model: setup.model.clone() };
    let specs = section
        .resolve(&overrides, &env, &mut || ollama_answers(std::time::Duration::from_millis(300)))
        .map_err(|e| e.to_string())?;
    let transport = Transport::new(&TransportOptions::from_section(&section)).map_err(|e| e.to_string())?;
    let (chain, skipped) = build_chain(&specs, &transport, &env).map_err(|e: BackendError| e.to_string())?;
    let warnings = skipped.iter().map(|e| format!("a fallback backend is left out: {e}")).collect();
    Ok((Arc::new(chain.with_notice(notice)), warnings))
}

/// Everything a first model call would wait for, started on threads: the
/// backend's build ([`spawn_build`]) and the patterns that scrub the
/// first context (`ua_context::prepare`).
pub fn prepare(setup: Setup) -> Building {
    let _ = std::thread::Builder::new().name("prepare".into()).spawn(ua_context::prepare);
    spawn_build(setup)
}

/// A backend being built on a thread: its result, once there.
pub type Building = tokio::sync::oneshot::Receiver<Result<Built, String>>;

/// Starts [`build`] on a thread; the receiver gets the result. A fallback
/// taken later is told on the terminal.
pub fn spawn_build(setup: Setup) -> Building {
    let notice: ua_backend::provider::FallbackNotice = Arc::new(|failed, err, next| {
        let line = format!("\r\nunixagent: {failed} failed ({err}); trying {next}.\r\n");
        let _ = crate::terminal::out(line.as_bytes());
    });
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name("backend".into()).spawn(move || {
        let _ = tx.send(build(&setup, notice));
    });
    if let Err(e) = spawned {
        eprintln!("unixagent: could not start a thread to set up the model backend: {e}");
    }
    rx
}
