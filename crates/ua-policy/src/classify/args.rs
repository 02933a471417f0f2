//! A small view over argv for argument-aware rules.

use crate::parse::Arg;

/// Values of the options in `names`, as a getopt-style program reads them.
/// A two-character name (`-o`) also matches `-oVALUE` and the end of a
/// bundle (`-sLo VALUE`, `-do VALUE`); `--long` also matches
/// `--long=VALUE`; any other single-dash name (`-out`, `-fprint`) matches
/// exactly. Stops at `--`. Each value comes with whether it is dynamic.
pub fn option_args<'a>(args: &'a [Arg], names: &[&str]) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            break;
        }
        let next = args.get(i + 1).map(|a| (a.text.as_str(), a.dynamic));
        let dynamic = args[i].dynamic;
        for n in names {
            if t == *n {
                out.extend(next);
            } else if let Some(long) = n.strip_prefix("--") {
                if let Some(v) =
                    t.strip_prefix("--").and_then(|r| r.strip_prefix(long)).and_then(|r| r.strip_prefix('='))
                {
                    out.push((v, dynamic));
                }
            } else if n.len() == 2 && t.len() > 2 && t.starts_with('-') && !t.starts_with("--") {
                let letter = &n[1..];
                // The first occurrence of the letter in a bundle of letters:
                // what follows it is its value, or the next word.
                if let Some(k) = t[1..].find(letter)
                    && t[1..1 + k].chars().all(|c| c.is_ascii_alphanumeric())
                {
                    let rest = &t[2 + k..];
                    if rest.is_empty() {
                        out.extend(next);
                    } else if k == 0 {
                        out.push((rest, dynamic));
                    }
                }
            }
        }
        i += 1;
    }
    out
}

/// [`option_args`] without the dynamic flags.
pub fn option_values<'a>(args: &'a [Arg], names: &[&str]) -> Vec<&'a str> {
    option_args(args, names).into_iter().map(|(t, _)| t).collect()
}

/// Read-only helpers over the arguments after the program name.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a>(pub &'a [Arg]);

impl<'a> Args<'a> {
    /// True when `-x` appears alone or in a bundle (`-rf`), or `--long`
    /// / `--long=…` appears. Stops at `--`.
    pub fn flag(self, short: char, long: &str) -> bool {
        for a in self.0 {
            let t = a.text.as_str();
            if t == "--" {
                break;
            }
            if let Some(l) = t.strip_prefix("--") {
                if !long.is_empty() && (l == long || l.starts_with(&format!("{long}="))) {
                    return true;
                }
            } else if let Some(s) = t.strip_prefix('-')
                && short != '\0'
                && s.chars().all(|c| c.is_ascii_alphanumeric())
                && s.contains(short)
            {
                return true;
            }
        }
        false
    }

    /// True when any argument text equals `s` exactly.
    pub fn has(self, s: &str) -> bool {
        self.0.iter().any(|a| a.text == s)
    }

    /// True when any argument starts with `prefix`.
    pub fn has_prefix(self, prefix: &str) -> bool {
        self.0.iter().any(|a| a.text.starts_with(prefix))
    }

    /// Arguments that are not options (everything after `--`).
    pub fn operands(self) -> Vec<&'a Arg> {
        let mut out = Vec::new();
        let mut after = false;
        for a in self.0 {
            if !after && a.text == "--" {
                after = true;
                continue;
            }
            if after || !a.text.starts_with('-') || a.text == "-" {
                out.push(a);
            }
        }
        out
    }

    /// The first operand, if any (the subcommand of git, cargo, …).
    pub fn first_operand(self) -> Option<&'a str> {
        self.0.iter().map(|a| a.text.as_str()).find(|t| !t.starts_with('-'))
    }

    /// The value of an option given as `-o V`, `-oV`, `--out V` or `--out=V`.
    pub fn value(self, short: &str, long: &str) -> Option<&'a str> {
        let mut it = self.0.iter().peekable();
        while let Some(a) = it.next() {
            let t = a.text.as_str();
            if !short.is_empty() && t == short || !long.is_empty() && t == long {
                return it.peek().map(|n| n.text.as_str());
            }
            if !long.is_empty()
                && let Some(v) = t.strip_prefix(long).and_then(|r| r.strip_prefix('='))
            {
                return Some(v);
            }
            if !short.is_empty() && short.len() == 2 && t.len() > 2 && t.starts_with(short) && !t.starts_with("--") {
                return Some(&t[2..]);
            }
        }
        None
    }

    /// True when any argument is dynamic.
    pub fn any_dynamic(self) -> bool {
        self.0.iter().any(|a| a.dynamic)
    }

    /// All argument texts joined by spaces.
    pub fn joined(self) -> String {
        self.0.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn flags_in_bundles_and_long_forms() {
        let a = v("-rf --in-place=.bak x");
        assert!(Args(&a).flag('r', "recursive"));
        assert!(Args(&a).flag('f', ""));
        assert!(Args(&a).flag('\0', "in-place"));
        assert!(!Args(&a).flag('i', ""));
        let a = v("-- -rf");
        assert!(!Args(&a).flag('r', ""));
    }

    #[test]
    fn values_in_all_spellings() {
        for s in ["-o out", "-oout", "--output out", "--output=out"] {
            let a = v(s);
            assert_eq!(Args(&a).value("-o", "--output"), Some("out"), "{s}");
        }
    }

    #[test]
    fn operands_skip_options() {
        let a = v("-n 3 file -- -x");
        let ops: Vec<_> = Args(&a).operands().iter().map(|a| a.text.clone()).collect();
        assert_eq!(ops, ["3", "file", "-x"]);
    }
}
