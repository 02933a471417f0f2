//! What an agent command printed, between its `133;C` and `133;D`.
//!
//! The bytes are kept as the terminal received them, bounded: the first
//! part and the last part of a long output are kept (the start says what
//! ran, the end usually says how it ended) and the middle is replaced by a
//! marker saying how much was cut. On the way to the model they are turned
//! into plain text: escape sequences removed (a VT parser, so nothing half
//! stripped survives) and, in `final` mode, carriage-return overwrites
//! collapsed to what the screen finally showed.

use ua_context::clean::strip_escapes as plain_text;
use ua_protocol::tool::{OutputMode, apply_output_mode};

/// A bounded capture of one command's output.
#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    head_cap: usize,
    tail_cap: usize,
    /// Bytes dropped from the middle.
    cut: usize,
}

impl Capture {
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 4;
        Self { head: Vec::new(), tail: Vec::new(), head_cap, tail_cap: cap - head_cap, cut: 0 }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let n = bytes.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        self.tail.extend_from_slice(bytes);
        // Trim in batches so a stream of small reads stays linear.
        if self.tail.len() > self.tail_cap * 2 {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.cut += excess;
        }
    }

    /// Whether the output ends at the start of a line (or there was none),
    /// judged by what a terminal would print of its last few KiB: markers
    /// and other escapes move no cursor forward.
    pub fn ends_line(&self) -> bool {
        let last = if self.tail.is_empty() { &self.head } else { &self.tail };
        let window = &last[last.len().saturating_sub(4096)..];
        plain_text(window).chars().last().is_none_or(|c| c == '\n')
    }

    /// Whether anything was cut from the middle.
    pub fn truncated(&self) -> bool {
        self.cut > 0 || self.tail.len() > self.tail_cap
    }

    /// The output as plain text for the model.
    pub fn text(mut self, mode: OutputMode) -> String {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.cut += excess;
        }
        let mut text = apply_output_mode(mode, &plain_text(&self.head));
        if self.cut > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[… {} bytes of output cut …]\n", self.cut));
        }
        text.push_str(&apply_output_mode(mode, &plain_text(&self.tail)));
        if mode == OutputMode::Full {
            text = text.replace("\r\n", "\n");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT_CAP: usize = 1024 * 1024;

    #[test]
    fn escapes_are_removed_and_text_kept() {
        let raw = b"\x1b[1;31mred\x1b[0m plain \x1b]8;;http://x\x07link\x1b]8;;\x07\r\n\xe2\x9c\x93 done\n";
        assert_eq!(plain_text(raw), "red plain link\r\n\u{2713} done\n");
    }

    #[test]
    fn final_mode_keeps_the_settled_progress_bar() {
        let mut c = Capture::new(DEFAULT_CAP);
        c.push(b"downloading\r\n 10%\r 50%\r100%\r\ndone\r\n");
        assert_eq!(c.text(OutputMode::Final), "downloading\n100%\ndone\n");
        let mut c = Capture::new(DEFAULT_CAP);
        c.push(b"a\r\nb\r\n");
        assert_eq!(c.text(OutputMode::Full), "a\nb\n");
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_a_marker() {
        let mut c = Capture::new(400);
        c.push(b"FIRST\n");
        for _ in 0..1000 {
            c.push(b"middle line\n");
        }
        c.push(b"LAST\n");
        assert!(c.truncated());
        let text = c.text(OutputMode::Full);
        assert!(text.starts_with("FIRST\n"), "{text}");
        assert!(text.ends_with("LAST\n"), "{text}");
        assert!(text.contains("bytes of output cut"), "{text}");
        assert!(text.len() < 600, "{}", text.len());
    }

    #[test]
    fn the_line_end_is_judged_past_trailing_escapes() {
        let mut c = Capture::new(DEFAULT_CAP);
        assert!(c.ends_line());
        c.push(b"done\r\n\x1b]133;D;0\x07");
        assert!(c.ends_line());
        c.push(b"no newline\x1b[0m");
        assert!(!c.ends_line());
    }

    #[test]
    fn short_output_is_whole() {
        let mut c = Capture::new(400);
        c.push(b"abc");
        assert!(!c.truncated());
        assert_eq!(c.text(OutputMode::Full), "abc");
    }
}
