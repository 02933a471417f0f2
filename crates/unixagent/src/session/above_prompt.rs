//! Printing a line above the prompt the person is typing at, without
//! breaking their line.
//!
//! A line written into the middle of the shell's line editor leaves
//! readline (or zle, or fish) drawing the rest of the line where it thinks
//! the cursor is, which is no longer where it is: the line looks broken
//! and later edits land in the wrong place. So the prompt is moved
//! instead: [`PromptLine`] keeps what the shell drew since its prompt
//! started (`133;A`), the line goes where the prompt began, and those
//! bytes are written again below it. The shell's editor only ever moves
//! the cursor relative to where its prompt began, so once the prompt and
//! the line are drawn again from a line of their own, its picture of the
//! screen is true again and the person types on.
//!
//! Pure: fed the shell's output and markers, it returns bytes to write.

use ua_term::osc::ShellEvent;

/// Bytes of prompt and line kept; a longer line is not drawn again (the
/// notice waits for the next prompt instead).
const MAX_BYTES: usize = 32 * 1024;

/// Rows of the scratch screen the prompt is replayed on to find how far
/// below the prompt's start the cursor is.
const SCRATCH_ROWS: u16 = 200;

/// Where the shell is in drawing its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Phase {
    /// Not at a prompt (a command runs, or no marker yet).
    #[default]
    Away,
    /// Drawing the prompt (`133;A`).
    Prompt,
    /// Reading the person's line (`133;B`).
    Line,
}

/// What the shell drew since its prompt started. See the module docs.
#[derive(Debug, Default)]
pub(in crate::session) struct PromptLine {
    phase: Phase,
    drawn: Vec<u8>,
    /// More than [`MAX_BYTES`] were drawn since the prompt started.
    too_long: bool,
}

impl PromptLine {
    /// A marker of the shell's, seen while no turn hides its output.
    pub(in crate::session) fn marker(&mut self, e: &ShellEvent) {
        match e {
            ShellEvent::PromptStart => {
                self.phase = Phase::Prompt;
                self.drawn.clear();
                self.too_long = false;
            }
            ShellEvent::InputStart if self.phase == Phase::Prompt => self.phase = Phase::Line,
            ShellEvent::CommandStart | ShellEvent::CommandEnd(_) => {
                self.phase = Phase::Away;
                self.drawn.clear();
            }
            ShellEvent::InputStart | ShellEvent::Cwd(_) => {}
        }
    }

    /// The shell's output, as shown while no turn hides it.
    pub(in crate::session) fn shown(&mut self, bytes: &[u8]) {
        if self.phase == Phase::Away || self.too_long {
            return;
        }
        if self.drawn.len() + bytes.len() > MAX_BYTES {
            self.too_long = true;
            self.drawn = Vec::new();
            return;
        }
        self.drawn.extend_from_slice(bytes);
    }

    /// A turn took the terminal: whatever the prompt was, it is gone.
    pub(in crate::session) fn forget(&mut self) {
        self.phase = Phase::Away;
        self.drawn.clear();
    }

    /// The shell is reading the person's line, and it can be drawn again.
    pub(in crate::session) fn ready(&self) -> bool {
        self.phase == Phase::Line && !self.too_long
    }

    /// The bytes that put `lines` (each ending in `\r\n`) where the prompt
    /// began and draw the prompt and the line again below them, for a
    /// terminal `width` columns wide. `None` when the shell is not reading
    /// a line, or its prompt cannot be placed.
    pub(in crate::session) fn above(&self, lines: &str, width: u16) -> Option<Vec<u8>> {
        if !self.ready() {
            return None;
        }
        // A cursor position request in the prompt (some themes ask where
        // the cursor is) must not be asked again: the answer would arrive
        // as keys.
        let replay = strip(&self.drawn, b"\x1b[6n");
        let up = rows_below_start(&replay, width)?;
        let mut out = Vec::with_capacity(lines.len() + replay.len() + 16);
        out.push(b'\r');
        if up > 0 {
            out.extend_from_slice(format!("\x1b[{up}A").as_bytes());
        }
        // Clear from the prompt's start to the end of the screen: the old
        // prompt, the line and anything the editor showed under it.
        out.extend_from_slice(b"\x1b[J");
        out.extend_from_slice(lines.as_bytes());
        out.extend_from_slice(&replay);
        Some(out)
    }
}

/// How many rows below the prompt's first row the cursor is after the
/// shell drew `drawn` from the start of a line.
fn rows_below_start(drawn: &[u8], width: u16) -> Option<u16> {
    let rows = std::num::NonZeroU16::new(SCRATCH_ROWS)?;
    let cols = std::num::NonZeroU16::new(width.max(1))?;
    let mut scratch = vt100::Parser::new(rows, cols, 0);
    scratch.process(drawn);
    let (row, _) = scratch.screen().cursor_position();
    // On the scratch screen's last row the prompt may have scrolled: its
    // start is no longer known.
    (row + 1 < SCRATCH_ROWS).then_some(row)
}

/// `bytes` without any `needle`.
fn strip(bytes: &[u8], needle: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..at]);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40×6 screen after `bytes`.
    fn screen(bytes: &[&[u8]]) -> vt100::Parser {
        let (rows, cols) = (std::num::NonZeroU16::new(6).unwrap(), std::num::NonZeroU16::new(40).unwrap());
        let mut p = vt100::Parser::new(rows, cols, 0);
        for b in bytes {
            p.process(b);
        }
        p
    }

    fn at_prompt(drawn: &[&[u8]]) -> PromptLine {
        let mut p = PromptLine::default();
        p.marker(&ShellEvent::PromptStart);
        for d in drawn {
            p.shown(d);
            if d.ends_with(b"$ ") {
                p.marker(&ShellEvent::InputStart);
            }
        }
        p
    }

    #[test]
    fn a_line_goes_above_a_prompt_and_the_half_typed_line_comes_back_where_it_was() {
        // `ls` at the first prompt, its output, a second prompt with
        // `echo hel` typed and the cursor moved back two columns.
        let before: &[u8] = b"$ ls\r\nfile\r\n";
        let drawn: [&[u8]; 3] = [b"$ ", b"echo hel", b"\x08\x08"];
        let p = at_prompt(&drawn);
        let bytes = p.above("! task 1 blocked\r\n", 40).unwrap();
        let mut s = screen(&[before]);
        for d in drawn {
            s.process(d);
        }
        s.process(&bytes);
        let rows: Vec<String> = s.screen().rows(0, 40).collect();
        assert_eq!(rows[..4], ["$ ls", "file", "! task 1 blocked", "$ echo hel"], "{rows:?}");
        assert_eq!(s.screen().cursor_position(), (3, 8));
        // The shell's next key lands where it would have.
        s.process(b"X");
        assert_eq!(s.screen().rows(0, 40).nth(3).unwrap(), "$ echo hXl");
    }

    #[test]
    fn a_two_line_prompt_and_a_wrapped_line_move_down_whole() {
        let drawn: [&[u8]; 3] = [b"~/proj (main)\r\n", b"$ ", &[b'x'; 50]];
        let p = at_prompt(&drawn);
        let bytes = p.above("! alert\r\n", 40).unwrap();
        let mut s = screen(&[b"old\r\n"]);
        for d in drawn {
            s.process(d);
        }
        s.process(&bytes);
        let rows: Vec<String> = s.screen().rows(0, 40).collect();
        assert_eq!(rows[0], "old");
        assert_eq!(rows[1], "! alert");
        assert_eq!(rows[2], "~/proj (main)");
        assert_eq!(rows[3], format!("$ {}", "x".repeat(38)));
        assert_eq!(rows[4], "x".repeat(12));
        assert_eq!(s.screen().cursor_position(), (4, 12));
    }

    #[test]
    fn only_while_the_shell_reads_a_line() {
        let mut p = PromptLine::default();
        assert_eq!(p.above("x\r\n", 80), None);
        p.marker(&ShellEvent::PromptStart);
        p.shown(b"$ ");
        assert_eq!(p.above("x\r\n", 80), None, "the prompt is still being drawn");
        p.marker(&ShellEvent::InputStart);
        assert!(p.above("x\r\n", 80).is_some());
        p.marker(&ShellEvent::CommandStart);
        p.shown(b"output");
        assert_eq!(p.above("x\r\n", 80), None);
        p.marker(&ShellEvent::PromptStart);
        p.shown(&vec![b'y'; MAX_BYTES + 1]);
        p.marker(&ShellEvent::InputStart);
        assert_eq!(p.above("x\r\n", 80), None, "too long to draw again");
    }

    #[test]
    fn a_cursor_position_request_is_not_asked_again() {
        let p = at_prompt(&[b"\x1b[6n$ "]);
        let bytes = p.above("x\r\n", 80).unwrap();
        assert!(!bytes.windows(4).any(|w| w == b"\x1b[6n"), "{bytes:?}");
        assert!(bytes.ends_with(b"x\r\n$ "));
    }
}
