//! How a turn looks on the terminal: forward-flowing lines in the user's
//! scrollback, never an alternate screen.
//!
//! The renderer turns what happens in a turn into bytes for a terminal in
//! raw mode (so line ends are `\r\n`). It remembers the one transient thing
//! it may have on screen, the spinner or the thinking line, and always
//! clears it before writing anything else, so nothing is left half drawn.
//! It also remembers whether the cursor is at the start of a line, so every
//! block starts on a fresh line without leaving blank ones.

use std::time::Duration;

use ua_protocol::event::Usage;

use ua_protocol::agent::{AgentEvent, GateDecision, TokenUsage};

/// True for a risk whose approval must be typed out (`yes`).
pub fn strong(risk: &str) -> bool {
    matches!(risk, "privileged" | "denied")
}

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Time between spinner frames.
pub const SPINNER_FRAME: Duration = Duration::from_millis(80);

#[derive(Debug)]
pub struct Renderer {
    colour: bool,
    /// Output is a terminal: transient lines (spinner, thinking) are drawn.
    tty: bool,
    width: u16,
    /// Something transient (spinner, thinking line) is on the current line.
    transient: bool,
    frame: usize,
    /// Thinking received since the last visible output.
    thinking: String,
    at_line_start: bool,
}

impl Renderer {
    pub fn new(colour: bool, width: u16, tty: bool) -> Self {
        Self {
            colour,
            tty,
            width: width.max(20),
            transient: false,
            frame: 0,
            thinking: String::new(),
            at_line_start: true,
        }
    }

    pub fn set_width(&mut self, width: u16) {
        self.width = width.max(20);
    }

    /// Declares where the cursor is, after others wrote to the terminal.
    pub fn set_line_start(&mut self, at_start: bool) {
        self.at_line_start = at_start;
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    /// Removes the spinner or thinking line, if one is shown.
    pub fn clear(&mut self) -> String {
        if self.transient {
            self.transient = false;
            self.at_line_start = true;
            "\r\x1b[K".to_string()
        } else {
            String::new()
        }
    }

    /// Moves to the start of a fresh line unless already there.
    fn fresh_line(&mut self) -> String {
        let mut out = self.clear();
        if !self.at_line_start {
            out.push_str("\r\n");
            self.at_line_start = true;
        }
        out
    }

    /// The next spinner frame. Drawn only at the start of an empty line.
    pub fn spin(&mut self) -> String {
        if !self.tty || !self.at_line_start && !self.transient {
            return String::new();
        }
        self.frame = (self.frame + 1) % SPINNER.len();
        self.transient = true;
        let frame = self.style("2", &SPINNER[self.frame].to_string());
        if self.thinking.is_empty() {
            format!("\r{frame} \x1b[K")
        } else {
            format!("\r{frame} {}\x1b[K", self.thinking_line())
        }
    }

    fn thinking_line(&self) -> String {
        // The latest words of the thinking, on one line that fits.
        let flat: String = self.thinking.split_whitespace().collect::<Vec<_>>().join(" ");
        let room = usize::from(self.width).saturating_sub(14);
        let chars: Vec<char> = flat.chars().collect();
        let shown: String =
            if chars.len() > room { chars[chars.len() - room..].iter().collect() } else { flat.clone() };
        self.style("2;3", &format!("thinking: {shown}"))
    }

    /// Thinking progress: shown on the transient line.
    pub fn thinking(&mut self, delta: &str) -> String {
        self.thinking.push_str(delta);
        if !self.tty || !self.at_line_start && !self.transient {
            return String::new();
        }
        self.transient = true;
        format!("\r{}\x1b[K", self.thinking_line())
    }

    /// Ends a thinking block: leaves one dim summary line.
    fn settle_thinking(&mut self) -> String {
        if self.thinking.is_empty() {
            return String::new();
        }
        let words = self.thinking.split_whitespace().count();
        self.thinking.clear();
        let mut out = self.fresh_line();
        out.push_str(&self.style("2", &format!("∴ thought for {words} words")));
        out.push_str("\r\n");
        self.at_line_start = true;
        out
    }

    /// Streamed answer text.
    pub fn text(&mut self, delta: &str) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.clear());
        if delta.is_empty() {
            return out;
        }
        out.push_str(&delta.replace("\r\n", "\n").replace('\n', "\r\n"));
        self.at_line_start = delta.ends_with('\n');
        out
    }

    /// One event of the agent's stream, drawn for a person. The events a
    /// terminal shows otherwise (a denial and a skip are notices, a
    /// command's result is its output, already on screen) draw nothing.
    pub fn event(&mut self, e: &AgentEvent) -> String {
        match e {
            AgentEvent::Text { text } => self.text(text),
            AgentEvent::Thinking { text } => self.thinking(text),
            AgentEvent::Notice { text } => self.notice(text),
            AgentEvent::Error { message, .. } => self.error(message),
            AgentEvent::Command {
                command,
                risk,
                decision: GateDecision::Allow | GateDecision::Ask,
                runs_as,
                note,
                defines,
                ..
            } => self.proposal(command, risk, runs_as.as_deref(), defines, note.as_deref()),
            AgentEvent::ApprovalRequest { risk, .. } => self.question(strong(risk)),
            // A blocked task is the board's alert: the person sees it at
            // once, whoever blocked it. Other moves show in the footer.
            AgentEvent::Task { id, title, state, assignee, reason, .. } if state == "blocked" => {
                self.alert(&crate::board::render::blocked_alert(*id, title, assignee.as_deref(), reason.as_deref()))
            }
            AgentEvent::Task { .. } => String::new(),
            // A child's progress and end are drawn by the session's
            // children part, which knows how long it ran.
            AgentEvent::Child { .. } => String::new(),
            AgentEvent::Command { decision: GateDecision::Deny, .. }
            | AgentEvent::CommandResult { .. }
            | AgentEvent::Session { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::Output { .. }
            | AgentEvent::Result { .. } => String::new(),
        }
    }

    /// A proposed command, `❯ cmd  ▐ risk`, with the command that runs
    /// instead when unixagent rewrote it (paging turned off), what it
    /// leaves in the live shell to run later (an alias hides its value
    /// behind a familiar name), and the judge's note under it.
    fn proposal(
        &mut self,
        command: &str,
        risk: &str,
        runs_as: Option<&str>,
        defines: &[String],
        note: Option<&str>,
    ) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        let command = command.replace('\n', "\r\n  ");
        out.push_str(&format!("{} {}  {}\r\n", self.style("1;36", "❯"), self.style("1", &command), self.risk(risk)));
        if let Some(runs) = runs_as {
            let runs = runs.replace('\n', "\r\n    ");
            out.push_str(&format!("  {}\r\n", self.style("2", &format!("runs as: {runs}"))));
        }
        for d in defines {
            let d = d.replace('\n', "\r\n    ");
            out.push_str(&format!("  {}\r\n", self.style("33", &format!("defines {d}"))));
        }
        if let Some(note) = note {
            out.push_str(&format!("  {}\r\n", self.style("33", &format!("⚠ {note}"))));
        }
        self.at_line_start = true;
        out
    }

    /// The question under a proposal; `strong` when approval must be typed
    /// out.
    pub fn question(&mut self, strong: bool) -> String {
        let keys = if strong {
            format!("{} type yes to run it, n to skip, q to stop, # to steer: ", self.style("1;31", "privileged:"))
        } else {
            "[y] run  [n] skip  [e] edit  [a] always  [q] stop  # steer: ".to_string()
        };
        self.at_line_start = false;
        self.style("2", &keys)
    }

    fn risk(&self, risk: &str) -> String {
        let code = match risk {
            "read_only" | "build_test" => "32",
            "write" => "33",
            _ => "1;31",
        };
        self.style(code, &format!("▐ {}", risk.replace('_', "-")))
    }

    /// One short dim line.
    pub fn notice(&mut self, text: &str) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        out.push_str(&self.style("2", text));
        out.push_str("\r\n");
        self.at_line_start = true;
        out
    }

    /// A line the person must not miss, in bold yellow.
    pub fn alert(&mut self, text: &str) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        out.push_str(&self.style("1;33", &format!("⚠ {text}")));
        out.push_str("\r\n");
        self.at_line_start = true;
        out
    }

    /// An error line, in red.
    pub fn error(&mut self, text: &str) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        out.push_str(&self.style("31", &format!("unixagent: {text}")));
        out.push_str("\r\n");
        self.at_line_start = true;
        out
    }

    /// Goes to a fresh line before the shell or a command writes.
    pub fn hand_over(&mut self) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        out
    }

    /// The dim line closing a turn: `2.4k↑ 1.1k↓  2 cmds  4.6s`.
    /// `descendants`: what child agents used during the turn, shown as
    /// `+N` after the turn's own tokens, with their cost when it is known
    /// (`+3.1k $0.0123`).
    pub fn footer(&mut self, usage: &Usage, commands: usize, elapsed: Duration, descendants: &TokenUsage) -> String {
        let mut out = self.settle_thinking();
        out.push_str(&self.fresh_line());
        let up = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
        let cmds = if commands == 1 { "1 cmd".to_string() } else { format!("{commands} cmds") };
        let children = match (descendants.tokens(), descendants.cost_usd()) {
            (0, _) => String::new(),
            (n, None) => format!(" +{}", tokens(n)),
            (n, Some(dollars)) => format!(" +{} ${dollars:.4}", tokens(n)),
        };
        let line = format!(
            "{}↑ {}↓{children}  {cmds}  {:.1}s",
            tokens(up),
            tokens(usage.output_tokens),
            elapsed.as_secs_f64()
        );
        out.push_str(&self.style("2", &line));
        out.push_str("\r\n");
        self.at_line_start = true;
        out
    }
}

/// 950, 2.4k, 12k, 1.2M.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1e3),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Renderer {
        Renderer::new(false, 80, true)
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(2_400), "2.4k");
        assert_eq!(tokens(12_345), "12k");
        assert_eq!(tokens(1_200_000), "1.2M");
    }

    #[test]
    fn spinner_is_cleared_before_text_and_lines_end_in_crlf() {
        let mut r = plain();
        let spin = r.spin();
        assert!(spin.starts_with('\r'));
        let out = r.text("one\ntwo");
        assert!(out.starts_with("\r\x1b[K"), "{out:?}");
        assert!(out.ends_with("one\r\ntwo"));
        // Mid-line, the spinner stays away.
        assert_eq!(r.spin(), "");
        let footer = r.footer(
            &Usage { input_tokens: 2400, output_tokens: 1100, ..Default::default() },
            2,
            Duration::from_millis(4600),
            &TokenUsage::default(),
        );
        assert_eq!(footer, "\r\n2.4k↑ 1.1k↓  2 cmds  4.6s\r\n");
        // Child agents' tokens follow the turn's own.
        let kids = TokenUsage { input: 12_000, output: 345, cost_micros: None };
        let footer = r.footer(&Usage::default(), 1, Duration::from_millis(1000), &kids);
        assert_eq!(footer, "0↑ 0↓ +12k  1 cmd  1.0s\r\n");
        // With their cost, where their models have a price.
        let kids = TokenUsage { cost_micros: Some(41_250), ..kids };
        let footer = r.footer(&Usage::default(), 1, Duration::from_millis(1000), &kids);
        assert_eq!(footer, "0↑ 0↓ +12k $0.0413  1 cmd  1.0s\r\n");
    }

    #[test]
    fn thinking_becomes_one_summary_line() {
        let mut r = plain();
        let live = r.thinking("I should look at the big files first");
        assert!(live.contains("thinking: I should look"));
        let out = r.text("Here.");
        assert!(out.contains("∴ thought for 8 words\r\n"), "{out:?}");
        assert!(out.ends_with("Here."));
    }

    fn command(command: &str, risk: &str, runs_as: Option<&str>, note: Option<&str>) -> AgentEvent {
        AgentEvent::Command {
            id: "t".into(),
            command: command.into(),
            risk: risk.into(),
            decision: GateDecision::Ask,
            rule: None,
            runs_as: runs_as.map(Into::into),
            note: note.map(Into::into),
            defines: Vec::new(),
        }
    }

    #[test]
    fn proposals_show_command_risk_and_note() {
        let mut r = plain();
        r.text("Deleting the logs.");
        let out = r.event(&command("rm *.log", "destructive", None, Some("deletes every log")));
        assert_eq!(out, "\r\n❯ rm *.log  ▐ destructive\r\n  ⚠ deletes every log\r\n");
        let ask = AgentEvent::ApprovalRequest {
            id: "t".into(),
            command: "rm".into(),
            risk: "destructive".into(),
            reason: String::new(),
        };
        assert!(r.event(&ask).contains("[y] run"));
        let ask = AgentEvent::ApprovalRequest {
            id: "t".into(),
            command: "sudo x".into(),
            risk: "privileged".into(),
            reason: String::new(),
        };
        assert!(r.event(&ask).contains("type yes"));
    }

    #[test]
    fn a_paging_edit_shows_the_proposal_and_the_command_that_runs() {
        let mut r = plain();
        let out = r.event(&command("git log", "read_only", Some("git --no-pager log"), None));
        assert_eq!(out, "❯ git log  ▐ read-only\r\n  runs as: git --no-pager log\r\n");
    }

    #[test]
    fn a_definition_for_later_is_shown_under_the_proposal() {
        let mut r = plain();
        let e = AgentEvent::Command {
            id: "t".into(),
            command: "alias ls='rm -rf ~/src'".into(),
            risk: "destructive".into(),
            decision: GateDecision::Ask,
            rule: None,
            runs_as: None,
            note: None,
            defines: vec!["alias ls: rm -rf ~/src".into()],
        };
        let out = r.event(&e);
        assert_eq!(out, "❯ alias ls='rm -rf ~/src'  ▐ destructive\r\n  defines alias ls: rm -rf ~/src\r\n");
    }

    #[test]
    fn events_a_terminal_shows_otherwise_draw_nothing() {
        let mut r = plain();
        let denied = AgentEvent::Command {
            id: "t".into(),
            command: "rm -rf /".into(),
            risk: "denied".into(),
            decision: GateDecision::Deny,
            rule: Some("rm-root".into()),
            runs_as: None,
            note: None,
            defines: Vec::new(),
        };
        assert_eq!(r.event(&denied), "");
        let result = AgentEvent::CommandResult {
            id: "t".into(),
            exit_code: Some(0),
            output: "x".into(),
            status: ua_protocol::agent::CommandStatus::Ok,
        };
        assert_eq!(r.event(&result), "");
    }

    #[test]
    fn no_colour_means_no_escapes_but_colour_has_them() {
        let mut r = plain();
        assert!(!r.notice("skipped").contains('\x1b'));
        let mut c = Renderer::new(true, 80, true);
        assert!(c.notice("skipped").contains("\x1b[2m"));
    }
}
