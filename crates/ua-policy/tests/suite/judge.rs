//! The judge against the loopback fake provider: what it sends, and how its
//! answers count.

use super::Env;
use std::time::Duration;
use ua_backend::config::Kind;
use ua_backend::key::ApiKey;
use ua_backend::provider::{HttpProvider, ProviderSettings};
use ua_backend::retry::RetryPolicy;
use ua_backend::transport::{Transport, TransportOptions};
use ua_policy::gate::{DecidedBy, Outcome};
use ua_policy::grants::Grants;
use ua_policy::judge::{self, JudgeError, JudgeInput, Safety};
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

fn provider(server: &FakeProvider, kind: Kind) -> HttpProvider {
    let transport = Transport::new(&TransportOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_secs(1),
        },
        use_proxy: false,
    })
    .unwrap();
    let base_url = match kind {
        Kind::Anthropic => server.base_url(),
        Kind::Openai => server.openai_base_url(),
    };
    HttpProvider::new(
        ProviderSettings {
            name: "judge".into(),
            kind,
            model: "judge-model".into(),
            base_url,
            key: Some(ApiKey::new("test-key")),
            key_hint: "TEST_API_KEY".into(),
            max_tokens: 1024,
            context_window: 200_000,
            thinking_budget: None,
        },
        transport,
    )
}

fn input() -> JudgeInput {
    JudgeInput {
        commands: vec!["rm -rf build".into()],
        instruction: Some("clean the build output".into()),
        cwd: "/srv/project".into(),
    }
}

#[tokio::test]
async fn the_judge_sees_only_commands_instruction_and_cwd() {
    let answer = r#"{"verdict": "unsafe", "reason": "build holds the release artefacts", "safer_alternative": "rm -rf build/tmp"}"#;
    let server = FakeProvider::start(Scenario::new().turn(Turn::text(answer))).unwrap();
    let p = provider(&server, Kind::Anthropic);
    let v = judge::judge(&p, &input()).await.unwrap();
    assert_eq!(v.safety, Safety::Unsafe);
    assert_eq!(v.reason, "build holds the release artefacts");
    assert_eq!(v.safer_alternative.as_deref(), Some("rm -rf build/tmp"));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].json();
    assert_eq!(body["stream"], true);
    assert!(body.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{body}");
    assert_eq!(body["max_tokens"], 512);
    assert!(body["system"].to_string().contains("You review shell commands"), "{body}");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "one user message, no conversation");
    let text = messages[0].to_string();
    for want in ["rm -rf build", "clean the build output", "/srv/project"] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
    // Nothing from the environment travels with it.
    let whole = String::from_utf8_lossy(&reqs[0].body).into_owned();
    for var in ["PATH", "HOME", "USER"] {
        if let Ok(val) = std::env::var(var)
            && val.len() > 3
        {
            assert!(!whole.contains(&val), "${var} leaked into the judge request");
        }
    }
}

#[tokio::test]
async fn the_openai_format_works_too() {
    let server = FakeProvider::start(
        Scenario::new().turn(Turn::text("```json\n{\"verdict\":\"safe\",\"reason\":\"asked for\"}\n```")),
    )
    .unwrap();
    let v = judge::judge(&provider(&server, Kind::Openai), &input()).await.unwrap();
    assert_eq!(v.safety, Safety::Safe);
    let body = server.requests()[0].json();
    assert_eq!(body["messages"].as_array().unwrap().len(), 2, "system + one user message: {body}");
}

#[tokio::test]
async fn an_unreadable_answer_is_an_error_not_a_pass() {
    let server = FakeProvider::start(Scenario::new().turn(Turn::text("Looks fine to me!"))).unwrap();
    let r = judge::judge(&provider(&server, Kind::Anthropic), &input()).await;
    assert!(matches!(r, Err(JudgeError::Unreadable(_))), "{r:?}");
}

#[tokio::test]
async fn judge_failures_deny_in_block_mode_and_warn_otherwise() {
    let env = Env::new();
    env.config_file("policy.toml", "[approval]\ndefault = \"allow\"\n");
    let gate = env.gate();
    let server = FakeProvider::start(Scenario::new().turn(Turn::status(500))).unwrap();
    let p = provider(&server, Kind::Anthropic);

    let req = env.request("rm -rf build");
    let d = gate.decide(&req, &Grants::new());
    assert!(d.run_judge());
    let r = judge::judge(&p, &d.judge_input(&req)).await;
    assert!(matches!(r, Err(JudgeError::Backend(_))), "{r:?}");
    let warned = gate.apply_judge(d, r);
    assert_eq!(warned.outcome, Outcome::Allow);
    assert_eq!(warned.notes.len(), 1);

    let mut child = env.request("rm -rf build");
    child.depth = 1;
    child.human_attached = false;
    let d = gate.decide(&child, &Grants::new());
    let r = judge::judge(&p, &d.judge_input(&child)).await;
    let blocked = gate.apply_judge(d, r);
    assert_eq!(blocked.outcome, Outcome::Deny);
    assert_eq!(blocked.decided_by, DecidedBy::Judge);
}

#[tokio::test]
async fn a_safe_verdict_cannot_rescue_a_denied_command() {
    let env = Env::new();
    env.config_file("policy.toml", "[approval]\ndefault = \"allow\"\n");
    let gate = env.gate();
    let server =
        FakeProvider::start(Scenario::new().turn(Turn::text(r#"{"verdict":"safe","reason":"the user asked"}"#)))
            .unwrap();
    let req = env.request("rm -rf ~");
    let d = gate.decide(&req, &Grants::new());
    assert_eq!(d.outcome, Outcome::Deny);
    let v = judge::judge(&provider(&server, Kind::Anthropic), &d.judge_input(&req)).await;
    assert_eq!(gate.apply_judge(d, v).outcome, Outcome::Deny);
}
