//! The question about one proposed command, as a pure state machine: keys
//! in, what to echo and the person's answer out.
//!
//! | state | keys |
//! |---|---|
//! | one key | `y` run, `n` skip, `q` stop, `a` run and allow this command for the session, `A` the same for the program, `e` edit, `#` steer, Esc pause, Ctrl+C stop |
//! | typed (privileged) | the word `yes` then Enter runs; `q`/`quit` stops; anything else skips; Backspace; `#` steer; Esc pause; Ctrl+C stop |
//! | steering | text then Enter steers; Backspace over the `#`, or Enter on nothing, returns to the question as it was |
//!
//! A question that needs `yes` typed out stays one whatever happens in
//! between (a steering line abandoned, the editor, a pause): it is only
//! ever reset to its own kind.

use ua_term::keys::Key;

/// What a key does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Show this (the echo of what was typed, or erasing it).
    Echo(&'static str),
    /// Show this typed character.
    EchoChar(char),
    /// The person answered.
    Answer(Reply),
    /// Open the proposal in the editor.
    Edit,
    /// Give the shell back until the turn is resumed.
    Pause,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Run it.
    Run,
    /// Run it, and allow this exact command for the rest of the session.
    RunAndAllowCommand,
    /// Run it, and allow this program for the rest of the session.
    RunAndAllowProgram,
    /// Do not run it.
    Skip,
    /// End the turn.
    Quit,
    /// New direction.
    Steer(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Key,
    Typed(String),
    Steer(String),
}

/// One question on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Approval must be typed out as `yes`.
    typed: bool,
    state: State,
}

impl Question {
    /// A fresh question; `typed` when approval must be typed out.
    pub fn new(typed: bool) -> Self {
        Self { typed, state: Self::fresh(typed) }
    }

    fn fresh(typed: bool) -> State {
        if typed { State::Typed(String::new()) } else { State::Key }
    }

    /// Back to the question as first asked (after the editor or a pause).
    pub fn reset(&mut self) {
        self.state = Self::fresh(self.typed);
    }

    /// One key.
    pub fn key(&mut self, key: Key) -> Vec<Step> {
        let state = std::mem::replace(&mut self.state, State::Key);
        let (state, steps) = self.next(state, key);
        self.state = state;
        steps
    }

    fn next(&self, state: State, key: Key) -> (State, Vec<Step>) {
        use Step::{Answer, Echo, EchoChar};
        let fresh = || Self::fresh(self.typed);
        match (state, key) {
            (s, Key::Ctrl('c')) => (s, vec![Answer(Reply::Quit)]),
            (State::Key, Key::Char(c @ ('y' | 'Y'))) => (State::Key, vec![EchoChar(c), Answer(Reply::Run)]),
            (State::Key, Key::Char(c @ ('n' | 'N'))) => (State::Key, vec![EchoChar(c), Answer(Reply::Skip)]),
            (State::Key, Key::Char(c @ ('q' | 'Q'))) => (State::Key, vec![EchoChar(c), Answer(Reply::Quit)]),
            (State::Key, Key::Char('a')) => (State::Key, vec![EchoChar('a'), Answer(Reply::RunAndAllowCommand)]),
            (State::Key, Key::Char('A')) => (State::Key, vec![EchoChar('A'), Answer(Reply::RunAndAllowProgram)]),
            (State::Key, Key::Char(c @ ('e' | 'E'))) => (State::Key, vec![EchoChar(c), Step::Edit]),
            (s @ (State::Key | State::Typed(_)), Key::Esc) => (s, vec![Step::Pause]),
            (State::Key | State::Typed(_), Key::Char('#')) => (State::Steer(String::new()), vec![EchoChar('#')]),
            (State::Typed(mut t), Key::Char(c)) => {
                t.push(c);
                (State::Typed(t), vec![EchoChar(c)])
            }
            (State::Typed(mut t), Key::Backspace) => {
                let erased = t.pop().is_some();
                (State::Typed(t), if erased { vec![Echo("\x08 \x08")] } else { Vec::new() })
            }
            (State::Typed(t), Key::Enter) => {
                let reply = match t.trim() {
                    "yes" => Reply::Run,
                    "q" | "quit" => Reply::Quit,
                    _ => Reply::Skip,
                };
                (fresh(), vec![Answer(reply)])
            }
            (State::Steer(mut t), Key::Char(c)) => {
                t.push(c);
                (State::Steer(t), vec![EchoChar(c)])
            }
            (State::Steer(mut t), Key::Backspace) => {
                let state = if t.pop().is_some() { State::Steer(t) } else { fresh() };
                (state, vec![Echo("\x08 \x08")])
            }
            (State::Steer(t), Key::Enter) => {
                let text = t.trim().to_string();
                if text.is_empty() { (fresh(), Vec::new()) } else { (fresh(), vec![Answer(Reply::Steer(text))]) }
            }
            (s, _) => (s, Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(q: &mut Question, text: &str) -> Vec<Step> {
        text.chars()
            .flat_map(|c| {
                let k = match c {
                    '\r' => Key::Enter,
                    '\x7f' => Key::Backspace,
                    '\x1b' => Key::Esc,
                    '\x03' => Key::Ctrl('c'),
                    c => Key::Char(c),
                };
                q.key(k)
            })
            .collect()
    }

    fn answers(steps: &[Step]) -> Vec<Reply> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Answer(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn one_key_answers() {
        for (k, want) in [
            ("y", Reply::Run),
            ("Y", Reply::Run),
            ("n", Reply::Skip),
            ("q", Reply::Quit),
            ("a", Reply::RunAndAllowCommand),
            ("A", Reply::RunAndAllowProgram),
            ("\x03", Reply::Quit),
        ] {
            let mut q = Question::new(false);
            assert_eq!(answers(&keys(&mut q, k)), [want], "{k:?}");
        }
        let mut q = Question::new(false);
        assert_eq!(keys(&mut q, "e"), [Step::EchoChar('e'), Step::Edit]);
        assert_eq!(keys(&mut q, "\x1b"), [Step::Pause]);
        // Other keys do nothing.
        assert!(keys(&mut q, "xz\r").is_empty());
    }

    #[test]
    fn a_typed_question_needs_the_whole_word() {
        let mut q = Question::new(true);
        assert!(answers(&keys(&mut q, "y")).is_empty());
        assert_eq!(answers(&keys(&mut q, "es\r")), [Reply::Run]);
        let mut q = Question::new(true);
        assert_eq!(answers(&keys(&mut q, "y\r")), [Reply::Skip]);
        let mut q = Question::new(true);
        assert_eq!(answers(&keys(&mut q, "yess\x7f\r")), [Reply::Run]);
        let mut q = Question::new(true);
        assert_eq!(answers(&keys(&mut q, "quit\r")), [Reply::Quit]);
        // `a` and `A` grant nothing here: they are letters of a word.
        let mut q = Question::new(true);
        assert_eq!(answers(&keys(&mut q, "A\r")), [Reply::Skip]);
    }

    #[test]
    fn steering_and_coming_back() {
        let mut q = Question::new(false);
        assert_eq!(answers(&keys(&mut q, "#only src\r")), [Reply::Steer("only src".into())]);
        // Backspace over the `#` returns to the one-key question.
        let mut q = Question::new(false);
        assert!(answers(&keys(&mut q, "#x\x7f\x7f")).is_empty());
        assert_eq!(q, Question::new(false));
        assert_eq!(answers(&keys(&mut q, "y")), [Reply::Run]);
        // Enter on an empty steering line too.
        let mut q = Question::new(false);
        assert!(answers(&keys(&mut q, "#  \r")).is_empty());
        assert_eq!(answers(&keys(&mut q, "n")), [Reply::Skip]);
    }

    #[test]
    fn a_typed_question_stays_typed_after_steering_the_editor_or_a_pause() {
        for detour in ["#\x7f", "#ab\x7f\x7f\x7f", "# \r"] {
            let mut q = Question::new(true);
            keys(&mut q, detour);
            assert_eq!(answers(&keys(&mut q, "y\r")), [Reply::Skip], "{detour:?}");
        }
        let mut q = Question::new(true);
        keys(&mut q, "ye");
        q.reset();
        assert_eq!(answers(&keys(&mut q, "yes\r")), [Reply::Run]);
    }
}
