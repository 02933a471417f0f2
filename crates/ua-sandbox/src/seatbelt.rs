//! The rules as a macOS Seatbelt profile.
//!
//! macOS has no Landlock; it has Seatbelt. `sandbox-exec -p PROFILE -- cmd`
//! compiles a profile written in SBPL (a small Scheme) and runs `cmd` under
//! it, and every process `cmd` starts inherits it. [`profile`] writes that
//! text from the [`Rules`] and [`command`] the argv. Both are pure, so the
//! profile is checked on any platform against golden files
//! (`tests/golden/seatbelt/*.sbpl`).
//!
//! Where several SBPL rules match an operation, the last one decides. The
//! profile is therefore written in layers, each narrowing the one before:
//! refuse everything; allow what any process needs; allow reads, then hide
//! the denied paths; allow writes below the roots, then refuse the
//! protected and hidden paths and pin the directories above them; refuse
//! the network but for the proxy.
//!
//! What this module does not do:
//!
//! - Resolve symlinks. Seatbelt matches the path the kernel resolved, so
//!   rule paths must be absolute and canonical; the caller resolves them.
//!   Only the links every Mac has (`/tmp`, `/var` and `/etc` into
//!   `/private`) are handled here, by writing both spellings.
//! - Start the proxy or point clients at it. Names are resolved by the
//!   proxy, not in the sandbox (mDNSResponder is out of reach), so
//!   `HTTPS_PROXY` should name `127.0.0.1:PORT` rather than `localhost`.
//! - Degrade. Seatbelt enforces a profile whole or does not run the
//!   command, so [`Mode`](crate::Mode) changes nothing here.
//!
//! ```
//! use std::ffi::OsString;
//! use ua_sandbox::{PathRule, Rules, seatbelt};
//!
//! let mut rules = Rules::default();
//! rules.write_roots.push(PathRule::new("/Users/me/app", "default: the working directory"));
//! rules.write_protect.push(PathRule::new("/Users/me/app/.git/hooks", "default: a repository's hooks"));
//! let argv = seatbelt::command(&rules, None, &[OsString::from("make")]);
//! assert_eq!(argv[..2], ["/usr/bin/sandbox-exec", "-p"]);
//! assert_eq!(argv[3..], ["--", "make"]);
//! let profile = argv[2].to_string_lossy();
//! assert!(profile.contains(r#"(allow file-write* (subpath "/Users/me/app"))"#));
//! assert!(profile.contains(r#"(deny file-write-unlink file-write-create (literal "/Users/me/app/.git"))"#));
//! ```

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::rules::{PathRule, Rules};

/// Where macOS keeps `sandbox-exec`, named in full so that `PATH` cannot
/// put another program in its place.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The argv to run `command` under [`profile`]:
/// `[SANDBOX_EXEC, "-p", PROFILE, "--", command...]`.
///
/// `command` must not be empty; `sandbox-exec` refuses to start without
/// one, so nothing runs unconfined.
pub fn command(rules: &Rules, proxy_port: Option<u16>, command: &[OsString]) -> Vec<OsString> {
    let mut argv: Vec<OsString> =
        vec![SANDBOX_EXEC.into(), "-p".into(), profile(rules, proxy_port).into(), "--".into()];
    argv.extend(command.iter().cloned());
    argv
}

/// Where macOS keeps `env`, named in full like [`SANDBOX_EXEC`].
pub const ENV: &str = "/usr/bin/env";

/// [`command`] with the proxy variables set for `command` (through
/// `env`, which runs inside the profile): what unixagent runs on macOS.
/// The Linux launcher sets the same variables itself.
pub fn command_with_proxy(rules: &Rules, proxy_port: Option<u16>, command: &[OsString]) -> Vec<OsString> {
    let mut inner: Vec<OsString> = vec![ENV.into()];
    if let Some(port) = proxy_port {
        for var in crate::proxy::NO_PROXY_VARS {
            inner.extend(["-u".into(), (*var).into()]);
        }
        let url = crate::proxy::url(port);
        inner.extend(crate::proxy::PROXY_VARS.iter().map(|var| OsString::from(format!("{var}={url}"))));
    }
    inner.push("--".into());
    inner.extend(command.iter().cloned());
    self::command(rules, proxy_port, &inner)
}

/// The SBPL profile enforcing `rules`; `proxy_port` is the loopback port of
/// the allowlisting proxy when the network is allowed (`None`: no network
/// at all).
///
/// The text depends on nothing but the arguments (no clock, no disk), so
/// the same rules always give the same profile.
pub fn profile(rules: &Rules, proxy_port: Option<u16>) -> String {
    let mut out = Profile { text: BASE.to_string(), last_source: None };
    reads(&mut out, rules);
    writes(&mut out, rules);
    network(&mut out, rules, proxy_port);
    out.text
}

/// What any process needs to start, each group with why. Rule paths and
/// the network are written after it, so nothing here can widen them.
const BASE: &str = r#"(version 1)

; Refuse everything that is not allowed below. Where several rules match
; an operation the last one decides, so each layer may narrow the ones
; before it.
(deny default)

; Processes. Commands start others (a shell, make, cc) and every child
; inherits this profile, so exec and fork give nothing away. Signals and
; process inspection stay inside the sandbox: a command can neither kill
; nor read the memory of the terminal, the agent or the user's other
; programs.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; System facts: CPU count, page size, OS version, the process table (ps,
; sysconf, Python's os.cpu_count, the compiler's target detection). Reads
; only, and no more telling than the files the profile lets be read.
(allow sysctl-read)

; Preferences: Apple's toolchain shims (cc, xcrun) read them through
; cfprefsd. They are plist files that may be read anyway; writing them is
; another operation and stays refused.
(allow user-preference-read)
(allow mach-lookup
  (global-name "com.apple.cfprefsd.agent")
  (global-name "com.apple.cfprefsd.daemon"))

; The system services libSystem calls on the way to running anything:
; users and groups (getpwuid for ~, git's author, id), the per-user
; temporary directory behind $TMPDIR (confstr), notify(3).
; Left out on purpose: the keychain (SecurityServer), trustd (it fetches
; URLs named in certificates, a way past the proxy), Launch Services and
; Apple Events (`open` and `osascript` make other programs act outside
; the sandbox), the pasteboard.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.system.notification_center"))
(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))

; POSIX semaphores: Python's multiprocessing locks.
(allow ipc-posix-sem)

; Unix sockets may be made but not bound or connected: socketpair()
; carries child stdio in libuv and wakes asyncio's event loop. Connecting
; is a network operation and refused below, because sockets in the
; temporary directories (tmux's, an ssh agent's) lead out of the sandbox.
(allow system-socket (socket-domain AF_UNIX))

; Terminals are device files and need no IOKit. The command's terminal is
; a pty opened before the sandbox began, so writing to it and its ioctls
; (window size, raw mode) are allowed by name; reading is left to the
; read rules below. /dev/tty is the process's own controlling terminal
; (ssh and sudo prompt there); ptys a command makes itself (script,
; Python's pty) come from /dev/ptmx.
(allow pseudo-tty)
(allow file-read-data file-write-data file-ioctl
  (literal "/dev/ptmx")
  (literal "/dev/tty"))
(allow file-write-data file-ioctl (regex #"^/dev/ttys[0-9]+$"))

; Device files any program may write: output thrown away, zeros, and
; dyld's DTrace helper, opened by every process with USDT probes (Python,
; Node). /dev/fd/N (and /dev/stdout, a link to it) names a descriptor the
; process already holds: bash's >(...) and `tee /dev/stderr` write there.
(allow file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/dtracehelper"))
(allow file-write-data (subpath "/dev/fd"))
"#;

/// Reads: everywhere, then not the hidden paths.
fn reads(out: &mut Profile, rules: &Rules) {
    out.section(
        "Reads: everywhere, since tools, libraries and the dyld cache are spread over the whole disk; \
         then not the paths the rules hide.",
    );
    out.line("(allow file-read*)");
    for r in &rules.read_deny {
        out.rule("deny file-read*", "subpath", &r.path, Some(&r.source));
    }
}

/// Writes: below the roots, then never to protected or hidden paths, nor
/// to the directories that lead to them.
fn writes(out: &mut Profile, rules: &Rules) {
    out.section("Writes: only below the write roots.");
    if rules.write_roots.is_empty() {
        out.comment("There are none: nothing is written but the devices above.");
    }
    for r in &rules.write_roots {
        out.rule("allow file-write*", "subpath", &r.path, Some(&r.source));
    }

    let guarded = guarded(rules);
    if !guarded.is_empty() {
        out.section(
            "Never to a protected or hidden path, even inside a root. file-write* covers creating, \
             changing, deleting and renaming the path and everything below it. A hard link or a clone \
             would be the same file under a name these rules do not cover, so neither is made.",
        );
        for r in guarded {
            out.rule("deny file-write* file-link file-clone", "subpath", &r.path, Some(&r.source));
        }
    }

    if let Some(b) = &rules.boards {
        out.section(
            "The task boards are the exception: a session's board is read and written by its agent \
             and its child agents (the Cedar policy exempts every board of the data directory, and \
             so does this rule; on Linux only the session's own board is opened).",
        );
        out.comment(&b.source);
        for spelling in spellings(&b.path) {
            let escaped = regex_escape(&spelling.to_string_lossy());
            out.line(&format!("(allow file-read* file-write* (regex #\"^{escaped}/[^/]+/board(/|$)\"))"));
        }
    }

    let pinned = pinned(rules);
    if !pinned.is_empty() {
        out.section(
            "The directories between a write root and a path guarded above are pinned: none may be \
             deleted, renamed away, or replaced by renaming another directory to its name. Otherwise \
             `mv .git .g && mkdir -p .git/hooks` would leave a fresh hooks directory that the rules \
             above, which name paths and not files, no longer protect. A rename is checked as \
             file-write-unlink of its source and file-write-create of its destination; the files \
             inside these directories stay writable.",
        );
        for dir in pinned {
            out.rule("deny file-write-unlink file-write-create", "literal", &dir, None);
        }
    }
}

/// Network: none, but the proxy's port on loopback when there is one.
fn network(out: &mut Profile, rules: &Rules, proxy_port: Option<u16>) {
    out.section(
        "Network: none. The default already refuses it; saying so again keeps a later edit of the \
         rules above from opening it. That includes DNS and every Unix socket.",
    );
    out.line("(deny network*)");
    let Some(port) = proxy_port else { return };
    out.section(
        "Except the allowlisting proxy on loopback, the one way out. It decides which hosts are \
         reached and resolves their names itself.",
    );
    if rules.allow_hosts.is_empty() {
        out.comment("It lets no host through.");
    }
    for h in &rules.allow_hosts {
        out.comment(&format!("It lets through {} ({}).", h.host, h.source));
    }
    out.line(&format!("(allow network-outbound (remote ip \"localhost:{port}\"))"));
}

/// The paths nothing may write: the protected ones, then the hidden ones
/// (a hidden file that could be written could be replaced), each once.
fn guarded(rules: &Rules) -> Vec<&PathRule> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for r in rules.write_protect.iter().chain(&rules.read_deny) {
        let path = tidy(&r.path);
        if !seen.contains(&path) {
            seen.push(path);
            out.push(r);
        }
    }
    out
}

/// The directories strictly between a write root and a guarded path below
/// it, outermost first, each once.
///
/// Compared in their `/private` spelling, so that a root written `/tmp`
/// and a path written `/private/tmp/...` are still seen as nested. Where
/// roots nest, the outer one pins the inner root too: it could otherwise be
/// renamed away inside the outer one.
fn pinned(rules: &Rules) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = rules.write_roots.iter().map(|r| private_form(&tidy(&r.path))).collect();
    let mut out = Vec::new();
    for r in guarded(rules) {
        let path = private_form(&tidy(&r.path));
        for root in &roots {
            for dir in between(root, &path) {
                if !out.contains(&dir) {
                    out.push(dir);
                }
            }
        }
    }
    out
}

/// The directories strictly between `root` and `path`, outermost first;
/// none when `path` is not strictly below `root`.
fn between(root: &Path, path: &Path) -> Vec<PathBuf> {
    if path == root || !path.starts_with(root) {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = path.ancestors().skip(1).take_while(|a| *a != root).map(Path::to_path_buf).collect();
    dirs.reverse();
    dirs
}

/// `path` without `.`, repeated or trailing slashes, and with `..` taken
/// lexically: the kernel hands Seatbelt resolved paths, which have none of
/// them, so a rule spelled otherwise would never match.
fn tidy(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The links macOS keeps from `/` into `/private`.
const PRIVATE_LINKS: [&str; 3] = ["/tmp", "/var", "/etc"];

/// `path` in its `/private` spelling when it lies below one of the links.
fn private_form(path: &Path) -> PathBuf {
    if PRIVATE_LINKS.iter().any(|l| path.starts_with(l)) {
        Path::new("/private").join(path.strip_prefix("/").unwrap_or(path))
    } else {
        path.to_path_buf()
    }
}

/// Every way `path` is written in a rule: tidied, and under both names
/// when it lies below one of the links (short name first). Seatbelt sees
/// the resolved `/private` name for files; the short one costs nothing and
/// keeps the rule right if a check is ever made before resolution.
fn spellings(path: &Path) -> Vec<PathBuf> {
    let path = private_form(&tidy(path));
    match path.strip_prefix("/private") {
        Ok(rest) if PRIVATE_LINKS.iter().any(|l| Path::new("/").join(rest).starts_with(l)) => {
            vec![Path::new("/").join(rest), path]
        }
        _ => vec![path],
    }
}

/// `bytes` as an SBPL string literal, or `None` when they hold a NUL: no
/// path can, and the kernel would read the string as cut short there.
///
/// SBPL's reader (TinyScheme's) takes `\"` and `\\` for themselves and
/// `\xHH` for the byte HH. Control characters are written as `\xHH` so
/// that each rule stays on its line, and so are bytes that are not UTF-8,
/// since the profile is text while the kernel compares bytes.
fn quote(bytes: &[u8]) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                c if c.is_control() => {
                    for b in c.encode_utf8(&mut [0; 4]).bytes() {
                        let _ = write!(s, "\\x{b:02X}");
                    }
                }
                c => s.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(s, "\\x{b:02X}");
        }
    }
    s.push('"');
    Some(s)
}

/// Text for a `;` comment: a comment runs to the end of the line, so
/// control characters (a newline above all) are shown escaped.
fn comment_text(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// `s` matched literally in an SBPL regular expression (and inside its
/// `#"…"` string).
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.^$|?*+()[]{}\"".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A profile being written.
struct Profile {
    text: String,
    /// The source named by the last comment, so that a run of rules from
    /// one source is introduced once.
    last_source: Option<String>,
}

impl Profile {
    fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    fn comment(&mut self, text: &str) {
        let text = format!("; {}", comment_text(text));
        self.line(&text);
    }

    /// A blank line and a comment saying why the rules that follow are
    /// there, wrapped to the width of the base.
    fn section(&mut self, why: &str) {
        self.text.push('\n');
        let mut line = String::from(";");
        for word in comment_text(why).split_whitespace() {
            if line.len() + 1 + word.len() > 74 && line.len() > 1 {
                self.line(&line);
                line = String::from(";");
            }
            line.push(' ');
            line.push_str(word);
        }
        self.line(&line);
        self.last_source = None;
    }

    /// `(ACTION (FILTER "spelling") ...)` over every spelling of `path`,
    /// after a comment naming `source` when it differs from the last one.
    fn rule(&mut self, action: &str, filter: &str, path: &Path, source: Option<&str>) {
        if let Some(source) = source
            && self.last_source.as_deref() != Some(source)
        {
            self.comment(source);
            self.last_source = Some(source.to_string());
        }
        let mut filters = String::new();
        for spelling in spellings(path) {
            let Some(quoted) = quote(spelling.as_os_str().as_encoded_bytes()) else {
                let shown = spelling.to_string_lossy().replace('\0', "\\0");
                self.comment(&format!("Left out: {shown} holds a NUL byte, so it names no file."));
                return;
            };
            let _ = write!(filters, " ({filter} {quoted})");
        }
        self.line(&format!("({action}{filters})"));
    }
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
