//! unixagent's terminal layer.
//!
//! Everything between the user's keyboard and screen on one side and the
//! user's real shell on the other:
//!
//! - [`osc`]: scans the shell's output for OSC 133 prompt markers and OSC 7
//!   working-directory reports, without changing a byte, following only the
//!   markers that carry this session's id (a nested or remote shell's pass
//!   through);
//! - [`state`]: the Prompt -> Input -> Executing -> Idle state machine those
//!   markers drive;
//! - [`integration`]: the bash/zsh/fish scripts that emit the markers, and
//!   how each shell is started so they load invisibly;
//! - [`keys`], [`editor`], [`intercept`]: decoding keystrokes, the `#`
//!   instruction line editor, and the router that decides whether a key
//!   belongs to the shell or to an instruction;
//! - [`mod@column`], [`heuristic`]: where the prompt ends, and guessing prompts
//!   when a shell has no integration;
//! - [`pty`]: the pseudo-terminal the shell runs in.
//!
//! The state machines (scanner, terminal state, editor, interceptor) are
//! plain values that do no I/O; only [`pty`] and [`integration`]'s installer
//! touch the system. This crate knows nothing of agents or models: a
//! submitted instruction is handed to the caller as a string.
//!
//! ```
//! use ua_term::osc::{OscScanner, ShellEvent};
//! let mut scanner = OscScanner::new();
//! let mut events = Vec::new();
//! scanner.feed(b"\x1b]133;D;1\x07\x1b]133;A\x07$ ", |e| events.push(e));
//! assert_eq!(events, [ShellEvent::CommandEnd(Some(1)), ShellEvent::PromptStart]);
//! ```

pub mod column;
pub mod command_env;
pub mod editor;
pub mod heuristic;
pub mod integration;
pub mod intercept;
pub mod keys;
pub mod osc;
pub mod pty;
pub mod state;
