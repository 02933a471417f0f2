//! Integration tests for ua-protocol, built as one binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
