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

    /// Whether a key is half read (the start of an escape sequence waits
    /// for the rest).
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
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
                (p, b'u') => csi_u(p),
                (p, b'~') if p.starts_with(b"27;") => modify_other_keys(p),
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

/// The kitty keyboard protocol's `CSI code[:alternates] [; mods[:event]] u`.
/// fish 4 turns it on at its prompt; a terminal that speaks it then sends
/// Esc, Ctrl+letter and Alt+key this way while unixagent edits an
/// instruction or runs a turn there.
fn csi_u(params: &[u8]) -> Key {
    let mut fields = params.split(|&b| b == b';');
    let code = fields.next().and_then(|f| number(f.split(|&b| b == b':').next().unwrap_or(f)));
    let mods = fields.next().and_then(|f| number(f.split(|&b| b == b':').next().unwrap_or(f))).unwrap_or(1);
    code.map_or(Key::Other, |c| key_with_mods(c, mods))
}

/// xterm's modifyOtherKeys: `CSI 27 ; mods ; code ~` (fish 4 asks for it
/// too).
fn modify_other_keys(params: &[u8]) -> Key {
    let mut fields = params.split(|&b| b == b';').skip(1);
    match (fields.next().and_then(number), fields.next().and_then(number)) {
        (Some(mods), Some(code)) => key_with_mods(code, mods),
        _ => Key::Other,
    }
}

/// A key by its Unicode code point and the protocol's modifier value (1 +
/// shift 1, alt 2, ctrl 4; other bits are lock keys and ignored).
fn key_with_mods(code: u32, mods: u32) -> Key {
    let mods = mods.saturating_sub(1) & 0b111;
    let (alt, ctrl) = (mods & 2 != 0, mods & 4 != 0);
    let plain = match code {
        13 => Key::Enter,
        9 => Key::Tab,
        27 => Key::Esc,
        127 | 8 => Key::Backspace,
        c => match char::from_u32(c) {
            Some(c) if ctrl && c.is_ascii_alphabetic() => {
                return if alt { Key::Other } else { Key::Ctrl(c.to_ascii_lowercase()) };
            }
            Some(c) if !c.is_control() => Key::Char(c),
            _ => Key::Other,
        },
    };
    if alt || ctrl { Key::Other } else { plain }
}

fn number(b: &[u8]) -> Option<u32> {
    std::str::from_utf8(b).ok()?.parse().ok()
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
    fn kitty_keyboard_protocol_and_modify_other_keys() {
        // What a terminal sends while fish 4 has the kitty protocol on:
        // Ctrl+C, Ctrl+U, Esc, Ctrl+W with an alternate key, Alt+x, shifted
        // `A` with its base key; then modifyOtherKeys' Ctrl+C.
        assert_eq!(
            keys(&[b"\x1b[99;5u\x1b[117;5u\x1b[27u\x1b[119:87;5u\x1b[120;3u\x1b[65:97;2u\x1b[27;5;99~"]),
            vec![Key::Ctrl('c'), Key::Ctrl('u'), Key::Esc, Key::Ctrl('w'), Key::Other, Key::Char('A'), Key::Ctrl('c')]
        );
        // Enter, Tab and Backspace when reported as escape codes, and a
        // press event type read past.
        assert_eq!(
            keys(&[b"\x1b[13u\x1b[9u\x1b[127u\x1b[99;5:1u"]),
            vec![Key::Enter, Key::Tab, Key::Backspace, Key::Ctrl('c')]
        );
    }

    #[test]
    fn bytes_are_kept_exactly() {
        let mut d = KeyDecoder::new();
        let input = b"a\x1b[1;5Cb\xff\x1bOA";
        let all: Vec<u8> = d.decode(input).into_iter().flat_map(|k| k.bytes).collect();
        assert_eq!(all, input);
    }
}
