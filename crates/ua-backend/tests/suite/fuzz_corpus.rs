//! The fuzz targets' body, run on stable over the fixture corpus and
//! simple mutations of it, so `cargo test` exercises what `cargo fuzz`
//! explores.

use ua_backend::config::Kind;
use ua_backend::sse::check_any_input;

use super::fixtures;

#[test]
fn fuzz_body_holds_on_the_corpus_and_its_mutations() {
    for (_, _, bytes) in fixtures() {
        for kind in [Kind::Anthropic, Kind::Openai] {
            check_any_input(kind, &bytes);
            for cut in (0..bytes.len()).step_by(13) {
                check_any_input(kind, &bytes[..cut]);
                check_any_input(kind, &bytes[cut..]);
                let mut flipped = bytes.clone();
                flipped[cut] ^= 0x5a;
                check_any_input(kind, &flipped);
                let mut doubled = bytes[..cut].to_vec();
                doubled.extend_from_slice(&bytes[cut / 2..]);
                check_any_input(kind, &doubled);
            }
        }
    }
    for odd in [&b""[..], b"\xEF", b"\xEF\xBB", b"\r", b"\n\n\n", b"data:", b"data: [DONE]\n\n", b"\xff\xfe\n\n"] {
        check_any_input(Kind::Anthropic, odd);
        check_any_input(Kind::Openai, odd);
    }
}
