//! Commands that store a value under a name, where the value is a word
//! of its own rather than an option's: `aws configure set KEY VALUE`,
//! `npm config set KEY VALUE`, `git config KEY VALUE`, fish's
//! `set -gx NAME VALUE`, and secret stores, whose every value is a secret
//! whatever its name (`gh secret set NAME --body VALUE`, `vault kv put
//! PATH k=v`, `heroku config:set K=V`, `kubectl create secret generic
//! NAME --from-literal=k=v`).
//!
//! They are found by their verb phrase ([`PHRASES`]), not by program, so
//! a tool with the same shape that is not listed (`foo config set
//! api_token …`) is read the same way.

use super::{Kind, Name, Scan, classify, config_key, is_metavar};

/// How the words after a phrase are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `KEY VALUE` and `KEY=VALUE`: the value when the key names a secret
    /// (`aws_secret_access_key`, `//registry/:_authToken`,
    /// `user.password`).
    Named,
    /// A secret store: after `names` positional words that name the
    /// secret (`gh secret set NAME`, `kubectl create secret generic
    /// NAME`), every value is a secret.
    Store { names: usize },
}

/// The verb phrases, as words, that start a setter. A phrase is matched
/// whole, so the longer ones come first.
pub(super) const PHRASES: &[(&[&str], Mode)] = &[
    (&["create", "secret"], Mode::Store { names: 2 }),
    (&["secret", "create"], Mode::Store { names: 2 }),
    (&["secrets", "create"], Mode::Store { names: 1 }),
    (&["secret", "set"], Mode::Store { names: 1 }),
    (&["secrets", "set"], Mode::Store { names: 1 }),
    (&["kv", "put"], Mode::Store { names: 1 }),
    (&["kv", "patch"], Mode::Store { names: 1 }),
    (&["variable", "set"], Mode::Store { names: 1 }),
    (&["variables", "set"], Mode::Store { names: 1 }),
    (&["variables", "--set"], Mode::Store { names: 0 }),
    (&["appsettings", "set"], Mode::Store { names: 0 }),
    (&["config:set"], Mode::Store { names: 1 }),
    (&["config:add"], Mode::Store { names: 1 }),
    (&["env:set"], Mode::Store { names: 1 }),
    (&["env:add"], Mode::Store { names: 1 }),
    (&["secrets:set"], Mode::Store { names: 1 }),
    (&["set-env"], Mode::Store { names: 2 }),
    (&["config", "set"], Mode::Named),
    (&["configure", "set"], Mode::Named),
    (&["config"], Mode::Named),
    (&["setenv"], Mode::Named),
    (&["set"], Mode::Named),
];

/// The phrases as one regular expression fragment, words separated by
/// blanks.
pub(super) fn pattern() -> String {
    let phrases: Vec<String> = PHRASES
        .iter()
        .map(|(words, _)| words.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join(r"[ \t]+"))
        .collect();
    phrases.join("|")
}

/// Options of secret stores whose value is the secret (`gh secret set
/// --body`, `az keyvault secret set --value`).
const VALUE_OPTIONS: &[&str] = &["--body", "-b", "--value", "-v", "--data", "--secret-string"];

/// Options that take a value as the next word, so that word is neither a
/// name nor a secret (`--repo me/app`, `-a shop`, `-n prod`).
const OPTIONS_WITH_VALUES: &[&str] = &[
    "--app",
    "-a",
    "--repo",
    "-R",
    "--org",
    "-o",
    "--env",
    "-e",
    "--environment",
    "--project",
    "-p",
    "--config",
    "-c",
    "--profile",
    "--region",
    "--namespace",
    "-n",
    "--context",
    "--name",
    "--vault-name",
    "--site",
    "--scope",
    "--mount",
    "--service",
    "-s",
    "--team",
    "--stage",
    "--visibility",
    "--location",
    "-L",
    "--registry",
    "-h",
    "--hostname",
    "--file",
    "-f",
    "--type",
    "--output",
    "--resource-group",
    "-g",
    "--subscription",
    "--secret-id",
    "--description",
];

impl Scan<'_> {
    /// Reads the `words` after a setter's phrase.
    pub(super) fn setter(&mut self, mode: Mode, words: &[(usize, usize)]) {
        let flag = words.iter().find(|&&w| self.word_at(w) == b"--secret");
        match mode {
            // `pulumi config set --secret NAME VALUE` stores a secret
            // whatever its name, and its `--secret` is a switch.
            Mode::Named if let Some(&(at, _)) = flag => {
                self.valueless.push(at);
                self.store(1, words);
            }
            Mode::Named => self.named(words, true),
            Mode::Store { names } => self.store(names, words),
        }
    }

    /// `KEY VALUE` pairs and `KEY=VALUE` words whose key names a secret.
    /// `prose` when the words may be prose rather than a command (after a
    /// phrase like `set` or `config`, not after a program's name).
    pub(super) fn named(&mut self, words: &[(usize, usize)], prose: bool) {
        let positional: Vec<(usize, usize)> = words.iter().copied().filter(|&w| self.word_at(w)[0] != b'-').collect();
        for (i, &w) in positional.iter().enumerate() {
            let (s, e) = super::words::inner(self.t, w);
            let word = &self.text[s..e];
            if let Some(eq) = word.find('=') {
                if let Some(kind) = config_key(&word[..eq]) {
                    self.secret((s + eq + 1, e), kind);
                }
                continue;
            }
            let Some(kind) = config_key(word) else { continue };
            // `http-basic.REPO USER PASSWORD` (poetry, composer).
            let at =
                if word.split(['.', ':']).any(|seg| seg.eq_ignore_ascii_case("http-basic")) { i + 2 } else { i + 1 };
            let Some(&value) = positional.get(at) else { continue };
            // A plain word for a key is prose unless its value ends the
            // command ("set token refresh interval" is a commit message),
            // where the phrase may be prose at all.
            let plain = word.bytes().all(|c| c.is_ascii_alphabetic()) && word.bytes().any(|c| c.is_ascii_lowercase());
            let unquoted = self.unquoted(value);
            if (prose && plain && positional.len() > at + 1)
                || super::PROSE.iter().any(|w| unquoted.eq_ignore_ascii_case(w))
                || is_metavar(unquoted, kind)
            {
                continue;
            }
            self.secret(value, kind);
        }
    }

    /// A secret store's words: the first `names` positional words name
    /// the secret; every later one, every `KEY=VALUE`'s value and every
    /// value option's value is a secret.
    fn store(&mut self, mut names: usize, words: &[(usize, usize)]) {
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            i += 1;
            let word = self.word_at(w);
            if word[0] == b'-' {
                let text = &self.text[w.0..w.1];
                if let Some((option, value)) = text.split_once('=') {
                    let at = w.0 + option.len() + 1;
                    if VALUE_OPTIONS.contains(&option) {
                        self.store_value((at, w.1), None);
                    } else if value.contains('=') {
                        // `--from-literal=KEY=VALUE`
                        self.assignment((at, w.1));
                    }
                } else if VALUE_OPTIONS.contains(&text) {
                    if let Some(&v) = words.get(i) {
                        self.store_value(v, None);
                        i += 1;
                    }
                } else if let Some(short) = VALUE_OPTIONS.iter().find(|o| o.len() == 2 && text.starts_with(*o)) {
                    // `-bVALUE`
                    self.store_value((w.0 + short.len(), w.1), None);
                } else if OPTIONS_WITH_VALUES.contains(&text) {
                    i += 1;
                }
            } else if !self.assignment(w) {
                if names > 0 {
                    names -= 1;
                } else {
                    self.store_value(w, None);
                }
            }
        }
    }

    /// `KEY=VALUE` (quoted or not) in a secret store: the value, of the
    /// kind its key names. False if the word is no assignment.
    fn assignment(&mut self, w: (usize, usize)) -> bool {
        let (s, e) = super::words::inner(self.t, w);
        let word = &self.text[s..e];
        let Some(eq) = word.find('=') else { return false };
        let key = &word[..eq];
        let is_name =
            !key.is_empty() && key.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
        if !is_name {
            return false;
        }
        let kind = match classify(key) {
            Some(Name::Secret(kind)) => Some(kind),
            _ => None,
        };
        self.store_value((s + eq + 1, e), kind);
        true
    }

    /// A value in a secret store: `-` (stdin) and `@file` name where it
    /// is.
    fn store_value(&mut self, span: (usize, usize), kind: Option<Kind>) {
        let value = self.unquoted(span);
        if value == "-" || value.starts_with('@') || is_metavar(value, Kind::Secret) {
            return;
        }
        self.secret(span, kind.unwrap_or(Kind::Secret));
    }
}
