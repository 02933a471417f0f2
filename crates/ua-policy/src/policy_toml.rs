//! `policy.toml` (design §5.2), the simple policy format, translated into
//! Cedar text so that there is one evaluation path.
//!
//! ```toml
//! [approval]
//! default = "ask"                      # ask | allow | deny
//!
//! [approval.shell]
//! mode = "allow"
//! allow_patterns = ["cargo *", "make test"]
//! deny_patterns = ["rm -rf /", "sudo *", "chmod 777 *"]
//!
//! [approval.filesystem]
//! read = ["$CWD/**", "$HOME/Documents/**"]
//! write = ["$CWD/**"]
//! deny = ["$HOME/.ssh/**", "$HOME/.gnupg/**"]
//!
//! [approval.network]
//! mode = "deny"
//! allow_hosts = ["api.github.com", "*.internal.corp"]
//! ```
//!
//! How a section reads: its lists are exceptions, its `mode` says what
//! happens to everything else.
//!
//! - `allow_patterns`, `read`, `write`, `allow_hosts` become Cedar permits;
//!   `deny_patterns`, `deny`, `deny_hosts` become Cedar forbids (a forbid
//!   always wins).
//! - `mode = "allow"` with no allow-list permits every request of the
//!   section; with an allow-list it means "allow what is listed", and the
//!   rest falls back to `default`.
//! - `mode = "ask"` or `"deny"` is the fallback for the section's requests
//!   that no policy permits; without a `mode`, `default` is.
//!
//! Shell patterns match a program's invocation after quote removal, wrappers
//! included (`sudo rm -rf /tmp/x`), or its argv alone (`rm -rf /tmp/x`), with
//! `*` matching any text. Filesystem globs may start with `$CWD`, `$HOME` or
//! `~`; `dir/**` means the directory and everything below it, and elsewhere
//! `*` and `**` both match any text, `/` included (Cedar's `like`). Host
//! patterns use `*` the same way and are compared in lower case.
//!
//! The `vision`, `audio` and `ui` sections of the design are accepted, so
//! a policy written for the design still loads, but unixagent has no such
//! actions: [`unused_sections`] names each one present, with its line, and
//! the session and `policy check` say so.

use crate::error::PolicyError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// What happens to a request that no policy permits or forbids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Run it.
    Allow,
    /// Ask the human (or, with no human attached, refuse).
    #[default]
    Ask,
    /// Refuse.
    Deny,
}

impl Mode {
    /// The name used in policy.toml and in decisions.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Allow => "allow",
            Mode::Ask => "ask",
            Mode::Deny => "deny",
        }
    }
}

/// The fallback mode of each Cedar action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Modes {
    /// Programs run (`exec`).
    pub exec: Mode,
    /// Files read.
    pub read: Mode,
    /// Files written.
    pub write: Mode,
    /// Hosts contacted.
    pub connect: Mode,
    /// Child agents started.
    pub spawn_agent: Mode,
}

impl Modes {
    /// Every action falls back to `mode`.
    pub fn uniform(mode: Mode) -> Modes {
        Modes { exec: mode, read: mode, write: mode, connect: mode, spawn_agent: mode }
    }

    /// The fallback of the named Cedar action (`exec`, `read`, …).
    pub fn of(&self, action: &str) -> Mode {
        match action {
            "exec" => self.exec,
            "read" => self.read,
            "write" => self.write,
            "connect" => self.connect,
            _ => self.spawn_agent,
        }
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PolicyToml {
    #[serde(default)]
    approval: Approval,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Approval {
    default: Option<Mode>,
    #[serde(default)]
    shell: Shell,
    #[serde(default)]
    filesystem: Filesystem,
    #[serde(default)]
    network: Network,
    vision: Option<toml::Value>,
    audio: Option<toml::Value>,
    ui: Option<toml::Value>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Shell {
    mode: Option<Mode>,
    #[serde(default)]
    allow_patterns: Vec<String>,
    #[serde(default)]
    deny_patterns: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Filesystem {
    mode: Option<Mode>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Network {
    mode: Option<Mode>,
    #[serde(default)]
    allow_hosts: Vec<String>,
    #[serde(default)]
    deny_hosts: Vec<String>,
}

/// policy.toml as Cedar: the policy text and the fallback modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// Cedar policies, each with an `@id` naming the TOML key it came from.
    pub cedar: String,
    /// What requests no policy permits fall back to.
    pub modes: Modes,
}

/// What the kernel sandbox takes from a policy.toml: the directories its
/// globs name, as plain absolute paths (a glob's fixed part: `~/src/**`
/// is `~/src`), and the hosts. `$CWD` globs are left out (the working
/// directory is always a write root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxTerms {
    /// `[approval.filesystem] write`.
    pub write: Vec<String>,
    /// `[approval.filesystem] deny`: neither read nor written.
    pub deny: Vec<String>,
    /// `[approval.network] allow_hosts`.
    pub allow_hosts: Vec<String>,
}

/// Reads the sandbox's part of a policy.toml (see [`SandboxTerms`]).
pub fn sandbox_terms(path: &Path, text: &str, home: &str) -> Result<SandboxTerms, PolicyError> {
    let err = |message: String| PolicyError::Toml { path: path.to_path_buf(), message };
    let doc: PolicyToml = toml::from_str(text).map_err(|e| err(e.to_string().trim().replace('\n', " ")))?;
    let fs = &doc.approval.filesystem;
    let home = home.trim_end_matches('/');
    let fixed = |g: &String| -> Option<String> {
        let g = g.trim();
        let abs = if let Some(rest) = g.strip_prefix("$HOME").or_else(|| g.strip_prefix('~')) {
            format!("{home}{rest}")
        } else if g.starts_with('/') {
            g.to_string()
        } else {
            return None;
        };
        let cut = abs.find('*').map_or(abs.as_str(), |i| abs[..i].rsplit_once('/').map_or("/", |(d, _)| d));
        let cut = cut.trim_end_matches('/');
        Some(if cut.is_empty() { "/".into() } else { cut.to_string() })
    };
    Ok(SandboxTerms {
        write: fs.write.iter().filter_map(fixed).collect(),
        deny: fs.deny.iter().filter_map(fixed).collect(),
        allow_hosts: doc.approval.network.allow_hosts.clone(),
    })
}

/// Translates the text of a policy.toml. `home` expands `$HOME` and `~`.
pub fn translate(path: &Path, text: &str, home: &str) -> Result<Translated, PolicyError> {
    let err = |message: String| PolicyError::Toml { path: path.to_path_buf(), message };
    let doc: PolicyToml = toml::from_str(text).map_err(|e| err(e.to_string().trim().replace('\n', " ")))?;
    let a = doc.approval;
    let default = a.default.unwrap_or_default();
    let fallback = |m: Option<Mode>| match m {
        Some(Mode::Ask) => Mode::Ask,
        Some(Mode::Deny) => Mode::Deny,
        Some(Mode::Allow) | None => default,
    };
    let modes = Modes {
        exec: fallback(a.shell.mode),
        read: fallback(a.filesystem.mode),
        write: fallback(a.filesystem.mode),
        connect: fallback(a.network.mode),
        spawn_agent: default,
    };
    let mut out = Out::default();

    // shell
    let sh = &a.shell;
    if sh.mode == Some(Mode::Allow) && sh.allow_patterns.is_empty() {
        out.policy("toml.shell.mode", "[approval.shell] mode = \"allow\"", "permit", "exec", &Match::Any);
    }
    for (i, p) in sh.allow_patterns.iter().enumerate() {
        let cond = shell_pattern(p).map_err(|m| err(format!("[approval.shell] allow_patterns: {m}")))?;
        let reason = format!("[approval.shell] allow_patterns: {p}");
        out.policy(&format!("toml.shell.allow.{i}"), &reason, "permit", "exec", &Match::When(cond));
    }
    for (i, p) in sh.deny_patterns.iter().enumerate() {
        let cond = shell_pattern(p).map_err(|m| err(format!("[approval.shell] deny_patterns: {m}")))?;
        let reason = format!("[approval.shell] deny_patterns: {p}");
        out.policy(&format!("toml.shell.deny.{i}"), &reason, "forbid", "exec", &Match::When(cond));
    }

    // filesystem
    let fs = &a.filesystem;
    if fs.mode == Some(Mode::Allow) && fs.read.is_empty() && fs.write.is_empty() {
        let reason = "[approval.filesystem] mode = \"allow\"";
        out.policy("toml.filesystem.mode", reason, "permit", "read", &Match::Any);
        out.policy("toml.filesystem.mode", reason, "permit", "write", &Match::Any);
    }
    for (key, action, globs, effect) in [
        ("read", "read", &fs.read, "permit"),
        ("write", "write", &fs.write, "permit"),
        ("deny", "read", &fs.deny, "forbid"),
        ("deny", "write", &fs.deny, "forbid"),
    ] {
        for (i, g) in globs.iter().enumerate() {
            let m = path_glob(g, home).map_err(|m| err(format!("[approval.filesystem] {key}: {m}")))?;
            let reason = format!("[approval.filesystem] {key}: {g}");
            out.policy(&format!("toml.filesystem.{key}.{i}"), &reason, effect, action, &m);
        }
    }

    // network
    let net = &a.network;
    if net.mode == Some(Mode::Allow) && net.allow_hosts.is_empty() {
        out.policy("toml.network.mode", "[approval.network] mode = \"allow\"", "permit", "connect", &Match::Any);
    }
    for (key, hosts, effect) in [("allow_hosts", &net.allow_hosts, "permit"), ("deny_hosts", &net.deny_hosts, "forbid")]
    {
        for (i, h) in hosts.iter().enumerate() {
            let cond = host_pattern(h).map_err(|m| err(format!("[approval.network] {key}: {m}")))?;
            let reason = format!("[approval.network] {key}: {h}");
            out.policy(&format!("toml.network.{key}.{i}"), &reason, effect, "connect", &Match::When(cond));
        }
    }
    Ok(Translated { cedar: out.text, modes })
}

#[derive(Default)]
struct Out {
    text: String,
}

impl Out {
    fn policy(&mut self, id: &str, reason: &str, effect: &str, action: &str, m: &Match) {
        let _ = writeln!(self.text, "@id({})", quote(id));
        let _ = writeln!(self.text, "@reason({})", quote(reason));
        // A directory goes in the scope: the engine asks such a policy only
        // about paths below it.
        let resource = match m {
            Match::Within(dir) => format!("resource in Directory::{}", quote(dir)),
            Match::Any | Match::When(_) => "resource".to_string(),
        };
        let _ = write!(self.text, "{effect} (principal, action == Action::\"{action}\", {resource})");
        match m {
            Match::When(c) => {
                let _ = writeln!(self.text, "\nwhen {{ {c} }};\n");
            }
            Match::Any | Match::Within(_) => self.text.push_str(";\n\n"),
        }
    }
}

/// Which resources a translated policy is about.
#[derive(Debug, PartialEq, Eq)]
enum Match {
    /// Every resource of its action.
    Any,
    /// Everything in this directory (`dir/**`).
    Within(String),
    /// Resources meeting a condition.
    When(String),
}

/// One warning for each section of a policy.toml that unixagent accepts
/// but does not act on (`[approval.vision]`, `[approval.audio]`,
/// `[approval.ui]`), naming the file and line. Text that does not parse
/// gives none: loading the policy reports that.
pub fn unused_sections(path: &Path, text: &str) -> Vec<String> {
    let Ok(doc) = toml::from_str::<PolicyToml>(text) else {
        return Vec::new();
    };
    let present = [
        ("vision", doc.approval.vision.is_some()),
        ("audio", doc.approval.audio.is_some()),
        ("ui", doc.approval.ui.is_some()),
    ];
    present
        .into_iter()
        .filter(|(_, here)| *here)
        .map(|(name, _)| {
            let line = position(text, &["approval", name]).map_or(String::new(), |(l, _)| format!(", line {l}"));
            format!(
                "{}{line}: [approval.{name}] has no effect: unixagent has no {name} actions, and only the shell, filesystem and network sections are enforced",
                path.display()
            )
        })
        .collect()
}

/// The 1-based line and column of the key at `path` (table names, then the
/// key) in a TOML document: where a setting was written, for messages. The
/// deepest part of the path that exists is given when the rest does not.
pub fn position(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut found = None;
    for part in path {
        let Some((key, value)) = table.get_key_value(*part) else { break };
        found = Some(key.span().start);
        match value.get_ref() {
            toml::de::DeValue::Table(t) => table = t,
            _ => break,
        }
    }
    let before = &text[..found?.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((line, column))
}

/// A Cedar string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Cedar `like` pattern: `*` stays a wildcard, everything else is literal.
fn like(pattern: &str) -> String {
    // Inside a pattern literal a backslash escapes `*`; escape quotes and
    // backslashes as in any string.
    quote(pattern)
}

fn shell_pattern(p: &str) -> Result<String, String> {
    let p = p.trim();
    if p.is_empty() {
        return Err("a pattern is empty".into());
    }
    if p.chars().any(char::is_control) {
        return Err(format!("pattern {p:?} contains a control character"));
    }
    let pat = like(p);
    Ok(format!("resource.invocation like {pat} || resource.line like {pat}"))
}

fn host_pattern(h: &str) -> Result<String, String> {
    let h = h.trim().to_ascii_lowercase();
    let ok = !h.is_empty()
        && h.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '*' | '[' | ']' | ':'));
    if !ok {
        return Err(format!("{h:?} is not a host name or host pattern"));
    }
    if h.contains('*') {
        Ok(format!("resource.name like {}", like(&h)))
    } else {
        Ok(format!("resource.name == {}", quote(&h)))
    }
}

fn path_glob(g: &str, home: &str) -> Result<Match, String> {
    let g = g.trim();
    if g.contains(['?', '[', ']', '{', '}']) {
        return Err(format!("glob {g:?} uses ? [ ] or {{ }}, which are not supported; use * and **"));
    }
    if g.chars().any(char::is_control) {
        return Err(format!("glob {g:?} contains a control character"));
    }
    let home = home.trim_end_matches('/');
    if let Some(rest) = g.strip_prefix("$CWD") {
        let rest = rest.trim_start_matches('/');
        return Ok(Match::When(match rest {
            "" | "**" => "resource in context.cwd".to_string(),
            r => format!("resource in context.cwd && resource.path like {}", like(&format!("*/{r}"))),
        }));
    }
    let abs = if let Some(rest) = g.strip_prefix("$HOME").or_else(|| g.strip_prefix('~')) {
        format!("{home}{rest}")
    } else if g.starts_with('/') {
        g.to_string()
    } else {
        return Err(format!("glob {g:?} must start with /, ~, $HOME or $CWD"));
    };
    if abs.contains('$') {
        return Err(format!("glob {g:?} uses a variable other than $HOME or $CWD"));
    }
    let dir = abs.strip_suffix("/**").map(|d| if d.is_empty() { "/" } else { d });
    Ok(match dir {
        Some(d) if !d.contains('*') => Match::Within(crate::paths::normalize(d)),
        _ if abs.contains('*') => Match::When(format!("resource.path like {}", like(&abs))),
        _ => Match::When(format!("resource.path == {}", quote(&crate::paths::normalize(&abs)))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_terms_are_the_fixed_part_of_each_glob() {
        let text = r#"
[approval.filesystem]
write = ["~/src/**", "/srv/data/*.csv", "$CWD/**", "/"]
deny = ["~/secret", "/etc/shadow"]
[approval.network]
allow_hosts = ["api.github.com", "*.corp"]
"#;
        let t = sandbox_terms(Path::new("policy.toml"), text, "/home/u/").unwrap();
        assert_eq!(t.write, vec!["/home/u/src", "/srv/data", "/"]);
        assert_eq!(t.deny, vec!["/home/u/secret", "/etc/shadow"]);
        assert_eq!(t.allow_hosts, vec!["api.github.com", "*.corp"]);
        assert!(sandbox_terms(Path::new("p"), "[approval.network]\nallow_hosts = 1", "/h").is_err());
    }

    fn tr(text: &str) -> Translated {
        translate(Path::new("policy.toml"), text, "/home/u").unwrap()
    }

    #[test]
    fn empty_file_asks_for_everything() {
        let t = tr("");
        assert_eq!(t.cedar, "");
        assert_eq!(t.modes, Modes::uniform(Mode::Ask));
    }

    #[test]
    fn section_modes_set_fallbacks() {
        let t = tr(
            "[approval]\ndefault = \"allow\"\n[approval.network]\nmode = \"deny\"\n[approval.shell]\nmode = \"ask\"\n",
        );
        assert_eq!(t.modes.connect, Mode::Deny);
        assert_eq!(t.modes.exec, Mode::Ask);
        assert_eq!(t.modes.read, Mode::Allow);
        assert_eq!(t.modes.spawn_agent, Mode::Allow);
    }

    #[test]
    fn quotes_in_patterns_cannot_break_out_of_the_string() {
        let t = tr(r#"[approval.shell]
deny_patterns = ['x" || true || "', 'a\b']"#);
        assert!(t.cedar.contains(r#"like "x\" || true || \"""#), "{}", t.cedar);
        assert!(t.cedar.contains(r#""a\\b""#), "{}", t.cedar);
    }

    #[test]
    fn globs_translate_to_hierarchy_or_like() {
        let when = |s: &str| Ok(Match::When(s.to_string()));
        assert_eq!(path_glob("$HOME/.ssh/**", "/home/u"), Ok(Match::Within("/home/u/.ssh".into())));
        assert_eq!(path_glob("~/notes.txt", "/home/u"), when("resource.path == \"/home/u/notes.txt\""));
        assert_eq!(path_glob("/etc/*.conf", "/h"), when("resource.path like \"/etc/*.conf\""));
        assert_eq!(path_glob("$CWD/**", "/h"), when("resource in context.cwd"));
        assert!(path_glob("relative/x", "/h").is_err());
        assert!(path_glob("/a/[bc]", "/h").is_err());
        assert!(path_glob("$TMP/x", "/h").is_err());
    }

    #[test]
    fn unknown_keys_and_values_are_errors_naming_the_file() {
        let e = translate(Path::new("/c/policy.toml"), "[approval]\ndefault = \"maybe\"\n", "/h").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("/c/policy.toml:"), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
        assert!(translate(Path::new("p"), "[approval.shell]\nallow = []\n", "/h").is_err());
    }

    #[test]
    fn sections_without_actions_are_named_with_their_line() {
        let text = "[approval]\ndefault = \"ask\"\n\n[approval.vision]\nscreenshot = \"allow\"\n\n[approval.ui]\nmode = \"ask\"\n";
        let w = unused_sections(Path::new("/c/policy.toml"), text);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("/c/policy.toml, line 4: [approval.vision] has no effect"), "{w:?}");
        assert!(w[1].starts_with("/c/policy.toml, line 7: [approval.ui] has no effect"), "{w:?}");
        assert!(unused_sections(Path::new("p"), "[approval.shell]\nmode = \"allow\"\n").is_empty());
        // Dotted keys and inline tables are found too.
        let w = unused_sections(Path::new("p"), "approval.audio.microphone = \"ask\"\n");
        assert!(w[0].starts_with("p, line 1: [approval.audio]"), "{w:?}");
    }

    #[test]
    fn positions_point_at_the_key() {
        let text = "a = 1\n[t]\n  b = 2\n[t.u]\nc = 3\n";
        assert_eq!(position(text, &["a"]), Some((1, 1)));
        assert_eq!(position(text, &["t", "b"]), Some((3, 3)));
        assert_eq!(position(text, &["t", "u", "c"]), Some((5, 1)));
        // The deepest part that exists.
        assert_eq!(position(text, &["t", "zz"]), Some((2, 2)));
        assert_eq!(position(text, &["nope"]), None);
        assert_eq!(position("not [ toml", &["a"]), None);
    }
}
