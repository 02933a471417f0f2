//! The model backends: which are configured (the one a session calls and
//! its fallbacks, chosen exactly as a session chooses them), where each
//! one's key comes from (never the key itself), and, unless `--offline`,
//! whether its endpoint answers: a TLS handshake and one request that
//! costs no tokens (`ua_backend::probe`).
//!
//! All of it runs on a thread of its own, since an `api_key_cmd` or a slow
//! endpoint may take seconds.

use std::thread::JoinHandle;
use std::time::Duration;

use ua_backend::config::{BackendSpec, NO_BACKEND, Overrides, ollama_answers};
use ua_backend::key::KeySource;
use ua_backend::probe::{Answer, Probe, answer, probe};
use ua_backend::provider::ProviderSettings;
use ua_backend::transport::{Transport, TransportOptions};

use super::Check;

const AREA: &str = "backends";

/// The longest an endpoint gets to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct Running(Option<JoinHandle<Vec<Check>>>);

pub fn start(section: Option<toml::Table>, offline: bool) -> Running {
    let spawned = std::thread::Builder::new().name("doctor-backends".into()).spawn(move || checks(section, offline));
    Running(spawned.ok())
}

pub fn finish(running: Running) -> Vec<Check> {
    running.0.and_then(|h| h.join().ok()).unwrap_or_else(|| {
        vec![Check::problem(AREA, "backends", "the check itself failed", "run `unixagent doctor` again")]
    })
}

fn checks(section: Option<toml::Table>, offline: bool) -> Vec<Check> {
    let configured = section.is_some();
    let setup = crate::agent::backend::Setup { section, backend: None, model: None };
    let section = match setup.section() {
        Ok(s) => s,
        Err(e) => return vec![Check::problem(AREA, "backends", e, "fix the [backend] section of config.toml")],
    };
    let env = |k: &str| std::env::var(k).ok();
    let specs = match section.resolve(&Overrides::default(), &env, &mut || ollama_answers(Duration::from_millis(300))) {
        Ok(s) => s,
        Err(e) => {
            let text = e.to_string();
            let (what, fix) = text.split_once(": ").unwrap_or((&text, "see the README's Configuration section"));
            let what = if text == NO_BACKEND { "no LLM backend is configured" } else { what };
            return vec![Check::problem(AREA, "backends", what, fix)];
        }
    };
    let mut out = vec![Check::ok(AREA, "backends", chain(&specs, configured))];
    let mut options = TransportOptions::from_section(&section);
    options.connect_timeout = options.connect_timeout.min(PROBE_TIMEOUT);
    let transport = Transport::new(&options);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
    for (i, spec) in specs.iter().enumerate() {
        let bad = |name: String, what: String, fix: String| {
            if i == 0 { Check::problem(AREA, name, what, fix) } else { Check::warning(AREA, name, what, fix) }
        };
        // Reads the key as a session would, running api_key_cmd once.
        let settings = match ProviderSettings::from_spec(spec, &env) {
            Ok(s) => s,
            Err(e) => {
                let text = e.to_string();
                let fix = match &spec.key {
                    KeySource::Command(_) => "fix api_key_cmd, or run it yourself to see what it needs".to_string(),
                    KeySource::Env(var) => {
                        format!("set {var}, or api_key_cmd in [backend.{}] of config.toml", spec.name)
                    }
                    KeySource::None => "check the backend's settings in config.toml".to_string(),
                };
                out.push(bad(format!("key {}", spec.name), text, fix));
                continue;
            }
        };
        out.push(Check::ok(AREA, format!("key {}", spec.name), key_source(spec, &section)));
        if offline {
            out.push(Check::ok(AREA, format!("endpoint {}", spec.name), "not contacted (--offline)"));
            continue;
        }
        let (Ok(transport), Ok(rt)) = (&transport, &rt) else {
            out.push(bad(
                format!("endpoint {}", spec.name),
                "no HTTP client could be set up".into(),
                "run `unixagent doctor` again; if it persists, report it".into(),
            ));
            continue;
        };
        let p = rt.block_on(probe(&settings, transport, PROBE_TIMEOUT));
        out.push(endpoint(&spec.name, &settings.key_hint, &p, i == 0));
    }
    out
}

/// `anthropic (claude-sonnet-4-5 at https://api.anthropic.com), falling back on openai (…)`.
fn chain(specs: &[BackendSpec], configured: bool) -> String {
    let each: Vec<String> = specs.iter().map(|s| format!("{} ({} at {})", s.name, s.model, s.base_url)).collect();
    let how = if configured { "" } else { " (found from the environment, with no [backend] section)" };
    match each.split_first() {
        Some((first, [])) => format!("{first}{how}"),
        Some((first, rest)) => format!("{first}, falling back on {}{how}", rest.join(", ")),
        None => "none".to_string(),
    }
}

/// Where the key comes from, in words; never the key.
fn key_source(spec: &BackendSpec, section: &ua_backend::config::BackendSection) -> String {
    let named = section.backends.get(&spec.name);
    match &spec.key {
        KeySource::None => "none needed (a server that takes no key)".to_string(),
        KeySource::Env(var) if named.is_some_and(|b| b.api_key_env.is_some()) => {
            format!("found in the variable {var} (named by api_key_env in config.toml)")
        }
        KeySource::Env(var) => format!("found in the variable {var}"),
        KeySource::Command(cmd) => format!("printed by api_key_cmd `{cmd}` (config.toml)"),
    }
}

/// The line for what an endpoint did.
pub fn endpoint(name: &str, key_hint: &str, p: &Probe, first: bool) -> Check {
    let label = format!("endpoint {name}");
    let secs = format!("{:.2} s", p.took.as_secs_f64());
    match &p.outcome {
        Ok(status) => match answer(*status) {
            Answer::Fine => Check::ok(AREA, label, format!("{} answers (HTTP {status} in {secs})", p.url)),
            Answer::KeyRefused => Check::problem(
                AREA,
                label,
                format!("{} refuses the key (HTTP {status})", p.url),
                format!("check {key_hint}"),
            ),
            Answer::Answered if matches!(status, 404 | 405) => Check::ok(
                AREA,
                label,
                format!("{} answers (HTTP {status} in {secs}: no model list there, but the server is up)", p.url),
            ),
            Answer::Answered => Check::warning(
                AREA,
                label,
                format!("{} answers with HTTP {status}", p.url),
                "try again later; if it stays, the provider's status page may say why",
            ),
        },
        Err(e) => {
            let what = format!("{} does not answer: {e}", p.url);
            let fix = "check base_url in config.toml, the network, and HTTPS_PROXY if you use a proxy";
            if first { Check::problem(AREA, label, what, fix) } else { Check::warning(AREA, label, what, fix) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    fn probe_of(outcome: Result<u16, String>) -> Probe {
        Probe { url: "https://api.example/v1/models".into(), outcome, took: Duration::from_millis(120) }
    }

    #[test]
    fn a_refused_key_names_where_it_came_from_and_a_silent_endpoint_its_url() {
        let c = endpoint("anthropic", "ANTHROPIC_API_KEY", &probe_of(Ok(401)), true);
        assert_eq!(c.status, Status::Problem);
        assert_eq!(c.fix.as_deref(), Some("check ANTHROPIC_API_KEY"));
        assert_eq!(endpoint("x", "K", &probe_of(Ok(200)), true).status, Status::Ok);
        assert_eq!(endpoint("x", "K", &probe_of(Ok(404)), true).status, Status::Ok);
        assert_eq!(endpoint("x", "K", &probe_of(Ok(503)), true).status, Status::Warning);
        let c = endpoint("x", "K", &probe_of(Err("connection refused".into())), true);
        assert_eq!(c.status, Status::Problem);
        assert!(c.message.contains("https://api.example/v1/models does not answer: connection refused"));
        assert_eq!(endpoint("x", "K", &probe_of(Err("refused".into())), false).status, Status::Warning);
    }
}
