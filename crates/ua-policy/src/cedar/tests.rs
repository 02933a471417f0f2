use super::load::{self, Places};
use super::*;
use crate::classify::analyze;
use crate::policy_toml::Mode;

fn places() -> Places {
    Places {
        home: "/home/u".into(),
        config_dir: "/home/u/.config/unixagent".into(),
        data_dir: "/home/u/.local/share/unixagent".into(),
    }
}

fn engine(extra: &str) -> Engine {
    let schema = load::schema().unwrap();
    let mut sources = vec![load::builtin(&places())];
    if !extra.is_empty() {
        sources.push(Source { path: "policy.cedar".into(), text: places().substitute(extra), generated: false });
    }
    let layer = load::layer("base", &sources, Modes::uniform(Mode::Ask), &schema).unwrap();
    Engine::new(schema, vec![layer]).unwrap()
}

fn eval(e: &Engine, cmd: &str) -> Verdict {
    let who = Subject { session: "s1", depth: 0, human_attached: true, cwd: "/home/u/project", home: "/home/u" };
    e.evaluate(&analyze(cmd), &who)
}

#[test]
fn builtin_policy_validates_against_the_schema() {
    let e = engine("");
    assert!(e.layers()[0].len() >= 10);
}

#[test]
fn protected_parents_cover_root_home_and_the_xdg_chain() {
    let p = places().protected_parents();
    for d in ["/", "/home/u", "/home/u/.config", "/home/u/.local", "/home/u/.local/share", "/home"] {
        assert!(p.contains(&d.to_string()), "{d} missing from {p:?}");
    }
}

#[test]
fn annotations_name_the_deciding_policy() {
    let v = eval(&engine(""), "touch ~/.config/unixagent/policy.toml");
    assert_eq!(v.forbid.as_ref().map(|h| h.policy.as_str()), Some("builtin.config"));
    assert!(v.forbid.unwrap().request.starts_with("write /home/u/.config/unixagent/policy.toml"));
}

#[test]
fn read_only_commands_are_permitted_and_writes_are_not() {
    let e = engine("");
    let v = eval(&e, "ls -la");
    assert!(v.permitted(), "{v:?}");
    assert_eq!(v.permits[0].policy, "builtin.read-only");
    let v = eval(&e, "touch notes.txt");
    assert!(!v.permitted());
    assert!(v.forbid.is_none());
    assert!(v.unmatched.iter().any(|u| u.request == "write /home/u/project/notes.txt"), "{v:?}");
}

#[test]
fn relative_paths_resolve_against_the_cwd_before_matching() {
    let v = eval(&engine(""), "cat ../.ssh/id_ed25519");
    assert_eq!(v.forbid.map(|h| h.policy), Some("builtin.ssh".into()));
    let v = eval(&engine(""), "cat ~/.ssh/id_ed25519.pub");
    assert!(v.forbid.is_none(), "{v:?}");
}

#[test]
fn removing_a_parent_of_the_config_dir_is_forbidden() {
    for cmd in ["rm -rf ~/.config", "mv ~/.local /tmp/x", "chmod -R 777 ~"] {
        let v = eval(&engine(""), cmd);
        assert_eq!(v.forbid.as_ref().map(|h| h.policy.as_str()), Some("builtin.protected-parents"), "{cmd}: {v:?}");
    }
}

#[test]
fn globs_cannot_hide_a_protected_directory() {
    for cmd in ["rm -rf ~/.s*", "rm -rf ~/.co*/unixagent", "chmod -R 777 /h*"] {
        let v = eval(&engine(""), cmd);
        assert!(v.forbid.is_some(), "{cmd}: {v:?}");
    }
    // Reads through such a glob are not permitted without asking.
    for cmd in ["cat ~/.s*/id_rsa", "cat ~/.ss?/id_ed25519", "cat /etc/sha*", "cat ~/.config/g*/credentials.db"] {
        let v = eval(&engine(""), cmd);
        assert!(!v.permitted(), "{cmd}: {v:?}");
        assert!(v.unmatched.iter().any(|u| u.action == "read" && u.request.contains("through")), "{cmd}: {v:?}");
    }
    assert!(eval(&engine(""), "cat src/*.rs").permitted());
    // A glob inside the project only asks about the project.
    let cwd_writes =
        "@id(\"cwd\") permit (principal, action == Action::\"write\", resource) when { resource in context.cwd };";
    let v = eval(&engine(cwd_writes), "rm build/*.o");
    assert!(v.forbid.is_none());
    assert!(!v.unmatched.iter().any(|u| u.action == "write"), "{v:?}");
}

#[test]
fn a_user_permit_cannot_beat_a_builtin_forbid() {
    let e = engine("@id(\"all\") permit (principal, action, resource);");
    assert_eq!(eval(&e, "cat ~/.aws/credentials").forbid.map(|h| h.policy), Some("builtin.credential-dirs".into()));
    assert!(eval(&e, "rm -rf build").permitted());
}

#[test]
fn policies_without_id_are_numbered_by_position() {
    let e = engine(
        "permit (principal, action == Action::\"exec\", resource);\nforbid (principal, action == Action::\"connect\", resource);",
    );
    let v = eval(&e, "curl https://example.com");
    let f = v.forbid.unwrap();
    assert_eq!(f.policy, "#2");
    assert_eq!(f.file, "policy.cedar");
}

#[test]
fn context_cwd_and_principal_attributes_are_usable() {
    let e = engine(
        "@id(\"cwd-writes\") permit (principal, action == Action::\"write\", resource) when { resource in context.cwd };\n\
         @id(\"exec-writes\") permit (principal, action == Action::\"exec\", resource) when { resource.risk_level <= 2 && principal.human_attached };",
    );
    assert!(eval(&e, "touch a/b.txt").permitted());
    assert!(!eval(&e, "touch /tmp/b.txt").permitted());
}

#[test]
fn spawn_depth_is_limited() {
    let e = engine("");
    let a = analyze("unixagent -c '# hi'");
    let deep = Subject { session: "s", depth: 4, human_attached: false, cwd: "/w", home: "/home/u" };
    assert_eq!(e.evaluate(&a, &deep).forbid.map(|h| h.policy), Some("builtin.spawn-depth".into()));
    let shallow = Subject { depth: 1, ..deep };
    assert!(e.evaluate(&a, &shallow).forbid.is_none());
}

#[test]
fn schema_errors_name_file_and_line() {
    let schema = load::schema().unwrap();
    let src = Source {
        path: "/c/policy.cedar".into(),
        text: "// ok\npermit (principal, action == Action::\"exec\", resource);\n\nforbid (principal, action == Action::\"exec\", resource)\nwhen { resource.colour == \"red\" };\n".into(),
        generated: false,
    };
    let err = load::layer("base", &[src], Modes::default(), &schema).unwrap_err().to_string();
    assert!(err.starts_with("/c/policy.cedar:5:"), "{err}");
    let src = Source {
        path: "/c/p.cedar".into(),
        text: "permit (principal, action, resource)\n when { true };\nforbid (".into(),
        generated: false,
    };
    let err = load::layer("base", &[src], Modes::default(), &schema).unwrap_err().to_string();
    assert!(err.starts_with("/c/p.cedar:3:"), "{err}");
}

#[test]
fn directory_rules_reach_any_depth_below_and_only_below() {
    let e = engine(
        "@id(\"srv\") forbid (principal, action == Action::\"write\", resource in Directory::\"/srv\");\n\
         @id(\"srv-when\") forbid (principal, action == Action::\"read\", resource) when { resource in Directory::\"/srv\" };",
    );
    let forbid = |cmd: &str| eval(&e, cmd).forbid.map(|h| h.policy);
    assert_eq!(forbid("touch /srv/a/b/c/d/e.txt"), Some("srv".into()));
    assert_eq!(forbid("rm -r /srv"), Some("srv".into()));
    assert_eq!(forbid("cat /srv/a/b/c.txt"), Some("srv-when".into()));
    assert_eq!(forbid("touch /srv2/x"), None);
    assert_eq!(forbid("cat /srvx"), None);
}

#[test]
fn the_working_directory_is_in_the_directories_policies_name() {
    let e = engine(
        "@id(\"in-home\") permit (principal, action == Action::\"write\", resource) when { context.cwd in Directory::\"/home/u\" };\n\
         @id(\"below-cwd\") forbid (principal, action == Action::\"read\", resource) when { resource in context.cwd && resource.name == \"secret\" };",
    );
    assert!(eval(&e, "touch /tmp/x").unmatched.iter().all(|u| u.action != "write"));
    assert_eq!(eval(&e, "cat deep/down/secret").forbid.map(|h| h.policy), Some("below-cwd".into()));
    assert!(eval(&e, "cat /tmp/secret").forbid.is_none());
    let elsewhere = Subject { session: "s1", depth: 0, human_attached: true, cwd: "/tmp", home: "/home/u" };
    let v = e.evaluate(&analyze("touch /tmp/x"), &elsewhere);
    assert!(v.unmatched.iter().any(|u| u.action == "write"), "{v:?}");
}

#[test]
fn exact_and_typed_scopes_are_asked_only_about_their_resource() {
    let e = engine(
        "@id(\"one-file\") forbid (principal, action == Action::\"read\", resource == File::\"/etc/hosts\");\n\
         @id(\"typed\") forbid (principal, action == Action::\"write\", resource is File in Directory::\"/opt\");",
    );
    assert_eq!(eval(&e, "cat /etc/hosts").forbid.map(|h| h.policy), Some("one-file".into()));
    assert_eq!(eval(&e, "cat /etc/../etc/hosts").forbid.map(|h| h.policy), Some("one-file".into()));
    assert!(eval(&e, "cat /etc/hostname").forbid.is_none());
    assert_eq!(eval(&e, "touch /opt/tool/bin").forbid.map(|h| h.policy), Some("typed".into()));
    // The built-in credential rules are scoped the same way.
    assert_eq!(eval(&e, "cat ~/.netrc").forbid.map(|h| h.policy), Some("builtin.credential-files".into()));
    assert_eq!(eval(&e, "echo x >> ~/.bash_history").forbid.map(|h| h.policy), Some("builtin.history".into()));
    assert_eq!(eval(&e, "cp ~/.kube/config /tmp/").forbid.map(|h| h.policy), Some("builtin.credential-dirs".into()));
}

#[test]
fn a_scoped_policy_that_errors_still_fails_closed() {
    // Arithmetic overflow passes validation and fails at evaluation.
    let e = engine(
        "@id(\"overflows\") permit (principal, action == Action::\"read\", resource in Directory::\"/data\") \
         when { principal.depth - 9223372036854775807 - 2 < 0 };",
    );
    let v = eval(&e, "cat /data/x");
    assert!(v.error.as_deref().is_some_and(|m| m.contains("overflow")), "{v:?}");
    assert!(!v.permitted());
    // Outside its scope it is never evaluated.
    assert!(eval(&e, "cat /tmp/x").error.is_none());
}

#[test]
fn parts_without_words_are_labelled_by_what_they_are() {
    let e = engine("");
    let labels = |cmd: &str| eval(&e, cmd).unmatched.into_iter().map(|u| u.request).collect::<Vec<_>>();
    assert_eq!(labels("select x in a; do ls; done"), ["exec (text that cannot be parsed)"]);
    assert_eq!(labels("f() { ls; }"), ["exec (the definition of f)"]);
}

/// Parsed policies are kept by their text: the same file edited (or
/// broken) between two loads is read as it is now.
#[test]
fn a_policy_file_edited_between_loads_is_parsed_anew() {
    let src = |text: &str| Source { path: "/c/edited.cedar".into(), text: text.into(), generated: false };
    let ids = |s: &Source| -> Vec<String> {
        load::parse(s).unwrap().iter().map(|(n, p)| load::label(p, *n)).collect::<Vec<_>>()
    };
    let first = src("@id(\"one\") forbid (principal, action, resource);");
    assert_eq!(ids(&first), ["one"]);
    let edited =
        src("@id(\"two\") forbid (principal, action, resource);\n@id(\"three\") permit (principal, action, resource);");
    assert_eq!(ids(&edited), ["two", "three"]);
    let broken = src("@id(\"two\") forbid (principal, action, resource)\nforbid (");
    assert!(load::parse(&broken).unwrap_err().to_string().starts_with("/c/edited.cedar:"));
    assert_eq!(ids(&first), ["one"]);
}
