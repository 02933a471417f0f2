//! The sandbox's rules compiled from the defaults, config.toml's
//! `[sandbox]`, policy.toml and the Cedar policies the gate evaluates
//! (the built-in policy, `policy.cedar` and the `--policy` layers).

use std::path::{Path, PathBuf};

use ua_policy::cedar::SandboxTerms;
use ua_policy::cedar::sandbox::{Target, Uncompiled};
use ua_sandbox::rules::{HostPattern, HostRule, Mode, PathRule, Places, Rules};

/// The rules, and what the policies hold that the kernel does not.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub rules: Rules,
    /// Forbids the kernel does not back: the gate alone applies them.
    pub gate_only: Vec<Uncompiled>,
    /// Permits not widened into the kernel.
    pub not_widened: Vec<Uncompiled>,
}

/// The rules for commands started in `cwd` under the narrowing policy
/// files `layers`.
pub fn rules(cfg: &crate::config::SandboxConfig, cwd: &Path, layers: &[PathBuf]) -> Result<Rules, String> {
    compile(cfg, cwd, layers).map(|c| c.rules)
}

/// [`rules`] with `hosts` allowed too, unless the policies forbid them
/// (a forbid of `connect` naming one, or of all network, still wins).
pub fn rules_allowing(
    cfg: &crate::config::SandboxConfig,
    cwd: &Path,
    layers: &[PathBuf],
    hosts: Vec<HostRule>,
) -> Result<Rules, String> {
    compile_with(cfg, cwd, layers, hosts).map(|c| c.rules)
}

/// [`rules`], with what did not compile.
pub fn compile(cfg: &crate::config::SandboxConfig, cwd: &Path, layers: &[PathBuf]) -> Result<Compiled, String> {
    compile_with(cfg, cwd, layers, Vec::new())
}

fn compile_with(
    cfg: &crate::config::SandboxConfig,
    cwd: &Path,
    layers: &[PathBuf],
    hosts: Vec<HostRule>,
) -> Result<Compiled, String> {
    let env = |k: &str| std::env::var(k).ok();
    let mut policy = ua_policy::gate::PolicyConfig::from_env(&env).map_err(|e| e.to_string())?;
    policy.narrowing = layers.to_vec();
    let mut temp = vec![PathBuf::from("/tmp")];
    if let Some(t) = std::env::var_os("TMPDIR").map(PathBuf::from).filter(|t| t.is_absolute()) {
        temp.push(t);
    }
    let places = Places {
        home: policy.home.clone(),
        cwd: cwd.to_path_buf(),
        temp,
        config_dir: policy.config_dir.clone(),
        data_dir: policy.data_dir.clone(),
        journal: None,
    };
    let mut rules = Rules::defaults(&places);
    rules.mode = match cfg.mode.as_deref() {
        None | Some("enforce") => Mode::Enforce,
        Some("best-effort") => Mode::BestEffort,
        Some(other) => return Err(format!("sandbox.mode = {other:?} is not \"enforce\" or \"best-effort\"")),
    };
    let path = policy.config_dir.join("policy.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let home = policy.home.to_string_lossy();
            let terms = ua_policy::policy_toml::sandbox_terms(&path, &text, &home).map_err(|e| e.to_string())?;
            for w in terms.write {
                rules.write_roots.push(PathRule::new(w, "policy.toml [approval.filesystem] write"));
            }
            for d in terms.deny {
                rules.read_deny.push(PathRule::new(d.clone(), "policy.toml [approval.filesystem] deny"));
                rules.write_protect.push(PathRule::new(d, "policy.toml [approval.filesystem] deny"));
            }
            for h in terms.allow_hosts {
                let host = HostPattern::parse(&h)
                    .map_err(|e| format!("{}: [approval.network] allow_hosts: {e}", path.display()))?;
                rules.allow_hosts.push(HostRule { host, source: "policy.toml [approval.network] allow_hosts".into() });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    rules.allow_hosts.extend(hosts);
    let sources = policy.sources().map_err(|e| e.to_string())?;
    let terms = ua_policy::cedar::sandbox::layered(&sources).map_err(|e| e.to_string())?;
    let mut compiled = add_cedar(rules, terms);
    compiled.rules.dedup();
    Ok(compiled)
}

/// Adds what the Cedar policies name to `rules`, then keeps, of the
/// forbids, those the result does not enforce, and says why.
fn add_cedar(mut rules: Rules, t: SandboxTerms) -> Compiled {
    let mut not_widened = t.skipped;
    let mut gate_only = Vec::new();
    let note = |source: &str, action: &'static str, target: Target, why: String| Uncompiled {
        source: source.to_string(),
        action,
        target,
        why,
    };
    for p in &t.read_deny {
        rules.read_deny.push(PathRule::new(p.path.clone(), &p.source));
    }
    for p in &t.write_protect {
        rules.write_protect.push(PathRule::new(p.path.clone(), &p.source));
    }
    // Landlock grants a write root whole: one inside a path a forbid keeps
    // would write what the gate refuses.
    for p in t.write_roots {
        let inside = rules.read_deny.iter().chain(&rules.write_protect).find(|r| p.path.starts_with(&r.path));
        match inside {
            Some(r) => {
                let why = format!("it lies inside {}, which is never written ({})", r.path.display(), r.source);
                not_widened.push(note(&p.source, "write", Target::Path(p.path), why));
            }
            None => rules.write_roots.push(PathRule::new(p.path, p.source)),
        }
    }
    for h in t.allow_hosts {
        match HostPattern::parse(&h.host) {
            Ok(host) => rules.allow_hosts.push(HostRule { host, source: h.source }),
            Err(e) => not_widened.push(note(&h.source, "connect", Target::Host(h.host), e)),
        }
    }
    for h in &t.deny_hosts {
        rules.allow_hosts.retain(|a| !matches!(&a.host, HostPattern::Exact { name, .. } if *name == h.host));
    }
    if !t.no_network.is_empty() {
        rules.allow_hosts.clear();
    }
    for h in t.deny_hosts {
        if let Some(a) = rules.admits(&h.host) {
            let why = format!("{} ({}) still lets it through", a.host, a.source);
            gate_only.push(note(&h.source, "connect", Target::Host(h.host), why));
        }
    }
    for p in t.write_protect {
        if rules.refuses_writes(&p.path) {
            continue;
        }
        let root = rules.write_roots.iter().find(|w| w.path.starts_with(&p.path) && w.path != p.path);
        let why = match root {
            Some(w) => format!("the writable directory {} ({}) lies inside it", w.path.display(), w.source),
            None => "it is writable".to_string(),
        };
        gate_only.push(note(&p.source, "write", Target::Path(p.path), why));
    }
    close_boards_a_forbid_covers(&mut rules, &t.board_exempt, &mut not_widened);
    // A forbid that did not compile may still hold: what it is about can
    // be hidden, unwritable or unreachable for other reasons.
    for u in t.not_compiled {
        let enforced = match (&u.target, u.action) {
            (Target::Path(p), "read") => rules.hides(p),
            (Target::Path(p), _) => rules.refuses_writes(p),
            (Target::Host(h), _) => rules.admits(h).is_none(),
            (Target::Unnamed, "connect") => !rules.network(),
            (Target::Unnamed, _) => false,
        };
        if !enforced {
            gate_only.push(u);
        }
    }
    Compiled { rules, gate_only, not_widened }
}

/// The kernel opens the session's task board only where the policies
/// agree: every hidden or protected path that holds the boards (or lies
/// inside one) must be a default of the sandbox, or come from a forbid
/// that exempts the boards itself (`builtin.data`'s `unless`). Any other
/// forbid there (a user's `forbid write in Directory "~/.local"`, a
/// policy.toml `deny`) wins, as forbids do, and the board stays closed.
fn close_boards_a_forbid_covers(
    rules: &mut Rules,
    exempt: &[ua_policy::cedar::sandbox::PathTerm],
    not_widened: &mut Vec<Uncompiled>,
) {
    let Some(boards) = rules.boards.clone() else { return };
    let covering = rules
        .read_deny
        .iter()
        .chain(&rules.write_protect)
        .filter(|r| boards.path.starts_with(&r.path) || r.path.starts_with(&boards.path))
        .find(|r| {
            !r.source.starts_with("default:") && !exempt.iter().any(|e| e.path == r.path && e.source == r.source)
        });
    if let Some(r) = covering {
        not_widened.push(Uncompiled {
            source: boards.source.clone(),
            action: "write",
            target: Target::Path(boards.path.join("<session>/board")),
            why: format!("{} covers {} and does not exempt the task boards", r.source, r.path.display()),
        });
        rules.boards = None;
    }
}

/// One line for `sandbox status`: `FILE: @id("x") forbids read in /k,
/// which the sandbox cannot express (its unless clause uses …)`.
pub fn sentence(u: &Uncompiled, forbid: bool) -> String {
    let what = match &u.target {
        Target::Path(p) => format!("{} in {}", u.action, p.display()),
        Target::Host(h) => format!("{} to {h}", u.action),
        Target::Unnamed => u.action.to_string(),
    };
    if forbid {
        format!("{}: forbids {what}, which the sandbox cannot express ({})", u.source, u.why)
    } else {
        format!("{}: permits {what}, not widened into the sandbox ({})", u.source, u.why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_policy::cedar::sandbox::{HostTerm, PathTerm};

    fn path(p: &str) -> PathTerm {
        PathTerm { path: p.into(), source: "policy.cedar: @id(\"t\")".into() }
    }

    fn host(h: &str) -> HostTerm {
        HostTerm { host: h.into(), source: "policy.cedar: @id(\"t\")".into() }
    }

    fn base() -> Rules {
        let mut r = Rules::default();
        r.write_roots.push(PathRule::new("/h/proj", "default: the working directory"));
        r.write_protect.push(PathRule::new("/h/.config/unixagent", "default: config"));
        for h in ["a.org", "*.corp"] {
            let host = HostPattern::parse(h).unwrap_or_else(|e| panic!("{e}"));
            r.allow_hosts.push(HostRule { host, source: "policy.toml".into() });
        }
        r
    }

    fn lines(list: &[Uncompiled], forbid: bool) -> Vec<String> {
        list.iter().map(|u| sentence(u, forbid)).collect()
    }

    #[test]
    fn forbidden_hosts_leave_the_allowlist_and_wildcards_are_reported() {
        let t = SandboxTerms { deny_hosts: vec![host("a.org"), host("x.corp")], ..Default::default() };
        let c = add_cedar(base(), t);
        let left: Vec<String> = c.rules.allow_hosts.iter().map(|h| h.host.to_string()).collect();
        assert_eq!(left, vec!["*.corp"]);
        assert_eq!(
            lines(&c.gate_only, true),
            vec![
                "policy.cedar: @id(\"t\"): forbids connect to x.corp, which the sandbox cannot express (*.corp (policy.toml) still lets it through)"
            ]
        );
        let t = SandboxTerms { no_network: vec!["p".into()], ..Default::default() };
        assert!(!add_cedar(base(), t).rules.network());
    }

    #[test]
    fn a_write_root_inside_a_protected_path_is_not_widened() {
        let t =
            SandboxTerms { write_roots: vec![path("/h/.config/unixagent/hooks"), path("/srv")], ..Default::default() };
        let c = add_cedar(base(), t);
        let roots: Vec<_> = c.rules.write_roots.iter().map(|r| r.path.display().to_string()).collect();
        assert_eq!(roots, vec!["/h/proj", "/srv"]);
        assert_eq!(
            lines(&c.not_widened, false),
            vec![
                "policy.cedar: @id(\"t\"): permits write in /h/.config/unixagent/hooks, not widened into the sandbox (it lies inside /h/.config/unixagent, which is never written (default: config))"
            ]
        );
    }

    #[test]
    fn a_protected_path_holding_a_write_root_is_reported() {
        let t = SandboxTerms { write_protect: vec![path("/h"), path("/etc/app")], ..Default::default() };
        let c = add_cedar(base(), t);
        assert_eq!(
            lines(&c.gate_only, true),
            vec![
                "policy.cedar: @id(\"t\"): forbids write in /h, which the sandbox cannot express (the writable directory /h/proj (default: the working directory) lies inside it)"
            ]
        );
    }

    #[test]
    fn the_boards_stay_open_only_where_every_forbid_over_them_exempts_them() {
        let with_boards = || {
            let mut r = base();
            r.read_deny.push(PathRule::new("/h/data", "default: unixagent's journals and audit log"));
            r.boards = Some(PathRule::new("/h/data/sessions", "default: the session's task board"));
            r
        };
        let builtin = PathTerm { path: "/h/data".into(), source: "builtin: @id(\"builtin.data\")".into() };
        let t = SandboxTerms {
            write_protect: vec![builtin.clone()],
            board_exempt: vec![builtin.clone()],
            ..Default::default()
        };
        let c = add_cedar(with_boards(), t);
        assert!(c.rules.boards.is_some() && c.not_widened.is_empty() && c.gate_only.is_empty(), "{c:?}");
        // A user's forbid over the data directory closes them.
        let t = SandboxTerms {
            write_protect: vec![builtin.clone(), path("/h/data")],
            board_exempt: vec![builtin],
            ..Default::default()
        };
        let c = add_cedar(with_boards(), t);
        assert!(c.rules.boards.is_none());
        assert_eq!(
            lines(&c.not_widened, false),
            vec![
                "default: the session's task board: permits write in /h/data/sessions/<session>/board, not widened into the sandbox (policy.cedar: @id(\"t\") covers /h/data and does not exempt the task boards)"
            ]
        );
    }

    #[test]
    fn uncompiled_forbids_the_rules_enforce_anyway_are_not_reported() {
        let u = |action, target| Uncompiled { source: "s".into(), action, target, why: "w".into() };
        let mut r = base();
        r.read_deny.push(PathRule::new("/h/.ssh", "default"));
        let t = SandboxTerms {
            not_compiled: vec![
                u("read", Target::Path("/h/.ssh".into())),
                u("write", Target::Path("/h/.ssh".into())),
                u("write", Target::Path("/etc".into())),
                u("connect", Target::Host("b.org".into())),
                u("read", Target::Path("/h/proj/secrets".into())),
                u("write", Target::Unnamed),
                u("connect", Target::Unnamed),
            ],
            ..Default::default()
        };
        let c = add_cedar(r, t);
        assert_eq!(
            lines(&c.gate_only, true),
            vec![
                "s: forbids read in /h/proj/secrets, which the sandbox cannot express (w)",
                "s: forbids write, which the sandbox cannot express (w)",
                "s: forbids connect, which the sandbox cannot express (w)",
            ]
        );
    }
}
