//! A repository's own configuration, read for the git commands the
//! classifier rates below Write.
//!
//! The classifier is a pure function of the command text, and `git status`
//! or `git diff` read as read-only. What git runs while reading is also set
//! by the repository: its `.git/config` can name an external diff, a
//! textconv or clean filter, an fsmonitor hook, a pager, a gpg program, or
//! include another file, and a `post-index-change` hook runs whenever
//! `status` or `diff` refreshes the index. A repository that came from a
//! tarball, a shared folder or a fixture inside a clone is not the user's:
//! its configuration is input, not trust. So the gate looks: for each git
//! part it finds the repositories git would use ([`discover`]), reads their
//! configuration ([`config`]), and reports the first key that makes that
//! subcommand run a program ([`keys`]), including in the submodules `git
//! status` and `git diff` look into ([`index`]). The gate then rates the
//! part Write, with the finding as its reason, so it asks.
//!
//! What it does not read: the user's global and system configuration (the
//! user's own, trusted), the environment of the user's shell (`GIT_DIR`,
//! `GIT_CONFIG_*`, `CDPATH`: not visible to unixagent), and files the
//! repository includes (an include is itself a reason to ask). Files are
//! read again only when their size, times or inode change.
//!
//! ```
//! use ua_policy::classify::analyze;
//! use ua_policy::gitrepo::Inspector;
//!
//! let dir = std::env::temp_dir().join(format!("ua-gitrepo-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join(".git/objects")).unwrap();
//! std::fs::create_dir_all(dir.join(".git/refs")).unwrap();
//! std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
//! std::fs::write(dir.join(".git/config"), "[diff]\n\texternal = ./x.sh\n").unwrap();
//! let repos = Inspector::default();
//! let cwd = dir.to_string_lossy();
//! let found = repos.inspect(&analyze("git --no-pager diff"), &cwd, "/home/me");
//! assert_eq!(found[0].0, 0);
//! assert!(found[0].1.contains("sets diff.external, which git runs for `git diff`"));
//! assert!(repos.inspect(&analyze("git status"), &cwd, "/home/me").is_empty());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod config;
pub mod discover;
pub mod index;
pub mod keys;

use crate::classify::Analysis;
use crate::classify::args::Args;
use crate::parse::{Arg, Part, PartKind};
use crate::paths::{absolute, system_program};
use crate::risk::Risk;
use config::Config;
use discover::Repo;
use keys::{Matter, Uses};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How deep submodules inside submodules are followed.
const MAX_SUBMODULE_DEPTH: usize = 3;
/// How many submodule repositories one command may make us read.
const MAX_SUBMODULES: usize = 64;
/// How many directories a command's `cd`s may make candidates.
const MAX_DIRS: usize = 16;
/// Largest index file read, for its gitlinks.
const MAX_INDEX_LEN: u64 = 64 << 20;
/// Cached files before the cache starts over.
const MAX_CACHED: usize = 512;

/// Reads repositories for the gate, caching what it parsed by file.
#[derive(Debug, Default)]
pub struct Inspector {
    cache: Mutex<Cache>,
}

#[derive(Debug, Default)]
struct Cache {
    configs: HashMap<PathBuf, (Stamp, Arc<Result<Config, String>>)>,
    indexes: HashMap<PathBuf, (Stamp, Arc<Result<index::Gitlinks, String>>)>,
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// Whose configuration a finding is about.
#[derive(Debug, Clone, Copy)]
enum Whose<'a> {
    This,
    Submodule(&'a str),
}

/// One git invocation's global options and subcommand.
struct Call<'a> {
    chdir: Vec<&'a Arg>,
    git_dir: Option<Arg>,
    work_tree: Option<Arg>,
    no_pager: bool,
    sub: &'a str,
    rest: &'a [Arg],
}

impl<'a> Call<'a> {
    fn of(part: &'a Part) -> Option<Call<'a>> {
        let args = part.args();
        let mut call = Call { chdir: Vec::new(), git_dir: None, work_tree: None, no_pager: false, sub: "", rest: &[] };
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            let value = |name: &str| t.strip_prefix(name).and_then(|v| v.strip_prefix('='));
            match t {
                "-C" => call.chdir.push(args.get(i + 1)?),
                "--git-dir" => call.git_dir = args.get(i + 1).cloned(),
                "--work-tree" => call.work_tree = args.get(i + 1).cloned(),
                "--bare" => call.git_dir = Some(Arg::literal(".")),
                "-c" | "--namespace" | "--config-env" | "--exec-path" | "--super-prefix" => {}
                "--no-pager" | "-P" => call.no_pager = true,
                _ if value("--git-dir").is_some() => {
                    call.git_dir = value("--git-dir").map(|v| Arg { text: v.into(), ..a.clone() })
                }
                _ if value("--work-tree").is_some() => {
                    call.work_tree = value("--work-tree").map(|v| Arg { text: v.into(), ..a.clone() })
                }
                _ if t.starts_with('-') => {}
                _ => {
                    call.sub = t;
                    call.rest = &args[i + 1..];
                    return Some(call);
                }
            }
            i += if matches!(t, "-C" | "--git-dir" | "--work-tree" | "-c" | "--namespace") { 2 } else { 1 };
        }
        None
    }
}

/// The directories each part may run in: the request's, and those of every
/// `cd` or `pushd` before it in the command line (all of them, since a
/// subshell or a failed `cd` may leave any of them current). `None` when a
/// `cd` goes somewhere only known at run time.
fn directories(parts: &[Part], cwd: &str, home: &str) -> Vec<Option<Vec<PathBuf>>> {
    let mut set: Vec<PathBuf> = vec![PathBuf::from(cwd)];
    let mut known = true;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        out.push(known.then(|| set.clone()));
        if !known || p.kind != PartKind::Exec || !matches!(system_program(p.program()), Some("cd" | "pushd")) {
            continue;
        }
        let target = Args(p.args()).operands().first().map(|a| (a.text.clone(), a.dynamic));
        let target = match target {
            None => Some(home.to_string()),
            Some((t, dynamic)) => {
                (!dynamic && t != "-" && (!t.starts_with('~') || t == "~" || t.starts_with("~/"))).then_some(t)
            }
        };
        let Some(t) = target else {
            known = false;
            continue;
        };
        let next: Vec<PathBuf> = set.iter().map(|d| PathBuf::from(absolute(&t, &d.to_string_lossy(), home))).collect();
        for d in next {
            if !set.contains(&d) {
                set.push(d);
            }
        }
        known = set.len() <= MAX_DIRS;
    }
    out
}

/// One part's walk over its repositories: what it runs, where it runs
/// (for showing paths), and how many submodules it may still read.
struct Visit<'a> {
    sub: &'a str,
    /// The command's directory, physical, for showing paths relative to it.
    cwd: String,
    home: &'a str,
    budget: usize,
}

impl Visit<'_> {
    /// A path as people read it: relative to the command's directory when
    /// inside it, else absolute.
    fn show(&self, p: &Path) -> String {
        let p = crate::paths::normalize(&p.to_string_lossy());
        match p.strip_prefix(&format!("{}/", self.cwd.trim_end_matches('/'))) {
            Some(rel) => rel.to_string(),
            None => p,
        }
    }

    fn whose(&self, whose: Whose<'_>, f: &Path) -> String {
        match whose {
            Whose::This => format!("this repository's {}", self.show(f)),
            Whose::Submodule(p) => format!("the submodule {p}'s {}", self.show(f)),
        }
    }
}

impl Inspector {
    /// For each git part of `analysis` rated below Write, the first reason
    /// its repository makes it run a program, by part index. `cwd` is where
    /// the command runs, `home` the user's home (for `~`).
    pub fn inspect(&self, analysis: &Analysis, cwd: &str, home: &str) -> Vec<(usize, String)> {
        let parts = &analysis.parsed.parts;
        let is_git = |i: usize, p: &Part| {
            p.kind == PartKind::Exec
                && system_program(p.program()) == Some("git")
                && analysis.parts.get(i).is_some_and(|r| r.risk < Risk::Write)
        };
        if !parts.iter().enumerate().any(|(i, p)| is_git(i, p)) {
            return Vec::new();
        }
        let dirs = directories(parts, cwd, home);
        let physical = std::fs::canonicalize(cwd).map_or_else(|_| cwd.to_string(), |c| c.to_string_lossy().into());
        let mut out = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            if !is_git(i, p) {
                continue;
            }
            let Some(call) = Call::of(p) else { continue };
            let mut v = Visit { sub: call.sub, cwd: physical.clone(), home, budget: MAX_SUBMODULES };
            if let Some(why) = self.part(&mut v, p, &call, dirs[i].as_deref()) {
                out.push((i, why));
            }
        }
        out
    }

    fn part(&self, v: &mut Visit<'_>, part: &Part, call: &Call<'_>, dirs: Option<&[PathBuf]>) -> Option<String> {
        let sub = call.sub;
        let unknown = || {
            format!(
                "`git {sub}` runs in a directory only known when it runs, so its repository's configuration cannot be checked"
            )
        };
        let Some(dirs) = dirs else { return Some(unknown()) };
        let mut starts = dirs.to_vec();
        for c in &call.chdir {
            if c.dynamic {
                return Some(unknown());
            }
            // git ignores `-C ''`.
            if !c.text.is_empty() {
                starts = starts.iter().map(|d| absolute(&c.text, &d.to_string_lossy(), v.home).into()).collect();
            }
        }
        let pages = !call.no_pager
            && !part.stdout_redirected
            && !crate::classify::pager_disabled(part, &["GIT_PAGER", "PAGER"]);
        let uses = keys::uses(sub, Args(call.rest), pages);
        for start in &starts {
            let at = |a: &Arg| PathBuf::from(absolute(&a.text, &start.to_string_lossy(), v.home));
            let repos = match &call.git_dir {
                Some(gd) if gd.dynamic || call.work_tree.as_ref().is_some_and(|w| w.dynamic) => {
                    return Some(unknown());
                }
                Some(gd) => {
                    let wt = call.work_tree.as_ref().map_or_else(|| start.clone(), at);
                    discover::explicit(&at(gd), Some(wt)).map(|r| vec![r])
                }
                None => discover::discover(start),
            };
            let repos = match repos {
                Ok(r) => r,
                Err(why) => return Some(format!("{why}, so what `git {sub}` runs there cannot be checked")),
            };
            for repo in &repos {
                if let Some(why) = self.repo(v, repo, uses, Whose::This, 0) {
                    return Some(why);
                }
            }
        }
        None
    }

    fn repo(&self, v: &mut Visit<'_>, repo: &Repo, uses: Uses, whose: Whose<'_>, depth: usize) -> Option<String> {
        let sub = v.sub;
        let files = [repo.common_dir.join("config"), repo.git_dir.join("config.worktree")];
        let mut hooks_path: Option<String> = None;
        let mut hash_len = 20;
        for f in &files {
            let Some(loaded) = self.config(f) else { continue };
            let cfg = match &*loaded {
                Ok(c) => c,
                Err(e) => {
                    return Some(format!(
                        "{} cannot be read ({e}), so what `git {sub}` runs there is unknown",
                        v.whose(whose, f)
                    ));
                }
            };
            for e in &cfg.entries {
                match keys::matters(e, uses, sub) {
                    Some(Matter::Runs) => {
                        let inside = if matches!(whose, Whose::Submodule(_)) { " in it" } else { "" };
                        return Some(format!(
                            "{} sets {}, which git runs{inside} for `git {sub}`",
                            v.whose(whose, f),
                            e.name
                        ));
                    }
                    Some(Matter::Includes) => {
                        return Some(format!(
                            "{} includes another file ({}), which may set programs git runs for `git {sub}`",
                            v.whose(whose, f),
                            e.name
                        ));
                    }
                    None => {}
                }
                match (e.section(), e.subsection(), e.key()) {
                    ("core", None, "hookspath") => hooks_path = e.value.clone(),
                    ("extensions", None, "objectformat") => {
                        let sha256 = e.value.as_deref().is_some_and(|x| x.eq_ignore_ascii_case("sha256"));
                        hash_len = if sha256 { 32 } else { 20 };
                    }
                    _ => {}
                }
            }
            if let Some(line) = cfg.error_line {
                return Some(format!(
                    "{} has a line git cannot read (line {line}), so what `git {sub}` runs there is unknown",
                    v.whose(whose, f)
                ));
            }
        }
        if uses.has(Uses::INDEX_HOOK) {
            let dir = match hooks_path.as_deref().filter(|p| !p.is_empty()) {
                // Relative hook paths are taken from where hooks run: the
                // top of the work tree, or the git directory when bare.
                Some(p) => {
                    let base = repo.work_tree.as_deref().unwrap_or(&repo.git_dir);
                    PathBuf::from(absolute(p, &base.to_string_lossy(), v.home))
                }
                None => repo.common_dir.join("hooks"),
            };
            let hook = dir.join("post-index-change");
            if std::fs::metadata(&hook).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0) {
                return Some(format!("{} is a hook that `git {sub}` runs when it refreshes the index", v.show(&hook)));
            }
        }
        match &repo.work_tree {
            Some(wt) if uses.has(Uses::SUBMODULES) => self.submodules(v, repo, wt, hash_len, depth),
            _ => None,
        }
    }

    /// The checked-out submodules of `repo`, each checked as the `git
    /// status` that git runs inside it.
    fn submodules(&self, v: &mut Visit<'_>, repo: &Repo, wt: &Path, hash_len: usize, depth: usize) -> Option<String> {
        let sub = v.sub;
        let index_path = repo.git_dir.join("index");
        let unreadable = |v: &Visit<'_>, p: &Path, e: &str| {
            format!("{} cannot be read ({e}), so the submodules `git {sub}` looks into cannot be checked", v.show(p))
        };
        let links = self.index(&index_path, hash_len)?;
        let (mut paths, shared) = match &*links {
            Ok(l) => (l.paths.clone(), l.shared.clone()),
            Err(e) => return Some(unreadable(v, &index_path, e)),
        };
        if let Some(hex) = shared {
            let shared = repo.git_dir.join(format!("sharedindex.{hex}"));
            match self.index(&shared, hash_len).as_deref() {
                Some(Ok(l)) => paths.extend(l.paths.iter().cloned()),
                Some(Err(e)) => return Some(unreadable(v, &shared, e)),
                None => {}
            }
        }
        let inner = keys::uses("status", Args(&[]), false);
        for p in &paths {
            let dir = wt.join(p);
            // Not checked out: git does not look inside.
            if std::fs::symlink_metadata(dir.join(".git")).is_err() {
                continue;
            }
            if depth >= MAX_SUBMODULE_DEPTH || v.budget == 0 {
                return Some(format!(
                    "this repository has more submodules than unixagent checks, so what `git {sub}` runs in them is unknown"
                ));
            }
            v.budget -= 1;
            let found = match discover::at(&dir) {
                Ok(r) => r,
                Err(why) => return Some(format!("{why}, so what `git {sub}` runs there cannot be checked")),
            };
            for r in &found {
                if let Some(why) = self.repo(v, r, inner, Whose::Submodule(p), depth + 1) {
                    return Some(why);
                }
            }
        }
        None
    }

    /// A configuration file, parsed; `None` when it does not exist.
    fn config(&self, path: &Path) -> Option<Arc<Result<Config, String>>> {
        self.cached(
            path,
            |c| &mut c.configs,
            |m| {
                if m.len() > config::MAX_LEN as u64 {
                    return Err(format!("it is larger than {} KiB", config::MAX_LEN >> 10));
                }
                std::fs::read(path).map(|b| config::parse(&b)).map_err(|e| e.to_string())
            },
        )
    }

    /// An index's gitlinks; `None` when there is no index.
    fn index(&self, path: &Path, hash_len: usize) -> Option<Arc<Result<index::Gitlinks, String>>> {
        self.cached(
            path,
            |c| &mut c.indexes,
            |m| {
                if m.len() > MAX_INDEX_LEN {
                    return Err(format!("it is larger than {} MiB", MAX_INDEX_LEN >> 20));
                }
                std::fs::read(path).map_err(|e| e.to_string()).and_then(|b| index::gitlinks(&b, hash_len))
            },
        )
    }

    fn cached<T>(
        &self,
        path: &Path,
        map: impl Fn(&mut Cache) -> &mut HashMap<PathBuf, (Stamp, Arc<Result<T, String>>)>,
        load: impl FnOnce(&std::fs::Metadata) -> Result<T, String>,
    ) -> Option<Arc<Result<T, String>>> {
        let meta = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m,
            Ok(_) => return Some(Arc::new(Err("it is not a file".into()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => return Some(Arc::new(Err(e.to_string()))),
        };
        let stamp = Stamp::of(&meta);
        {
            let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((s, v)) = map(&mut cache).get(path)
                && *s == stamp
            {
                return Some(v.clone());
            }
        }
        let value = Arc::new(load(&meta));
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let m = map(&mut cache);
        if m.len() >= MAX_CACHED {
            m.clear();
        }
        m.insert(path.to_path_buf(), (stamp, value.clone()));
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn paths(v: &[&str]) -> Option<Vec<PathBuf>> {
        Some(v.iter().map(PathBuf::from).collect())
    }

    #[test]
    fn directories_gather_every_cd_and_stop_at_one_known_only_at_run_time() {
        let parts = parse("cd a && git log; cd /x; git diff; cd ~; git status; cd \"$D\"; cd b; git show").parts;
        let names: Vec<&str> = parts.iter().map(Part::program).collect();
        // `cd "$D"` is also read with D empty (`cd ""`), a part of its own.
        assert_eq!(names, ["cd", "git", "cd", "git", "cd", "git", "cd", "cd", "cd", "git"]);
        let d = directories(&parts, "/w", "/h");
        assert_eq!(d[1], paths(&["/w", "/w/a"]));
        assert_eq!(d[3], paths(&["/w", "/w/a", "/x"]));
        assert_eq!(d[5], paths(&["/w", "/w/a", "/x", "/h"]));
        assert_eq!(d[9], None);
    }

    #[test]
    fn global_options_come_before_the_subcommand() {
        let parts = parse("git -C a -C b --git-dir=c.git --work-tree w -P log -p --stat").parts;
        let call = Call::of(&parts[0]).unwrap();
        let chdir: Vec<&str> = call.chdir.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(chdir, ["a", "b"]);
        assert_eq!(call.git_dir.map(|a| a.text).as_deref(), Some("c.git"));
        assert_eq!(call.work_tree.map(|a| a.text).as_deref(), Some("w"));
        assert!(call.no_pager);
        assert_eq!(call.sub, "log");
        assert_eq!(call.rest.len(), 2);
        assert!(Call::of(&parse("git --version").parts[0]).is_none());
    }
}
