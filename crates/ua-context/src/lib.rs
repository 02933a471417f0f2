//! What unixagent tells the model about the user's shell, and how it keeps
//! that safe and small.
//!
//! - [`scrub`]: secrets replaced by `[REDACTED:kind]` ([`secrets`]) and
//!   prompt-injection markers flagged ([`injection`]). Everything captured
//!   from the terminal passes through it before it leaves the machine.
//! - [`clean`]: terminal bytes to plain text (escape sequences removed,
//!   carriage-return overwrites settled).
//! - [`env`](mod@env): the `context.include_env` allowlist, which never lets a
//!   credential-looking name through.
//! - [`prompt`]: the base system prompt, the [`prompt::ContextSnapshot`]
//!   rendered under it with captured text framed as data, and the framing
//!   of `shell` tool results.
//! - [`fit`](mod@fit): fitting the system prompt and the conversation into a token
//!   budget, oldest terminal lines first, then oldest turns, never
//!   separating a `tool_use` from its `tool_result`.
//!
//! This crate does no I/O and knows no provider: token estimates come in
//! as a closure (`ua_backend::tokens::estimate_message` in unixagent).
//!
//! ```
//! use ua_context::clean::clean_terminal;
//! use ua_context::fit::fit;
//! use ua_context::prompt::ContextSnapshot;
//! use ua_context::scrub;
//! use ua_protocol::conversation::Message;
//!
//! let key = ["ghp_", &"a1B2c3".repeat(6)].concat();
//! let raw = format!("\x1b[32m$ cat .env\x1b[0m\nGITHUB={key}\n 10%\r100%\n");
//! let text = clean_terminal(raw.as_bytes());
//! assert_eq!(scrub(&text), "$ cat .env\nGITHUB=[REDACTED:github_token]\n100%\n");
//!
//! let snapshot = ContextSnapshot {
//!     cwd: "/home/me".into(),
//!     os: "linux".into(),
//!     shell: "/bin/bash".into(),
//!     recent_output_lines: text.lines().map(String::from).collect(),
//!     ..ContextSnapshot::default()
//! };
//! let history = vec![Message::user_text("what is in .env?")];
//! // A rough estimator: four characters per token.
//! let estimate = |m: &Message| 4 + m.text().len() as u64 / 4;
//! let fitted = fit(&snapshot, &history, 2_000, estimate).expect("fits");
//! assert!(fitted.system.contains("[REDACTED:github_token]"));
//! assert!(!fitted.system.contains(&key));
//! assert_eq!(fitted.messages, history);
//! ```

use std::borrow::Cow;

pub mod clean;
pub mod env;
pub mod fit;
pub mod injection;
pub mod prompt;
pub mod secrets;

/// Compiles the patterns [`scrub`] uses now rather than at its first call
/// (a few milliseconds): a caller that is about to send its first context
/// runs this on a thread of its own while it starts.
pub fn prepare() {
    secrets::prepare();
    injection::prepare();
}

/// `text` made safe to send: secrets redacted, then injection markers
/// flagged. Borrows when there was nothing to change.
pub fn scrub(text: &str) -> Cow<'_, str> {
    match secrets::redact_secrets(text) {
        Cow::Borrowed(t) => injection::mark_injections(t),
        Cow::Owned(t) => Cow::Owned(injection::mark_injections(&t).into_owned()),
    }
}
