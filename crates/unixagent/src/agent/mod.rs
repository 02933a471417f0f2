//! The agent: turns that stream a model's answer, gate and run its
//! commands in the user's shell, and feed the results back.
//!
//! - [`turn`]: one turn as a pure state machine (no I/O).
//! - [`asking`]: the question on screen, a pause and the plan, pure.
//! - [`backend`]: the model provider chain, built from config on first use.
//! - [`render`]: how the turn looks on the terminal.
//! - [`gate`]: the safety pipeline (`ua-policy`) as the agent uses it.
//! - [`capture`]: a command's output between its 133;C and 133;D markers.
//! - [`events`]: the turn's values as events of the agent's stream.
//! - [`question`]: keys to the person's answer about one proposal, pure.
//! - [`confirm`]: the confirm mode and the plan's approval applied to a
//!   verdict (run, ask, or refuse).

pub mod asking;
pub mod backend;
pub mod capture;
pub mod confirm;
pub mod events;
pub mod gate;
pub mod question;
pub mod render;
pub mod turn;

/// How the agent asks before running commands (`shell.confirm_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmMode {
    /// The policy decides: what it allows runs, what it asks about asks.
    #[default]
    Auto,
    /// Every command asks, even one the policy allows (denials stand).
    Each,
    /// Like `auto`, but when one answer proposes several commands they are
    /// shown together and one approval covers the ones that would ask,
    /// except privileged ones and ones the judge warned about
    /// ([`confirm::step`]).
    Plan,
}

impl ConfirmMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "each" => Some(Self::Each),
            "plan" => Some(Self::Plan),
            _ => None,
        }
    }
}
