use super::*;

/// llama.cpp's server (tools/server, `exceed_context_size_error`), HTTP 400.
const LLAMA: &str = r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}"#;
/// The same error from builds that still answered it with HTTP 500.
const LLAMA_OLD: &str = r#"{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}"#;
/// vLLM (and OpenAI) when prompt plus completion is over the window.
const VLLM_OLD: &str = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 8292 tokens (100 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
/// Newer vLLM, same situation.
const VLLM_NEW: &str = r#"{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}"#;
/// vLLM when the prompt alone is over the window.
const VLLM_INPUT: &str = r#"{"error":{"message":"This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}}"#;
/// OpenAI, prompt plus completion over the window.
const OPENAI_COMPLETION: &str = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9300 tokens (1108 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
/// OpenAI, prompt alone over the window.
const OPENAI_PROMPT: &str = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9210 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
/// OpenAI, an output limit over the model's own.
const OPENAI_MAX_OUTPUT: &str = r#"{"error":{"message":"max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.","type":"invalid_request_error","param":"max_tokens","code":null}}"#;
/// Anthropic, prompt plus max_tokens over the window.
const ANTHROPIC_SUM: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"},"request_id":"req_011CUB2XUHWkFnQzxcKBbjpF"}"#;
/// Anthropic, an output limit over the model's own.
const ANTHROPIC_MAX_OUTPUT: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929"}}"#;
/// Anthropic, prompt alone over the window.
const ANTHROPIC_PROMPT: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
/// LiteLLM's proxy passing an overflow on.
const LITELLM: &str = r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 4096 tokens. However, your request has 5120 input tokens. Please reduce the length of the input messages.","type":null,"param":null,"code":"400"}}"#;

fn stated(window: Option<u64>, prompt: Option<u64>, output: Option<u64>, max_output: Option<u64>) -> Stated {
    Stated { window, prompt, output, max_output }
}

#[test]
fn each_servers_numbers_are_read() {
    let cases = [
        (LLAMA, stated(Some(4096), Some(4390), None, None)),
        (LLAMA_OLD, stated(Some(256), Some(1407), None, None)),
        (VLLM_OLD, stated(Some(4096), Some(100), Some(8192), None)),
        (VLLM_NEW, stated(Some(4096), Some(2778), Some(8000), None)),
        (VLLM_INPUT, stated(Some(1536), Some(4176), None, None)),
        (OPENAI_COMPLETION, stated(Some(8192), Some(1108), Some(8192), None)),
        (OPENAI_PROMPT, stated(Some(8192), Some(9210), None, None)),
        (OPENAI_MAX_OUTPUT, stated(None, None, Some(100_000), Some(16_384))),
        (ANTHROPIC_SUM, stated(Some(200_000), Some(178_959), Some(64_000), None)),
        (ANTHROPIC_MAX_OUTPUT, stated(None, None, Some(100_000), Some(64_000))),
        (ANTHROPIC_PROMPT, stated(Some(200_000), Some(210_000), None, None)),
        (LITELLM, stated(Some(4096), Some(5120), None, None)),
    ];
    for (body, want) in cases {
        assert_eq!(Stated::parse(body), want, "{body}");
    }
    let functions = "This model's maximum context length is 4097 tokens. However, you requested 4200 tokens (3000 in the messages, 200 in the functions, 1000 in the completion).";
    assert_eq!(Stated::parse(functions), stated(Some(4097), Some(3200), Some(1000), None));
    assert_eq!(Stated::parse("bad request"), Stated::default());
}

#[test]
fn a_prompt_that_fits_with_too_much_output_is_an_output_overflow() {
    for body in [VLLM_OLD, VLLM_NEW, OPENAI_COMPLETION, OPENAI_MAX_OUTPUT, ANTHROPIC_SUM, ANTHROPIC_MAX_OUTPUT] {
        assert_eq!(overflow(400, body), Some(Overflow::Output), "{body}");
    }
    for body in [LLAMA, VLLM_INPUT, OPENAI_PROMPT, ANTHROPIC_PROMPT, LITELLM] {
        assert_eq!(overflow(400, body), Some(Overflow::Context), "{body}");
    }
    // llama.cpp said it with a 500 for a while; other 500s are not overflows.
    assert_eq!(overflow(500, LLAMA_OLD), Some(Overflow::Context));
    assert_eq!(
        overflow(500, r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#),
        Some(Overflow::Context)
    );
    assert_eq!(overflow(500, OPENAI_PROMPT), None);
    assert_eq!(
        overflow(
            413,
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#
        ),
        Some(Overflow::Context)
    );
    assert_eq!(overflow(400, r#"{"error":{"message":"Invalid 'messages': empty array"}}"#), None);
    assert_eq!(overflow(429, LLAMA), None);
}

#[test]
fn room_for_output_is_the_window_less_the_prompt_and_the_model_cap() {
    assert_eq!(Stated::parse(VLLM_OLD).room_for_output(), Some(3996));
    assert_eq!(Stated::parse(VLLM_NEW).room_for_output(), Some(1318));
    assert_eq!(Stated::parse(ANTHROPIC_SUM).room_for_output(), Some(21_041));
    assert_eq!(Stated::parse(OPENAI_MAX_OUTPUT).room_for_output(), Some(16_384));
    assert_eq!(Stated::parse(LLAMA).room_for_output(), None, "the prompt alone does not fit");
}

#[test]
fn the_default_output_limit_leaves_the_prompt_room() {
    assert_eq!(output_limit(None, 200_000), 8192);
    assert_eq!(output_limit(None, 8192), 2048);
    assert_eq!(output_limit(None, 4096), 1024);
    assert_eq!(output_limit(Some(32_000), 200_000), 32_000, "an explicit setting is kept");
    assert_eq!(output_limit(Some(8192), 8192), 4096, "but never takes more than half the window");
    assert_eq!(output_limit(None, 0), 1);
}

fn context_err(body: &str) -> BackendError {
    BackendError::ContextTooLong { backend: "b".into(), detail: "too long".into(), stated: Stated::parse(body) }
}

fn output_err(body: &str) -> BackendError {
    BackendError::OutputTooLong { backend: "b".into(), detail: "too long".into(), stated: Stated::parse(body) }
}

#[test]
fn an_output_overflow_retries_once_with_the_room_left_then_calls_go_back_to_normal() {
    let mut l = CallLimits::default();
    l.start_call();
    assert_eq!(l.request_max_tokens(8192), None);
    let r = l.recover(&output_err(VLLM_OLD), 8192, 8192);
    assert_eq!(r, Some(Recovery::LowerMaxTokens { from: 8192, to: 3996 }));
    assert!(r.and_then(|r| r.notice()).is_some_and(|n| n.contains("max_tokens = 3996")));
    l.start_call();
    assert_eq!(l.request_max_tokens(8192), Some(3996), "the retry asks for what fits");
    assert_eq!(l.window(8192), 4096, "and the stated window is learned");
    assert!(!l.trimming());
    // The next call reserves a quarter of the learned window.
    l.start_call();
    assert_eq!(l.request_max_tokens(8192), Some(1024));
    assert_eq!(l.prompt_budget(8192, 8192, 100), 4096 - 1024 - 100);
}

#[test]
fn a_model_output_cap_is_kept_for_the_session() {
    let mut l = CallLimits::default();
    l.start_call();
    let r = l.recover(&output_err(OPENAI_MAX_OUTPUT), 128_000, 100_000);
    assert_eq!(r, Some(Recovery::LowerMaxTokens { from: 100_000, to: 16_384 }));
    l.start_call();
    l.start_call();
    assert_eq!(l.request_max_tokens(100_000), Some(16_384));
    assert_eq!(l.window(128_000), 128_000);
}

#[test]
fn too_little_room_beside_the_prompt_refits_instead() {
    // 4000 of 4096 used by the prompt: 96 tokens of answer is no answer.
    let body = "This model's maximum context length is 4096 tokens. However, you requested 6048 tokens (4000 in the messages, 2048 in the completion).";
    let mut l = CallLimits::default();
    l.start_call();
    assert_eq!(l.recover(&output_err(body), 8192, 8192), Some(Recovery::Refit { window: 4096, assumed: 8192 }));
    l.start_call();
    assert_eq!(l.request_max_tokens(8192), Some(1024));
    assert_eq!(l.prompt_budget(8192, 8192, 0), 3072);
}

#[test]
fn a_stated_window_is_learned_then_the_budget_is_halved_then_it_gives_up() {
    let mut l = CallLimits::default();
    l.start_call();
    let r = l.recover(&context_err(LLAMA), 8192, 2048);
    assert_eq!(r, Some(Recovery::Refit { window: 4096, assumed: 8192 }));
    assert!(r.and_then(|r| r.notice()).is_some_and(|n| n.contains("4096 tokens")));
    l.start_call();
    assert_eq!(l.window(8192), 4096);
    assert_eq!(l.request_max_tokens(2048), Some(1024));
    assert!(!l.trimming());
    // Still too long (the estimate was off): halve, once.
    assert_eq!(l.recover(&context_err(LLAMA), 8192, 2048), Some(Recovery::Trim));
    l.start_call();
    assert!(l.trimming());
    assert_eq!(l.recover(&context_err(LLAMA), 8192, 2048), None);
    // A new call starts clean but keeps the window.
    l.start_call();
    assert!(!l.trimming());
    assert_eq!(l.window(200_000), 4096);
}

#[test]
fn without_a_stated_window_a_context_overflow_halves_once() {
    let mut l = CallLimits::default();
    l.start_call();
    assert_eq!(l.recover(&context_err(ANTHROPIC_PROMPT), 200_000, 8192), Some(Recovery::Trim));
    assert_eq!(Recovery::Trim.notice(), None);
    l.start_call();
    assert!(l.trimming());
    assert_eq!(l.window(200_000), 200_000, "a larger stated window is not learned");
    assert_eq!(l.recover(&context_err(ANTHROPIC_PROMPT), 200_000, 8192), None);
}

#[test]
fn other_errors_are_not_recovered() {
    let mut l = CallLimits::default();
    l.start_call();
    let e = BackendError::Overloaded { backend: "b".into(), detail: "x".into() };
    assert_eq!(l.recover(&e, 8192, 2048), None);
    l.start_call();
    assert_eq!(l.request_max_tokens(2048), None);
}
