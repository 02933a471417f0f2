//! The recursive walk over brush-parser's AST.

use super::vars::Vars;
use super::word::{self, Arg, Unset};
use super::{MAX_DEPTH, Part, PartKind, Redirect, RedirectKind, wrappers};
use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect,
};
use brush_parser::{Parser, ParserOptions};

/// What the walk knows about where it is.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ctx {
    pub pipes: Vec<(u32, u16)>,
    pub wrappers: Vec<String>,
    pub assignments: Vec<(String, Arg)>,
    pub privileged: bool,
    pub feeds_code: bool,
    pub in_substitution: bool,
    pub in_function: Option<String>,
    pub background: bool,
    pub stdout_piped: bool,
    pub depth: u8,
    /// Literal text the previous pipeline stage prints into this one.
    pub stdin: Option<String>,
    /// Runs in straight-line code of the top-level shell: an assignment
    /// here holds for everything after it (see [`Vars`]).
    pub straight: bool,
}

/// Deepest parenthesis nesting the parser is given.
const MAX_PAREN_DEPTH: usize = 12;

/// The deepest nesting of `(` in `src`, counting unbalanced ones, without
/// regard to quoting (a quoted paren only makes the check stricter).
fn paren_depth(src: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in src.bytes() {
        match b {
            b'(' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// `src` with the parentheses that only group (subshells, arithmetic)
/// blanked out, and those of `$(…)`, `<(…)` and `>(…)` kept, so that a
/// substitution padded with parentheses still runs its command.
fn blank_grouping_parens(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut kept: Vec<bool> = Vec::new();
    let mut prev = '\0';
    for c in src.chars() {
        match c {
            '(' => {
                let keep = matches!(prev, '$' | '<' | '>');
                kept.push(keep);
                out.push(if keep { '(' } else { ' ' });
            }
            ')' => out.push(if kept.pop().unwrap_or(false) { ')' } else { ' ' }),
            c => out.push(c),
        }
        prev = c;
    }
    out
}

#[derive(Debug, Default)]
pub(crate) struct Walker {
    pub parts: Vec<Part>,
    next_pipeline: u32,
    /// Aliases the command defines (`alias ll='rm -rf'`), by name.
    pub(crate) aliases: std::collections::HashMap<String, String>,
    /// What the command leaves in the live shell to run later (aliases,
    /// functions, traps, key bindings, prompt hooks), as shown to people.
    pub(crate) defines: Vec<String>,
    /// The command line's own variables.
    pub(crate) vars: Vars,
    /// Variables that nothing sets, met by [`Walker::word`] since the
    /// current simple command began.
    unset_seen: Vec<String>,
}

impl Walker {
    /// A walker for the command line `source`.
    pub fn new(source: &str) -> Walker {
        Walker { vars: Vars::scan(source), ..Walker::default() }
    }

    /// Parses and walks a whole script (the top level, or a re-parsed string).
    pub fn script(&mut self, src: &str, ctx: &Ctx) {
        if ctx.depth > MAX_DEPTH {
            self.push(ctx, PartKind::Unparseable("nested too deeply".into()), vec![], vec![]);
            return;
        }
        if paren_depth(src) > MAX_PAREN_DEPTH {
            // brush-parser backtracks exponentially on deeply nested or
            // unbalanced parentheses (its `(( … ))` rule); no real command
            // nests this deep, so fail closed instead of hanging the gate.
            self.push(ctx, PartKind::Unparseable("parentheses nested too deeply to check".into()), vec![], vec![]);
            // Parentheses only group and nest. With them blanked out, the
            // words and operators left still show what would run, so a
            // `rm -rf /` padded with parentheses still meets the deny list.
            // These parts can only add to the risk of the unparseable one.
            let flat = blank_grouping_parens(src);
            let mut c = ctx.clone();
            c.depth += 1;
            self.script(&flat, &c);
            return;
        }
        let mut parser = Parser::new(std::io::Cursor::new(src.as_bytes()), &ParserOptions::default());
        match parser.parse_program() {
            Ok(program) => {
                for cc in &program.complete_commands {
                    self.list(cc, ctx);
                }
                // `eval "$(echo rm -rf /)"`, `source <(printf …)`: what a
                // substitution prints is run as code, so walk that too.
                if ctx.feeds_code
                    && ctx.in_substitution
                    && let Some(code) = lone_command(&program).and_then(printed_text)
                {
                    let mut c = ctx.clone();
                    c.depth += 1;
                    c.in_substitution = false;
                    c.feeds_code = false;
                    c.wrappers.push("eval".into());
                    self.script(&code, &c);
                }
            }
            Err(e) => {
                self.push(ctx, PartKind::Unparseable(e.to_string()), vec![], vec![]);
                // Still look inside for substitutions we can find by hand, so
                // a broken line cannot hide `$(curl … | sh)` from the deny list.
                for inner in word::embedded_substitutions(src) {
                    let mut c = ctx.clone();
                    c.depth += 1;
                    c.in_substitution = true;
                    self.script(&inner, &c);
                }
            }
        }
    }

    pub(crate) fn push(&mut self, ctx: &Ctx, kind: PartKind, argv: Vec<Arg>, redirects: Vec<Redirect>) {
        // The last redirection of fd 1 decides where it goes. A duplicate
        // (`>&2`, `1>&2`) may point it back at the terminal, so only a file
        // counts as redirected (`git log 1>&2` still pages).
        let stdout_to_file = redirects
            .iter()
            .rev()
            .find(|r| r.fd.is_none_or(|fd| fd == 1) && (r.kind.writes() || r.kind == RedirectKind::Duplicate))
            .is_some_and(|r| r.kind.writes());
        let stdout_redirected = ctx.stdout_piped || ctx.in_substitution || stdout_to_file;
        self.parts.push(Part {
            kind,
            argv,
            wrappers: ctx.wrappers.clone(),
            assignments: ctx.assignments.clone(),
            redirects,
            privileged: ctx.privileged,
            pipes: ctx.pipes.clone(),
            feeds_code: ctx.feeds_code,
            in_substitution: ctx.in_substitution,
            in_function: ctx.in_function.clone(),
            background: ctx.background,
            stdout_redirected,
            depth: ctx.depth,
            stdin: ctx.stdin.clone(),
            program_at: None,
        });
    }

    fn list(&mut self, list: &CompoundList, ctx: &Ctx) {
        for item in &list.0 {
            let mut c = ctx.clone();
            c.background |= matches!(item.1, ast::SeparatorOperator::Async);
            c.straight &= !c.background;
            self.pipeline(&item.0.first, &c);
            // What follows `&&` or `||` may not run.
            c.straight = false;
            for ao in &item.0.additional {
                match ao {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, &c),
                }
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline, ctx: &Ctx) {
        let id = self.next_pipeline;
        self.next_pipeline += 1;
        let mut printed: Option<String> = None;
        for (i, cmd) in p.seq.iter().enumerate() {
            let mut c = ctx.clone();
            c.pipes.push((id, u16::try_from(i).unwrap_or(u16::MAX)));
            c.stdout_piped |= i + 1 < p.seq.len();
            c.stdin = printed.take();
            // Each stage of a pipeline runs in a subshell.
            c.straight &= p.seq.len() == 1;
            self.command(cmd, &c);
            printed = printed_text(cmd);
            // `echo 'rm -rf /' | sh`: literal text piped into a shell is code.
            if let (Some(code), Some(next)) = (printed.clone(), p.seq.get(i + 1))
                && simple_words(next).is_some_and(|w| wrappers::reads_stdin_code(&w))
            {
                let mut c = ctx.clone();
                c.pipes.push((id, u16::try_from(i + 1).unwrap_or(u16::MAX)));
                c.wrappers.push("sh stdin".into());
                c.depth += 1;
                self.new_shell(&code, &c);
            }
        }
    }

    fn command(&mut self, cmd: &Command, ctx: &Ctx) {
        match cmd {
            Command::Simple(sc) => self.simple(sc, ctx),
            Command::Compound(cc, redirects) => {
                self.compound(cc, ctx);
                self.redirect_only(redirects.as_ref().map(|r| r.0.as_slice()), ctx);
            }
            Command::Function(f) => {
                let name = f.fname.value.clone();
                self.push(ctx, PartKind::FunctionDef(name.clone()), vec![], vec![]);
                if !ctx.in_substitution && ctx.wrappers.iter().all(|w| w == "eval") {
                    let body = f.body.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
                    self.defines.push(format!("function {name}: {body}"));
                }
                let mut c = ctx.clone();
                c.in_function = Some(name);
                c.straight = false;
                // The body is walked as if it ran: defining `ls() { rm -rf ~; }`
                // and calling `ls` is as bad as running the body.
                self.compound(&f.body.0, &c);
                self.redirect_only(f.body.1.as_ref().map(|r| r.0.as_slice()), &c);
            }
            Command::ExtendedTest(t, redirects) => {
                let mut words = Vec::new();
                ext_test_words(&t.expr, &mut words);
                let mut argv = vec![Arg::literal("[[")];
                for w in words {
                    argv.extend(self.word(&w.value, ctx));
                }
                self.push(ctx, PartKind::Exec, argv, vec![]);
                self.redirect_only(redirects.as_ref().map(|r| r.0.as_slice()), ctx);
            }
        }
    }

    fn redirect_only(&mut self, redirects: Option<&[IoRedirect]>, ctx: &Ctx) {
        let Some(rs) = redirects else { return };
        if rs.is_empty() {
            return;
        }
        let out: Vec<Redirect> = rs.iter().filter_map(|r| self.redirect(r, ctx)).collect();
        self.push(ctx, PartKind::Redirection, vec![], out);
    }

    fn compound(&mut self, cc: &CompoundCommand, ctx: &Ctx) {
        // Loops and branches may run their assignments any number of
        // times, or none; a brace group runs its list once.
        if let CompoundCommand::Subshell(sub) = cc {
            // A subshell runs its list once; what it sets ends with it.
            let saved = self.vars.save();
            self.list(&sub.list, ctx);
            self.vars.restore(saved);
            return;
        }
        let branching;
        let ctx = if ctx.straight && !matches!(cc, CompoundCommand::BraceGroup(_)) {
            branching = Ctx { straight: false, ..ctx.clone() };
            &branching
        } else {
            ctx
        };
        match cc {
            CompoundCommand::Arithmetic(a) => {
                self.arith(&a.expr.value, ctx);
                // brush-parser reads any `( ( … ) )` as arithmetic. bash and
                // zsh read `((` as arithmetic only when the parenthesis
                // matching the second `(` is followed at once by `)`, and as
                // nested subshells otherwise, so `((rm -rf /) )` runs `rm`;
                // dash (`sh -c` on Debian) has no arithmetic command and runs
                // `((rm -rf /))` too. So the expression is also walked as the
                // subshell it may be, which can only add parts: arithmetic
                // such as `(( i++ ))` then reads as an unknown program.
                let mut c = ctx.clone();
                c.depth += 1;
                self.script(&format!("({})", a.expr.value), &c);
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    self.arith(&e.value, ctx);
                }
                self.list(&f.body.list, ctx);
            }
            CompoundCommand::BraceGroup(g) => self.list(&g.list, ctx),
            CompoundCommand::Subshell(s) => self.list(&s.list, ctx),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, ctx);
                }
                self.list(&f.body.list, ctx);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, ctx);
                for item in &c.cases {
                    if let Some(l) = &item.cmd {
                        self.list(l, ctx);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition, ctx);
                self.list(&i.then, ctx);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, ctx);
                    }
                    self.list(&e.body, ctx);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, ctx);
                self.list(&w.1.list, ctx);
            }
            CompoundCommand::Coprocess(c) => {
                let mut cx = ctx.clone();
                cx.background = true;
                self.command(&c.body, &cx);
            }
        }
    }

    fn arith(&mut self, expr: &str, ctx: &Ctx) {
        for inner in word::embedded_substitutions(expr) {
            self.substitution(&inner, false, ctx);
        }
    }

    /// Resolves a word, walking any substitutions in it, and returns its fields.
    pub(crate) fn word(&mut self, raw: &str, ctx: &Ctx) -> Vec<Arg> {
        let r = word::resolve_in(raw, &self.vars, Unset::Unknown);
        self.unset_seen.extend(r.unset);
        for s in &r.substitutions {
            self.substitution(s, false, ctx);
        }
        r.fields
    }

    /// Like [`Walker::word`], for a word of a simple command: also records
    /// where in the source each field came from (see [`Part::program_at`]).
    fn arg_word(
        &mut self,
        w: &ast::Word,
        ctx: &Ctx,
        argv: &mut Vec<Arg>,
        at: &mut Vec<Option<std::ops::Range<usize>>>,
    ) {
        let fields = self.word(&w.value, ctx);
        let span = match (&w.loc, fields.len()) {
            (Some(loc), 1) if ctx.depth == 0 => Some(loc.start.index..loc.end.index),
            _ => None,
        };
        at.extend(fields.iter().map(|_| span.clone()));
        argv.extend(fields);
    }

    /// Walks `code` as the script of another shell (`sh -c`, a shell
    /// reading a pipe): it starts with none of this line's values known and
    /// its assignments end with it.
    pub(crate) fn new_shell(&mut self, code: &str, ctx: &Ctx) {
        let saved = self.vars.save();
        self.vars.forget_values();
        let c = Ctx { straight: true, ..ctx.clone() };
        self.script(code, &c);
        self.vars.restore(saved);
    }

    /// Walks the body of `$(…)`, `<(…)` or `>(…)`. `feeds_code` is set when its
    /// output is about to be run as shell code.
    pub(crate) fn substitution(&mut self, body: &str, feeds_code: bool, ctx: &Ctx) {
        let mut c = ctx.clone();
        c.depth += 1;
        c.in_substitution = true;
        c.feeds_code |= feeds_code;
        // A substitution starts its own pipelines; it does not inherit the
        // outer command's wrappers or assignments.
        c.pipes.clear();
        c.stdout_piped = false;
        c.wrappers.clear();
        c.assignments.clear();
        c.stdin = None;
        // A subshell sees this shell's values; its own assignments hold
        // until it ends.
        c.straight = true;
        let saved = self.vars.save();
        self.script(body, &c);
        self.vars.restore(saved);
    }

    fn simple(&mut self, sc: &ast::SimpleCommand, ctx: &Ctx) {
        let mut argv: Vec<Arg> = Vec::new();
        let mut assigns: Vec<(String, Arg)> = Vec::new();
        let mut redirects = Vec::new();
        let mut proc_subs: Vec<String> = Vec::new();
        let mut items: Vec<&CommandPrefixOrSuffixItem> = Vec::new();
        if let Some(p) = &sc.prefix {
            items.extend(p.0.iter());
        }
        let name_pos = items.len();
        if let Some(p) = &sc.suffix {
            items.extend(p.0.iter());
        }
        // Substitutions in the words of `eval …`, `bash -c …`, `sudo sh -c …`
        // produce code that runs: mark them so the deny list can see
        // `eval "$(curl …)"`. Over-marking only makes the result stricter.
        let runs_code = sc
            .word_or_name
            .iter()
            .map(|w| w.value.as_str())
            .chain(items.iter().filter_map(|i| match i {
                CommandPrefixOrSuffixItem::Word(w) => Some(w.value.as_str()),
                _ => None,
            }))
            .any(|raw| word::resolve(raw).fields.first().is_some_and(|a| wrappers::is_code_runner(&a.text)));
        let wctx_owned;
        let ctx_for_words = if runs_code {
            let mut c = ctx.clone();
            c.feeds_code = true;
            wctx_owned = c;
            &wctx_owned
        } else {
            ctx
        };
        let unset_mark = self.unset_seen.len();
        // The raw words of argv, for reading them again with unset
        // variables empty.
        let mut raw_words: Vec<&str> = Vec::new();
        // Where each argv field came from in the source (top level only).
        let mut at: Vec<Option<std::ops::Range<usize>>> = Vec::new();
        // Bare assignments, with their values when literal.
        let mut bare: Vec<(String, Option<Vec<String>>)> = Vec::new();
        let mut name_done = false;
        for (i, item) in items.iter().enumerate() {
            if i == name_pos && !name_done {
                if let Some(w) = &sc.word_or_name {
                    self.arg_word(w, ctx_for_words, &mut argv, &mut at);
                    raw_words.push(&w.value);
                }
                name_done = true;
            }
            match item {
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    // `bash <<< "$(curl …)"`, `sh < <(tr …)`: what a
                    // substitution in a here-string, here-document or input
                    // redirection prints is the shell's code. (Where output
                    // goes is not code: `bash x.sh 2> >(sed …)`.)
                    let input = matches!(
                        r,
                        IoRedirect::HereString(..)
                            | IoRedirect::HereDocument(..)
                            | IoRedirect::File(_, IoFileRedirectKind::Read, _)
                    );
                    if let Some(r) = self.redirect(r, if input { ctx_for_words } else { ctx }) {
                        redirects.push(r);
                    }
                }
                CommandPrefixOrSuffixItem::Word(w) => {
                    self.arg_word(w, ctx_for_words, &mut argv, &mut at);
                    raw_words.push(&w.value);
                }
                CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    if i < name_pos {
                        let value = assignment_value(&w.value);
                        let fields = self.word(&value, ctx_for_words);
                        let literal = match &a.value {
                            ast::AssignmentValue::Array(elems) => {
                                let mut all = Vec::new();
                                for (_, e) in elems {
                                    all.extend(self.word(&e.value, ctx_for_words));
                                }
                                (!a.append && all.iter().all(|f| !f.dynamic))
                                    .then(|| all.into_iter().map(|f| f.text).collect())
                            }
                            ast::AssignmentValue::Scalar(_) => (!a.append && fields.iter().all(|f| !f.dynamic))
                                .then(|| vec![fields.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" ")]),
                        };
                        let v = fields.into_iter().next().unwrap_or_else(|| Arg::literal(""));
                        bare.push((assignment_name(a), literal));
                        assigns.push((assignment_name(a), v));
                    } else {
                        // After the name (`export PATH=…`, `declare x=1`): an argument.
                        self.arg_word(w, ctx_for_words, &mut argv, &mut at);
                        raw_words.push(&w.value);
                    }
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                    let text = subshell_text(sub);
                    argv.push(Arg { text: format!("<({text})"), dynamic: true, glob: false });
                    at.push(None);
                    let _ = kind;
                    proc_subs.push(text);
                }
            }
        }
        if !name_done && let Some(w) = &sc.word_or_name {
            self.arg_word(w, ctx_for_words, &mut argv, &mut at);
            raw_words.push(&w.value);
        }
        let unset = self.unset_seen.split_off(unset_mark);
        // Process substitutions feed code when the program is a shell or
        // `source`: `bash <(curl …)`.
        for body in proc_subs {
            self.substitution(&body, runs_code, ctx);
        }
        for (name, value) in &assigns {
            wrappers::code_in_variable(self, name, value, ctx);
        }
        wrappers::code_in_subscripts(self, &argv, ctx);
        wrappers::code_in_glob_qualifiers(self, &argv, ctx);
        let mut c = ctx.clone();
        c.assignments.extend(assigns);
        if argv.is_empty() {
            for (name, value) in &c.assignments {
                super::later::define_variable(self, name, value, ctx);
            }
            let kind = if c.assignments.is_empty() { PartKind::Redirection } else { PartKind::Assignment };
            self.push(&c, kind, argv, redirects);
            for (name, value) in bare {
                self.vars.assign(&name, value, ctx.straight);
            }
            return;
        }
        self.shell_variables(&argv, ctx.straight);
        // `rm -rf "$D"/*` with nothing setting D: read it as the shell
        // would if the environment does not set it either.
        let alternative = (!unset.is_empty()).then(|| self.if_unset(&raw_words)).flatten();
        // Wrappers only peel words off the front (`sudo`, `env X=1`,
        // `timeout 5`), so a part at this depth whose argv is a tail of this
        // argv runs the program named by that tail's first word.
        let top = (ctx.depth == 0 && at.iter().any(Option::is_some))
            .then(|| argv.iter().map(|a| a.text.clone()).collect::<Vec<_>>());
        let before = self.parts.len();
        wrappers::exec(self, argv.clone(), redirects.clone(), &c);
        if let Some(words) = top {
            for p in &mut self.parts[before..] {
                let k = p.argv.len();
                if p.depth == 0
                    && p.kind == PartKind::Exec
                    && k > 0
                    && k <= words.len()
                    && p.argv.iter().zip(&words[words.len() - k..]).all(|(a, w)| a.text == *w)
                {
                    p.program_at = at[words.len() - k].clone();
                }
            }
        }
        if let Some(alt) = alternative
            && alt.iter().map(|a| &a.text).ne(argv.iter().map(|a| &a.text))
        {
            let mut c = c;
            c.wrappers.push(format!("if ${} is unset", unset[0]));
            let main = self.parts.len();
            wrappers::exec(self, alt, redirects, &c);
            // The same words, so the same program word where the program
            // is the one the line named.
            for k in main..self.parts.len() {
                let found = self.parts[before..main]
                    .iter()
                    .find(|p| p.program_at.is_some() && p.program() == self.parts[k].program())
                    .and_then(|p| p.program_at.clone());
                if self.parts[k].depth == 0 {
                    self.parts[k].program_at = found;
                }
            }
        }
    }

    /// argv read again with variables that nothing sets taken as empty;
    /// `None` when the shell would stop there (`${D:?}`).
    fn if_unset(&self, raw_words: &[&str]) -> Option<Vec<Arg>> {
        let mut argv = Vec::new();
        for raw in raw_words {
            let r = word::resolve_in(raw, &self.vars, Unset::Empty);
            if r.aborts {
                return None;
            }
            argv.extend(r.fields);
        }
        Some(argv)
    }

    /// Builtins that set the shell's own variables: `export`/`declare`
    /// `NAME=value`, `unset NAME`, `set -- ARGS`.
    fn shell_variables(&mut self, argv: &[Arg], straight: bool) {
        let Some((first, args)) = argv.split_first() else { return };
        match first.text.as_str() {
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let exports =
                    first.text == "export" || args.iter().any(|a| a.text.starts_with('-') && a.text.contains('x'));
                for a in args {
                    if let Some((name, value)) = a.text.split_once('=') {
                        let literal = (!a.dynamic && !name.ends_with('+')).then(|| vec![value.to_string()]);
                        let name = name.trim_end_matches('+');
                        if exports {
                            self.vars.export(name, literal, straight);
                        } else {
                            self.vars.assign(name, literal, straight);
                        }
                    }
                }
            }
            "unset" => {
                for a in args.iter().filter(|a| !a.text.starts_with('-')) {
                    self.vars.unset(&a.text, straight);
                }
            }
            "set" => {
                let rest = match args.first().map(|a| a.text.as_str()) {
                    Some("--") => Some(&args[1..]),
                    Some(t) if !t.starts_with(['-', '+']) => Some(args),
                    _ => None,
                };
                if let Some(rest) = rest {
                    let literal =
                        rest.iter().all(|a| !a.dynamic).then(|| rest.iter().map(|a| a.text.clone()).collect());
                    self.vars.set_positional(literal, straight);
                }
            }
            _ => {}
        }
    }

    fn redirect(&mut self, r: &IoRedirect, ctx: &Ctx) -> Option<Redirect> {
        match r {
            IoRedirect::File(fd, kind, target) => {
                let kind = match kind {
                    IoFileRedirectKind::Read => RedirectKind::Read,
                    IoFileRedirectKind::Write | IoFileRedirectKind::Clobber => RedirectKind::Write,
                    IoFileRedirectKind::Append => RedirectKind::Append,
                    IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                    IoFileRedirectKind::DuplicateInput | IoFileRedirectKind::DuplicateOutput => RedirectKind::Duplicate,
                };
                let target = match target {
                    IoFileRedirectTarget::Filename(w) => first(self.word(&w.value, ctx)),
                    IoFileRedirectTarget::Fd(n) => Arg::literal(format!("&{n}")),
                    IoFileRedirectTarget::Duplicate(w) => {
                        let a = first(self.word(&w.value, ctx));
                        // `>& file` in bash writes to a file when the word is not a number.
                        if kind == RedirectKind::Duplicate && !a.text.chars().all(|ch| ch.is_ascii_digit() || ch == '-')
                        {
                            return Some(Redirect { fd: *fd, kind: RedirectKind::Write, target: a });
                        }
                        Arg::literal(format!("&{}", a.text))
                    }
                    IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        let text = subshell_text(sub);
                        self.substitution(&text, false, ctx);
                        Arg { text: format!("<({text})"), dynamic: true, glob: false }
                    }
                };
                Some(Redirect { fd: *fd, kind, target })
            }
            IoRedirect::OutputAndError(w, append) => Some(Redirect {
                fd: None,
                kind: if *append { RedirectKind::Append } else { RedirectKind::Write },
                target: first(self.word(&w.value, ctx)),
            }),
            IoRedirect::HereString(fd, w) => {
                let a = first(self.word(&w.value, ctx));
                Some(Redirect { fd: *fd, kind: RedirectKind::Inline, target: a })
            }
            IoRedirect::HereDocument(fd, doc) => {
                if doc.requires_expansion {
                    for s in word::embedded_substitutions(&doc.doc.value) {
                        self.substitution(&s, false, ctx);
                    }
                }
                Some(Redirect { fd: *fd, kind: RedirectKind::Inline, target: Arg::literal(doc.doc.value.clone()) })
            }
        }
    }
}

/// The words of a simple command, resolved without walking substitutions.
fn simple_words(cmd: &Command) -> Option<Vec<Arg>> {
    let Command::Simple(sc) = cmd else { return None };
    let mut out: Vec<Arg> = Vec::new();
    let suffix = sc.suffix.iter().flat_map(|s| s.0.iter()).filter_map(|i| match i {
        CommandPrefixOrSuffixItem::Word(w) => Some(w.value.as_str()),
        _ => None,
    });
    for raw in sc.word_or_name.iter().map(|w| w.value.as_str()).chain(suffix) {
        out.extend(word::resolve(raw).fields);
    }
    Some(out)
}

/// What the substitution `$(body)` prints when that is known without
/// running anything: literal `echo`/`printf` output, or the program that
/// `which`, `command -v` and `type -P` look up.
pub(crate) fn literal_output(body: &str) -> Option<String> {
    let mut parser = Parser::new(std::io::Cursor::new(body.as_bytes()), &ParserOptions::default());
    let program = parser.parse_program().ok()?;
    let cmd = lone_command(&program)?;
    if let Some(text) = printed_text(cmd) {
        return Some(text);
    }
    let words = simple_words(cmd)?;
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let name = match texts.as_slice() {
        ["which", n] | ["command", "-v", n] | ["type", "-P" | "-p", n] => *n,
        _ => return None,
    };
    let literal = words.iter().all(|w| !w.dynamic) && !name.contains('/') && !name.is_empty();
    literal.then(|| name.to_string())
}

/// The one command a script consists of, if it is one.
fn lone_command(program: &ast::Program) -> Option<&Command> {
    let [cc] = program.complete_commands.as_slice() else { return None };
    let [item] = cc.0.as_slice() else { return None };
    if !item.0.additional.is_empty() {
        return None;
    }
    let [cmd] = item.0.first.seq.as_slice() else { return None };
    Some(cmd)
}

/// What `echo …` or `printf …` with literal arguments prints, when that is
/// all the command does.
fn printed_text(cmd: &Command) -> Option<String> {
    let words = simple_words(cmd)?;
    let (prog, args) = words.split_first()?;
    if args.iter().any(|a| a.dynamic) {
        return None;
    }
    let args: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let text = super::printed::output(crate::paths::system_program(&prog.text)?, &args)?;
    (!text.trim().is_empty()).then_some(text)
}

fn first(fields: Vec<Arg>) -> Arg {
    let dynamic = fields.len() != 1;
    let mut a = fields.into_iter().next().unwrap_or_else(|| Arg::literal(""));
    a.dynamic |= dynamic;
    a
}

fn assignment_name(a: &ast::Assignment) -> String {
    match &a.name {
        ast::AssignmentName::VariableName(n) => n.clone(),
        ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
    }
}

/// The value text of `NAME=value` / `NAME+=value`.
fn assignment_value(raw: &str) -> String {
    raw.split_once('=').map_or(String::new(), |(_, v)| v.to_string())
}

/// Recovers the source text of a process substitution body.
fn subshell_text(sub: &ast::SubshellCommand) -> String {
    sub.list.to_string()
}

fn ext_test_words<'a>(e: &'a ExtendedTestExpr, out: &mut Vec<&'a ast::Word>) {
    match e {
        ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
            ext_test_words(a, out);
            ext_test_words(b, out);
        }
        ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => ext_test_words(a, out),
        ExtendedTestExpr::UnaryTest(_, w) => out.push(w),
        ExtendedTestExpr::BinaryTest(_, a, b) => {
            out.push(a);
            out.push(b);
        }
    }
}
