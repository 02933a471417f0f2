//! Programs that run other programs: peeled off so the classifier sees the
//! program that actually runs. Only the system's program of each name is a
//! wrapper; `./sudo` is an unknown program like any other.

use super::later::{define_variable, later, live_bindings};
use super::options::code_in_options;
use super::walk::{Ctx, Walker};
use super::word::Arg;
use super::{PartKind, Redirect, RedirectKind};
use crate::own_cli::{self, Invocation};
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

pub(super) fn with(ctx: &Ctx, wrapper: impl Into<String>, privileged: bool) -> Ctx {
    let mut c = ctx.clone();
    c.wrappers.push(wrapper.into());
    c.privileged |= privileged;
    c
}

pub(super) fn joined(args: &[Arg]) -> String {
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
        // unixagent's `-c` without `#` is `$SHELL -c`, and `sandbox --`
        // runs its command; a child agent or a tool is a part of its own
        // (see `own_cli`).
        "unixagent" => {
            let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
            match own_cli::invocation(&texts) {
                Invocation::Shell(_) => {
                    let code = args
                        .iter()
                        .position(|a| a.text == "-c" || a.text == "--command")
                        .and_then(|i| args.get(i + 1).cloned())
                        .or_else(|| {
                            args.iter().find_map(|a| {
                                a.text.strip_prefix("--command=").map(|t| Arg { text: t.to_string(), ..a.clone() })
                            })
                        })
                        .unwrap_or_else(|| Arg::literal(String::new()));
                    shell_string(w, &code, &with(ctx, "unixagent -c", false), redirects);
                }
                Invocation::Sandboxed(_) => {
                    let rest = args.iter().position(|a| a.text == "--").map_or(&args[..0], |i| &args[i + 1..]);
                    peel(w, rest, with(ctx, "unixagent sandbox", false), redirects, &argv);
                }
                Invocation::Agent | Invocation::Tool(..) => w.push(ctx, PartKind::Exec, argv.clone(), redirects),
            }
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
pub(super) const CODE_VARS: [&str; 14] = [
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

/// Walks the value of `NAME=value` as code when NAME names a command line
/// (`PROMPT_COMMAND`, `PAGER`, `GIT_SSH_COMMAND`, …) or a prompt that
/// expands substitutions (`PS1`).
pub(crate) fn code_in_variable(w: &mut Walker, name: &str, value: &Arg, ctx: &Ctx) {
    if CODE_VARS.contains(&name) {
        let text = value.text.trim_start_matches('|').replace("%s", "FILE");
        // `LESSOPEN='|sh %s'`, `PAGER=bash`: the file or text is the code.
        let dynamic = value.dynamic || super::options::bare_runner(&text.replace("FILE", ""));
        shell_string(w, &Arg { text, dynamic, glob: false }, &with(ctx, format!("${name}"), false), vec![]);
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
pub(super) fn shell_string(w: &mut Walker, s: &Arg, ctx: &Ctx, redirects: Vec<Redirect>) {
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
