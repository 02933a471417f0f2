//! The terminal front end: the agent's stream drawn for a person by
//! [`Renderer`], with its chrome (the spinner while the model or the gate
//! works, the hand-over line before the shell writes, the question, the
//! footer closing a turn). Output bound for a file or pipe gets plain `\n`
//! line ends.

use tokio::time::Instant;
use ua_protocol::agent::AgentEvent;

use super::FrontEnd;
use crate::agent::render::{Renderer, SPINNER_FRAME};
use crate::session::outbox::Chrome;

/// Draws for a terminal, or as plain text for a file or pipe.
#[derive(Debug)]
pub(in crate::session) struct TerminalFront {
    render: Renderer,
    /// Output goes to a file or pipe: `\n` line ends.
    plain: bool,
    /// The spinner's next frame, while something is awaited.
    spin_at: Option<Instant>,
}

impl TerminalFront {
    pub(in crate::session) fn new(render: Renderer, plain: bool) -> Self {
        Self { render, plain, spin_at: None }
    }

    fn lines(&self, text: String) -> String {
        if self.plain && !text.is_empty() { text.replace("\r\n", "\n") } else { text }
    }
}

impl FrontEnd for TerminalFront {
    fn event(&mut self, event: &AgentEvent) -> String {
        let text = self.render.event(event);
        self.lines(text)
    }

    fn chrome(&mut self, chrome: &Chrome) -> String {
        let text = match chrome {
            Chrome::Spin => {
                self.spin_at = Some(Instant::now());
                String::new()
            }
            Chrome::Settle => {
                self.spin_at = None;
                self.render.clear()
            }
            Chrome::StopSpinner => {
                self.spin_at = None;
                String::new()
            }
            Chrome::HandOver => self.render.hand_over(),
            Chrome::LineStart(at_start) => {
                self.render.set_line_start(*at_start);
                String::new()
            }
            Chrome::Footer { usage, commands, elapsed, descendants } => {
                self.render.footer(usage, *commands, *elapsed, descendants)
            }
            Chrome::Question { strong } => self.render.question(*strong),
            Chrome::Echo(text) => text.clone(),
            Chrome::Text(text) => self.render.text(text),
            Chrome::Alert(text) => {
                self.render.set_line_start(true);
                self.render.alert(text)
            }
            Chrome::BoardFooter(line) => self.render.notice(line),
        };
        self.lines(text)
    }

    fn deadline(&self) -> Option<Instant> {
        self.spin_at
    }

    fn tick(&mut self, now: Instant) -> String {
        if self.spin_at.is_none_or(|d| d > now) {
            return String::new();
        }
        self.spin_at = Some(now + SPINNER_FRAME);
        let text = self.render.spin();
        self.lines(text)
    }

    fn resize(&mut self, width: u16) {
        self.render.set_width(width);
    }
}
