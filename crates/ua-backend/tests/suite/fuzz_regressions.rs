//! Inputs the fuzz targets found, kept so a fix cannot quietly regress.
//! Each one is checked with the fuzz body itself and, where the SSE rules
//! say what it means, against the decoding it must produce.

use ua_backend::config::Kind;
use ua_backend::sse::{DecodeError, check_any_input, replay};

use super::fixtures;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Found by `anthropic_sse`: two byte order marks. Only the first is a
/// BOM; the framing used to slice into the second one and panic.
#[test]
fn two_byte_order_marks_do_not_panic() {
    let input = [BOM, BOM].concat();
    for kind in [Kind::Anthropic, Kind::Openai] {
        check_any_input(kind, &input);
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        check_any_input(kind, &chunks.concat());
        assert_eq!(replay(kind, &chunks).error, Some(DecodeError::Truncated), "{kind:?}");
        assert_eq!(replay(kind, &[&input]).error, Some(DecodeError::Truncated), "{kind:?}");
    }
}

/// A second BOM is an ordinary character of the first line: here that line
/// is a field named U+FEFF, which SSE ignores, so the stream after it must
/// decode exactly like the fixture, however it is cut.
#[test]
fn a_second_byte_order_mark_is_part_of_the_first_line() {
    for (name, kind, bytes) in fixtures() {
        let expected = replay(kind, &[&bytes]);
        assert_eq!(expected.error, None, "{name}");
        let input = [BOM, BOM, b"\n", &bytes].concat();
        for cut in 0..=input.len().min(16) {
            let (a, b) = input.split_at(cut);
            assert_eq!(replay(kind, &[a, b]), expected, "{name} cut at {cut}");
        }
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(replay(kind, &chunks), expected, "{name} bytewise");
    }
}

/// Text that merely starts with byte 0xEF (here U+FFFD) right after the BOM
/// is framed like any other first line.
#[test]
fn a_first_line_starting_with_byte_0xef_is_not_taken_for_a_bom() {
    for (name, kind, bytes) in fixtures() {
        let expected = replay(kind, &[&bytes]);
        let input = [BOM, "\u{FFFD}: ignored\n".as_bytes(), &bytes].concat();
        check_any_input(kind, &input);
        assert_eq!(replay(kind, &[&input]), expected, "{name}");
    }
}
