//! Puts the git commit unixagent is built from into its version
//! (`unixagent --version` prints `unixagent 0.1.0 (commit 1a2b3c4d5e6f)`),
//! so a bug report says exactly which code ran.
//!
//! `UA_GIT_COMMIT` in the environment wins, for builds from a source
//! tarball that has no `.git`. Without either, the version is the plain
//! crate version. The build script reruns when HEAD or the branch it
//! points to moves, not on every source change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=UA_GIT_COMMIT");
    let version = env!("CARGO_PKG_VERSION");
    let commit = std::env::var("UA_GIT_COMMIT").ok().filter(|c| !c.trim().is_empty()).or_else(|| {
        for path in watched() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        git(&["rev-parse", "--short=12", "HEAD"])
    });
    match commit {
        Some(c) => println!("cargo:rustc-env=UA_VERSION={version} (commit {})", c.trim()),
        None => println!("cargo:rustc-env=UA_VERSION={version}"),
    }
}

/// Runs git in the package directory; its trimmed stdout on success.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git").args(args).current_dir(dir).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The files whose change means another commit: HEAD (per worktree), the
/// branch it names, and packed-refs (where a branch may live instead).
/// Only existing files, since cargo reruns a script every time for a
/// watched file that is missing.
fn watched() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut add = |rel: &str| {
        if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", rel]) {
            paths.push(PathBuf::from(p));
        }
    };
    add("HEAD");
    add("packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        add(&branch);
    }
    paths.retain(|p| Path::new(p).exists());
    paths
}
