//! End-to-end tests: the real `unixagent` binary in a PTY owned by the
//! test, over real bash, zsh, fish and dash, asserting on raw bytes and on
//! the screen as a VT emulator renders it.
//!
//! All suites build into this one test binary (see the `[[test]]` entry in
//! crates/unixagent/Cargo.toml), so the binary under test is built once.

// Test helpers report failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod agent;
mod bash_frameworks;
mod bash_hooks;
mod bash_options;
mod bash_prompt_command;
mod batch;
mod board;
mod board_live;
mod capture;
mod children;
mod children_spool;
mod cli;
mod command_line_secrets;
mod completions;
mod dash_c;
mod doctor;
mod dotfile_contract;
mod dotfiles;
mod dotfiles_fish;
mod dotfiles_starship;
mod dotfiles_zsh;
mod install;
mod integration_failure;
mod leftovers;
mod manpage;
mod nested;
mod paging;
mod printed_secrets;
mod proxy;
mod remote;
mod sandbox;
mod sandbox_homes;
mod sandbox_props;
mod servers;
mod sessions;
mod shells;
mod sshd;
mod support;
mod transparency;
mod typing;
mod watchers;
