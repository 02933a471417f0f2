//! The session's own model endpoints on the sandbox's allowlist, so that a
//! child agent started in the sandboxed shell reaches its model through
//! the proxy without the user listing the model's host.
//!
//! Only the exact host and port of each configured backend (the default
//! and its fallbacks, as `--backend`, `--model` and the environment choose
//! them) are added, and only while a child may still start (the session
//! is not already as deep as `agent.max_depth` allows). SECURITY.md says
//! what that lets a sandboxed command reach.

use ua_backend::config::{BackendSection, Overrides};
use ua_sandbox::rules::{HostPattern, HostRule};

/// What the allowlist says of them.
pub const SOURCE: &str = "the session's model endpoint (child agents reach their model through the proxy)";

/// `host:port` of a base URL (`https://api.anthropic.com` →
/// `api.anthropic.com:443`, `http://[::1]:8080/v1` → `[::1]:8080`).
pub fn host_port(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if authority.is_empty() {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']')?;
        (format!("[{addr}]"), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port: u16 = match port {
        Some(p) => p.parse().ok()?,
        None => default,
    };
    Some(format!("{}:{port}", host.to_ascii_lowercase()))
}

/// The allowlist entries for the backends `setup` resolves to (none when
/// it resolves to none: the session could not reach a model either).
pub fn rules(setup: &crate::agent::backend::Setup) -> Vec<HostRule> {
    let Ok(section) = setup.section() else { return Vec::new() };
    rules_for(&section, &Overrides { backend: setup.backend.clone(), model: setup.model.clone() }, &|k| {
        std::env::var(k).ok()
    })
}

fn rules_for(section: &BackendSection, overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Vec<HostRule> {
    // No probe for a local ollama here: start-up must not wait on it.
    let Ok(specs) = section.resolve(overrides, env, &mut || false) else { return Vec::new() };
    let mut out: Vec<HostRule> = Vec::new();
    for s in specs {
        let Some(entry) = host_port(&s.base_url) else { continue };
        let Ok(host) = HostPattern::parse(&entry) else { continue };
        if out.iter().all(|r| r.host != host) {
            out.push(HostRule { host, source: SOURCE.into() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_become_exact_host_and_port() {
        assert_eq!(host_port("https://api.anthropic.com").as_deref(), Some("api.anthropic.com:443"));
        assert_eq!(host_port("http://127.0.0.1:8080/v1").as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(host_port("http://user:pw@Models.Example.com/x?y").as_deref(), Some("models.example.com:80"));
        assert_eq!(host_port("http://[::1]:11434/v1").as_deref(), Some("[::1]:11434"));
        assert_eq!(host_port("unix:///run/x.sock"), None);
        assert_eq!(host_port("http://h:notaport/"), None);
    }

    #[test]
    fn the_default_backend_and_its_fallbacks_are_listed() {
        let section: BackendSection = toml::from_str(
            "default = \"anthropic\"\nfallback = [\"local\"]\n[backend.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9000/v1\"\nmodel = \"m\"\n"
                .replace("[backend.local]", "[local]")
                .as_str(),
        )
        .unwrap();
        let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "k".to_string());
        let rules = rules_for(&section, &Overrides::default(), &env);
        let hosts: Vec<String> = rules.iter().map(|r| r.host.to_string()).collect();
        assert_eq!(hosts, ["api.anthropic.com:443", "127.0.0.1:9000"]);
        assert!(rules.iter().all(|r| r.source == SOURCE));
        assert!(rules[1].host.matches("127.0.0.1", 9000) && !rules[1].host.matches("127.0.0.1", 9001));
    }
}
