mod decode;
mod errors;
mod fuzz_corpus;
mod fuzz_regressions;
mod resilience;
mod roundtrip;
mod servers;
mod sse_edges;
mod streaming;

use std::path::PathBuf;
use std::time::Duration;

use ua_backend::config::Kind;
use ua_backend::key::ApiKey;
use ua_backend::provider::{HttpProvider, ProviderSettings};
use ua_backend::retry::RetryPolicy;
use ua_backend::transport::{Transport, TransportOptions};
use ua_testkit::provider::FakeProvider;

pub fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn fixtures() -> Vec<(String, Kind, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let kind = if name.starts_with("anthropic") { Kind::Anthropic } else { Kind::Openai };
            (name, kind, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5, "fixtures missing");
    out
}

/// Retries that never wait long: tests count requests, not time.
pub fn quick_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        max_retry_after: Duration::from_secs(5),
    }
}

pub fn transport(retry: RetryPolicy) -> Transport {
    Transport::new(&TransportOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        retry,
        use_proxy: false,
    })
    .unwrap()
}

pub fn settings(name: &str, kind: Kind, base_url: &str) -> ProviderSettings {
    ProviderSettings {
        name: name.to_owned(),
        kind,
        model: match kind {
            Kind::Anthropic => "claude-sonnet-4-5".to_owned(),
            Kind::Openai => "gpt-4o".to_owned(),
        },
        base_url: base_url.to_owned(),
        key: Some(ApiKey::new("test-key")),
        key_hint: "TEST_API_KEY".to_owned(),
        max_tokens: 1024,
        context_window: 200_000,
        thinking_budget: None,
    }
}

pub fn provider_for(server: &FakeProvider, kind: Kind, retry: RetryPolicy) -> HttpProvider {
    let base = match kind {
        Kind::Anthropic => server.base_url(),
        Kind::Openai => server.openai_base_url(),
    };
    HttpProvider::new(settings(&format!("fake-{kind:?}").to_lowercase(), kind, &base), transport(retry))
}

pub const WAIT: Duration = Duration::from_secs(10);
