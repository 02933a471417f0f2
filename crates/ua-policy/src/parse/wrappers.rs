//! Programs that run other programs: peeled off so the classifier sees the
//! program that actually runs. Only the system's program of each name is a
//! wrapper; `./sudo` is an unknown program like any other.

use super::walk::{Ctx, Walker};
use super::word::Arg;
use super::{PartKind, Redirect, RedirectKind};
use crate::paths::system_program;

const SHELLS: [&str; 9] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"];

/// True for programs that execute text they are given as shell code.
pub fn is_code_runner(word: &str) -> bool {
    system_program(word)
        .is_some_and(|p| SHELLS.contains(&p) || matches!(p, "eval" | "source" | "." | "su" | "watch" | "busybox"))
}

/// True for the shells we re-parse `-c` strings of.
pub fn is_shell(program: &str) -> bool {
    SHELLS.contains(&program)
}

/// Options that take a value, per wrapper, so we can find where the wrapped
/// command starts.
fn takes_value(wrapper: &str, opt: &str) -> bool {
    let list: &[&str] = match wrapper {
        "sudo" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"],
        "doas" => &["-u", "-C"],
        "env" => &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "time" => &["-o", "-f", "--output", "--format"],
        "xargs" => &["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter"],
        "watch" => &["-n", "--interval", "-d"],
        "stdbuf" => &["-i", "-o", "-e"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u"],
        "exec" => &["-a"],
        "chroot" => &["--userspec", "--groups"],
        "runuser" | "su" => &["-u", "-g", "-G", "-s", "--shell", "-w"],
        "pkexec" => &["--user"],
        "flock" => &["-w", "-E", "--timeout", "--conflict-exit-code"],
        "ssh" => &[
            "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S",
            "-W", "-w", "-B",
        ],
        _ => &[],
    };
    list.contains(&opt)
}

/// Splits `args` into (options, rest) at the first operand, honouring `--`
/// and options that take a value.
fn split_options<'a>(wrapper: &str, args: &'a [Arg]) -> (&'a [Arg], &'a [Arg]) {
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            return (&args[..i], &args[i + 1..]);
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        // `-n5`, `--user=x` carry their value inline.
        if takes_value(wrapper, t) {
            i += 1;
        }
        i += 1;
    }
    let i = i.min(args.len());
    (&args[..i], &args[i..])
}

fn with(ctx: &Ctx, wrapper: impl Into<String>, privileged: bool) -> Ctx {
    let mut c = ctx.clone();
    c.wrappers.push(wrapper.into());
    c.privileged |= privileged;
    c
}

fn joined(args: &[Arg]) -> String {
    args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// Runs `argv`: peels wrappers, re-parses strings that are shell code, and
/// records the innermost program as a part.
pub(crate) fn exec(w: &mut Walker, argv: Vec<Arg>, redirects: Vec<Redirect>, ctx: &Ctx) {
    let Some(first) = argv.first() else {
        w.push(ctx, PartKind::Redirection, argv, redirects);
        return;
    };
    if first.dynamic {
        w.push(ctx, PartKind::Dynamic, argv, redirects);
        return;
    }
    // An alias defined earlier in the command: the shell may run its value
    // instead (dash always expands aliases, bash with expand_aliases, zsh
    // from the next line), so that is walked as well.
    if let Some(value) = w.aliases.get(&first.text).cloned() {
        let text = format!("{value} {}", joined(&argv[1..]));
        shell_string(w, &Arg::literal(text), &with(ctx, format!("alias {}", first.text), false), vec![]);
    }
    // zsh expands `=cmd` to the path of `cmd` (its EQUALS option).
    if let Some(cmd) = first.text.strip_prefix('=')
        && !cmd.is_empty()
        && !cmd.contains(['=', '/'])
    {
        let named = Arg { text: cmd.to_string(), ..first.clone() };
        let mut argv = argv;
        argv[0] = named;
        exec(w, argv, redirects, ctx);
        return;
    }
    let Some(name) = system_program(&first.text).map(str::to_string) else {
        w.push(ctx, PartKind::Exec, argv, redirects);
        return;
    };
    let args = &argv[1..];
    let peel = |w: &mut Walker, inner: &[Arg], c: Ctx, redirects: Vec<Redirect>, argv: &[Arg]| {
        if inner.is_empty() {
            w.push(&c, PartKind::Exec, argv.to_vec(), redirects);
        } else {
            exec(w, inner.to_vec(), redirects, &c);
        }
    };
    match name.as_str() {
        "sudo" | "doas" | "pkexec" => {
            let (opts, rest) = split_options(&name, args);
            // `sudo -s`/`sudo -i` start a root shell; `sudo -e` edits as root.
            let c = with(ctx, name.clone(), true);
            if rest.is_empty() || opts.iter().any(|o| o.text == "-e" || o.text == "-s" && !rest.is_empty()) {
                w.push(&c, PartKind::Exec, argv.clone(), redirects);
                if !rest.is_empty() {
                    exec(w, rest.to_vec(), vec![], &c);
                }
            } else {
                exec(w, rest.to_vec(), redirects, &c);
            }
        }
        "su" | "runuser" => {
            let c = with(ctx, name.clone(), true);
            match args.iter().position(|a| a.text == "-c" || a.text == "--command") {
                Some(i) if i + 1 < args.len() => {
                    let s = args[i + 1].clone();
                    shell_string(w, &s, &c, redirects);
                }
                _ => {
                    let (_, rest) = split_options(&name, args);
                    // `runuser -u user -- cmd` runs cmd; `su user` starts a shell.
                    if name == "runuser" && args.iter().any(|a| a.text == "--") {
                        peel(w, rest, c, redirects, &argv);
                    } else {
                        w.push(&c, PartKind::Exec, argv.clone(), redirects);
                    }
                }
            }
        }
        "chroot" => {
            let (_, rest) = split_options(&name, args);
            let c = with(ctx, "chroot", true);
            // chroot DIR [cmd]: with no cmd it runs a shell.
            peel(w, rest.get(1..).unwrap_or_default(), c, redirects, &argv);
        }
        "env" => env(w, &argv, redirects, ctx),
        "nice" | "nohup" | "stdbuf" | "ionice" | "setsid" | "builtin" | "unbuffer" | "busybox" | "noglob"
        | "nocorrect" => {
            let (opts, rest) = split_options(&name, args);
            let _ = opts;
            peel(w, rest, with(ctx, name.clone(), false), redirects, &argv);
        }
        // zsh's `repeat N cmd` runs cmd N times.
        "repeat" if args.len() > 1 && args[0].text.chars().all(|c| c.is_ascii_digit()) => {
            peel(w, &args[1..], with(ctx, "repeat", false), redirects, &argv);
        }
        "timeout" => {
            let (_, rest) = split_options(&name, args);
            // The first operand is the duration.
            peel(w, rest.get(1..).unwrap_or_default(), with(ctx, "timeout", false), redirects, &argv);
        }
        "time" => {
            let (opts, rest) = split_options(&name, args);
            let mut redirects = redirects;
            // GNU time -o FILE writes its report to FILE.
            for pair in opts.windows(2) {
                if pair[0].text == "-o" || pair[0].text == "--output" {
                    redirects.push(Redirect { fd: None, kind: RedirectKind::Write, target: pair[1].clone() });
                }
            }
            peel(w, rest, with(ctx, "time", false), redirects, &argv);
        }
        "command" => {
            let (opts, rest) = split_options(&name, args);
            if opts.iter().any(|o| o.text.contains('v') || o.text.contains('V')) {
                // `command -v x` only looks x up.
                w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            } else {
                peel(w, rest, with(ctx, "command", false), redirects, &argv);
            }
        }
        "exec" => {
            let (_, rest) = split_options(&name, args);
            peel(w, rest, with(ctx, "exec", false), redirects, &argv);
        }
        "flock" => {
            let (opts, rest) = split_options(&name, args);
            let _ = opts;
            match rest.iter().position(|a| a.text == "-c" || a.text == "--command") {
                Some(i) if i + 1 < rest.len() => {
                    let s = rest[i + 1].clone();
                    shell_string(w, &s, &with(ctx, "flock", false), redirects);
                }
                _ => peel(w, rest.get(1..).unwrap_or_default(), with(ctx, "flock", false), redirects, &argv),
            }
        }
        "xargs" => xargs(w, args, redirects, ctx),
        "watch" => {
            let (opts, rest) = split_options(&name, args);
            let c = with(ctx, "watch", false);
            if opts.iter().any(|o| o.text == "-x" || o.text == "--exec") {
                peel(w, rest, c, redirects, &argv);
            } else if rest.is_empty() {
                w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            } else {
                // watch hands its arguments to `sh -c` joined by spaces.
                let text = joined(rest);
                let dynamic = rest.iter().any(|a| a.dynamic);
                shell_string(w, &Arg { text, dynamic, glob: false }, &c, redirects);
            }
        }
        "eval" => {
            let text = joined(args);
            let dynamic = args.iter().any(|a| a.dynamic);
            shell_string(w, &Arg { text, dynamic, glob: false }, &with(ctx, "eval", false), redirects);
        }
        "find" => find(w, &argv, redirects, ctx),
        "parallel" => {
            // GNU parallel runs its command (before `:::`) once per input.
            let cmd: Vec<Arg> = args
                .iter()
                .skip_while(|a| a.text.starts_with('-'))
                .take_while(|a| !a.text.starts_with(":::"))
                .cloned()
                .collect();
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            let c = with(ctx, "parallel", false);
            if !cmd.is_empty() {
                let text = joined(&cmd);
                let dynamic = cmd.iter().any(|a| a.dynamic);
                shell_string(w, &Arg { text, dynamic, glob: false }, &c, vec![]);
            } else {
                // With no command, each input line (or each argument after
                // `:::`) is a command line of its own.
                let listed: Vec<&Arg> = args.iter().skip_while(|a| !a.text.starts_with(":::")).skip(1).collect();
                for a in &listed {
                    shell_string(w, a, &c, vec![]);
                }
                if listed.is_empty() {
                    shell_string(w, &stdin_arg(), &c, vec![]);
                }
            }
        }
        "trap" => {
            // The handler is code that runs later in the live shell.
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            let ops: Vec<&Arg> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
            if ops.len() >= 2 {
                let signals = ops[1..].iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ");
                later(w, ctx, "trap".into(), format!("trap on {signals}: {}", ops[0].text), ops[0]);
            }
        }
        "alias" => {
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            for a in args {
                if let Some((n, value)) = a.text.split_once('=')
                    && !n.is_empty()
                    && !n.starts_with('-')
                {
                    w.aliases.insert(n.to_string(), value.to_string());
                    // The value runs later, whenever the name is typed: it
                    // is rated now, as if it ran.
                    let code = Arg { text: value.to_string(), dynamic: a.dynamic, glob: false };
                    later(w, ctx, format!("alias {n}"), format!("alias {n}: {value}"), &code);
                }
            }
        }
        "bind" | "bindkey" | "complete" | "compgen" | "abbr" => live_bindings(w, &name, &argv, redirects, ctx),
        "export" | "declare" | "typeset" | "readonly" | "local" => {
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            for a in args {
                if let Some((name, value)) = a.text.split_once('=') {
                    let value = Arg { text: value.to_string(), dynamic: a.dynamic, glob: false };
                    code_in_variable(w, name.trim_end_matches('+'), &value, ctx);
                    define_variable(w, name.trim_end_matches('+'), &value, ctx);
                }
            }
        }
        "ssh" => {
            let (_, rest) = split_options(&name, args);
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            for text in code_in_options("ssh", args) {
                shell_string(w, &text, &with(ctx, "ssh option", false), vec![]);
            }
            if let Some((host, cmd)) = rest.split_first()
                && !cmd.is_empty()
            {
                let text = joined(cmd);
                let dynamic = cmd.iter().any(|a| a.dynamic);
                let c = with(ctx, format!("ssh {}", host.text), false);
                shell_string(w, &Arg { text, dynamic, glob: false }, &c, vec![]);
            }
        }
        n if is_shell(n) => shell(w, &argv, redirects, ctx, n),
        n => {
            let code = code_in_options(n, args);
            let stdin = redirects
                .iter()
                .rev()
                .find(|r| r.kind == RedirectKind::Inline && r.fd.is_none_or(|fd| fd == 0))
                .map(|r| r.target.text.clone())
                .or_else(|| ctx.stdin.clone());
            let commands = commands_in_code(n, args, stdin.as_deref());
            w.push(ctx, PartKind::Exec, argv.clone(), redirects);
            let c = with(ctx, format!("{n} option"), false);
            for text in code {
                shell_string(w, &text, &c, vec![]);
            }
            let c = with(ctx, format!("{n} code"), false);
            for text in commands {
                shell_string(w, &Arg::literal(text), &c, vec![]);
            }
        }
    }
}

/// Variables whose value is a command line some program runs later.
const CODE_VARS: [&str; 14] = [
    "PROMPT_COMMAND",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "LESSOPEN",
    "LESSCLOSE",
    "BAT_PAGER",
];

/// Variables the live shell runs (or expands with substitutions) before
/// each prompt or command.
const SHELL_HOOK_VARS: [&str; 7] = ["PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "PROMPT", "RPROMPT"];

/// Records a variable set in the live shell whose value runs later
/// (`PROMPT_COMMAND`, a prompt with a substitution, `PAGER`…) as a
/// definition to show. The value itself is walked by [`code_in_variable`].
pub(crate) fn define_variable(w: &mut Walker, name: &str, value: &Arg, ctx: &Ctx) {
    let hook = SHELL_HOOK_VARS.contains(&name) && (name == "PROMPT_COMMAND" || value.text.contains(['$', '`']));
    if (hook || CODE_VARS.contains(&name)) && persists(ctx) {
        let shown = format!("{name}: {}", value.text);
        if !w.defines.contains(&shown) {
            w.defines.push(shown);
        }
    }
}

/// Walks the value of `NAME=value` as code when NAME names a command line
/// (`PROMPT_COMMAND`, `PAGER`, `GIT_SSH_COMMAND`, …) or a prompt that
/// expands substitutions (`PS1`).
pub(crate) fn code_in_variable(w: &mut Walker, name: &str, value: &Arg, ctx: &Ctx) {
    if CODE_VARS.contains(&name) {
        let text = value.text.trim_start_matches('|').replace("%s", "FILE");
        shell_string(
            w,
            &Arg { text, dynamic: value.dynamic, glob: false },
            &with(ctx, format!("${name}"), false),
            vec![],
        );
    } else if !value.dynamic || matches!(name, "PS0" | "PS1" | "PS2" | "PS4" | "PROMPT" | "RPROMPT") {
        // A substitution kept literal in a value runs wherever the value is
        // expanded again: as a prompt (`PS1`, bash's `${x@P}`), by zsh's
        // `${(e)x}`, or as an array subscript when bash reads the value as
        // arithmetic (`x='a[$(cmd)]'; echo $((x))`). (A substitution in a
        // dynamic value was walked when the word was.)
        for inner in super::word::embedded_substitutions(&value.text) {
            shell_string(w, &Arg::literal(inner), &with(ctx, format!("${name}"), false), vec![]);
        }
    }
}

/// Literal words naming an array element whose subscript holds a
/// substitution: bash evaluates the subscript, running it, when the word
/// names a variable (`read 'a[$(cmd)]'`, `printf -v`, `let`, `declare`).
pub(crate) fn code_in_subscripts(w: &mut Walker, argv: &[Arg], ctx: &Ctx) {
    for a in argv.iter().filter(|a| !a.dynamic) {
        let Some(open) = a.text.find('[') else { continue };
        for inner in super::word::embedded_substitutions(&a.text[open..]) {
            shell_string(w, &Arg::literal(inner), &with(ctx, "array subscript", false), vec![]);
        }
    }
}

/// zsh glob qualifiers that run code for each matching file: `*(e:cmd:)`
/// (any delimiter after `e`) and `*(+cmd)`.
pub(crate) fn code_in_glob_qualifiers(w: &mut Walker, argv: &[Arg], ctx: &Ctx) {
    for a in argv.iter().filter(|a| a.glob) {
        let mut rest = a.text.as_str();
        while let Some(i) = rest.find('(') {
            rest = &rest[i + 1..];
            let code = if let Some(q) = rest.strip_prefix('e') {
                let mut chars = q.chars();
                let Some(delim) = chars.next() else { break };
                let body = chars.as_str();
                body.find(delim).map(|end| &body[..end])
            } else if let Some(q) = rest.strip_prefix('+') {
                q.find(')').map(|end| &q[..end])
            } else {
                None
            };
            if let Some(code) = code.filter(|c| !c.trim().is_empty()) {
                shell_string(w, &Arg::literal(code), &with(ctx, "glob qualifier", false), vec![]);
            }
        }
    }
}

/// Option values that the program runs as a command line: `git -c
/// core.pager=…`, `vim -c '!…'`, `less '+!…'`, `man -P …`, `tar
/// --to-command=…`, `rsync -e …`, `ssh -o ProxyCommand=…`, `sort
/// --compress-program=…`, `rg --pre …`.
fn code_in_options(program: &str, args: &[Arg]) -> Vec<Arg> {
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

/// Shell command lines that code in another language runs (`python3 -c
/// 'os.system("…")'`, awk's `system()`, sed's `e`, `make --eval`, `script
/// -c`, tmux and sqlite3 commands, a job piped into `at`). The code is read
/// by [`crate::classify::code`]; what it cannot read, the classifier rates.
fn commands_in_code(program: &str, args: &[Arg], stdin: Option<&str>) -> Vec<String> {
    use crate::classify::args::{Args, option_values};
    use crate::classify::code::{Lang, inline, inspect};
    if let Some(lang) = Lang::of(program) {
        let code = match inline(program, lang, args) {
            Some(c) => Some(c.text),
            // No code argument and no script: the program reads stdin.
            None if Args(args).operands().iter().all(|o| o.text == "-") => stdin.map(str::to_string),
            None => None,
        };
        return code.map(|c| inspect(lang, &c).commands).unwrap_or_default();
    }
    let a = Args(args);
    match program {
        "sed" | "gsed" => {
            let scripts = option_values(args, &["-e", "--expression"]);
            let scripts = if scripts.is_empty() {
                a.operands().first().map(|o| vec![o.text.as_str()]).unwrap_or_default()
            } else {
                scripts
            };
            scripts
                .into_iter()
                .flat_map(crate::classify::programs::sed_commands)
                .filter_map(|c| c.strip_prefix('e').map(str::trim).filter(|c| !c.is_empty()).map(str::to_string))
                .collect()
        }
        "make" | "gmake" => option_values(args, &["--eval", "-E"]).into_iter().flat_map(make_recipes).collect(),
        "script" => option_values(args, &["-c", "--command"]).into_iter().map(str::to_string).collect(),
        "sqlite3" => args
            .iter()
            .filter_map(|x| {
                x.text.trim_start().strip_prefix(".shell ").or_else(|| x.text.trim_start().strip_prefix(".system "))
            })
            .map(str::to_string)
            .collect(),
        "gdb" => option_values(args, &["-ex", "--eval-command", "-iex"])
            .into_iter()
            .filter_map(|c| c.strip_prefix("shell ").or_else(|| c.strip_prefix('!')))
            .map(str::to_string)
            .collect(),
        "tmux" => {
            let ops = a.operands();
            match ops.first().map(|o| o.text.as_str()) {
                Some(
                    "new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw" | "run-shell" | "run"
                    | "respawn-pane" | "respawn-window" | "display-popup" | "popup",
                ) => ops.get(1..).and_then(|o| o.last()).map(|o| vec![o.text.clone()]).unwrap_or_default(),
                Some("send-keys" | "send") => {
                    let keys: Vec<&str> =
                        ops[1..].iter().map(|o| o.text.as_str()).filter(|k| *k != "Enter" && *k != "C-m").collect();
                    if keys.is_empty() { Vec::new() } else { vec![keys.join(" ")] }
                }
                _ => Vec::new(),
            }
        }
        "at" | "batch" => stdin.map(|s| vec![s.to_string()]).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The recipe lines of makefile text (`x: ; cmd`, tab-indented lines).
fn make_recipes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let recipe = if let Some(r) = line.strip_prefix('\t') {
            Some(r)
        } else if line.contains(':') {
            line.split_once(';').map(|(_, r)| r)
        } else {
            None
        };
        if let Some(r) = recipe.map(|r| r.trim().trim_start_matches(['@', '-', '+'])).filter(|r| !r.is_empty()) {
            out.push(r.to_string());
        }
    }
    out
}

/// `sh -c STRING`, `bash -lc STRING`, …; a shell without `-c` runs a script
/// file or reads code from stdin and is recorded as itself.
fn shell(w: &mut Walker, argv: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx, name: &str) {
    let args = &argv[1..];
    let mut i = 0;
    let mut has_c = false;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" {
            i += 2;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if !t.starts_with("--") && t.contains('c') {
                has_c = true;
            }
            i += 1;
            continue;
        }
        break;
    }
    if has_c && let Some(s) = args.get(i) {
        shell_string(w, s, &with(ctx, format!("{name} -c"), false), redirects);
        return;
    }
    // `bash <<< 'rm -rf /'` and `sh <<EOF … EOF`: with no script operand
    // the shell runs its here-string or here-document.
    let stdin_code: Vec<Arg> = if args.get(i).is_none() {
        redirects
            .iter()
            .filter(|r| r.kind == RedirectKind::Inline && r.fd.is_none_or(|fd| fd == 0))
            .map(|r| r.target.clone())
            .collect()
    } else {
        Vec::new()
    };
    w.push(ctx, PartKind::Exec, argv.to_vec(), redirects);
    for code in stdin_code {
        shell_string(w, &code, &with(ctx, format!("{name} stdin"), false), vec![]);
    }
}

/// True when `words` (a pipeline stage, unexpanded) run a shell that reads
/// its program from stdin: `sh`, `bash -s`, `sudo bash -`, `env sh`.
pub(crate) fn reads_stdin_code(words: &[Arg]) -> bool {
    let mut i = 0;
    while let Some(wd) = words.get(i) {
        match system_program(&wd.text) {
            Some("sudo" | "doas" | "env" | "command" | "exec" | "nohup" | "nice" | "builtin") => i += 1,
            _ if wd.text.starts_with('-') || wd.text.contains('=') && i > 0 => i += 1,
            _ => break,
        }
    }
    let Some(prog) = words.get(i).and_then(|wd| system_program(&wd.text)) else {
        return false;
    };
    if !is_shell(prog) {
        return false;
    }
    let mut rest = words[i + 1..].iter().map(|a| a.text.as_str());
    rest.all(|t| t == "-" || t == "-s" || t.starts_with('-') && !t.contains('c') || t.starts_with('+'))
}

/// Parses a string argument as shell code one level deeper.
fn shell_string(w: &mut Walker, s: &Arg, ctx: &Ctx, redirects: Vec<Redirect>) {
    let mut c = ctx.clone();
    c.depth += 1;
    if !redirects.is_empty() {
        w.push(ctx, PartKind::Redirection, vec![], redirects);
    }
    if s.dynamic {
        // The code is only known at run time. Walk what we can see (it may
        // contain `$(curl …)`), and record that unknown code runs.
        w.push(&c, PartKind::Dynamic, vec![s.clone()], vec![]);
    }
    // `eval`, `trap` and aliases run in this shell, but treating every
    // string as another shell only hides values, which can only make the
    // walk see less as known (and rate it higher).
    w.new_shell(&s.text, &c);
}

fn env(w: &mut Walker, argv: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx) {
    let args = &argv[1..];
    let mut c = with(ctx, "env", false);
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-S" || t == "--split-string" {
            // `env -S 'cmd args'` splits the string into argv.
            if let Some(s) = args.get(i + 1) {
                // env -S splits its string with shell-like quoting: parse it
                // as a command line, with any further arguments appended.
                let mut text = s.text.clone();
                for a in &args[i + 2..] {
                    text.push(' ');
                    text.push_str(&a.text);
                }
                let dynamic = args[i + 1..].iter().any(|a| a.dynamic);
                shell_string(w, &Arg { text, dynamic, glob: false }, &with(&c, "env -S", false), redirects);
                return;
            }
        }
        if t.starts_with('-') && t.len() > 1 {
            if takes_value("env", t) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some((k, v)) = t.split_once('=')
            && !k.is_empty()
            && k.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            let value = Arg { text: v.to_string(), dynamic: args[i].dynamic, glob: false };
            code_in_variable(w, k, &value, ctx);
            c.assignments.push((k.to_string(), value));
            i += 1;
            continue;
        }
        break;
    }
    let rest = &args[i.min(args.len())..];
    if rest.is_empty() {
        w.push(ctx, PartKind::Exec, argv.to_vec(), redirects);
    } else {
        exec(w, rest.to_vec(), redirects, &c);
    }
}

/// `find … -exec cmd {} ;` runs cmd once per file: record find itself, then
/// each `-exec`/`-execdir`/`-ok`/`-okdir` command as its own part.
fn find(w: &mut Walker, argv: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx) {
    w.push(ctx, PartKind::Exec, argv.to_vec(), redirects);
    let mut i = 1;
    while i < argv.len() {
        let t = argv[i].text.as_str();
        if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < argv.len() && argv[end].text != ";" && argv[end].text != "+" {
                end += 1;
            }
            let inner: Vec<Arg> = argv[start..end.min(argv.len())]
                .iter()
                .map(|a| {
                    if a.text.contains("{}") {
                        Arg { text: a.text.clone(), dynamic: true, glob: false }
                    } else {
                        a.clone()
                    }
                })
                .collect();
            if !inner.is_empty() {
                exec(w, inner, vec![], &with(ctx, format!("find {t}"), false));
            }
            i = end + 1;
            continue;
        }
        i += 1;
    }
}

/// What xargs appends, or puts in place of its replace string: input only
/// known at run time.
fn stdin_arg() -> Arg {
    Arg { text: "{stdin}".into(), dynamic: true, glob: false }
}

/// `xargs [opts] cmd args…` runs cmd with input words appended, or with
/// each input line put in place of the `-I`/`-i`/`--replace` string. An
/// argument that is the replace string becomes [`stdin_arg`], one that
/// contains it is dynamic. Literal text piped in (`echo / | xargs rm -rf`)
/// is what the input is.
fn xargs(w: &mut Walker, args: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx) {
    let (opts, rest) = split_options("xargs", args);
    let mut replace: Option<String> = None;
    for (k, o) in opts.iter().enumerate() {
        let t = o.text.as_str();
        replace = match t {
            "-I" | "-J" => opts.get(k + 1).map(|v| v.text.clone()),
            "-i" | "--replace" => Some("{}".into()),
            _ if t.starts_with("--replace=") => Some(t["--replace=".len()..].to_string()),
            _ if t.starts_with("-I") || t.starts_with("-i") => Some(t[2..].to_string()),
            _ => replace,
        };
    }
    let mut inner: Vec<Arg> = if rest.is_empty() { vec![Arg::literal("echo")] } else { rest.to_vec() };
    let c = with(ctx, "xargs", false);
    let known = ctx.stdin.as_deref().filter(|s| !s.trim().is_empty());
    match replace.filter(|r| !r.is_empty()) {
        Some(r) => {
            if let Some(text) = known {
                for line in text.lines().filter(|l| !l.trim().is_empty()).take(16) {
                    let each = inner.iter().map(|a| Arg { text: a.text.replace(&r, line), ..a.clone() }).collect();
                    exec(w, each, redirects.clone(), &c);
                }
            }
            for a in &mut inner {
                if a.text == r {
                    *a = stdin_arg();
                } else if a.text.contains(&r) {
                    a.dynamic = true;
                }
            }
        }
        None => {
            if let Some(text) = known {
                let mut each = inner.clone();
                each.extend(text.split_whitespace().take(256).map(Arg::literal));
                exec(w, each, redirects.clone(), &c);
            }
            inner.push(stdin_arg());
        }
    }
    exec(w, inner, redirects, &c);
}

/// True when code run by `ctx`'s command stays in the live shell: not in a
/// subshell, another shell or another program.
fn persists(ctx: &Ctx) -> bool {
    !ctx.in_substitution
        && ctx.pipes.len() <= 1
        && ctx.wrappers.iter().all(|w| matches!(w.as_str(), "eval" | "command" | "builtin") || w.starts_with("if $"))
}

/// Code the live shell keeps to run later (an alias's value, a trap, a key
/// binding): shown to the person as a definition, and walked now as if it
/// ran, so it is rated, and denied, by what it would do.
pub(crate) fn later(w: &mut Walker, ctx: &Ctx, wrapper: String, shown: String, code: &Arg) {
    if persists(ctx) && !w.defines.contains(&shown) {
        w.defines.push(shown);
    }
    shell_string(w, code, &with(ctx, wrapper, false), vec![]);
}

/// A key sequence's binding in readline syntax, `"\C-l": VALUE` or
/// `\C-l: VALUE`: the key text and the value.
fn readline_binding(text: &str) -> Option<(&str, &str)> {
    let t = text.trim_start();
    let end = if let Some(q) = t.strip_prefix('"') {
        // The closing quote of the key sequence, skipping escaped ones.
        let mut escaped = false;
        let close = q.char_indices().find(|&(_, c)| {
            let hit = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            hit
        })?;
        1 + close.0 + 1
    } else {
        0
    };
    let colon = end + t[end..].find(':')?;
    Some((t[..colon].trim(), t[colon + 1..].trim()))
}

/// Text typed by a macro (`"rm -rf ~\n"`): quotes and the trailing Enter
/// removed.
fn typed_text(macro_text: &str) -> String {
    let t = macro_text.trim();
    let t = t.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(t);
    let t = t.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')).unwrap_or(t);
    let mut out = t.to_string();
    for enter in ["\\n", "\\r", "\\C-m", "\\C-j", "^M", "^J", "\n", "\r"] {
        out = out.replace(enter, "\n");
    }
    out
}

/// Key bindings and completions that run a command later in the live
/// shell: bash's `bind -x 'KEYS: CMD'` and macros that type a command
/// (`bind '"KEYS": "CMD\n"'`), `complete -C CMD` and `compgen -C CMD`,
/// zsh's `bindkey -s KEYS 'CMD\n'`, fish's `bind KEYS CMD` and `abbr NAME
/// EXPANSION`.
fn live_bindings(w: &mut Walker, name: &str, argv: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx) {
    w.push(ctx, PartKind::Exec, argv.to_vec(), redirects);
    let args = &argv[1..];
    let code = |text: String, from: &Arg| Arg { text, dynamic: from.dynamic, glob: false };
    let mut found: Vec<(String, Arg)> = Vec::new();
    let mut ops: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        let value = |k: usize| -> Option<&Arg> { if t.len() > 2 { Some(a) } else { args.get(k + 1) } };
        match (name, t.get(..2).unwrap_or(t)) {
            ("bind", "-x") => {
                if let Some(v) = value(i) {
                    let text = if t.len() > 2 { &v.text[2..] } else { v.text.as_str() };
                    if let Some((keys, cmd)) = readline_binding(text) {
                        found.push((format!("bind -x {keys}: {cmd}"), code(typed_text(cmd), v)));
                    }
                }
                i += if t.len() > 2 { 1 } else { 2 };
            }
            ("complete" | "compgen", "-C") => {
                if let Some(v) = value(i) {
                    let text = if t.len() > 2 { &v.text[2..] } else { v.text.as_str() };
                    found.push((format!("{name} -C {text}"), code(text.to_string(), v)));
                }
                i += if t.len() > 2 { 1 } else { 2 };
            }
            ("bind", "-m" | "-f" | "-q" | "-u" | "-r" | "-M") | ("complete" | "compgen", "-A" | "-G" | "-W" | "-F" | "-X" | "-P" | "-S" | "-o")
            | ("abbr", "--position" | "--set-cursor" | "--regex" | "--function") => i += 2,
            _ if t.starts_with('-') && t.len() > 1 && !(name == "bindkey" && t == "-s") => i += 1,
            _ => {
                ops.push(a);
                i += 1;
            }
        }
    }
    let mut typed = false;
    match name {
        "bind" => {
            for a in &ops {
                // bash: `"KEYS": "typed text"` (a readline function name
                // runs no command).
                if let Some((keys, v)) = readline_binding(&a.text) {
                    if v.starts_with(['"', '\'']) {
                        found.push((format!("bind {keys}: {v}"), code(typed_text(v), a)));
                    }
                    typed = true;
                }
            }
            // fish: `bind KEYS COMMAND…`.
            if !typed && ops.len() >= 2 {
                let cmd = joined(&ops[1..].iter().map(|a| (*a).clone()).collect::<Vec<_>>());
                let dynamic = ops[1..].iter().any(|a| a.dynamic);
                found.push((format!("bind {}: {cmd}", ops[0].text), Arg { text: cmd, dynamic, glob: false }));
            }
        }
        "bindkey" if args.first().is_some_and(|a| a.text == "-s") => {
            if let [keys, text, ..] = ops.as_slice().get(1..).unwrap_or_default() {
                found.push((format!("bindkey -s {}: {}", keys.text, text.text), code(typed_text(&text.text), text)));
            }
        }
        "abbr" if ops.len() >= 2 => {
            let cmd = joined(&ops[1..].iter().map(|a| (*a).clone()).collect::<Vec<_>>());
            let dynamic = ops[1..].iter().any(|a| a.dynamic);
            found.push((format!("abbr {}: {cmd}", ops[0].text), Arg { text: cmd, dynamic, glob: false }));
        }
        _ => {}
    }
    for (shown, arg) in found {
        later(w, ctx, name.to_string(), shown, &arg);
    }
}

/// True when `text` is a shell or interpreter with no code of its own:
/// it runs whatever it is handed (a file name or its input) as code.
fn bare_runner(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(prog) = words.first().and_then(|w| system_program(w)) else { return false };
    let runner = is_shell(prog)
        || crate::deny::is_interpreter(prog)
        || matches!(prog, "source" | "." | "eval" | "xargs" | "parallel");
    runner && !words[1..].iter().any(|w| matches!(*w, "-c" | "-e" | "-E" | "-r" | "--eval" | "-m") || w.starts_with("-c"))
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
    let bool_value = matches!(val.to_ascii_lowercase().as_str(), "" | "true" | "false" | "yes" | "no" | "on" | "off" | "0" | "1");
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
            "sil" | "silent" | "keepalt" | "keepa" | "keepjumps" | "keepj" | "noautocmd" | "noa" | "unsilent"
                | "uns" | "lockmarks" | "loc" | "noswapfile" | "nos" | "vertical" | "vert" | "tab" | "hide"
                | "confirm" | "conf" | "sandbox" | "san" | "legacy" | "vim9cmd"
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
        _ if t.contains("system(") || t.contains("systemlist(") || t.contains("jobstart(") || t.contains("termopen(") => {
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
