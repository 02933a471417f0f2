//! The safety pipeline every command the agent proposes passes before a
//! byte of it reaches the shell.
//!
//! - [`parse`] and [`classify`]: shell text to the programs it would run
//!   (brush-parser, walked through pipelines, lists, substitutions and
//!   wrapper programs), a [`risk::Risk`] per part and for the whole.
//! - [`deny`]: the deny list, matched on the parsed form, so quoting,
//!   escapes, `${IFS}`, absolute paths and wrappers do not get around it.
//! - [`cedar`]: the schema, the built-in policy and layered evaluation;
//!   [`policy_toml`] translates the simple `policy.toml` into Cedar, so
//!   there is one evaluation path. [`cedar::sandbox`] reads off the
//!   directories and hosts the policies name, for the kernel sandbox.
//! - [`hooks`]: the user's pre-exec and post-exec executables; a crash, a
//!   timeout or unreadable output denies.
//! - [`paging`]: the agent's `git log`, `systemctl status` and `man` with
//!   paging turned off, so they neither ask nor hold the terminal;
//!   [`gitrepo`]: a repository's own configuration, read for the git
//!   commands that would otherwise run without a question.
//! - [`gate`]: the cascade producing one structured [`gate::Decision`]
//!   per command; [`grants`] are the session's "allow this again"
//!   answers; [`judge`] is the second-opinion model call that sees only
//!   the commands, the instruction and the cwd.
//! - [`own_cli`]: unixagent's own command line, read as a child agent, a
//!   shell command or a tool of its own.
//! - [`audit`]: the append-only JSONL audit log; [`explain`]: what
//!   `unixagent policy explain` and `policy check` print.
//!
//! It decides; it does not run commands, prompt people or sandbox
//! anything. The example in [`gate`] shows the whole flow.

pub mod audit;
pub mod cedar;
pub mod classify;
pub mod deny;
pub mod error;
pub mod explain;
pub mod gate;
pub mod gitrepo;
pub mod grants;
pub mod hooks;
pub mod judge;
pub mod own_cli;
pub mod paging;
pub mod parse;
pub mod paths;
pub mod policy_toml;
pub mod risk;
