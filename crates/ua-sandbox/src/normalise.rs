//! The rules in the one shape the launcher applies.
//!
//! Rules come from places that know nothing of each other (the defaults,
//! policy.toml, the Cedar policies) and name paths as people write them,
//! while the launcher binds and Landlock grants whatever the kernel finds
//! at those paths. A working developer's home holds credential stores
//! inside one another (`~/.docker` and `~/.docker/config.json`), dotfiles
//! that are symbolic links into a repository, `~/.config` itself a link,
//! a `.git` that is a file (a linked worktree), a file where a directory
//! was expected. Applied as written, such rules bind one path onto another
//! already hidden, grant a whole directory through a link, or ask a
//! missing directory to hold something, and set-up fails or protects less
//! than it says.
//!
//! [`normalise`] reads what is there (through a [`Lookup`]: the real
//! filesystem, or a table in tests) and returns rules in which:
//!
//! - every path is where the kernel lands: symbolic links followed, `.`
//!   and `..` taken as the kernel takes them, a missing tail kept as
//!   written below its deepest existing directory;
//! - each path appears once, its sources joined;
//! - nothing lies inside what already covers it: a hidden path inside a
//!   hidden one, a protected path inside a hidden one or inside a
//!   protected one with no write root between; a write root inside a
//!   hidden path is dropped (hidden wins);
//! - a path that cannot exist while something else is there is answered
//!   by that thing: a protected path below a file protects the file (the
//!   file would have to be replaced first), a path below a directory this
//!   user cannot enter hides or protects that directory (nobody here reads
//!   it, but its owner could open it up); a hidden path below a file is
//!   dropped, since nothing can be read there;
//! - the directories inside write roots in which nothing new may be made
//!   are listed (up to the innermost root holding them): those a missing
//!   protected path would be made in, and
//!   those holding a symbolic link on the way to a hidden or protected
//!   path, so that the link cannot be replaced by one pointing elsewhere;
//!   in the latter nothing may be removed either, so that the link stays
//!   (a protected file is kept in place by its bind; a link cannot be
//!   bound, since a bind follows it).
//!
//! Normalising is idempotent: normalised rules normalise to themselves.
//! The links followed are not in them, though, so the launcher is given
//! the rules as compiled and normalises them itself, just before it acts.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crate::rules::{PathRule, Rules, join_repeats};

/// What is at a path itself (a final symbolic link not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    Dir,
    /// Anything else that is not a link: a file, socket, FIFO or device.
    File,
    /// A symbolic link, and what it says.
    Link(PathBuf),
    /// The directory holding it cannot be searched with these rights.
    Unreachable,
}

/// Where [`normalise`] learns what is on disk.
pub trait Lookup {
    /// What is at `path`, an absolute path whose parent is a directory.
    fn entry(&self, path: &Path) -> Entry;
}

/// The real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

impl Lookup for Host {
    fn entry(&self, path: &Path) -> Entry {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::read_link(path).map_or(Entry::Unreachable, Entry::Link),
            Ok(m) if m.is_dir() => Entry::Dir,
            Ok(_) => Entry::File,
            // Only a directory that cannot be searched keeps what is below
            // it from this user; a name too long, say, is simply not there.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Entry::Unreachable,
            Err(_) => Entry::Missing,
        }
    }
}

/// How a path ends once followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Dir,
    File,
    /// Not there; `anchor` is its deepest existing directory.
    Missing {
        anchor: PathBuf,
    },
    /// This ancestor is not a directory, so nothing is below it.
    UnderFile(PathBuf),
    /// This directory on the way cannot be searched with these rights.
    Unreachable(PathBuf),
    /// Symbolic links on the way lead round in a circle (or too far).
    Loop,
}

/// A path followed through the filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Where it leads (for `UnderFile`, `Unreachable` and `Loop`, how far
    /// it got).
    pub path: PathBuf,
    pub end: End,
    /// The symbolic links followed on the way, each at its real place.
    pub links: Vec<PathBuf>,
}

/// As the kernel's limit on links followed in one lookup.
const MAX_LINKS: usize = 40;

/// Follows the absolute path `path` as the kernel would.
pub fn resolve(path: &Path, fs: &impl Lookup) -> Resolved {
    let mut todo: Vec<PathBuf> = Vec::new();
    push_components(&mut todo, path);
    let mut cur = PathBuf::from("/");
    let mut links = Vec::new();
    // Names below `cur` that do not exist (yet): taken as written, and
    // `..` undoes them before it climbs above `cur` again.
    let mut missing: Vec<PathBuf> = Vec::new();
    while let Some(name) = todo.pop() {
        if name.as_os_str() == ".." {
            if missing.pop().is_none() {
                cur.pop();
            }
            continue;
        }
        if !missing.is_empty() {
            missing.push(name);
            continue;
        }
        let next = cur.join(&name);
        match fs.entry(&next) {
            Entry::Dir => cur = next,
            Entry::File if todo.is_empty() => return Resolved { path: next, end: End::File, links },
            Entry::File => return Resolved { path: next.clone(), end: End::UnderFile(next), links },
            Entry::Unreachable => return Resolved { path: next, end: End::Unreachable(cur), links },
            Entry::Missing => missing.push(name),
            Entry::Link(target) => {
                links.push(next.clone());
                if links.len() > MAX_LINKS {
                    return Resolved { path: next, end: End::Loop, links };
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                push_components(&mut todo, &target);
            }
        }
    }
    if missing.is_empty() {
        return Resolved { path: cur, end: End::Dir, links };
    }
    let path = missing.iter().fold(cur.clone(), |p, n| p.join(n));
    Resolved { path, end: End::Missing { anchor: cur }, links }
}

/// Pushes `path`'s names onto `todo` so that the first is popped first.
fn push_components(todo: &mut Vec<PathBuf>, path: &Path) {
    let names: Vec<PathBuf> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            Component::ParentDir => Some(PathBuf::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    todo.extend(names.into_iter().rev());
}

/// Rules ready for the launcher, and what was changed to get there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalised {
    pub rules: Rules,
    /// Directories inside write roots where nothing new may be made
    /// (what is in them stays writable), sorted.
    pub no_create: Vec<PathBuf>,
    /// Of those, the ones where nothing may be removed or renamed away
    /// either: they hold a symbolic link that leads to a hidden or
    /// protected path. Sorted.
    pub no_remove: Vec<PathBuf>,
    /// One sentence for each rule moved, merged or dropped, for
    /// `unixagent sandbox status`.
    pub notes: Vec<String>,
}

/// Puts `rules` into the shape the launcher applies, reading `fs`; see the
/// module documentation for what that shape is.
pub fn normalise(rules: &Rules, fs: &impl Lookup) -> Normalised {
    let mut notes = Vec::new();
    let mut links: Vec<PathBuf> = Vec::new();

    let mut hidden: Vec<PathRule> = Vec::new();
    for r in &rules.read_deny {
        let Some(res) = follow(r, fs, &mut notes) else { continue };
        links.extend(res.links.iter().cloned());
        match res.end {
            End::Dir | End::File | End::Missing { .. } => hidden.push(PathRule::new(res.path, &r.source)),
            End::UnderFile(file) => notes.push(format!(
                "{} ({}): not hidden, as nothing can be there while {} is a file",
                r.path.display(),
                r.source,
                file.display()
            )),
            End::Unreachable(dir) => {
                notes.push(format!(
                    "{} ({}): {} cannot be searched by this user, so it is hidden whole",
                    r.path.display(),
                    r.source,
                    dir.display()
                ));
                hidden.push(PathRule::new(dir, &r.source));
            }
            End::Loop => notes.push(looping(r)),
        }
    }

    let mut protected: Vec<PathRule> = Vec::new();
    // Missing protected paths and their deepest existing directories.
    let mut anchors: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for r in &rules.write_protect {
        let Some(res) = follow(r, fs, &mut notes) else { continue };
        links.extend(res.links.iter().cloned());
        match res.end {
            End::Dir | End::File => protected.push(PathRule::new(res.path, &r.source)),
            End::Missing { anchor } => {
                anchors.insert(res.path.clone(), anchor);
                protected.push(PathRule::new(res.path, &r.source));
            }
            End::UnderFile(blocker) | End::Unreachable(blocker) => {
                notes.push(format!(
                    "{} ({}): {} stands in its way, so that is never written instead",
                    r.path.display(),
                    r.source,
                    blocker.display()
                ));
                protected.push(PathRule::new(blocker, &r.source));
            }
            End::Loop => notes.push(looping(r)),
        }
    }

    let mut roots: Vec<PathRule> = Vec::new();
    let mut root_links: Vec<PathBuf> = Vec::new();
    for r in &rules.write_roots {
        let Some(res) = follow(r, fs, &mut notes) else { continue };
        root_links.extend(res.links.iter().cloned());
        match res.end {
            End::Dir | End::File | End::Missing { .. } => roots.push(PathRule::new(res.path, &r.source)),
            End::UnderFile(_) | End::Unreachable(_) | End::Loop => {
                notes.push(format!("{} ({}): not writable, as it cannot be reached", r.path.display(), r.source))
            }
        }
    }

    for list in [&mut hidden, &mut protected, &mut roots] {
        join_repeats(list);
    }
    // Each link once, rather than each rule through it.
    let mut followed: Vec<&PathBuf> = links.iter().chain(&root_links).collect();
    followed.sort();
    followed.dedup();
    for link in followed {
        let to = resolve(link, fs);
        if !matches!(to.end, End::Loop) {
            notes.push(format!(
                "{} is a symbolic link: what the rules name through it applies at {}",
                link.display(),
                to.path.display()
            ));
        }
    }

    // What covers what.
    drop_covered(&mut hidden, &mut notes, |p, list| covering(list, p).map(|h| (h, "hidden already")));
    // A root inside another stays: it bounds what a missing protected
    // path closes (the working directory in /tmp must not close /tmp).
    drop_covered(&mut roots, &mut notes, |p, _| covering_or_equal(&hidden, p).map(|h| (h, "hidden, so not writable")));
    let root_paths: Vec<PathBuf> = roots.iter().map(|r| r.path.clone()).collect();
    // A path both hidden and protected is simply hidden: that says both.
    protected.retain(|p| !hidden.iter().any(|h| h.path == p.path));
    drop_covered(&mut protected, &mut notes, |p, list| {
        covering(&hidden, p).map(|h| (h, "hidden, so never written already")).or_else(|| {
            // A write root between a protected path and the one above it
            // is granted whole: there the inner rule is the one that holds.
            covering(list, p)
                .filter(|q| !root_paths.iter().any(|w| w != q && w.starts_with(q) && p.starts_with(w)))
                .map(|q| (q, "never written already"))
        })
    });

    let mut no_create: Vec<PathBuf> = Vec::new();
    let mut keep_closed = |from: &Path| {
        // The innermost root holding it: what is outside that stays open.
        let holding = root_paths.iter().filter(|w| from.starts_with(w));
        let Some(root) = holding.max_by_key(|w| w.components().count()) else { return false };
        if hidden.iter().any(|h| from.starts_with(&h.path)) || in_git_dir(from) {
            return false;
        }
        for dir in from.ancestors().take_while(|d| d.starts_with(root)) {
            if !no_create.iter().any(|n| n == dir) {
                no_create.push(dir.to_path_buf());
            }
        }
        true
    };
    // A protected path that does not exist yet has nothing to bind: the
    // directories it would be made in take nothing new. Hidden ones are
    // left out (a made-up credential file or history runs nothing), and so
    // are paths inside `.git`, where git makes lock files all the time.
    for p in &protected {
        if let Some(anchor) = anchors.get(&p.path) {
            keep_closed(anchor);
        }
    }
    // A link on the way to a hidden or protected path could be replaced by
    // one pointing elsewhere: nothing new in the directory holding it.
    links.sort();
    links.dedup();
    let mut no_remove: Vec<PathBuf> = Vec::new();
    for link in &links {
        if let Some(dir) = link.parent()
            && keep_closed(dir)
            && !no_remove.iter().any(|d| d == dir)
        {
            no_remove.push(dir.to_path_buf());
        }
    }
    no_create.sort();
    no_remove.sort();

    let out = Rules {
        read_deny: hidden,
        write_roots: roots,
        write_protect: protected,
        allow_hosts: rules.allow_hosts.clone(),
        mode: rules.mode,
        // Where boards live, as the kernel finds it: the launcher compares
        // the board it opens with the hidden paths above it.
        boards: rules.boards.as_ref().map(|b| PathRule::new(resolve(&b.path, fs).path, &b.source)),
    };
    let mut out = Normalised { rules: out, no_create, no_remove, notes };
    out.rules.dedup();
    out
}

/// Follows a rule's path, or notes why it cannot be.
fn follow(r: &PathRule, fs: &impl Lookup, notes: &mut Vec<String>) -> Option<Resolved> {
    if !r.path.is_absolute() {
        notes.push(format!("{} ({}): left out, as it is not an absolute path", r.path.display(), r.source));
        return None;
    }
    Some(resolve(&r.path, fs))
}

fn looping(r: &PathRule) -> String {
    format!(
        "{} ({}): left out, as its symbolic links lead round in a circle (nothing can be read or written through them)",
        r.path.display(),
        r.source
    )
}

/// The path strictly above `path` in `list`, if any.
///
/// The innermost one, so that what is decided from it (a write root in
/// between, say) does not depend on the order of the list: the rules
/// normalised again must come out the same.
fn covering(list: &[PathRule], path: &Path) -> Option<PathBuf> {
    list.iter()
        .filter(|r| r.path != path && path.starts_with(&r.path))
        .max_by_key(|r| r.path.components().count())
        .map(|r| r.path.clone())
}

/// The path at or above `path` in `list`, if any.
fn covering_or_equal(list: &[PathRule], path: &Path) -> Option<PathBuf> {
    list.iter().find(|r| path.starts_with(&r.path)).map(|r| r.path.clone())
}

/// Drops from `list` each rule `by` says is covered (by which path, and
/// how), with a note.
fn drop_covered(
    list: &mut Vec<PathRule>,
    notes: &mut Vec<String>,
    by: impl Fn(&Path, &[PathRule]) -> Option<(PathBuf, &'static str)>,
) {
    let all = list.clone();
    list.retain(|r| match by(&r.path, &all) {
        Some((c, how)) => {
            notes.push(format!("{} ({}): inside {}, {how}", r.path.display(), r.source, c.display()));
            false
        }
        None => true,
    });
}

/// Whether `path` lies inside a `.git` directory.
fn in_git_dir(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == ".git")
}

#[cfg(test)]
#[path = "normalise_tests.rs"]
mod tests;
