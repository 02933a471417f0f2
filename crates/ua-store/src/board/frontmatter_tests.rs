use super::*;

const HAND_WRITTEN: &str = concat!(
    "---\n",
    "id: 7\n",
    "title: 'Fix the parser''s errors'\n",
    "# who asked for it\n",
    "owner: ops team   # not a key unixagent knows\n",
    "tags:\n",
    "  - parser\n",
    "  # a comment inside the list\n",
    "  - \"needs review\"\n",
    "depends_on: [3, 5]\n",
    "notes: |\n",
    "  free text\n",
    "  over lines\n",
    "estimate:\n",
    "  hours: 3\n",
    "---\n",
    "Body **text**.\n",
    "\n",
    "- [ ] criterion\n",
);

#[test]
fn an_untouched_document_renders_byte_for_byte() {
    let doc = Document::parse(HAND_WRITTEN).unwrap();
    assert_eq!(doc.render(), HAND_WRITTEN);
    // CRLF line endings and a missing final newline survive too.
    let crlf = "---\r\nid: 1\r\ntitle: x\r\n---\r\nbody";
    assert_eq!(Document::parse(crlf).unwrap().render(), crlf);
    let bare = "---\nid: 1\n---";
    assert_eq!(Document::parse(bare).unwrap().render(), bare);
    let doc = Document::parse(crlf).unwrap();
    assert_eq!(doc.get("title"), Some(&Value::Scalar("x".into())));
}

#[test]
fn the_subset_reads_as_expected() {
    let doc = Document::parse(HAND_WRITTEN).unwrap();
    assert_eq!(doc.get("id"), Some(&Value::Scalar("7".into())));
    assert_eq!(doc.get("title"), Some(&Value::Scalar("Fix the parser's errors".into())));
    assert_eq!(doc.get("owner"), Some(&Value::Scalar("ops team".into())));
    assert_eq!(doc.get("tags"), Some(&Value::List(vec!["parser".into(), "needs review".into()])));
    assert_eq!(doc.get("depends_on"), Some(&Value::List(vec!["3".into(), "5".into()])));
    assert_eq!(doc.get("notes"), Some(&Value::Other));
    assert_eq!(doc.get("estimate"), Some(&Value::Other));
    assert_eq!(doc.keys().collect::<Vec<_>>(), ["id", "title", "owner", "tags", "depends_on", "notes", "estimate"]);
    assert_eq!(doc.body(), "Body **text**.\n\n- [ ] criterion\n");
    assert_eq!(doc.line_of("tags"), Some(6));
}

#[test]
fn changing_a_key_keeps_every_other_line_and_unknown_keys() {
    let mut doc = Document::parse(HAND_WRITTEN).unwrap();
    doc.set("assignee", Value::Scalar("20261124T100000.000Z-0000abcd".into()));
    doc.set("tags", Value::List(vec!["parser".into()]));
    doc.remove("depends_on");
    let text = doc.render();
    let expected = HAND_WRITTEN
        .replace("tags:\n  - parser\n  # a comment inside the list\n  - \"needs review\"\n", "tags: [parser]\n")
        .replace("depends_on: [3, 5]\n", "")
        .replace("  hours: 3\n", "  hours: 3\nassignee: \"20261124T100000.000Z-0000abcd\"\n");
    assert_eq!(text, expected);
    // Setting a key to the value it has leaves its lines alone.
    let mut doc = Document::parse(HAND_WRITTEN).unwrap();
    doc.set("title", Value::Scalar("Fix the parser's errors".into()));
    assert_eq!(doc.render(), HAND_WRITTEN);
}

#[test]
fn written_values_read_back_the_same() {
    let awkward = [
        "plain words",
        "true",
        "123",
        "",
        "with: colon",
        "#hash",
        "- dash",
        "quote \" and \\ backslash",
        "line\nbreak\ttab",
        "ünïcödé",
        " padded ",
        "[not a list]",
        "it's",
    ];
    for s in awkward {
        let doc = Document::new(
            &[("title", Value::Scalar(s.into())), ("tags", Value::List(vec![s.into(), "b, c".into()]))],
            "body",
        );
        let back = Document::parse(&doc.render()).unwrap_or_else(|e| panic!("{s:?}: {e:?}\n{}", doc.render()));
        assert_eq!(back.get("title"), Some(&Value::Scalar(s.into())), "{}", doc.render());
        assert_eq!(back.get("tags"), Some(&Value::List(vec![s.into(), "b, c".into()])), "{}", doc.render());
        assert_eq!(back.body(), "body\n");
        assert_eq!(back, Document::parse(&back.render()).unwrap());
    }
    assert_eq!(render_scalar("123"), "123");
    assert_eq!(render_scalar("yes"), "\"yes\"");
}

#[test]
fn broken_files_name_the_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("id: 1\n", 1, "starts with a line `---`"),
        ("", 1, "starts with a line `---`"),
        ("---\nid: 1\ntitle: x\n", 3, "never closed"),
        ("---\nid: 1\nthis is prose\n---\n", 3, "expected `key: value`"),
        ("---\nid: 1\nid: 2\n---\n", 3, "appears twice"),
        ("---\n  - x\nid: 1\n---\n", 2, "before any key"),
        ("---\nid: 1\ntitle: \"open\n---\n", 3, "not closed on its line"),
        ("---\ntitle: 'it''s\n---\n", 2, "not closed on its line"),
        ("---\ntags: [a, b\n---\n", 2, "not closed on its line"),
        ("---\ntags: [a, [b]]\n---\n", 2, "lists inside lists"),
        ("---\ntitle: \"a\" b\n---\n", 2, "after the closing quote"),
        ("---\ntitle: \"\\q\"\n---\n", 2, "not an escape"),
        ("---\ntags:\n  - ok\n  - \"bad\n---\n", 4, "not closed"),
        ("---\nkey with space: 1\n---\n", 2, "is not a key"),
    ];
    for (text, line, words) in cases {
        let e = Document::parse(text).expect_err(text);
        assert_eq!(e.line, *line, "{text:?}: {e:?}");
        assert!(e.message.contains(words), "{text:?}: {e:?}");
    }
}

#[test]
fn unknown_shapes_are_kept_not_read() {
    let text = "---\nid: 1\nmeta: {a: 1}\nscript: >\n  folded\nanchor: &x 1\n---\n";
    let doc = Document::parse(text).unwrap();
    assert_eq!(doc.get("meta"), Some(&Value::Other));
    assert_eq!(doc.get("script"), Some(&Value::Other));
    assert_eq!(doc.get("anchor"), Some(&Value::Other));
    assert_eq!(doc.render(), text);
}

#[test]
fn empty_and_null_values_are_empty_scalars() {
    let doc = Document::parse("---\na:\nb: ~\nc: null\nd: \"\"\ne: []\n---\n").unwrap();
    for k in ["a", "b", "c", "d"] {
        assert_eq!(doc.get(k), Some(&Value::Scalar(String::new())), "{k}");
    }
    assert_eq!(doc.get("e"), Some(&Value::List(vec![])));
}
