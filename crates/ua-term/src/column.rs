//! Where on its row the shell left the cursor.
//!
//! unixagent draws an instruction right after the shell's prompt, so its line
//! editor must know the column the prompt ended at, including after a prompt
//! that wrapped or that followed output with no trailing newline. Rather
//! than run a whole terminal emulator over every byte, [`LineTail`] keeps
//! only the bytes since the last CR or LF (found from the end with a
//! vectorised search, so bulk output costs almost nothing) and interprets
//! that short tail only when a column is asked for.

use memchr::memrchr2;
use unicode_width::UnicodeWidthChar;

/// Longest tail kept. A "line" longer than this is bulk output, not a prompt.
const MAX_TAIL: usize = 8192;

#[derive(Debug, Default)]
pub struct LineTail {
    buf: Vec<u8>,
    overflow: bool,
}

impl LineTail {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records output that reached the terminal.
    pub fn feed(&mut self, bytes: &[u8]) {
        match memrchr2(b'\n', b'\r', bytes) {
            Some(pos) => {
                self.buf.clear();
                self.overflow = false;
                self.push(&bytes[pos + 1..]);
            }
            None => self.push(bytes),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        if self.buf.len() + bytes.len() > MAX_TAIL {
            self.overflow = true;
            self.buf.clear();
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// The visible text of the current line, escape sequences removed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        walk(&self.buf, |item| {
            if let Item::Print(c, _) = item {
                out.push(c);
            }
        });
        out
    }

    /// The column (0-based) where the next printed character would land on a
    /// terminal `width` columns wide, or `None` when the line is too long to
    /// have been tracked.
    pub fn column(&self, width: u16) -> Option<u16> {
        if self.overflow {
            return None;
        }
        let width = usize::from(width.max(1));
        let mut x = 0usize;
        let mut pending_wrap = false;
        walk(&self.buf, |item| match item {
            Item::Print(_, w) => {
                if pending_wrap || x + w > width {
                    x = 0;
                    pending_wrap = false;
                }
                x += w;
                if x >= width {
                    x = width - 1;
                    pending_wrap = true;
                }
            }
            Item::Move(mv) => {
                pending_wrap = false;
                x = match mv {
                    Move::Right(n) => (x + n).min(width - 1),
                    Move::Left(n) => x.saturating_sub(n),
                    Move::To(n) => n.min(width - 1),
                    Move::Tab => ((x / 8 + 1) * 8).min(width - 1),
                };
            }
        });
        let col = if pending_wrap { 0 } else { x };
        u16::try_from(col).ok()
    }
}

enum Item {
    Print(char, usize),
    Move(Move),
}

enum Move {
    Right(usize),
    Left(usize),
    To(usize),
    Tab,
}

/// Walks a line's bytes, reporting printable characters with their width and
/// cursor movements; everything else (SGR, OSC, other controls) is skipped.
fn walk(bytes: &[u8], mut f: impl FnMut(Item)) {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    let mut params = String::new();
                    let mut fin = None;
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            fin = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    let n = params.split(';').next().and_then(|p| p.parse().ok()).unwrap_or(1);
                    match fin {
                        Some('C') => f(Item::Move(Move::Right(n))),
                        Some('D') => f(Item::Move(Move::Left(n))),
                        Some('G') => f(Item::Move(Move::To(n.saturating_sub(1)))),
                        _ => {}
                    }
                }
                Some(']') => {
                    // OSC: skip to BEL or ST.
                    while let Some(c) = chars.next() {
                        if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                // An escape with intermediates (`ESC ( B` picks a character
                // set; fish writes it after every colour): its final byte is
                // not printed.
                Some(c) if ('\x20'..='\x2f').contains(&c) => {
                    while chars.next_if(|c| ('\x20'..='\x2f').contains(c)).is_some() {}
                    chars.next();
                }
                _ => {}
            },
            '\x08' => f(Item::Move(Move::Left(1))),
            '\t' => f(Item::Move(Move::Tab)),
            c if c.is_control() => {}
            c => f(Item::Print(c, c.width().unwrap_or(0))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(chunks: &[&[u8]], width: u16) -> Option<u16> {
        let mut t = LineTail::new();
        for c in chunks {
            t.feed(c);
        }
        t.column(width)
    }

    #[test]
    fn plain_prompt() {
        assert_eq!(col(&[b"output\r\nuser@host:~$ "], 80), Some(13));
    }

    #[test]
    fn colours_and_osc_take_no_room() {
        let p = b"\x1b]133;A\x07\x1b[1;32muser\x1b[0m:\x1b]0;title\x1b\\~$ \x1b]133;B\x07";
        assert_eq!(col(&[p], 80), Some(8));
    }

    #[test]
    fn prompt_after_output_without_newline() {
        assert_eq!(col(&[b"done\n", b"abc", b"$ "], 80), Some(5));
    }

    #[test]
    fn wide_characters_and_wrapping() {
        assert_eq!(col(&["日本 $ ".as_bytes()], 80), Some(7));
        assert_eq!(col(&[b"0123456789ab"], 10), Some(2));
        // Exactly filling the row leaves the next character on the next row.
        assert_eq!(col(&[b"0123456789"], 10), Some(0));
    }

    #[test]
    fn a_character_set_designation_takes_no_room() {
        assert_eq!(col(&[b"\x1b[30m\x1b(B\x1b[mPS1-MARK> "], 80), Some(10));
        assert_eq!(col(&[b"\x1b#8\x1b %Gab"], 80), Some(2));
    }

    #[test]
    fn cursor_movements() {
        // zsh draws a right prompt, then moves back left.
        assert_eq!(col(&[b"% \x1b[70C[rprompt]\x1b[79D\x1b[2C"], 80), Some(2));
        assert_eq!(col(&[b"abc\x08\x08"], 80), Some(1));
        assert_eq!(col(&[b"\x1b[5G> "], 80), Some(6));
        assert_eq!(col(&[b"a\t"], 80), Some(8));
    }

    #[test]
    fn text_strips_escapes() {
        let mut t = LineTail::new();
        t.feed(b"x\r\n\x1b[1mbold\x1b[0m $ ");
        assert_eq!(t.text(), "bold $ ");
    }

    #[test]
    fn overlong_line_has_no_column() {
        let long = vec![b'a'; MAX_TAIL + 1];
        assert_eq!(col(&[&long], 80), None);
        assert_eq!(col(&[&long, b"\n$ "], 80), Some(2));
    }
}
