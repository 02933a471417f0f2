//! Credentials in the formats of the files that hold them, as `cat` or
//! an editor shows them: netrc (`machine h login me password …`, on one
//! line or several), pgpass (`host:port:db:user:password`), INI and YAML
//! lines (`.pypirc`'s `password = …`, `.npmrc`'s `_auth = …`,
//! `oauth_token: …`), JSON members (docker's `config.json` `"auth": "…"`,
//! `"identitytoken"`), two-column tables (`vault kv get`), and SQL that
//! sets a password (`ALTER USER … PASSWORD '…'`, `IDENTIFIED BY '…'`).
//! `.git-credentials` lines are URLs with a password, which the
//! `url_password` rule knows.
//!
//! Each is a pattern for the rule table in `secrets.rs`; the checks here
//! decide whether what it found is a secret at all: a value that is a
//! reference, a placeholder or a word of prose is kept, and a key must
//! name a secret the way a command line's option would.

use super::cmdline;

/// netrc's `password` token, at the start of a line after nothing but
/// other tokens' pairs (`machine h login me password …`, `default login
/// me password …`), or alone (the multi-line form, and `vault kv get`'s
/// table); and redis.conf's `requirepass` and `masterauth`. These files'
/// keywords are lowercase.
pub(super) const NETRC: &str = r"(?m)^[ \t]*(?:(?:machine|login|account|port)[ \t]+[^\s]+[ \t]+|default[ \t]+)*(?:password|requirepass|masterauth)[ \t]+(?P<s>[^\s=:][^\s]*)";

/// `host:port:database:user:password`, whole on its line, with `\:` for
/// a colon inside a field. A path is no host (`src/a.rs:12:…`), and the
/// port is a number or `*`.
pub(super) const PGPASS: &str = r"(?m)^(?:\\.|[^:\\\s/#])+:(?:[0-9]{1,5}|\*):(?:\\.|[^:\\\s])+:(?:\\.|[^:\\\s])+:(?P<s>(?:\\.|[^:\\\s])+)[ \t]*\r?$";

/// A key named like a secret at the start of a line, then `=` with a
/// blank beside it and the rest of the line (INI: `.pypirc`, `.s3cfg`,
/// `.npmrc` with its `//registry/:` scope; `NAME=value cmd` is a command
/// line's, read by `cmdline`), or `:` and one word or quoted string
/// (YAML: `oauth_token: …`, a Secret's `data:`).
pub(super) const ASSIGNMENT_LINE: &str = r#"(?m)^[ \t]*(?P<k>(?://[^\s=]*:)?[A-Za-z0-9_.\-]*(?i:pass|pwd|token|secret|key|auth|psk)[A-Za-z0-9_.\-]*)(?:(?:[ \t]+=[ \t]*|=[ \t]+)(?P<s>[^\s].*?)|[ \t]*:[ \t]+(?P<q>"[^"\n]*"|'[^'\n]*'|[^\s"']+))[ \t]*\r?$"#;

/// A JSON member named like a secret with a string value.
pub(super) const JSON_MEMBER: &str = r#""(?P<k>[^"\n]{0,64}(?i:pass|pwd|token|secret|key|auth|psk)[^"\n]{0,64})"[ \t]*:[ \t]*"(?P<q>(?:[^"\\\n]|\\.)*)""#;

/// A two-column row whose first column names a secret and whose second
/// is one word (`vault kv get`, `doppler secrets` in plain form).
pub(super) const TABLE_ROW: &str = r"(?m)^[ \t]*(?P<k>[A-Za-z0-9_.\-]*(?i:pass|pwd|token|secret|key|auth|psk)[A-Za-z0-9_.\-]*)(?:\t|[ ]{2,})[ \t]*(?P<s>[^\s]+)[ \t]*\r?$";

/// SQL that sets a password: PostgreSQL's `[WITH] [ENCRYPTED] PASSWORD
/// '…'`, MySQL's and Oracle's `IDENTIFIED BY '…'`, MySQL's `SET PASSWORD
/// … = '…'`. Not an option (`--password '…'` is a command line's).
pub(super) const SQL: &str = r#"(?i)(?:(?:^|[^\w\-])(?:password|identified[ \t]+by)[ \t]+|\bset[ \t]+password\b[^\n;]*?=[ \t]*(?:password[ \t]*\([ \t]*)?)(?:'(?P<s>(?:[^'\n]|'')+)'|"(?P<q>[^"\n]+)")"#;

/// What a status line says after a secret's name ("password changed",
/// "auth: required"): no value.
const STATUS_WORDS: &[&str] = &[
    "required",
    "changed",
    "updated",
    "expired",
    "incorrect",
    "invalid",
    "accepted",
    "rejected",
    "set",
    "unset",
    "reset",
    "saved",
    "ok",
    "missing",
    "needed",
    "optional",
    "protected",
    "hidden",
    "redacted",
    "masked",
    "empty",
];

/// True when `value` is no secret: a reference, a placeholder, an
/// empty or switch-like word, something in brackets (`(protected)`,
/// `[hidden]`), a YAML tag, anchor or block (`!vault |`), or a status
/// word.
pub(super) fn kept(value: &str) -> bool {
    let v = unquote(value);
    cmdline::kept(value.as_bytes(), 0, v)
        || v.starts_with(['(', '[', '{', '!', '&', '*', '|', '>', '%'])
        || STATUS_WORDS.iter().any(|w| v.trim_end_matches(['.', '!']).eq_ignore_ascii_case(w))
        || cmdline::PROSE.iter().any(|w| v.eq_ignore_ascii_case(w))
}

/// The kind of secret `key` names, as a marker's kind, if it names one.
/// An option (`--http-password=PASS   set …` in a help text) is a command
/// line's, not a file's.
pub(super) fn key_kind(key: &str) -> Option<&'static str> {
    if key.starts_with('-') {
        return None;
    }
    // Docker's `"auth"` is base64 of `user:password`; on a command line
    // a bare `--auth` takes `user:password` and only its part after the
    // colon is secret.
    if key.eq_ignore_ascii_case("auth") {
        return Some("password");
    }
    cmdline::config_key(key).map(cmdline::Kind::name)
}

/// The range of `value` inside one pair of quotes around all of it.
pub(super) fn inside_quotes(value: &str) -> (usize, usize) {
    let b = value.as_bytes();
    match (b.first(), b.last()) {
        (Some(&a @ (b'"' | b'\'')), Some(&z)) if b.len() >= 2 && a == z => (1, b.len() - 1),
        _ => (0, b.len()),
    }
}

/// An INI value runs to the end of its line, unless the line is a list
/// of assignments (`token=abc user=me`): then only its first word.
pub(super) fn ini_value(value: &str) -> usize {
    match value.split_once([' ', '\t']) {
        Some((first, rest)) if rest.contains('=') => first.len(),
        _ => value.len(),
    }
}

fn unquote(value: &str) -> &str {
    let (s, e) = inside_quotes(value);
    &value[s..e]
}
