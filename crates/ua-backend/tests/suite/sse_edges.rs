//! SSE framing edge cases: every split point, CRLF, comments, multi-line
//! data, BOM, unknown events. Each must decode exactly like the plain
//! fixture.

use ua_backend::config::Kind;
use ua_backend::sse::{Replay, replay};

use super::fixtures;

fn whole(kind: Kind, bytes: &[u8]) -> Replay {
    let r = replay(kind, &[bytes]);
    assert_eq!(r.error, None, "{r:?}");
    r
}

#[test]
fn every_split_point_decodes_the_same() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(replay(kind, &[a, b]), expected, "{name} cut at {cut}");
        }
    }
}

#[test]
fn one_byte_per_chunk_decodes_the_same() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(replay(kind, &chunks), expected, "{name}");
    }
}

fn map_text(bytes: &[u8], f: impl Fn(&str) -> String) -> Vec<u8> {
    f(std::str::from_utf8(bytes).unwrap()).into_bytes()
}

#[test]
fn crlf_and_lone_cr_line_ends_at_every_split_point() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        for (ending, variant) in [
            ("crlf", map_text(&bytes, |s| s.replace('\n', "\r\n"))),
            ("cr", map_text(&bytes, |s| s.replace('\n', "\r"))),
        ] {
            for cut in 0..=variant.len() {
                let (a, b) = variant.split_at(cut);
                assert_eq!(replay(kind, &[a, b]).events, expected.events, "{name} {ending} cut at {cut}");
            }
        }
    }
}

#[test]
fn byte_order_mark_is_skipped_even_when_split() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend_from_slice(&bytes);
        for cut in 0..8 {
            let (a, b) = with_bom.split_at(cut);
            assert_eq!(replay(kind, &[a, b]), expected, "{name} cut at {cut}");
        }
        let chunks: Vec<&[u8]> = with_bom.chunks(1).collect();
        assert_eq!(replay(kind, &chunks), expected, "{name} bytewise");
    }
}

#[test]
fn comments_and_keepalives_are_ignored() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        let noisy = map_text(&bytes, |s| format!(": hello\n\n{}", s.replace("\n\n", "\n: keep-alive\n\n:\n\n")));
        assert_eq!(replay(kind, &[&noisy]), expected, "{name}");
    }
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        // Break every JSON payload after its first comma onto a second
        // data line; JSON allows the newline the SSE join puts there.
        let split = map_text(&bytes, |s| {
            s.lines()
                .map(|l| match (l.strip_prefix("data: "), l.find(',')) {
                    (Some(_), Some(i)) => format!("{}\ndata: {}", &l[..=i], &l[i + 1..]),
                    _ => l.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        });
        assert_ne!(split, bytes);
        assert_eq!(replay(kind, &[&split]), expected, "{name}");
    }
}

#[test]
fn unknown_event_types_are_skipped() {
    for (name, kind, bytes) in fixtures() {
        let expected = whole(kind, &bytes);
        let unknown = "event: future_thing\ndata: {\"type\":\"future_thing\",\"x\":1}\n\n";
        let mut noisy = unknown.as_bytes().to_vec();
        let body = String::from_utf8(bytes.clone()).unwrap();
        let parts: Vec<&str> = body.split_inclusive("\n\n").collect();
        for p in parts {
            noisy.extend_from_slice(p.as_bytes());
            if !p.contains("[DONE]") && !p.contains("message_stop") {
                noisy.extend_from_slice(unknown.as_bytes());
            }
        }
        // OpenAI chunks carry no `type`: an unknown object is a chunk
        // without choices, which contributes nothing either.
        assert_eq!(replay(kind, &[&noisy]), expected, "{name}");
    }
}
