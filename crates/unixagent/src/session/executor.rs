//! The shell executor: running an approved command in the user's shell.
//!
//! It types a command at a fresh prompt (or holds it until one), routes
//! the shell's output by [`View`] while a turn runs, captures what the
//! command printed, times it out, interrupts it (see [`Interrupting`]),
//! keeps keys typed while the model answers for the shell's next prompt,
//! and holds command output bound for a file or pipe until its line ends.
//!
//! Its interface is "run this command" in, and "started", "output",
//! "finished (exit)" out. It does no I/O of its own: it reaches the shell
//! through a [`ShellPort`] (the terminal proxy, or a fake in tests) and
//! returns what it routed and how a command ended for the session to pass
//! on.
//!
//! The prompt the shell redraws after each command, and the echo of the
//! commands the agent types, are hidden: the user already sees the command
//! on the proposal line, and a prompt in the middle of the agent's answer
//! would only confuse. What a command prints (between its `133;C` and
//! `133;D`) is shown as it comes and captured for the model. When the turn
//! ends the shell is asked for a fresh prompt, and output is shown again
//! from its `133;A` on.

use std::time::Duration;

use tokio::time::Instant;
use ua_context::clean::TerminalText;

use super::proxy::ShellPort;
use crate::agent::capture::{self, Capture};
use crate::agent::turn::Proposal;

/// Command output bound for a file or pipe is held until its line ends,
/// or until this much has come without one.
const PLAIN_LINE_MAX: usize = 64 * 1024;

/// How often an interrupted agent command's terminal is looked at until
/// the prompt is back, and for how long at most (see [`Interrupting`]).
const INTERRUPT_CHECK: Duration = Duration::from_millis(20);
const INTERRUPT_WATCH: Duration = Duration::from_secs(5);
/// A Ctrl+C typed at the shell's line editor that brought no prompt in
/// this long was lost: type it again.
const INTERRUPT_LOST: Duration = Duration::from_millis(300);

/// Where the shell's output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    /// Straight to the terminal: no turn is running.
    Shell,
    /// Hidden: prompts and the echo of the agent's commands.
    Hidden,
    /// Shown and captured: an agent command's output.
    Command,
    /// Hidden until the next prompt starts, then [`View::Shell`].
    UntilPrompt,
}

/// A command typed into the shell and not finished yet.
#[derive(Debug)]
struct Running {
    proposal: Proposal,
    capture: Capture,
    /// Bytes before `133;C`: the echo, or the shell's complaint when the
    /// line never ran (a syntax error).
    before_start: Vec<u8>,
    started: bool,
    timeout_at: Instant,
    timed_out: bool,
    began: Instant,
}

/// Ctrl+C was typed for an agent command and the shell's prompt is not
/// back yet.
///
/// A Ctrl+C reaches whatever holds the terminal when the kernel reads it.
/// Typed just as the shell starts the command, it reaches the shell, and
/// the command then runs on uninterrupted; typed just after the line
/// editor took a key, bash 5.2 can leave it pending without dropping the
/// line. A person presses Ctrl+C again; batch mode has nobody at the
/// keyboard. So until the prompt is back (our markers say so), a job that
/// takes the terminal gets SIGINT once, a command the shell runs itself
/// gets Ctrl+C once it has started, and a Ctrl+C the line editor ignored is
/// typed again.
#[derive(Debug)]
struct Interrupting {
    /// The job that held the terminal last: it has had its SIGINT.
    signalled: Option<ua_term::pty::Job>,
    /// The command had started (`133;C`) when Ctrl+C was last typed.
    started_then: bool,
    /// It has started by now.
    started: bool,
    typed_at: Instant,
    check_at: Instant,
    give_up: Instant,
}

/// What became of a stretch of shell output during a turn.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::session) enum Routed {
    /// Held back (a prompt, the echo of the agent's command).
    Hidden,
    /// The agent's command printed it: show it as it is.
    Shown,
    /// The agent's command printed it, bound for a file or pipe: show this
    /// text instead (lines whose end has come, escapes removed).
    Text(String),
}

/// An agent command that ran and ended.
#[derive(Debug)]
pub(in crate::session) struct Finished {
    pub proposal: Proposal,
    pub exit_code: i32,
    /// What it printed, as plain text for the model (its timeout said).
    pub output: String,
    /// Something was cut from the middle of the output.
    pub truncated: bool,
    /// The command timeout interrupted it.
    pub timed_out: bool,
    pub duration: Duration,
    /// Its output left the cursor at the start of a line.
    pub ends_line: bool,
}

/// An agent command line the shell never ran (a syntax error).
#[derive(Debug)]
pub(in crate::session) struct Unstarted {
    /// What the shell said about it.
    pub said: String,
    pub exit_code: i32,
}

/// What the executor does once a turn has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) enum After {
    /// Batch mode: the shell stays hidden for what runs next.
    Batch,
    /// The shell is the person's again.
    Shell,
}

/// The shell executor. See the module docs.
#[derive(Debug)]
pub(in crate::session) struct Executor {
    /// A command still running after this long is interrupted.
    timeout: Duration,
    /// Output kept per command for the model.
    output_cap: usize,
    /// Output goes to a file or pipe: plain text, line by line.
    plain: bool,
    view: View,
    /// The shell shows a fresh, empty prompt.
    shell_ready: bool,
    /// A turn started before the shell's first prompt (a one-shot's,
    /// while the shell still starts): its commands wait for that prompt.
    unprompted: bool,
    /// An approved command waiting for the shell's prompt.
    waiting: Option<Proposal>,
    running: Option<Running>,
    interrupting: Option<Interrupting>,
    /// Keys typed while the model was answering: they go to the shell
    /// when its prompt is back, as type-ahead does in a shell.
    typeahead: Vec<u8>,
    /// Command output on its way to a file or pipe, escapes removed.
    plain_text: TerminalText,
    /// The last, unfinished line of command output bound for a file or
    /// pipe (see [`Executor::route`]).
    plain_held: Vec<u8>,
}

impl Executor {
    /// `plain`: output goes to a file or pipe. `hidden`: the shell's output
    /// is hidden from the start (a one-shot instruction).
    pub(in crate::session) fn new(timeout: Duration, output_cap: usize, plain: bool, hidden: bool) -> Self {
        Self {
            timeout,
            output_cap,
            plain,
            view: if hidden { View::Hidden } else { View::Shell },
            shell_ready: false,
            unprompted: false,
            waiting: None,
            running: None,
            interrupting: None,
            typeahead: Vec::new(),
            plain_text: TerminalText::default(),
            plain_held: Vec::new(),
        }
    }

    /// Batch mode: the shell's output is never shown; output is plain.
    pub(in crate::session) fn set_batch(&mut self) {
        self.view = View::Hidden;
        self.plain = true;
    }

    /// The id of the agent command typed and not finished, if any.
    pub(in crate::session) fn running_id(&self) -> Option<&str> {
        self.running.as_ref().map(|r| r.proposal.id.as_str())
    }

    /// Whether the shell's output is routed through the executor.
    pub(in crate::session) fn active(&self) -> bool {
        self.view != View::Shell
    }

    /// An agent command is typed and not finished.
    pub(in crate::session) fn running(&self) -> bool {
        self.running.is_some()
    }

    /// Output goes to a file or pipe.
    pub(in crate::session) fn plain(&self) -> bool {
        self.plain
    }

    /// The command's timeout, or the next look at an interrupted one.
    pub(in crate::session) fn deadline(&self) -> Option<Instant> {
        let timeout = self.running.as_ref().filter(|r| !r.timed_out).map(|r| r.timeout_at);
        [timeout, self.interrupting.as_ref().map(|i| i.check_at)].into_iter().flatten().min()
    }

    /// A turn starts at the prompt the instruction was typed at, which the
    /// shell still shows; or, a one-shot's, while the shell still starts,
    /// and its commands wait for the first prompt.
    pub(in crate::session) fn turn_started(&mut self) {
        self.view = View::Hidden;
        self.shell_ready = !self.unprompted;
    }

    /// The shell has not drawn its first prompt yet (see `unprompted`).
    pub(in crate::session) fn before_first_prompt(&mut self) {
        self.unprompted = true;
    }

    /// An approved command: typed at the shell's next fresh prompt (see
    /// [`Executor::ready`]).
    pub(in crate::session) fn hold(&mut self, p: Proposal) {
        self.waiting = Some(p);
    }

    /// The shell is at a fresh prompt and a command waits: it becomes the
    /// running one. Returns it, to journal before it is typed with
    /// [`Executor::type_command`].
    pub(in crate::session) fn ready(&mut self, now: Instant) -> Option<Proposal> {
        if !self.shell_ready {
            return None;
        }
        let p = self.waiting.take()?;
        self.shell_ready = false;
        self.running = Some(Running {
            proposal: p.clone(),
            capture: Capture::new(self.output_cap),
            before_start: Vec::new(),
            started: false,
            timeout_at: now + self.timeout,
            timed_out: false,
            began: now,
        });
        Some(p)
    }

    /// Types the running command into the shell, as `command` spells it
    /// (the proposal, perhaps carrying its trace context).
    pub(in crate::session) fn type_command(&mut self, command: &str, port: &mut impl ShellPort) {
        if self.running.is_none() {
            return;
        }
        let mut line = Vec::new();
        if command.contains('\n') {
            // A bracketed paste keeps a multi-line command one command line.
            line.extend_from_slice(b"\x1b[200~");
            line.extend_from_slice(command.as_bytes());
            line.extend_from_slice(b"\x1b[201~");
        } else {
            line.extend_from_slice(command.as_bytes());
        }
        line.push(b'\r');
        port.type_in(&line, true);
    }

    /// Interrupts the agent command running in the shell, as Ctrl+C would.
    pub(in crate::session) fn interrupt(&mut self, now: Instant, port: &mut impl ShellPort) {
        let Some(r) = &self.running else { return };
        // Typed but not started yet: Ctrl+C drops the line at the prompt,
        // and the prompt bash draws then is a fresh one.
        let started = r.started;
        port.type_in(b"\x03", !started);
        // Without markers nothing says when the prompt is back, and a job
        // on the terminal later may be the user's own.
        if !port.integrated() {
            return;
        }
        self.interrupting = Some(Interrupting {
            signalled: port.foreground_job(),
            started_then: started,
            started,
            typed_at: now,
            check_at: now + INTERRUPT_CHECK,
            give_up: now + INTERRUPT_WATCH,
        });
    }

    /// The command's timeout, and the watch over an interrupted command.
    pub(in crate::session) fn on_deadline(&mut self, now: Instant, port: &mut impl ShellPort) {
        if let Some(r) = self.running.as_mut().filter(|r| !r.timed_out && r.timeout_at <= now) {
            r.timed_out = true;
            // As if the user pressed Ctrl+C: the shell's foreground job
            // gets SIGINT.
            self.interrupt(now, port);
        }
        self.watch_interrupt(now, port);
    }

    /// Sees that an interrupted command got its interrupt (see
    /// [`Interrupting`]).
    fn watch_interrupt(&mut self, now: Instant, port: &mut impl ShellPort) {
        let Some(i) = self.interrupting.as_mut().filter(|i| i.check_at <= now) else { return };
        if now >= i.give_up {
            self.interrupting = None;
            return;
        }
        i.check_at = now + INTERRUPT_CHECK;
        match port.foreground_job() {
            Some(job) if i.signalled.as_ref() != Some(&job) => {
                port.interrupt_job(&job);
                i.signalled = Some(job);
            }
            Some(_) => {}
            None if (i.started && !i.started_then) || (!i.started && now >= i.typed_at + INTERRUPT_LOST) => {
                i.started_then = i.started;
                i.typed_at = now;
                port.type_in(b"\x03", false);
            }
            None => {}
        }
    }

    /// A fresh prompt: an interrupted command is over.
    pub(in crate::session) fn prompt_seen(&mut self) {
        self.unprompted = false;
        self.interrupting = None;
    }

    /// A fresh prompt with no turn running: a prompt that started while
    /// the turn still hid the shell's output is asked for again; keys
    /// typed ahead come back, for the session to pass to the shell.
    pub(in crate::session) fn idle_prompt(&mut self, port: &mut impl ShellPort) -> Option<Vec<u8>> {
        if self.view == View::UntilPrompt {
            // This prompt started while the turn still hid the shell's
            // output (a slow prompt: themes run programs in precmd), so
            // its start was not shown: ask for another.
            port.type_in(b"\r", true);
            return None;
        }
        if !self.typeahead.is_empty() && self.view == View::Shell {
            return Some(std::mem::take(&mut self.typeahead));
        }
        None
    }

    /// A fresh prompt during a turn: a waiting command can be typed (see
    /// [`Executor::ready`]); a command that never started (a syntax error)
    /// is over, with what the shell said about it.
    pub(in crate::session) fn turn_prompt(&mut self, port: &impl ShellPort) -> Option<Unstarted> {
        self.shell_ready = true;
        let r = self.running.take_if(|r| !r.started)?;
        let said = ua_context::clean::strip_escapes(&r.before_start);
        let said: String = said.replace("\r\n", "\n").lines().skip(1).collect::<Vec<_>>().join("\n");
        Some(Unstarted { said, exit_code: port.last_exit().unwrap_or(0) })
    }

    /// Shell output while a turn routes it: captured and shown, or held
    /// back.
    pub(in crate::session) fn route(&mut self, bytes: &[u8]) -> Routed {
        match self.view {
            View::Shell => Routed::Hidden,
            View::Command => {
                if let Some(r) = self.running.as_mut() {
                    r.capture.push(bytes);
                }
                if !self.plain {
                    return Routed::Shown;
                }
                // A file or pipe gets text a line at a time: the end of
                // the last line may be the shell's PROMPT_SP, which only
                // the command's end tells apart.
                self.plain_held.extend_from_slice(bytes);
                let held = &self.plain_held;
                let upto = match held.iter().rposition(|&b| b == b'\n') {
                    Some(nl) => nl + 1,
                    None if held.len() > PLAIN_LINE_MAX => held.len(),
                    None => 0,
                };
                let line: Vec<u8> = self.plain_held.drain(..upto).collect();
                Routed::Text(self.plain_text(&line))
            }
            View::Hidden | View::UntilPrompt => {
                if let Some(r) = self.running.as_mut().filter(|r| !r.started && r.before_start.len() < 64 * 1024) {
                    r.before_start.extend_from_slice(bytes);
                }
                Routed::Hidden
            }
        }
    }

    /// Command output to a file or pipe: text, with no escape sequence
    /// (colours, the shell's own markers) and no carriage returns.
    fn plain_text(&mut self, bytes: &[u8]) -> String {
        if bytes.is_empty() {
            return String::new();
        }
        self.plain_text.feed(bytes);
        self.plain_text.drain().replace(['\r', '\x08'], "")
    }

    /// The shell started a command line (`133;C`). True when it is the
    /// agent's, which starts showing its output.
    pub(in crate::session) fn command_started(&mut self) -> bool {
        if let Some(i) = self.interrupting.as_mut() {
            i.started = true;
        }
        let Some(r) = self.running.as_mut().filter(|r| !r.started) else { return false };
        r.started = true;
        self.view = View::Command;
        true
    }

    /// The shell finished a command line (`133;D`). When it was the
    /// agent's: the rest of its plain output (to show), and how it ended.
    pub(in crate::session) fn command_ended(&mut self, code: Option<i32>) -> Option<(String, Option<Finished>)> {
        if self.view != View::Command {
            return None;
        }
        self.view = View::Hidden;
        let mut held = std::mem::take(&mut self.plain_held);
        if let Some(r) = capture::prompt_sp(&held) {
            held.drain(r);
        }
        let rest = self.plain_text(&held);
        if let Some(r) = self.running.as_mut() {
            r.capture.drop_prompt_sp();
        }
        Some((rest, self.finished(code.unwrap_or(0))))
    }

    fn finished(&mut self, exit_code: i32) -> Option<Finished> {
        let r = self.running.take()?;
        let ends_line = r.capture.ends_line();
        let truncated = r.capture.truncated();
        let mut output = r.capture.text(r.proposal.mode);
        if r.timed_out {
            let secs = self.timeout.as_secs();
            output.push_str(&format!("\n[interrupted by unixagent: still running after {secs} s]"));
        }
        Some(Finished {
            proposal: r.proposal,
            exit_code,
            output,
            truncated,
            timed_out: r.timed_out,
            duration: r.began.elapsed(),
            ends_line,
        })
    }

    /// The shell started drawing a prompt (`133;A`). True when the turn's
    /// end gives the shell back here: the prompt is drawn at the start of
    /// a line.
    pub(in crate::session) fn prompt_started(&mut self) -> bool {
        if self.view != View::UntilPrompt {
            return false;
        }
        self.view = View::Shell;
        true
    }

    /// The turn is ending: nothing more waits to run. Returns whether the
    /// output of a command still running left the cursor at the start of
    /// a line, and the rest of its plain output (to show).
    pub(in crate::session) fn turn_ending(&mut self) -> (Option<bool>, String) {
        self.waiting = None;
        let ends_line = self.running.as_ref().map(|r| r.capture.ends_line());
        let held = std::mem::take(&mut self.plain_held);
        (ends_line, self.plain_text(&held))
    }

    /// The turn is over: the shell is asked for a fresh prompt (an empty
    /// line runs nothing and keeps `$?`); a command still running draws
    /// one when it ends.
    pub(in crate::session) fn turn_over(&mut self, after: After, port: &mut impl ShellPort) {
        self.view = match after {
            After::Batch => View::Hidden,
            After::Shell if port.integrated() => View::UntilPrompt,
            After::Shell => View::Shell,
        };
        if self.running.take().is_none() && self.shell_ready {
            port.type_in(b"\r", true);
        }
    }

    /// Esc at a question: the shell comes back, with a fresh prompt.
    pub(in crate::session) fn pause(&mut self, port: &mut impl ShellPort) {
        self.view = View::UntilPrompt;
        self.shell_ready = false;
        port.type_in(b"\r", true);
    }

    /// The paused turn goes on: the shell's output is hidden again.
    pub(in crate::session) fn resume(&mut self) {
        self.view = View::Hidden;
    }

    /// Keys typed while the model answers, for the shell's next prompt.
    pub(in crate::session) fn type_ahead(&mut self, bytes: &[u8]) {
        self.typeahead.extend_from_slice(bytes);
    }

    /// Ctrl+C while the model answers drops what was typed ahead.
    pub(in crate::session) fn drop_type_ahead(&mut self) {
        self.typeahead.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::tool::OutputMode;
    use ua_term::pty::Job;

    /// The shell as the executor sees it: what was typed, and a terminal
    /// whose foreground job the test sets.
    #[derive(Default)]
    struct FakePort {
        typed: Vec<(Vec<u8>, bool)>,
        job: Option<Job>,
        integrated: bool,
        last_exit: Option<i32>,
    }

    impl ShellPort for FakePort {
        fn type_in(&mut self, bytes: &[u8], line_ended: bool) {
            self.typed.push((bytes.to_vec(), line_ended));
        }
        fn foreground_job(&self) -> Option<Job> {
            self.job.clone()
        }
        fn interrupt_job(&self, _job: &Job) {}
        fn integrated(&self) -> bool {
            self.integrated
        }
        fn last_exit(&self) -> Option<i32> {
            self.last_exit
        }
    }

    impl FakePort {
        fn integrated() -> Self {
            Self { integrated: true, ..Self::default() }
        }
    }

    fn proposal(command: &str) -> Proposal {
        Proposal { id: "t1".into(), command: command.into(), mode: OutputMode::Full }
    }

    fn job(group: i32) -> Job {
        Job { group: nix::unistd::Pid::from_raw(group), program: None }
    }

    /// An executor in a turn with `command` typed at the prompt.
    fn typed(command: &str, port: &mut FakePort, now: Instant) -> Executor {
        let mut x = Executor::new(Duration::from_secs(300), 1 << 20, false, false);
        x.turn_started();
        x.hold(proposal(command));
        assert_eq!(x.ready(now), Some(proposal(command)));
        x.type_command(command, port);
        x
    }

    #[test]
    fn a_command_waits_for_a_fresh_prompt_and_is_typed_as_one_line() {
        let mut port = FakePort::integrated();
        let now = Instant::now();
        let mut x = Executor::new(Duration::from_secs(300), 1 << 20, false, false);
        x.turn_started();
        x.hold(proposal("echo a"));
        assert!(x.ready(now).is_some());
        assert!(x.command_started());
        assert!(x.command_ended(Some(0)).is_some());
        // The next waits until the shell shows a prompt again.
        x.hold(proposal("printf 'a\nb'"));
        assert_eq!(x.ready(now), None);
        assert!(x.turn_prompt(&port).is_none());
        assert!(x.ready(now).is_some());
        x.type_command("printf 'a\nb'", &mut port);
        assert_eq!(port.typed, [(b"\x1b[200~printf 'a\nb'\x1b[201~\r".to_vec(), true)]);
    }

    #[test]
    fn output_is_hidden_until_the_command_starts_then_captured_and_finished() {
        let mut port = FakePort::integrated();
        let mut x = typed("ls", &mut port, Instant::now());
        assert!(x.active());
        assert_eq!(x.route(b"ls\r\n"), Routed::Hidden);
        assert!(x.command_started());
        assert_eq!(x.route(b"a b\r\n"), Routed::Shown);
        let (rest, finished) = x.command_ended(Some(2)).expect("the agent's command ended");
        let f = finished.expect("finished");
        assert_eq!(
            (rest.as_str(), f.exit_code, f.output.as_str(), f.timed_out, f.ends_line),
            ("", 2, "a b\n", false, true)
        );
        // A marker of no command of ours changes nothing.
        assert!(x.command_ended(Some(0)).is_none());
    }

    #[test]
    fn a_line_that_never_ran_is_reported_with_what_the_shell_said() {
        let mut port = FakePort { last_exit: Some(2), ..FakePort::integrated() };
        let mut x = typed("if then", &mut port, Instant::now());
        assert_eq!(x.route(b"if then\r\nbash: syntax error near unexpected token `then'\r\n"), Routed::Hidden);
        let u = x.turn_prompt(&port).expect("never started");
        assert_eq!((u.said.as_str(), u.exit_code), ("bash: syntax error near unexpected token `then'", 2));
        assert!(!x.running());
    }

    #[test]
    fn a_command_past_its_timeout_gets_ctrl_c_and_ends_as_timed_out() {
        let mut port = FakePort::integrated();
        let start = Instant::now();
        let mut x = typed("sleep 600", &mut port, start);
        assert!(x.command_started());
        let due = x.deadline().expect("a timeout");
        assert_eq!(due, start + Duration::from_secs(300));
        x.on_deadline(due - Duration::from_millis(1), &mut port);
        assert_eq!(port.typed.len(), 1, "nothing before the timeout");
        x.on_deadline(due, &mut port);
        assert_eq!(port.typed.last(), Some(&(b"\x03".to_vec(), false)));
        let (_, f) = x.command_ended(Some(130)).expect("ended");
        let f = f.expect("finished");
        assert!(f.timed_out);
        assert!(f.output.ends_with("[interrupted by unixagent: still running after 300 s]"), "{}", f.output);
    }

    #[test]
    fn an_interrupted_job_that_takes_the_terminal_later_gets_sigint_once() {
        let mut port = FakePort::integrated();
        let now = Instant::now();
        let mut x = typed("make", &mut port, now);
        // Ctrl+C before the command started: the line is dropped.
        x.interrupt(now, &mut port);
        assert_eq!(port.typed.last(), Some(&(b"\x03".to_vec(), true)));
        // The shell started the job anyway: it gets its SIGINT, once.
        port.job = Some(job(4242));
        let check = x.deadline().expect("the watch");
        x.on_deadline(check, &mut port);
        let signalled = x.interrupting.as_ref().and_then(|i| i.signalled.clone());
        assert_eq!(signalled, Some(job(4242)));
        let typed_before = port.typed.len();
        x.on_deadline(check + INTERRUPT_CHECK, &mut port);
        assert_eq!(port.typed.len(), typed_before, "no second Ctrl+C while the job holds the terminal");
        // Gone, and no prompt for longer than a lost Ctrl+C takes: typed again.
        port.job = None;
        x.on_deadline(now + INTERRUPT_LOST + INTERRUPT_CHECK * 3, &mut port);
        assert_eq!(port.typed.last(), Some(&(b"\x03".to_vec(), false)));
        // A fresh prompt ends the watch.
        x.prompt_seen();
        assert!(x.interrupting.is_none());
    }

    #[test]
    fn plain_output_is_held_to_its_line_end_and_loses_zsh_prompt_sp() {
        let mut port = FakePort::integrated();
        let mut x = Executor::new(Duration::from_secs(300), 1 << 20, true, true);
        x.turn_started();
        x.hold(proposal("printf 'a\\nb'"));
        x.ready(Instant::now());
        x.type_command("printf 'a\\nb'", &mut port);
        x.command_started();
        assert_eq!(x.route(b"\x1b[1ma\x1b[0m\r\nb"), Routed::Text("a\n".into()));
        let sp = b"\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m          \r \r";
        assert_eq!(x.route(sp), Routed::Text(String::new()));
        let (rest, _) = x.command_ended(Some(0)).expect("ended");
        assert_eq!(rest, "b");
    }

    #[test]
    fn after_a_turn_the_shell_is_asked_for_a_prompt_and_type_ahead_comes_back() {
        let mut port = FakePort::integrated();
        let mut x = Executor::new(Duration::from_secs(300), 1 << 20, false, false);
        x.turn_started();
        x.type_ahead(b"ls");
        x.turn_over(After::Shell, &mut port);
        assert_eq!(port.typed, [(b"\r".to_vec(), true)]);
        // The prompt that follows is shown, and the keys go to it.
        assert!(x.prompt_started());
        assert!(!x.active());
        assert_eq!(x.idle_prompt(&mut port), Some(b"ls".to_vec()));
        // A command still running draws its own prompt when it ends.
        let mut x = typed("sleep 1", &mut port, Instant::now());
        let typed_before = port.typed.len();
        x.turn_over(After::Shell, &mut port);
        assert_eq!(port.typed.len(), typed_before);
    }

    #[test]
    fn a_pause_gives_the_shell_back_until_the_turn_resumes() {
        let mut port = FakePort::integrated();
        let mut x = Executor::new(Duration::from_secs(300), 1 << 20, false, false);
        x.turn_started();
        x.pause(&mut port);
        assert_eq!(port.typed, [(b"\r".to_vec(), true)]);
        assert!(x.prompt_started());
        assert!(!x.active(), "the person's shell, shown as it is");
        x.resume();
        assert!(x.active());
    }
}
