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

    /// Removes zsh's PROMPT_SP from the end (see [`prompt_sp`]): the
    /// shell printed it after the command, before its `133;D`.
    pub fn drop_prompt_sp(&mut self) {
        let last = if self.tail.is_empty() { &mut self.head } else { &mut self.tail };
        if let Some(r) = prompt_sp(last) {
            last.drain(r);
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

/// Where zsh's PROMPT_SP sits at the end of `bytes`, before a final OSC
/// sequence (our `133;D`, which stays).
///
/// Before each prompt, and before `precmd` runs, zsh prints
/// PROMPT_EOL_MARK (by default a bold inverse `%`, `#` for root), spaces to
/// the last column and `\r \r`. On a terminal the mark survives only where
/// output did not end its line; read as text, it is noise after the
/// command's output. The mark is recognised in its default form; another
/// mark stays and only the spaces go.
pub fn prompt_sp(bytes: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut end = bytes.len();
    if let Some(osc) = bytes.windows(2).rposition(|w| w == b"\x1b]") {
        let rest = &bytes[osc + 2..];
        let closed = rest.ends_with(b"\x07") || rest.ends_with(b"\x1b\\");
        let inner = &rest[..rest.len().saturating_sub(1)];
        if closed && !inner[..inner.len().saturating_sub(1)].contains(&0x1b) {
            end = osc;
        }
    }
    let body = bytes[..end].strip_suffix(b" \r \r")?;
    let spaces = body.iter().rev().take_while(|&&b| b == b' ').count();
    let mut start = body.len() - spaces;
    let before_mark = skip_sgr_back(bytes, start);
    if before_mark > 0 && matches!(bytes[before_mark - 1], b'%' | b'#') {
        start = skip_sgr_back(bytes, before_mark - 1);
    }
    Some(start..end)
}

/// Steps back over SGR sequences (`ESC [ … m`) that end at `at`.
fn skip_sgr_back(bytes: &[u8], mut at: usize) -> usize {
    while at > 0 && bytes[at - 1] == b'm' {
        let params = bytes[..at - 1].iter().rev().take_while(|b| b.is_ascii_digit() || **b == b';').count();
        let csi = at - 1 - params;
        if csi < 2 || &bytes[csi - 2..csi] != b"\x1b[" {
            break;
        }
        at = csi - 2;
    }
    at
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

    /// What zsh 5.9 prints after `printf abc` on an 80-column terminal,
    /// up to and with our `133;D`.
    fn zsh_after_abc(mark: &str) -> Vec<u8> {
        let mut b = format!("abc{mark}").into_bytes();
        b.extend(std::iter::repeat_n(b' ', 79));
        b.extend_from_slice(b"\r \r\x1b]133;D;0;aid=7\x07");
        b
    }

    #[test]
    fn zsh_prompt_sp_is_dropped_and_the_marker_kept() {
        for mark in ["\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m", "\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m", "%", ""] {
            let raw = zsh_after_abc(mark);
            let r = prompt_sp(&raw).unwrap();
            let mut kept = raw.clone();
            kept.drain(r);
            assert_eq!(kept, b"abc\x1b]133;D;0;aid=7\x07", "{mark:?}");
        }
        // Another mark stays; only the spaces go.
        let mut c = Capture::new(DEFAULT_CAP);
        c.push(&zsh_after_abc("<EOL>"));
        c.drop_prompt_sp();
        assert_eq!(c.text(OutputMode::Full), "abc<EOL>");
        // At the start of a line zsh prints it too; nothing of it is left.
        let mut c = Capture::new(DEFAULT_CAP);
        c.push(b"done\r\n");
        c.push(&zsh_after_abc("\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m")[3..]);
        c.drop_prompt_sp();
        assert!(c.ends_line());
        assert_eq!(c.text(OutputMode::Final), "done\n");
    }

    #[test]
    fn output_without_prompt_sp_is_left_alone() {
        for raw in [&b"50% \r\x1b]133;D;0\x07"[..], b"abc\r\n\x1b]133;D;0\x07", b"a \r \r \x1b]133;D;0\x07", b""] {
            assert_eq!(prompt_sp(raw), None, "{raw:?}");
        }
        // Without a marker the end of the bytes is the end.
        assert_eq!(prompt_sp(b"x%  \r \r"), Some(1..7));
    }

    #[test]
    fn short_output_is_whole() {
        let mut c = Capture::new(400);
        c.push(b"abc");
        assert!(!c.truncated());
        assert_eq!(c.text(OutputMode::Full), "abc");
    }
}
