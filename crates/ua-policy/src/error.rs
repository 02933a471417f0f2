//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while loading or applying policy. Each
/// variant renders as one sentence that says what to do. None is retryable
/// without a change by the user except [`PolicyError::Io`] and
/// [`PolicyError::Hook`], which may be transient.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A policy file could not be parsed or does not match the schema (fatal).
    #[error("{}:{line}: {message}; fix this policy file and run `unixagent policy check`", path.display())]
    Policy {
        /// The file the text came from.
        path: PathBuf,
        /// One-based line of the first problem (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// policy.toml is not valid TOML or has an unknown value (fatal).
    #[error("{}: {message}; fix policy.toml (see design §5.2) and run `unixagent policy check`", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line where the TOML parser knows it.
        message: String,
    },
    /// A file could not be read or written (possibly transient).
    #[error("cannot access {}: {source}; check that the path exists and is readable", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A hook could not be started or misbehaved (possibly transient); the command is denied.
    #[error("hook {} failed: {message}; fix the hook or remove it from the config", path.display())]
    Hook {
        /// The hook executable.
        path: PathBuf,
        /// What happened.
        message: String,
    },
    /// The built-in schema or policies failed to load: a bug in unixagent (fatal).
    #[error("the built-in policy is broken ({0}); please report this bug")]
    Builtin(String),
}
