//! End-to-end tests: the real `unixagent` binary in a PTY owned by the
//! test, over real bash, zsh, fish and dash, asserting on raw bytes and on
//! the screen as a VT emulator renders it.
//!
//! All suites build into this one test binary (see the `[[test]]` entry in
//! crates/unixagent/Cargo.toml), so the binary under test is built once.

// Test helpers report failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod capture;
mod cli;
mod dash_c;
mod dotfiles;
mod dotfiles_fish;
mod dotfiles_starship;
mod dotfiles_zsh;
mod paging;
mod proxy;
mod servers;
mod shells;
mod support;
mod transparency;
