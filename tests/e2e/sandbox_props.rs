//! Random homes against the real kernel and the real launcher: trees of
//! directories, files and symbolic links (relative and absolute, some
//! leading nowhere or round in a circle), with hidden and protected paths
//! written as `policy.cedar` forbids that repeat, nest, run through links,
//! climb with `..` and name files where directories are and the other way
//! round. Whatever the combination, `unixagent sandbox -- …` must start,
//! every file a rule hides must be unreadable by every name that reaches
//! it, every file a rule hides or protects must be unwritable, everything
//! else must stay readable and writable, and `sandbox status` must list
//! each path once. The one refusal allowed is a rule that hides the
//! working directory itself, and it must say so.
//!
//! What each rule covers is worked out here from `std::fs::canonicalize`,
//! not from unixagent's own resolution. The homes live in /var/tmp (/tmp
//! is a write root); the working directory is the home, so every path is
//! inside a write root and only the mounts protect it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proptest::prelude::*;

use crate::sandbox::output;
use crate::support::*;

const NAMES: &[&str] = &["a", "b", ".c", "d"];

#[derive(Debug, Clone)]
enum Node {
    Dir,
    File,
    /// A link to another path in the home, relative or absolute.
    Link {
        target: String,
        absolute: bool,
    },
}

fn names(max: usize) -> impl Strategy<Value = Vec<&'static str>> {
    proptest::collection::vec(proptest::sample::select(NAMES), 1..=max)
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        3 => Just(Node::Dir),
        3 => Just(Node::File),
        2 => (names(3), any::<bool>()).prop_map(|(t, absolute)| Node::Link { target: t.join("/"), absolute }),
        1 => names(2).prop_map(|t| Node::Link { target: format!("../{}", t.join("/")), absolute: false }),
    ]
}

/// A rule's path below the home: names, sometimes with `..` or `.`.
fn rule_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof![6 => proptest::sample::select(NAMES), 1 => Just(".."), 1 => Just(".")], 1..=3)
        .prop_map(|v| v.join("/"))
}

#[derive(Debug, Clone)]
struct Case {
    tree: Vec<(Vec<&'static str>, Node)>,
    hidden: Vec<String>,
    protected: Vec<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec((names(3), node()), 1..14),
        proptest::collection::vec(rule_path(), 0..5),
        proptest::collection::vec(rule_path(), 0..5),
    )
        .prop_map(|(tree, hidden, protected)| Case { tree, hidden, protected })
}

/// Builds the tree in `home`; entries that cannot be made (a parent is a
/// file or a link, or the path is taken) are skipped. Files hold a text
/// of their own.
fn build(home: &Path, c: &Case) {
    for (i, (names, node)) in c.tree.iter().enumerate() {
        let path = home.join(names.join("/"));
        let parents_ok = path
            .ancestors()
            .skip(1)
            .take_while(|a| *a != home)
            .all(|a| a.symlink_metadata().map(|m| m.is_dir()).unwrap_or(true));
        if !parents_ok || path.symlink_metadata().is_ok() {
            continue;
        }
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        match node {
            Node::Dir => std::fs::create_dir(&path).expect("mkdir"),
            Node::File => std::fs::write(&path, format!("TEXT-{i}\n")).expect("write"),
            Node::Link { target, absolute } => {
                let target = if *absolute { home.join(target) } else { PathBuf::from(target) };
                std::os::unix::fs::symlink(target, &path).expect("symlink");
            }
        }
    }
}

/// Every path in the home (links not followed), the home itself first.
fn entries(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![home.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let p = out[i].clone();
        i += 1;
        if p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            let mut below: Vec<PathBuf> =
                std::fs::read_dir(&p).expect("read_dir").flatten().map(|e| e.path()).collect();
            below.sort();
            out.extend(below);
        }
    }
    out
}

/// What a protected rule keeps: where it leads; or, when it cannot exist
/// because a file stands where a directory of its path would be (links
/// followed on the way), that file.
fn protected_place(path: &Path, depth: usize) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    if depth > 40 {
        return None;
    }
    let names: Vec<std::path::Component> = path.components().collect();
    for i in (1..=names.len()).rev() {
        let prefix: PathBuf = names[..i].iter().collect();
        let Ok(meta) = prefix.symlink_metadata() else { continue };
        let rest: PathBuf = names[i..].iter().collect();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&prefix).ok()?;
            let parent = prefix.parent()?;
            return protected_place(&parent.join(target).join(rest), depth + 1);
        }
        let real = std::fs::canonicalize(&prefix).ok()?;
        return real.is_file().then_some(real);
    }
    None
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

fn sandbox(home: &Path) -> Command {
    let mut c = Command::new(unixagent());
    c.arg("sandbox")
        .current_dir(home)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("UNIXAGENT_CONFIG")
        .env_remove("TMPDIR")
        .stdin(Stdio::null());
    c
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir in /var/tmp");
    let home = dir.path();
    build(home, c);
    let mut policy = String::new();
    for (i, p) in c.hidden.iter().enumerate() {
        policy.push_str(&format!(
            "@id(\"hide-{i}\")\nforbid (principal, action == Action::\"read\", resource in Directory::\"${{HOME}}/{p}\");\n"
        ));
    }
    for (i, p) in c.protected.iter().enumerate() {
        policy.push_str(&format!(
            "@id(\"keep-{i}\")\nforbid (principal, action == Action::\"write\", resource in Directory::\"${{HOME}}/{p}\");\n"
        ));
    }
    std::fs::create_dir_all(home.join(".config/unixagent")).expect("config dir");
    std::fs::write(home.join(".config/unixagent/policy.cedar"), &policy).expect("policy");

    // What must hold, from the filesystem's own answers. The gate reads a
    // Cedar path by name (`d/..` is the home, whatever `d` is), and so
    // does the sandbox; links are the filesystem's.
    let named = |p: &String| {
        let mut out = home.to_path_buf();
        for c in Path::new(p).components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    };
    // (Hiding `/` is never compiled: nothing could run.)
    let hidden: Vec<PathBuf> = c
        .hidden
        .iter()
        .map(named)
        .filter(|p| p != Path::new("/"))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    // A forbidden read is a forbidden write as well.
    let kept: Vec<PathBuf> =
        c.protected.iter().chain(&c.hidden).filter_map(|p| protected_place(&named(p), 0)).collect();
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for e in entries(home) {
        if e.starts_with(home.join(".config/unixagent")) {
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(&e)
            && real.is_file()
        {
            files.push((e, real));
        }
    }
    let is_hidden = |real: &Path| hidden.iter().any(|h| real.starts_with(h));
    // A protected path above the write root (the home) protects nothing
    // in it: the root is granted whole.
    let is_kept = |real: &Path| kept.iter().any(|k| k.starts_with(home) && real.starts_with(k));
    let before: Vec<String> = files.iter().map(|(_, r)| std::fs::read_to_string(r).unwrap_or_default()).collect();

    let mut script = String::new();
    for (e, _) in &files {
        let q = quote(e);
        script.push_str(&format!(
            "if cat {q} >/dev/null 2>&1; then echo \"R {e}\"; fi; if (: >> {q}) 2>/dev/null; then echo \"W {e}\"; fi\n",
            e = e.display()
        ));
    }
    script.push_str("true\n");
    let mut cmd = sandbox(home);
    cmd.args(["--", "bash", "-c", &script]);
    let o = output(cmd);
    // The one refusal: a rule that hides the working directory itself.
    if hidden.iter().any(|h| home.starts_with(h)) {
        prop_assert_eq!(o.code, Some(125), "ran in a hidden directory: {}", o.stderr);
        prop_assert!(o.stderr.contains("start in another directory"), "{}", o.stderr);
        return Ok(());
    }
    prop_assert_eq!(o.code, Some(0), "set-up failed for\n{}\nstderr: {}", policy, o.stderr);
    let said: BTreeSet<&str> = o.stdout.lines().collect();
    for (e, real) in &files {
        let readable = said.contains(format!("R {}", e.display()).as_str());
        let writable = said.contains(format!("W {}", e.display()).as_str());
        // Never read what a rule hides, nor write what one hides or keeps,
        // by any name.
        prop_assert!(!(readable && is_hidden(real)), "read {} ({})\n{}", e.display(), real.display(), policy);
        prop_assert!(
            !(writable && (is_hidden(real) || is_kept(real))),
            "wrote {} ({})\n{}",
            e.display(),
            real.display(),
            policy
        );
        // And a file reached by its own name, through no hidden directory,
        // that no rule covers, is read and written as outside the sandbox.
        // (A name through a link may pass a hidden directory on its way.)
        if e == real && !is_hidden(real) {
            prop_assert!(readable, "could not read {}\n{}", e.display(), policy);
            prop_assert_eq!(writable, !is_kept(real), "write {}\n{}", e.display(), policy);
        }
    }
    let after: Vec<String> = files.iter().map(|(_, r)| std::fs::read_to_string(r).unwrap_or_default()).collect();
    prop_assert_eq!(before, after);

    // Each path once in the status.
    let mut st = sandbox(home);
    st.args(["status", "--json"]);
    let o = output(st);
    prop_assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("status JSON");
    prop_assert_eq!(&v["applies"], true, "{}", v);
    let mut paths: Vec<String> = ["read_deny", "write_protect"]
        .iter()
        .flat_map(|k| v["rules"][k].as_array().cloned().unwrap_or_default())
        .filter_map(|r| r["path"].as_str().map(str::to_string))
        .collect();
    let n = paths.len();
    paths.sort();
    paths.dedup();
    prop_assert_eq!(paths.len(), n, "a path listed twice: {}", v["rules"]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_homes_never_fail_set_up_nor_leak_what_a_rule_keeps(c in case()) {
        check(&c)?;
    }
}
