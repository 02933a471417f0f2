//! What `echo` and `printf` print, for when that text becomes code:
//! `printf 'rm -rf %s\n' / | sh` runs `rm -rf /`.
//!
//! Shells disagree on escapes (bash's `echo` leaves `\n` alone without
//! `-e`; dash's and zsh's interpret it), so escapes are always interpreted:
//! the result is read for what it could run, and reading a line break where
//! one shell prints a backslash only splits a command in two.

/// The text `program` prints with these literal arguments, or `None` when
/// it is not `echo` or `printf`, or prints nothing to stdout
/// (`printf -v name …`).
pub(crate) fn output(program: &str, args: &[&str]) -> Option<String> {
    match program {
        "echo" => Some(echo(args)),
        "printf" => printf(args),
        _ => None,
    }
}

fn echo(args: &[&str]) -> String {
    let mut rest = args;
    let mut newline = true;
    while let Some((first, tail)) = rest.split_first() {
        let is_flag = first.len() > 1 && first.starts_with('-') && first[1..].chars().all(|c| "neE".contains(c));
        if !is_flag {
            break;
        }
        newline &= !first.contains('n');
        rest = tail;
    }
    let (mut out, stopped) = escapes(&rest.join(" "));
    if newline && !stopped {
        out.push('\n');
    }
    out
}

fn printf(args: &[&str]) -> Option<String> {
    let mut rest = args;
    if rest.first() == Some(&"--") {
        rest = &rest[1..];
    }
    let (format, mut operands) = rest.split_first()?;
    if format.starts_with("-v") {
        return None;
    }
    let mut out = String::new();
    // The format is reused while operands remain, and used once without any.
    loop {
        let used = render(format, operands, &mut out);
        operands = &operands[used.min(operands.len())..];
        if operands.is_empty() || used == 0 {
            break;
        }
    }
    Some(out)
}

/// Renders `format` once, taking operands as conversions ask for them;
/// returns how many it took.
fn render(format: &str, operands: &[&str], out: &mut String) -> usize {
    let mut taken = 0;
    let mut next = || {
        let v = operands.get(taken).copied().unwrap_or("");
        taken += 1;
        v
    };
    let mut chars = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            literal.push('%');
            continue;
        }
        out.push_str(&escapes(&std::mem::take(&mut literal)).0);
        // Flags, width and precision, then the conversion letter.
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_alphabetic() {
                break;
            }
            spec.push(d);
            chars.next();
        }
        match chars.next() {
            // `%b` interprets escapes in its operand; `\c` stops all output.
            Some('b') => {
                let (text, stop) = escapes(next());
                out.push_str(&text);
                if stop {
                    return usize::MAX;
                }
            }
            Some('c') => out.extend(next().chars().next()),
            Some(_) => out.push_str(next()),
            None => out.push('%'),
        }
    }
    out.push_str(&escapes(&literal).0);
    taken
}

/// Interprets backslash escapes the way `echo -e` and `printf` do; the
/// flag is true when `\c` asked for output to stop there.
fn escapes(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('e' | 'E') => out.push('\u{1b}'),
            Some('\\') => out.push('\\'),
            Some('c') => return (out, true),
            Some('x') => {
                let hex: String = std::iter::from_fn(|| chars.next_if(char::is_ascii_hexdigit)).take(2).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str("\\x"),
                }
            }
            Some('0') => {
                let oct: String = std::iter::from_fn(|| chars.next_if(|d| ('0'..='7').contains(d))).take(3).collect();
                out.extend(u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32).or(Some('\0')));
            }
            Some(d @ '1'..='7') => {
                let mut oct = String::from(d);
                oct.extend(std::iter::from_fn(|| chars.next_if(|d| ('0'..='7').contains(d))).take(2));
                out.extend(u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32));
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_applies_its_format() {
        assert_eq!(output("printf", &["rm -rf %s\\n", "/"]).as_deref(), Some("rm -rf /\n"));
        assert_eq!(output("printf", &["%s %s\\n", "a", "b", "c"]).as_deref(), Some("a b\nc \n"));
        assert_eq!(output("printf", &["%b", "rm\\x20-rf\\040/"]).as_deref(), Some("rm -rf /"));
        assert_eq!(output("printf", &["100%%\\n"]).as_deref(), Some("100%\n"));
        assert_eq!(output("printf", &["%-5s|%5.2d", "a", "7"]).as_deref(), Some("a|7"));
        assert_eq!(output("printf", &["--", "%s", "x"]).as_deref(), Some("x"));
        assert_eq!(output("printf", &["-v", "x", "%s", "y"]), None);
        assert_eq!(output("printf", &[]), None);
    }

    #[test]
    fn echo_joins_its_words_and_reads_escapes() {
        assert_eq!(output("echo", &["rm", "-rf", "/"]).as_deref(), Some("rm -rf /\n"));
        assert_eq!(output("echo", &["-n", "a\\tb"]).as_deref(), Some("a\tb"));
        assert_eq!(output("echo", &["-e", "\\x72\\x6d"]).as_deref(), Some("rm\n"));
        assert_eq!(output("echo", &["-x"]).as_deref(), Some("-x\n"));
        assert_eq!(output("echo", &["a\\cb"]).as_deref(), Some("a"));
    }
}
