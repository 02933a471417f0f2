//! Secret redaction for everything that leaves the machine (design §14.3,
//! §19.2.9).
//!
//! Each rule is a regular expression; a match becomes `[REDACTED:kind]`.
//! Rules with a named group `s` redact only that group, so `API_KEY=abc…`
//! keeps its name and becomes `API_KEY=[REDACTED:high_entropy]`.
//!
//! Known formats (AWS, GitHub, Slack, Stripe, OpenAI, Anthropic, JWT, PEM
//! private keys, `Authorization` headers, bearer tokens, passwords in URLs
//! of any scheme, `redis://:pw@host` included) are redacted wherever they
//! appear.
//!
//! Secrets given to programs as arguments are found by where they stand
//! on a command line (`secrets/cmdline.rs`), wherever the command line
//! stands in a line of text: at a prompt, after a history number, in a
//! `set -x` trace, in `ps` columns, in a CI log, after an assignment
//! (`API_TOKEN=docker login -p …`). What it knows: options named for a
//! secret, spaced or `=`-attached and quoted or not (`--password 'a b'`,
//! `--token=…`, `--client-secret`, `--api-key`, `-storepass`, openssl's
//! `pass:…`), assignments to such names of any length (`PGPASSWORD=…
//! psql`, `export DB_PASSWORD="…"`, `-Ddb.password=…`, `?token=…`), the
//! programs whose own options or positional words carry one: `sshpass
//! -p`, the mysql family's attached `-p…`, `docker login -p` and its kin,
//! `htpasswd -b`, `curl -u user:…`, `curl -H 'X-Api-Key: …'`, `smbclient
//! -U user%…`, `redis-cli -a`, `ldapsearch -w`, `sqlcmd -P`, `cargo login
//! TOKEN`, `vault login TOKEN`, `mc alias set NAME URL KEY SECRET` and a
//! few more; commands that set a value under a name, where the name says
//! it is secret (`aws configure set aws_secret_access_key …`, `npm config
//! set //registry/:_authToken …`, `git config user.password …`, fish's
//! `set -gx GITHUB_TOKEN …`, `poetry config http-basic.REPO USER …`) or
//! the command is a secret store, all of whose values are secret (`gh
//! secret set NAME --body …`, `vault kv put PATH k=…`, `heroku config:set
//! K=…`, `kubectl create secret generic NAME --from-literal=k=…`,
//! `doppler secrets set NAME …`); and a secret fed on standard input on
//! the same line (`echo … | docker login --password-stdin`, `echo 'u:…' |
//! chpasswd`). The value is replaced and the shape kept (`mysql
//! -p[REDACTED:password]`). Where `-p` means a port (ssh, psql, `docker
//! run`), where nothing is attached (`mysql -p` and `curl -u user`
//! prompt) and where a value is a reference (`$PW`, `"$(cat f)"`) or
//! names where it is (`-`, `@file`), the text stays as it is. This pass
//! runs between the known formats (so `--token ghp_…` keeps its kind) and
//! the generic rules below.
//!
//! Credential files are read in their own formats as `cat` shows them
//! (`secrets/files.rs`): netrc, pgpass, INI and YAML lines whose key names
//! a secret (`.pypirc`, `.npmrc`, `.s3cfg`, redis.conf), JSON members
//! (docker's `config.json` `auth`), two-column tables (`vault kv get`),
//! and SQL that sets a password (`ALTER USER … PASSWORD '…'`,
//! `IDENTIFIED BY '…'`); `.git-credentials` holds URLs, which the URL
//! rule knows.
//!
//! The generic rules: any value of six or more characters after a
//! password-like name and `:` or `=` (`password: …`, `"password": "…"`,
//! `password = …`; not `(none)`, and not a path after a bare `PWD`), and
//! anything else only when it looks assigned (`NAME=value`,
//! `name: value`, `"name": "value"`), is at least [`MIN_GENERIC_LEN`]
//! characters long, and its Shannon entropy per character reaches
//! [`SECRET_NAME_ENTROPY`] when the name says it is secret (`…key…`,
//! `…token…`, `…password…`) or [`OTHER_NAME_ENTROPY`] otherwise (a value
//! starting with `/` is a path, not a token). The second threshold sits
//! above what hexadecimal can reach (4 bits), so hashes, commit ids and
//! UUIDs pass through while random base64 of 32 characters or more does
//! not.
//!
//! One [`RegexSet`] pass over the text says which rules, and whether the
//! command-line pass, need a closer look, so text with none of their
//! words costs one scan (`cargo bench -p ua-context --bench scrub` measures it).
//!
//! This is best effort. What gets through: a secret with no known format
//! and low entropy that is not in a shape the passes know (a positional
//! argument or short option of a program not in the table, a value set
//! under a name that does not say it is secret outside a secret store);
//! a secret piped in from another line (`set -x` prints each side of a
//! pipe on a line of its own); a command line written as a list
//! (`docker inspect`'s `"Cmd": ["mysql", "-p…"]`, a manifest's `args:`);
//! a netrc line with several entries (only the first password is read),
//! and a pgpass line whose host is a socket directory; a quoted value
//! that runs over a line break (only its first line is redacted); a
//! command line read from `/proc/*/cmdline` (its NUL separators are
//! dropped, so the words run together); and a literal that looks like a
//! placeholder (`<token>`, `{{ … }}`, `true`). What is taken that was no
//! secret: every value of a secret store, a harmless one included
//! (`heroku config:set NODE_ENV=production`). The environment allowlist
//! (`env`) is the first line of defence; this is the second.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

mod cmdline;
mod files;

/// The shortest value the generic rule considers.
pub const MIN_GENERIC_LEN: usize = 20;
/// Bits per character above which a value assigned to a secret-sounding
/// name is redacted (English words reach ~3.5; random base64 reaches ~5).
pub const SECRET_NAME_ENTROPY: f64 = 3.0;
/// Bits per character above which a value assigned to any other name is
/// redacted.
pub const OTHER_NAME_ENTROPY: f64 = 4.2;

#[derive(PartialEq)]
enum Check {
    Always,
    /// Always, but after the command-line pass: a rule that reads a value
    /// from its name alone would otherwise take a word that follows
    /// `--password= ` for its value.
    Late,
    /// The generic rule, also late: entropy over the `s` group, threshold
    /// by the `k` group.
    Entropy,
    /// The `s` (or `q`) group unless it is no secret ([`files::kept`]).
    Value,
    /// The `s` (or `q`) group when the `k` group names a secret, of the
    /// kind it names; an INI value (`s`) only up to [`files::ini_value`].
    NamedKey,
}

struct Rule {
    kind: &'static str,
    pattern: &'static str,
    check: Check,
}

/// Order matters: specific formats before general ones (`sk-ant-` before
/// `sk-`, everything before the generic rule), and each rule sees the
/// output of the ones before it.
const RULES: &[Rule] = &[
    Rule {
        kind: "private_key",
        pattern: r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        check: Check::Always,
    },
    Rule { kind: "anthropic_key", pattern: r"\bsk-ant-[A-Za-z0-9_\-]{20,}", check: Check::Always },
    Rule { kind: "openai_key", pattern: r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", check: Check::Always },
    Rule {
        kind: "github_token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        check: Check::Always,
    },
    Rule { kind: "slack_token", pattern: r"\bxox[baprs]-[A-Za-z0-9\-]{10,}", check: Check::Always },
    Rule {
        kind: "slack_webhook",
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        check: Check::Always,
    },
    Rule {
        kind: "stripe_key",
        pattern: r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b",
        check: Check::Always,
    },
    Rule {
        kind: "aws_access_key_id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        check: Check::Always,
    },
    Rule {
        kind: "aws_secret_key",
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9/+=]{30,})"#,
        check: Check::Always,
    },
    Rule {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        check: Check::Always,
    },
    Rule {
        kind: "authorization",
        pattern: r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot)\s+)?(?P<s>[^\s"',;\[][^\s"',;]{7,})"#,
        check: Check::Always,
    },
    Rule { kind: "bearer_token", pattern: r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{16,}=*)", check: Check::Always },
    Rule {
        kind: "url_password",
        // The user may be empty (`redis://:pw@host`); the password runs to
        // the last `@` before the path, so one with an `@` in it is
        // redacted whole.
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@'"<>]*:(?P<s>[^/\s'"<>]+)@"#,
        check: Check::Always,
    },
    Rule { kind: "password", pattern: cmdline::STDIN_FED, check: Check::Value },
    // Credential files and SQL (`files`): after the known formats, so
    // `"token": "ghp_…"` keeps its kind.
    Rule { kind: "password", pattern: files::NETRC, check: Check::Value },
    Rule { kind: "password", pattern: files::PGPASS, check: Check::Value },
    Rule { kind: "password", pattern: files::SQL, check: Check::Value },
    Rule { kind: "secret", pattern: files::ASSIGNMENT_LINE, check: Check::NamedKey },
    Rule { kind: "secret", pattern: files::JSON_MEMBER, check: Check::NamedKey },
    Rule { kind: "secret", pattern: files::TABLE_ROW, check: Check::NamedKey },
    Rule {
        kind: "password",
        pattern: r#"(?i)(?:passw(?:or)?d|passwd|passphrase|_pwd)["']?[ \t]*[:=][ \t]*["']?(?P<s>[^\s"',;()\[\]{}<>$*][^\s"',;]{5,})"#,
        check: Check::Late,
    },
    Rule {
        // A bare `PWD` is a password in connection strings
        // (`UID=sa;PWD=…`) but the working directory in `env`: a path is
        // kept.
        kind: "password",
        pattern: r#"(?i)\bpwd["']?[ \t]*[:=][ \t]*["']?(?P<s>[^\s"',;()\[\]{}<>$/~][^\s"',;]{5,})"#,
        check: Check::Late,
    },
    Rule {
        kind: "high_entropy",
        pattern: r#"(?P<k>[A-Za-z0-9_.\-]+)["']?[ \t]*[:=][ \t]*["']?(?P<s>[A-Za-z0-9+=_\-~][A-Za-z0-9+/=_.\-~]{19,})"#,
        check: Check::Entropy,
    },
];

struct Compiled {
    set: RegexSet,
    rules: Vec<(&'static Rule, Regex)>,
    secret_name: Regex,
    /// The anchors of [`cmdline`].
    cmdline: Regex,
}

impl Compiled {
    fn new() -> Result<Self, regex::Error> {
        Ok(Compiled {
            // The rules, then the command-line anchors: one pass over the
            // text says which of them need a closer look.
            set: RegexSet::new(RULES.iter().map(|r| r.pattern.to_owned()).chain([cmdline::pattern()]))?,
            rules: RULES.iter().map(|r| Ok((r, Regex::new(r.pattern)?))).collect::<Result<_, regex::Error>>()?,
            secret_name: Regex::new(
                r"(?i)key|secret|token|passw|pwd|credential|auth|session|cookie|private|signature",
            )?,
            cmdline: Regex::new(&cmdline::pattern())?,
        })
    }
}

/// `None` only if a pattern above does not compile, which the tests rule
/// out; redaction then fails closed.
static COMPILED: LazyLock<Option<Compiled>> = LazyLock::new(|| Compiled::new().ok());

/// Compiles the rules now (see [`crate::prepare`]).
pub(crate) fn prepare() {
    LazyLock::force(&COMPILED);
    cmdline::prepare();
}

/// What replaces the whole text if the rules could not be compiled.
const UNAVAILABLE: &str = "[REDACTED:scrubber_unavailable]";

/// `text` with every secret a rule recognises replaced by
/// `[REDACTED:kind]`. Borrows when nothing was found.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    let Some(c) = &*COMPILED else {
        return Cow::Borrowed(UNAVAILABLE);
    };
    let hits = c.set.matches(text);
    if !hits.matched_any() {
        return Cow::Borrowed(text);
    }
    // Known formats first, so a value keeps its specific kind
    // (`--token [REDACTED:github_token]`); then command lines, whose
    // values are redacted whole; then the generic rules, which would
    // otherwise take a word that follows `--password= ` for its value.
    let (formats, generic): (Vec<usize>, Vec<usize>) = hits
        .iter()
        .filter(|&i| i < RULES.len())
        .partition(|&i| !matches!(RULES[i].check, Check::Late | Check::Entropy));
    let mut out = apply_rules(Cow::Borrowed(text), c, &formats);
    if hits.matched(RULES.len()) {
        out = match out {
            Cow::Borrowed(t) => cmdline::redact(t, &c.cmdline),
            Cow::Owned(t) => Cow::Owned(cmdline::redact(&t, &c.cmdline).into_owned()),
        };
    }
    // A marker never gives a generic rule a match the text did not have.
    apply_rules(out, c, &generic)
}

fn apply_rules<'a>(mut out: Cow<'a, str>, c: &Compiled, which: &[usize]) -> Cow<'a, str> {
    for &i in which {
        let Some((rule, re)) = c.rules.get(i) else { continue };
        let replaced = re.replace_all(&out, |caps: &Captures<'_>| replacement(rule, caps, &c.secret_name));
        // The generic rule can match and still keep the text (low
        // entropy); only a real change makes a copy.
        if let Cow::Owned(s) = replaced
            && s != *out
        {
            out = Cow::Owned(s);
        }
    }
    out
}

fn replacement(rule: &Rule, caps: &Captures<'_>, secret_name: &Regex) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    let Some(secret) = caps.name("s").or_else(|| caps.name("q")) else {
        return format!("[REDACTED:{}]", rule.kind);
    };
    let name = caps.name("k").map_or("", |m| m.as_str());
    let value = secret.as_str();
    let mut kind = rule.kind;
    // The secret's range inside `value`.
    let (mut from, mut to) = (0, value.len());
    match rule.check {
        Check::Always | Check::Late => {}
        Check::Entropy => {
            let threshold = if secret_name.is_match(name) { SECRET_NAME_ENTROPY } else { OTHER_NAME_ENTROPY };
            if value.len() < MIN_GENERIC_LEN || shannon_entropy(value) < threshold {
                return whole.to_owned();
            }
        }
        Check::Value | Check::NamedKey => {
            if rule.check == Check::NamedKey {
                let Some(named) = files::key_kind(name) else { return whole.to_owned() };
                kind = named;
                if caps.name("s").is_some() {
                    to = files::ini_value(value);
                }
            }
            (from, to) = files::inside_quotes(&value[..to]);
            if from == to || files::kept(&value[..to]) {
                return whole.to_owned();
            }
        }
    }
    let start = secret.start() - caps.get(0).map_or(0, |m| m.start());
    format!("{}[REDACTED:{kind}]{}", &whole[..start + from], &whole[start + to..])
}

/// Shannon entropy of the characters of `s`, in bits per character.
pub fn shannon_entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts.values().map(|&k| k as f64 / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
