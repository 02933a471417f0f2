//! The agent: turns that stream a model's answer, gate and run its
//! commands in the user's shell, and feed the results back.
//!
//! - [`turn`]: one turn as a pure state machine (no I/O).
//! - [`backend`]: the model provider chain, built from config on first use.
//! - [`render`]: how the turn looks on the terminal.
//! - [`capture`]: a command's output between its 133;C and 133;D markers.

pub mod backend;
pub mod capture;
pub mod render;
pub mod turn;
