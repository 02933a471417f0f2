//! The scrubber over two corpora of terminal text: lines that hold a
//! secret (`tests/fixtures/scrub-caught.txt`, secrets between « and »)
//! and ordinary output that must come through unchanged
//! (`tests/fixtures/scrub-kept.txt`). Each test reports every miss at
//! once, with the count, so the figures can be compared across changes.

use std::borrow::Cow;

use ua_context::secrets::redact_secrets;

const CAUGHT: &str = include_str!("../fixtures/scrub-caught.txt");
const KEPT: &str = include_str!("../fixtures/scrub-kept.txt");

/// The lines of a corpus that are not comments (`#` alone or followed by
/// a space) or blank, with their line numbers.
fn lines(corpus: &str) -> Vec<(usize, &str)> {
    corpus
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && *l != "#" && !l.starts_with("# "))
        .map(|(n, l)| (n + 1, l))
        .collect()
}

/// The line without its marks, and the secrets it marks.
fn unmark(line: &str) -> (String, Vec<&str>) {
    let mut text = String::new();
    let mut secrets = Vec::new();
    let mut rest = line;
    while let Some((before, after)) = rest.split_once('«') {
        let (secret, tail) = after.split_once('»').expect("every « has its »");
        text.push_str(before);
        text.push_str(secret);
        secrets.push(secret);
        rest = tail;
    }
    text.push_str(rest);
    (text, secrets)
}

#[test]
fn every_secret_of_the_corpus_is_redacted() {
    let cases = lines(CAUGHT);
    assert!(cases.len() >= 120, "the corpus has only {} lines", cases.len());
    let mut missed = Vec::new();
    for &(n, line) in &cases {
        let (text, secrets) = unmark(line);
        assert!(!secrets.is_empty(), "line {n} marks no secret: {line:?}");
        let out = redact_secrets(&text);
        // A secret with spaces in it must be gone whole, not only its
        // first word.
        let leaked = secrets.iter().flat_map(|s| s.split(' ')).any(|piece| piece.len() >= 3 && out.contains(piece));
        if leaked || !out.contains("[REDACTED:") {
            missed.push(format!("  line {n}: {text:?}\n    -> {out:?}"));
        }
    }
    println!("secret lines caught: {} of {}", cases.len() - missed.len(), cases.len());
    assert!(
        missed.is_empty(),
        "{} of {} lines let a secret through:\n{}",
        missed.len(),
        cases.len(),
        missed.join("\n")
    );
}

#[test]
fn ordinary_output_comes_through_unchanged() {
    let cases = lines(KEPT);
    assert!(cases.len() >= 120, "the corpus has only {} lines", cases.len());
    let changed: Vec<String> = cases
        .iter()
        .filter_map(|&(n, line)| match redact_secrets(line) {
            Cow::Borrowed(_) => None,
            Cow::Owned(out) => Some(format!("  line {n}: {line:?}\n    -> {out:?}")),
        })
        .collect();
    println!("ordinary lines changed: {} of {}", changed.len(), cases.len());
    assert!(changed.is_empty(), "{} of {} ordinary lines changed:\n{}", changed.len(), cases.len(), changed.join("\n"));
}
