//! Code the live shell keeps to run later: aliases, traps, key bindings,
//! completions and prompt hooks. It is walked now, as if it ran, and each
//! definition is kept as a line to show the person approving it.

use super::walk::{Ctx, Walker};
use super::word::Arg;
use super::wrappers::{CODE_VARS, joined, shell_string, with};
use super::{PartKind, Redirect};

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
pub(super) fn live_bindings(w: &mut Walker, name: &str, argv: &[Arg], redirects: Vec<Redirect>, ctx: &Ctx) {
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
            ("bind", "-m" | "-f" | "-q" | "-u" | "-r" | "-M")
            | ("complete" | "compgen", "-A" | "-G" | "-W" | "-F" | "-X" | "-P" | "-S" | "-o")
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
