//! Argument-aware rules for system programs. One function, one match: each
//! arm names the programs it covers and the only wildcard arm is the final
//! default (unknown programs are Write). Attack tests live in the
//! classification corpus (`tests/fixtures/classify-corpus.txt`) and `tests.rs`.

use super::args::Args;
use super::code::{Inline, Lang, inline, inspect};
use super::git;
use crate::parse::Part;
use crate::risk::Risk;

/// A rule's verdict on one program invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The risk.
    pub risk: Risk,
    /// Why, in a few words.
    pub reason: &'static str,
}

pub(crate) const fn v(risk: Risk, reason: &'static str) -> Verdict {
    Verdict { risk, reason }
}

impl Verdict {
    /// At least Write: an editor evaluating code still writes files.
    fn max_write(self) -> Verdict {
        if self.risk < Risk::Write { v(Risk::Write, "editor: writes files and runs commands") } else { self }
    }
}

const RO: Verdict = v(Risk::ReadOnly, "reads and prints");

/// Pagers and programs that page on a terminal: the pager runs commands
/// (`!cmd` in less), follows LESSOPEN, opens an editor. Under unixagent
/// stdout is a terminal unless piped or redirected.
fn pages(part: &Part, reason: &'static str) -> Verdict {
    let vars: &[&str] = match part.program().rsplit('/').next().unwrap_or_default() {
        "man" => &["MANPAGER", "PAGER"],
        "journalctl" | "systemctl" => &["SYSTEMD_PAGER", "PAGER"],
        _ => &[],
    };
    if part.stdout_redirected || super::pager_disabled(part, vars) { RO } else { v(Risk::Write, reason) }
}

/// What reading code tells about its risk (see [`super::code`]): the
/// network, then code that cannot be read, then deletion; otherwise it
/// runs code that changes what it likes, which is Write. Shell commands it
/// runs are walked as parts of their own.
fn code_verdict(lang: Lang, code: &Inline) -> Verdict {
    if code.dynamic {
        return v(Risk::Destructive, "the code it runs is only known at run time");
    }
    let i = inspect(lang, &code.text);
    if i.network {
        v(Risk::Network, "its code uses the network")
    } else if let Some(why) = i.hidden {
        v(Risk::Destructive, why)
    } else if i.deletes {
        v(Risk::Destructive, "its code deletes files or ends processes")
    } else {
        v(Risk::Write, "runs inline code")
    }
}

/// Interpreters: `python -c`, `perl -e`, `node -e`, a here-document, a
/// script file, or stdin.
fn interpreter(name: &str, part: &Part) -> Verdict {
    let a = Args(part.args());
    let Some(lang) = Lang::of(name) else { return v(Risk::Write, "runs a script") };
    if a.0.iter().all(|x| matches!(x.text.as_str(), "--version" | "-V" | "-v" | "--help" | "-h")) && !a.0.is_empty() {
        return RO;
    }
    if lang == Lang::Python
        && let Some(m) = a.value("-m", "")
    {
        return match m {
            "http.server" | "SimpleHTTPServer" | "smtpd" | "ftplib" => {
                v(Risk::Network, "serves or talks over the network")
            }
            "pip" | "ensurepip" => v(Risk::Network, "installs packages"),
            "pytest" | "unittest" | "doctest" | "mypy" | "pyflakes" | "compileall" | "tox" => {
                v(Risk::BuildTest, "runs tests")
            }
            "json.tool" | "tabnanny" | "pydoc" | "platform" | "sysconfig" | "site" => RO,
            _ => v(Risk::Write, "runs a module"),
        };
    }
    // `php -S host:port` and `ruby -run -e httpd` serve files.
    if name == "php" && a.value("-S", "").is_some() || name == "ruby" && a.has("-run") {
        return v(Risk::Network, "serves files over the network");
    }
    if let Some(code) = inline(name, lang, part.args()) {
        return code_verdict(lang, &code);
    }
    if a.operands().iter().any(|o| o.text != "-") {
        return v(Risk::Write, "runs a script");
    }
    match part.stdin_text() {
        Some(text) => {
            code_verdict(lang, &Inline { text: text.to_string(), dynamic: text.contains("$(") || text.contains('`') })
        }
        None => v(Risk::Destructive, "reads code from stdin, which cannot be read here"),
    }
}

/// Terminal control sequences from echo/printf can spoof unixagent's own
/// OSC 133 markers or write the clipboard (OSC 52).
fn prints(a: Args<'_>, interprets: bool) -> Verdict {
    let t = a.joined();
    let esc = t.contains('\u{1b}')
        || (interprets
            && (t.contains("\\e")
                || t.contains("\\033")
                || t.contains("\\x1b")
                || t.contains("\\x1B")
                || t.contains("\\u001b")));
    if esc { v(Risk::Write, "emits terminal control sequences") } else { RO }
}

fn sed(a: Args<'_>) -> Verdict {
    if a.flag('i', "in-place") || a.has_prefix("-i") {
        return v(Risk::Write, "edits files in place");
    }
    if a.value("-f", "--file").is_some() {
        return v(Risk::Write, "runs a sed script file");
    }
    let scripts: Vec<&str> = match a.value("-e", "--expression") {
        Some(e) => vec![e],
        None => a.operands().first().map(|x| vec![x.text.as_str()]).unwrap_or_default(),
    };
    for s in scripts {
        for c in sed_commands(s) {
            // `e` alone runs the pattern space as a command: the input
            // decides what runs. `e CMD` is walked as a part of its own.
            if c.trim() == "e" {
                return v(Risk::Destructive, "sed runs its input as commands");
            }
            if let Some(body) = c.strip_prefix('s') {
                let delim = body.chars().next().unwrap_or('/');
                let flags = body[delim.len_utf8().min(body.len())..].splitn(3, delim).nth(2).unwrap_or("");
                let flags = flags.split('w').next().unwrap_or("");
                if flags.contains('e') {
                    return v(Risk::Destructive, "sed runs the substituted text as a command");
                }
            }
        }
        if sed_commands(s).any(|c| c.starts_with(['e', 'w', 'W'])) {
            return v(Risk::Write, "sed script writes files or runs commands");
        }
        let t = s.trim();
        let flags_of_s = t.rsplit(['/', '|', '#', ':', ',']).next().unwrap_or("");
        if t.contains("w ")
            || t.contains("W ")
            || t.contains("\ne")
            || t.starts_with('e')
            || t.contains(";e")
            || t.contains("r ")
            || (t.starts_with('s') && flags_of_s.chars().any(|c| c == 'e' || c == 'w'))
        {
            return v(Risk::Write, "sed script writes files or runs commands");
        }
    }
    RO
}

/// The commands of a sed script with their addresses stripped (`1e id` →
/// `e id`, `/x/,$w out` → `w out`).
pub(crate) fn sed_commands(script: &str) -> impl Iterator<Item = &str> {
    script.split([';', '\n']).map(|cmd| {
        let mut t = cmd.trim_start();
        loop {
            let before = t.len();
            t = t.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '!' | '+' | ' '));
            if let Some(rest) = t.strip_prefix('/') {
                t = rest.find('/').map_or("", |e| &rest[e + 1..]);
            }
            if t.len() == before {
                break t;
            }
        }
    })
}

fn awk(name: &str, a: Args<'_>) -> Verdict {
    if a.0
        .iter()
        .any(|x| x.text == "-l" || x.text.starts_with("--load") || x.text.starts_with("-l") && x.text.len() > 2)
    {
        return v(Risk::Destructive, "awk loads a native extension");
    }
    if a.value("-f", "--file").is_some() || a.has("-i") || a.value("-i", "--include").is_some() {
        return v(Risk::Write, "runs an awk program file or extension");
    }
    let Some(code) = inline(name, Lang::Awk, a.0) else { return RO };
    let verdict = code_verdict(Lang::Awk, &code);
    if verdict.risk > Risk::Write {
        return verdict;
    }
    let code = code.text;
    let prints_away = code.split("print").skip(1).any(|seg| {
        let stmt = seg.split([';', '}']).next().unwrap_or("");
        stmt.contains('>') || stmt.contains('|')
    });
    if code.contains("system")
        || code.contains("getline")
        || code.contains("|&")
        || prints_away
        || code.contains("fflush(") && code.contains('|')
    {
        return v(Risk::Write, "awk program runs commands or writes files");
    }
    RO
}

fn find(a: Args<'_>) -> Verdict {
    if a.has("-delete") {
        return v(Risk::Destructive, "find -delete removes files");
    }
    if a.has("-fprint") || a.has("-fprint0") || a.has("-fprintf") || a.has("-fls") {
        return v(Risk::Write, "find writes a report file");
    }
    // -exec commands are classified as their own parts.
    RO
}

/// Compilers, build tools and package managers, whose `--version` and
/// `--help` only print.
fn is_toolchain(name: &str) -> bool {
    matches!(
        name,
        "rustc"
            | "cargo"
            | "rustup"
            | "gcc"
            | "g++"
            | "cc"
            | "c++"
            | "clang"
            | "clang++"
            | "make"
            | "gmake"
            | "cmake"
            | "ninja"
            | "meson"
            | "go"
            | "javac"
            | "java"
            | "tsc"
            | "npm"
            | "pnpm"
            | "yarn"
            | "pip"
            | "pip3"
            | "uv"
            | "poetry"
            | "gem"
            | "bundle"
            | "mvn"
            | "gradle"
            | "zig"
            | "ghc"
            | "dotnet"
            | "docker"
            | "podman"
            | "kubectl"
            | "terraform"
            | "gh"
            | "git"
            | "pytest"
            | "deno"
            | "bun"
    )
}

fn curl_like() -> Verdict {
    v(Risk::Network, "talks to another host")
}

fn package_manager(sub: Option<&str>, read: &[&str], build: &[&str]) -> Verdict {
    match sub {
        Some(s) if read.contains(&s) => RO,
        Some(s) if build.contains(&s) => v(Risk::BuildTest, "builds or tests"),
        None => RO,
        Some(_) => v(Risk::Network, "fetches or publishes packages"),
    }
}

/// The rule for one system program. `name` is the program's basename,
/// already known to live in a system directory (or be a builtin).
pub fn rule(name: &str, part: &Part) -> Verdict {
    let a = Args(part.args());
    if is_toolchain(name)
        && !a.0.is_empty()
        && a.0
            .iter()
            .all(|x| matches!(x.text.as_str(), "--version" | "-V" | "-v" | "--help" | "-h" | "version" | "-vV"))
    {
        return v(Risk::ReadOnly, "prints its version or help");
    }
    let ops = a.operands();
    let name = if name.starts_with("mkfs.") { "mkfs" } else { name };
    match name {
        // Shell builtins and read-only utilities.
        ":" | "true" | "false" | "test" | "[" | "[[" | "pwd" | "cd" | "pushd" | "popd" | "dirs" | "ls" | "dir"
        | "vdir" | "whoami" | "id" | "groups" | "uname" | "uptime" | "df" | "du" | "free" | "ps" | "pgrep"
        | "pidof" | "stat" | "file" | "which" | "whereis" | "type" | "basename" | "dirname" | "realpath"
        | "readlink" | "cat" | "tac" | "head" | "tail" | "wc" | "nl" | "od" | "hexdump" | "strings" | "cut" | "tr"
        | "paste" | "join" | "column" | "comm" | "cmp" | "diff" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum"
        | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" | "base64" | "base32" | "basenc" | "expr" | "seq"
        | "yes" | "sleep" | "printenv" | "locale" | "tty" | "nproc" | "lscpu" | "lsblk" | "lsusb" | "lspci"
        | "lsmod" | "findmnt" | "last" | "w" | "who" | "users" | "getent" | "cal" | "factor" | "numfmt" | "fold"
        | "fmt" | "expand" | "unexpand" | "rev" | "jq" | "grep" | "egrep" | "fgrep" | "zgrep" | "zcat" | "ag"
        | "ack" | "lsof" | "ss" | "netstat" | "arch" | "getconf" | "wait" | "jobs" | "hash" | "help" | "diff3"
        | "sdiff" | "lsattr" | "namei" | "tput" | "tsort" | "shuf" | "look" | "iconv" | "ldd" | "nm" | "objdump"
        | "readelf" | "size" | "zdiff" | "xzcat" | "bzcat" | "zstdcat" | "lz4cat" | "vmstat" | "iostat" | "mpstat"
        | "pstree" | "pwdx" | "pmap" | "sensors" => RO,
        "command" if a.flag('v', "") || a.flag('V', "") => RO,
        "make" | "gmake" if a.0.iter().any(|x| matches!(x.text.as_str(), "install" | "uninstall")) => {
            v(Risk::Write, "installs outside the project")
        }
        "date" => {
            if a.flag('s', "set") {
                v(Risk::Privileged, "sets the system clock")
            } else {
                RO
            }
        }
        "echo" => prints(a, a.flag('e', "")),
        "printf" => prints(a, true),
        "env" => RO,
        "rg" => {
            if a.value("", "--pre").is_some() {
                v(Risk::Write, "rg --pre runs a preprocessor")
            } else {
                RO
            }
        }
        "tree" => {
            if a.value("-o", "").is_some() {
                v(Risk::Write, "writes output file")
            } else {
                RO
            }
        }
        "sort" => {
            if a.value("-o", "--output").is_some() || a.value("", "--compress-program").is_some() {
                v(Risk::Write, "writes output file")
            } else {
                RO
            }
        }
        "uniq" => {
            if ops.len() >= 2 {
                v(Risk::Write, "second operand is an output file")
            } else {
                RO
            }
        }
        "xxd" => {
            if ops.len() >= 2 {
                v(Risk::Write, "second operand is an output file")
            } else {
                RO
            }
        }
        "tee" => {
            if ops.iter().all(|o| o.text == "/dev/null") {
                RO
            } else {
                v(Risk::Write, "writes files")
            }
        }
        "sed" | "gsed" => sed(a),
        "awk" | "gawk" | "mawk" | "nawk" => awk(name, a),
        "find" => find(a),
        "hostname" => {
            if ops.is_empty() {
                RO
            } else {
                v(Risk::Privileged, "sets the host name")
            }
        }
        "ip" => match a.first_operand() {
            Some("addr" | "a" | "address" | "route" | "r" | "link" | "l" | "neigh" | "n" | "rule")
                if !a.has("add")
                    && !a.has("del")
                    && !a.has("set")
                    && !a.has("flush")
                    && !a.has("change")
                    && !a.has("replace") =>
            {
                RO
            }
            None => RO,
            _ => v(Risk::Privileged, "changes network configuration"),
        },
        "ifconfig" => {
            if ops.len() <= 1 {
                RO
            } else {
                v(Risk::Privileged, "changes network configuration")
            }
        }
        "dmesg" => {
            if a.flag('C', "clear") || a.flag('c', "read-clear") {
                v(Risk::Privileged, "clears the kernel log")
            } else {
                RO
            }
        }
        "top" | "htop" | "btop" | "atop" => {
            if a.flag('b', "batch") {
                RO
            } else {
                v(Risk::Write, "interactive: can kill and renice processes")
            }
        }
        "history" => {
            if ops.is_empty()
                && a.0.iter().all(|x| x.text.starts_with('-') && x.text.chars().skip(1).all(|c| c.is_ascii_digit()))
                || a.0.iter().all(|x| x.text.chars().all(|c| c.is_ascii_digit()))
            {
                RO
            } else {
                v(Risk::Write, "changes the shell history")
            }
        }
        // Pagers and manuals page on a terminal.
        "less" | "more" | "most" | "pg" => pages(part, "pager runs commands, LESSOPEN and an editor"),
        "man" | "info" | "journalctl" => {
            if a.has("--vacuum-size") || a.has_prefix("--vacuum") || a.has("--rotate") {
                v(Risk::Privileged, "deletes system logs")
            } else if a.has("--no-pager") {
                RO
            } else {
                pages(part, "pages its output through a pager")
            }
        }
        "systemctl" | "loginctl" | "timedatectl" | "hostnamectl" | "localectl" | "resolvectl" | "networkctl" => {
            match a.first_operand() {
                None
                | Some(
                    "status" | "list-units" | "list-unit-files" | "list-timers" | "list-sockets" | "show" | "is-active"
                    | "is-enabled" | "is-failed" | "cat" | "list-sessions" | "list-users" | "list-dependencies",
                ) => {
                    if a.has("--no-pager") {
                        RO
                    } else {
                        pages(part, "pages its output through a pager")
                    }
                }
                Some(_) => v(Risk::Privileged, "changes system services or settings"),
            }
        }
        // Editors run commands and write files.
        "emacs" if inline(name, Lang::Lisp, part.args()).is_some() => {
            inline(name, Lang::Lisp, part.args()).map_or(RO, |c| code_verdict(Lang::Lisp, &c).max_write())
        }
        "vi" | "vim" | "nvim" | "view" | "vimdiff" | "nano" | "pico" | "emacs" | "ed" | "ex" | "joe" | "mcedit"
        | "micro" | "hx" | "helix" | "code" | "subl" | "kak" => {
            v(Risk::Write, "editor: writes files and runs commands")
        }
        // Shell state that persists into the user's session.
        "alias" | "unalias" | "export" | "declare" | "typeset" | "readonly" | "local" | "set" | "shopt" | "trap"
        | "umask" | "ulimit" | "bind" | "complete" | "enable" | "unset" | "setopt" | "unsetopt" | "disown" | "fc" => {
            let lists = a.0.is_empty() || a.0.iter().all(|x| x.text == "-p" || x.text == "-l");
            if lists { RO } else { v(Risk::Write, "changes the live shell's state") }
        }
        "source" | "." => v(Risk::Write, "runs a file in the live shell"),
        "exec" => v(Risk::Write, "replaces or rewires the live shell"),
        "exit" | "logout" | "kill" | "pkill" | "killall" | "killall5" | "skill" => {
            v(Risk::Destructive, "ends processes")
        }
        "read" | "mapfile" | "readarray" | "let" | "getopts" | "command" | "builtin" | "eval" | "sh" | "bash"
        | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "rbash" | "busybox" => {
            v(Risk::Write, "runs code or changes shell variables")
        }
        // Interpreters.
        "python" | "python2" | "python3" | "perl" | "ruby" | "node" | "nodejs" | "deno" | "bun" | "php" | "lua"
        | "luajit" | "Rscript" | "julia" | "tclsh" | "wish" | "osascript" | "pwsh" | "powershell" | "expect" => {
            interpreter(name, part)
        }
        n if n.starts_with("python3.") => interpreter(name, part),
        // Files.
        "rm" | "shred" | "wipe" | "srm" | "unlink" => v(Risk::Destructive, "removes files"),
        "cp" | "mv" | "ln" | "mkdir" | "rmdir" | "touch" | "install" | "chmod" | "chown" | "chgrp" | "truncate"
        | "mktemp" | "rename" | "split" | "csplit" | "patch" | "dd" | "mkfifo" | "mknod" | "chattr" | "setfacl"
        | "fallocate" | "sync" => v(Risk::Write, "changes files"),
        "tar" | "bsdtar" => {
            if a.flag('t', "list") && !a.flag('x', "extract") && !a.flag('c', "create") {
                RO
            } else {
                v(Risk::Write, "creates or extracts archives")
            }
        }
        "zip" | "unzip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "lz4"
        | "7z" | "rar" | "unrar" | "compress" | "uncompress" => {
            if a.flag('l', "list") || a.flag('t', "test") || a.flag('c', "stdout") {
                RO
            } else {
                v(Risk::Write, "compresses or extracts files")
            }
        }
        "crontab" => {
            if a.flag('l', "") {
                RO
            } else {
                v(Risk::Write, "changes scheduled jobs")
            }
        }
        "at" | "batch" | "nohup" | "setsid" | "screen" | "tmux" => {
            v(Risk::Write, "starts programs that outlive the command")
        }
        "stty" | "reset" | "clear" | "tabs" | "setterm" => {
            if a.0.is_empty() && name == "stty" {
                RO
            } else {
                v(Risk::Write, "changes the terminal")
            }
        }
        "git" => git::rule(part),
        "unixagent" => {
            let args: Vec<&str> = a.0.iter().map(|x| x.text.as_str()).collect();
            match crate::own_cli::invocation(&args) {
                crate::own_cli::Invocation::Tool(risk, why) => v(risk, why),
                // It gates its own commands and runs them in its own
                // sandbox; starting it writes a session of its own.
                crate::own_cli::Invocation::Agent => v(Risk::Write, "starts a child agent"),
                // The walker reads the code it runs as parts of their own.
                crate::own_cli::Invocation::Shell(_) | crate::own_cli::Invocation::Sandboxed(_) => {
                    v(Risk::ReadOnly, "runs the command it is given")
                }
            }
        }
        // Build and test.
        "make" | "gmake" | "cmake" | "ninja" | "meson" | "ctest" | "gcc" | "g++" | "cc" | "c++" | "clang"
        | "clang++" | "rustc" | "javac" | "tsc" | "pytest" | "tox" | "nox" | "jest" | "mocha" | "vitest" | "eslint"
        | "prettier" | "black" | "ruff" | "mypy" | "flake8" | "pylint" | "shellcheck" | "rustfmt" | "gofmt" | "mvn"
        | "gradle" | "ant" | "bazel" | "buck" | "sbt" | "dune" | "zig" | "ghc" | "scons" | "autoreconf" => {
            v(Risk::BuildTest, "builds or tests the project")
        }
        "cargo" => package_manager(
            a.first_operand(),
            &["tree", "metadata", "--version", "version", "locate-project", "pkgid", "verify-project"],
            &[
                "build", "b", "test", "t", "check", "c", "run", "r", "clippy", "fmt", "doc", "bench", "nextest",
                "clean", "miri", "expand", "llvm-cov",
            ],
        ),
        "go" => package_manager(
            a.first_operand(),
            &["version", "env", "list", "doc", "help"],
            &["build", "test", "vet", "run", "fmt", "generate", "clean"],
        ),
        "npm" | "pnpm" | "yarn" => package_manager(
            a.first_operand(),
            &["ls", "list", "outdated", "view", "info", "--version", "-v", "why"],
            &["test", "t", "run", "run-script", "build", "start", "lint"],
        ),
        "npx" | "pnpx" | "bunx" | "uvx" | "pipx" => v(Risk::Network, "downloads and runs a package"),
        "pip" | "pip3" | "uv" | "poetry" | "pipenv" | "gem" | "bundle" | "composer" | "conda" | "mamba" => {
            package_manager(
                a.first_operand(),
                &["list", "show", "freeze", "check", "--version", "tree"],
                &["run", "test", "build", "exec"],
            )
        }
        "dotnet" => package_manager(
            a.first_operand(),
            &["--version", "--info", "--list-sdks"],
            &["build", "test", "run", "format", "clean"],
        ),
        // Network.
        "curl" | "wget" | "ssh" | "scp" | "sftp" | "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ftp" | "ping"
        | "ping6" | "traceroute" | "tracepath" | "mtr" | "dig" | "nslookup" | "host" | "whois" | "mosh" | "http"
        | "https" | "xh" | "aria2c" | "lftp" | "nmap" | "gh" | "glab" | "aws" | "gcloud" | "az" | "kubectl"
        | "helm" | "terraform" | "tofu" | "ansible" | "ansible-playbook" | "vagrant" | "rclone" | "s3cmd"
        | "openssl" | "lynx" | "links" | "w3m" | "fetch" | "ssh-copy-id" | "ssh-keyscan" | "tailscale" | "brew"
        | "autossh" => curl_like(),
        "rsync" => {
            if ops.iter().any(|o| o.text.contains(':')) {
                curl_like()
            } else {
                v(Risk::Write, "copies files")
            }
        }
        "docker" | "podman" | "nerdctl" => match a.first_operand() {
            Some(
                "ps" | "images" | "inspect" | "logs" | "version" | "info" | "stats" | "top" | "history" | "port"
                | "diff",
            ) => RO,
            Some("pull" | "push" | "login" | "search") => curl_like(),
            // The docker daemon runs as root: `docker run -v /:/h` owns the host.
            _ => v(Risk::Privileged, "the container daemon acts as root"),
        },
        // Privilege and system administration.
        "sudo"
        | "doas"
        | "su"
        | "pkexec"
        | "runuser"
        | "chroot"
        | "nsenter"
        | "unshare"
        | "setcap"
        | "capsh"
        | "mount"
        | "umount"
        | "swapon"
        | "swapoff"
        | "losetup"
        | "cryptsetup"
        | "modprobe"
        | "insmod"
        | "rmmod"
        | "sysctl"
        | "service"
        | "update-rc.d"
        | "chkconfig"
        | "useradd"
        | "userdel"
        | "usermod"
        | "groupadd"
        | "groupdel"
        | "passwd"
        | "chpasswd"
        | "chsh"
        | "chfn"
        | "visudo"
        | "vipw"
        | "iptables"
        | "ip6tables"
        | "nft"
        | "ufw"
        | "firewall-cmd"
        | "setenforce"
        | "apt"
        | "apt-get"
        | "aptitude"
        | "dpkg"
        | "yum"
        | "dnf"
        | "rpm"
        | "pacman"
        | "zypper"
        | "apk"
        | "snap"
        | "flatpak"
        | "update-alternatives"
        | "ldconfig"
        | "grub-install"
        | "update-grub"
        | "efibootmgr"
        | "hwclock"
        | "dmidecode"
        | "tcpdump"
        | "strace"
        | "ltrace"
        | "gdb"
        | "perf"
        | "bpftrace"
        | "auditctl"
        | "chrt"
        | "renice"
        | "taskset" => {
            if matches!(name, "mount") && a.0.is_empty()
                || matches!(name, "sysctl") && (a.flag('a', "all") || a.flag('n', "values")) && !a.flag('w', "write")
                || matches!(name, "dpkg") && (a.flag('l', "list") || a.flag('L', "listfiles") || a.flag('s', "status"))
                || matches!(name, "rpm") && a.flag('q', "query")
                || matches!(name, "apt" | "apt-cache")
                    && matches!(a.first_operand(), Some("list" | "show" | "search" | "policy"))
            {
                RO
            } else {
                v(Risk::Privileged, "needs or changes system privileges")
            }
        }
        "apt-cache" | "dpkg-query" => RO,
        "mkfs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "gdisk" | "parted" | "shutdown" | "reboot" | "halt"
        | "poweroff" | "init" | "telinit" => v(Risk::Privileged, "administers disks or power"),
        _ => v(Risk::Write, "unknown program: it may do anything"),
    }
}
