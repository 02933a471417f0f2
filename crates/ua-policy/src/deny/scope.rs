//! What a deny rule can ask about a part: its program, its resolved paths,
//! what it writes, where its output goes.

use crate::classify::PartRisk;
use crate::classify::args::Args;
use crate::classify::effects::{is_sink, models_writes};
use crate::classify::programs;
use crate::parse::{Parsed, Part, PartKind};
use crate::paths::{normalize, system_program};
use crate::risk::Risk;

/// Shells whose stdin or script operand is code.
pub(crate) const SHELLS: &[&str] =
    &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "tcsh", "csh", "busybox"];

/// Interpreters that read a program from stdin when given none.
pub(crate) const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "Rscript",
    "deno",
    "bun",
    "pwsh",
    "osascript",
];

/// Programs that fetch bytes from another host to stdout or a file.
const DOWNLOADERS: &[&str] = &[
    "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lynx", "w3m", "links", "nc", "ncat", "netcat", "socat",
    "telnet", "openssl", "ftp", "lftp", "tftp", "wget2", "curlie",
];

/// Programs that send data to another host.
const SENDERS: &[&str] = &[
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "mail",
    "mailx",
    "sendmail",
    "mutt",
    "dig",
    "nslookup",
    "host",
    "ping",
    "whois",
    "gh",
    "rclone",
    "s3cmd",
    "aws",
    "gsutil",
    "smbclient",
];

/// Top-level directories that belong to the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root", "sbin", "srv",
    "sys", "usr", "var", "snap", "mnt", "media", "run",
];

/// System directories whose immediate children are also system trees
/// (`/usr/lib`, `/etc/ssh`, `/var/lib`).
const DEEP_SYSTEM_DIRS: &[&str] = &["bin", "boot", "etc", "lib", "lib32", "lib64", "sbin", "usr", "var", "proc", "sys"];

/// The basename of a program word (`/tmp/x/rm` → `rm`).
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What a broad path names, if it is one: the root, a home directory, or a
/// system tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Broad {
    Root,
    Home,
    System,
}

/// Classifies a resolved, normalised path as broad.
pub(crate) fn broad(path: &str) -> Option<Broad> {
    let mut p = path.to_string();
    // `/etc/*`, `~/.*`, `/usr/.`: the contents of a tree are the tree.
    while let Some(s) = p.strip_suffix("/*").or_else(|| p.strip_suffix("/.*")).or_else(|| p.strip_suffix("/.")) {
        p = s.to_string();
    }
    if p.is_empty() || p == "/" || p == "*" && path.starts_with('/') {
        return Some(Broad::Root);
    }
    if p.starts_with('~') && (!p.contains('/') || p.contains("/..")) {
        return Some(Broad::Home);
    }
    let rest = p.strip_prefix('/')?;
    let segs: Vec<&str> = rest.split('/').collect();
    let glob = |s: &str| s.contains(['*', '?', '[']);
    if segs.first().is_some_and(|s| glob(s)) {
        return Some(Broad::Root);
    }
    let top = segs.first().copied().unwrap_or("");
    if !SYSTEM_DIRS.contains(&top) {
        return None;
    }
    match segs.len() {
        1 => Some(if top == "root" { Broad::Home } else { Broad::System }),
        2 if top == "home" => Some(Broad::Home),
        2 if DEEP_SYSTEM_DIRS.contains(&top) || glob(segs[1]) => Some(Broad::System),
        _ => None,
    }
}

/// A command in the context of the whole line.
pub(crate) struct Scope<'a> {
    pub parsed: &'a Parsed,
    pub risks: &'a [PartRisk],
    /// The working directory each part runs in, when an earlier `cd` in the
    /// same command line set it.
    cwd: Vec<Option<String>>,
    /// [`Scope::write_targets`] per part, computed once: many rules ask.
    targets: Vec<std::cell::OnceCell<Vec<String>>>,
    /// [`Scope::certain_writes`] per part, likewise.
    certain: Vec<std::cell::OnceCell<Vec<String>>>,
}

/// `${XDG_…}` spelt as `$XDG_…`, so rules match one spelling; borrowed
/// when there is nothing to change (nearly always).
fn unbrace(path: &str) -> std::borrow::Cow<'_, str> {
    if path.contains("${XDG_") {
        path.replace("${XDG_CONFIG_HOME}", "$XDG_CONFIG_HOME").replace("${XDG_DATA_HOME}", "$XDG_DATA_HOME").into()
    } else {
        path.into()
    }
}

impl<'a> Scope<'a> {
    pub fn new(parsed: &'a Parsed, risks: &'a [PartRisk]) -> Scope<'a> {
        let mut cwd = Vec::with_capacity(parsed.parts.len());
        let mut cur: Option<String> = None;
        for p in &parsed.parts {
            cwd.push(cur.clone());
            if p.kind == PartKind::Exec && matches!(system_program(p.program()), Some("cd" | "pushd")) {
                let target = Args(p.args()).operands().first().map(|a| a.text.clone());
                cur = match target.as_deref() {
                    None => Some("~".into()),
                    Some("-") => None,
                    Some(t) if t.starts_with('/') || t.starts_with('~') => Some(normalize(t)),
                    Some(t) => cur.map(|c| normalize(&format!("{c}/{t}"))),
                };
            }
        }
        let targets = parsed.parts.iter().map(|_| std::cell::OnceCell::new()).collect();
        let certain = parsed.parts.iter().map(|_| std::cell::OnceCell::new()).collect();
        Scope { parsed, risks, cwd, targets, certain }
    }

    pub fn part(&self, i: usize) -> &'a Part {
        &self.parsed.parts[i]
    }

    pub fn parts(&self) -> std::ops::Range<usize> {
        0..self.parsed.parts.len()
    }

    /// The basename of the program an Exec part runs (`""` otherwise).
    pub fn base(&self, i: usize) -> &'a str {
        let p = self.part(i);
        if p.kind == PartKind::Exec { basename(p.program()) } else { "" }
    }

    pub fn is(&self, i: usize, names: &[&str]) -> bool {
        names.contains(&self.base(i))
    }

    pub fn args(&self, i: usize) -> Args<'a> {
        Args(self.part(i).args())
    }

    /// The arguments' texts, quotes removed.
    pub fn arg_texts(&self, i: usize) -> impl Iterator<Item = &'a str> {
        self.part(i).args().iter().map(|a| a.text.as_str())
    }

    /// A path as the part would use it: relative to an earlier `cd`, normalised.
    pub fn resolve(&self, i: usize, path: &str) -> String {
        let path = unbrace(path);
        if path.starts_with('/') || path.starts_with('~') || path.starts_with('$') {
            return normalize(&path);
        }
        match &self.cwd[i] {
            Some(c) => normalize(&format!("{c}/{path}")),
            None => normalize(&path),
        }
    }

    /// Non-option arguments, resolved.
    pub fn operands(&self, i: usize) -> Vec<String> {
        self.args(i).operands().iter().map(|a| self.resolve(i, &a.text)).collect()
    }

    /// The risk the program's own rule gives (before floors).
    pub fn program_risk(&self, i: usize) -> Risk {
        let p = self.part(i);
        match (&p.kind, system_program(p.program())) {
            (PartKind::Exec, Some(name)) => programs::rule(name, p).risk,
            (PartKind::Exec, None) => Risk::Write,
            _ => Risk::ReadOnly,
        }
    }

    /// Everything the part may write, resolved: known write effects,
    /// redirection targets, and, for programs whose writes we do not model
    /// (interpreters, unknown programs) but which are not read-only, the
    /// text of every argument.
    pub fn write_targets(&self, i: usize) -> &[String] {
        match self.targets.get(i) {
            Some(cell) => cell.get_or_init(|| self.find_write_targets(i)),
            None => &[],
        }
    }

    fn find_write_targets(&self, i: usize) -> Vec<String> {
        let p = self.part(i);
        let mut out = self.certain_writes(i).to_vec();
        let modeled = system_program(p.program()).is_some_and(models_writes);
        if p.kind == PartKind::Exec && !modeled && self.program_risk(i) > Risk::ReadOnly {
            for a in p.args() {
                out.push(unbrace(&a.text).into_owned());
                out.push(self.resolve(i, &a.text));
            }
        }
        out
    }

    /// What the part certainly writes, resolved: modelled write effects and
    /// writing redirections, without [`Scope::write_targets`]' guess that
    /// any argument of an unmodelled program may be written. For rules
    /// where a guess would deny everyday reads (`shellcheck ~/.bashrc`).
    pub fn certain_writes(&self, i: usize) -> &[String] {
        let Some(cell) = self.certain.get(i) else { return &[] };
        cell.get_or_init(|| {
            let p = self.part(i);
            let mut out: Vec<String> = self.risks[i].effects.writes.iter().map(|w| self.resolve(i, w)).collect();
            for r in &p.redirects {
                if r.kind.writes() && !is_sink(&r.target.text) {
                    out.push(self.resolve(i, &r.target.text));
                }
            }
            out
        })
    }

    /// True when the part writes something whose path contains `marker`.
    pub fn writes_containing(&self, i: usize, markers: &[&str]) -> bool {
        self.write_targets(i).iter().any(|t| markers.iter().any(|m| t.contains(m)))
    }

    /// True when the part talks to another host.
    pub fn is_net(&self, i: usize) -> bool {
        let r = &self.risks[i];
        !r.effects.hosts.is_empty() || self.is(i, DOWNLOADERS) || self.is(i, SENDERS) || r.risk == Risk::Network
    }

    /// True when the part fetches bytes from another host.
    pub fn is_download(&self, i: usize) -> bool {
        if self.is(i, DOWNLOADERS) {
            return true;
        }
        // `python3 -c 'import urllib…'` and friends.
        self.is(i, INTERPRETERS) && self.risks[i].risk == Risk::Network
    }

    /// True when a shell or interpreter reads its program from stdin.
    pub fn reads_code_from_stdin(&self, i: usize) -> bool {
        let base = self.base(i);
        let a = self.args(i);
        let ops = a.operands();
        let stdin_file = |t: &str| matches!(t, "-" | "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0");
        if SHELLS.contains(&base) {
            return ops.is_empty() || ops.first().is_some_and(|o| stdin_file(&o.text)) || a.flag('s', "");
        }
        if INTERPRETERS.contains(&base) {
            let inline =
                a.0.iter()
                    .any(|x| matches!(x.text.as_str(), "-c" | "-e" | "-E" | "-m" | "-r" | "--eval" | "-p" | "--print"));
            return !inline && (ops.is_empty() || ops.first().is_some_and(|o| stdin_file(&o.text)));
        }
        matches!(base, "source" | ".") && ops.first().is_some_and(|o| stdin_file(&o.text))
    }

    /// True when the part runs shell or interpreter code it is handed (from
    /// stdin, or as the script operand `path`).
    pub fn runs_file(&self, i: usize, path: &str) -> bool {
        let p = self.part(i);
        if p.kind != PartKind::Exec {
            return false;
        }
        if self.resolve(i, p.program()) == path {
            return true;
        }
        let runner = self.is(i, SHELLS) || self.is(i, INTERPRETERS) || self.is(i, &["source", "."]);
        runner && self.args(i).operands().first().is_some_and(|o| self.resolve(i, &o.text) == path)
    }

    /// Inline code handed to an interpreter (`-c`, `-e`, `-r`, …), joined.
    pub fn inline_code(&self, i: usize) -> Option<String> {
        if !self.is(i, INTERPRETERS) && !self.is(i, &["awk", "gawk", "mawk", "nawk"]) {
            return None;
        }
        Some(self.args(i).joined())
    }

    /// True when part `i`'s output reaches part `j` through a pipe.
    pub fn pipes_into(&self, i: usize, j: usize) -> bool {
        self.part(i).pipes_into(self.part(j))
    }

    /// True when `i` and `j` are stages of one pipeline.
    pub fn same_pipeline(&self, i: usize, j: usize) -> bool {
        i != j && (self.pipes_into(i, j) || self.pipes_into(j, i))
    }
}
