//! Editor tests render the editor's output through a real VT emulator and
//! compare the screen, so cursor arithmetic errors show up as wrong screens.

use super::*;

struct Screen {
    vt: vt100::Parser,
    ed: LineEditor,
}

impl Screen {
    fn new(prompt: &str, width: u16) -> Self {
        let mut vt =
            vt100::Parser::new(std::num::NonZeroU16::new(6).unwrap(), std::num::NonZeroU16::new(width).unwrap(), 0);
        vt.process(prompt.as_bytes());
        let col = vt.screen().cursor_position().1;
        let (ed, out) = LineEditor::start("#", col, width, vec!["old one".into(), "old two".into()]);
        vt.process(&out);
        Self { vt, ed }
    }
    fn keys(&mut self, keys: &[Key]) -> Outcome {
        let mut last = Outcome::Editing;
        for k in keys {
            let (out, outcome) = self.ed.handle(k);
            self.vt.process(&out);
            last = outcome;
        }
        last
    }
    fn typ(&mut self, s: &str) {
        let keys: Vec<Key> = s.chars().map(Key::Char).collect();
        self.keys(&keys);
    }
    fn rows(&self) -> Vec<String> {
        self.vt.screen().rows(0, self.vt.screen().size().1.get()).map(|r| r.trim_end().to_string()).collect()
    }
    fn cursor(&self) -> (u16, u16) {
        self.vt.screen().cursor_position()
    }
}

#[test]
fn typing_appears_after_the_prompt() {
    let mut s = Screen::new("$ ", 20);
    s.typ("hello");
    assert_eq!(s.rows()[0], "$ #hello");
    assert_eq!(s.cursor(), (0, 8));
}

#[test]
fn enter_submits_and_moves_below() {
    let mut s = Screen::new("$ ", 20);
    s.typ("find big files");
    s.keys(&[Key::Left, Key::Left]);
    assert_eq!(s.keys(&[Key::Enter]), Outcome::Submit("find big files".into()));
    assert_eq!(s.cursor(), (1, 0));
}

#[test]
fn editing_in_the_middle() {
    let mut s = Screen::new("$ ", 30);
    s.typ("abcdef");
    s.keys(&[Key::Left, Key::Left, Key::Backspace, Key::Char('X')]);
    assert_eq!(s.rows()[0], "$ #abcXef");
    assert_eq!(s.cursor(), (0, 7));
    s.keys(&[Key::Home, Key::Char('>'), Key::End, Key::Char('<')]);
    assert_eq!(s.rows()[0], "$ #>abcXef<");
    assert_eq!(s.ed.text(), ">abcXef<");
}

#[test]
fn ctrl_u_and_ctrl_w() {
    let mut s = Screen::new("$ ", 30);
    s.typ("one two  three");
    s.keys(&[Key::Ctrl('w')]);
    assert_eq!(s.rows()[0], "$ #one two");
    s.keys(&[Key::Ctrl('u')]);
    assert_eq!(s.rows()[0], "$ #");
    assert_eq!(s.cursor(), (0, 3));
}

#[test]
fn wrapping_line_edits_across_rows() {
    let mut s = Screen::new("user$ ", 10);
    s.typ("abcdefghijk");
    // "user$ #abc" fills row 0, "defghijk" row 1.
    assert_eq!(s.rows()[0], "user$ #abc");
    assert_eq!(s.rows()[1], "defghijk");
    s.keys(&[Key::Home]);
    assert_eq!(s.cursor(), (0, 7));
    s.keys(&[Key::Char('Z')]);
    assert_eq!(s.rows()[0], "user$ #Zab");
    assert_eq!(s.rows()[1], "cdefghijk");
    s.keys(&[Key::End]);
    assert_eq!(s.cursor(), (1, 9));
    for _ in 0..12 {
        s.keys(&[Key::Backspace]);
    }
    assert_eq!(s.rows()[0], "user$ #");
    assert_eq!(s.rows()[1], "");
    assert_eq!(s.cursor(), (0, 7));
}

#[test]
fn exact_fill_puts_cursor_on_next_row() {
    let mut s = Screen::new("$ ", 6);
    s.typ("abc");
    assert_eq!(s.rows()[0], "$ #abc");
    assert_eq!(s.cursor(), (1, 0));
    s.typ("d");
    assert_eq!(s.rows()[1], "d");
}

#[test]
fn backspace_over_prefix_hands_back() {
    let mut s = Screen::new("$ ", 20);
    s.typ("x");
    assert_eq!(s.keys(&[Key::Backspace]), Outcome::Editing);
    assert_eq!(s.keys(&[Key::Backspace]), Outcome::HandBack);
    assert_eq!(s.rows()[0], "$");
    assert_eq!(s.cursor(), (0, 2));
}

#[test]
fn ctrl_c_abandons_and_erases() {
    let mut s = Screen::new("$ ", 20);
    s.typ("never mind");
    assert_eq!(s.keys(&[Key::Ctrl('c')]), Outcome::Abandon);
    assert_eq!(s.rows()[0], "$");
}

#[test]
fn history_browsing_restores_the_draft() {
    let mut s = Screen::new("$ ", 30);
    s.typ("draft");
    s.keys(&[Key::Up]);
    assert_eq!(s.rows()[0], "$ #old two");
    s.keys(&[Key::Up, Key::Up]);
    assert_eq!(s.rows()[0], "$ #old one");
    s.keys(&[Key::Down]);
    assert_eq!(s.rows()[0], "$ #old two");
    s.keys(&[Key::Down]);
    assert_eq!(s.rows()[0], "$ #draft");
    assert_eq!(s.keys(&[Key::Down]), Outcome::Editing);
}

#[test]
fn submitted_instructions_join_history() {
    let mut s = Screen::new("$ ", 30);
    s.typ("new");
    s.keys(&[Key::Enter]);
    assert_eq!(s.ed.history().last().map(String::as_str), Some("new"));
}

#[test]
fn paste_turns_newlines_into_spaces() {
    let mut s = Screen::new("$ ", 30);
    let out = s.ed.insert_str("a\nb");
    s.vt.process(&out);
    assert_eq!(s.ed.text(), "a b");
    assert_eq!(s.rows()[0], "$ #a b");
}

#[test]
fn wide_characters() {
    let mut s = Screen::new("$ ", 30);
    s.typ("日本");
    assert_eq!(s.cursor(), (0, 7));
    s.keys(&[Key::Left, Key::Char('x')]);
    assert_eq!(s.ed.text(), "日x本");
    assert_eq!(s.cursor(), (0, 6));
}

#[test]
fn redraw_after_the_shell_drew_over_the_line() {
    let mut s = Screen::new("$ ", 30);
    s.typ("find big files");
    s.keys(&[Key::Left, Key::Left]);
    // The shell's late echo of keys typed before the `#`: it moves back
    // from where it believes its cursor is, draws a suggestion, then
    // clears its (empty) line after the prompt.
    s.vt.process(b"\x08\x08e\x1b[90mcho hi\x1b[39m\r$ \x1b[K");
    let out = s.ed.redraw(2);
    s.vt.process(&out);
    assert_eq!(s.rows()[0], "$ #find big files");
    assert_eq!(s.cursor(), (0, 15));
    s.typ("x");
    assert_eq!(s.ed.text(), "find big filxes");
    assert_eq!(s.rows()[0], "$ #find big filxes");
}

#[test]
fn the_editor_starts_where_the_input_starts_even_if_the_cursor_is_not_there_yet() {
    // The shell still shows a typed `ec` (erased by keys it has not echoed
    // yet) when the `#` opens the editor at the prompt's end.
    let mut vt = vt100::Parser::new(std::num::NonZeroU16::new(4).unwrap(), std::num::NonZeroU16::new(30).unwrap(), 0);
    vt.process(b"$ ec");
    let (mut ed, out) = LineEditor::start("#", 2, 30, Vec::new());
    vt.process(&out);
    let (out, _) = ed.handle(&Key::Char('a'));
    vt.process(&out);
    // Now the shell's erasing echo arrives, then our redraw.
    vt.process(b"\x08\x08\x08  \x08\x08");
    vt.process(&ed.redraw(2));
    assert_eq!(vt.screen().rows(0, 30).next().unwrap().trim_end(), "$ #a");
    assert_eq!(vt.screen().cursor_position(), (0, 4));
}
