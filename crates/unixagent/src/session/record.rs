//! What the user's terminal showed and what the user ran, kept for the
//! context of the next instruction.
//!
//! The recorder sees the shell's output in segments split at the OSC 133
//! markers. It keeps a bounded tail of everything shown (the "recent
//! terminal output" the model may see, cleaned of escapes when used) and,
//! for each command the user ran, the line as the shell echoed it between
//! `133;B` and `133;C`, its output between `133;C` and `133;D`, and its
//! exit status. The command line is read back from the echo, so it is
//! exact for typed lines and a close reading for lines edited with cursor
//! movement.

use ua_context::clean::{clean_terminal, last_lines};
use ua_context::prompt::UserCommand;
use ua_term::osc::ShellEvent;

/// Bytes of terminal output kept for context.
const TAIL_BYTES: usize = 256 * 1024;
/// Output kept per user command.
const COMMAND_OUTPUT_BYTES: usize = 16 * 1024;
/// User commands kept between two instructions.
const MAX_COMMANDS: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Between commands: prompt drawing.
    Idle,
    /// After `133;B`: the echo of the line being typed.
    Echo,
    /// After `133;C`: the command's output.
    Output,
}

#[derive(Debug)]
pub(super) struct Recorder {
    tail: Vec<u8>,
    phase: Phase,
    echo: Vec<u8>,
    output: Vec<u8>,
    output_cut: bool,
    commands: Vec<UserCommand>,
}

impl Recorder {
    pub(super) fn new() -> Self {
        Self {
            tail: Vec::new(),
            phase: Phase::Idle,
            echo: Vec::new(),
            output: Vec::new(),
            output_cut: false,
            commands: Vec::new(),
        }
    }

    /// A segment of output the user saw. `users` is false for the output
    /// of the agent's own commands (kept in the tail, not as a user
    /// command).
    pub(super) fn shown(&mut self, bytes: &[u8], users: bool) {
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > TAIL_BYTES * 2 {
            let excess = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..excess);
        }
        if !users {
            return;
        }
        match self.phase {
            Phase::Idle => {}
            Phase::Echo => {
                if self.echo.len() < COMMAND_OUTPUT_BYTES {
                    self.echo.extend_from_slice(bytes);
                }
            }
            Phase::Output => {
                let room = COMMAND_OUTPUT_BYTES.saturating_sub(self.output.len());
                self.output.extend_from_slice(&bytes[..bytes.len().min(room)]);
                self.output_cut |= bytes.len() > room;
            }
        }
    }

    /// A marker of the user's own shell use.
    pub(super) fn marker(&mut self, e: &ShellEvent) {
        match e {
            ShellEvent::InputStart => {
                self.phase = Phase::Echo;
                self.echo.clear();
            }
            ShellEvent::CommandStart if self.phase == Phase::Echo => {
                self.phase = Phase::Output;
                self.output.clear();
                self.output_cut = false;
            }
            ShellEvent::CommandEnd(code) if self.phase == Phase::Output => {
                self.phase = Phase::Idle;
                let command = command_line(&self.echo);
                if command.is_empty() {
                    return;
                }
                let mut output = clean_terminal(&self.output);
                if self.output_cut {
                    output.push_str("\n[output cut]\n");
                }
                if self.commands.len() == MAX_COMMANDS {
                    self.commands.remove(0);
                }
                self.commands.push(UserCommand { command, exit_code: *code, output });
            }
            ShellEvent::PromptStart => self.phase = Phase::Idle,
            _ => {}
        }
    }

    /// Forgets the echo of the line being typed: it was an instruction,
    /// not a command.
    pub(super) fn line_taken(&mut self) {
        self.phase = Phase::Idle;
        self.echo.clear();
    }

    /// The user's commands since the last call, which are forgotten.
    pub(super) fn take_commands(&mut self) -> Vec<UserCommand> {
        std::mem::take(&mut self.commands)
    }

    /// The last `n` lines the terminal showed, as plain text.
    pub(super) fn recent_lines(&self, n: usize) -> Vec<String> {
        let text = clean_terminal(&self.tail);
        last_lines(&text, n).into_iter().map(str::to_string).collect()
    }
}

/// The command line from its echo: the last non-empty line of what the
/// terminal finally showed.
fn command_line(echo: &[u8]) -> String {
    let text = clean_terminal(echo);
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(r: &mut Recorder, parts: &[(&[u8], Option<ShellEvent>)]) {
        for (bytes, e) in parts {
            r.shown(bytes, true);
            if let Some(e) = e {
                r.marker(e);
            }
        }
    }

    #[test]
    fn user_commands_are_read_from_echo_output_and_status() {
        let mut r = Recorder::new();
        feed(
            &mut r,
            &[
                (b"$ ", Some(ShellEvent::InputStart)),
                (b"ls -l\x08\x08-la\r\n", Some(ShellEvent::CommandStart)),
                (b"\x1b[1mtotal 0\x1b[0m\r\n", Some(ShellEvent::CommandEnd(Some(0)))),
                (b"$ ", Some(ShellEvent::PromptStart)),
                (b"", Some(ShellEvent::InputStart)),
                (b"false\r\n", Some(ShellEvent::CommandStart)),
                (b"", Some(ShellEvent::CommandEnd(Some(1)))),
            ],
        );
        let cmds = r.take_commands();
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0].command, "ls -la");
        assert_eq!(cmds[0].output, "total 0\n");
        assert_eq!(cmds[0].exit_code, Some(0));
        assert_eq!(cmds[1].command, "false");
        assert_eq!(cmds[1].exit_code, Some(1));
        assert!(r.take_commands().is_empty());
        assert_eq!(r.recent_lines(2), vec!["total 0", "$ false"]);
    }

    #[test]
    fn an_instruction_line_is_not_a_command_and_agent_output_is_not_the_users() {
        let mut r = Recorder::new();
        feed(&mut r, &[(b"$ ", Some(ShellEvent::InputStart)), (b"# do it\r\n", None)]);
        r.line_taken();
        r.shown(b"agent command output\r\n", false);
        r.marker(&ShellEvent::CommandStart);
        r.marker(&ShellEvent::CommandEnd(Some(0)));
        assert!(r.take_commands().is_empty());
        assert_eq!(r.recent_lines(1), vec!["agent command output"]);
    }

    #[test]
    fn output_is_bounded() {
        let mut r = Recorder::new();
        r.marker(&ShellEvent::InputStart);
        r.shown(b"yes\r\n", true);
        r.marker(&ShellEvent::CommandStart);
        for _ in 0..10_000 {
            r.shown(b"y\r\n", true);
        }
        r.marker(&ShellEvent::CommandEnd(Some(130)));
        let cmds = r.take_commands();
        assert!(cmds[0].output.len() <= COMMAND_OUTPUT_BYTES + 20);
        assert!(cmds[0].output.ends_with("[output cut]\n"));
    }
}
