//! Which repository git would use from a directory, found the way git's
//! `setup_git_directory_gently_1` finds it (git 2.39 `setup.c`): from the
//! directory up to `/`, at each level first `.git` (a directory, or a file
//! `gitdir: PATH` as linked worktrees and submodules have), then the
//! directory itself as a bare repository.
//!
//! What git reads from its environment (`GIT_DIR`, `GIT_CEILING_DIRECTORIES`,
//! `GIT_DISCOVERY_ACROSS_FILESYSTEM`) and from the user's global
//! `safe.bareRepository` is not visible here, so the walk assumes the
//! defaults that make git look furthest: it crosses filesystems and finds
//! embedded bare repositories. A directory that only half looks like a
//! repository (a `HEAD` git would reject, no `objects/`) is kept as well and
//! the walk goes on, since git would skip it and use one further up: every
//! repository git might pick gets checked.

use std::io::Read;
use std::path::{Path, PathBuf};

/// A repository and where its files are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Repo {
    /// `GIT_DIR`: `.git`, `.git/worktrees/NAME`, `.git/modules/NAME`, or a
    /// bare repository. Holds `index` and `config.worktree`.
    pub git_dir: PathBuf,
    /// Where `config` and `hooks/` are: the `commondir` of a linked
    /// worktree, else [`Repo::git_dir`].
    pub common_dir: PathBuf,
    /// The top of the working tree; `None` for a bare repository.
    pub work_tree: Option<PathBuf>,
}

/// How much a directory looks like a git directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Looks {
    /// git's `is_git_directory` accepts it.
    Repo,
    /// It has a `HEAD` but git would not take it.
    Half,
    No,
}

/// The repositories git may use when run in `start`, the one it would
/// pick last. Empty when there is none (or `start` does not exist: a
/// command cannot run git there). `Err` says why it cannot be told.
pub fn discover(start: &Path) -> Result<Vec<Repo>, String> {
    // git walks the physical path (getcwd); a logical one may have other
    // parents.
    let start = match std::fs::canonicalize(start) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{} cannot be read ({e})", start.display())),
    };
    let mut out = Vec::new();
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        let dotgit = d.join(".git");
        match std::fs::metadata(&dotgit) {
            Ok(m) if m.is_file() => {
                // A `.git` file that does not point at a repository makes
                // git stop with "invalid gitfile format".
                let target = read_gitfile(&dotgit)?;
                let looks = looks(&target);
                if looks != Looks::No {
                    out.push(repo(target, Some(d.to_path_buf())));
                }
                if looks != Looks::Half {
                    return Ok(out);
                }
            }
            Ok(m) if m.is_dir() => match looks(&dotgit) {
                Looks::Repo => {
                    out.push(repo(dotgit, Some(d.to_path_buf())));
                    return Ok(out);
                }
                Looks::Half => out.push(repo(dotgit, Some(d.to_path_buf()))),
                Looks::No => {}
            },
            _ => {}
        }
        match looks(d) {
            Looks::Repo => {
                out.push(repo(d.to_path_buf(), None));
                return Ok(out);
            }
            Looks::Half => out.push(repo(d.to_path_buf(), None)),
            Looks::No => {}
        }
        dir = d.parent();
    }
    Ok(out)
}

/// The repository whose `.git` is directly in `dir` (a submodule's), without
/// walking up: empty when `dir/.git` is not a repository.
pub fn at(dir: &Path) -> Result<Vec<Repo>, String> {
    let dotgit = dir.join(".git");
    let target = match std::fs::metadata(&dotgit) {
        Ok(m) if m.is_file() => read_gitfile(&dotgit)?,
        Ok(m) if m.is_dir() => dotgit,
        _ => return Ok(Vec::new()),
    };
    Ok(match looks(&target) {
        Looks::No => Vec::new(),
        Looks::Repo | Looks::Half => vec![repo(target, Some(dir.to_path_buf()))],
    })
}

/// The repository `--git-dir=PATH` names (a directory or a `gitdir:` file),
/// with the work tree `--work-tree` (or the directory git runs in) gives.
pub fn explicit(git_dir: &Path, work_tree: Option<PathBuf>) -> Result<Repo, String> {
    let dir = if git_dir.is_file() { read_gitfile(git_dir)? } else { git_dir.to_path_buf() };
    Ok(repo(dir, work_tree))
}

fn repo(git_dir: PathBuf, work_tree: Option<PathBuf>) -> Repo {
    let common_dir = common_dir(&git_dir);
    Repo { git_dir, common_dir, work_tree }
}

/// `GIT_DIR/commondir` names the shared repository of a linked worktree.
fn common_dir(git_dir: &Path) -> PathBuf {
    match read_small(&git_dir.join("commondir")) {
        Some(text) => {
            let rel = String::from_utf8_lossy(&text).trim_end().to_string();
            if rel.is_empty() { git_dir.to_path_buf() } else { git_dir.join(rel) }
        }
        None => git_dir.to_path_buf(),
    }
}

/// git's `is_git_directory`: a valid `HEAD`, and `objects/` and `refs/` in
/// the common directory.
fn looks(dir: &Path) -> Looks {
    let head = dir.join("HEAD");
    let Ok(meta) = std::fs::symlink_metadata(&head) else { return Looks::No };
    let valid_head = if meta.file_type().is_symlink() {
        std::fs::read_link(&head).is_ok_and(|t| t.starts_with("refs/"))
    } else {
        read_small(&head).is_some_and(|b| valid_headref(&b))
    };
    let common = common_dir(dir);
    if valid_head && common.join("objects").is_dir() && common.join("refs").is_dir() {
        Looks::Repo
    } else {
        Looks::Half
    }
}

/// git's `validate_headref` on the contents of a `HEAD` file.
fn valid_headref(b: &[u8]) -> bool {
    if let Some(rest) = b.strip_prefix(b"ref:") {
        let rest = rest.trim_ascii_start();
        return rest.starts_with(b"refs/");
    }
    b.len() >= 40 && b[..40].iter().all(u8::is_ascii_hexdigit)
}

/// The repository a `gitdir: PATH` file points at (relative to the file).
fn read_gitfile(path: &Path) -> Result<PathBuf, String> {
    let bad = || format!("{} is not a valid gitdir file", path.display());
    let text = read_small(path).ok_or_else(bad)?;
    let text = String::from_utf8(text).map_err(|_| bad())?;
    let target = text.strip_prefix("gitdir: ").ok_or_else(bad)?.trim_end();
    if target.is_empty() {
        return Err(bad());
    }
    let base = path.parent().unwrap_or(Path::new("/"));
    Ok(base.join(target))
}

/// A small file's bytes (HEAD, commondir, gitdir files), at most 64 KiB.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(64 * 1024).read_to_end(&mut buf).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A git directory's skeleton, as `git init` leaves it.
    fn gitdir(dir: &Path) {
        mk(dir, "HEAD", "ref: refs/heads/main\n");
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::create_dir_all(dir.join("refs")).unwrap();
    }

    fn canon(p: &Path) -> PathBuf {
        std::fs::canonicalize(p).unwrap()
    }

    #[test]
    fn a_dot_git_directory_above_is_found() {
        let t = tempfile::tempdir().unwrap();
        let root = canon(t.path());
        gitdir(&root.join(".git"));
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        let found = discover(&root.join("src/deep")).unwrap();
        assert_eq!(
            found,
            vec![Repo { git_dir: root.join(".git"), common_dir: root.join(".git"), work_tree: Some(root) }]
        );
    }

    #[test]
    fn an_embedded_bare_repository_is_found_before_the_outer_one() {
        let t = tempfile::tempdir().unwrap();
        let root = canon(t.path());
        gitdir(&root.join(".git"));
        gitdir(&root.join("fixtures/evil.git"));
        let found = discover(&root.join("fixtures/evil.git/objects")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].git_dir, root.join("fixtures/evil.git"));
        assert_eq!(found[0].work_tree, None);
    }

    #[test]
    fn gitdir_files_and_commondir_lead_to_the_shared_config() {
        let t = tempfile::tempdir().unwrap();
        let root = canon(t.path());
        gitdir(&root.join("main/.git"));
        mk(&root, "main/.git/worktrees/wt/HEAD", "0123456789012345678901234567890123456789\n");
        mk(&root, "main/.git/worktrees/wt/commondir", "../..\n");
        mk(&root, "wt/.git", &format!("gitdir: {}\n", root.join("main/.git/worktrees/wt").display()));
        let found = discover(&root.join("wt")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].git_dir, root.join("main/.git/worktrees/wt"));
        assert_eq!(found[0].common_dir, root.join("main/.git/worktrees/wt/../.."));
        assert_eq!(found[0].work_tree, Some(root.join("wt")));

        // A submodule's relative gitdir.
        gitdir(&root.join("main/.git/modules/lib"));
        mk(&root, "main/lib/.git", "gitdir: ../.git/modules/lib\n");
        let found = discover(&root.join("main/lib")).unwrap();
        assert_eq!(found[0].git_dir, root.join("main/lib/../.git/modules/lib"));
    }

    #[test]
    fn a_half_repository_is_kept_and_the_walk_goes_on() {
        let t = tempfile::tempdir().unwrap();
        let root = canon(t.path());
        gitdir(&root.join(".git"));
        // HEAD but no objects/: git skips it and uses the repository above.
        mk(&root, "sub/HEAD", "ref: refs/heads/main\n");
        let found = discover(&root.join("sub")).unwrap();
        let dirs: Vec<_> = found.iter().map(|r| r.git_dir.clone()).collect();
        assert_eq!(dirs, vec![root.join("sub"), root.join(".git")]);
    }

    #[test]
    fn a_broken_gitdir_file_cannot_be_told_and_no_repository_is_none() {
        let t = tempfile::tempdir().unwrap();
        let root = canon(t.path());
        mk(&root, "x/.git", "not a gitdir line\n");
        assert!(discover(&root.join("x")).is_err());
        std::fs::create_dir_all(root.join("plain")).unwrap();
        assert!(discover(&root.join("plain")).unwrap().iter().all(|r| !r.git_dir.starts_with(&root)));
        assert_eq!(discover(&root.join("does-not-exist")).unwrap(), vec![]);
    }

    #[test]
    fn head_must_be_a_symbolic_ref_or_an_object_id() {
        assert!(valid_headref(b"ref: refs/heads/main\n"));
        assert!(valid_headref(b"ref:\trefs/heads/x"));
        assert!(valid_headref(b"0123456789abcdef0123456789abcdef01234567\n"));
        assert!(!valid_headref(b"ref: heads/main"));
        assert!(!valid_headref(b"hello"));
    }
}
