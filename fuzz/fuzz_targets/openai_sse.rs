//! Arbitrary bytes as an OpenAI Chat Completions SSE response: decoding
//! must never panic, and chunk boundaries must not change a clean decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ua_backend::config::Kind;
use ua_backend::sse::check_any_input;

fuzz_target!(|data: &[u8]| {
    check_any_input(Kind::Openai, data);
});
