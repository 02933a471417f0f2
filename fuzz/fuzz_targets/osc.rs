//! Arbitrary bytes as a shell's output: the OSC 133 / OSC 7 scanner must
//! never panic, and where a read splits the output must change nothing it
//! reports (`ua_term::osc::check_any_output`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ua_term::osc::check_any_output(data);
});
