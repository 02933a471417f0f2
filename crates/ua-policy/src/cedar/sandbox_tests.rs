use super::*;
use crate::cedar::load::{self, Places};
use crate::policy_toml::{Mode, Modes};

fn places() -> Places {
    Places {
        home: "/home/u".into(),
        config_dir: "/home/u/.config/unixagent".into(),
        data_dir: "/home/u/.local/share/unixagent".into(),
    }
}

fn source(text: &str) -> Source {
    Source { path: "policy.cedar".into(), text: places().substitute(text), generated: false }
}

/// The terms as one line each, in a fixed order, so a whole table row is
/// one comparison.
fn lines(t: &SandboxTerms) -> Vec<String> {
    let target = |t: &Target| match t {
        Target::Path(p) => format!(" {}", p.display()),
        Target::Host(h) => format!(" host {h}"),
        Target::Unnamed => String::new(),
    };
    let mut out = Vec::new();
    out.extend(t.read_deny.iter().map(|p| format!("hide {} ({})", p.path.display(), p.source)));
    out.extend(t.write_protect.iter().map(|p| format!("protect {} ({})", p.path.display(), p.source)));
    out.extend(t.write_roots.iter().map(|p| format!("root {} ({})", p.path.display(), p.source)));
    out.extend(t.allow_hosts.iter().map(|h| format!("allow {} ({})", h.host, h.source)));
    out.extend(t.deny_hosts.iter().map(|h| format!("deny {} ({})", h.host, h.source)));
    out.extend(t.no_network.iter().map(|s| format!("no network ({s})")));
    out.extend(t.not_compiled.iter().map(|u| format!("gate only: {}{}: {}", u.action, target(&u.target), u.why)));
    out.extend(t.skipped.iter().map(|u| format!("skipped: {}{}: {}", u.action, target(&u.target), u.why)));
    out.extend(t.board_exempt.iter().map(|p| format!("boards exempt in {} ({})", p.path.display(), p.source)));
    out
}

fn terms(text: &str) -> Vec<String> {
    lines(&sandbox_terms(&source(text)).unwrap_or_else(|e| panic!("{e}")))
}

const SRC: &str = "policy.cedar: @id(\"p\")";

#[test]
fn policies_compile_to_the_terms_they_name_exactly() {
    let row = |s: &str| s.replace("SRC", SRC);
    let table: &[(&str, &str, &[&str])] = &[
        (
            "a read forbid on a directory hides it",
            r#"@id("p") forbid (principal, action == Action::"read", resource in Directory::"${HOME}/private");"#,
            &["hide /home/u/private (SRC)", "protect /home/u/private (SRC)"],
        ),
        (
            "a forbid on every action hides too",
            r#"@id("p") forbid (principal, action, resource == File::"/srv/key.pem");"#,
            &["hide /srv/key.pem (SRC)", "protect /srv/key.pem (SRC)"],
        ),
        (
            "the directory may be the one condition, or several joined by ||",
            r#"@id("p") forbid (principal, action in [Action::"read", Action::"exec"], resource)
               when { resource in Directory::"/a" || resource in [Directory::"/b", Directory::"/c/"] };"#,
            &[
                "hide /a (SRC)",
                "hide /b (SRC)",
                "hide /c (SRC)",
                "protect /a (SRC)",
                "protect /b (SRC)",
                "protect /c (SRC)",
            ],
        ),
        (
            "a write forbid protects",
            r#"@id("p") forbid (principal, action == Action::"write", resource in Directory::"/etc/app");"#,
            &["protect /etc/app (SRC)"],
        ),
        (
            "an unconditional write permit on a directory is a write root",
            r#"@id("p") permit (principal, action == Action::"write", resource in Directory::"/srv/out");"#,
            &["root /srv/out (SRC)"],
        ),
        (
            "and so is one whose only condition is the directory",
            r#"@id("p") permit (principal, action == Action::"write", resource) when { resource in Directory::"/srv/out" };"#,
            &["root /srv/out (SRC)"],
        ),
        (
            "hosts by entity, name or list are allowed",
            r#"@id("p") permit (principal, action == Action::"connect", resource == Host::"api.example.com");
               @id("p") permit (principal, action == Action::"connect", resource) when { resource.name == "a.org" };
               @id("p") permit (principal, action == Action::"connect", resource) when { ["b.org", "c.org"].contains(resource.name) };"#,
            &["allow api.example.com (SRC)", "allow a.org (SRC)", "allow b.org (SRC)", "allow c.org (SRC)"],
        ),
        (
            "a host forbid is a deny, and forbidding every connection leaves no network",
            r#"@id("p") forbid (principal, action == Action::"connect", resource) when { resource.name == "Evil.org." };
               @id("p") forbid (principal, action == Action::"connect", resource);"#,
            &["deny evil.org (SRC)", "no network (SRC)"],
        ),
        (
            "a policy without @id is named by its position",
            r#"permit (principal, action == Action::"exec", resource);
               forbid (principal, action == Action::"write", resource == File::"/etc/hosts");"#,
            &["protect /etc/hosts (policy.cedar: #2)"],
        ),
        (
            "exec, spawn_agent and read permits are none of the sandbox's business",
            r#"@id("p") forbid (principal, action == Action::"exec", resource) when { resource.name == "git" };
               @id("p") permit (principal, action == Action::"read", resource in Directory::"/srv");
               @id("p") forbid (principal, action == Action::"spawn_agent", resource);"#,
            &[],
        ),
        (
            "a directory forbid does not touch the network, nor a host forbid files",
            r#"@id("p") forbid (principal, action, resource in Directory::"/x");
               @id("p") forbid (principal, action, resource == Host::"h.org");"#,
            &["hide /x (SRC)", "protect /x (SRC)", "deny h.org (SRC)"],
        ),
    ];
    for (name, text, want) in table {
        let want: Vec<String> = want.iter().map(|s| row(s)).collect();
        assert_eq!(terms(text), want, "{name}");
    }
}

#[test]
fn permits_the_kernel_cannot_see_the_condition_of_are_skipped() {
    let table: &[(&str, &str, &[&str])] = &[
        (
            "a condition on the principal",
            r#"@id("p") permit (principal, action == Action::"write", resource in Directory::"/srv")
               when { principal.human_attached };"#,
            &["skipped: write /srv: its when clause uses principal.human_attached"],
        ),
        (
            "the working directory",
            r#"@id("p") permit (principal, action == Action::"write", resource) when { resource in context.cwd };"#,
            &["skipped: write: its condition uses context.cwd"],
        ),
        (
            "a like pattern",
            r#"@id("p") permit (principal, action == Action::"connect", resource) when { resource.name like "*.corp" };"#,
            &["skipped: connect: its condition uses a like pattern, resource.name"],
        ),
        (
            "a file, which may be a directory",
            r#"@id("p") permit (principal, action == Action::"write", resource == File::"/srv/x");"#,
            &["skipped: write /srv/x: it names a file, which may be a directory; only `resource in Directory` widens"],
        ),
        (
            "every resource",
            r#"@id("p") permit (principal, action, resource);"#,
            &[
                "skipped: write: it names no single directory or host",
                "skipped: connect: it names no single directory or host",
            ],
        ),
        (
            "names the gate never sees",
            r#"@id("p") permit (principal, action == Action::"connect", resource == Host::"*");
               @id("p") permit (principal, action == Action::"connect", resource) when { ["A.org", "a.org:443"].contains(resource.name) };"#,
            &[
                "skipped: connect host *: it is not a host name as the gate sees one",
                "skipped: connect host A.org: it is not a host name as the gate sees one",
                "skipped: connect host a.org:443: it is not a host name as the gate sees one",
            ],
        ),
        (
            "a path the gate never matches",
            r#"@id("p") permit (principal, action == Action::"write", resource in Directory::"/srv/../etc");"#,
            &["skipped: write /srv/../etc: it is not an absolute, normalised path, so the gate never matches it"],
        ),
    ];
    for (name, text, want) in table {
        assert_eq!(terms(text), *want, "{name}");
    }
}

#[test]
fn forbids_that_cannot_be_compiled_are_reported() {
    let table: &[(&str, &str, &[&str])] = &[
        (
            "a like pattern on the path",
            r#"@id("p") forbid (principal, action == Action::"read", resource) when { resource.path like "*/secrets/*" };"#,
            &["gate only: read: its condition uses a like pattern, resource.path"],
        ),
        (
            "an exception",
            r#"@id("p") forbid (principal, action in [Action::"read", Action::"write"], resource in Directory::"/k")
               unless { resource.name like "*.pub" };"#,
            &[
                "gate only: read /k: its unless clause uses a like pattern, resource.name",
                "gate only: write /k: its unless clause uses a like pattern, resource.name",
            ],
        ),
        (
            "any other exception on the path",
            r#"@id("p") forbid (principal, action == Action::"write", resource in Directory::"/k")
               unless { resource.path like "/k/sessions/*/kanban/*" };"#,
            &["gate only: write /k: its unless clause uses a like pattern, resource.path"],
        ),
        (
            "a condition on the principal",
            r#"@id("p") forbid (principal, action == Action::"connect", resource == Host::"x.org") when { principal.depth > 0 };"#,
            &["gate only: connect host x.org: its when clause uses principal.depth"],
        ),
        (
            "files by name",
            r#"@id("p") forbid (principal, action == Action::"read", resource) when { resource.name == "id_rsa" };"#,
            &["gate only: read: its condition picks files by name, wherever they are"],
        ),
        (
            "every file",
            r#"@id("p") forbid (principal, action == Action::"write", resource);"#,
            &["gate only: write: it covers every file"],
        ),
        (
            "the whole file system",
            r#"@id("p") forbid (principal, action == Action::"read", resource in Directory::"/");"#,
            &["gate only: read /: hiding / would leave nothing to run"],
        ),
        (
            "a relative path",
            r#"@id("p") forbid (principal, action == Action::"read", resource in Directory::"secrets");"#,
            &["gate only: read secrets: it is not an absolute path"],
        ),
        (
            "the hosts the gate cannot name",
            r#"@id("p") forbid (principal, action == Action::"connect", resource == Host::"*");"#,
            &["gate only: connect: Host::\"*\" stands for the hosts the gate cannot name"],
        ),
        (
            "a principal in the scope",
            r#"@id("p") forbid (principal == Agent::"s1", action == Action::"read", resource in Directory::"/x");"#,
            &["gate only: read /x: its scope names a principal"],
        ),
    ];
    for (name, text, want) in table {
        assert_eq!(terms(text), *want, "{name}");
    }
}

#[test]
fn the_example_policy_widens_nothing_and_reports_its_conditional_forbids() {
    let text = include_str!("../../policy/example.cedar");
    assert_eq!(
        terms(text),
        vec![
            "gate only: connect: its when clause uses principal.depth; its unless clause uses resource.name",
            "gate only: read: its condition uses a like pattern, resource.path, principal.human_attached",
            "skipped: write: its condition uses context.cwd",
        ]
    );
}

#[test]
fn the_task_boards_exemption_compiles_as_a_protected_directory_with_its_boards_open() {
    assert_eq!(
        terms(
            r#"@id("p") forbid (principal, action == Action::"write", resource in Directory::"/k")
               unless { resource.path like "/k/sessions/*/board/*" };"#
        ),
        vec!["protect /k (policy.cedar: @id(\"p\"))", "boards exempt in /k (policy.cedar: @id(\"p\"))"]
    );
}

#[test]
fn the_builtin_policy_compiles_its_stores_and_leaves_two_to_the_gate() {
    let t = sandbox_terms(&load::builtin(&places())).unwrap();
    let hidden: Vec<_> = t.read_deny.iter().map(|p| p.path.display().to_string()).collect();
    assert!(hidden.contains(&"/home/u/.aws".to_string()) && hidden.contains(&"/etc/shadow".to_string()), "{hidden:?}");
    assert!(!hidden.iter().any(|h| h.ends_with(".ssh")), "the ssh policy has exceptions: {hidden:?}");
    let protected: Vec<_> = t.write_protect.iter().map(|p| p.path.display().to_string()).collect();
    for p in [
        "/home/u/.config/unixagent",
        "/home/u/.local/share/unixagent",
        "/home/u/.zshenv",
        "/home/u/.config/systemd/user",
        "/etc/profile.d",
    ] {
        assert!(protected.contains(&p.to_string()), "{p} missing from {protected:?}");
    }
    assert_eq!(t.read_deny[0].source, "<built-in default.cedar>: @id(\"builtin.credential-dirs\")");
    assert!(t.write_roots.is_empty() && t.allow_hosts.is_empty() && t.skipped.is_empty());
    let exempt: Vec<_> = t.board_exempt.iter().map(|p| (p.path.display().to_string(), p.source.as_str())).collect();
    assert_eq!(exempt, [("/home/u/.local/share/unixagent".into(), "<built-in default.cedar>: @id(\"builtin.data\")")]);
    let mut gate_only: Vec<_> = t.not_compiled.iter().map(|u| format!("{} {}", u.source, u.action)).collect();
    gate_only.dedup();
    assert_eq!(
        gate_only,
        vec![
            "<built-in default.cedar>: @id(\"builtin.protected-parents\") write",
            "<built-in default.cedar>: @id(\"builtin.ssh\") read",
            "<built-in default.cedar>: @id(\"builtin.ssh\") write",
        ]
    );
}

#[test]
fn narrowing_files_add_forbids_but_never_widen() {
    let narrowing = r#"@id("n") forbid (principal, action == Action::"read", resource in Directory::"/srv/secret");
        @id("n") permit (principal, action == Action::"write", resource in Directory::"/srv");
        @id("n") permit (principal, action == Action::"connect", resource == Host::"x.org");"#;
    let sources = Sources {
        base: vec![source(
            r#"@id("b") permit (principal, action == Action::"write", resource in Directory::"/data");"#,
        )],
        toml: None,
        narrowing: vec![(
            Source { path: "child.cedar".into(), text: narrowing.into(), generated: false },
            Modes::uniform(Mode::Allow),
        )],
    };
    let t = layered(&sources).unwrap();
    assert_eq!(
        lines(&t),
        vec![
            "hide /srv/secret (child.cedar: @id(\"n\"))",
            "protect /srv/secret (child.cedar: @id(\"n\"))",
            "root /data (policy.cedar: @id(\"b\"))",
            "skipped: write /srv: a --policy layer only narrows what its parent allows",
            "skipped: connect host x.org: a --policy layer only narrows what its parent allows",
        ]
    );
}

#[test]
fn a_file_that_does_not_parse_is_an_error_naming_it() {
    let e = sandbox_terms(&source("forbid (principal, action, resource")).unwrap_err();
    assert!(e.to_string().contains("policy.cedar"), "{e}");
}
