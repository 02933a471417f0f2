//! Arbitrary bytes as an HTTP request or response head reaching the
//! sandbox's proxy: no panic, framing that does not depend on how the
//! bytes arrive, and what goes upstream names the host the allowlist
//! checked (`ua_sandbox::proxy::check_any_head`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ua_sandbox::proxy::check_any_head(data);
});
