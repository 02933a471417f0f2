use super::*;

fn pairs(text: &str) -> Vec<(String, Option<String>)> {
    let c = parse(text.as_bytes());
    assert_eq!(c.error_line, None, "{text:?} should parse");
    c.entries.into_iter().map(|e| (e.name, e.value)).collect()
}

fn one(text: &str) -> (String, Option<String>) {
    let mut p = pairs(text);
    assert_eq!(p.len(), 1, "{text:?}: {p:?}");
    p.remove(0)
}

fn kv(name: &str, value: &str) -> (String, Option<String>) {
    (name.to_string(), Some(value.to_string()))
}

#[test]
fn sections_subsections_and_the_old_dotted_form() {
    assert_eq!(one("[core]\n\tfsmonitor = /tmp/x\n"), kv("core.fsmonitor", "/tmp/x"));
    assert_eq!(one("[diff \"Pdf\"]\ntextconv = pdftotext\n"), kv("diff.Pdf.textconv", "pdftotext"));
    // The old form lower-cases the subsection too.
    assert_eq!(one("[diff.Pdf]\ntextconv = x\n"), kv("diff.pdf.textconv", "x"));
    // Escapes in a subsection stand for the character.
    assert_eq!(one("[filter \"a\\\"b\\\\c\\d\"]\nclean = x\n"), kv("filter.a\"b\\cd.clean", "x"));
    // Spaces between the name and the quote.
    assert_eq!(one("[filter   \"lfs\"]\nclean = x\n"), kv("filter.lfs.clean", "x"));
}

#[test]
fn names_are_case_insensitive_subsections_are_not() {
    assert_eq!(one("[CoRe]\n  FSMonitor = x\n"), kv("core.fsmonitor", "x"));
    let e = &parse(b"[Filter \"LFS\"]\nCLEAN = x\n").entries[0];
    assert_eq!((e.section(), e.subsection(), e.key()), ("filter", Some("LFS"), "clean"));
}

#[test]
fn a_key_may_follow_the_header_on_the_same_line() {
    assert_eq!(one("[core] pager = evil"), kv("core.pager", "evil"));
    assert_eq!(one("[diff \"x\"]command=evil"), kv("diff.x.command", "evil"));
}

#[test]
fn bare_keys_are_true() {
    assert_eq!(one("[log]\nshowSignature\n"), ("log.showsignature".to_string(), None));
    assert_eq!(one("[log]\nshowSignature"), ("log.showsignature".to_string(), None));
    assert_eq!(maybe_bool(None), Some(true));
}

#[test]
fn values_quotes_comments_and_spaces() {
    assert_eq!(one("[a]\nk =   spaced   out   \n"), kv("a.k", "spaced   out"));
    assert_eq!(one("[a]\nk = x ; comment\n"), kv("a.k", "x"));
    assert_eq!(one("[a]\nk = x # comment\n"), kv("a.k", "x"));
    assert_eq!(one("[a]\nk = \"x ; not # a comment\"\n"), kv("a.k", "x ; not # a comment"));
    assert_eq!(one("[a]\nk = \"  kept  \"\n"), kv("a.k", "  kept  "));
    assert_eq!(one("[a]\nk = sh\" -c \"evil\n"), kv("a.k", "sh -c evil"));
    assert_eq!(one("[a]\nk =\n"), kv("a.k", ""));
    assert_eq!(one("; top comment\n# another\n[a] ; after a header\nk = v\n"), kv("a.k", "v"));
}

#[test]
fn escapes_and_continuations() {
    assert_eq!(one("[a]\nk = one\\ttwo\\nthree\\\\\\\"\n"), kv("a.k", "one\ttwo\nthree\\\""));
    assert_eq!(one("[a]\nk = b\\bc\n"), kv("a.k", "b\x08c"));
    // A backslash at the end of a line continues the value.
    assert_eq!(one("[core]\nfsmonitor = /tmp/\\\nevil\n"), kv("core.fsmonitor", "/tmp/evil"));
    assert_eq!(one("[core]\nfsmonitor = \"/tmp/\\\nevil\"\n"), kv("core.fsmonitor", "/tmp/evil"));
}

#[test]
fn crlf_and_byte_order_mark() {
    assert_eq!(pairs("\u{feff}[a]\r\nk = v\r\nj = w\r\n"), vec![kv("a.k", "v"), kv("a.j", "w")]);
}

#[test]
fn errors_stop_the_parse_and_keep_what_came_before() {
    for (text, line) in [
        ("[a]\nk = v\n[b\n", 3),
        ("[a]\nk = v\n$x = 1\n", 3),
        ("[a]\nk = \"unterminated\n", 2),
        ("[a]\nk = bad\\escape\n", 2),
        ("[a]\nk v\n", 2),
        ("[a \"sub\" ]\nk = v\n", 1),
        ("[a sub]\nk = v\n", 1),
        ("[]\nk = v\n", 1),
        ("[a \"sub\nk = v\n", 1),
    ] {
        let c = parse(text.as_bytes());
        assert_eq!(c.error_line, Some(line), "{text:?}");
        if line > 2 {
            assert_eq!(c.entries.len(), 1, "{text:?}");
        }
    }
}

#[test]
fn later_sections_reset_the_name() {
    let p = pairs("[a]\nx = 1\n[b \"s\"]\ny = 2\n[c]\nz = 3\n");
    assert_eq!(p, vec![kv("a.x", "1"), kv("b.s.y", "2"), kv("c.z", "3")]);
}

#[test]
fn find_matches_subsections_exactly_or_any() {
    let c = parse(b"[diff]\nexternal = x\n[diff \"a\"]\ntextconv = y\n[diff \"b\"]\ncommand = z\n");
    assert_eq!(c.find("diff", None, "external").count(), 1);
    assert_eq!(c.find("diff", Some("*"), "textconv").count(), 1);
    assert_eq!(c.find("diff", Some("a"), "textconv").count(), 1);
    assert_eq!(c.find("diff", Some("b"), "textconv").count(), 0);
    assert_eq!(c.find("diff", None, "command").count(), 0);
}

#[test]
fn booleans_as_git_reads_them() {
    for t in ["true", "Yes", "ON", "1", "42", "1k"] {
        assert_eq!(maybe_bool(Some(t)), Some(true), "{t}");
    }
    for f in ["false", "No", "off", "", "0"] {
        assert_eq!(maybe_bool(Some(f)), Some(false), "{f}");
    }
    for p in ["/usr/bin/watchman-hook", "./hook", "x1", "k"] {
        assert_eq!(maybe_bool(Some(p)), None, "{p}");
    }
}
