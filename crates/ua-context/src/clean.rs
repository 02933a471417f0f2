//! Terminal bytes to plain text: escape sequences removed, carriage-return
//! overwrites settled.
//!
//! `vte` (the parser alacritty uses) does the ECMA-48 work: CSI, OSC, DCS,
//! SOS/PM/APC strings and lone escapes are consumed whole, including the
//! ones split across reads, and invalid UTF-8 becomes U+FFFD. What is left
//! is printable text plus the C0 controls that shape lines (`\n`, `\r`,
//! `\t`, backspace), which [`ua_protocol::tool::final_output`] then folds
//! the way a terminal would show them.

use ua_protocol::tool::final_output;
use vte::{Parser, Perform};

/// Collects printable characters and line-shaping controls.
#[derive(Default)]
struct Text(String);

impl Perform for Text {
    fn print(&mut self, c: char) {
        self.0.push(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | b'\r' | b'\t' | 0x08 => self.0.push(char::from(byte)),
            // BEL, SI/SO, NUL and friends have no text.
            _ => {}
        }
    }
}

/// Plain text of terminal output, without escape sequences, and with each
/// line as a terminal would finally show it after `\r` and backspace.
pub fn clean_terminal(bytes: &[u8]) -> String {
    final_output(&strip_escapes(bytes))
}

/// [`clean_terminal`] for output that arrives in pieces: an escape
/// sequence or a UTF-8 character split between two reads is still
/// recognised.
#[derive(Default)]
pub struct TerminalText {
    parser: Parser,
    text: Text,
}

impl std::fmt::Debug for TerminalText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalText").field("len", &self.text.0.len()).finish_non_exhaustive()
    }
}

impl TerminalText {
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.text, bytes);
    }

    /// The text fed since the last call, escape sequences removed but
    /// line controls (`\r`, backspace) kept, for passing output on as it
    /// comes. A sequence split across reads stays pending until complete.
    pub fn drain(&mut self) -> String {
        std::mem::take(&mut self.text.0)
    }

    /// The plain text so far, with carriage-return overwrites settled.
    pub fn finish(self) -> String {
        final_output(&self.text.0)
    }
}

/// Plain text of terminal output, without escape sequences; carriage
/// returns and backspaces are kept.
pub fn strip_escapes(bytes: &[u8]) -> String {
    let mut parser = Parser::new();
    let mut text = Text::default();
    parser.advance(&mut text, bytes);
    text.0
}

/// The last `n` lines of `text`, without a trailing empty line.
pub fn last_lines(text: &str, n: usize) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = text.strip_suffix('\n').unwrap_or(text).rsplit('\n').take(n).collect();
    lines.reverse();
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_passes_text_on_and_keeps_a_split_sequence_pending() {
        let mut t = TerminalText::default();
        t.feed(b"hello \x1b]133;");
        assert_eq!(t.drain(), "hello ");
        t.feed(b"D;1\x07\x1b[31mred\x1b[0m\n");
        assert_eq!(t.drain(), "red\n");
        assert_eq!(t.drain(), "");
    }

    #[test]
    fn colours_and_cursor_moves_go() {
        let raw = b"\x1b[1;31merror\x1b[0m: \x1b[2Kbad\x1b[10;5H thing\n";
        assert_eq!(clean_terminal(raw), "error: bad thing\n");
    }

    #[test]
    fn osc_titles_hyperlinks_and_shell_marks_go() {
        let raw = b"\x1b]0;title\x07\x1b]133;C\x1b\\\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\ done\n";
        assert_eq!(clean_terminal(raw), "link done\n");
    }

    #[test]
    fn progress_bars_settle_to_their_last_state() {
        let raw = b"\x1b[?25l 10% [#   ]\r 50% [##  ]\r100% [####]\x1b[?25h\n";
        assert_eq!(clean_terminal(raw), "100% [####]\n");
        assert_eq!(strip_escapes(b"a\rb"), "a\rb");
    }

    #[test]
    fn bell_and_other_controls_vanish_tabs_stay() {
        assert_eq!(clean_terminal(b"a\x07b\x00c\td\n"), "abc\td\n");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(clean_terminal(b"ok \xff\xfe!\n"), "ok \u{fffd}\u{fffd}!\n");
        assert_eq!(clean_terminal("héllo ✓\n".as_bytes()), "héllo ✓\n");
    }

    #[test]
    fn pieces_split_anywhere_give_the_same_text() {
        let raw = "\x1b[1;31mérror\x1b[0m \x1b]0;t\x07✓\n 50%\r 99%\n".as_bytes();
        let whole = clean_terminal(raw);
        assert_eq!(whole, "érror ✓\n 99%\n");
        for cut in 0..=raw.len() {
            let mut t = TerminalText::default();
            t.feed(&raw[..cut]);
            t.feed(&raw[cut..]);
            assert_eq!(t.finish(), whole, "split at {cut}");
        }
    }

    #[test]
    fn last_lines_counts_from_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), ["b", "c"]);
        assert_eq!(last_lines("a\nb", 5), ["a", "b"]);
        assert!(last_lines("", 3).is_empty());
        assert!(last_lines("a\n", 0).is_empty());
    }
}
