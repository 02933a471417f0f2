//! The instruction line editor.
//!
//! When a line at the prompt starts with `#`, unixagent edits it itself
//! instead of the shell: it echoes, moves and deletes, and redraws the line
//! after the shell's prompt. The editor is a plain value: keys go in, bytes
//! for the terminal and an [`Outcome`] come out. It knows the column where
//! the prompt ended and the terminal width, so it can redraw a line that
//! wraps over several rows.

use crate::keys::Key;
use unicode_width::UnicodeWidthChar;

/// What a key did to the instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still editing.
    Editing,
    /// Enter: the instruction is complete.
    Submit(String),
    /// Ctrl+C: the instruction is dropped; the line is erased.
    Abandon,
    /// The prefix was deleted: the (empty) line belongs to the shell again.
    HandBack,
}

#[derive(Debug)]
pub struct LineEditor {
    prefix: &'static str,
    text: Vec<char>,
    cursor: usize,
    start_col: usize,
    width: usize,
    /// Where the terminal cursor is now, as a display offset from the start
    /// of the prefix.
    drawn_at: usize,
    history: Vec<String>,
    /// Position while browsing history, and the line being edited before.
    browsing: Option<(usize, Vec<char>)>,
}

impl LineEditor {
    /// Starts editing after a prompt that ends at `start_col` on a terminal
    /// `width` columns wide. Returns the editor and the bytes that draw the
    /// prefix. `history` holds earlier instructions, oldest first.
    pub fn start(prefix: &'static str, start_col: u16, width: u16, history: Vec<String>) -> (Self, Vec<u8>) {
        let mut ed = Self {
            prefix,
            text: Vec::new(),
            cursor: 0,
            start_col: usize::from(start_col),
            width: usize::from(width.max(2)),
            drawn_at: 0,
            history,
            browsing: None,
        };
        let mut out = Vec::new();
        out.extend_from_slice(prefix.as_bytes());
        ed.drawn_at = prefix.chars().count();
        ed.fix_pending_wrap(&mut out);
        (ed, out)
    }

    pub fn text(&self) -> String {
        self.text.iter().collect()
    }

    /// Inserts pasted text at the cursor (newlines become spaces: a pasted
    /// block of `#` lines is one instruction).
    pub fn insert_str(&mut self, s: &str) -> Vec<u8> {
        for c in s.chars() {
            let c = if c == '\n' || c == '\r' || c == '\t' { ' ' } else { c };
            if !c.is_control() {
                self.text.insert(self.cursor, c);
                self.cursor += 1;
            }
        }
        self.render()
    }

    /// Draws the whole line again from `start_col` of the cursor's row: the
    /// shell redrew its own (empty) line over ours, from keys it had not
    /// echoed yet when the `#` came (zsh-autosuggestions and
    /// zsh-syntax-highlighting redraw after every key) or from an
    /// asynchronous prompt refresh. The shell leaves the cursor on its input
    /// row; where in that row does not matter.
    pub fn redraw(&mut self, start_col: u16) -> Vec<u8> {
        self.start_col = usize::from(start_col);
        self.drawn_at = 0;
        self.render()
    }

    /// The terminal was resized.
    pub fn resize(&mut self, width: u16) -> Vec<u8> {
        self.width = usize::from(width.max(2));
        self.render()
    }

    pub fn handle(&mut self, key: &Key) -> (Vec<u8>, Outcome) {
        let out = match key {
            Key::Enter => {
                let mut out = self.move_to(self.end_offset());
                out.extend_from_slice(b"\r\n");
                let text = self.text().trim().to_string();
                if !text.is_empty() && self.history.last() != Some(&text) {
                    self.history.push(text.clone());
                }
                return (out, Outcome::Submit(text));
            }
            Key::Ctrl('c') => return (self.erase_all(), Outcome::Abandon),
            Key::Backspace if self.cursor == 0 && self.text.is_empty() => {
                return (self.erase_all(), Outcome::HandBack);
            }
            Key::Char(c) => {
                self.text.insert(self.cursor, *c);
                self.cursor += 1;
                if self.cursor == self.text.len() && self.drawn_at == self.offset_of(self.cursor - 1) {
                    // Typing at the end: just print the character.
                    let mut out = c.to_string().into_bytes();
                    self.drawn_at = self.offset_of(self.cursor);
                    self.fix_pending_wrap(&mut out);
                    return (out, Outcome::Editing);
                }
                self.render()
            }
            Key::Backspace => {
                if self.cursor > 0 {
                    self.cursor -= 1;
                    self.text.remove(self.cursor);
                }
                self.render()
            }
            Key::Delete | Key::Ctrl('d') => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
                self.render()
            }
            Key::Ctrl('u') => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
                self.render()
            }
            Key::Ctrl('k') => {
                self.text.truncate(self.cursor);
                self.render()
            }
            Key::Ctrl('w') => {
                let mut start = self.cursor;
                while start > 0 && self.text[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && self.text[start - 1] != ' ' {
                    start -= 1;
                }
                self.text.drain(start..self.cursor);
                self.cursor = start;
                self.render()
            }
            Key::Left | Key::Ctrl('b') => {
                self.cursor = self.cursor.saturating_sub(1);
                self.move_to(self.offset_of(self.cursor))
            }
            Key::Right | Key::Ctrl('f') => {
                self.cursor = (self.cursor + 1).min(self.text.len());
                self.move_to(self.offset_of(self.cursor))
            }
            Key::Home | Key::Ctrl('a') => {
                self.cursor = 0;
                self.move_to(self.offset_of(0))
            }
            Key::End | Key::Ctrl('e') => {
                self.cursor = self.text.len();
                self.move_to(self.end_offset())
            }
            Key::Up => self.history_step(-1),
            Key::Down => self.history_step(1),
            _ => Vec::new(),
        };
        (out, Outcome::Editing)
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    fn history_step(&mut self, dir: isize) -> Vec<u8> {
        let len = self.history.len();
        let current = self.browsing.as_ref().map_or(len, |(i, _)| *i);
        let Some(next) = current.checked_add_signed(dir).filter(|n| *n <= len) else {
            return Vec::new();
        };
        if next == current {
            return Vec::new();
        }
        if self.browsing.is_none() {
            self.browsing = Some((next, self.text.clone()));
        }
        if next == len {
            if let Some((_, saved)) = self.browsing.take() {
                self.text = saved;
            }
        } else {
            self.text = self.history[next].chars().collect();
            if let Some(b) = self.browsing.as_mut() {
                b.0 = next;
            }
        }
        self.cursor = self.text.len();
        self.render()
    }

    /// Display offset (columns from the start of the prefix) of the gap
    /// before `text[index]`.
    fn offset_of(&self, index: usize) -> usize {
        self.prefix.chars().count() + self.text[..index].iter().map(|c| c.width().unwrap_or(0)).sum::<usize>()
    }

    fn end_offset(&self) -> usize {
        self.offset_of(self.text.len())
    }

    fn row_col(&self, offset: usize) -> (usize, usize) {
        let abs = self.start_col + offset;
        (abs / self.width, abs % self.width)
    }

    /// Bytes that move the cursor from where it is to `offset`.
    fn move_to(&mut self, offset: usize) -> Vec<u8> {
        let (from_row, _) = self.row_col(self.drawn_at);
        let (to_row, to_col) = self.row_col(offset);
        let mut out = Vec::new();
        if to_row < from_row {
            out.extend(format!("\x1b[{}A", from_row - to_row).bytes());
        } else if to_row > from_row {
            out.extend(format!("\x1b[{}B", to_row - from_row).bytes());
        }
        out.push(b'\r');
        if to_col > 0 {
            out.extend(format!("\x1b[{to_col}C").bytes());
        }
        self.drawn_at = offset;
        out
    }

    /// Redraws prefix and text from the start and puts the cursor in place.
    fn render(&mut self) -> Vec<u8> {
        let mut out = self.move_to(0);
        out.extend_from_slice(b"\x1b[J");
        out.extend_from_slice(self.prefix.as_bytes());
        out.extend(self.text().bytes());
        self.drawn_at = self.end_offset();
        self.fix_pending_wrap(&mut out);
        let target = self.offset_of(self.cursor);
        out.extend(self.move_to(target));
        out
    }

    /// Clears the prefix and text, leaving the cursor where the prompt ended.
    fn erase_all(&mut self) -> Vec<u8> {
        let mut out = self.move_to(0);
        out.extend_from_slice(b"\x1b[J");
        out
    }

    /// After printing up to the exact end of a row the terminal holds the
    /// cursor on the last column ("pending wrap"); a CR LF puts it where our
    /// arithmetic says it is, at the start of the next row.
    fn fix_pending_wrap(&mut self, out: &mut Vec<u8>) {
        let (_, col) = self.row_col(self.drawn_at);
        if col == 0 && self.drawn_at > 0 {
            out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
#[path = "editor_tests.rs"]
mod tests;
