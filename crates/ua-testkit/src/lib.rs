//! Test kit for unixagent.
//!
//! - [`term`]: start a program (usually the real `unixagent` binary) inside a
//!   PTY that the test owns, type into it, and wait for conditions on the
//!   raw bytes or on the screen as a VT emulator renders it.
//!
//! It deliberately has no timing assertions: every wait is "until this
//! observable condition holds, or the deadline passes".

pub mod term;
