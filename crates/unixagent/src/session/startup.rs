//! What the shell printed before its first prompt marker.
//!
//! When integration does not confirm, the reason is almost always on the
//! screen already: a start-up file failed, or a hook fails at every prompt
//! (pyenv-virtualenv's `PROMPT_COMMAND` once made ours a syntax error). The
//! one line unixagent prints then quotes that error instead of leaving the
//! user to guess. Only the first [`CAP`] bytes are kept, and nothing at all
//! once a marker has arrived.

use ua_context::clean::clean_terminal;

/// How much start-up output is kept.
const CAP: usize = 64 * 1024;

/// Words that mark a line as an error report (compared in lower case).
/// bash, zsh and fish word their errors this way, and so do the start-up
/// files of the tools people load.
const ERROR_WORDS: [&str; 12] = [
    "error",
    "not found",
    "no such file",
    "unbound variable",
    "bad substitution",
    "unexpected",
    "permission denied",
    "cannot",
    "can't",
    "failed",
    "too old",
    "unknown command",
];

/// The longest quotation, in characters.
const QUOTE_MAX: usize = 200;

#[derive(Debug, Default)]
pub struct StartupLog {
    bytes: Vec<u8>,
}

impl StartupLog {
    pub fn feed(&mut self, bytes: &[u8]) {
        let room = CAP.saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The line that best says what went wrong: one unixagent's own
    /// integration script printed (it starts with `unixagent:`), else the
    /// first line that reads as an error.
    pub fn error_line(&self) -> Option<String> {
        let text = clean_terminal(&self.bytes);
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let ours = lines.iter().find(|l| l.starts_with("unixagent:"));
        let line = ours.or_else(|| {
            lines.iter().find(|l| {
                let lower = l.to_lowercase();
                ERROR_WORDS.iter().any(|w| lower.contains(w))
            })
        })?;
        Some(quote(line))
    }
}

fn quote(line: &str) -> String {
    if line.chars().count() <= QUOTE_MAX {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(QUOTE_MAX).collect();
    cut.push('…');
    cut
}

/// The line unixagent prints when no marker arrived in time.
pub fn failure_message(shell: &str, waited_ms: u128, error: Option<&str>, oneshot: bool) -> String {
    // Tenths of a second, with a whole number shown whole ("5 s", "1.5 s").
    let tenths = (waited_ms + 50) / 100;
    let seconds =
        if tenths.is_multiple_of(10) { (tenths / 10).to_string() } else { format!("{}.{}", tenths / 10, tenths % 10) };
    let printed = match error {
        Some(e) => format!("{shell} printed: {e}"),
        None => format!("{shell} printed no error"),
    };
    let then = if oneshot {
        "the instruction cannot run".to_string()
    } else {
        "start instructions with ## (prompts are guessed)".to_string()
    };
    format!(
        "unixagent: no prompt marker from {shell} after {seconds} s, so shell integration is not working ({printed}); `unixagent --shell-debug` traces the start-up to show why; {then}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(text: &[u8]) -> StartupLog {
        let mut l = StartupLog::default();
        l.feed(text);
        l
    }

    #[test]
    fn quotes_the_first_error_line_without_escapes() {
        let l = log(b"\x1b[1mwelcome\x1b[0m\r\nbash: PROMPT_COMMAND: line 0: syntax error near unexpected token `;;'\r\nbash: PROMPT_COMMAND: line 0: `a;; b'\r\n\x1b]0;title\x07PS1> ");
        assert_eq!(l.error_line().unwrap(), "bash: PROMPT_COMMAND: line 0: syntax error near unexpected token `;;'");
    }

    #[test]
    fn our_own_line_wins() {
        let l = log(b"/home/u/.bashrc: line 3: foo: command not found\r\nunixagent: bash 4.2 is too old for shell integration\r\n");
        assert_eq!(l.error_line().unwrap(), "unixagent: bash 4.2 is too old for shell integration");
    }

    #[test]
    fn no_error_no_quote() {
        assert_eq!(log(b"Last login: today\r\n$ ").error_line(), None);
        assert_eq!(log(b"").error_line(), None);
    }

    #[test]
    fn keeps_only_the_beginning() {
        let mut l = StartupLog::default();
        l.feed(&vec![b'x'; CAP - 2]);
        l.feed(b"\nbash: one: command not found\n");
        assert_eq!(l.bytes.len(), CAP);
        assert_eq!(l.error_line(), None, "the error line was cut off");
        let long = format!("zsh: error {}", "y".repeat(500));
        let q = log(long.as_bytes()).error_line().unwrap();
        assert_eq!(q.chars().count(), QUOTE_MAX + 1);
        assert!(q.ends_with('…'));
    }

    #[test]
    fn the_message_says_what_was_printed_and_what_to_run() {
        let m = failure_message("bash", 5003, Some("bash: x: command not found"), false);
        assert_eq!(
            m,
            "unixagent: no prompt marker from bash after 5 s, so shell integration is not working (bash printed: bash: x: command not found); `unixagent --shell-debug` traces the start-up to show why; start instructions with ## (prompts are guessed)."
        );
        let m = failure_message("zsh", 1502, None, true);
        assert!(
            m.contains("after 1.5 s")
                && m.contains("(zsh printed no error)")
                && m.ends_with("the instruction cannot run.")
        );
    }
}
