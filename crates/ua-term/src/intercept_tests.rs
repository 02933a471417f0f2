use super::*;

const GEO: Geometry = Geometry { prompt_col: 2, width: 80 };

fn at_prompt(mode: Mode) -> Interceptor {
    let mut i = Interceptor::new(mode);
    i.fresh_prompt();
    i
}

fn shell_bytes(actions: &[Action]) -> Vec<u8> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::ToShell(b) => Some(b.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn instructions(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Instruction(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn hash_at_an_empty_prompt_is_an_instruction() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"# list files\r", GEO);
    assert!(shell_bytes(&a).is_empty());
    assert_eq!(instructions(&a), vec!["list files"]);
    assert!(!i.editing());
}

#[test]
fn hash_after_text_goes_to_the_shell() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"echo # hi\r", GEO);
    assert_eq!(shell_bytes(&a), b"echo # hi\r");
    assert!(instructions(&a).is_empty());
}

#[test]
fn typed_and_erased_text_leaves_an_empty_line() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"ab\x7f\x7f#x\r", GEO);
    assert_eq!(shell_bytes(&a), b"ab\x7f\x7f");
    assert_eq!(instructions(&a), vec!["x"]);
}

#[test]
fn unknown_line_is_never_captured() {
    // Up-arrow recalls history: the line may hold anything.
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"\x1b[A#", GEO);
    assert_eq!(shell_bytes(&a), b"\x1b[A#");
}

#[test]
fn nothing_is_captured_while_a_command_runs() {
    let mut i = at_prompt(Mode::Markers);
    i.on_input(b"cat\r", GEO);
    i.left_prompt();
    let a = i.on_input(b"# not for me\r", GEO);
    assert_eq!(shell_bytes(&a), b"# not for me\r");
}

#[test]
fn a_redrawn_prompt_keeps_the_line() {
    let mut i = at_prompt(Mode::Markers);
    i.on_input(b"ls", GEO);
    i.redrawn_prompt();
    assert_eq!(shell_bytes(&i.on_input(b"#", GEO)), b"#");
}

#[test]
fn backslash_hash_is_a_literal_comment() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"\\# note\r", GEO);
    assert_eq!(shell_bytes(&a), b"\\\x7f# note\r");
}

#[test]
fn backspace_over_hash_hands_the_line_back() {
    let mut i = at_prompt(Mode::Markers);
    i.on_input(b"#", GEO);
    assert!(i.editing());
    i.on_input(b"\x7f", GEO);
    assert!(!i.editing());
    assert_eq!(shell_bytes(&i.on_input(b"ls\r", GEO)), b"ls\r");
}

#[test]
fn ctrl_c_abandons_and_the_prompt_stays_usable() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"#oops\x03#again\r", GEO);
    assert_eq!(instructions(&a), vec!["again"]);
}

#[test]
fn fast_consecutive_hash_lines_are_one_instruction() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"# deploy to staging,\r# then run tests\r", GEO);
    assert_eq!(instructions(&a), vec!["deploy to staging, then run tests"]);
}

#[test]
fn bracketed_paste_of_hash_lines_is_one_instruction() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"\x1b[200~# one\r# two\r\x1b[201~", GEO);
    assert!(i.editing());
    assert!(shell_bytes(&a).is_empty());
    let a = i.on_input(b"\r", GEO);
    assert_eq!(instructions(&a), vec!["one two"]);
}

#[test]
fn paste_split_across_reads() {
    let mut i = at_prompt(Mode::Markers);
    i.on_input(b"\x1b[20", GEO);
    i.on_input(b"0~# o", GEO);
    i.on_input(b"ne\r# two\x1b[2", GEO);
    i.on_input(b"01~", GEO);
    assert_eq!(instructions(&i.on_input(b"\r", GEO)), vec!["one two"]);
}

#[test]
fn mixed_paste_goes_to_the_shell_whole() {
    let mut i = at_prompt(Mode::Markers);
    let input = b"\x1b[200~# comment\recho hi\r\x1b[201~";
    let a = i.on_input(input, GEO);
    assert_eq!(shell_bytes(&a), input);
    assert!(!i.editing());
}

#[test]
fn ordinary_paste_passes_through() {
    let mut i = at_prompt(Mode::Markers);
    let input = b"\x1b[200~ls -la\x1b[201~";
    assert_eq!(shell_bytes(&i.on_input(input, GEO)), input);
}

#[test]
fn heuristic_mode_needs_two_hashes() {
    let mut i = at_prompt(Mode::Heuristic);
    let a = i.on_input(b"# comment\r", GEO);
    assert_eq!(shell_bytes(&a), b"# comment\r");
    assert!(instructions(&a).is_empty());

    let mut i = at_prompt(Mode::Heuristic);
    let a = i.on_input(b"## do it\r", GEO);
    assert!(shell_bytes(&a).is_empty());
    assert_eq!(instructions(&a), vec!["do it"]);
}

#[test]
fn heuristic_hash_split_across_reads() {
    let mut i = at_prompt(Mode::Heuristic);
    assert!(shell_bytes(&i.on_input(b"#", GEO)).is_empty());
    assert_eq!(instructions(&i.on_input(b"#x\r", GEO)), vec!["x"]);
}

#[test]
fn enter_ends_the_line() {
    let mut i = at_prompt(Mode::Markers);
    let a = i.on_input(b"true\r", GEO);
    assert!(a.contains(&Action::LineEnded));
}

#[test]
fn shell_output_while_editing_redraws_the_instruction() {
    let mut i = at_prompt(Mode::Markers);
    assert!(i.shell_redrew(2).is_empty(), "nothing to redraw without an editor");
    i.on_input(b"#ab", GEO);
    let actions = i.shell_redrew(2);
    let Some(Action::ToTerminal(bytes)) = actions.first() else { panic!("{actions:?}") };
    assert!(bytes.starts_with(b"\r\x1b[2C"), "{bytes:?}");
    assert!(bytes.windows(6).any(|w| w == b"\x1b[J#ab"), "{bytes:?}");
}

#[test]
fn keys_during_a_command_pass_through_exactly_as_decoded_keys_would() {
    let running = || {
        let mut i = at_prompt(Mode::Markers);
        i.left_prompt();
        i
    };
    for bytes in [&b"x"[..], b"ls -la\r", b"\x03", b"\x1b[A\x1b[B", b"a\nb", b"#not an instruction", b"\x1b", b"\x7f\t"]
    {
        let fast = running().pass_through(bytes);
        let slow = running().on_input(bytes, GEO);
        assert_eq!(shell_bytes(&slow), bytes, "{bytes:?}");
        let ended = slow.iter().any(|a| matches!(a, Action::LineEnded));
        assert_eq!(fast, Some(ended), "{bytes:?}");
    }
    // At a prompt, in the editor, or in heuristic mode, keys are decoded.
    assert_eq!(at_prompt(Mode::Markers).pass_through(b"x"), None);
    let mut h = Interceptor::new(Mode::Heuristic);
    h.left_prompt();
    assert_eq!(h.pass_through(b"x"), None);
    let mut i = at_prompt(Mode::Markers);
    i.on_input(b"#abc", GEO);
    assert!(i.editing());
    assert_eq!(i.pass_through(b"d"), None);
    // Half an escape sequence waits for the rest in the decoder.
    let mut i = running();
    i.on_input(b"\x1b[", GEO);
    assert_eq!(i.pass_through(b"A"), None);
}
