use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::rules::{HostPattern, HostRule, Places};

/// Where the golden profiles live. After a deliberate change to the
/// profile, run `UA_UPDATE_GOLDEN=1 cargo test -p ua-sandbox seatbelt` to
/// rewrite them, and read the diff before committing it.
const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/seatbelt");

/// Compares `text` with `GOLDEN_DIR/NAME.sbpl`, or rewrites that file when
/// `UA_UPDATE_GOLDEN=1`.
fn golden(name: &str, text: &str) {
    let path = Path::new(GOLDEN_DIR).join(format!("{name}.sbpl"));
    if std::env::var_os("UA_UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(GOLDEN_DIR).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with UA_UPDATE_GOLDEN=1 to write it", path.display()));
    if want != text {
        let end = std::iter::once("<end of profile>");
        let (n, (w, g)) = want
            .lines()
            .chain(end.clone())
            .zip(text.lines().chain(end))
            .enumerate()
            .find(|(_, (w, g))| w != g)
            .unwrap_or((0, ("<same lines>", "<different line endings>")));
        panic!(
            "{} differs at line {}:\n  golden: {w}\n  now:    {g}\nIf the change is meant, rerun with UA_UPDATE_GOLDEN=1 and review the diff.",
            path.display(),
            n + 1
        );
    }
}

/// Whether `text` reads as SBPL: parentheses balanced and never closed
/// before they open, every string (`"..."` and the regex `#"..."`) closed
/// on its own line with only the escapes `quote` writes, comments to the
/// end of their line, and nothing but whitespace between top-level forms.
fn check_syntax(text: &str) -> Result<(), String> {
    let mut depth = 0usize;
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            ';' => while chars.next_if(|&c| c != '\n').is_some() {},
            '(' => depth += 1,
            ')' if depth == 0 => return Err(format!("line {line}: `)` closes nothing")),
            ')' => depth -= 1,
            '"' | '#' => {
                if c == '#' && chars.next() != Some('"') {
                    return Err(format!("line {line}: `#` not starting a regex string"));
                }
                let regex = c == '#';
                loop {
                    match chars.next() {
                        None => return Err(format!("line {line}: string never closed")),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('"' | '\\') => {}
                            // A regex string hands `\.` and the like to
                            // the regex: a literal character.
                            Some(c) if regex && c.is_ascii_punctuation() => {}
                            Some('x') => {
                                let hex: String = (0..2).filter_map(|_| chars.next()).collect();
                                if hex.len() != 2 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                                    return Err(format!("line {line}: `\\x` wants two hex digits, got {hex:?}"));
                                }
                            }
                            other => return Err(format!("line {line}: unknown escape {other:?}")),
                        },
                        Some(c) if c.is_control() => {
                            return Err(format!("line {line}: raw control character {c:?} in a string"));
                        }
                        Some(_) => {}
                    }
                }
            }
            c if depth == 0 && !c.is_whitespace() => return Err(format!("line {line}: {c:?} outside any form")),
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("{depth} parentheses left open at the end"));
    }
    Ok(())
}

fn rule(path: impl Into<PathBuf>, source: &str) -> PathRule {
    PathRule::new(path, source)
}

fn host(entry: &str, source: &str) -> HostRule {
    HostRule { host: HostPattern::parse(entry).unwrap(), source: source.into() }
}

/// The defaults for a developer working at the top of a repository, with
/// macOS's temporary directories. The repository is named here rather
/// than found on this machine's disk, so the golden does not depend on it.
fn defaults_with_a_repository() -> Rules {
    let places = Places {
        home: "/Users/dev".into(),
        cwd: "/Users/dev/src/app".into(),
        temp: vec!["/tmp".into(), "/var/folders/zz/xy_123/T".into()],
        config_dir: "/Users/dev/.config/unixagent".into(),
        data_dir: "/Users/dev/.local/share/unixagent".into(),
        journal: None,
    };
    let mut r = Rules::defaults(&places);
    r.write_protect.retain(|p| !p.source.starts_with("default: a repository"));
    r.write_protect.push(rule("/Users/dev/src/app/.git/hooks", "default: a repository's hooks"));
    r.write_protect.push(rule("/Users/dev/src/app/.git/config", "default: a repository's config"));
    r
}

/// A small set: two secrets, a project and a shared checkout in `/tmp`
/// (spelled both ways), the project's hooks and config protected.
fn project() -> Rules {
    Rules {
        read_deny: vec![
            rule("/Users/dev/.ssh", "default: credentials and secrets"),
            rule("/Users/dev/.aws", "default: credentials and secrets"),
        ],
        write_roots: vec![
            rule("/Users/dev/work/site", "default: the working directory"),
            rule("/private/tmp", "default: temporary files"),
        ],
        write_protect: vec![
            rule("/Users/dev/work/site/.git/hooks", "default: a repository's hooks"),
            rule("/Users/dev/work/site/.git/config", "default: a repository's config"),
            rule("/tmp/shared/.git/hooks", "policy.toml [sandbox] write_protect"),
        ],
        ..Rules::default()
    }
}

fn with_hosts() -> Rules {
    let mut r = project();
    let source = "policy.toml [approval.network] allow_hosts";
    r.allow_hosts = vec![host("api.example.com", source), host("*.github.com:443", source)];
    r
}

fn byte_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

/// Paths a careless generator would break the profile with.
fn needing_escapes() -> Rules {
    let odd = "policy.toml [sandbox] read_deny";
    Rules {
        read_deny: vec![
            rule(r#"/Users/dev/say "hi""#, odd),
            rule(r"/Users/dev/back\slash", odd),
            rule("/Users/dev/line\nbreak\tand tab\x7f", odd),
            rule("/Users/dev/café", odd),
            PathRule::new(byte_path(b"/Users/dev/latin1-\xe9"), odd),
            PathRule::new(byte_path(b"/Users/dev/nul\0byte"), odd),
            rule("/etc/ssl/private", "a source with a\nnewline"),
        ],
        write_roots: vec![rule("/Users/dev/./work//x/../proj/", "default: the working directory")],
        write_protect: vec![rule("/Users/dev/work/proj/\"q\"/.git/hooks", "policy.toml [sandbox] write_protect")],
        ..Rules::default()
    }
}

fn line_index(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.starts_with(needle)).unwrap_or_else(|| panic!("no line starts with {needle}:\n{text}"))
}

#[test]
fn golden_defaults_with_a_repository() {
    golden("defaults_with_a_repository", &profile(&defaults_with_a_repository(), None));
}

#[test]
fn golden_no_network() {
    golden("no_network", &profile(&project(), None));
}

#[test]
fn golden_proxy_with_hosts() {
    golden("proxy_with_hosts", &profile(&with_hosts(), Some(3128)));
}

#[test]
fn golden_paths_needing_escapes() {
    golden("paths_needing_escapes", &profile(&needing_escapes(), None));
}

#[test]
fn goldens_have_balanced_parentheses_and_closed_strings() {
    let mut seen = 0;
    for entry in std::fs::read_dir(GOLDEN_DIR).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sbpl") {
            let text = std::fs::read_to_string(&path).unwrap();
            check_syntax(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen += 1;
        }
    }
    assert!(seen >= 4, "expected the four goldens in {GOLDEN_DIR}, found {seen}");
    // The checker itself catches what it is there for.
    for bad in ["(allow", "(allow))", "(allow \"x)", "(allow \"a\nb\")", "(allow \"\\q\")", "x (allow)"] {
        assert!(check_syntax(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_profile_opens_by_refusing_everything() {
    let text = profile(&Rules::default(), None);
    assert!(text.starts_with("(version 1)\n"));
    assert!(line_index(&text, "(deny default)") < line_index(&text, "(allow"));
    check_syntax(&text).unwrap();
}

#[test]
fn reads_are_allowed_before_any_is_denied() {
    let text = profile(&defaults_with_a_repository(), None);
    let allow = line_index(&text, "(allow file-read*)");
    let lines: Vec<&str> = text.lines().collect();
    let denies: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("(deny file-read*")).collect();
    assert!(!denies.is_empty());
    assert!(denies.iter().all(|&d| d > allow));
    assert!(
        lines[allow + 1..].iter().all(|l| !l.starts_with("(allow file-read") || l.contains("/board(/|$)")),
        "no read allow may follow the denies, but the task boards'"
    );
    // The boards come after what hides the data directory around them.
    let hidden = line_index(&text, r#"(deny file-read* (subpath "/Users/dev/.local/share/unixagent"))"#);
    let boards = line_index(
        &text,
        r#"(allow file-read* file-write* (regex #"^/Users/dev/\.local/share/unixagent/sessions/[^/]+/board(/|$)"))"#,
    );
    assert!(hidden < boards, "{text}");
    assert!(text.contains(r#"(deny file-read* (subpath "/Users/dev/.ssh"))"#));
    assert!(text.contains(r#"(deny file-read* (subpath "/Users/dev/.docker/config.json"))"#));
}

#[test]
fn every_protected_path_is_denied_after_the_root_that_holds_it() {
    let rules = defaults_with_a_repository();
    let text = profile(&rules, None);
    let lines: Vec<&str> = text.lines().collect();
    let last_allow = lines.iter().rposition(|l| l.starts_with("(allow file-write")).unwrap();
    let first_deny = lines.iter().position(|l| l.starts_with("(deny file-write")).unwrap();
    assert!(last_allow < first_deny, "a write allow follows a write deny");
    for p in rules.write_protect.iter().chain(&rules.read_deny) {
        let quoted = quote(p.path.as_os_str().as_encoded_bytes()).unwrap();
        let deny = line_index(&text, &format!("(deny file-write* file-link file-clone (subpath {quoted})"));
        for root in rules.write_roots.iter().filter(|r| p.path.starts_with(&r.path)) {
            let root = quote(root.path.as_os_str().as_encoded_bytes()).unwrap();
            assert!(line_index(&text, &format!("(allow file-write* (subpath {root})")) < deny);
        }
    }
}

#[test]
fn hidden_paths_are_not_writable_either() {
    let text = profile(&project(), None);
    assert!(text.contains(r#"(deny file-write* file-link file-clone (subpath "/Users/dev/.ssh"))"#));
    // A path both hidden and protected is denied once.
    let mut rules = project();
    rules.write_protect.push(rule("/Users/dev/.ssh/", "twice"));
    let text = profile(&rules, None);
    assert_eq!(text.matches(r#"file-clone (subpath "/Users/dev/.ssh")"#).count(), 1);
}

#[test]
fn ancestors_lie_strictly_between_the_root_and_the_path() {
    let between = |root: &str, path: &str| -> Vec<PathBuf> { between(Path::new(root), Path::new(path)) };
    assert_eq!(between("/r", "/r/a/b/c"), [Path::new("/r/a"), Path::new("/r/a/b")]);
    assert!(between("/r", "/r/a").is_empty(), "a child of the root has none");
    assert!(between("/r", "/r").is_empty(), "the root itself has none");
    assert!(between("/r", "/other/a/b").is_empty(), "outside the root");
    assert!(between("/r", "/rx/a/b").is_empty(), "a name sharing the root's prefix is not below it");
    assert!(between("/r/a/b", "/r").is_empty(), "above the root");
    assert_eq!(between("/", "/a/b"), [Path::new("/a")]);
}

#[test]
fn directories_above_a_protected_path_inside_a_root_are_pinned() {
    let text = profile(&project(), None);
    let pin = |dirs: &str| format!("(deny file-write-unlink file-write-create {dirs})");
    assert!(text.contains(&pin(r#"(literal "/Users/dev/work/site/.git")"#)));
    // The root is given as /private/tmp and the path as /tmp: still nested,
    // and pinned under both names.
    assert!(text.contains(&pin(r#"(literal "/tmp/shared") (literal "/private/tmp/shared")"#)));
    assert!(text.contains(&pin(r#"(literal "/tmp/shared/.git") (literal "/private/tmp/shared/.git")"#)));
    // Neither the root, nor the protected path (denied whole above), nor
    // anything outside a root.
    assert!(!text.contains(r#"(literal "/Users/dev/work/site")"#));
    assert!(!text.contains(r#"(literal "/Users/dev/work/site/.git/hooks")"#));
    assert!(!text.contains(r#"(literal "/Users/dev")"#));
    // Pins come after everything they guard.
    assert!(line_index(&text, "(deny file-write* file-link") < line_index(&text, "(deny file-write-unlink"));
}

#[test]
fn nested_roots_pin_the_inner_root_inside_the_outer() {
    let rules = Rules {
        write_roots: vec![rule("/w", "outer"), rule("/w/in", "inner")],
        write_protect: vec![rule("/w/in/.git/hooks", "hooks")],
        ..Rules::default()
    };
    assert_eq!(pinned(&rules), [Path::new("/w/in"), Path::new("/w/in/.git")]);
}

#[test]
fn quotes_escape_quotes_backslashes_and_control_characters() {
    let q = |s: &str| quote(s.as_bytes()).unwrap();
    assert_eq!(q("/plain/path"), r#""/plain/path""#);
    assert_eq!(q(r#"/a "b" \c"#), r#""/a \"b\" \\c""#);
    assert_eq!(q("/a\nb\tc\rd\x1b\x7f"), r#""/a\x0Ab\x09c\x0Dd\x1B\x7F""#);
    assert_eq!(
        q("/caf\u{e9}/\u{85}"),
        "\"/caf\u{e9}/\\xC2\\x85\"",
        "UTF-8 stays; a C1 control is escaped byte by byte"
    );
}

#[test]
fn bytes_that_are_not_utf8_are_written_as_hex() {
    assert_eq!(quote(b"/x/\xff\xe9-\xc3").unwrap(), r#""/x/\xFF\xE9-\xC3""#);
}

#[test]
fn a_path_with_a_nul_is_left_out_with_a_note() {
    assert_eq!(quote(b"/a\0b"), None);
    let text = profile(&needing_escapes(), None);
    assert!(text.contains("; Left out: /Users/dev/nul\\0byte holds a NUL byte, so it names no file.\n"));
    assert!(!text.contains('\0'));
    check_syntax(&text).unwrap();
}

#[test]
fn tmp_var_and_etc_are_written_under_private_too() {
    let spelled = |p: &str| spellings(Path::new(p));
    assert_eq!(spelled("/tmp"), [Path::new("/tmp"), Path::new("/private/tmp")]);
    assert_eq!(spelled("/var/folders/x/T"), [Path::new("/var/folders/x/T"), Path::new("/private/var/folders/x/T")]);
    assert_eq!(spelled("/etc/hosts"), [Path::new("/etc/hosts"), Path::new("/private/etc/hosts")]);
    assert_eq!(spelled("/private/tmp/x"), [Path::new("/tmp/x"), Path::new("/private/tmp/x")], "either way round");
    assert_eq!(spelled("/tmpfoo/x"), [Path::new("/tmpfoo/x")], "only whole components");
    assert_eq!(spelled("/private/other"), [Path::new("/private/other")]);
    assert_eq!(spelled("/Users/dev/tmp"), [Path::new("/Users/dev/tmp")]);
    let text = profile(&defaults_with_a_repository(), None);
    assert!(text.contains(r#"(allow file-write* (subpath "/tmp") (subpath "/private/tmp"))"#));
    assert!(text.contains(
        r#"(allow file-write* (subpath "/var/folders/zz/xy_123/T") (subpath "/private/var/folders/zz/xy_123/T"))"#
    ));
}

#[test]
fn paths_are_tidied_before_they_are_written() {
    assert_eq!(tidy(Path::new("/a/./b//c/")), Path::new("/a/b/c"));
    assert_eq!(tidy(Path::new("/a/b/../c")), Path::new("/a/c"));
    assert_eq!(tidy(Path::new("/..")), Path::new("/"));
    let text = profile(&needing_escapes(), None);
    assert!(text.contains(r#"(allow file-write* (subpath "/Users/dev/work/proj"))"#));
    assert!(text.contains(r#"(deny file-write-unlink file-write-create (literal "/Users/dev/work/proj/\"q\""))"#));
}

#[test]
fn comments_cannot_be_broken_by_a_newline_in_a_source() {
    let text = profile(&needing_escapes(), None);
    assert!(text.contains("; a source with a\\nnewline\n"));
    check_syntax(&text).unwrap();
}

#[test]
fn without_a_proxy_nothing_reaches_the_network() {
    // Hosts without a running proxy still mean no network: the profile
    // fails closed.
    let text = profile(&with_hosts(), None);
    assert!(text.contains("\n(deny network*)\n"));
    assert!(!text.contains("(allow network"));
    assert!(!text.contains("unix-socket"));
}

#[test]
fn with_a_proxy_only_its_loopback_port_is_reachable() {
    let text = profile(&with_hosts(), Some(3128));
    let allows: Vec<&str> = text.lines().filter(|l| l.starts_with("(allow network")).collect();
    assert_eq!(allows, [r#"(allow network-outbound (remote ip "localhost:3128"))"#]);
    assert!(line_index(&text, "(deny network*)") < line_index(&text, "(allow network"));
    assert!(text.contains("; It lets through *.github.com:443 (policy.toml [approval.network] allow_hosts).\n"));
    assert!(text.trim_end().ends_with(allows[0]), "nothing after the proxy rule can widen or narrow it");
}

#[test]
fn the_same_rules_give_the_same_profile() {
    assert_eq!(profile(&with_hosts(), Some(3128)), profile(&with_hosts(), Some(3128)));
}

#[test]
fn command_runs_sandbox_exec_with_the_profile_then_the_command() {
    let cmd: Vec<OsString> = vec!["bash".into(), "-c".into(), "echo $HOME".into()];
    let argv = command(&project(), Some(8080), &cmd);
    assert_eq!(argv.len(), 7);
    assert_eq!(argv[..2], ["/usr/bin/sandbox-exec", "-p"]);
    assert_eq!(argv[2], OsString::from(profile(&project(), Some(8080))));
    assert_eq!(argv[3..], ["--", "bash", "-c", "echo $HOME"]);
}

#[test]
fn the_proxy_variables_are_set_inside_the_profile_and_no_proxy_is_dropped() {
    let cmd: Vec<OsString> = vec!["curl".into(), "https://example.com".into()];
    let argv = command_with_proxy(&with_hosts(), Some(3128), &cmd);
    assert_eq!(argv[..4], ["/usr/bin/sandbox-exec", "-p", &profile(&with_hosts(), Some(3128)), "--"]);
    let inner: Vec<String> = argv[4..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(inner[..5], ["/usr/bin/env", "-u", "NO_PROXY", "-u", "no_proxy"]);
    for var in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        assert!(inner.contains(&format!("{var}=http://127.0.0.1:3128")), "{var}: {inner:?}");
    }
    assert_eq!(inner[inner.len() - 3..], ["--", "curl", "https://example.com"]);
    // Without a network there is no proxy to point at.
    let argv = command_with_proxy(&project(), None, &cmd);
    assert_eq!(argv[4..], ["/usr/bin/env", "--", "curl", "https://example.com"]);
}
