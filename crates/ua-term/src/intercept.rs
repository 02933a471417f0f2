//! Routing keystrokes between the shell and the instruction editor.
//!
//! Every byte the user types passes through [`Interceptor::on_input`]. While
//! a command runs, or whenever the shell's line is not known to be empty,
//! bytes go to the shell untouched. At an empty prompt a `#` (`##` without
//! shell integration) opens the [`LineEditor`] instead, and Enter turns the
//! line into an instruction.
//!
//! The interceptor keeps a small model of the shell's current line: empty,
//! some plain typed text, or unknown (after history recall, completion,
//! cursor keys…). Only a line known to be empty is ever captured, so `#`
//! typed after `echo ` or inside a recalled command is the shell's.

use crate::editor::{LineEditor, Outcome};
use crate::keys::{Key, KeyDecoder, Keystroke};

/// How prompts are recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// OSC 133 markers from the shell integration: `#` starts an instruction.
    Markers,
    /// No integration: prompts are guessed, and `##` starts an instruction.
    Heuristic,
}

impl Mode {
    pub fn prefix(self) -> &'static str {
        match self {
            Mode::Markers => "#",
            Mode::Heuristic => "##",
        }
    }
}

/// What the caller must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write these bytes to the shell.
    ToShell(Vec<u8>),
    /// Write these bytes to the outer terminal.
    ToTerminal(Vec<u8>),
    /// An instruction was submitted. The editor has moved the cursor to the
    /// start of the next row; the shell's own line is still empty.
    Instruction(String),
    /// The user ended the shell's line (Enter or Ctrl+C): the next prompt
    /// starts empty.
    LineEnded,
}

/// The shell's current input line, as far as we can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ShellLine {
    Empty,
    Typed(String),
    Unknown,
}

/// Where the prompt ends and how wide the terminal is, at the moment a key
/// arrives.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub prompt_col: u16,
    pub width: u16,
}

#[derive(Debug)]
pub struct Interceptor {
    mode: Mode,
    decoder: KeyDecoder,
    at_prompt: bool,
    line: ShellLine,
    editor: Option<LineEditor>,
    history: Vec<String>,
    /// Heuristic mode: a first `#` shown but not yet sent anywhere.
    held_hash: bool,
    /// A bracketed paste at an empty prompt: `Some(None)` while waiting for
    /// its first key, then the pasted text while it starts with `#`.
    paste: Option<Option<String>>,
}

impl Interceptor {
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            decoder: KeyDecoder::new(),
            at_prompt: false,
            line: ShellLine::Unknown,
            editor: None,
            history: Vec::new(),
            held_hash: false,
            paste: None,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Whether the shell is (believed to be) reading a line at its prompt.
    pub fn at_prompt(&self) -> bool {
        self.at_prompt
    }

    /// Whether the instruction editor owns the line.
    pub fn editing(&self) -> bool {
        self.editor.is_some()
    }

    /// The shell shows a new prompt with an empty line.
    pub fn fresh_prompt(&mut self) {
        self.at_prompt = true;
        self.line = ShellLine::Empty;
    }

    /// The shell redrew its prompt; the line is as it was.
    pub fn redrawn_prompt(&mut self) {
        self.at_prompt = true;
    }

    /// A command started: every byte belongs to it now.
    pub fn left_prompt(&mut self) {
        self.at_prompt = false;
        self.line = ShellLine::Unknown;
    }

    /// The shell wrote to the terminal while the editor owns the line: its
    /// input starts at `input_col`, and the instruction is drawn again over
    /// whatever the shell drew.
    pub fn shell_redrew(&mut self, input_col: u16) -> Vec<Action> {
        match self.editor.as_mut() {
            Some(ed) => vec![Action::ToTerminal(ed.redraw(input_col))],
            None => Vec::new(),
        }
    }

    /// The terminal was resized while editing.
    pub fn resize(&mut self, width: u16) -> Vec<Action> {
        match self.editor.as_mut() {
            Some(ed) => vec![Action::ToTerminal(ed.resize(width))],
            None => Vec::new(),
        }
    }

    fn can_capture(&self) -> bool {
        self.at_prompt && self.line == ShellLine::Empty && self.editor.is_none()
    }

    /// Keys typed while a command runs, which all go to the shell as they
    /// are: `Some(line_ended)` when `bytes` need no decoding at all (no
    /// prompt, no editor or paste, no key half read), with whether they
    /// end the line as [`Action::LineEnded`] would say; `None` when they
    /// must go through [`Interceptor::on_input`]. This is the keystroke
    /// path of everything but the prompt, so it allocates nothing.
    pub fn pass_through(&self, bytes: &[u8]) -> Option<bool> {
        let plain = self.mode == Mode::Markers
            && !self.at_prompt
            && self.line == ShellLine::Unknown
            && self.editor.is_none()
            && self.paste.is_none()
            && !self.held_hash
            && self.decoder.idle();
        plain.then(|| bytes.iter().any(|b| matches!(b, b'\r' | b'\n' | 0x03)))
    }

    pub fn on_input(&mut self, bytes: &[u8], geo: Geometry) -> Vec<Action> {
        let keys = self.decoder.decode(bytes);
        let mut out = Out::default();
        let mut i = 0;
        while i < keys.len() {
            i += self.on_key(&keys, i, geo, &mut out);
        }
        out.0
    }

    /// Handles `keys[i]` (and possibly keys after it); returns how many keys
    /// were consumed.
    fn on_key(&mut self, keys: &[Keystroke], i: usize, geo: Geometry, out: &mut Out) -> usize {
        let k = &keys[i];
        if let Some(paste) = self.paste.take() {
            return self.on_paste_key(paste, k, geo, out);
        }
        if let Some(ed) = self.editor.as_mut() {
            // A `#` line followed at once by another (typed faster than a
            // person types, i.e. pasted without bracketed paste) continues
            // the same instruction.
            if k.key == Key::Enter {
                let prefix = self.mode.prefix();
                let follow = keys[i + 1..].iter().take(prefix.len()).filter(|k| k.key == Key::Char('#')).count();
                if follow == prefix.len() {
                    let spaces = keys[i + 1 + follow..].iter().take_while(|k| k.key == Key::Char(' ')).count();
                    out.terminal(ed.insert_str(" "));
                    return 1 + follow + spaces;
                }
            }
            let (bytes, outcome) = ed.handle(&k.key);
            out.terminal(bytes);
            match outcome {
                Outcome::Editing => {}
                Outcome::Submit(text) => {
                    self.history = ed.history().to_vec();
                    self.editor = None;
                    self.at_prompt = false;
                    self.line = ShellLine::Unknown;
                    out.0.push(Action::Instruction(text));
                }
                Outcome::Abandon | Outcome::HandBack => self.editor = None,
            }
            return 1;
        }
        if self.held_hash {
            self.held_hash = false;
            if k.key == Key::Char('#') {
                out.terminal(b"\x08".to_vec());
                self.open_editor(geo, out);
                return 1;
            }
            // Not an instruction after all: un-draw our `#` and give the
            // shell both keys.
            out.terminal(b"\x08 \x08".to_vec());
            out.shell(b"#");
            self.line = ShellLine::Typed("#".into());
        }
        if self.can_capture() {
            match k.key {
                Key::Char('#') if self.mode == Mode::Heuristic => {
                    self.held_hash = true;
                    out.terminal(b"#".to_vec());
                    return 1;
                }
                Key::Char('#') => {
                    self.open_editor(geo, out);
                    return 1;
                }
                Key::PasteStart => {
                    self.paste = Some(None);
                    return 1;
                }
                _ => {}
            }
        }
        if self.at_prompt && k.key == Key::Char('#') && self.line == ShellLine::Typed("\\".into()) {
            // `\#` at the start of a line: a literal comment for the shell.
            out.shell(b"\x7f#");
            self.line = ShellLine::Typed("#".into());
            return 1;
        }
        self.track_line(&k.key, out);
        out.shell(&k.bytes);
        1
    }

    fn on_paste_key(&mut self, paste: Option<String>, k: &Keystroke, geo: Geometry, out: &mut Out) -> usize {
        match (paste, &k.key) {
            (None, Key::Char('#')) => self.paste = Some(Some("#".into())),
            (None, _) => {
                // An ordinary paste: the shell gets it, markers and all.
                out.shell(b"\x1b[200~");
                self.line = ShellLine::Unknown;
                out.shell(&k.bytes);
            }
            (Some(text), Key::PasteEnd) => self.finish_paste(text, geo, out),
            (Some(mut text), _) => {
                text.push_str(&String::from_utf8_lossy(&k.bytes));
                self.paste = Some(Some(text));
            }
        }
        1
    }

    /// A paste at an empty prompt that began with `#`. If every non-blank
    /// line is an instruction line it becomes one instruction in the
    /// editor; otherwise the whole paste goes to the shell unchanged (where
    /// `#` lines are comments), so nothing pasted is lost.
    fn finish_paste(&mut self, text: String, geo: Geometry, out: &mut Out) {
        let prefix = self.mode.prefix();
        let lines: Vec<&str> = text.split(['\r', '\n']).filter(|l| !l.trim().is_empty()).collect();
        if lines.iter().all(|l| l.starts_with(prefix)) {
            let joined: Vec<&str> = lines.iter().map(|l| l[prefix.len()..].trim()).collect();
            self.open_editor(geo, out);
            if let Some(ed) = self.editor.as_mut() {
                out.terminal(ed.insert_str(&joined.join(" ")));
            }
        } else {
            out.shell(b"\x1b[200~");
            out.shell(text.as_bytes());
            out.shell(b"\x1b[201~");
            self.line = ShellLine::Unknown;
        }
    }

    fn open_editor(&mut self, geo: Geometry, out: &mut Out) {
        let (ed, bytes) = LineEditor::start(self.mode.prefix(), geo.prompt_col, geo.width, self.history.clone());
        self.editor = Some(ed);
        out.terminal(bytes);
    }

    /// Follows the shell's line for keys that go to the shell.
    fn track_line(&mut self, key: &Key, out: &mut Out) {
        self.line = match (std::mem::replace(&mut self.line, ShellLine::Unknown), key) {
            (_, Key::Enter | Key::Ctrl('c')) => {
                out.0.push(Action::LineEnded);
                if self.mode == Mode::Heuristic {
                    self.at_prompt = false;
                }
                ShellLine::Unknown
            }
            (ShellLine::Empty, Key::Char(c)) => ShellLine::Typed(c.to_string()),
            (ShellLine::Typed(mut s), Key::Char(c)) => {
                s.push(*c);
                ShellLine::Typed(s)
            }
            (ShellLine::Typed(mut s), Key::Backspace) => {
                s.pop();
                if s.is_empty() { ShellLine::Empty } else { ShellLine::Typed(s) }
            }
            (ShellLine::Empty, Key::Backspace) => ShellLine::Empty,
            // Kill-line from the end of a plain line empties it.
            (ShellLine::Typed(_) | ShellLine::Empty, Key::Ctrl('u')) => ShellLine::Empty,
            // Completion, history, cursor movement, anything else: we can no
            // longer tell what the line holds.
            _ => ShellLine::Unknown,
        };
    }
}

/// Actions being collected, merging consecutive writes to the same side.
#[derive(Default)]
struct Out(Vec<Action>);

impl Out {
    fn shell(&mut self, bytes: &[u8]) {
        if let Some(Action::ToShell(b)) = self.0.last_mut() {
            b.extend_from_slice(bytes);
        } else {
            self.0.push(Action::ToShell(bytes.to_vec()));
        }
    }
    fn terminal(&mut self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        if let Some(Action::ToTerminal(b)) = self.0.last_mut() {
            b.extend_from_slice(&bytes);
        } else {
            self.0.push(Action::ToTerminal(bytes));
        }
    }
}

#[cfg(test)]
#[path = "intercept_tests.rs"]
mod tests;
