//! Option values that a program runs as a command line: `git -c
//! core.pager=…` and the other keys that name programs, `vim -c '!…'`,
//! `less '+!…'`, `man -P`, `tar --to-command`, `rsync -e`, `ssh -o
//! ProxyCommand=…`, `rg --pre`. The walker walks what these return as
//! shell code.

use super::word::Arg;
use super::wrappers::is_shell;
use crate::paths::system_program;

/// Option values that the program runs as a command line: `git -c
/// core.pager=…`, `vim -c '!…'`, `less '+!…'`, `man -P …`, `tar
/// --to-command=…`, `rsync -e …`, `ssh -o ProxyCommand=…`, `sort
/// --compress-program=…`, `rg --pre …`.
pub(super) fn code_in_options(program: &str, args: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::new();
    // The source of a value only known at run time.
    let unknown = Arg { text: String::new(), dynamic: true, glob: false };
    let mut push = |text: &str, from: &Arg| {
        if !text.trim().is_empty() {
            // A bare shell or interpreter (`rg --pre bash`, `core.pager=sh`)
            // runs the data it is handed as code: unknown code.
            let dynamic = from.dynamic || bare_runner(text);
            out.push(Arg { text: text.to_string(), dynamic, glob: false });
        }
    };
    // `--opt=value`, `--opt value`, `-o value` and `-ovalue` spellings.
    let values = |names: &[&str]| -> Vec<&Arg> {
        let mut v = Vec::new();
        for (i, a) in args.iter().enumerate() {
            for n in names {
                if a.text == *n {
                    v.extend(args.get(i + 1));
                } else if a.text.starts_with(n)
                    && (n.starts_with("--") && a.text[n.len()..].starts_with('=')
                        || !n.starts_with("--") && n.len() == 2)
                {
                    v.push(a);
                }
            }
        }
        v
    };
    let after = |a: &Arg, n: &str| -> String {
        let t = a.text.as_str();
        t.strip_prefix(n).map(|r| r.trim_start_matches('=').to_string()).unwrap_or_else(|| t.to_string())
    };
    match program {
        "git" => {
            for a in values(&["-c"]) {
                // `-c key=value` or `-ckey=value`: a key never starts with `-`.
                let pair = a.text.strip_prefix("-c").unwrap_or(&a.text);
                let Some((key, val)) = pair.split_once('=') else { continue };
                match git_key_runs(key, val) {
                    Some(GitRun::Command(cmd)) => push(cmd, a),
                    // A hooks directory or an included file: what runs is
                    // in a file we do not read.
                    Some(GitRun::Unknown) => push(val, &unknown),
                    None => {}
                }
            }
            // `--config-env=KEY=VAR` takes the value from the environment.
            for a in args.iter().filter_map(|a| a.text.strip_prefix("--config-env=")) {
                if let Some((key, var)) = a.split_once('=')
                    && git_key_runs(key, "x").is_some()
                {
                    push(&format!("${var}"), &unknown);
                }
            }
            // The `ext::` transport runs its command (`git fetch 'ext::sh -c …'`).
            for a in args.iter().filter(|a| a.text.starts_with("ext::")) {
                push(&ext_command(&a.text["ext::".len()..]), a);
            }
        }
        "vi" | "vim" | "nvim" | "view" | "ex" | "vimdiff" | "gvim" => {
            for a in args.iter().filter(|a| a.text.starts_with('+')).chain(values(&["-c", "--cmd"])) {
                let t = a.text.strip_prefix('+').unwrap_or(&a.text);
                match vim_command_runs(t) {
                    Some(VimRun::Shell(cmd)) => push(&cmd, a),
                    Some(VimRun::Unknown) => push(t, &unknown),
                    None => {}
                }
            }
        }
        "less" | "more" => {
            for a in args.iter().filter(|a| a.text.starts_with('+')) {
                if let Some(cmd) = a.text.trim_start_matches('+').strip_prefix('!') {
                    push(cmd, a);
                }
            }
        }
        "man" => {
            for a in values(&["-P", "--pager", "-H", "--html"]) {
                push(&after(a, if a.text.starts_with("--pager") { "--pager" } else { "-P" }), a);
            }
        }
        "tar" | "bsdtar" => {
            for a in
                values(&["--to-command", "-I", "--use-compress-program", "--info-script", "-F", "--new-volume-script"])
            {
                let name =
                    ["--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "-I", "-F"]
                        .into_iter()
                        .find(|n| a.text.starts_with(n))
                        .unwrap_or("");
                push(&after(a, name), a);
            }
            for a in args.iter().filter(|a| a.text.starts_with("--checkpoint-action=exec=")) {
                push(a.text.trim_start_matches("--checkpoint-action=exec="), a);
            }
        }
        "rsync" => {
            for a in values(&["-e", "--rsh", "--rsync-path"]) {
                let name = ["--rsh", "--rsync-path", "-e"].into_iter().find(|n| a.text.starts_with(n)).unwrap_or("");
                push(&after(a, name), a);
            }
        }
        "ssh" | "scp" | "sftp" => {
            for a in values(&["-o"]) {
                let t = a.text.trim_start_matches("-o");
                let (k, v) = t.split_once(['=', ' ']).unwrap_or((t, ""));
                if matches!(k.to_ascii_lowercase().as_str(), "proxycommand" | "localcommand" | "knownhostscommand") {
                    push(v, a);
                }
            }
        }
        "sort" => {
            for a in values(&["--compress-program"]) {
                push(&after(a, "--compress-program"), a);
            }
        }
        "rg" => {
            for a in values(&["--pre"]) {
                push(&after(a, "--pre"), a);
            }
        }
        "zip" => {
            for a in values(&["-TT", "--unzip-command"]) {
                push(&after(a, if a.text.starts_with("--") { "--unzip-command" } else { "-TT" }), a);
            }
        }
        _ => {}
    }
    out
}

/// True when `text` is a shell or interpreter with no code of its own:
/// it runs whatever it is handed (a file name or its input) as code.
pub(super) fn bare_runner(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(prog) = words.first().and_then(|w| system_program(w)) else { return false };
    let runner = is_shell(prog)
        || crate::deny::is_interpreter(prog)
        || matches!(prog, "source" | "." | "eval" | "xargs" | "parallel");
    runner
        && !words[1..].iter().any(|w| matches!(*w, "-c" | "-e" | "-E" | "-r" | "--eval" | "-m") || w.starts_with("-c"))
}

/// What a git configuration key set on the command line makes git run.
enum GitRun<'a> {
    /// A command line (`core.pager`, `diff.<driver>.textconv`, `alias.x=!…`).
    Command(&'a str),
    /// Programs found through a path (`core.hooksPath`, `include.path`).
    Unknown,
}

/// Which `git -c KEY=VALUE` keys name a program, after git's own
/// documentation of each (config.txt): command lines, helpers, drivers,
/// hooks and the files or directories they are read from.
fn git_key_runs<'a>(key: &str, val: &'a str) -> Option<GitRun<'a>> {
    let key = key.to_ascii_lowercase();
    let first = key.split('.').next().unwrap_or("");
    let last = key.rsplit('.').next().unwrap_or("");
    let bool_value =
        matches!(val.to_ascii_lowercase().as_str(), "" | "true" | "false" | "yes" | "no" | "on" | "off" | "0" | "1");
    let command = |v: &'a str| Some(GitRun::Command(v.trim_start_matches('!')));
    match (first, last) {
        ("alias", _) | ("submodule", "update") => val.starts_with('!').then(|| GitRun::Command(&val[1..])),
        ("include" | "includeif", "path") | ("core", "hookspath") => Some(GitRun::Unknown),
        ("core", "fsmonitor") if bool_value => None,
        ("core", "fsmonitor" | "pager" | "sshcommand" | "editor" | "askpass" | "gitproxy" | "alternaterefscommand")
        | ("sequence", "editor")
        | ("diff", "external")
        | ("pager", _)
        | ("uploadpack", "packobjectshook")
        | ("interactive", "difffilter")
        | ("web" | "help", "browser")
        | ("man", "viewer")
        | ("instaweb", "httpd") => command(val),
        (_, "command" | "cmd" | "textconv" | "process" | "clean" | "smudge" | "driver" | "program" | "helper")
        | (_, "uploadpack" | "receivepack" | "sendmailcmd" | "tocmd" | "cccmd" | "headercmd" | "defaultkeycommand") => {
            command(val)
        }
        ("man" | "browser", "path") => command(val),
        ("sendemail", "smtpserver") if val.starts_with('/') => command(val),
        _ => None,
    }
}

/// What a vim Ex command given with `-c`, `--cmd` or `+` runs.
enum VimRun {
    /// A shell command line (`:!cmd`, `:r !cmd`, `:w !cmd`, `:%!cmd`,
    /// `system('cmd')`).
    Shell(String),
    /// Code we do not read (`:py3`, `:lua`, `:terminal`, `:source`, `:exe`
    /// of an expression).
    Unknown,
}

/// Reads one vim Ex command line: modifiers (`silent!`, `keepalt`…) and a
/// range are skipped, then the command decides.
fn vim_command_runs(text: &str) -> Option<VimRun> {
    let mut t = text.trim_start().trim_start_matches([':', ' ']);
    // Commands separated by `|` each run (`:set nu | !cmd`).
    if t.contains('|') && !t.starts_with('!') {
        let runs: Vec<VimRun> = t.split('|').filter_map(vim_command_runs).collect();
        return runs.into_iter().next();
    }
    loop {
        let word_end = t.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(t.len());
        let word = &t[..word_end];
        let modifier = matches!(
            word,
            "sil"
                | "silent"
                | "keepalt"
                | "keepa"
                | "keepjumps"
                | "keepj"
                | "noautocmd"
                | "noa"
                | "unsilent"
                | "uns"
                | "lockmarks"
                | "loc"
                | "noswapfile"
                | "nos"
                | "vertical"
                | "vert"
                | "tab"
                | "hide"
                | "confirm"
                | "conf"
                | "sandbox"
                | "san"
                | "legacy"
                | "vim9cmd"
        );
        if !modifier || word.is_empty() {
            break;
        }
        t = t[word_end..].trim_start_matches('!').trim_start();
    }
    // A range: `%`, `.`, `$`, numbers, marks, `,`.
    let t = t.trim_start_matches(|c: char| c.is_ascii_digit() || "%.,$;'<>+- ".contains(c));
    if let Some(cmd) = t.strip_prefix('!') {
        return Some(VimRun::Shell(cmd.to_string()));
    }
    let word_end = t.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(t.len());
    let (word, rest) = t.split_at(word_end);
    let rest_bang = rest.trim_start().strip_prefix('!');
    match word {
        "r" | "re" | "rea" | "read" | "w" | "wr" | "wri" | "writ" | "write" | "up" | "update" => {
            // `:w !cmd` pipes to cmd; `:w! file` only forces the write.
            let spaced = rest.starts_with(char::is_whitespace) || matches!(word, "r" | "re" | "rea" | "read");
            rest_bang.filter(|_| spaced).map(|c| VimRun::Shell(c.to_string()))
        }
        _ if t.contains("system(")
            || t.contains("systemlist(")
            || t.contains("jobstart(")
            || t.contains("termopen(") =>
        {
            let inner = t.split_once('(').map(|(_, r)| r).unwrap_or("");
            let q = inner.trim_start();
            let quoted = q.strip_prefix(['\'', '"']).and_then(|r| r.find(['\'', '"']).map(|e| r[..e].to_string()));
            Some(quoted.map_or(VimRun::Unknown, VimRun::Shell))
        }
        "sh" | "shell" | "ter" | "term" | "terminal" => {
            let cmd = rest.trim();
            Some(if cmd.is_empty() { VimRun::Unknown } else { VimRun::Shell(cmd.to_string()) })
        }
        "py" | "python" | "py3" | "python3" | "pyx" | "pythonx" | "pyf" | "pyfile" | "py3f" | "py3file" | "pydo"
        | "py3do" | "lua" | "luado" | "luafile" | "perl" | "perldo" | "ruby" | "rubydo" | "rubyfile" | "tcl"
        | "tcldo" | "mz" | "mzscheme" | "so" | "source" | "runtime" | "ru" | "exe" | "execute" => Some(VimRun::Unknown),
        // `:normal! gg` only types keys; keys that open the command line
        // (`:`) can type any command.
        "norm" | "normal" if rest.contains(':') => Some(VimRun::Unknown),
        _ => None,
    }
}

/// The command line of git's `ext::` transport: arguments split at spaces,
/// `% ` a space inside one, `%%` a percent sign (git-remote-ext(1)).
fn ext_command(spec: &str) -> String {
    let mut args: Vec<String> = vec![String::new()];
    let mut chars = spec.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some(' ') => args.last_mut().into_iter().for_each(|a| a.push(' ')),
                Some('%') => args.last_mut().into_iter().for_each(|a| a.push('%')),
                // `%S`, `%s`, `%G…`: the service and host git fills in.
                Some(o) => args.last_mut().into_iter().for_each(|a| a.extend(['%', o])),
                None => {}
            },
            ' ' => args.push(String::new()),
            c => args.last_mut().into_iter().for_each(|a| a.push(c)),
        }
    }
    let words: Vec<String> = args.iter().filter(|a| !a.is_empty()).map(|a| crate::parse::word::quote(a)).collect();
    words.join(" ")
}
