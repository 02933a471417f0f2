//! Shell words to argument values: quoting removed, expansions noted.
//!
//! brush-parser keeps words as raw text, so a second pass (brush's word
//! parser) splits each one into pieces. We expand only what is the same on
//! every machine — braces (`{rm,-rf,/}` is three words), quotes, escapes,
//! `~`, `$HOME`, and `$IFS` as a field separator — and mark everything else
//! dynamic, because the classifier must never treat a value it cannot see as
//! harmless.

use brush_parser::ParserOptions;
use brush_parser::word::{
    self, BraceExpressionMember, BraceExpressionOrText, Parameter, ParameterExpr, ParameterTestType, SpecialParameter,
    WordPiece, WordPieceWithSource,
};
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
    /// Variables the word uses that nothing in the command line sets.
    pub unset: Vec<String>,
    /// `${x:?}` of a variable taken as unset: the shell would stop here.
    pub aborts: bool,
}

/// What a variable holds, as far as the command line itself tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// Set by the command line to these elements (one for a scalar).
    Value(Vec<String>),
    /// Never set by the command line: empty unless the environment sets it.
    Unset,
    /// Set somewhere in a way the walk cannot follow, or by the shell.
    Unknown,
}

/// What the walk knows while it resolves words: variables the command line
/// set before this word, and what a substitution prints when that needs no
/// running (`$(echo rm)`, `$(which rm)`).
pub trait Known {
    /// A variable by name.
    fn var(&self, name: &str) -> Var;
    /// The positional parameters (`set -- a b` earlier in the line).
    fn positional(&self) -> Var;
    /// What the substitution `$(body)` prints, when known.
    fn output(&self, body: &str) -> Option<String>;
    /// `IFS`, when the command line set it.
    fn ifs(&self) -> Option<&str>;
}

/// Knows nothing: every variable and substitution is only known at run
/// time (apart from `$HOME` and `$IFS`, which are the same everywhere).
#[derive(Debug)]
pub struct Nothing;

impl Known for Nothing {
    fn var(&self, _: &str) -> Var {
        Var::Unknown
    }
    fn positional(&self) -> Var {
        Var::Unknown
    }
    fn output(&self, _: &str) -> Option<String> {
        None
    }
    fn ifs(&self) -> Option<&str> {
        None
    }
}

/// How variables that nothing sets are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unset {
    /// As unknown values (dynamic).
    Unknown,
    /// As empty, the value they have when the environment does not set
    /// them either.
    Empty,
}

struct Cx<'a> {
    raw: &'a str,
    known: &'a dyn Known,
    unset: Unset,
}

/// Most words one brace expansion may become before the word is treated as
/// unknowable instead (`{1..100000}`).
const MAX_BRACE_WORDS: usize = 256;

/// Resolves a raw word from the parser, knowing nothing about variables.
pub fn resolve(raw: &str) -> Resolved {
    resolve_in(raw, &Nothing, Unset::Unknown)
}

/// Resolves a raw word with what the command line tells about variables
/// and substitutions.
pub fn resolve_in(raw: &str, known: &dyn Known, unset: Unset) -> Resolved {
    // bash, zsh and fish expand braces before anything else, so each
    // resulting word is resolved on its own. (dash does not; reading more
    // words than it would run can only add to what is checked.)
    match braces(raw) {
        Braces::None => resolve_one(raw, known, unset),
        Braces::Words(words) => {
            let mut out = Resolved::default();
            // An empty result is no word at all: `rm {/,}` is `rm /`.
            for w in words.iter().filter(|w| !w.is_empty()) {
                let r = resolve_one(w, known, unset);
                out.fields.extend(r.fields);
                out.substitutions.extend(r.substitutions);
                out.unset.extend(r.unset);
                out.aborts |= r.aborts;
            }
            out
        }
        Braces::TooMany => {
            let mut out = resolve_one(raw, known, unset);
            for f in &mut out.fields {
                f.dynamic = true;
            }
            out
        }
    }
}

enum Braces {
    None,
    Words(Vec<String>),
    TooMany,
}

/// The words a brace expression in `raw` expands to, still raw (quotes
/// inside are resolved afterwards).
fn braces(raw: &str) -> Braces {
    if !raw.contains('{') {
        return Braces::None;
    }
    let Ok(Some(pieces)) = word::parse_brace_expansions(raw, &ParserOptions::default()) else {
        return Braces::None;
    };
    if !pieces.iter().any(|p| matches!(p, BraceExpressionOrText::Expr(_))) {
        return Braces::None;
    }
    match expand_pieces(&pieces) {
        Some(words) => Braces::Words(words),
        None => Braces::TooMany,
    }
}

/// The cartesian product of a sequence of brace pieces; `None` past
/// [`MAX_BRACE_WORDS`].
fn expand_pieces(pieces: &[BraceExpressionOrText]) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for p in pieces {
        let alternatives = match p {
            BraceExpressionOrText::Text(t) => vec![t.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut alts = Vec::new();
                for m in members {
                    alts.extend(expand_member(m)?);
                    if alts.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                }
                alts
            }
        };
        if words.len().saturating_mul(alternatives.len()) > MAX_BRACE_WORDS {
            return None;
        }
        words = words.iter().flat_map(|w| alternatives.iter().map(move |a| format!("{w}{a}"))).collect();
    }
    Some(words)
}

fn expand_member(m: &BraceExpressionMember) -> Option<Vec<String>> {
    match m {
        BraceExpressionMember::Child(pieces) => expand_pieces(pieces),
        BraceExpressionMember::NumberSequence { start, end, increment } => {
            Some(sequence(*start, *end, *increment)?.into_iter().map(|n| n.to_string()).collect())
        }
        BraceExpressionMember::CharSequence { start, end, increment } => {
            let codes = sequence(i64::from(u32::from(*start)), i64::from(u32::from(*end)), *increment)?;
            Some(codes.into_iter().filter_map(|c| char::from_u32(u32::try_from(c).ok()?)).map(String::from).collect())
        }
    }
}

/// `{start..end..increment}`: from `start` towards `end` in steps of the
/// increment's size, as bash counts it.
fn sequence(start: i64, end: i64, increment: i64) -> Option<Vec<i64>> {
    let step = i128::from(increment.unsigned_abs().max(1));
    let count = (i128::from(start) - i128::from(end)).abs() / step + 1;
    if count > MAX_BRACE_WORDS as i128 {
        return None;
    }
    let step = if end >= start { step } else { -step };
    (0..count).map(|k| i64::try_from(i128::from(start) + k * step).ok()).collect()
}

/// Resolves one word after brace expansion.
fn resolve_one(raw: &str, known: &dyn Known, unset: Unset) -> Resolved {
    let mut out = Resolved::default();
    let mut cur = Arg::literal("");
    let cx = Cx { raw, known, unset };
    let mut quoted = false;
    match word::parse(raw, &ParserOptions::default()) {
        Ok(pieces) => {
            for p in &pieces {
                quoted |= !matches!(p.piece, WordPiece::Text(_) | WordPiece::ParameterExpansion(_));
                piece(&cx, p, false, &mut cur, &mut out);
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
    // An unquoted expansion of nothing is no word at all (`$EMPTY x` runs
    // `x`); a quoted one is an empty word.
    if !(cur.text.is_empty() && !cur.dynamic && !quoted && out.fields.is_empty() && raw.contains('$')) {
        out.fields.push(cur);
    }
    // `${IFS}` at the start or end produces empty fields that the shell drops.
    if out.fields.len() > 1 {
        out.fields.retain(|f| !f.text.is_empty() || f.dynamic);
    }
    out
}

/// Appends an expansion's value to the word: as is inside double quotes;
/// split into fields by IFS outside them (`c=rm,-rf,x; IFS=,; $c`).
fn push_value(cx: &Cx<'_>, value: &str, quoted: bool, cur: &mut Arg, out: &mut Resolved) {
    if quoted {
        cur.text.push_str(value);
        return;
    }
    if value.contains(['*', '?', '[']) {
        cur.glob = true;
    }
    let ifs = cx.known.ifs().unwrap_or(" \t\n");
    let mut pieces = value.split(|c| ifs.contains(c)).peekable();
    while let Some(p) = pieces.next() {
        cur.text.push_str(p);
        if pieces.peek().is_some() && !cur.text.is_empty() {
            let done = std::mem::replace(cur, Arg::literal(""));
            out.fields.push(done);
        }
    }
}

/// Appends the elements of an array or of `"$@"`: separate fields in
/// `"${a[@]}"` and `"$@"`, joined by a space in `"${a[*]}"`, split by IFS
/// when unquoted.
fn push_elements(cx: &Cx<'_>, elems: &[String], separate: bool, quoted: bool, cur: &mut Arg, out: &mut Resolved) {
    if quoted && !separate {
        cur.text.push_str(&elems.join(" "));
        return;
    }
    for (k, e) in elems.iter().enumerate() {
        if k > 0 && (quoted || !cur.text.is_empty()) {
            let done = std::mem::replace(cur, Arg::literal(""));
            out.fields.push(done);
        }
        push_value(cx, e, quoted, cur, out);
    }
}

fn piece(cx: &Cx<'_>, p: &WordPieceWithSource, quoted: bool, cur: &mut Arg, out: &mut Resolved) {
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
                piece(cx, q, true, cur, out);
            }
        }
        WordPiece::TildeExpansion(_) => cur.text.push('~'),
        WordPiece::ParameterExpansion(expr) => parameter(cx, p, expr, quoted, cur, out),
        WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
            // `$(echo rm)` prints `rm` wherever it runs; the shell drops the
            // trailing newlines. The body is still walked.
            if let Some(printed) = cx.known.output(s) {
                push_value(cx, printed.trim_end_matches('\n'), quoted, cur, out);
                out.substitutions.push(s.clone());
                return;
            }
            cur.dynamic = true;
            cur.text.push_str("$(");
            cur.text.push_str(s);
            cur.text.push(')');
            out.substitutions.push(s.clone());
        }
        WordPiece::ArithmeticExpression(e) => {
            cur.dynamic = true;
            cur.text.push_str(source_of(cx.raw, p));
            // Arithmetic can hide substitutions: `$(( $(cmd) ))`.
            out.substitutions.extend(embedded_substitutions(&e.value));
        }
    }
}

/// Variables the shell sets itself: never "unset" in the sense that an
/// empty value would be expected.
const SHELL_SET: &[&str] = &[
    "PWD",
    "OLDPWD",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "UID",
    "EUID",
    "PPID",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "LINENO",
    "BASH",
    "BASHPID",
    "BASH_VERSION",
    "BASH_SOURCE",
    "FUNCNAME",
    "SHLVL",
    "TERM",
    "LANG",
    "COLUMNS",
    "LINES",
    "GROUPS",
    "PIPESTATUS",
    "REPLY",
    "OPTARG",
    "OPTIND",
    "ZSH_VERSION",
    "UNIXAGENT_SESSION",
    "UNIXAGENT_JOURNAL",
];

fn lookup(cx: &Cx<'_>, param: &Parameter) -> (Var, bool) {
    match param {
        Parameter::Named(n) if SHELL_SET.contains(&n.as_str()) => (Var::Unknown, false),
        Parameter::Named(n) => match cx.known.var(n) {
            // `$arr` is the first element.
            Var::Value(v) => (Var::Value(v.into_iter().take(1).collect()), false),
            other => (other, false),
        },
        Parameter::NamedWithAllIndices { name, concatenate } => (cx.known.var(name), !concatenate),
        Parameter::NamedWithIndex { name, index } => match (cx.known.var(name), index.parse::<usize>()) {
            (Var::Value(v), Ok(k)) => (Var::Value(v.get(k).cloned().into_iter().collect()), false),
            (Var::Value(_), Err(_)) => (Var::Unknown, false),
            (other, _) => (other, false),
        },
        Parameter::Positional(k) if *k > 0 => match cx.known.positional() {
            Var::Value(v) => (Var::Value(v.get(*k as usize - 1).cloned().into_iter().collect()), false),
            other => (other, false),
        },
        Parameter::Special(SpecialParameter::AllPositionalParameters { concatenate }) => {
            (cx.known.positional(), !concatenate)
        }
        _ => (Var::Unknown, false),
    }
}

fn parameter(
    cx: &Cx<'_>,
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
    let unknown = |cur: &mut Arg, out: &mut Resolved| {
        let src = source_of(cx.raw, p);
        cur.dynamic = true;
        cur.text.push_str(src);
        // `${x:-$(cmd)}` runs cmd: look inside default/alternative values.
        out.substitutions.extend(embedded_substitutions(src));
    };
    // A word inside the expansion (a default or alternative value).
    let inner = |text: &Option<String>, cur: &mut Arg, out: &mut Resolved| {
        let r = resolve_one(text.as_deref().unwrap_or(""), cx.known, cx.unset);
        let mut fields = r.fields.into_iter();
        if let Some(first) = fields.next() {
            cur.text.push_str(&first.text);
            cur.dynamic |= first.dynamic;
            cur.glob |= first.glob;
        }
        for f in fields {
            out.fields.push(std::mem::replace(cur, f));
        }
        out.substitutions.extend(r.substitutions);
        out.unset.extend(r.unset);
    };
    let (parameter, indirect) = match expr {
        ParameterExpr::Parameter { parameter, indirect }
        | ParameterExpr::UseDefaultValues { parameter, indirect, .. }
        | ParameterExpr::AssignDefaultValues { parameter, indirect, .. }
        | ParameterExpr::IndicateErrorIfNullOrUnset { parameter, indirect, .. }
        | ParameterExpr::UseAlternativeValue { parameter, indirect, .. } => (parameter, *indirect),
        _ => return unknown(cur, out),
    };
    if indirect {
        return unknown(cur, out);
    }
    let (var, separate) = lookup(cx, parameter);
    let name = parameter.to_string();
    let var = match var {
        Var::Unset => {
            out.unset.push(name.trim_start_matches("${").trim_start_matches('$').trim_end_matches('}').to_string());
            if cx.unset == Unset::Empty { Var::Value(Vec::new()) } else { Var::Unknown }
        }
        v => v,
    };
    let Var::Value(elems) = var else { return unknown(cur, out) };
    let empty = elems.iter().all(String::is_empty);
    let null_tests = |t: &ParameterTestType| matches!(t, ParameterTestType::UnsetOrNull);
    match expr {
        ParameterExpr::UseDefaultValues { test_type, default_value, .. }
        | ParameterExpr::AssignDefaultValues { test_type, default_value, .. }
            if elems.is_empty() || empty && null_tests(test_type) =>
        {
            inner(default_value, cur, out)
        }
        ParameterExpr::UseAlternativeValue { test_type, alternative_value, .. } => {
            if !(elems.is_empty() || empty && null_tests(test_type)) {
                inner(alternative_value, cur, out);
            }
        }
        ParameterExpr::IndicateErrorIfNullOrUnset { test_type, .. }
            if elems.is_empty() || empty && null_tests(test_type) =>
        {
            out.aborts = true;
        }
        _ => push_elements(cx, &elems, separate, quoted, cur, out),
    }
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

/// `text` as one shell word that bash, zsh and fish all read back as
/// `text` (shlex's quoting, tested against each). A NUL byte cannot be in
/// an argument at all (the kernel's argv is C strings), so it is dropped.
pub(crate) fn quote(text: &str) -> String {
    match shlex::try_quote(text) {
        Ok(q) => q.into_owned(),
        Err(_) => shlex::try_quote(&text.replace('\0', "")).map_or_else(|_| "''".to_string(), |q| q.into_owned()),
    }
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

    fn texts(raw: &str) -> Vec<String> {
        resolve(raw).fields.into_iter().map(|f| f.text).collect()
    }

    #[test]
    fn braces_expand_first() {
        assert_eq!(texts("{rm,-rf,/}"), ["rm", "-rf", "/"]);
        assert_eq!(texts("/{,}"), ["/", "/"]);
        assert_eq!(texts("{/,}"), ["/"]);
        assert_eq!(texts("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(texts("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(texts("{10..2..3}"), ["10", "7", "4"]);
        assert_eq!(texts("{c..a}"), ["c", "b", "a"]);
        // Quotes inside a member are removed after expansion.
        assert_eq!(texts("{'r'm,x}"), ["rm", "x"]);
        // Quoted braces, lone braces and `${…}` are not brace expressions.
        assert_eq!(texts("'{a,b}'"), ["{a,b}"]);
        assert_eq!(texts("{}"), ["{}"]);
        assert_eq!(texts("{a}"), ["{a}"]);
        // An expansion too large to list is unknown.
        let big = resolve("{1..100000}");
        assert!(big.fields.iter().all(|f| f.dynamic));
        let big = resolve("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}");
        assert!(big.fields.iter().all(|f| f.dynamic));
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
