//! What a command line says about its own variables, for resolving words
//! the way the shell will: `a=r; b=m; $a$b -rf x` runs `rm`, and so do
//! `set -- rm -rf x; "$@"`, `arr=(rm -rf x); "${arr[@]}"` and `IFS=,;
//! c=rm,-rf,x; $c`.
//!
//! Only what is certain is known. A variable is known when the one place
//! the line names it (as anything but an expansion) is an assignment of a
//! literal value run in straight-line code (not in a loop, a branch, a
//! pipeline, a subshell or after `&&`/`||`), and it is used after that. A
//! variable the line never names is *unset in the parse*: its value is
//! whatever the environment gives, empty when it gives nothing, so the
//! walker also reads the command as if it were empty (`rm -rf "$D"/*` is
//! `rm -rf /*` then). Anything else is unknown, and a program name built
//! from it is rated by what it could be.

use std::collections::{HashMap, HashSet};

use super::word::{Known, Var};

/// The variables of one command line.
#[derive(Debug, Default)]
pub(crate) struct Vars {
    /// How often each name appears in the source other than as an
    /// expansion (`x=`, `for x`, `read x`, `unset x`, or a word `x`).
    named: HashMap<String, usize>,
    /// Known values.
    values: HashMap<String, Vec<String>>,
    /// Names `unset` in straight-line code.
    unset: HashSet<String>,
    /// `set -- …`, when it is the only thing that sets them.
    positional: Option<Vec<String>>,
    /// `IFS`, when known.
    ifs: Option<String>,
    /// Names exported with a known value (`export T=rm`): another shell
    /// started later sees them.
    exported: HashSet<String>,
}

impl Vars {
    /// Counts the names in `source`, the whole command line.
    pub fn scan(source: &str) -> Vars {
        let mut named: HashMap<String, usize> = HashMap::new();
        let b = source.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let before = &source[..start];
                let expansion = before.ends_with('$')
                    || before.ends_with("${")
                    || before.ends_with("${!")
                    || before.ends_with("${#");
                // A name is set where it starts a word: `x=1`, `read x`,
                // `for x`, `unset x`, `(x=1)`. Inside a word (`-a`, `/a`,
                // `x.a`) it is an option letter or part of a path.
                let starts_word = start == 0 || b" \t\n;&|(){}`\"'!".contains(&b[start - 1]);
                // `${x:=v}` and `${x=v}` set x too.
                let assigns_default =
                    before.ends_with("${") && matches!(&source[i..], r if r.starts_with(":=") || r.starts_with('='));
                if !expansion && starts_word || assigns_default {
                    *named.entry(source[start..i].to_string()).or_default() += 1;
                }
                continue;
            }
            i += 1;
        }
        Vars { named, ..Vars::default() }
    }

    fn named(&self, name: &str) -> usize {
        self.named.get(name).copied().unwrap_or(0)
    }

    /// An assignment `name=value` walked in straight-line code or not.
    /// `value` is `None` when it is not a literal.
    pub fn assign(&mut self, name: &str, value: Option<Vec<String>>, straight: bool) {
        self.unset.remove(name);
        match value {
            Some(v) if straight && self.named(name) == 1 => {
                if name == "IFS" {
                    self.ifs = v.first().cloned();
                }
                self.values.insert(name.to_string(), v);
            }
            _ => {
                if name == "IFS" {
                    self.ifs = None;
                }
                self.values.remove(name);
            }
        }
    }

    /// `unset name`.
    pub fn unset(&mut self, name: &str, straight: bool) {
        self.values.remove(name);
        if straight {
            self.unset.insert(name.to_string());
        }
    }

    /// What is known now, to be restored when a subshell or another shell
    /// ends: their assignments do not reach the shell that started them.
    pub fn save(&self) -> Saved {
        Saved {
            values: self.values.clone(),
            unset: self.unset.clone(),
            positional: self.positional.clone(),
            ifs: self.ifs.clone(),
        }
    }

    /// Back to what [`Vars::save`] saved.
    pub fn restore(&mut self, saved: Saved) {
        self.values = saved.values;
        self.unset = saved.unset;
        self.positional = saved.positional;
        self.ifs = saved.ifs;
    }

    /// Another shell starts (`sh -c`, `ssh host cmd`): of the values this
    /// line set it sees only the exported ones; the others are unset there.
    pub fn forget_values(&mut self) {
        let values = std::mem::take(&mut self.values);
        for (name, value) in values {
            if self.exported.contains(&name) {
                self.values.insert(name, value);
            } else {
                self.unset.insert(name);
            }
        }
        self.positional = None;
        self.ifs = None;
    }

    /// `export NAME=value`: as [`Vars::assign`], and other shells see it.
    pub fn export(&mut self, name: &str, value: Option<Vec<String>>, straight: bool) {
        self.assign(name, value, straight);
        if self.values.contains_key(name) {
            self.exported.insert(name.to_string());
        } else {
            self.exported.remove(name);
        }
    }

    /// `set -- a b c` (or `set a b`), once, in straight-line code.
    pub fn set_positional(&mut self, args: Option<Vec<String>>, straight: bool) {
        let only = self.named("set") == 1 && self.named("shift") == 0;
        self.positional = args.filter(|_| straight && only);
    }
}

/// See [`Vars::save`].
#[derive(Debug)]
pub(crate) struct Saved {
    values: HashMap<String, Vec<String>>,
    unset: HashSet<String>,
    positional: Option<Vec<String>>,
    ifs: Option<String>,
}

impl Known for Vars {
    fn var(&self, name: &str) -> Var {
        if let Some(v) = self.values.get(name) {
            Var::Value(v.clone())
        } else if self.unset.contains(name) || self.named(name) == 0 {
            Var::Unset
        } else {
            Var::Unknown
        }
    }

    fn positional(&self) -> Var {
        self.positional.clone().map_or(Var::Unknown, Var::Value)
    }

    fn output(&self, body: &str) -> Option<String> {
        super::walk::literal_output(body)
    }

    fn ifs(&self) -> Option<&str> {
        self.ifs.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_counted_outside_expansions() {
        let v = Vars::scan("a=r; b=m; $a$b -rf ${c:-x} \"${#d}\" for e in; r${NOPE}m -a /b");
        assert_eq!(v.named("a"), 1);
        assert_eq!(v.named("b"), 1);
        assert_eq!(v.named("c"), 0);
        assert_eq!(v.named("d"), 0);
        assert_eq!(v.named("e"), 1);
        assert_eq!(v.named("NOPE"), 0);
        assert_eq!(v.var("NOPE"), Var::Unset);
        assert_eq!(v.var("e"), Var::Unknown);
        assert_eq!(Vars::scan(": ${f:=rm}; $f").named("f"), 1);
    }

    #[test]
    fn only_a_single_straight_line_literal_assignment_is_known() {
        let mut v = Vars::scan("a=r; b=m; x=1; x=2");
        v.assign("a", Some(vec!["r".into()]), true);
        v.assign("b", Some(vec!["m".into()]), false);
        v.assign("x", Some(vec!["1".into()]), true);
        assert_eq!(v.var("a"), Var::Value(vec!["r".into()]));
        assert_eq!(v.var("b"), Var::Unknown);
        assert_eq!(v.var("x"), Var::Unknown);
    }
}
