//! Secrets given to programs as arguments: `mysql -pSECRET`,
//! `sshpass -p SECRET`, `curl -u user:SECRET`, `--token SECRET`,
//! `export DB_PASSWORD='a b'`. They have no shape a pattern could know,
//! so they are found by where they stand on a command line.
//!
//! A regular expression finds the anchors: a program known to take a
//! secret in an option or a positional word of its own ([`programs`]:
//! `docker login -p`, `cargo login TOKEN`, `curl -H 'X-Api-Key: …'`), the
//! verb phrase of a command that stores a value under a name
//! ([`setters`]: `aws configure set KEY VALUE`, `git config KEY VALUE`,
//! fish's `set -gx NAME VALUE`, and secret stores such as `gh secret set`
//! and `vault kv put`, whose every value is secret), or an option or
//! assignment whose name says it holds a secret (`--password`,
//! `--client-secret`, `GITHUB_TOKEN=`, `-Ddb.password=`; see [`classify`]).
//! From an anchor a light shell tokenizer ([`words`]) reads the words that
//! follow, respecting quotes and stopping at `;`, `|`, `&`, redirections
//! and the end of the line, and the value is replaced by
//! `[REDACTED:kind]` with the shape kept (`mysql -p[REDACTED:password]`,
//! `--password '[REDACTED:password]'`, `curl -u me:[REDACTED:password]`).
//!
//! Reading starts at the anchor, not at the start of the line, so the
//! text before it (a prompt, a history number, a `set -x` trace's `+ `,
//! `ps` columns, a CI log's prefix, an assignment, an apostrophe in
//! prose, `echo '…`) cannot throw it off. Values that are not secrets stay ([`kept`]): `$VAR`,
//! `"$(cmd)"`, another option, `-` (stdin), placeholders (`<token>`,
//! `{{ .Values.pw }}`, `--token TOKEN` and `-u user:password` in help
//! texts and examples), `true`/`false`-like words, and the word after an
//! option named in prose ("if --token is given").
//!
//! Work is bounded whatever the text: a command is read for at most
//! [`words::MAX_WORDS`] words, a quote looked for at most
//! [`words::MAX_QUOTED`] bytes ahead, and each anchor is read once.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

mod programs;
mod setters;
mod words;

use programs::PROGRAMS;
use words::{closing_quote, inner, word, words};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Password,
    Token,
    Secret,
    ApiKey,
}

impl Kind {
    /// The kind as a marker names it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Password => "password",
            Kind::Token => "token",
            Kind::Secret => "secret",
            Kind::ApiKey => "api_key",
        }
    }

    fn marker(self) -> &'static str {
        match self {
            Kind::Password => "[REDACTED:password]",
            Kind::Token => "[REDACTED:token]",
            Kind::Secret => "[REDACTED:secret]",
            Kind::ApiKey => "[REDACTED:api_key]",
        }
    }
}

/// The anchors: a known program (`docker`, `/usr/bin/mysql`,
/// `docker.exe`) or a setter's verb phrase ([`setters::PHRASES`]: `config
/// set`, `secrets set`, `kv put`) followed by a blank, or a name that
/// mentions a secret followed by `=` or (for options) a blank. Each comes
/// after the start of a line or a delimiter that can precede a word, an
/// assignment or a value in a list (`"PASSWORD=`, `,password=`,
/// `?token=`, `:_authToken=`), a path (`/usr/bin/`, `C:\tools\`) or a
/// prompt (`$ `, `C:\src>`, `##[command]`), so a command line is read
/// wherever it stands in a line: after a prompt, a history number, a
/// `set -x` trace's `+ `, `ps` columns or an assignment. The delimiter is
/// part of the match, so a search resumed at `pos` needs it at `pos`
/// itself; every resume point below is one.
pub(super) fn pattern() -> String {
    let programs: Vec<String> = PROGRAMS.iter().map(|(name, _)| regex::escape(name)).collect();
    format!(
        r#"(?m)(?:^|[\s;&|(`'"=,{{:/?\[\]>\\])(?:(?:{})(?:\.exe)?[ \t]|(?:{})[ \t]|[A-Za-z0-9_.\-]*(?i:pass|pwd|token|secret|key|auth|bearer)[A-Za-z0-9_.\-]*(?:=|[ \t]+))"#,
        programs.join("|"),
        setters::pattern(),
    )
}

/// A secret fed on standard input, on the same line, to a command that
/// reads one there: `echo pw | docker login --password-stdin`, `printf
/// '%s' tok | gh auth login --with-token`, `echo 'u:pw' | chpasswd`,
/// `passwd --stdin u <<< pw`. `printf`'s format, when it has one, is not
/// the secret. A rule of the table in `secrets.rs`, not an anchor: what
/// marks the secret comes after it.
pub(super) const STDIN_FED: &str = r#"(?:\b(?:echo(?:[ \t]+-[neE]+)*|printf(?:[ \t]+(?:'[^'\n]*'|"[^"\n]*"|[^\s|'"]*%[^\s|]*))?)[ \t]+(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s|;&'"]+)[ \t]*\|[^|;&\n]*?(?:--password-stdin|--with-token|--token-stdin|\bchpasswd\b|\bpasswd\b[^|;&\n]*--stdin)|(?:--password-stdin|--with-token|--token-stdin|\bchpasswd\b|\bpasswd\b[^|;&\n]*--stdin)[^|;&\n]*?<<<[ \t]*(?P<q>'[^'\n]*'|"[^"\n]*"|[^\s|;&'"]+))"#;

/// `text` with the secrets of its command lines replaced. Borrows when
/// there were none.
pub(super) fn redact<'a>(text: &'a str, anchors: &Regex) -> Cow<'a, str> {
    let mut scan = Scan { text, t: text.as_bytes(), hits: Vec::new(), valueless: Vec::new() };
    let mut pos = 0;
    let (mut live, mut seen) = (Vec::new(), 0);
    // `find_at` and reading the match by hand: resolving capture groups
    // of this many alternatives costs several times the search itself.
    while let Some(m) = anchors.find_at(text, pos) {
        let mut start = m.start();
        // The delimiter before the name, unless the line starts there (no
        // name starts with a delimiter).
        if scan.t.get(start).is_some_and(|c| !is_name_byte(*c)) {
            start += 1;
        }
        let body = &text[start..m.end()];
        // Anchors come in order, so a hit that ended is done with; the
        // rest are few.
        live.extend(scan.hits[seen..].iter().map(|&(s, e, _)| (s, e)));
        seen = scan.hits.len();
        live.retain(|&(_, e)| e > start);
        let name = body.trim_end_matches([' ', '\t']);
        let end = start + name.len();
        let eq = body.ends_with('=');
        let command = if eq { None } else { command(name) };
        // A command after an assignment whose value is its first word
        // (`API_TOKEN=docker login -p …`): that value is redacted, and
        // the command it starts is read all the same.
        let starts_value = matches!(command, Some(Command::Program(_))) && live.iter().any(|&(s, _)| s == start);
        let next = if !starts_value && live.iter().any(|&(s, _)| s <= start) {
            // Inside a value already redacted: a second scrub will not see
            // this anchor, so neither does the first.
            start + 1
        } else if eq {
            scan.key(start, end - 1, true, m.end());
            end - 1
        } else if let Some(Command::Program(specs)) = command {
            let words = words(scan.t, end);
            // What the program would have said takes no value (`mysql
            // --password dbname`) must not hold once it is redacted away.
            let valueless = scan.valueless.len();
            scan.program(specs, &words);
            if starts_value {
                scan.valueless.truncate(valueless);
            }
            end
        } else if let Some(Command::Setter(mode)) = command {
            let words = words(scan.t, end);
            scan.setter(mode, &words);
            end
        } else {
            scan.key(start, end, false, m.end());
            end
        };
        // Always move forward, whatever a handler returned.
        pos = next.max(m.start() + 1);
        if pos >= text.len() {
            break;
        }
    }
    scan.apply()
}

/// What an anchor that is not a name starts.
#[derive(Clone, Copy)]
enum Command {
    Program(&'static [programs::Spec]),
    Setter(setters::Mode),
}

/// Builds the table of commands now (see [`crate::prepare`]).
pub(super) fn prepare() {
    LazyLock::force(&COMMANDS);
}

/// Programs (with and without `.exe`) and setter phrases (words joined
/// by one space), for one lookup per anchor: most anchors are names
/// (`token `), and a scan of both tables for each cost a fifth of the
/// pass.
static COMMANDS: LazyLock<HashMap<String, Command>> = LazyLock::new(|| {
    let programs = PROGRAMS.iter().flat_map(|&(name, specs)| {
        [(name.to_owned(), Command::Program(specs)), (format!("{name}.exe"), Command::Program(specs))]
    });
    let phrases = setters::PHRASES.iter().map(|&(words, mode)| (words.join(" "), Command::Setter(mode)));
    programs.chain(phrases).collect()
});

/// The program or setter phrase `name` is, if any. Only a phrase has a
/// blank inside.
fn command(name: &str) -> Option<Command> {
    if name.contains([' ', '\t']) {
        COMMANDS.get(&name.split_ascii_whitespace().collect::<Vec<_>>().join(" ")).copied()
    } else {
        COMMANDS.get(name).copied()
    }
}

/// The bytes a name is made of in [`pattern`].
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

struct Scan<'a> {
    text: &'a str,
    t: &'a [u8],
    /// Byte ranges to replace, with what replaces them.
    hits: Vec<(usize, usize, Kind)>,
    /// Option words that take no separate value here (`mysql --password
    /// dbname` prompts; `dbname` is no secret).
    valueless: Vec<usize>,
}

/// What an option or variable name says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Name {
    Secret(Kind),
    /// `--auth user:password`: only the part after the colon.
    UserPass,
    /// openssl's `-pass`, `-passin`, `-passout`: `pass:VALUE` is the
    /// password; `env:`, `file:`, `fd:` and `stdin` name where it is.
    OpensslPass,
}

/// First words that turn a secret's name into a switch
/// (`--no-password`, `--ask-pass`, `--prompt-password`).
const SWITCH_PREFIXES: &[&str] = &[
    "no", "ask", "prompt", "show", "print", "require", "skip", "disable", "enable", "without", "use", "allow",
    "change", "reset", "remove", "delete", "clear", "list", "revoke", "rotate", "generate",
];

/// Two-word names ending in `key` that hold a key rather than a path or
/// a column (`--api-key`, `--secret-access-key`, not `--sort-key`,
/// `--private-key ./id.pem`).
const KEY_QUALIFIERS: &[&str] = &["api", "access", "secret", "auth", "account", "master"];

/// Names whose last word ends in one of these hold a secret, even run
/// together (`PGPASSWORD`, `_authToken`, `newpassword`, git's
/// `hub.oauthtoken`, composer's `github-oauth`, nmcli's `wifi-sec.psk`).
const SUFFIXES: &[(&str, Kind)] = &[
    ("password", Kind::Password),
    ("passwd", Kind::Password),
    ("passphrase", Kind::Password),
    ("psk", Kind::Password),
    ("token", Kind::Token),
    ("oauth", Kind::Token),
    ("secret", Kind::Secret),
    ("apikey", Kind::ApiKey),
];

/// Names of Java keytool's, sshpass's, git send-email's and redis's that
/// end in `pass` or `auth`.
const PASS_NAMES: &[&str] = &[
    "sshpass",
    "storepass",
    "keypass",
    "srcstorepass",
    "deststorepass",
    "srckeypass",
    "destkeypass",
    "smtppass",
    "requirepass",
    "masterauth",
];

/// Last words that hold a secret after a first word `secret`
/// (`--secret-string`, `SECRET_VALUE=`).
const SECRET_HOLDERS: &[&str] = &["string", "binary", "value", "data", "text"];

pub(super) fn classify(name: &str) -> Option<Name> {
    let dashes = name.len() - name.trim_start_matches('-').len();
    let lower = name[dashes..].to_ascii_lowercase();
    let words: Vec<&str> = lower.split(['-', '_', '.']).filter(|w| !w.is_empty()).collect();
    let (&last, before) = words.split_last()?;
    if before.first().is_some_and(|w| SWITCH_PREFIXES.contains(w)) {
        return None;
    }
    if dashes > 0 && before.is_empty() && matches!(last, "pass" | "passin" | "passout") {
        return Some(Name::OpensslPass);
    }
    if let Some((_, kind)) = SUFFIXES.iter().find(|(s, _)| last.ends_with(s)) {
        return Some(Name::Secret(*kind));
    }
    match last {
        "bearer" => Some(Name::Secret(Kind::Token)),
        "pass" | "pwd" if !before.is_empty() => Some(Name::Secret(Kind::Password)),
        // npm's `_auth=…` is base64 of `user:password`.
        "auth" if before.is_empty() && lower.starts_with('_') => Some(Name::Secret(Kind::Password)),
        "auth" if before.is_empty() => Some(Name::UserPass),
        // `REDISCLI_AUTH=…`, but not curl's `--mail-auth ADDRESS`.
        "auth" if dashes == 0 => Some(Name::Secret(Kind::Password)),
        _ if before.first() == Some(&"secret") && SECRET_HOLDERS.contains(&last) => Some(Name::Secret(Kind::Secret)),
        "key" if before.last().is_some_and(|w| KEY_QUALIFIERS.contains(w)) => Some(Name::Secret(Kind::ApiKey)),
        _ if PASS_NAMES.contains(&last) && before.is_empty() => Some(Name::Secret(Kind::Password)),
        _ => None,
    }
}

/// The kind of secret a configuration key names: any of its segments
/// (`profile.ci.aws_secret_access_key`, `//registry/:_authToken`,
/// `pypi-token.pypi`, `http-basic.repo`) named like a secret.
pub(super) fn config_key(key: &str) -> Option<Kind> {
    if key.is_empty() || key.starts_with(['$', '<', '{']) || kept(key.as_bytes(), 0, key) {
        return None;
    }
    key.split(['.', ':', '/', '[', ']', '"', '\'']).filter(|s| !s.is_empty()).find_map(|segment| {
        match classify(segment) {
            Some(Name::Secret(kind)) => Some(kind),
            _ if segment.eq_ignore_ascii_case("http-basic") => Some(Kind::Password),
            _ => None,
        }
    })
}

impl<'a> Scan<'a> {
    /// An option or assignment named like a secret. The search goes on
    /// after the name even when the value was redacted: an anchor inside
    /// the value is read the same way a second scrub would read it, and
    /// overlapping hits merge.
    fn key(&mut self, start: usize, end: usize, eq: bool, after: usize) {
        // Only options take their value as the next word (prose is full
        // of "token " and "password ").
        if !eq && (self.t[start] != b'-' || self.valueless.contains(&start) || self.t[end - 1] == b'.') {
            return;
        }
        let pre = start.checked_sub(1).and_then(|i| self.t.get(i)).copied();
        let Some(name) = classify(&self.text[start..end]) else { return };
        let value = if eq { self.assigned(after, pre) } else { word(self.t, after, true) };
        let Some(value) = value else { return };
        match name {
            // `docker build --secret id=npm,src=.npmrc` names a secret.
            Name::Secret(Kind::Secret) if is_secret_spec(&self.t[value.0..value.1]) => {}
            // Help text: `--password=PASS`, `--token TOKEN`, and prose
            // about an option: "if --token is given".
            Name::Secret(kind) if is_metavar(self.unquoted(value), kind) => {}
            Name::Secret(_) if !eq && PROSE.iter().any(|w| self.unquoted(value) == *w) => {}
            Name::Secret(kind) if eq => self.secret(value, kind),
            Name::Secret(kind) => self.word_secret(value, kind),
            Name::UserPass => self.user_pass(value, b':'),
            Name::OpensslPass => {
                let (s, e) = inner(self.t, value);
                if self.t[s..e].starts_with(b"pass:") {
                    self.secret((s + 5, e), Kind::Password);
                }
            }
        }
    }

    /// The value after `NAME=`. Inside a quoted string (`"PASSWORD=a b"`,
    /// `'--token=x'`) it runs to that string's closing quote; after a
    /// comma (`-o user=u,password=p,uid=1`) to the next comma.
    fn assigned(&self, at: usize, pre: Option<u8>) -> Option<(usize, usize)> {
        if let Some(q @ (b'\'' | b'"')) = pre
            && let Some(close) = closing_quote(self.t, at, q)
        {
            return (close > at).then_some((at, close));
        }
        let (s, mut e) = word(self.t, at, false)?;
        if pre == Some(b',')
            && let Some(comma) = self.t[s..e].iter().position(|&c| c == b',')
        {
            e = s + comma;
        }
        (e > s).then_some((s, e))
    }

    fn unquoted(&self, span: (usize, usize)) -> &str {
        let (s, e) = inner(self.t, span);
        &self.text[s..e]
    }

    /// Redacts the value in `span` unless it is not a secret at all.
    fn secret(&mut self, span: (usize, usize), kind: Kind) {
        let (s, e) = inner(self.t, span);
        if !kept(self.t, span.0, &self.text[s..e]) {
            self.hits.push((s, e, kind));
        }
    }

    /// A value given as a word of its own: a word that starts with `-` is
    /// the next option (`--token --verbose`), or `-` for stdin.
    fn word_secret(&mut self, span: (usize, usize), kind: Kind) {
        if self.t[span.0] != b'-' {
            self.secret(span, kind);
        }
    }

    /// `user<sep>password`: the part after the first separator.
    fn user_pass(&mut self, span: (usize, usize), sep: u8) {
        let (s, mut e) = inner(self.t, span);
        // The colon of a redaction is no separator.
        if let Some(m) = self.text[s..e].find("[REDACTED:") {
            e = s + m;
        }
        if let Some(at) = self.t[s..e].iter().position(|&c| c == sep) {
            let from = s + at + 1;
            let password = &self.text[from..e];
            if from < e && !kept(self.t, from, password) && !is_metavar(password, Kind::Password) {
                self.hits.push((from, e, Kind::Password));
            }
        }
    }

    /// The text with every hit replaced; overlapping hits merge.
    fn apply(mut self) -> Cow<'a, str> {
        if self.hits.is_empty() {
            return Cow::Borrowed(self.text);
        }
        self.hits.sort_unstable_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
        let mut out = String::with_capacity(self.text.len());
        let mut done = 0;
        let mut iter = self.hits.into_iter().peekable();
        while let Some((s, mut e, kind)) = iter.next() {
            while let Some(&(s2, e2, _)) = iter.peek()
                && s2 < e
            {
                e = e.max(e2);
                iter.next();
            }
            if s < done {
                continue;
            }
            out.push_str(&self.text[done..s]);
            out.push_str(kind.marker());
            done = e;
        }
        out.push_str(&self.text[done..]);
        Cow::Owned(out)
    }
}

/// The placeholder a help text or an example puts after an option of
/// this kind (`--password=PASS`, `--token TOKEN`, `-u user:password`).
/// Only its own kind's: `--token SECRET` is redacted.
pub(super) fn is_metavar(value: &str, kind: Kind) -> bool {
    let names: &[&str] = match kind {
        Kind::Password => &["pass", "password", "passwd", "passphrase", "pwd"],
        Kind::Token => &["token"],
        Kind::Secret => &["secret"],
        Kind::ApiKey => &["key", "api_key", "apikey"],
    };
    names.iter().any(|n| value.eq_ignore_ascii_case(n))
}

/// Words that follow an option's name in prose, not as its value
/// ("if --token is given", "--password and --user").
pub(super) const PROSE: &[&str] = &[
    "is", "are", "was", "were", "be", "and", "or", "but", "not", "the", "a", "an", "to", "of", "in", "on", "for",
    "with", "also", "option", "options", "flag", "if", "then", "when", "that", "this", "which", "as", "at", "by",
    "from", "can", "may", "must", "will", "should", "has", "have", "only", "instead",
];

/// A build secret's specification rather than a secret.
fn is_secret_spec(value: &[u8]) -> bool {
    ["id=", "src=", "env=", "type="].iter().any(|p| value.starts_with(p.as_bytes()))
}

/// Values that are no secret: empty, already redacted, a reference
/// (`$PW`, `"${PW}"`, `$(cat f)`, `` `cmd` ``), a placeholder (`<token>`,
/// `{{ .Values.pw }}`, `****`, pflag's `string`) or a switch-like word
/// (`true`, `none`, `-` for stdin).
/// `raw_at` is where the value's word starts in `t`, quotes included;
/// `value` is what is inside them.
pub(super) fn kept(t: &[u8], raw_at: usize, value: &str) -> bool {
    let raw = &t[raw_at..];
    let reference = |r: &[u8]| {
        r.first() == Some(&b'`')
            || r.starts_with(b"<(")
            || (r.first() == Some(&b'$')
                && r.get(1).is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'{' | b'(')))
    };
    if reference(raw) || (raw.first() == Some(&b'"') && reference(&raw[1..])) {
        return true;
    }
    if value.is_empty() || value.trim_start_matches(['\'', '"']).starts_with("[REDACTED:") {
        return true;
    }
    if (value.starts_with('<') && value.ends_with('>')) || value.starts_with("{{") {
        return true;
    }
    if value.chars().all(|c| matches!(c, '*' | '.' | '•' | '…')) {
        return true;
    }
    const WORDS: &[&str] = &["true", "false", "yes", "no", "on", "off", "none", "null", "nil", "0", "1", "-"];
    const TYPES: &[&str] = &["string", "strings", "stringarray", "stringslice", "value", "str", "text"];
    WORDS.iter().chain(TYPES).any(|w| value.eq_ignore_ascii_case(w))
}

#[cfg(test)]
#[path = "cmdline_tests.rs"]
mod tests;
