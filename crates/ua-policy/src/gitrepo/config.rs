//! git's configuration file syntax, read the way git's own parser reads it
//! (`config.c`: `git_parse_source`, `get_base_var`, `get_value`,
//! `parse_value`), so that a key git sees is a key we see.
//!
//! - `[section]`, `[section "subsection"]` (the subsection is case-sensitive,
//!   `\x` in it stands for `x`), and the old `[section.subsection]` (all
//!   lower-cased). A key may follow the `]` on the same line.
//! - Section and key names are case-insensitive; keys start with a letter
//!   and go on with letters, digits and `-`.
//! - `key = value`, or a bare `key` (which means true).
//! - In values: `"…"` keeps spaces and `;`/`#`; outside quotes `;` and `#`
//!   start a comment and spaces collapse at the ends; `\n` `\t` `\b` `\\`
//!   `\"` are escapes and `\` at the end of a line continues the value.
//!   Any other escape is an error.
//! - CRLF line ends and a UTF-8 byte order mark are accepted.
//!
//! An error stops the parse; the entries before it are kept, because some
//! of git's readers report a bad line and go on with what they read.

/// The largest file read: git itself has no such limit, so a bigger file
/// is reported as unreadable rather than skipped.
pub const MAX_LEN: usize = 1 << 20;

/// One `name = value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `section[.subsection].key`, section and key lower-cased, the
    /// subsection as written (lower-cased in the `[a.b]` form).
    pub name: String,
    /// The value; `None` for a bare `key`, which git reads as true.
    pub value: Option<String>,
    /// One-based line where the key starts.
    pub line: usize,
}

impl Entry {
    /// The section (`core`, `diff`, `filter`).
    pub fn section(&self) -> &str {
        self.name.split_once('.').map_or("", |(s, _)| s)
    }

    /// The subsection, if any (`lfs` in `filter.lfs.clean`).
    pub fn subsection(&self) -> Option<&str> {
        let (_, rest) = self.name.split_once('.')?;
        rest.rsplit_once('.').map(|(sub, _)| sub)
    }

    /// The key (`clean` in `filter.lfs.clean`).
    pub fn key(&self) -> &str {
        self.name.rsplit_once('.').map_or(self.name.as_str(), |(_, k)| k)
    }
}

/// A parsed file: its entries in order, and the line of the first error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// Every entry up to the first error.
    pub entries: Vec<Entry>,
    /// The one-based line git would call a bad config line, if any.
    pub error_line: Option<usize>,
}

impl Config {
    /// The entries whose section, subsection and key match; `None` for the
    /// subsection matches only entries without one, `Some("*")` any.
    pub fn find<'a>(&'a self, section: &'a str, sub: Option<&'a str>, key: &'a str) -> impl Iterator<Item = &'a Entry> {
        self.entries.iter().filter(move |e| {
            e.section() == section
                && e.key() == key
                && match (sub, e.subsection()) {
                    (None, None) => true,
                    (Some("*"), Some(_)) => true,
                    (Some(want), Some(have)) => want == have,
                    _ => false,
                }
        })
    }
}

/// Reads configuration text.
pub fn parse(src: &[u8]) -> Config {
    let src = src.strip_prefix(b"\xef\xbb\xbf").unwrap_or(src);
    let mut r = Reader { s: src, pos: 0, line: 1, eof: false };
    let mut out = Config::default();
    let mut var: Vec<u8> = Vec::new();
    let mut base_len = 0;
    let mut comment = false;
    loop {
        let c = r.next();
        if c == b'\n' {
            if r.eof {
                return out;
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        let line = r.line;
        let ok = if c == b'[' {
            var.clear();
            let ok = base_var(&mut r, &mut var).is_some() && !var.is_empty();
            var.push(b'.');
            base_len = var.len();
            ok
        } else if c.is_ascii_alphabetic() {
            var.truncate(base_len);
            var.push(c.to_ascii_lowercase());
            match value(&mut r, &mut var) {
                Some(value) => {
                    let name = String::from_utf8_lossy(&var).into_owned();
                    let value = value.map(|v| String::from_utf8_lossy(&v).into_owned());
                    out.entries.push(Entry { name, value, line });
                    true
                }
                None => false,
            }
        } else {
            false
        };
        if !ok {
            out.error_line = Some(line);
            return out;
        }
    }
}

/// git's `isspace` (sane_ctype: space, tab, CR, LF).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// A byte stream with git's `get_next_char`: CRLF reads as LF, and the end
/// of the text reads as a final LF with `eof` set.
struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    eof: bool,
}

impl Reader<'_> {
    fn next(&mut self) -> u8 {
        let Some(&c) = self.s.get(self.pos) else {
            self.eof = true;
            return b'\n';
        };
        self.pos += 1;
        if c == b'\r' && self.s.get(self.pos) == Some(&b'\n') {
            self.pos += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }
}

/// `[name]`, `[name "sub"]` after the `[`.
fn base_var(r: &mut Reader<'_>, name: &mut Vec<u8>) -> Option<()> {
    loop {
        let c = r.next();
        if r.eof {
            return None;
        }
        if c == b']' {
            return Some(());
        }
        if is_space(c) {
            return extended_base_var(r, name, c);
        }
        if !is_key_char(c) && c != b'.' {
            return None;
        }
        name.push(c.to_ascii_lowercase());
    }
}

/// The ` "sub"]` of `[name "sub"]`.
fn extended_base_var(r: &mut Reader<'_>, name: &mut Vec<u8>, mut c: u8) -> Option<()> {
    loop {
        if c == b'\n' {
            return None;
        }
        c = r.next();
        if !is_space(c) {
            break;
        }
    }
    if c != b'"' {
        return None;
    }
    name.push(b'.');
    loop {
        let mut c = r.next();
        if c == b'\n' {
            return None;
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = r.next();
            if c == b'\n' {
                return None;
            }
        }
        name.push(c);
    }
    (r.next() == b']').then_some(())
}

/// The rest of a key after its first letter, then `= value` or nothing.
/// `Some(None)` is a bare key; `None` an error.
fn value(r: &mut Reader<'_>, name: &mut Vec<u8>) -> Option<Option<Vec<u8>>> {
    let mut c;
    loop {
        c = r.next();
        if r.eof || !is_key_char(c) {
            break;
        }
        name.push(c.to_ascii_lowercase());
    }
    while c == b' ' || c == b'\t' {
        c = r.next();
    }
    if c == b'\n' {
        return Some(None);
    }
    if c != b'=' {
        return None;
    }
    parse_value(r).map(Some)
}

fn parse_value(r: &mut Reader<'_>) -> Option<Vec<u8>> {
    let (mut quote, mut comment, mut space) = (false, false, 0usize);
    let mut v = Vec::new();
    loop {
        let c = r.next();
        if c == b'\n' {
            return if quote { None } else { Some(v) };
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if !v.is_empty() {
                space += 1;
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        v.extend(std::iter::repeat_n(b' ', space));
        space = 0;
        match c {
            b'\\' => {
                let e = r.next();
                let lit = match e {
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    b'\\' | b'"' => e,
                    _ => return None,
                };
                v.push(lit);
            }
            b'"' => quote = !quote,
            _ => v.push(c),
        }
    }
}

/// git's `git_parse_maybe_bool`: `Some(bool)` for the boolean spellings
/// (and integers, which git also takes as booleans), `None` otherwise.
/// A bare key is true.
pub fn maybe_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else { return Some(true) };
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        s => {
            let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
            let digits = digits.strip_suffix(['k', 'm', 'g']).unwrap_or(digits);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.bytes().any(|b| b != b'0'))
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
