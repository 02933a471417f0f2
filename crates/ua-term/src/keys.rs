//! Keystroke decoding for the instruction line editor and the line model.
//!
//! The outer terminal sends bytes; unixagent needs keys only to edit an
//! instruction and to keep a rough model of the shell's line. Each decoded
//! [`Key`] keeps the exact bytes it came from, so passing keys on to the
//! shell is lossless.

/// One keystroke (or paste marker) with the bytes it was made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keystroke {
    pub key: Key,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Backspace,
    Tab,
    Esc,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    Delete,
    /// A control character: `Ctrl('c')` for 0x03.
    Ctrl(char),
    /// `ESC [ 200 ~`: bracketed paste begins.
    PasteStart,
    /// `ESC [ 201 ~`: bracketed paste ends.
    PasteEnd,
    /// Any other escape sequence (function keys, mouse reports, Alt+key).
    Other,
}

/// Incremental decoder; holds an incomplete UTF-8 character or escape
/// sequence between reads.
#[derive(Debug, Default)]
pub struct KeyDecoder {
    pending: Vec<u8>,
}

impl KeyDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`. A lone ESC at the very end of a read is the Esc key:
    /// terminals send a whole escape sequence in one write, so waiting for
    /// more would only delay the key.
    pub fn decode(&mut self, bytes: &[u8]) -> Vec<Keystroke> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut i = 0;
        while i < buf.len() {
            match decode_one(&buf[i..]) {
                Some((key, len)) => {
                    out.push(Keystroke { key, bytes: buf[i..i + len].to_vec() });
                    i += len;
                }
                None => {
                    self.pending = buf[i..].to_vec();
                    break;
                }
            }
        }
        out
    }
}

/// Decodes one key from the front of `b`; `None` when `b` holds only the
/// start of a key.
fn decode_one(b: &[u8]) -> Option<(Key, usize)> {
    let first = b[0];
    let key = match first {
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        b'\t' => Key::Tab,
        0x1b => return decode_escape(b),
        0x00..=0x1f => Key::Ctrl(char::from(first + 0x60)),
        _ => return decode_utf8(b),
    };
    Some((key, 1))
}

fn decode_escape(b: &[u8]) -> Option<(Key, usize)> {
    let Some(&second) = b.get(1) else {
        return Some((Key::Esc, 1));
    };
    match second {
        b'[' => {
            // CSI: parameters and intermediates, then a final byte 0x40..=0x7e.
            let end = b[2..].iter().position(|c| (0x40..=0x7e).contains(c))?;
            let len = 2 + end + 1;
            let params = &b[2..2 + end];
            let key = match (params, b[len - 1]) {
                (b"", b'A') => Key::Up,
                (b"", b'B') => Key::Down,
                (b"", b'C') => Key::Right,
                (b"", b'D') => Key::Left,
                (b"", b'H') | (b"1" | b"7", b'~') => Key::Home,
                (b"", b'F') | (b"4" | b"8", b'~') => Key::End,
                (b"3", b'~') => Key::Delete,
                (b"200", b'~') => Key::PasteStart,
                (b"201", b'~') => Key::PasteEnd,
                _ => Key::Other,
            };
            Some((key, len))
        }
        b'O' => {
            // SS3: application cursor keys, sent while readline has the
            // keypad in transmit mode.
            let &third = b.get(2)?;
            let key = match third {
                b'A' => Key::Up,
                b'B' => Key::Down,
                b'C' => Key::Right,
                b'D' => Key::Left,
                b'H' => Key::Home,
                b'F' => Key::End,
                _ => Key::Other,
            };
            Some((key, 3))
        }
        // ESC ESC: the first is a lone Esc key.
        0x1b => Some((Key::Esc, 1)),
        // Alt+key.
        _ => Some((Key::Other, 2)),
    }
}

fn decode_utf8(b: &[u8]) -> Option<(Key, usize)> {
    let len = match b[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        // A stray continuation or invalid lead byte: pass it on as-is.
        _ => return Some((Key::Other, 1)),
    };
    if b.len() < len {
        return None;
    }
    match std::str::from_utf8(&b[..len]).ok().and_then(|s| s.chars().next()) {
        Some(c) => Some((Key::Char(c), len)),
        None => Some((Key::Other, 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(chunks: &[&[u8]]) -> Vec<Key> {
        let mut d = KeyDecoder::new();
        chunks.iter().flat_map(|c| d.decode(c)).map(|k| k.key).collect()
    }

    #[test]
    fn plain_and_control() {
        assert_eq!(
            keys(&[b"a#\r\x7f\x03\x15\x17"]),
            vec![
                Key::Char('a'),
                Key::Char('#'),
                Key::Enter,
                Key::Backspace,
                Key::Ctrl('c'),
                Key::Ctrl('u'),
                Key::Ctrl('w')
            ]
        );
    }

    #[test]
    fn arrows_in_both_cursor_modes() {
        assert_eq!(
            keys(&[b"\x1b[A\x1bOB\x1b[C\x1bOD\x1b[3~\x1b[H\x1b[4~"]),
            vec![Key::Up, Key::Down, Key::Right, Key::Left, Key::Delete, Key::Home, Key::End]
        );
    }

    #[test]
    fn split_sequences_are_reassembled() {
        assert_eq!(keys(&[b"\x1b[2", b"00~x\x1b[20", b"1~"]), vec![Key::PasteStart, Key::Char('x'), Key::PasteEnd]);
        assert_eq!(keys(&["é".as_bytes()[..1].as_ref(), &"é".as_bytes()[1..]]), vec![Key::Char('é')]);
    }

    #[test]
    fn lone_escape_and_alt() {
        assert_eq!(keys(&[b"\x1b"]), vec![Key::Esc]);
        assert_eq!(keys(&[b"\x1bx"]), vec![Key::Other]);
    }

    #[test]
    fn bytes_are_kept_exactly() {
        let mut d = KeyDecoder::new();
        let input = b"a\x1b[1;5Cb\xff\x1bOA";
        let all: Vec<u8> = d.decode(input).into_iter().flat_map(|k| k.bytes).collect();
        assert_eq!(all, input);
    }
}
