//! Shell words to argument values: quoting removed, expansions noted.
//!
//! brush-parser keeps words as raw text, so a second pass (brush's word
//! parser) splits each one into pieces. We expand only what is the same on
//! every machine — quotes, escapes, `~`, `$HOME`, and `$IFS` as a field
//! separator — and mark everything else dynamic, because the classifier
//! must never treat a value it cannot see as harmless.

use brush_parser::ParserOptions;
use brush_parser::word::{self, Parameter, ParameterExpr, WordPiece, WordPieceWithSource};
use serde::Serialize;

/// One argument after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Arg {
    /// The value with quotes and escapes removed; `~` and `$HOME` become `~`;
    /// other expansions appear as written (`$X`, `$(…)`).
    pub text: String,
    /// True when part of the value is only known at run time.
    pub dynamic: bool,
    /// True when an unquoted glob character is present (`*`, `?`, `[`).
    pub glob: bool,
}

impl Arg {
    /// A literal argument (used when wrappers synthesise argv).
    pub fn literal(text: impl Into<String>) -> Arg {
        Arg { text: text.into(), dynamic: false, glob: false }
    }
}

/// The result of resolving one word: usually one field, several when an
/// unquoted `$IFS` splits it, plus the scripts of any substitutions in it.
#[derive(Debug, Default)]
pub struct Resolved {
    /// The fields the word becomes.
    pub fields: Vec<Arg>,
    /// Bodies of `$(…)` and backquote substitutions, to be parsed again.
    pub substitutions: Vec<String>,
}

/// Resolves a raw word from the parser.
pub fn resolve(raw: &str) -> Resolved {
    let mut out = Resolved::default();
    let mut cur = Arg::literal("");
    match word::parse(raw, &ParserOptions::default()) {
        Ok(pieces) => {
            for p in &pieces {
                piece(raw, p, false, &mut cur, &mut out);
            }
        }
        Err(_) => {
            // A word the word parser rejects is kept verbatim and treated as
            // dynamic: we cannot say what the shell will make of it.
            cur.text = raw.to_string();
            cur.dynamic = true;
            out.substitutions.extend(embedded_substitutions(raw));
        }
    }
    out.fields.push(cur);
    // `${IFS}` at the start or end produces empty fields that the shell drops.
    if out.fields.len() > 1 {
        out.fields.retain(|f| !f.text.is_empty() || f.dynamic);
    }
    out
}

fn piece(raw: &str, p: &WordPieceWithSource, quoted: bool, cur: &mut Arg, out: &mut Resolved) {
    match &p.piece {
        WordPiece::Text(t) => {
            if !quoted && t.contains(['*', '?', '[']) {
                cur.glob = true;
            }
            cur.text.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => cur.text.push_str(t),
        WordPiece::AnsiCQuotedText(t) => cur.text.push_str(&ansi_c(t)),
        WordPiece::EscapeSequence(t) => cur.text.push_str(t.strip_prefix('\\').unwrap_or(t)),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for q in inner {
                piece(raw, q, true, cur, out);
            }
        }
        WordPiece::TildeExpansion(_) => cur.text.push('~'),
        WordPiece::ParameterExpansion(expr) => parameter(raw, p, expr, quoted, cur, out),
        WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
            cur.dynamic = true;
            cur.text.push_str("$(");
            cur.text.push_str(s);
            cur.text.push(')');
            out.substitutions.push(s.clone());
        }
        WordPiece::ArithmeticExpression(e) => {
            cur.dynamic = true;
            cur.text.push_str(source_of(raw, p));
            // Arithmetic can hide substitutions: `$(( $(cmd) ))`.
            out.substitutions.extend(embedded_substitutions(&e.value));
        }
    }
}

fn parameter(
    raw: &str,
    p: &WordPieceWithSource,
    expr: &ParameterExpr,
    quoted: bool,
    cur: &mut Arg,
    out: &mut Resolved,
) {
    if let ParameterExpr::Parameter { parameter: Parameter::Named(name), indirect: false } = expr {
        match name.as_str() {
            "HOME" => {
                cur.text.push('~');
                return;
            }
            // `rm${IFS}-rf${IFS}/`: unquoted IFS splits the word in bash, so
            // we split too and the deny list sees `rm -rf /`.
            "IFS" if !quoted => {
                let done = std::mem::replace(cur, Arg::literal(""));
                out.fields.push(done);
                return;
            }
            _ => {}
        }
    }
    let src = source_of(raw, p);
    cur.dynamic = true;
    cur.text.push_str(src);
    // `${x:-$(cmd)}` runs cmd: look inside default/alternative values.
    out.substitutions.extend(embedded_substitutions(src));
}

/// Decodes the body of `$'…'` the way bash does, so `$'\x72\x6d'` is `rm`.
fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        let radix_digits = |it: &mut std::iter::Peekable<std::str::Chars<'_>>, radix, max| {
            let mut v = 0u32;
            let mut n = 0;
            while n < max {
                match it.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        it.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (v, n) = radix_digits(&mut it, 16, max);
                match char::from_u32(v) {
                    Some(ch) if n > 0 => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '0'..='7' => {
                let first = e.to_digit(8).unwrap_or(0);
                let (rest, n) = radix_digits(&mut it, 8, 2);
                let v = first * 8u32.pow(n) + rest;
                out.push(char::from_u32(v).unwrap_or('?'));
            }
            other => out.push(other),
        }
    }
    out
}

fn source_of<'a>(raw: &'a str, p: &WordPieceWithSource) -> &'a str {
    raw.get(p.start_index..p.end_index).unwrap_or(raw)
}

/// Finds `$(…)`, `<(…)`, `>(…)` and backquoted bodies in arbitrary text by
/// bracket counting. Used where brush hands us unparsed strings; over-finding
/// only makes the classifier stricter.
pub fn embedded_substitutions(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let opens = i + 1 < b.len() && matches!(b[i], b'$' | b'<' | b'>') && b[i + 1] == b'(';
        if opens && !(i + 2 < b.len() && b[i] == b'$' && b[i + 2] == b'(') {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < b.len() && depth > 0 {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            let end = if depth == 0 { j - 1 } else { j };
            found.push(text.get(start..end).unwrap_or_default().to_string());
            i = start;
            continue;
        }
        if b[i] == b'`'
            && let Some(len) = text.get(i + 1..).and_then(|rest| rest.find('`'))
        {
            found.push(text.get(i + 1..i + 1 + len).unwrap_or_default().to_string());
            i += len + 2;
            continue;
        }
        i += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(raw: &str) -> Arg {
        let r = resolve(raw);
        assert_eq!(r.fields.len(), 1, "{raw}: {:?}", r.fields);
        r.fields.into_iter().next().unwrap_or_else(|| Arg::literal(""))
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(one("'r'\"m\"").text, "rm");
        assert_eq!(one("\\rm").text, "rm");
        assert_eq!(one("$'\\x72\\155'").text, "rm");
        assert!(!one("\"/etc\"").dynamic);
    }

    #[test]
    fn home_forms_become_tilde() {
        assert_eq!(one("~").text, "~");
        assert_eq!(one("$HOME/.ssh").text, "~/.ssh");
        assert_eq!(one("\"${HOME}\"/x").text, "~/x");
    }

    #[test]
    fn unquoted_ifs_splits_fields() {
        let r = resolve("rm${IFS}-rf${IFS}/");
        let texts: Vec<_> = r.fields.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["rm", "-rf", "/"]);
    }

    #[test]
    fn substitutions_are_collected_and_dynamic() {
        let r = resolve("a$(curl x)b");
        assert!(r.fields[0].dynamic);
        assert_eq!(r.substitutions, ["curl x"]);
        let r = resolve("${x:-$(rm -rf /)}");
        assert!(r.fields[0].dynamic);
        assert_eq!(r.substitutions, ["rm -rf /"]);
        let r = resolve("`id`");
        assert_eq!(r.substitutions, ["id"]);
    }

    #[test]
    fn globs_are_noticed_only_unquoted() {
        assert!(one("/*").glob);
        assert!(!one("'/*'").glob);
    }

    #[test]
    fn embedded_finder_handles_nesting() {
        assert_eq!(embedded_substitutions("x $(a $(b)) y"), ["a $(b)", "b"]);
        assert_eq!(embedded_substitutions("<(curl x)"), ["curl x"]);
        assert!(embedded_substitutions("$((1+2))").is_empty());
    }
}
