//! Normalising as a table: a filesystem written out by hand, the rules in,
//! the rules out; then properties over random filesystems and rules.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::rules::{PathRule, Rules};

/// A filesystem as a table; every ancestor of a listed path is a
/// directory unless listed otherwise, anything else is missing. A path
/// listed as `Unreachable` is a directory this user cannot search.
#[derive(Debug, Clone, Default)]
struct Table(BTreeMap<PathBuf, Entry>);

impl Lookup for Table {
    fn entry(&self, path: &Path) -> Entry {
        // Below a directory that cannot be searched, nothing can be seen.
        if path.ancestors().skip(1).any(|a| self.0.get(a) == Some(&Entry::Unreachable)) {
            return Entry::Unreachable;
        }
        if let Some(e) = self.0.get(path) {
            return if *e == Entry::Unreachable { Entry::Dir } else { e.clone() };
        }
        if self.0.keys().any(|k| k.starts_with(path)) { Entry::Dir } else { Entry::Missing }
    }
}

fn fs(rows: &[(&str, Entry)]) -> Table {
    Table(rows.iter().map(|(p, e)| (PathBuf::from(p), e.clone())).collect())
}

fn file() -> Entry {
    Entry::File
}

fn dir() -> Entry {
    Entry::Dir
}

fn link(to: &str) -> Entry {
    Entry::Link(to.into())
}

fn rules(hidden: &[&str], protected: &[&str], roots: &[&str]) -> Rules {
    let list = |ps: &[&str], src: &str| ps.iter().map(|p| PathRule::new(p, src)).collect();
    Rules {
        read_deny: list(hidden, "h"),
        write_protect: list(protected, "p"),
        write_roots: list(roots, "w"),
        ..Rules::default()
    }
}

fn paths(list: &[PathRule]) -> Vec<&str> {
    list.iter().map(|r| r.path.to_str().unwrap_or("?")).collect()
}

/// One row: what normalising gives, as (hidden, protected, roots,
/// no_create).
fn row(t: &Table, r: &Rules) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    let n = normalise(r, t);
    let s = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
    (
        s(paths(&n.rules.read_deny)),
        s(paths(&n.rules.write_protect)),
        s(paths(&n.rules.write_roots)),
        n.no_create.iter().map(|p| p.display().to_string()).collect(),
    )
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_credential_file_inside_a_hidden_credential_store_is_hidden_once() {
    // The `docker login` home: the defaults name the file, the built-in
    // Cedar policy the directory (to read and to write).
    let t = fs(&[("/h/.docker/config.json", file()), ("/h/proj", dir())]);
    let r = rules(&["/h/.docker/config.json", "/h/.docker"], &["/h/.docker"], &["/h/proj"]);
    assert_eq!(row(&t, &r), (v(&["/h/.docker"]), v(&[]), v(&["/h/proj"]), v(&[])));
    // Hidden and protected at once is simply hidden, and says nothing.
    assert_eq!(normalise(&r, &t).notes, ["/h/.docker/config.json (h): inside /h/.docker, hidden already"]);
}

#[test]
fn the_same_path_from_two_sources_is_one_rule_with_both() {
    let t = fs(&[("/h/.ssh", dir())]);
    let mut r = rules(&["/h/.ssh"], &[], &[]);
    r.read_deny.push(PathRule::new("/h/./.ssh/", "cedar"));
    r.read_deny.push(PathRule::new("/h/x/../.ssh", "h"));
    let n = normalise(&r, &t);
    assert_eq!(n.rules.read_deny, vec![PathRule::new("/h/.ssh", "h; cedar")]);
}

#[test]
fn a_symlinked_dotfile_is_protected_where_it_leads_and_its_link_cannot_be_replaced() {
    // stow: ~/.bashrc -> dotfiles/bash/.bashrc, relative.
    let t = fs(&[("/h/.bashrc", link("dotfiles/bash/.bashrc")), ("/h/dotfiles/bash/.bashrc", file())]);
    // The home as working directory: the target is bound read-only, and
    // nothing new is made in the home (so no other ~/.bashrc).
    let r = rules(&[], &["/h/.bashrc"], &["/h"]);
    assert_eq!(row(&t, &r), (v(&[]), v(&["/h/dotfiles/bash/.bashrc"]), v(&["/h"]), v(&["/h"])));
    // Nor is anything removed there: the link stays.
    assert_eq!(normalise(&r, &t).no_remove, vec![PathBuf::from("/h")]);
    // The dotfiles repository as working directory: the target is inside
    // it; the link is outside every root, so Landlock keeps it.
    let r = rules(&[], &["/h/.bashrc"], &["/h/dotfiles"]);
    assert_eq!(row(&t, &r), (v(&[]), v(&["/h/dotfiles/bash/.bashrc"]), v(&["/h/dotfiles"]), v(&[])));
    // A link whose target is missing: the target cannot be made either.
    let t = fs(&[("/h/.zshrc", link("/h/dotfiles/zsh/.zshrc")), ("/h/dotfiles/zsh", dir())]);
    let r = rules(&[], &["/h/.zshrc"], &["/h"]);
    assert_eq!(
        row(&t, &r),
        (v(&[]), v(&["/h/dotfiles/zsh/.zshrc"]), v(&["/h"]), v(&["/h", "/h/dotfiles", "/h/dotfiles/zsh"]))
    );
}

#[test]
fn a_symlinked_config_directory_carries_every_rule_below_it() {
    let t = fs(&[
        ("/h/.config", link("dotfiles/config")),
        ("/h/dotfiles/config/gcloud/credentials.db", file()),
        ("/h/dotfiles/config/fish/config.fish", file()),
        ("/h/dotfiles/config/unixagent", dir()),
    ]);
    let r = rules(
        &["/h/.config/gcloud"],
        &["/h/.config/fish/config.fish", "/h/.config/git", "/h/.config/unixagent", "/h/.config/gcloud"],
        &["/h"],
    );
    assert_eq!(
        row(&t, &r),
        (
            v(&["/h/dotfiles/config/gcloud"]),
            v(&["/h/dotfiles/config/fish/config.fish", "/h/dotfiles/config/git", "/h/dotfiles/config/unixagent"]),
            v(&["/h"]),
            // The link's directory, and where the missing git config would go.
            v(&["/h", "/h/dotfiles", "/h/dotfiles/config"]),
        )
    );
    // One note for the link, not one for each rule through it.
    let notes = normalise(&r, &t).notes;
    assert_eq!(notes, ["/h/.config is a symbolic link: what the rules name through it applies at /h/dotfiles/config"]);
}

#[test]
fn a_file_where_a_directory_was_expected_stands_in_for_what_would_be_below_it() {
    let t = fs(&[("/h/.docker", file()), ("/h/.config/fish", file()), ("/w/.git", file()), ("/w/src", dir())]);
    let r = rules(
        &["/h/.docker/config.json"],
        &["/h/.config/fish/config.fish", "/w/.git/hooks", "/w/.git/config"],
        &["/h", "/w"],
    );
    // Nothing can be read below a file; to make a protected path there the
    // file must go first, so it is kept instead (a worktree's `.git`).
    assert_eq!(row(&t, &r), (v(&[]), v(&["/h/.config/fish", "/w/.git"]), v(&["/h", "/w"]), v(&[])));
}

#[test]
fn a_directory_where_a_file_was_expected_is_hidden_or_protected_as_it_is() {
    let t = fs(&[("/h/.netrc/inner", file()), ("/h/.gitconfig/x", file()), ("/h/.ssh", file())]);
    let r = rules(&["/h/.netrc", "/h/.ssh"], &["/h/.gitconfig"], &["/h"]);
    assert_eq!(row(&t, &r), (v(&["/h/.netrc", "/h/.ssh"]), v(&["/h/.gitconfig"]), v(&["/h"]), v(&[])));
}

#[test]
fn links_that_go_round_in_a_circle_are_left_out_but_kept_in_place() {
    let t = fs(&[("/h/.zshrc", link(".zshrc2")), ("/h/.zshrc2", link("/h/.zshrc"))]);
    let r = rules(&[], &["/h/.zshrc"], &["/h"]);
    assert_eq!(row(&t, &r), (v(&[]), v(&[]), v(&["/h"]), v(&["/h"])));
    assert!(normalise(&r, &t).notes.iter().any(|n| n.contains("round in a circle")));
}

#[test]
fn a_directory_that_cannot_be_searched_is_hidden_or_protected_whole() {
    let t = fs(&[("/h/locked", Entry::Unreachable), ("/h/open", dir())]);
    let r = rules(&["/h/locked/key"], &["/h/locked/rc"], &["/h"]);
    assert_eq!(row(&t, &r), (v(&["/h/locked"]), v(&[]), v(&["/h"]), v(&[])));
    let r = rules(&[], &["/h/locked/rc"], &["/h"]);
    assert_eq!(row(&t, &r), (v(&[]), v(&["/h/locked"]), v(&["/h"]), v(&[])));
}

#[test]
fn write_roots_are_never_inside_a_hidden_path_and_close_only_up_to_the_innermost() {
    let t = fs(&[("/tmp/x", dir()), ("/h/.ssh/work", dir()), ("/h/tmp", link("/tmp"))]);
    let r = rules(&["/h/.ssh"], &[], &["/tmp", "/tmp/x", "/h/.ssh/work", "/h/tmp"]);
    assert_eq!(row(&t, &r), (v(&["/h/.ssh"]), v(&[]), v(&["/tmp", "/tmp/x"]), v(&[])));
    // A working directory inside /tmp with a start-up file missing closes
    // itself, not /tmp.
    let r = rules(&[], &["/tmp/x/.zshrc"], &["/tmp", "/tmp/x"]);
    assert_eq!(row(&t, &r).3, v(&["/tmp/x"]));
}

#[test]
fn a_protected_path_inside_another_is_kept_only_where_a_write_root_lies_between() {
    let t = fs(&[("/h/proj/.git/hooks", dir()), ("/h/.config/unixagent/hooks", dir())]);
    let r =
        rules(&[], &["/h", "/h/proj/.git/hooks", "/h/.config/unixagent", "/h/.config/unixagent/hooks"], &["/h/proj"]);
    // `/h` holds the root, so it protects nothing below the root; the
    // hooks inside the root are bound read-only. unixagent's config lies
    // outside the root, where Landlock refuses writes anyway.
    assert_eq!(row(&t, &r), (v(&[]), v(&["/h", "/h/proj/.git/hooks"]), v(&["/h/proj"]), v(&[])));
}

#[test]
fn missing_protected_paths_close_the_directories_they_would_be_made_in() {
    let t = fs(&[("/h/.config/unixagent", dir()), ("/h/proj/.git", dir()), ("/h/work", dir()), ("/h/.bashrc", file())]);
    let r = |root: &str| Rules {
        write_protect: ["/h/.bashrc", "/h/.zshrc", "/h/.config/fish/config.fish", "/h/.config/unixagent"]
            .iter()
            .chain(&["/h/proj/.git/hooks", "/h/.local/share/unixagent"])
            .map(|p| PathRule::new(p, "p"))
            .collect(),
        read_deny: vec![PathRule::new("/h/.local/share/unixagent", "h")],
        write_roots: vec![PathRule::new(root, "w")],
        ..Rules::default()
    };
    // The home as working directory: `.zshrc` and `.config/fish/…` are
    // missing, so nothing new in the home or in `.config`; the missing
    // data directory is hidden and a missing hook directory is git's.
    assert_eq!(normalise(&r("/h"), &t).no_create, vec![PathBuf::from("/h"), "/h/.config".into()]);
    assert!(normalise(&r("/h/proj"), &t).no_create.is_empty());
    assert!(normalise(&r("/h/work"), &t).no_create.is_empty());
}

#[test]
fn relative_paths_are_left_out_with_a_note() {
    let n = normalise(&rules(&["notes"], &[], &[]), &Table::default());
    assert!(n.rules.read_deny.is_empty());
    assert_eq!(n.notes, vec!["notes (h): left out, as it is not an absolute path"]);
}

#[test]
fn resolving_follows_the_kernel() {
    let t =
        fs(&[("/h/a", link("b/../c")), ("/h/b", dir()), ("/h/c", link("/h/d")), ("/h/d/f", file()), ("/h/f", file())]);
    let r = resolve(Path::new("/h/a/f"), &t);
    assert_eq!((r.path, r.end, r.links), ("/h/d/f".into(), End::File, vec!["/h/a".into(), "/h/c".into()]));
    let r = resolve(Path::new("/h/a/missing/../x"), &t);
    assert_eq!((r.path, r.end), ("/h/d/x".into(), End::Missing { anchor: "/h/d".into() }));
    let r = resolve(Path::new("/h/f/x"), &t);
    assert_eq!(r.end, End::UnderFile("/h/f".into()));
    assert_eq!(resolve(Path::new("/"), &t).end, End::Dir);
}

#[test]
fn the_real_filesystem_is_read_the_same_way() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::create_dir_all(h.join("dotfiles/config/gcloud")).unwrap();
    std::os::unix::fs::symlink("dotfiles/config", h.join(".config")).unwrap();
    std::fs::create_dir_all(h.join("locked")).unwrap();
    let r = rules(&[h.join(".config/gcloud").to_str().unwrap()], &[], &[h.to_str().unwrap()]);
    let n = normalise(&r, &Host);
    assert_eq!(n.rules.read_deny[0].path, h.join("dotfiles/config/gcloud"));
    assert_eq!(n.no_create, vec![h.to_path_buf()]);
}

// ---- properties -------------------------------------------------------

/// Names a random home is made of, so paths collide often.
const NAMES: &[&str] = &["a", "b", ".c", "d"];

fn name() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(NAMES)
}

/// A path below /h of one to three names, sometimes with `..` or `.`.
fn rel_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof![4 => name(), 1 => Just(".."), 1 => Just(".")], 1..4).prop_map(|v| v.join("/"))
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        3 => Just(Entry::Dir),
        3 => Just(Entry::File),
        1 => Just(Entry::Unreachable),
        3 => rel_path().prop_map(|p| Entry::Link(p.into())),
        1 => rel_path().prop_map(|p| Entry::Link(format!("/h/{p}").into())),
    ]
}

fn table() -> impl Strategy<Value = Table> {
    proptest::collection::vec((proptest::collection::vec(name(), 1..4), entry()), 0..12).prop_map(|rows| {
        Table(rows.into_iter().map(|(names, e)| (PathBuf::from(format!("/h/{}", names.join("/"))), e)).collect())
    })
}

fn rule_paths() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(rel_path().prop_map(|p| format!("/h/{p}")), 0..5)
}

fn random_rules() -> impl Strategy<Value = Rules> {
    (
        rule_paths(),
        rule_paths(),
        proptest::collection::vec(
            prop_oneof![
                Just("/h".to_string()),
                rule_paths().prop_map(|p| p.first().cloned().unwrap_or_else(|| "/h".into()))
            ],
            0..3,
        ),
    )
        .prop_map(|(h, p, w)| {
            let h: Vec<&str> = h.iter().map(String::as_str).collect();
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            let w: Vec<&str> = w.iter().map(String::as_str).collect();
            rules(&h, &p, &w)
        })
}

fn under(path: &Path, list: &[PathRule]) -> bool {
    list.iter().any(|r| path.starts_with(&r.path))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn normalised_rules_are_real_single_covering_and_stable(t in table(), r in random_rules()) {
        let n = normalise(&r, &t);
        let out = &n.rules;
        // Every path is where the kernel lands, and the same again.
        for rule in out.read_deny.iter().chain(&out.write_protect).chain(&out.write_roots) {
            let res = resolve(&rule.path, &t);
            prop_assert!(res.links.is_empty(), "{} passes links {:?}", rule.path.display(), res.links);
            prop_assert_eq!(&res.path, &rule.path);
        }
        // Each path once; nothing inside what covers it.
        for (i, h) in out.read_deny.iter().enumerate() {
            prop_assert!(!out.read_deny.iter().enumerate().any(|(j, o)| i != j && h.path.starts_with(&o.path)));
        }
        for w in &out.write_roots {
            prop_assert!(!under(&w.path, &out.read_deny), "root {} is hidden", w.path.display());
            prop_assert_eq!(out.write_roots.iter().filter(|o| o.path == w.path).count(), 1);
        }
        for p in &out.write_protect {
            prop_assert!(!under(&p.path, &out.read_deny), "protected {} is hidden", p.path.display());
            prop_assert_eq!(out.write_protect.iter().filter(|o| o.path == p.path).count(), 1);
        }
        // Nothing hidden or protected is lost: wherever an input path leads
        // (or what stands in its way) is still hidden or protected.
        let covered = |p: &Path| under(p, &out.read_deny) || under(p, &out.write_protect);
        for h in &r.read_deny {
            let res = resolve(&h.path, &t);
            match &res.end {
                End::Dir | End::File | End::Missing { .. } => prop_assert!(under(&res.path, &out.read_deny), "{} lost", h.path.display()),
                End::Unreachable(d) => prop_assert!(under(d, &out.read_deny)),
                End::UnderFile(_) | End::Loop => {}
            }
        }
        for p in &r.write_protect {
            let res = resolve(&p.path, &t);
            match &res.end {
                End::Dir | End::File | End::Missing { .. } => prop_assert!(covered(&res.path), "{} lost", p.path.display()),
                End::UnderFile(b) | End::Unreachable(b) => prop_assert!(covered(b), "{} lost", b.display()),
                End::Loop => {}
            }
        }
        // A link on the way to any of them, inside a write root, cannot be
        // replaced: nothing new in its directory (`.git` and hidden
        // directories aside).
        for rule in r.read_deny.iter().chain(&r.write_protect) {
            for link in resolve(&rule.path, &t).links {
                let Some(dir) = link.parent() else { continue };
                let inside = out.write_roots.iter().any(|w| dir.starts_with(&w.path));
                if inside && !under(dir, &out.read_deny) && !dir.components().any(|c| c.as_os_str() == ".git") {
                    prop_assert!(n.no_create.iter().any(|d| d == dir), "{} stays open", dir.display());
                    prop_assert!(n.no_remove.iter().any(|d| d == dir), "{} keeps no link", dir.display());
                }
            }
        }
        // Normalising again changes nothing (the links followed are gone
        // then, so the directories they close are a subset).
        let again = normalise(out, &t);
        prop_assert_eq!(&again.rules, out);
        prop_assert!(again.no_create.iter().all(|d| n.no_create.contains(d)));
        prop_assert!(n.no_remove.iter().all(|d| n.no_create.contains(d)));
    }
}
