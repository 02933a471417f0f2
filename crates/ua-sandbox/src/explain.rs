//! Telling a command that failed in the sandbox from one that failed on
//! its own.
//!
//! Landlock reports its denials only through the kernel's audit log, which
//! an unprivileged process cannot read, and a refused `open` looks like any
//! other `EACCES` to the program that made it. So the denials are read
//! back from what the sandbox itself knows: the rules, the error messages
//! the command printed (the path next to `Permission denied`, `Read-only
//! file system` or `Operation not permitted`), and the proxy's refusals
//! during the command. What matches a rule is named with the rule's
//! source; a failure that matches none gets one line saying the sandbox
//! may be the cause.

use std::path::{Component, Path, PathBuf};

use crate::proxy::Decision;
use crate::rules::{PathRule, Rules};

/// The line for a failure that names nothing the sandbox refused.
pub const MAY_BE_THE_SANDBOX: &str = "this command ran in the kernel sandbox, which may have caused the failure (`unixagent sandbox status` says what it enforces)";

/// Error messages the kernel's refusals turn into.
const DENIED: &[&str] = &["permission denied", "read-only file system", "operation not permitted"];
/// Error messages of a connection made around the proxy.
const UNREACHABLE: &[&str] = &[
    "network is unreachable",
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "connection refused",
    "failed to connect",
];

/// The lines that explain how the sandbox may have caused a command to
/// fail. `cwd` is where the command ran (relative paths in its messages
/// are taken from there), `output` what it printed, `decisions` the
/// proxy's decisions while it ran and `failed` whether it exited non-zero.
///
/// Empty when nothing points at the sandbox and the command succeeded.
pub fn explain(rules: &Rules, cwd: &Path, output: &str, decisions: &[Decision], failed: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |out: &mut Vec<String>, line: String| {
        if !out.contains(&line) {
            out.push(line);
        }
    };
    for d in decisions.iter().filter(|d| !d.allowed) {
        let why = d.reason.as_deref().unwrap_or("not in the allowlist");
        push(&mut out, format!("the sandbox's proxy refused {}:{}: {why}", d.host, d.port));
    }
    let mut denial_seen = false;
    let mut network_seen = false;
    // The rules as the launcher applied them (links followed), worked out
    // at the first denial.
    let mut applied: Option<crate::normalise::Normalised> = None;
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if DENIED.iter().any(|m| lower.contains(m)) {
            denial_seen = true;
            let write_error = lower.contains("read-only file system");
            for path in paths_in(line) {
                let shown = absolute(cwd, &path);
                // Matched as the kernel saw it: the rules name where
                // symbolic links lead.
                let path = crate::normalise::resolve(&shown, &crate::normalise::Host).path;
                let applied =
                    applied.get_or_insert_with(|| crate::normalise::normalise(rules, &crate::normalise::Host));
                if let Some(text) = denial(applied, &path, write_error).map(|t| format!("{}: {t}", shown.display())) {
                    push(&mut out, text);
                }
            }
        } else if UNREACHABLE.iter().any(|m| lower.contains(m)) {
            network_seen = true;
        }
    }
    if network_seen && !decisions.iter().any(|d| !d.allowed) {
        let line = if rules.network() {
            "direct connections are blocked in the sandbox; HTTP and HTTPS go through its proxy (HTTPS_PROXY) to the allowed hosts".into()
        } else {
            "the sandbox allows no network (no allow_hosts in the policy)".into()
        };
        push(&mut out, line);
    }
    if out.is_empty() && (failed || denial_seen) {
        out.push(MAY_BE_THE_SANDBOX.into());
    }
    out
}

/// What the rules say about a refused access to `path` (where its links
/// lead), if they explain it; the text follows the path as the command
/// named it.
fn denial(applied: &crate::normalise::Normalised, path: &Path, write_error: bool) -> Option<String> {
    let rules = &applied.rules;
    if let Some(r) = covering(&rules.read_deny, path) {
        return Some(format!("hidden by the sandbox ({}: {})", r.path.display(), r.source));
    }
    if let Some(r) = covering(&rules.write_protect, path) {
        return Some(format!("never written in the sandbox ({}: {})", r.path.display(), r.source));
    }
    let parent_in = |list: &[std::path::PathBuf]| path.parent().filter(|d| list.iter().any(|n| n == d));
    if let Some(dir) = parent_in(&applied.no_remove)
        && path.symlink_metadata().is_ok()
    {
        return Some(format!(
            "nothing can be removed or renamed directly in {} in the sandbox, since a symbolic link there leads to a protected file and must stay (what is there stays writable)",
            dir.display()
        ));
    }
    if let Some(dir) = parent_in(&applied.no_create)
        && path.symlink_metadata().is_err()
    {
        return Some(format!(
            "nothing new can be made directly in {} in the sandbox, since start-up files that do not exist there yet, or the symbolic links that lead to protected files, could not be protected otherwise (what is there stays writable; work in a directory below it)",
            dir.display()
        ));
    }
    if covering(&rules.write_roots, path).is_none() {
        let roots: Vec<String> = rules.write_roots.iter().map(|r| r.path.display().to_string()).collect();
        let kind = if write_error { "writes" } else { "writes (reads are allowed)" };
        return Some(format!(
            "outside the directories the sandbox lets commands write ({kind} go only to {})",
            roots.join(", ")
        ));
    }
    None
}

/// The rule whose path is `path` or a directory above it.
fn covering<'a>(list: &'a [PathRule], path: &Path) -> Option<&'a PathRule> {
    list.iter().find(|r| path.starts_with(&r.path))
}

/// Paths an error message names: words that look like paths, with the
/// quotes and the colon around them taken off.
fn paths_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in line.split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '`' || c == '‘' || c == '’')
    {
        let named = word.ends_with(':');
        let word = word.trim_end_matches([':', ',', ';', ')']).trim_start_matches('(');
        // `bash: .git/hooks/x: Permission denied` names it before a colon.
        let looks = word.starts_with('/')
            || word.starts_with("./")
            || word.starts_with("../")
            || word.starts_with('~')
            || (named && word.contains('/'));
        if looks && word.len() > 1 && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    // `bash: new.txt: Permission denied`: the field before the error.
    if out.is_empty()
        && let Some(at) = DENIED.iter().filter_map(|m| line.to_ascii_lowercase().find(m)).min()
    {
        let before = line[..at].trim_end().trim_end_matches(':');
        let field =
            before.rsplit(": ").next().unwrap_or("").trim_matches(|c| matches!(c, '\'' | '"' | '‘' | '’' | '`'));
        if !field.is_empty() && !field.contains(char::is_whitespace) && field != before {
            out.push(field.to_string());
        }
    }
    // A message such as `touch: cannot touch 'x': Permission denied` names
    // a relative path in quotes.
    if out.is_empty()
        && let Some(quoted) = between_quotes(line)
        && !quoted.is_empty()
        && !quoted.contains(char::is_whitespace)
    {
        out.push(quoted.to_string());
    }
    out
}

fn between_quotes(line: &str) -> Option<&str> {
    for (open, close) in [('\'', '\''), ('‘', '’'), ('"', '"'), ('`', '\'')] {
        if let Some(start) = line.find(open) {
            let rest = &line[start + open.len_utf8()..];
            if let Some(end) = rest.find(close) {
                return Some(&rest[..end]);
            }
        }
    }
    None
}

/// `path` made absolute from `cwd` and lexically normalised (`..` taken
/// off), as the rules are written.
fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let joined = if let Some(rest) = path.strip_prefix("~/") {
        std::env::var_os("HOME").map_or_else(|| cwd.join(path), |h| PathBuf::from(h).join(rest))
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{HostPattern, HostRule};

    fn rules() -> Rules {
        Rules {
            read_deny: vec![PathRule::new("/home/u/.ssh", "default: credentials and secrets")],
            write_roots: vec![
                PathRule::new("/home/u/proj", "default: the working directory"),
                PathRule::new("/tmp", "default: temporary files"),
            ],
            write_protect: vec![PathRule::new("/home/u/proj/.git/hooks", "default: a repository's hooks")],
            ..Rules::default()
        }
    }

    fn cwd() -> &'static Path {
        Path::new("/home/u/proj")
    }

    #[test]
    fn names_the_rule_behind_each_refused_path() {
        let cases = [
            ("cat: /home/u/.ssh/id_rsa: Permission denied", "/home/u/.ssh/id_rsa: hidden by the sandbox (/home/u/.ssh"),
            (
                "bash: .git/hooks/pre-commit: Permission denied",
                "/home/u/proj/.git/hooks/pre-commit: never written in the sandbox",
            ),
            ("touch: cannot touch '/etc/x': Permission denied", "/etc/x: outside the directories the sandbox lets"),
            (
                "sh: 1: cannot create ../sibling/f: Read-only file system",
                "/home/u/sibling/f: outside the directories the sandbox lets commands write (writes go only to /home/u/proj, /tmp)",
            ),
            ("touch: cannot touch 'x/../.git/hooks/h': Permission denied", "/home/u/proj/.git/hooks/h: never written"),
        ];
        for (output, want) in cases {
            let got = explain(&rules(), cwd(), output, &[], true);
            assert_eq!(got.len(), 1, "{output}: {got:?}");
            assert!(got[0].starts_with(want), "{output}:\n got {}\nwant {want}", got[0]);
        }
    }

    #[test]
    fn a_denial_inside_the_rules_gets_the_general_line() {
        // Inside a writable directory: not the sandbox's doing as far as
        // the rules go, but the kernel may still be why.
        let got = explain(&rules(), cwd(), "rm: cannot remove 'src/x': Permission denied", &[], true);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("may have caused the failure"), "{got:?}");
    }

    #[test]
    fn proxy_refusals_are_named() {
        let refused = [
            Decision {
                host: "evil.example".into(),
                port: 443,
                allowed: false,
                reason: Some("not in allow_hosts".into()),
            },
            Decision { host: "ok.example".into(), port: 443, allowed: true, reason: None },
        ];
        let got = explain(&rules(), cwd(), "curl: (56) CONNECT tunnel failed, response 403", &refused, true);
        assert_eq!(got, ["the sandbox's proxy refused evil.example:443: not in allow_hosts"]);
    }

    #[test]
    fn direct_connections_are_explained_by_the_network_rules() {
        let got = explain(&rules(), cwd(), "curl: (6) Could not resolve host: example.com", &[], true);
        assert_eq!(got, ["the sandbox allows no network (no allow_hosts in the policy)"]);
        let mut r = rules();
        r.allow_hosts.push(HostRule { host: HostPattern::parse("example.com").unwrap(), source: "t".into() });
        let got = explain(&r, cwd(), "connect: Network is unreachable", &[], true);
        assert!(got[0].starts_with("direct connections are blocked"), "{got:?}");
    }

    #[test]
    fn success_without_denials_says_nothing_and_failure_says_one_line() {
        assert!(explain(&rules(), cwd(), "all good\n", &[], false).is_empty());
        let got = explain(&rules(), cwd(), "make: *** [all] Error 2", &[], true);
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with("this command ran in the kernel sandbox"));
    }

    #[test]
    fn words_that_are_not_paths_are_left_alone() {
        assert!(paths_in("Permission denied (publickey).").is_empty());
        assert_eq!(paths_in("open /a/b: permission denied, and (/c/d)"), ["/a/b", "/c/d"]);
    }

    #[test]
    fn a_new_file_where_nothing_new_may_be_made_is_explained() {
        let home = std::env::temp_dir().join(format!("ua-sandbox-explain-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let rules = Rules::defaults(&crate::rules::Places {
            home: home.clone(),
            cwd: home.clone(),
            temp: vec![],
            config_dir: home.join(".config/unixagent"),
            data_dir: home.join(".local/share/unixagent"),
            journal: None,
        });
        let got = explain(&rules, &home, "bash: new.txt: Permission denied", &[], true);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains(&format!("nothing new can be made directly in {}", home.display())), "{got:?}");
        std::fs::remove_dir_all(&home).unwrap();
    }
}
