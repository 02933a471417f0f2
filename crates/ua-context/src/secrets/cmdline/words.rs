//! A light shell tokenizer: the words after an anchor, as byte ranges of
//! the text. It knows quotes, backslashes, line continuations and the
//! operators that end a command, and nothing else: no expansion, no
//! nesting. It starts wherever it is asked to, so it cannot know whether
//! that place was inside a quoted string; a quote with no partner later
//! on the line is taken to close one and ends the word.

/// Words read after a program's name.
pub(super) const MAX_WORDS: usize = 64;
/// How far a closing quote is looked for.
pub(super) const MAX_QUOTED: usize = 1024;

/// The words of the command after a program's name, up to the end of
/// the command (`;`, `|`, `&`, a redirection, the end of the line) or
/// [`MAX_WORDS`].
pub(super) fn words(t: &[u8], mut at: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    while out.len() < MAX_WORDS
        && let Some((s, e)) = word(t, at, true)
    {
        out.push((s, e));
        at = e;
    }
    out
}

/// The shell word at `at` (after blanks and line continuations when
/// `skip_blanks`), as a byte range; `None` at an operator or the end of
/// the line. Quotes group; an unterminated quote at the start of the word
/// takes the rest of the line, elsewhere it ends the word. Every range
/// starts and ends on a character boundary: all the bytes it stops at
/// are ASCII.
pub(super) fn word(t: &[u8], at: usize, skip_blanks: bool) -> Option<(usize, usize)> {
    let mut i = at;
    if skip_blanks {
        loop {
            match (t.get(i), t.get(i + 1)) {
                (Some(b' ' | b'\t'), _) => i += 1,
                (Some(b'\\'), Some(b'\n')) => i += 2,
                _ => break,
            }
        }
    }
    let start = i;
    while let Some(&c) = t.get(i) {
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' | b'`' => break,
            b'\'' | b'"' => match closing_quote(t, i + 1, c) {
                Some(close) => i = close + 1,
                None if i == start => {
                    i = line_end(t, i);
                    break;
                }
                None => break,
            },
            b'\\' if t.get(i + 1).is_some_and(|&n| n != b'\n' && n.is_ascii()) => i += 2,
            _ => i += 1,
        }
    }
    (i > start).then_some((start, i))
}

/// The closing `q` for a quote opened just before `from`, on the same
/// line and within [`MAX_QUOTED`] bytes; `\` escapes inside `"…"`.
pub(super) fn closing_quote(t: &[u8], from: usize, q: u8) -> Option<usize> {
    let mut i = from;
    let stop = t.len().min(from.saturating_add(MAX_QUOTED));
    while i < stop {
        match t[i] {
            b'\n' | b'\r' => return None,
            c if c == q => return Some(i),
            b'\\' if q == b'"' && !matches!(t.get(i + 1), Some(b'\n' | b'\r')) => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// The end of the line `at` is on, at most [`MAX_QUOTED`] bytes on (then
/// backed off to a character boundary).
fn line_end(t: &[u8], at: usize) -> usize {
    let stop = t.len().min(at.saturating_add(MAX_QUOTED));
    let mut end = t[at..stop].iter().position(|&c| c == b'\n' || c == b'\r').map_or(stop, |p| at + p);
    // A UTF-8 continuation byte is 0b10xx_xxxx.
    while end > at && end < t.len() && t[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    end
}

/// The range inside one pair of quotes that wraps the whole word, so the
/// redaction keeps them (`'[REDACTED:password]'`).
pub(super) fn inner(t: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    match (t.get(s), t.get(e.wrapping_sub(1))) {
        (Some(&a @ (b'\'' | b'"')), Some(&b)) if e - s >= 2 && a == b && closing_quote(t, s + 1, a) == Some(e - 1) => {
            (s + 1, e - 1)
        }
        _ => (s, e),
    }
}
