//! The terminal state machine, driven by OSC 133 markers.
//!
//! ```text
//!  Starting --A--> Prompt --B--> Input --C--> Executing --D--> Idle --A--> Prompt
//! ```
//!
//! `TermState` does no I/O: it is fed [`ShellEvent`]s and remembers the
//! phase, the last exit code and the working directory. Shells are not
//! perfectly regular (fish redraws its prompt, re-sending A and B; bash sends
//! no C/D for an empty line; a `D` may arrive without a `C` after Ctrl+C), so
//! every event is accepted in every phase and simply moves to the phase it
//! names. The events are our shell's only (the scanner drops markers
//! without its id); an OSC 7 cwd, which has no id, is taken only outside
//! `Executing`.

use crate::osc::ShellEvent;

/// Where the shell is in its prompt/command cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No marker seen yet: integration not (yet) confirmed.
    Starting,
    /// `A` seen: the prompt is being drawn.
    Prompt,
    /// `B` seen: the shell's line editor is reading the user's line.
    Input,
    /// `C` seen: a command runs; every byte belongs to it.
    Executing,
    /// `D` seen: the command finished; the next prompt is coming.
    Idle,
}

/// What changed when an event was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// First `A` ever: shell integration is confirmed to work.
    IntegrationConfirmed,
    /// The shell is ready to read a fresh line (a `B` after a command or at
    /// start), as opposed to a redraw of the same prompt.
    FreshInput,
    /// A `B` that redraws the current prompt (fish repaints, resizes).
    RedrawnInput,
    CommandStarted,
    CommandFinished(Option<i32>),
    CwdChanged,
    /// Nothing worth reacting to.
    None,
}

#[derive(Debug, Clone)]
pub struct TermState {
    phase: Phase,
    last_exit: Option<i32>,
    cwd: Option<String>,
    confirmed: bool,
    /// Set when the next `B` begins a fresh line (after a command, after the
    /// user pressed Enter or Ctrl+C, and at start-up).
    fresh_line_pending: bool,
}

impl Default for TermState {
    fn default() -> Self {
        Self::new()
    }
}

impl TermState {
    pub fn new() -> Self {
        Self { phase: Phase::Starting, last_exit: None, cwd: None, confirmed: false, fresh_line_pending: true }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn last_exit(&self) -> Option<i32> {
        self.last_exit
    }
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }
    /// Whether shell integration has been seen working.
    pub fn integrated(&self) -> bool {
        self.confirmed
    }

    /// The user ended the line (Enter, Ctrl+C): whatever prompt comes next
    /// starts with an empty line.
    pub fn line_ended(&mut self) {
        self.fresh_line_pending = true;
    }

    pub fn apply(&mut self, event: &ShellEvent) -> Transition {
        match event {
            ShellEvent::PromptStart => {
                self.phase = Phase::Prompt;
                if !self.confirmed {
                    self.confirmed = true;
                    return Transition::IntegrationConfirmed;
                }
                Transition::None
            }
            ShellEvent::InputStart => {
                self.phase = Phase::Input;
                if std::mem::take(&mut self.fresh_line_pending) {
                    Transition::FreshInput
                } else {
                    Transition::RedrawnInput
                }
            }
            ShellEvent::CommandStart => {
                self.phase = Phase::Executing;
                self.fresh_line_pending = true;
                Transition::CommandStarted
            }
            ShellEvent::CommandEnd(code) => {
                self.phase = Phase::Idle;
                self.fresh_line_pending = true;
                if code.is_some() {
                    self.last_exit = *code;
                }
                Transition::CommandFinished(*code)
            }
            ShellEvent::Cwd(path) => {
                // OSC 7 carries no application id. Our scripts report the
                // cwd only while the shell is between commands (before its
                // prompt); during a command it is a child's: a nested or
                // remote shell, which must not move ours.
                if self.phase == Phase::Executing || self.cwd.as_deref() == Some(path) {
                    return Transition::None;
                }
                self.cwd = Some(path.clone());
                Transition::CwdChanged
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShellEvent::*;

    fn run(events: &[ShellEvent]) -> (TermState, Vec<Transition>) {
        let mut s = TermState::new();
        let t = events.iter().map(|e| s.apply(e)).collect();
        (s, t)
    }

    #[test]
    fn a_full_cycle() {
        let (s, t) = run(&[
            PromptStart,
            InputStart,
            CommandStart,
            CommandEnd(Some(3)),
            Cwd("/tmp".into()),
            PromptStart,
            InputStart,
        ]);
        assert_eq!(
            t,
            vec![
                Transition::IntegrationConfirmed,
                Transition::FreshInput,
                Transition::CommandStarted,
                Transition::CommandFinished(Some(3)),
                Transition::CwdChanged,
                Transition::None,
                Transition::FreshInput,
            ]
        );
        assert_eq!(s.phase(), Phase::Input);
        assert_eq!(s.last_exit(), Some(3));
        assert_eq!(s.cwd(), Some("/tmp"));
    }

    #[test]
    fn a_repaint_is_not_a_fresh_line() {
        let (_, t) = run(&[PromptStart, InputStart, PromptStart, InputStart]);
        assert_eq!(t[3], Transition::RedrawnInput);
    }

    #[test]
    fn enter_on_an_empty_line_gives_a_fresh_line_without_c_or_d() {
        let mut s = TermState::new();
        s.apply(&PromptStart);
        s.apply(&InputStart);
        s.line_ended();
        s.apply(&PromptStart);
        assert_eq!(s.apply(&InputStart), Transition::FreshInput);
    }

    #[test]
    fn a_cwd_reported_while_a_command_runs_is_a_childs() {
        let (s, t) = run(&[
            Cwd("/home".into()),
            PromptStart,
            InputStart,
            CommandStart,
            Cwd("/nested".into()),
            CommandEnd(Some(0)),
            Cwd("/home/sub".into()),
        ]);
        assert_eq!(t[4], Transition::None);
        assert_eq!(t[6], Transition::CwdChanged);
        assert_eq!(s.cwd(), Some("/home/sub"));
    }

    #[test]
    fn d_without_code_keeps_the_last_known_code() {
        let (s, _) = run(&[CommandEnd(Some(1)), CommandEnd(None)]);
        assert_eq!(s.last_exit(), Some(1));
        assert_eq!(s.phase(), Phase::Idle);
    }
}
