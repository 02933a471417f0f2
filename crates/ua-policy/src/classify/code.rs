//! Code in another language handed over on the command line: `python3 -c`,
//! `perl -e`, `node -e`, `awk 'BEGIN{system(…)}'`, a here-document given
//! to an interpreter.
//!
//! The risk of such a command is what its code can do, so the code is
//! read, not parsed: this module knows, per language, the calls that run a
//! shell command line or a program (`os.system`, `subprocess.run`,
//! `child_process.execSync`, backquotes, `system()` in awk …) and the
//! names that delete files or open connections. It returns the shell
//! commands it found, which the walker parses as shell (so `python3 -c
//! 'import os; os.system("rm -rf /")'` meets the deny list as `rm -rf /`),
//! and what else the code does. Code it cannot read — a command built at
//! run time, `eval` of a computed string, base64 or hex that is decoded and
//! run, code that is itself a shell variable — is *hidden*, which the
//! classifier rates at least Destructive.
//!
//! This is reading, not understanding: a call it does not know passes
//! unseen. The language tables are the place to add one.

use super::args::{Args, option_args};
use crate::parse::Arg;

/// Languages whose code the classifier reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Perl,
    Ruby,
    JavaScript,
    Php,
    Lua,
    R,
    Julia,
    Tcl,
    AppleScript,
    PowerShell,
    Lisp,
    Awk,
}

impl Lang {
    /// The language a system program runs code in.
    pub fn of(program: &str) -> Option<Lang> {
        Some(match program {
            p if p.starts_with("python") => Lang::Python,
            "perl" => Lang::Perl,
            "ruby" | "irb" => Lang::Ruby,
            "node" | "nodejs" | "deno" | "bun" => Lang::JavaScript,
            "php" => Lang::Php,
            "lua" | "luajit" => Lang::Lua,
            "Rscript" | "R" => Lang::R,
            "julia" => Lang::Julia,
            "tclsh" | "wish" | "expect" => Lang::Tcl,
            "osascript" => Lang::AppleScript,
            "pwsh" | "powershell" => Lang::PowerShell,
            "emacs" => Lang::Lisp,
            "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
            _ => return None,
        })
    }
}

/// Code given on the command line, with whether any of it is only known at
/// run time (`python3 -c "$CODE"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inline {
    pub text: String,
    pub dynamic: bool,
}

/// The code `program` is handed in its arguments, if any.
pub fn inline(program: &str, lang: Lang, args: &[Arg]) -> Option<Inline> {
    let flags: &[&str] = match (program, lang) {
        ("deno", _) | ("bun", _) if Args(args).first_operand() == Some("eval") => {
            let ops = Args(args).operands();
            let code = ops.get(1)?;
            return Some(Inline { text: code.text.clone(), dynamic: code.dynamic });
        }
        (_, Lang::Python) => &["-c"],
        (_, Lang::Perl | Lang::Ruby | Lang::Lua | Lang::AppleScript) => &["-e", "-E"],
        (_, Lang::JavaScript) => &["-e", "--eval", "-p", "--print"],
        (_, Lang::Php) => &["-r", "-R", "-B", "-E"],
        (_, Lang::R) => &["-e"],
        (_, Lang::Julia) => &["-e", "--eval", "-E", "--print"],
        (_, Lang::Tcl) => &["-c"],
        (_, Lang::PowerShell) => &["-c", "-Command", "-command", "-e", "-EncodedCommand", "-enc"],
        (_, Lang::Lisp) => &["--eval", "-eval"],
        (_, Lang::Awk) => {
            let a = Args(args);
            let sources = option_args(args, &["-e", "--source"]);
            if !sources.is_empty() {
                return Some(join(sources));
            }
            if !option_args(args, &["-f", "--file"]).is_empty() {
                return None;
            }
            // The program is the first operand, after `-F x` and `-v a=b`.
            let mut skip = false;
            for x in a.0 {
                let t = x.text.as_str();
                if skip {
                    skip = false;
                } else if matches!(t, "-F" | "-v" | "--field-separator" | "--assign") {
                    skip = true;
                } else if !t.starts_with('-') || t == "-" {
                    return Some(Inline { text: x.text.clone(), dynamic: x.dynamic });
                }
            }
            return None;
        }
    };
    let found = option_args(args, flags);
    (!found.is_empty()).then(|| join(found))
}

fn join(values: Vec<(&str, bool)>) -> Inline {
    Inline {
        text: values.iter().map(|(t, _)| *t).collect::<Vec<_>>().join("\n"),
        dynamic: values.iter().any(|(_, d)| *d),
    }
}

/// What a piece of code does, as far as reading it tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inspection {
    /// Shell command lines the code runs (argv forms are quoted and joined).
    pub commands: Vec<String>,
    /// It deletes files, directories or processes.
    pub deletes: bool,
    /// It opens network connections.
    pub network: bool,
    /// Why part of it cannot be read, if so.
    pub hidden: Option<&'static str>,
}

/// How a call's arguments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// A shell command line, or a program and its arguments as a list.
    Shell,
    /// A program and its arguments as separate words (`exec rm -rf x` in Tcl).
    Words,
    /// Code in the same language (`eval`, Python's `exec`).
    Code,
}

/// Calls that run commands or code, per language: the name (matched at a
/// word boundary), how its argument is read, and a name the code must also
/// contain for the call to be the one meant (`exec` in JavaScript is
/// `child_process.exec` only where `child_process` is loaded; elsewhere it
/// is `RegExp.prototype.exec`).
fn calls(lang: Lang) -> &'static [(&'static str, Call, &'static str)] {
    use Call::*;
    match lang {
        Lang::Python => &[
            ("os.system", Shell, ""),
            ("os.popen", Shell, ""),
            ("subprocess.run", Shell, ""),
            ("subprocess.call", Shell, ""),
            ("subprocess.check_call", Shell, ""),
            ("subprocess.check_output", Shell, ""),
            ("subprocess.Popen", Shell, ""),
            ("subprocess.getoutput", Shell, ""),
            ("subprocess.getstatusoutput", Shell, ""),
            ("pty.spawn", Shell, ""),
            ("os.execv", Shell, ""),
            ("os.execvp", Shell, ""),
            ("os.execl", Shell, ""),
            ("os.execlp", Shell, ""),
            ("system", Shell, "import"),
            ("popen", Shell, "import"),
            ("Popen", Shell, "import"),
            ("check_output", Shell, "import"),
            ("check_call", Shell, "import"),
            ("getoutput", Shell, "import"),
            ("exec", Code, ""),
            ("eval", Code, ""),
        ],
        Lang::Perl => &[
            ("system", Shell, ""),
            ("exec", Shell, ""),
            ("qx", Shell, ""),
            ("readpipe", Shell, ""),
            ("eval", Code, ""),
        ],
        Lang::Ruby => &[
            ("system", Shell, ""),
            ("exec", Shell, ""),
            ("spawn", Shell, ""),
            ("IO.popen", Shell, ""),
            ("Open3.capture2", Shell, ""),
            ("Open3.capture2e", Shell, ""),
            ("Open3.capture3", Shell, ""),
            ("Open3.popen3", Shell, ""),
            ("PTY.spawn", Shell, ""),
            ("eval", Code, ""),
            ("instance_eval", Code, ""),
        ],
        Lang::JavaScript => &[
            ("execSync", Shell, ""),
            ("execFileSync", Shell, ""),
            ("spawnSync", Shell, ""),
            ("exec", Shell, "child_process"),
            ("execFile", Shell, "child_process"),
            ("spawn", Shell, "child_process"),
            ("eval", Code, ""),
        ],
        Lang::Php => &[
            ("system", Shell, ""),
            ("exec", Shell, ""),
            ("shell_exec", Shell, ""),
            ("passthru", Shell, ""),
            ("popen", Shell, ""),
            ("proc_open", Shell, ""),
            ("pcntl_exec", Shell, ""),
            ("eval", Code, ""),
        ],
        Lang::Lua => {
            &[("os.execute", Shell, ""), ("io.popen", Shell, ""), ("loadstring", Code, ""), ("load", Code, "")]
        }
        Lang::R => &[("system", Shell, ""), ("system2", Shell, ""), ("shell", Shell, ""), ("eval", Code, "")],
        Lang::Julia => &[("run", Shell, ""), ("eval", Code, "")],
        Lang::Tcl => &[("exec", Words, ""), ("spawn", Words, ""), ("eval", Code, "")],
        Lang::AppleScript => &[("do shell script", Shell, "")],
        Lang::Lisp => &[
            ("shell-command", Shell, ""),
            ("shell-command-to-string", Shell, ""),
            ("async-shell-command", Shell, ""),
            ("call-process", Shell, ""),
            ("start-process", Shell, ""),
        ],
        Lang::Awk => &[("system", Shell, "")],
        Lang::PowerShell => &[],
    }
}

/// Languages whose calls need parentheses; in the others (`system "ls"`
/// in Perl and Ruby, `exec ls` in Tcl, Lisp's `(shell-command "ls")`) a
/// string may follow the name directly.
fn needs_parentheses(lang: Lang) -> bool {
    matches!(lang, Lang::Python | Lang::JavaScript | Lang::Php | Lang::Lua | Lang::R | Lang::Julia | Lang::Awk)
}

/// Names that show the code runs programs even when no call above was
/// recognised (`from subprocess import run; run(x)`): without a readable
/// call the code is hidden.
const RUNS_PROGRAMS: &[&str] = &[
    "subprocess",
    "os.system",
    "os.exec",
    "os.spawn",
    "child_process",
    "shell_exec",
    "proc_open",
    "passthru",
    "Open3",
    "IO.popen",
    "Kernel.system",
    "Deno.run",
    "Deno.Command",
    "Bun.spawn",
    "os.execute",
    "io.popen",
];

/// Names of calls that delete files, directories or processes.
const DELETES: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_tree",
    "rmSync",
    "rmdirSync",
    "unlinkSync",
    "unlink",
    "os.remove",
    "os.rmdir",
    "removedirs",
    "rmdir",
    "fs.rm",
    "rimraf",
    "File.delete",
    "FileUtils.rm",
    "Dir.delete",
    "delete-file",
    "delete-directory",
    "file.remove",
    "os.kill",
    "process.kill",
    "killpg",
    "truncate",
    "Remove-Item",
    "send2trash",
];

/// Names and text that show the code talks to the network.
const NETWORK: &[&str] = &[
    "socket",
    "urllib",
    "urlopen",
    "requests.",
    "http.client",
    "httplib",
    "httpx",
    "aiohttp",
    "smtplib",
    "ftplib",
    "telnetlib",
    "paramiko",
    "fetch(",
    "XMLHttpRequest",
    "WebSocket",
    "net.connect",
    "net.Socket",
    "http.get",
    "https.get",
    "http.request",
    "https.request",
    "require('http",
    "require(\"http",
    "require('net",
    "require(\"net",
    "require('dgram",
    "node:http",
    "node:net",
    "Net::",
    "IO::Socket",
    "LWP",
    "HTTP::Tiny",
    "open-uri",
    "net/http",
    "TCPSocket",
    "UDPSocket",
    "fsockopen",
    "stream_socket_client",
    "curl_exec",
    "curl_init",
    "download.file",
    "Downloads.download",
    "HTTP.get",
    "Invoke-WebRequest",
    "Invoke-RestMethod",
    "Net.WebClient",
    "/inet/",
    "http://",
    "https://",
    "ftp://",
];

/// Text that decodes or computes code before running it.
const HIDING: &[&str] = &[
    "b64decode",
    "base64.",
    "atob(",
    "fromCharCode",
    "unhexlify",
    "bytes.fromhex",
    "codecs.decode",
    "rot13",
    "rot_13",
    "zlib.decompress",
    "marshal.loads",
    "pickle.loads",
    "__import__(",
    "importlib",
    "__builtins__",
    "compile(",
    "Function(",
    "vm.run",
    "decode_base64",
    "MIME::Base64",
    "FromBase64String",
    "Invoke-Expression",
    "EncodedCommand",
    "unpack(",
    "pack(",
    "class_eval",
];

/// Reads `code` as `lang`. Nested `eval` of literal code is read too, a
/// few levels deep.
pub fn inspect(lang: Lang, code: &str) -> Inspection {
    let mut out = Inspection::default();
    read(lang, code, &mut out, 0);
    out
}

fn read(lang: Lang, code: &str, out: &mut Inspection, depth: u8) {
    if depth > 4 {
        out.hidden = Some("code nested too deeply to read");
        return;
    }
    out.deletes |= DELETES.iter().any(|m| contains_name(code, m));
    out.network |= NETWORK.iter().any(|m| code.contains(m));
    if out.hidden.is_none()
        && (HIDING.iter().any(|m| code.contains(m))
            || code.matches("\\x").count() >= 4
            || code.matches("chr(").count() >= 4)
    {
        out.hidden = Some("the code decodes or computes what it runs");
    }
    if lang == Lang::PowerShell {
        // PowerShell is its own command language: not read here.
        out.hidden.get_or_insert("PowerShell code is not read");
        return;
    }
    let mut recognised = false;
    for &(name, how, needs) in calls(lang) {
        if !needs.is_empty() && !code.contains(needs) {
            continue;
        }
        for at in name_positions(code, name) {
            let rest = &code[at + name.len()..];
            if how == Call::Words {
                recognised = true;
                let line: String = rest.chars().take_while(|c| !matches!(c, ']' | ';' | '\n' | '}')).collect();
                if line.contains('$') || line.contains('[') {
                    out.hidden.get_or_insert("the command is built at run time");
                }
                out.commands.push(line.trim().to_string());
                continue;
            }
            let Some(args) = call_args(rest, lang, needs_parentheses(lang) && lang != Lang::Perl) else {
                // Perl's and Ruby's `eval EXPR` without parentheses.
                if how == Call::Code
                    && matches!(lang, Lang::Perl | Lang::Ruby | Lang::Tcl)
                    && rest.trim_start().starts_with(|c: char| c.is_ascii_alphabetic())
                {
                    out.hidden.get_or_insert("it evaluates code built at run time");
                }
                continue;
            };
            recognised = true;
            match (how, args) {
                (Call::Code, CallArgs::Text(t)) => read(lang, &t, out, depth + 1),
                (_, CallArgs::Text(t)) => out.commands.push(t),
                (_, CallArgs::Words(w)) => out.commands.push(w.join(" ")),
                (_, CallArgs::Partial(w)) => {
                    out.commands.push(w.join(" "));
                    out.hidden.get_or_insert("the command is built at run time");
                }
                (_, CallArgs::Computed) => {
                    out.hidden.get_or_insert(if how == Call::Code {
                        "it evaluates code built at run time"
                    } else {
                        "the command is built at run time"
                    });
                }
            }
        }
    }
    for body in backquoted(lang, code) {
        recognised = true;
        match body {
            CallArgs::Text(t) => out.commands.push(t),
            _ => {
                out.hidden.get_or_insert("the command is built at run time");
            }
        }
    }
    if lang == Lang::Perl {
        perl_pipe_opens(code, out);
    }
    if lang == Lang::Awk {
        awk_pipes(code, out);
    }
    if !recognised && RUNS_PROGRAMS.iter().any(|m| code.contains(m)) {
        out.hidden.get_or_insert("it runs programs through a call that is not read here");
    }
    for c in &mut out.commands {
        *c = c.trim().to_string();
    }
    out.commands.retain(|c| !c.is_empty());
    out.commands.sort();
    out.commands.dedup();
}

/// True when `name` occurs in `code` not preceded by an identifier
/// character (so `unlink` does not match `my_unlink_count`… at its start,
/// and `rm_r` not `form_rows`).
fn contains_name(code: &str, name: &str) -> bool {
    !name_positions(code, name).is_empty()
}

fn name_positions(code: &str, name: &str) -> Vec<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(name)
        .filter(|(at, _)| {
            let before = code[..*at].chars().next_back();
            let after = code[at + name.len()..].chars().next();
            before.is_none_or(|c| !ident(c) && c != '$' && c != '@')
                && after.is_none_or(|c| !ident(c) || !name.chars().last().is_some_and(ident))
        })
        .map(|(at, _)| at)
        .collect()
}

/// A call's arguments as far as they can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CallArgs {
    /// One string: a command line or code.
    Text(String),
    /// A program and its arguments, quoted for the shell.
    Words(Vec<String>),
    /// A program and its first arguments; the rest are computed.
    Partial(Vec<String>),
    /// The argument is a variable, an expression or an interpolating string.
    Computed,
}

/// One argument: a string literal or a list of them.
enum Item {
    Words(Vec<String>, usize),
    Computed,
    None,
}

fn item(s: &str, lang: Lang) -> Item {
    if let Some((lit, used)) = literal(s, lang) {
        return match lit {
            Some(t) => Item::Words(vec![t], used),
            None => Item::Computed,
        };
    }
    let Some(list) = s.strip_prefix('[') else {
        return if s.is_empty() || s.starts_with([')', ';', '\n']) { Item::None } else { Item::Computed };
    };
    let mut words = Vec::new();
    let mut cur = list.trim_start();
    loop {
        if let Some(r) = cur.strip_prefix(']') {
            return Item::Words(words, s.len() - r.len());
        }
        match literal(cur, lang) {
            Some((Some(t), used)) => {
                words.push(t);
                cur = cur[used..].trim_start();
            }
            _ => return Item::Computed,
        }
        cur = cur.strip_prefix(',').map_or(cur, str::trim_start);
    }
}

/// Reads the arguments after a call's name: `("rm -rf x")`, `('rm',
/// '-rf', x)`, `(['rm', '-rf'])`, `"rm -rf x"` (Perl and Ruby without
/// parentheses), `{rm -rf x}` (Perl's `qx{}`). `None` when what follows
/// is not a call at all (the name was a word in a string).
fn call_args(rest: &str, lang: Lang, parentheses: bool) -> Option<CallArgs> {
    let s = rest.trim_start();
    if lang == Lang::Perl
        && let Some(r) = s.strip_prefix('{')
    {
        // qx{…}: the body is the command.
        return r.find('}').map(|end| CallArgs::Text(r[..end].to_string()));
    }
    let mut cur = match s.strip_prefix('(') {
        Some(r) => r.trim_start(),
        None if parentheses => return None,
        None if s.starts_with(['"', '\'', '`', '$', '@']) => s,
        None => return None,
    };
    let mut words: Vec<String> = Vec::new();
    loop {
        match item(cur, lang) {
            Item::Words(w, used) => {
                words.extend(w);
                cur = cur[used..].trim_start();
            }
            Item::Computed if words.is_empty() => return Some(CallArgs::Computed),
            Item::Computed => return Some(CallArgs::Partial(quoted(&words))),
            Item::None if words.is_empty() => return None,
            Item::None => break,
        }
        // A string joined to something (`"rm " + x`, awk's `"rm " f`) is
        // computed; a comma goes on to the next argument.
        if let Some(r) = cur.strip_prefix(',') {
            cur = r.trim_start();
            // Keyword arguments (`shell=True`) end the positional ones.
            let keyword = cur.split_once('=').is_some_and(|(k, _)| k.chars().all(|c| c.is_alphanumeric() || c == '_'));
            if keyword || cur.starts_with(['{', ')']) {
                break;
            }
            continue;
        }
        if cur.is_empty() || cur.starts_with([')', ';', '\n', '}']) {
            break;
        }
        return Some(if words.len() > 1 { CallArgs::Partial(quoted(&words)) } else { CallArgs::Computed });
    }
    Some(match words.len() {
        1 => CallArgs::Text(words.remove(0)),
        _ => CallArgs::Words(quoted(&words)),
    })
}

fn quoted(words: &[String]) -> Vec<String> {
    words.iter().map(|w| crate::parse::word::quote(w)).collect()
}

/// A string literal at the start of `s`: `Some((Some(text), length))`, or
/// `Some((None, length))` when it interpolates (`f"{x}"`, Perl's `"$x"`,
/// `` `${x}` ``, Ruby's `"#{x}"`). Handles Python's prefixes and triple
/// quotes and backslash escapes.
fn literal(s: &str, lang: Lang) -> Option<(Option<String>, usize)> {
    let prefix_len = s.find(['\'', '"', '`']).filter(|&k| k <= 2 && s[..k].chars().all(|c| "rRbBuUfF".contains(c)))?;
    let prefix = &s[..prefix_len];
    let body = &s[prefix_len..];
    let q = body.chars().next()?;
    if q == '`' && lang != Lang::JavaScript {
        return None;
    }
    let triple: String = std::iter::repeat_n(q, 3).collect();
    let (open, close) = if body.starts_with(&triple) { (3, triple.as_str()) } else { (1, &body[..1]) };
    let raw = prefix.contains(['r', 'R']) || q == '\'' && matches!(lang, Lang::Perl | Lang::Php | Lang::Ruby);
    let interpolating = matches!(lang, Lang::Perl | Lang::Php | Lang::Ruby) && q == '"';
    let mut text = String::new();
    let mut k = open;
    while k < body.len() {
        if body[k..].starts_with(close) {
            let interpolates = prefix.contains(['f', 'F']) && text.contains('{')
                || interpolating && (text.contains("#{") || has_variable(&text))
                || q == '`' && text.contains("${");
            let len = prefix_len + k + close.len();
            return Some((if interpolates { None } else { Some(text) }, len));
        }
        let c = body[k..].chars().next()?;
        if c == '\\' && k + 1 < body.len() {
            let next = body[k + 1..].chars().next()?;
            if raw && next != q && next != '\\' {
                text.push(c);
            } else {
                text.push(match next {
                    'n' if !raw => '\n',
                    't' if !raw => '\t',
                    other => other,
                });
                k += 1 + next.len_utf8();
                continue;
            }
        } else {
            text.push(c);
        }
        k += c.len_utf8();
    }
    None
}

/// `$name` or `@name` inside double quotes (Perl, PHP, shell-like
/// interpolation).
fn has_variable(t: &str) -> bool {
    t.char_indices().any(|(i, c)| {
        (c == '$' || c == '@') && t[i + 1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '_' || n == '{')
    })
}

/// Backquoted commands (Perl, Ruby, PHP, Julia) and Ruby's `%x(…)`.
fn backquoted(lang: Lang, code: &str) -> Vec<CallArgs> {
    if !matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php | Lang::Julia) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find('`') {
        let body = &rest[start + 1..];
        let Some(end) = body.find('`') else { break };
        let text = &body[..end];
        out.push(if has_variable(text) || text.contains("#{") {
            CallArgs::Computed
        } else {
            CallArgs::Text(text.to_string())
        });
        rest = &body[end + 1..];
    }
    if lang == Lang::Ruby {
        for at in name_positions(code, "%x") {
            if let Some(r) = code[at + 2..].strip_prefix(['(', '{', '['])
                && let Some(end) = r.find([')', '}', ']'])
            {
                out.push(if r[..end].contains("#{") {
                    CallArgs::Computed
                } else {
                    CallArgs::Text(r[..end].to_string())
                });
            }
        }
    }
    out
}

/// Perl's piped `open`: `open(F, "cmd |")`, `open(F, "| cmd")`,
/// `open(my $f, "-|", "cmd")`.
fn perl_pipe_opens(code: &str, out: &mut Inspection) {
    for at in name_positions(code, "open") {
        let rest = &code[at + 4..];
        let Some(inner) = rest.trim_start().strip_prefix('(') else { continue };
        let mut lits = Vec::new();
        let mut cur = inner;
        while let Some(k) = cur.find(['"', '\'']) {
            match literal(&cur[k..], Lang::Perl) {
                Some((t, used)) => {
                    lits.push(t);
                    cur = &cur[k + used..];
                }
                None => break,
            }
            if cur.trim_start().starts_with(')') {
                break;
            }
        }
        match lits.as_slice() {
            [Some(mode), rest @ ..] if matches!(mode.trim(), "-|" | "|-") => match rest.first() {
                Some(Some(cmd)) => out.commands.push(cmd.clone()),
                _ => {
                    out.hidden.get_or_insert("the command is built at run time");
                }
            },
            [Some(two), ..] if two.trim_start().starts_with('|') || two.trim_end().ends_with('|') => {
                out.commands.push(two.trim().trim_matches('|').to_string());
            }
            _ => {}
        }
    }
}

/// awk's `"cmd" | getline` and `print … | "cmd"`, and the same with a
/// computed command.
fn awk_pipes(code: &str, out: &mut Inspection) {
    for (at, _) in code.match_indices('|') {
        if code[at + 1..].starts_with('|') || at > 0 && code[..at].ends_with('|') {
            continue;
        }
        let after = code[at + 1..].trim_start().trim_start_matches('&').trim_start();
        if after.starts_with("getline") {
            // The command is the expression before the pipe.
            let before = code[..at].trim_end();
            if let Some(body) = before.strip_suffix('"').and_then(|b| b.rfind('"').map(|s| &b[s + 1..])) {
                out.commands.push(body.to_string());
            } else {
                out.hidden.get_or_insert("the command is built at run time");
            }
        } else if let Some((Some(t), _)) = literal(after, Lang::Awk) {
            out.commands.push(t);
        } else if !after.is_empty() {
            out.hidden.get_or_insert("the command is built at run time");
        }
    }
}

#[cfg(test)]
#[path = "code_tests.rs"]
mod tests;
