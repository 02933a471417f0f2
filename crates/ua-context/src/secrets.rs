//! Secret redaction for everything that leaves the machine (design §14.3,
//! §19.2.9).
//!
//! Each rule is a regular expression; a match becomes `[REDACTED:kind]`.
//! Rules with a named group `s` redact only that group, so `API_KEY=abc…`
//! keeps its name and becomes `API_KEY=[REDACTED:high_entropy]`.
//!
//! Known formats (AWS, GitHub, Slack, Stripe, OpenAI, Anthropic, JWT, PEM
//! private keys, `Authorization` headers, bearer tokens, passwords in URLs)
//! are redacted wherever they appear, and so is any value of six or more
//! characters assigned to a password-like name (`PGPASSWORD=…`,
//! `"password": "…"`; not `$VAR` references or `(none)`). Anything else is
//! caught only when it
//! looks assigned (`NAME=value`, `name: value`, `"name": "value"`), is at
//! least [`MIN_GENERIC_LEN`] characters long, and its Shannon entropy per
//! character reaches [`SECRET_NAME_ENTROPY`] when the name says it is
//! secret (`…key…`, `…token…`, `…password…`) or [`OTHER_NAME_ENTROPY`]
//! otherwise (a value starting with `/` is a path, not a token). The
//! second threshold sits above what hexadecimal can reach
//! (4 bits), so hashes, commit ids and UUIDs pass through while random
//! base64 of 32 characters or more does not.
//!
//! This is best effort: a secret in a format no rule knows and with low
//! entropy gets through. The environment allowlist (`env`) is the first
//! line of defence; this is the second.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

/// The shortest value the generic rule considers.
pub const MIN_GENERIC_LEN: usize = 20;
/// Bits per character above which a value assigned to a secret-sounding
/// name is redacted (English words reach ~3.5; random base64 reaches ~5).
pub const SECRET_NAME_ENTROPY: f64 = 3.0;
/// Bits per character above which a value assigned to any other name is
/// redacted.
pub const OTHER_NAME_ENTROPY: f64 = 4.2;

enum Check {
    Always,
    /// The generic rule: entropy over the `s` group, threshold by the `k` group.
    Entropy,
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
        pattern: r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot)\s+)?(?P<s>[^\s"',;]{8,})"#,
        check: Check::Always,
    },
    Rule { kind: "bearer_token", pattern: r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{16,}=*)", check: Check::Always },
    Rule {
        kind: "url_password",
        pattern: r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:(?P<s>[^/\s@]+)@",
        check: Check::Always,
    },
    Rule {
        kind: "password",
        pattern: r#"(?i)(?:passw(?:or)?d|passwd|passphrase|\bpwd)["']?[ \t]*[:=][ \t]*["']?(?P<s>[^\s"',;()\[\]{}<>$][^\s"',;]{5,})"#,
        check: Check::Always,
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
}

impl Compiled {
    fn new() -> Result<Self, regex::Error> {
        Ok(Compiled {
            set: RegexSet::new(RULES.iter().map(|r| r.pattern))?,
            rules: RULES.iter().map(|r| Ok((r, Regex::new(r.pattern)?))).collect::<Result<_, regex::Error>>()?,
            secret_name: Regex::new(
                r"(?i)key|secret|token|passw|pwd|credential|auth|session|cookie|private|signature",
            )?,
        })
    }
}

/// `None` only if a pattern above does not compile, which the tests rule
/// out; redaction then fails closed.
static COMPILED: LazyLock<Option<Compiled>> = LazyLock::new(|| Compiled::new().ok());

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
    let mut out = Cow::Borrowed(text);
    for i in hits.iter() {
        let (rule, re) = &c.rules[i];
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
    let Some(secret) = caps.name("s") else {
        return format!("[REDACTED:{}]", rule.kind);
    };
    if let Check::Entropy = rule.check {
        let name = caps.name("k").map_or("", |m| m.as_str());
        let threshold = if secret_name.is_match(name) { SECRET_NAME_ENTROPY } else { OTHER_NAME_ENTROPY };
        if secret.as_str().len() < MIN_GENERIC_LEN || shannon_entropy(secret.as_str()) < threshold {
            return whole.to_owned();
        }
    }
    let start = secret.start() - caps.get(0).map_or(0, |m| m.start());
    let end = start + secret.len();
    format!("{}[REDACTED:{}]{}", &whole[..start], rule.kind, &whole[end..])
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
