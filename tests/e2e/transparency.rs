//! Byte-exact transparency: a program's output reaches the terminal through
//! unixagent exactly as it does through `script -q`.

use std::io::Write;

use crate::support::*;

const BEGIN: &str = "=BEGIN=";
const END: &str = "=END-OF-STREAM=";

/// A program that prints every byte value, then a long pseudo-random
/// stream (seeded, so both runs print the same), between two markers.
fn generator(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("gen.py");
    let mut f = std::fs::File::create(&p).unwrap();
    write!(
        f,
        r#"import random, sys
out = sys.stdout.buffer
out.write(b"{BEGIN}\n")
out.write(bytes(range(256)))
rng = random.Random(1234)
for _ in range(64):
    out.write(rng.randbytes(16384))
out.write(b"\n{END}\n")
out.flush()
"#
    )
    .unwrap();
    p
}

fn between_markers(raw: &[u8]) -> Vec<u8> {
    let find =
        |needle: &[u8], from: usize| raw[from..].windows(needle.len()).position(|w| w == needle).map(|p| p + from);
    let start = find(BEGIN.as_bytes(), 0).expect("begin marker") + BEGIN.len();
    let end = find(format!("\r\n{END}").as_bytes(), start).expect("end marker");
    raw[start..end].to_vec()
}

#[test]
fn output_is_byte_identical_to_script() {
    let home = Home::new();
    let gen_py = generator(home.path());
    let cmd = format!("python3 {}", gen_py.display());

    let mut via_script = Spawn::new("script").args(["-q", "-e", "-c", &cmd, "/dev/null"]).cwd(home.path()).start();
    via_script.wait_text(END);
    via_script.wait_exit();

    let mut via_ua = home.spawn("bash").args(["--", "-c", &cmd]).start();
    via_ua.wait_text(END);
    assert_eq!(via_ua.wait_exit(), 0);

    let a = between_markers(&via_script.raw());
    let b = between_markers(&via_ua.raw());
    assert!(a.len() > 1_000_000, "the stream is long: {}", a.len());
    assert!(
        a == b,
        "outputs differ: script {} bytes, unixagent {} bytes, first difference at {:?}",
        a.len(),
        b.len(),
        a.iter().zip(&b).position(|(x, y)| x != y)
    );
}

#[test]
fn terminal_features_pass_through() {
    // Colours, OSC 8 links, titles, mouse and paste modes: unixagent
    // interprets none of them and forwards all.
    let home = Home::new();
    let mut t = home.start("bash");
    let seq =
        r"printf '\e[38;2;1;2;3mrgb\e[0m \e]8;;http://x\e\\link\e]8;;\e\\ \e]0;title\a\e[?1000h\e[?2004h\e[?1000l'";
    run(&mut t, seq);
    let raw = t.raw();
    for needle in [&b"\x1b[38;2;1;2;3mrgb"[..], b"\x1b]8;;http://x\x1b\\link", b"\x1b]0;title\x07", b"\x1b[?1000h"] {
        assert!(raw.windows(needle.len()).any(|w| w == needle), "{:?} missing", String::from_utf8_lossy(needle));
    }
}
