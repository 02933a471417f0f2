//! What the sandbox enforces, as plain values.
//!
//! Each rule carries its `source` (`default: …`, `policy.toml
//! [approval.network] allow_hosts`, `…/policy.cedar: @id("…")`) so
//! `unixagent sandbox status` can say why it is there.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A path the sandbox treats specially, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRule {
    pub path: PathBuf,
    pub source: String,
}

impl PathRule {
    pub fn new(path: impl Into<PathBuf>, source: impl Into<String>) -> Self {
        Self { path: path.into(), source: source.into() }
    }
}

/// A host the proxy lets through, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRule {
    pub host: HostPattern,
    pub source: String,
}

/// A host in an allowlist.
///
/// `*.example.com` matches subdomains of example.com only (not the name
/// itself); any other entry matches exactly, ignoring case and a trailing
/// dot. Without `:port`, any port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostPattern {
    Exact { name: String, port: Option<u16> },
    Subdomains { suffix: String, port: Option<u16> },
}

impl HostPattern {
    /// Reads `host`, `host:port`, `*.domain`, `*.domain:port`, an IPv4
    /// literal, or an IPv6 literal in brackets (`[::1]`, `[::1]:8080`).
    pub fn parse(entry: &str) -> Result<Self, String> {
        let entry = entry.trim();
        let bad = |why: &str| format!("{entry:?} is not a host name: {why}");
        let (host, port) = split_port(entry).map_err(|why| bad(&why))?;
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(suffix) = host.strip_prefix("*.") {
            if suffix.is_empty() || suffix.contains('*') {
                return Err(bad("a wildcard is written *.example.com"));
            }
            return Ok(Self::Subdomains { suffix: suffix.to_string(), port });
        }
        if host.is_empty() || host.contains('*') || host.contains('/') {
            return Err(bad("write a name (api.example.com), a wildcard (*.example.com) or an address"));
        }
        Ok(Self::Exact { name: host, port })
    }

    /// Whether `host` (as a client asked for it) on `port` matches.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let (ok, want) = match self {
            Self::Exact { name, port } => (name.trim_start_matches('[').trim_end_matches(']') == host, port),
            Self::Subdomains { suffix, port } => (
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host[..host.len() - suffix.len()].ends_with('.'),
                port,
            ),
        };
        ok && want.is_none_or(|p| p == port)
    }

    /// Whether this entry names one host exactly (not a wildcard).
    pub fn is_exact(&self) -> bool {
        matches!(self, Self::Exact { .. })
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (host, port) = match self {
            Self::Exact { name, port } => (name.clone(), port),
            Self::Subdomains { suffix, port } => (format!("*.{suffix}"), port),
        };
        match port {
            Some(p) => write!(f, "{host}:{p}"),
            None => f.write_str(&host),
        }
    }
}

/// `host[:port]`, with IPv6 literals in brackets.
fn split_port(entry: &str) -> Result<(&str, Option<u16>), String> {
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let Some(end) = rest.find(']') else { return Err("an IPv6 address needs its closing ]".into()) };
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err("unexpected text after ]".into()),
        };
        (&entry[..end + 2], port)
    } else if entry.matches(':').count() > 1 {
        return Err("an IPv6 address is written in brackets, as [::1]".into());
    } else {
        match entry.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (entry, None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().map_err(|_| format!("{p:?} is not a port"))?),
        None => None,
    };
    Ok((host, port))
}

/// What happens when the kernel cannot enforce what the rules ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Commands do not run (the default).
    #[default]
    Enforce,
    /// Commands run with what can be enforced, and that is reported.
    BestEffort,
}

/// Everything the sandbox enforces.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rules {
    /// Hidden from reads (and so from writes): credential stores, other
    /// sessions' journals, the audit log.
    pub read_deny: Vec<PathRule>,
    /// Where writes may go.
    pub write_roots: Vec<PathRule>,
    /// Never written, even inside a write root, and not renamed or
    /// replaced (nor any directory above it inside the root).
    pub write_protect: Vec<PathRule>,
    /// Hosts the proxy lets through; empty means no network at all.
    pub allow_hosts: Vec<HostRule>,
    pub mode: Mode,
    /// Where task boards live: `path` is the sessions directory, and a
    /// board is `<path>/<session id>/board`. The one board named by
    /// [`BOARD_ENV`] where the sandbox is applied (the session's, which a
    /// child agent inherits) is visible and writable whatever hides or
    /// protects what lies around it: the one place of unixagent's data
    /// that agent commands may write. `None`: no board is opened.
    #[serde(default)]
    pub boards: Option<PathRule>,
}

/// The variable naming the task board a session's shell and its child
/// agents use; the launcher opens that board (see [`Rules::boards`]).
pub const BOARD_ENV: &str = "UNIXAGENT_BOARD";

/// The places the default rules are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    pub home: PathBuf,
    /// The working directory commands start in.
    pub cwd: PathBuf,
    /// `/tmp` and `$TMPDIR`.
    pub temp: Vec<PathBuf>,
    /// unixagent's configuration directory (config, policy, hooks).
    pub config_dir: PathBuf,
    /// unixagent's data directory (journals, audit log).
    pub data_dir: PathBuf,
    /// This session's own journal, which stays readable.
    pub journal: Option<PathBuf>,
}

/// Credential stores and secrets, relative to the home directory.
pub const SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".bash_history",
    ".zsh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".lesshst",
];

/// Shell start-up files, relative to the home directory: never written.
pub const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".config/fish/functions",
    ".inputrc",
    ".ssh/rc",
    ".config/environment.d",
];

/// git's own configuration, relative to the home directory: never written.
/// Like a repository's `.git/config`, it can name hooks, a pager and an
/// fsmonitor for git to run later, outside the sandbox.
pub const GIT_CONFIG: &[&str] = &[".gitconfig", ".config/git"];

impl Rules {
    /// The defaults: reads everywhere but secrets and unixagent's data;
    /// writes in the working tree and the temporary directories; never to
    /// shell start-up files, unixagent's own files or a repository's hooks
    /// and config; no network.
    pub fn defaults(p: &Places) -> Self {
        let home = |rel: &str| p.home.join(rel);
        let mut r = Rules::default();
        for s in SECRETS {
            r.read_deny.push(PathRule::new(home(s), "default: credentials and secrets"));
        }
        r.read_deny.push(PathRule::new(p.data_dir.clone(), "default: unixagent's journals and audit log"));
        r.write_roots.push(PathRule::new(p.cwd.clone(), "default: the working directory"));
        for t in &p.temp {
            r.write_roots.push(PathRule::new(t.clone(), "default: temporary files"));
        }
        for s in STARTUP_FILES {
            r.write_protect.push(PathRule::new(home(s), "default: shell start-up files"));
        }
        for s in GIT_CONFIG {
            r.write_protect.push(PathRule::new(home(s), "default: git's configuration"));
        }
        r.write_protect.push(PathRule::new(p.config_dir.clone(), "default: unixagent's config, policy and hooks"));
        r.write_protect.push(PathRule::new(p.data_dir.clone(), "default: unixagent's journals and audit log"));
        r.boards = Some(PathRule::new(p.data_dir.join("sessions"), "default: the session's task board"));
        r.write_protect.extend(git_paths(&p.cwd));
        r.dedup();
        r
    }

    /// Keeps each path once in each list, with the sources of its repeats
    /// joined to the first; drops repeated hosts.
    pub fn dedup(&mut self) {
        for list in [&mut self.read_deny, &mut self.write_roots, &mut self.write_protect] {
            join_repeats(list);
        }
        let mut seen = std::collections::HashSet::new();
        self.allow_hosts.retain(|h| seen.insert(h.host.clone().to_string()));
    }

    /// Whether any network is allowed.
    pub fn network(&self) -> bool {
        !self.allow_hosts.is_empty()
    }

    /// Whether `path` and everything below it are hidden. A task board
    /// ([`Rules::boards`]) is not.
    pub fn hides(&self, path: &Path) -> bool {
        !self.in_board(path) && self.read_deny.iter().any(|r| path.starts_with(&r.path))
    }

    /// Whether `path` is a task board or lies inside one: `<sessions>/<id>/board…`.
    pub fn in_board(&self, path: &Path) -> bool {
        use std::path::Component::Normal;
        let Some(b) = &self.boards else { return false };
        let Ok(rest) = path.strip_prefix(&b.path) else { return false };
        let mut parts = rest.components();
        matches!((parts.next(), parts.next()), (Some(Normal(_)), Some(Normal(n))) if n == "board")
    }

    /// The board `named` (from [`BOARD_ENV`]) if it may be opened: a
    /// directory `<sessions>/<id>/board` reached without symbolic links
    /// below the sessions directory. Anything else is not a board, and
    /// nothing is opened for it.
    pub fn board_to_open(&self, named: &Path) -> Option<PathBuf> {
        use std::path::Component::Normal;
        let b = self.boards.as_ref()?;
        let rest = named.strip_prefix(&b.path).ok()?;
        let parts: Vec<_> = rest.components().collect();
        let [Normal(id), Normal(board)] = parts.as_slice() else { return None };
        if *board != "board" {
            return None;
        }
        let session = b.path.join(id);
        let plain_dir = |p: &Path| p.symlink_metadata().is_ok_and(|m| m.is_dir());
        if !plain_dir(&session) || !plain_dir(named) {
            return None;
        }
        let real = named.canonicalize().ok()?;
        (real == b.path.canonicalize().ok()?.join(id).join("board")).then(|| named.to_path_buf())
    }

    /// Whether every write at or below `path` is refused, as the Linux
    /// launcher enforces these rules: it is hidden; or no write root
    /// overlaps it, so Landlock grants no write there; or a protected path
    /// at or above it lies inside a write root, which binds it read-only
    /// with all below. A protected path *above* a write root protects
    /// nothing: Landlock grants the root whole.
    ///
    /// A task board is the exception: writes in one are never refused, and
    /// a path holding boards is judged as if they were not there (the
    /// forbids that cover them exempt them, or the boards stay closed).
    pub fn refuses_writes(&self, path: &Path) -> bool {
        if self.in_board(path) {
            return false;
        }
        let roots = || self.write_roots.iter().map(|r| r.path.as_path());
        self.hides(path)
            || !roots().any(|w| path.starts_with(w) || w.starts_with(path))
            || self.write_protect.iter().any(|r| path.starts_with(&r.path) && roots().any(|w| r.path.starts_with(w)))
    }

    /// The allowlist entry that lets `host` through on some port, if any.
    pub fn admits(&self, host: &str) -> Option<&HostRule> {
        self.allow_hosts.iter().find(|h| {
            let (HostPattern::Exact { port, .. } | HostPattern::Subdomains { port, .. }) = &h.host;
            h.host.matches(host, port.unwrap_or(443))
        })
    }
}

/// Keeps each path in `list` once, with the sources of its repeats joined
/// to the first (`default: …; policy.cedar: …`).
pub(crate) fn join_repeats(list: &mut Vec<PathRule>) {
    let mut out: Vec<PathRule> = Vec::with_capacity(list.len());
    for r in list.drain(..) {
        match out.iter_mut().find(|o| o.path == r.path) {
            Some(o) => {
                for s in r.source.split("; ") {
                    if !o.source.split("; ").any(|have| have == s) {
                        o.source.push_str("; ");
                        o.source.push_str(s);
                    }
                }
            }
            None => out.push(r),
        }
    }
    *list = out;
}

/// What git reads for a repository holding `dir` and could run code from
/// later, outside the sandbox: its hooks and config. In a linked worktree
/// or a submodule `.git` is a file naming the real git directory; that
/// file is kept too (pointed elsewhere, it would make git read hooks the
/// sandbox wrote), and the hooks and config are those of the repository's
/// common directory, with the worktree's own `config.worktree`.
fn git_paths(dir: &Path) -> Vec<PathRule> {
    let hooks = "default: a repository's hooks";
    let config = "default: a repository's config";
    let Some(top) = dir.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()) else { return Vec::new() };
    let dot_git = top.join(".git");
    if dot_git.is_dir() {
        return vec![PathRule::new(dot_git.join("hooks"), hooks), PathRule::new(dot_git.join("config"), config)];
    }
    let mut out = vec![PathRule::new(dot_git.clone(), "default: a worktree's link to its repository")];
    let Some(git_dir) = std::fs::read_to_string(&dot_git)
        .ok()
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("gitdir:")).map(|d| top.join(d.trim())))
    else {
        return out;
    };
    let common =
        std::fs::read_to_string(git_dir.join("commondir")).map_or_else(|_| git_dir.clone(), |c| git_dir.join(c.trim()));
    out.push(PathRule::new(common.join("hooks"), hooks));
    out.push(PathRule::new(common.join("config"), config));
    if common != git_dir {
        out.push(PathRule::new(git_dir.join("config.worktree"), config));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(s: &str) -> HostPattern {
        HostPattern::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn exact_names_match_exactly_on_any_port_unless_one_is_given() {
        let h = host("API.example.com.");
        assert!(h.matches("api.example.com", 443) && h.matches("Api.Example.Com.", 80));
        assert!(!h.matches("x.api.example.com", 443) && !h.matches("example.com", 443));
        let h = host("api.example.com:8443");
        assert!(h.matches("api.example.com", 8443) && !h.matches("api.example.com", 443));
    }

    #[test]
    fn wildcards_match_subdomains_only() {
        let h = host("*.example.com");
        assert!(h.matches("a.example.com", 443) && h.matches("a.b.example.com", 1));
        assert!(!h.matches("example.com", 443) && !h.matches("badexample.com", 443) && !h.matches("com", 443));
        assert!(!host("*.example.com:443").matches("a.example.com", 80));
    }

    #[test]
    fn addresses_are_written_plainly_or_in_brackets() {
        assert!(host("127.0.0.1").matches("127.0.0.1", 80));
        assert!(host("[::1]:8080").matches("[::1]", 8080) && host("[::1]").matches("::1", 1));
        for bad in ["", "*", "*.", "a.*.com", "::1", "[::1", "host:port", "host:70000", "http://x"] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(host("*.Example.com:443").to_string(), "*.example.com:443");
    }

    #[test]
    fn what_is_refused_follows_how_the_launcher_enforces_it() {
        let mut r = Rules::default();
        r.read_deny.push(PathRule::new("/h/secret", "t"));
        r.write_roots.push(PathRule::new("/h/proj", "t"));
        r.write_protect.push(PathRule::new("/h/proj/.git/hooks", "t"));
        r.write_protect.push(PathRule::new("/h", "t"));
        assert!(r.hides(Path::new("/h/secret/key")) && !r.hides(Path::new("/h/secrets")));
        assert!(r.refuses_writes(Path::new("/h/secret")), "hidden");
        assert!(r.refuses_writes(Path::new("/etc")), "outside every root");
        assert!(r.refuses_writes(Path::new("/h/proj/.git/hooks/x")), "protected inside a root");
        assert!(!r.refuses_writes(Path::new("/h/proj/src")), "inside a root");
        assert!(!r.refuses_writes(Path::new("/h")), "a root lies below: protecting /h does not reach it");
        r.allow_hosts.push(HostRule { host: host("*.corp:8443"), source: "t".into() });
        assert_eq!(r.admits("a.corp").map(|h| h.host.to_string()), Some("*.corp:8443".into()));
        assert!(r.admits("corp").is_none() && r.admits("a.org").is_none());
    }

    #[test]
    fn defaults_cover_secrets_startup_files_and_the_repository() {
        let dir = std::env::temp_dir().join(format!("ua-sandbox-rules-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
        std::fs::create_dir_all(dir.join("repo/src")).unwrap();
        let p = Places {
            home: dir.clone(),
            cwd: dir.join("repo/src"),
            temp: vec!["/tmp".into()],
            config_dir: dir.join(".config/unixagent"),
            data_dir: dir.join(".local/share/unixagent"),
            journal: None,
        };
        let r = Rules::defaults(&p);
        let has = |list: &[PathRule], path: PathBuf| list.iter().any(|r| r.path == path);
        assert!(has(&r.read_deny, dir.join(".ssh")) && has(&r.read_deny, p.data_dir.clone()));
        assert!(has(&r.write_roots, p.cwd.clone()) && has(&r.write_roots, "/tmp".into()));
        assert!(has(&r.write_protect, dir.join(".bashrc")) && has(&r.write_protect, dir.join("repo/.git/hooks")));
        assert!(has(&r.write_protect, dir.join("repo/.git/config")) && has(&r.write_protect, p.config_dir.clone()));
        assert!(!r.network());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_linked_worktree_keeps_its_git_file_and_the_repositorys_hooks_and_config() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("main/.git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(d.join("wt/src")).unwrap();
        std::fs::write(d.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        let gitdir = d.join("main/.git/worktrees/wt");
        std::fs::write(d.join("wt/.git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        let got: Vec<PathBuf> = git_paths(&d.join("wt/src")).into_iter().map(|r| r.path).collect();
        assert_eq!(
            got,
            vec![
                d.join("wt/.git"),
                gitdir.join("../..").join("hooks"),
                gitdir.join("../..").join("config"),
                gitdir.join("config.worktree"),
            ]
        );
        // A submodule: its git directory holds its own hooks.
        std::fs::create_dir_all(d.join("main/.git/modules/sub")).unwrap();
        std::fs::create_dir_all(d.join("main/sub")).unwrap();
        std::fs::write(d.join("main/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let got: Vec<PathBuf> = git_paths(&d.join("main/sub")).into_iter().map(|r| r.path).collect();
        let sub = d.join("main/sub/../.git/modules/sub");
        assert_eq!(got, vec![d.join("main/sub/.git"), sub.join("hooks"), sub.join("config")]);
    }

    #[test]
    fn the_session_board_is_open_inside_the_hidden_data_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let data = dir.join(".local/share/unixagent");
        std::fs::create_dir_all(data.join("sessions/s-1/board/todo")).unwrap();
        std::fs::create_dir_all(dir.join("elsewhere/board")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), data.join("sessions/s-2")).unwrap();
        let r = Rules::defaults(&Places {
            home: dir.clone(),
            cwd: dir.join("proj"),
            temp: vec![],
            config_dir: dir.join(".config/unixagent"),
            data_dir: data.clone(),
            journal: None,
        });
        let board = data.join("sessions/s-1/board");
        assert!(r.hides(&data.join("audit.jsonl")) && r.hides(&data.join("sessions/s-1/journal.jsonl")));
        assert!(!r.hides(&board.join("todo/1-x.md")) && !r.refuses_writes(&board.join("todo")));
        assert!(r.refuses_writes(&data.join("sessions/s-1/meta.json")) && r.refuses_writes(&data));
        assert!(r.hides(&data.join("sessions/s-1/boards")), "only a directory named board");
        assert_eq!(r.board_to_open(&board), Some(board.clone()));
        // Not a board: elsewhere, the wrong shape, missing, or through a link.
        for not in [
            dir.join("elsewhere/board"),
            data.join("sessions/s-1"),
            data.join("sessions/s-1/board/todo"),
            data.join("sessions/s-9/board"),
            data.join("sessions/s-2/board"),
            data.join("sessions/s-1/../s-1/board"),
        ] {
            assert_eq!(r.board_to_open(&not), None, "{}", not.display());
        }
    }
}
