//! The manual page: in sync with the command line it is made from (the
//! copy in docs/ too), rendered by the real `man` without a warning; and
//! `--version`, which names the commit.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn man_page() -> Vec<u8> {
    let out = Command::new(unixagent()).arg("__man").output().unwrap();
    ok(&out);
    out.stdout
}

#[test]
fn the_man_page_in_docs_is_the_one_the_command_line_makes() {
    let committed = std::fs::read(workspace().join("docs/unixagent.1")).unwrap_or_default();
    assert!(
        committed == man_page(),
        "docs/unixagent.1 is out of date with the command line: run `make man` and commit it"
    );
}

#[test]
fn man_renders_the_page_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("unixagent.1");
    std::fs::write(&page, man_page()).unwrap();
    let out = Command::new("man")
        .args(["--warnings", "-P", "cat", "-l"])
        .arg(&page)
        .env("MANWIDTH", "100")
        .env("LANG", "C.UTF-8")
        .output()
        .expect("man is installed (.ci/run installs man-db)");
    let text = ok(&out);
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "man warned:\n{warnings}");
    // Bold and underline come as overstrikes; read the letters.
    let plain = strip_overstrike(&text);
    for want in [
        "unixagent - An agent that lives in your terminal",
        "SYNOPSIS",
        "--shell-debug",
        "COMMANDS",
        "unixagent doctor [--json] [--offline]",
        "unixagent policy explain [--json] COMMAND",
        "unixagent sessions show ID",
        "INSTRUCTIONS",
        "FILES",
        "ENVIRONMENT",
        "UNIXAGENT_CONFIG",
        "EXIT STATUS",
        "125",
    ] {
        assert!(plain.contains(want), "{want:?} missing from the rendered page:\n{plain}");
    }
}

fn strip_overstrike(s: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    for c in s.chars() {
        if c == '\u{8}' {
            out.pop();
            continue;
        }
        out.push(c);
    }
    out.into_iter().collect()
}

/// Built from a git checkout (as CI builds it), the version names the
/// commit; git is asked the same question build.rs asked it. Built where
/// git cannot answer (a source tarball), it is the plain version.
#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = ok(&Command::new(unixagent()).arg("--version").output().unwrap());
    let git = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(workspace())
        .output()
        .expect("git is installed");
    let commit = String::from_utf8_lossy(&git.stdout).trim().to_string();
    let want = if git.status.success() && !commit.is_empty() {
        format!("unixagent {} (commit {commit})\n", env!("CARGO_PKG_VERSION"))
    } else {
        format!("unixagent {}\n", env!("CARGO_PKG_VERSION"))
    };
    assert_eq!(out, want);
}
