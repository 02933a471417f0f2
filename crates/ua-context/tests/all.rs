//! Integration tests of ua-context, compiled as one binary.

// Test helpers outside #[test] functions are not covered by clippy.toml's
// allow-*-in-tests; a failing helper should panic loudly like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
