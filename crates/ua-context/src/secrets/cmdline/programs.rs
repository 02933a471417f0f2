//! Programs that take a password in an option of their own, and how
//! each one's words are read ([`PROGRAMS`]).
//!
//! Context is what makes `-p` a password: for sshpass before the command
//! it runs, for the mysql family only attached, for `docker login` after
//! `login`; for ssh, psql or `docker run` it is a port, and those are not
//! in the table.

use super::{Kind, Name, Scan, classify, words::inner};

/// How a program takes its password.
#[derive(Debug, Clone, Copy)]
pub(super) enum Spec {
    /// `-p VALUE` or `-pVALUE` before the command sshpass runs (after it,
    /// `-p` belongs to that command: `sshpass -f f ssh -p 22`).
    Sshpass,
    /// Only attached (`-pVALUE`): `-p` or `--password` alone prompts, and
    /// the next word is something else (`mysql -p dbname`).
    Attached(u8),
    /// `-X VALUE` or `-XVALUE`.
    Short(u8),
    /// `-X VALUE` or `-XVALUE` after a `login` subcommand (`docker login
    /// -p`, not `docker run -p 8080:80`).
    Login(u8),
    /// `user<sep>password` given to one of these short or long options;
    /// without the separator the program prompts.
    UserPass { short: &'static [u8], long: &'static [&'static str], sep: u8 },
    /// A whole-word option followed by the value (`-pw VALUE`).
    Word(&'static str),
    /// A prefix inside one word (`/p:VALUE`).
    Prefix(&'static str),
    /// `htpasswd -b [-c] file user PASSWORD`, `htpasswd -nb user PASSWORD`.
    Htpasswd,
    /// After the subcommand words `sub`, the positional words from the
    /// `from`th on are secrets (`cargo login TOKEN`, `mc alias set NAME
    /// URL ACCESS SECRET`); `options` take a value of their own.
    Positional { sub: &'static [&'static str], from: usize, kind: Kind, options: &'static [&'static str] },
    /// `-X VALUE` or `-XVALUE` once one of `subs` has been named
    /// (`security add-generic-password -w`, `dotnet nuget add source -p`).
    After { subs: &'static [&'static str], short: u8 },
    /// Request headers named for a secret (`-H 'X-Api-Key: …'`); with
    /// `bare`, also httpie's `Name:value` items.
    Header { short: u8, long: &'static str, bare: bool },
    /// `KEY VALUE` pairs anywhere (`nmcli … password VALUE`).
    Named,
}

const MYSQL: &[Spec] = &[Spec::Attached(b'p')];
const LOGIN: &[Spec] = &[Spec::Login(b'p')];
const CURL: &[Spec] = &[
    Spec::UserPass { short: b"uU", long: &["--user", "--proxy-user"], sep: b':' },
    Spec::Header { short: b'H', long: "--header", bare: false },
];
const HTTPIE: &[Spec] =
    &[Spec::UserPass { short: b"a", long: &["--auth"], sep: b':' }, Spec::Header { short: 0, long: "", bare: true }];
const NGROK: &[Spec] = &[
    Spec::Positional { sub: &["authtoken"], from: 0, kind: Kind::Token, options: &["--config"] },
    Spec::Positional { sub: &["config", "add-authtoken"], from: 0, kind: Kind::Token, options: &["--config"] },
    Spec::Positional { sub: &["config", "add-api-key"], from: 0, kind: Kind::ApiKey, options: &["--config"] },
];
const MINIO: &[Spec] = &[
    Spec::Positional { sub: &["alias", "set"], from: 2, kind: Kind::Secret, options: &["--api", "--path"] },
    Spec::Positional { sub: &["config", "host", "add"], from: 2, kind: Kind::Secret, options: &["--api", "--lookup"] },
];
const SAMBA: &[Spec] = &[Spec::UserPass { short: b"U", long: &["--user"], sep: b'%' }];
const MONGO: &[Spec] = &[Spec::Short(b'p')];
const LDAP: &[Spec] = &[Spec::Short(b'w')];
const CAPITAL_P: &[Spec] = &[Spec::Short(b'P')];
const PUTTY: &[Spec] = &[Spec::Word("-pw")];
const FREERDP: &[Spec] = &[Spec::Prefix("/p:")];

/// Programs that take a password in an option of their own. Long options
/// named for a secret (`--password`) need no entry: every program gets
/// those.
pub(super) const PROGRAMS: &[(&str, &[Spec])] = &[
    ("sshpass", &[Spec::Sshpass]),
    ("mysql", MYSQL),
    ("mariadb", MYSQL),
    ("mysqldump", MYSQL),
    ("mysqladmin", MYSQL),
    ("mysqlimport", MYSQL),
    ("mysqlshow", MYSQL),
    ("mysqlcheck", MYSQL),
    ("mysqlpump", MYSQL),
    ("mysqlslap", MYSQL),
    ("mysqlbinlog", MYSQL),
    ("mysqlsh", MYSQL),
    ("mariadb-dump", MYSQL),
    ("mariadb-admin", MYSQL),
    ("mariadb-import", MYSQL),
    ("mariadb-show", MYSQL),
    ("mariadb-check", MYSQL),
    ("mariadb-slap", MYSQL),
    ("mariadb-binlog", MYSQL),
    ("7z", MYSQL),
    ("7za", MYSQL),
    ("7zz", MYSQL),
    ("7zr", MYSQL),
    ("rar", MYSQL),
    ("unrar", MYSQL),
    ("docker", LOGIN),
    ("podman", LOGIN),
    ("nerdctl", LOGIN),
    ("buildah", LOGIN),
    ("skopeo", LOGIN),
    ("oras", LOGIN),
    ("helm", LOGIN),
    ("finch", LOGIN),
    ("az", LOGIN),
    ("htpasswd", &[Spec::Htpasswd]),
    ("curl", CURL),
    ("http", HTTPIE),
    ("https", HTTPIE),
    ("xh", HTTPIE),
    ("smbclient", SAMBA),
    ("rpcclient", SAMBA),
    ("smbcacls", SAMBA),
    ("lftp", &[Spec::UserPass { short: b"u", long: &[], sep: b',' }]),
    ("redis-cli", &[Spec::Short(b'a'), Spec::Word("--pass")]),
    ("mongo", MONGO),
    ("mongosh", MONGO),
    ("mongodump", MONGO),
    ("mongorestore", MONGO),
    ("mongoexport", MONGO),
    ("mongoimport", MONGO),
    ("mongostat", MONGO),
    ("mongotop", MONGO),
    ("mongofiles", MONGO),
    ("ldapsearch", LDAP),
    ("ldapadd", LDAP),
    ("ldapmodify", LDAP),
    ("ldapdelete", LDAP),
    ("ldapmodrdn", LDAP),
    ("ldapcompare", LDAP),
    ("ldapwhoami", LDAP),
    ("ldapexop", LDAP),
    ("ldappasswd", &[Spec::Short(b'w'), Spec::Short(b'a'), Spec::Short(b's')]),
    ("sqlcmd", CAPITAL_P),
    ("bcp", CAPITAL_P),
    ("ipmitool", CAPITAL_P),
    ("zip", CAPITAL_P),
    ("unzip", CAPITAL_P),
    ("rdesktop", MONGO),
    ("plink", PUTTY),
    ("pscp", PUTTY),
    ("psftp", PUTTY),
    (
        "cargo",
        &[Spec::Positional { sub: &["login"], from: 0, kind: Kind::Token, options: &["--registry", "--config", "-Z"] }],
    ),
    (
        "vault",
        &[Spec::Positional { sub: &["login"], from: 0, kind: Kind::Token, options: &["-method", "-path", "-address"] }],
    ),
    ("ngrok", NGROK),
    ("wandb", &[Spec::Positional { sub: &["login"], from: 0, kind: Kind::ApiKey, options: &["--host"] }]),
    ("snyk", &[Spec::Positional { sub: &["auth"], from: 0, kind: Kind::Token, options: &[] }]),
    ("mc", MINIO),
    ("mcli", MINIO),
    ("twine", MONGO),
    (
        "security",
        &[
            Spec::After { subs: &["add-generic-password", "add-internet-password"], short: b'w' },
            Spec::After { subs: &["unlock-keychain", "create-keychain"], short: b'p' },
        ],
    ),
    ("dotnet", &[Spec::After { subs: &["source"], short: b'p' }]),
    ("nmcli", &[Spec::Named]),
    ("wget", &[Spec::Header { short: 0, long: "--header", bare: false }]),
    ("xfreerdp", FREERDP),
    ("xfreerdp3", FREERDP),
    ("wlfreerdp", FREERDP),
    ("sdl-freerdp", FREERDP),
];

impl Scan<'_> {
    /// Reads the `words` after a program of [`PROGRAMS`] by its `specs`.
    pub(super) fn program(&mut self, specs: &[Spec], words: &[(usize, usize)]) {
        for spec in specs {
            match *spec {
                Spec::Sshpass => self.sshpass(words),
                Spec::Attached(c) => self.attached(c, words),
                Spec::Short(c) => self.short(c, words),
                Spec::Login(c) => self.login(c, words),
                Spec::UserPass { short, long, sep } => self.user_pass_options(short, long, sep, words),
                Spec::Word(option) => self.word_option(option, words),
                Spec::Prefix(prefix) => self.prefix(prefix, words),
                Spec::Htpasswd => self.htpasswd(words),
                Spec::Positional { sub, from, kind, options } => self.positional(sub, from, kind, options, words),
                Spec::After { subs, short } => self.after(subs, short, words),
                Spec::Header { short, long, bare } => self.headers(short, long, bare, words),
                Spec::Named => self.named(words, false),
            }
        }
    }

    pub(super) fn word_at(&self, (s, e): (usize, usize)) -> &[u8] {
        &self.t[s..e]
    }

    fn sshpass(&mut self, words: &[(usize, usize)]) {
        let mut i = 0;
        while let Some(&(s, e)) = words.get(i) {
            match self.word_at((s, e)) {
                b"-p" => {
                    if let Some(&v) = words.get(i + 1) {
                        self.word_secret(v, Kind::Password);
                    }
                    i += 1;
                }
                w if w.starts_with(b"-p") => self.secret((s + 2, e), Kind::Password),
                b"-f" | b"-d" | b"-P" => i += 1,
                w if w.starts_with(b"-") => {}
                // The command sshpass runs: its `-p` is its own.
                _ => return,
            }
            i += 1;
        }
    }

    fn attached(&mut self, c: u8, words: &[(usize, usize)]) {
        for &(s, e) in words {
            let w = self.word_at((s, e));
            if w == b"--password" {
                self.valueless.push(s);
            } else if w.len() > 2 && w[0] == b'-' && w[1] == c {
                self.secret((s + 2, e), Kind::Password);
            }
        }
    }

    fn short(&mut self, c: u8, words: &[(usize, usize)]) {
        let mut i = 0;
        while let Some(&(s, e)) = words.get(i) {
            let w = self.word_at((s, e));
            if w.len() >= 2 && w[0] == b'-' && w[1] == c {
                if w.len() > 2 {
                    self.secret((s + 2, e), Kind::Password);
                } else if let Some(&v) = words.get(i + 1) {
                    self.word_secret(v, Kind::Password);
                    i += 1;
                }
            }
            i += 1;
        }
    }

    /// `-c` after `login` among the first two subcommands (`docker
    /// login`, `helm registry login`).
    fn login(&mut self, c: u8, words: &[(usize, usize)]) {
        let subcommands = words.iter().enumerate().filter(|&(_, &w)| !self.word_at(w).starts_with(b"-")).take(2);
        let at = subcommands.into_iter().find(|&(_, &w)| self.word_at(w) == b"login").map(|(i, _)| i);
        if let Some(at) = at {
            self.short(c, &words[at + 1..]);
        }
    }

    fn user_pass_options(&mut self, short: &[u8], long: &[&str], sep: u8, words: &[(usize, usize)]) {
        let mut i = 0;
        while let Some(&(s, e)) = words.get(i) {
            let w = self.word_at((s, e));
            // `-u`, and a cluster of flags ending in it (`curl -su`).
            let cluster = w.len() >= 2
                && w[0] == b'-'
                && w[1..].iter().all(u8::is_ascii_alphabetic)
                && short.contains(&w[w.len() - 1]);
            if cluster || long.iter().any(|l| w == l.as_bytes()) {
                if let Some(&v) = words.get(i + 1) {
                    self.user_pass(v, sep);
                }
                i += 1;
            } else if w.len() > 2 && w[0] == b'-' && short.contains(&w[1]) {
                self.user_pass((s + 2, e), sep);
            } else if let Some(l) = long.iter().find(|l| w.starts_with(l.as_bytes()) && w.get(l.len()) == Some(&b'=')) {
                self.user_pass((s + l.len() + 1, e), sep);
            }
            i += 1;
        }
    }

    fn word_option(&mut self, option: &str, words: &[(usize, usize)]) {
        for (i, &w) in words.iter().enumerate() {
            if self.word_at(w) == option.as_bytes()
                && let Some(&v) = words.get(i + 1)
            {
                self.word_secret(v, Kind::Password);
            }
        }
    }

    fn prefix(&mut self, prefix: &str, words: &[(usize, usize)]) {
        for &(s, e) in words {
            if self.word_at((s, e)).starts_with(prefix.as_bytes()) {
                self.secret((s + prefix.len(), e), Kind::Password);
            }
        }
    }

    /// `htpasswd -b[c] file user PASSWORD`, `htpasswd -nb user PASSWORD`.
    fn htpasswd(&mut self, words: &[(usize, usize)]) {
        let (mut batch, mut print) = (false, false);
        let mut positional = Vec::new();
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            let word = self.word_at(w);
            if positional.is_empty() && matches!(word, b"-C" | b"-r") {
                i += 1;
            } else if positional.is_empty() && word.len() > 1 && word[0] == b'-' {
                // Only a cluster of htpasswd's own flags says -b or -n.
                if word[1..].iter().all(|c| b"bcnmBdspiDv25".contains(c)) {
                    batch |= word.contains(&b'b');
                    print |= word.contains(&b'n');
                }
            } else {
                positional.push(w);
            }
            i += 1;
        }
        if batch && let Some(&v) = positional.get(if print { 1 } else { 2 }) {
            self.secret(v, Kind::Password);
        }
    }

    /// The positional words after `sub`, from the `from`th on.
    fn positional(&mut self, sub: &[&str], from: usize, kind: Kind, options: &[&str], words: &[(usize, usize)]) {
        let mut i = 0;
        let mut path = sub.iter();
        let mut expect = path.next();
        let mut n = 0;
        while let Some(&w) = words.get(i) {
            i += 1;
            let word = self.word_at(w);
            if word[0] == b'-' {
                if options.iter().any(|o| o.as_bytes() == word) {
                    i += 1;
                }
            } else if let Some(want) = expect {
                if word != want.as_bytes() {
                    return;
                }
                expect = path.next();
            } else if word.contains(&b'=') {
                // `vault login -method=userpass username=me password=…`:
                // named values, read by their names.
            } else {
                if n >= from && !super::is_metavar(self.unquoted(w), kind) {
                    self.secret(w, kind);
                }
                n += 1;
            }
        }
    }

    /// `-c VALUE` once a word among the first three is one of `subs`.
    fn after(&mut self, subs: &[&str], c: u8, words: &[(usize, usize)]) {
        let named = words.iter().take(4).position(|&w| subs.iter().any(|s| s.as_bytes() == self.word_at(w)));
        if let Some(at) = named {
            self.short(c, &words[at + 1..]);
        }
    }

    /// Header values whose name says they are a credential.
    fn headers(&mut self, short: u8, long: &str, bare: bool, words: &[(usize, usize)]) {
        let mut i = 0;
        while let Some(&w) = words.get(i) {
            i += 1;
            let word = self.word_at(w);
            let is_short = short != 0 && word.len() >= 2 && word[0] == b'-' && word[1] == short;
            if (is_short && word.len() == 2) || (!long.is_empty() && word == long.as_bytes()) {
                if let Some(&v) = words.get(i) {
                    self.header(v);
                    i += 1;
                }
            } else if is_short {
                self.header((w.0 + 2, w.1));
            } else if !long.is_empty() && word.starts_with(long.as_bytes()) && word.get(long.len()) == Some(&b'=') {
                self.header((w.0 + long.len() + 1, w.1));
            } else if bare && word[0] != b'-' {
                self.header(w);
            }
        }
    }

    /// `Name: value`: the value, after an authorization scheme if there
    /// is one (`Authorization: Basic …`).
    fn header(&mut self, span: (usize, usize)) {
        let (s, e) = inner(self.t, span);
        let Some(colon) = self.text[s..e].find(':') else { return };
        let name = &self.text[s..s + colon];
        if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
            return;
        }
        let lower = name.to_ascii_lowercase();
        let kind = match classify(name) {
            Some(Name::Secret(kind)) => kind,
            _ if lower.ends_with("key") => Kind::ApiKey,
            _ if lower.ends_with("authorization") || lower == "cookie" || lower.ends_with("auth") => Kind::Secret,
            _ => return,
        };
        let mut from = s + colon + 1;
        while self.t.get(from) == Some(&b' ') {
            from += 1;
        }
        let value = &self.text[from..e];
        if let Some((scheme, _)) = value.split_once(' ')
            && ["basic", "bearer", "token", "digest", "bot"].iter().any(|w| scheme.eq_ignore_ascii_case(w))
        {
            from += scheme.len() + 1;
        }
        if from < e {
            self.secret((from, e), kind);
        }
    }
}
