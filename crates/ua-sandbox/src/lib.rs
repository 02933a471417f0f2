//! The kernel sandbox for agent commands.
//!
//! Every other safety layer decides whether a command is typed; this one
//! holds when a command that got past them does something it should not.
//! The same [`Rules`] drive every enforcement:
//!
//! - [`rules`]: what is enforced (reads hidden, where writes go, what
//!   is never written, which hosts the network reaches), each rule with
//!   where it came from. Pure values; the caller compiles them from the
//!   policy.
//! - [`normalise`]: the rules against what is on disk (links followed,
//!   each path once, nothing inside what covers it), before anything is
//!   applied; a pure function of the rules and a filesystem lookup.
//! - [`proxy`]: the allowlisting HTTP/HTTPS proxy, the only way out to the
//!   network for a sandboxed process.
//! - `linux`: Landlock, seccomp and namespaces, applied in a launcher
//!   that then runs the sandboxed program.
//! - [`explain`]: which rule a failed command ran into, read from its
//!   error messages and the proxy's refusals.
//! - [`seatbelt`]: the rules as a macOS Seatbelt (SBPL) profile, a pure
//!   function.
//!
//! This crate depends on no other unixagent crate.

pub mod explain;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod normalise;
pub mod proxy;
pub mod rules;
pub mod seatbelt;

pub use rules::{HostPattern, HostRule, Mode, PathRule, Rules};
