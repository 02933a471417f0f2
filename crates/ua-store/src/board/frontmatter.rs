//! The flat YAML frontmatter of a task file, read and written by hand.
//!
//! A task file is `---`, `key: value` lines, `---`, then a Markdown body.
//! unixagent writes a small subset of YAML: plain or double-quoted
//! strings, numbers, and lists in brackets (`tags: [a, "b c"]`). It reads
//! that subset plus what people write by hand: single quotes, block lists
//! (`- item` lines under a key), comments and blank lines. Anything else
//! under a key it does not know (a nested map, a block scalar) is kept as
//! it is and never looked at.
//!
//! A hand-written reader rather than a YAML crate, for three reasons:
//!
//! - **Nothing is rewritten blindly.** A [`Document`] keeps every line as
//!   it was read; changing a key replaces that key's lines and nothing
//!   else, so unknown keys, comments, order and spelling survive a claim
//!   or a move byte for byte. A YAML crate would parse into a tree and
//!   print it back its own way, losing comments and formatting.
//! - **Errors name the line.** A broken file is reported as
//!   `path:line: what is wrong`, so a person can fix it.
//! - **The tree stays lean.** The maintained YAML crates are large for a
//!   format of eight flat keys, and serde_yaml itself is no longer kept.
//!
//! Pure: text in, text out.

use std::fmt::Write as _;

/// A frontmatter line unixagent cannot read. `line` counts from 1 for the
/// file's first line (the opening `---`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub line: usize,
    pub message: String,
}

impl Broken {
    fn at(line: usize, message: impl Into<String>) -> Self {
        Broken { line, message: message.into() }
    }
}

/// A value as far as the subset goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string (quotes removed), a number as written, or empty for a key
    /// with no value, `~` or `null`.
    Scalar(String),
    /// A flow (`[a, b]`) or block (`- a` lines) list of scalars.
    List(Vec<String>),
    /// Something outside the subset (a nested map, a block scalar, a
    /// scalar followed by indented lines): kept, not read.
    Other,
}

/// One entry of the frontmatter: a key with its value and the lines it was
/// read from, or a comment or blank line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: Option<String>,
    /// The entry's lines as read (or as last written), without their `\n`.
    raw: Vec<String>,
    value: Value,
    /// The line number of the entry's first line.
    line: usize,
}

/// A task file: its frontmatter entries and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The opening delimiter line as read (`---`, perhaps with `\r`).
    open: String,
    entries: Vec<Entry>,
    /// The closing delimiter line as read, with its newline if it had one.
    close: String,
    /// Everything after the closing line.
    body: String,
}

impl Document {
    /// A new document with `entries` (in this order) and `body`.
    pub fn new(entries: &[(&str, Value)], body: &str) -> Self {
        let mut doc = Document { open: "---".into(), entries: Vec::new(), close: "---\n".into(), body: String::new() };
        for (k, v) in entries {
            doc.set(k, v.clone());
        }
        doc.set_body(body);
        doc
    }

    /// Reads a task file's text.
    pub fn parse(text: &str) -> Result<Self, Broken> {
        let mut lines = text.split_inclusive('\n');
        let first = lines.next().unwrap_or("");
        if trim_eol(first).trim_end() != "---" {
            return Err(Broken::at(1, "a task file starts with a line `---` and its frontmatter"));
        }
        let mut entries: Vec<Entry> = Vec::new();
        let mut close = None;
        let mut consumed = first.len();
        let mut n = 1;
        for raw in lines.by_ref() {
            n += 1;
            consumed += raw.len();
            let line = trim_eol(raw);
            let bare = line.trim_end();
            if bare == "---" || bare == "..." {
                close = Some(raw.to_string());
                break;
            }
            if bare.trim_start().is_empty() || bare.trim_start().starts_with('#') {
                entries.push(Entry { key: None, raw: vec![line.into()], value: Value::Other, line: n });
                continue;
            }
            let continuation = line.starts_with([' ', '\t']) || bare == "-" || bare.starts_with("- ");
            if continuation {
                let Some(keyed) = entries.iter().rposition(|e| e.key.is_some()) else {
                    return Err(Broken::at(n, "an indented line or list item comes before any key"));
                };
                // Comments and blank lines between a key and its items
                // belong to the key.
                let between: Vec<String> = entries.drain(keyed + 1..).flat_map(|b| b.raw).collect();
                entries[keyed].raw.extend(between);
                entries[keyed].raw.push(line.into());
                continue;
            }
            let Some((key, _)) = line.split_once(':') else {
                return Err(Broken::at(n, format!("expected `key: value`, found {:?}", clip(bare))));
            };
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return Err(Broken::at(n, format!("{:?} is not a key (letters, digits, `_` and `-`)", clip(key))));
            }
            if entries.iter().any(|e| e.key.as_deref() == Some(key)) {
                return Err(Broken::at(n, format!("`{key}` appears twice")));
            }
            entries.push(Entry { key: Some(key.into()), raw: vec![line.into()], value: Value::Other, line: n });
        }
        let Some(close) = close else {
            return Err(Broken::at(n, "the frontmatter is never closed: add a line `---` after it"));
        };
        for e in entries.iter_mut().filter(|e| e.key.is_some()) {
            e.value = read_value(&e.raw, e.line)?;
        }
        let first = first.trim_end_matches('\n').to_string();
        Ok(Document { open: first, entries, close, body: text[consumed..].to_string() })
    }

    /// The file's text: every line not changed since [`Document::parse`]
    /// exactly as it was read.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.body.len() + 256);
        out.push_str(&self.open);
        out.push('\n');
        for e in &self.entries {
            for l in &e.raw {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str(&self.close);
        if !self.close.ends_with('\n') && !self.body.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.body);
        out
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entry(key).map(|e| &e.value)
    }

    /// The line `key` starts on (for error messages).
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.entry(key).map(|e| e.line)
    }

    /// The keys in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter_map(|e| e.key.as_deref())
    }

    /// Sets `key`, replacing its lines where it stands, or adding it after
    /// the last key.
    pub fn set(&mut self, key: &str, value: Value) {
        let raw = vec![format!("{key}: {}", render_value(&value))];
        match self.entries.iter_mut().find(|e| e.key.as_deref() == Some(key)) {
            Some(e) => {
                if e.value != value {
                    e.raw = raw;
                    e.value = value;
                }
            }
            None => {
                let at = self.entries.iter().rposition(|e| e.key.is_some()).map_or(0, |i| i + 1);
                let line = 0;
                self.entries.insert(at, Entry { key: Some(key.into()), raw, value, line });
            }
        }
    }

    /// Removes `key` and its lines.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|e| e.key.as_deref() != Some(key));
    }

    pub fn body(&self) -> &str {
        &self.body
    }

    /// Sets the body; it ends in a newline unless empty.
    pub fn set_body(&mut self, body: &str) {
        self.body = body.to_string();
        if !self.body.is_empty() && !self.body.ends_with('\n') {
            self.body.push('\n');
        }
    }

    fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key.as_deref() == Some(key))
    }
}

fn trim_eol(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// A short quote of a bad line for an error message.
fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The value of a keyed entry from its lines.
fn read_value(raw: &[String], line: usize) -> Result<Value, Broken> {
    let first = raw.first().map_or("", String::as_str);
    let inline = first.split_once(':').map_or("", |(_, v)| v).trim();
    let rest: Vec<(usize, &str)> = raw[1..]
        .iter()
        .enumerate()
        .map(|(i, l)| (line + 1 + i, l.trim_end_matches('\r').trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if !inline.is_empty() && !inline.starts_with('#') {
        if !rest.is_empty() {
            return Ok(Value::Other);
        }
        if inline.starts_with('[') {
            return flow_list(inline).map(Value::List).map_err(|m| Broken::at(line, m));
        }
        if inline.starts_with(['|', '>', '{', '&', '*', '!']) {
            return Ok(Value::Other);
        }
        return scalar(inline).map(Value::Scalar).map_err(|m| Broken::at(line, m));
    }
    if rest.is_empty() {
        return Ok(Value::Scalar(String::new()));
    }
    let mut items = Vec::new();
    for (n, l) in rest {
        match l.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with(' ')) {
            Some(item) => items.push(scalar(item.trim()).map_err(|m| Broken::at(n, m))?),
            None => return Ok(Value::Other),
        }
    }
    Ok(Value::List(items))
}

/// One scalar: `"double"` (with escapes), `'single'`, or plain text up to
/// a ` #` comment.
fn scalar(s: &str) -> Result<String, String> {
    let (value, after) = if let Some(rest) = s.strip_prefix('"') {
        double_quoted(rest)?
    } else if let Some(rest) = s.strip_prefix('\'') {
        single_quoted(rest)?
    } else {
        let plain = match s.find(" #") {
            Some(i) => &s[..i],
            None => s,
        };
        let plain = plain.trim();
        let v = if plain == "~" || plain == "null" { "" } else { plain };
        return Ok(v.to_string());
    };
    let after = after.trim();
    if !after.is_empty() && !after.starts_with('#') {
        return Err(format!("unexpected text after the closing quote: {:?}", clip(after)));
    }
    Ok(value)
}

/// The inside of a double-quoted string and what follows its closing quote.
fn double_quoted(s: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &s[i + 1..])),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some(c @ ('"' | '\\' | '/')) => out.push(c),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                    let c = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    out.push(c.ok_or_else(|| format!("\\u{hex} is not a character"))?);
                }
                Some(c) => return Err(format!("\\{c} is not an escape unixagent reads")),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err("a double-quoted string is not closed on its line".into())
}

fn single_quoted(s: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().is_some_and(|(_, n)| *n == '\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            return Ok((out, &s[i + 1..]));
        }
        out.push(c);
    }
    Err("a single-quoted string is not closed on its line".into())
}

/// `[a, "b, c", 'd']`.
fn flow_list(s: &str) -> Result<Vec<String>, String> {
    let inner = s.strip_prefix('[').unwrap_or(s);
    let mut items = Vec::new();
    let mut rest = inner.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            let after = after.trim();
            if !after.is_empty() && !after.starts_with('#') {
                return Err(format!("unexpected text after the list: {:?}", clip(after)));
            }
            return Ok(items);
        }
        if rest.is_empty() {
            return Err("a list in brackets is not closed on its line".into());
        }
        let (item, after) = if let Some(r) = rest.strip_prefix('"') {
            double_quoted(r)?
        } else if let Some(r) = rest.strip_prefix('\'') {
            single_quoted(r)?
        } else {
            let end = rest.find([',', ']']).unwrap_or(rest.len());
            let item = rest[..end].trim();
            if item.starts_with(['[', '{']) {
                return Err("lists inside lists are not read; write the items as plain strings".into());
            }
            (item.to_string(), &rest[end..])
        };
        items.push(item);
        let after = after.trim_start();
        rest = match after.strip_prefix(',') {
            Some(r) => r.trim_start(),
            None if after.starts_with(']') || after.is_empty() => after,
            None => return Err(format!("expected `,` or `]` in the list, found {:?}", clip(after))),
        };
    }
}

/// A value as unixagent writes it: one line.
fn render_value(v: &Value) -> String {
    match v {
        Value::Scalar(s) => render_scalar(s),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(|i| render_scalar(i)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Other => String::new(),
    }
}

/// Plain when a YAML reader would take it back as the same string (or
/// the same number, for digits), double-quoted otherwise.
pub fn render_scalar(s: &str) -> String {
    let words = ["true", "false", "yes", "no", "on", "off", "null", "y", "n"];
    let numeric = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let safe = !s.is_empty()
        && (numeric || s.starts_with(|c: char| c.is_alphabetic()))
        && s.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '.' | '/' | '(' | ')' | '-' | '+' | '='))
        && !s.ends_with(' ')
        && !words.contains(&s.to_ascii_lowercase().as_str());
    if safe {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
