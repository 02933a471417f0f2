//! Shell text to the list of programs it would run.
//!
//! brush-parser gives the grammar; this module walks every simple command it
//! finds — through pipelines, lists, subshells, groups, loops, functions,
//! command and process substitution — and through programs that run other
//! programs (the `wrappers` module), so that the classifier sees `rm` in
//! `sudo env X=1 timeout 5 bash -c 'rm -rf /'`. Input that does not parse is
//! kept as an [`PartKind::Unparseable`] part, which classifies as at least
//! Write: failing closed is the point.

mod later;
mod options;
mod printed;
mod vars;
mod walk;
pub mod word;
mod wrappers;

pub use word::Arg;
pub use wrappers::is_shell;

use serde::Serialize;

/// How deep `sh -c`, `eval` and substitutions may nest before we stop
/// looking and call the rest unparseable.
pub const MAX_DEPTH: u8 = 12;

/// A parsed command line.
#[derive(Debug, Clone, Serialize)]
pub struct Parsed {
    /// The text as proposed.
    pub source: String,
    /// Every program or shell action the text would run, in source order.
    pub parts: Vec<Part>,
    /// What the command leaves in the live shell to run later, one line
    /// each (`alias ls: rm -rf ~/src`, `trap on EXIT: …`, `function f: …`,
    /// `PROMPT_COMMAND: …`, `bind -x "\C-l": …`): the parts above already
    /// include that code, walked as if it ran; this is for people to read.
    pub defines: Vec<String>,
}

/// What a part is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum PartKind {
    /// A program or builtin runs with `argv`.
    Exec,
    /// A shell function is defined (it persists in the user's shell).
    FunctionDef(String),
    /// Only variable assignments (`X=1`), which persist in the shell.
    Assignment,
    /// Only redirections, or redirections of a compound command.
    Redirection,
    /// The command name is only known at run time (`$cmd`, `$(…)`).
    Dynamic,
    /// Text the grammar (or our depth limit) could not take apart.
    Unparseable(String),
}

/// One thing the command line does.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    /// What kind of part this is.
    pub kind: PartKind,
    /// The argv actually run after wrappers are peeled off; `argv[0]` is the
    /// program as written (its path is kept: `./cat` is not `cat`).
    pub argv: Vec<Arg>,
    /// Wrappers peeled off, outermost first (`sudo`, `timeout`, `sh -c`…).
    pub wrappers: Vec<String>,
    /// Prefix and `env` assignments, and bare assignments.
    pub assignments: Vec<(String, Arg)>,
    /// Redirections attached to this part.
    pub redirects: Vec<Redirect>,
    /// True when a wrapper raised privilege (sudo, doas, su, pkexec…).
    pub privileged: bool,
    /// The chain of (pipeline id, stage) from the outermost pipeline in.
    pub pipes: Vec<(u32, u16)>,
    /// True when this part's output becomes shell code (inside `$(…)` or
    /// `<(…)` handed to eval, `sh -c`, `source`).
    pub feeds_code: bool,
    /// True when this part runs inside a command substitution.
    pub in_substitution: bool,
    /// The function whose body this part belongs to, if any.
    pub in_function: Option<String>,
    /// True for `cmd &`.
    pub background: bool,
    /// True when standard output is not the terminal: piped on, captured by
    /// a substitution, or redirected. Pagers only page on a terminal.
    pub stdout_redirected: bool,
    /// Nesting of re-parsed strings (`sh -c`, `eval`, substitutions).
    pub depth: u8,
    /// Literal text piped into this part (`echo 'print(1)' | python3`).
    pub stdin: Option<String>,
    /// Where the word naming the program is in the source, in characters
    /// (`start..end`), when the part runs at the top level (depth 0) and
    /// that word alone gave `argv[0]`. Lets unixagent edit exactly that
    /// invocation (`crate::paging`); `None` for anything re-parsed or
    /// expanded into several words.
    #[serde(skip)]
    pub program_at: Option<std::ops::Range<usize>>,
}

/// A redirection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The file descriptor, when one was written.
    pub fd: Option<i32>,
    /// The direction.
    pub kind: RedirectKind,
    /// The target word (a path, or `&N` text for duplications).
    pub target: Arg,
}

/// Direction of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&N`, `<&N`
    Duplicate,
    /// `<<`, `<<<`
    Inline,
}

impl RedirectKind {
    /// True when the target file is created or changed.
    pub fn writes(self) -> bool {
        matches!(self, RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite)
    }
}

impl Part {
    /// The program as written after wrappers (`""` for parts without one).
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", |a| a.text.as_str())
    }

    /// The arguments after the program.
    pub fn args(&self) -> &[Arg] {
        self.argv.get(1..).unwrap_or_default()
    }

    /// The text this part reads as its standard input when it is known:
    /// a here-document or here-string, or literal text piped in.
    pub fn stdin_text(&self) -> Option<&str> {
        self.redirects
            .iter()
            .rev()
            .find(|r| r.kind == RedirectKind::Inline && r.fd.is_none_or(|fd| fd == 0))
            .map(|r| r.target.text.as_str())
            .or(self.stdin.as_deref())
    }

    /// argv as one line of unquoted words, for patterns and display.
    pub fn line(&self) -> String {
        let words: Vec<&str> = self.argv.iter().map(|a| a.text.as_str()).collect();
        words.join(" ")
    }

    /// True when this part's output reaches `other`'s input through a pipe.
    pub fn pipes_into(&self, other: &Part) -> bool {
        self.pipes.iter().any(|(p, s)| other.pipes.iter().any(|(q, t)| p == q && s < t))
    }
}

/// Parses shell text. Never fails: what cannot be parsed becomes an
/// [`PartKind::Unparseable`] part.
pub fn parse(source: &str) -> Parsed {
    let mut w = walk::Walker::new(source);
    w.script(source, &walk::Ctx { straight: true, ..walk::Ctx::default() });
    Parsed { source: source.to_string(), parts: w.parts, defines: w.defines }
}

#[cfg(test)]
mod tests;
