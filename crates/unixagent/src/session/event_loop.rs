//! The event loop and the router between the session's parts.
//!
//! [`Session`] waits on everything at once (the PTY, keystrokes, signals,
//! the turn driver's model call and gate decision, the person's editor,
//! batch input lines, and at most a few one-shot deadlines) and passes
//! each to the part it belongs to. It never runs a turn itself: the turn
//! driver does, and pushes what follows into the outbox, which
//! [`Session::carry_out`] works through after every call, in order. That
//! is the one place the driver's requests meet the I/O world: front ends
//! draw, the shell executor types, the session ends.
//!
//! Shell output goes to the terminal through the proxy first and only
//! then is looked at, so the user never waits on unixagent's bookkeeping.

use std::os::fd::OwnedFd;

use nix::errno::Errno;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use ua_protocol::agent::{AgentEvent, RunStatus};
use ua_store::board::watch::TaskChange;
use ua_term::intercept::Action;
use ua_term::osc::ShellEvent;
use ua_term::state::Transition;

use super::board::TaskBoard;
use super::children::Children;
use super::driver::{Driver, Input, TurnContext};
use super::executor::{After, Executor, Routed};
use super::front::{Batch, FrontEnd, KeyInput, Next, Read};
use super::outbox::{Chrome, Out, Outbox, ShellOp, TurnEnd};
use super::proxy::Proxy;
use super::startup;
use super::waits::{board_changed, changed_child, next_line, read_keys, sleep_until, writable};
use crate::keyboard::Keys;

/// The running session: the loop and the parts it routes between.
#[derive(Debug)]
pub(super) struct Session {
    /// The PTY and the shell's state.
    proxy: Proxy,
    /// Runs the agent's commands in the shell.
    exec: Executor,
    /// Runs the agent's turns.
    driver: Driver,
    /// What the driver asked for and the loop has not carried out yet.
    out: Outbox,
    /// Draws the agent's stream.
    front: Box<dyn FrontEnd>,
    /// The keys a turn reads (questions, the editor).
    keys: KeyInput,
    /// Batch mode's input lines, queue and result line.
    batch: Option<Batch>,
    /// `-c '# …'`: the instruction, until the first prompt starts it.
    oneshot: Option<String>,
    /// `-c '# …'`: the session ends with the first turn.
    ends_with_turn: bool,
    /// Set when the session should end now with this status.
    exit_now: Option<i32>,
    /// The task board and its watcher, when the session has a board.
    board: Option<TaskBoard>,
    /// The agents started from the shell, as their reports tell.
    children: Option<Children>,
}

impl Session {
    pub(super) fn new(
        (proxy, exec, driver): (Proxy, Executor, Driver),
        front: Box<dyn FrontEnd>,
        batch: Option<Batch>,
        (oneshot, board): (Option<String>, Option<TaskBoard>),
    ) -> Self {
        Self {
            proxy,
            exec,
            driver,
            out: Outbox::default(),
            front,
            keys: KeyInput::default(),
            batch,
            ends_with_turn: oneshot.is_some(),
            oneshot,
            exit_now: None,
            board,
            children: None,
        }
    }

    /// Hears of the children started from the shell through this watch.
    pub(super) fn watch_children(&mut self, children: Children) {
        self.children = Some(children);
    }

    /// Hands the driver one input and carries out what follows.
    pub(super) fn drive(&mut self, f: impl FnOnce(&mut Driver, &mut Outbox)) {
        f(&mut self.driver, &mut self.out);
        self.carry_out();
    }

    pub(super) async fn run(
        &mut self,
        master: &AsyncFd<OwnedFd>,
        keys: Option<crate::keyboard::Keyboard>,
        sig: &mut crate::signals::Signals,
    ) -> i32 {
        let mut buf = vec![0u8; 64 * 1024];
        let mut pty_open = true;
        let mut keys_open = keys.is_some();
        let mut keys = keys;
        let mut writer: Option<AsyncFd<OwnedFd>> = None;
        // A one-shot's instruction (or `--json -c`'s) goes to the model at
        // once: the model answers while the shell starts (its start-up
        // files may take a while), and a command it proposes waits for the
        // first prompt.
        if let Some(text) = self.oneshot.take().or_else(|| self.batch.as_mut().and_then(Batch::take_first)) {
            self.exec.before_first_prompt();
            self.start_turn(&text);
        }
        loop {
            if !self.proxy.has_queued() {
                writer = None;
            } else if writer.is_none() && pty_open {
                writer = self
                    .proxy
                    .pty()
                    .clone_fd()
                    .ok()
                    // SAFETY: as for `master`: the AsyncFd owns the descriptor.
                    .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::WRITABLE) }.ok());
            }
            if let Some(code) = self.exit_now {
                return code;
            }
            let approval = self.batch.as_ref().and_then(Batch::deadline);
            let deadline = [self.proxy.deadline(), self.front.deadline(), self.exec.deadline(), approval]
                .into_iter()
                .flatten()
                .min();
            tokio::select! {
                biased;
                fired = sig.next() => {
                    if fired.child
                        && let Some(code) = self.proxy.pty().try_wait()
                    {
                        self.proxy.drain(&mut buf);
                        if self.batch.is_some() {
                            self.batch_shell_exited(code.0);
                        }
                        return code.0;
                    }
                    if fired.term {
                        if self.batch.is_some() { self.batch_signal() } else { self.proxy.hang_up() }
                    }
                    if fired.hup {
                        self.proxy.hang_up();
                    }
                    if fired.int && self.batch.is_some() {
                        self.batch_signal();
                    }
                    // SIGQUIT is received only so that it cannot kill us.
                    if fired.winch {
                        self.resize();
                    }
                }
                ready = std::future::poll_fn(|cx| master.poll_read_ready(cx)), if pty_open => {
                    let Ok(mut guard) = ready else { pty_open = false; continue };
                    match nix::unistd::read(guard.get_inner(), &mut buf) {
                        Ok(n) if n > 0 => {
                            // A short read emptied the queue: wait for the
                            // next edge rather than read again only to hear
                            // EAGAIN. Data the line discipline had not taken
                            // in yet comes with a wake-up of its own, and a
                            // clear is dropped when an event came in since
                            // this one, so nothing is missed.
                            if n < buf.len() {
                                guard.clear_ready();
                            }
                            self.on_output(&buf[..n]);
                        }
                        Err(Errno::EAGAIN) => guard.clear_ready(),
                        Err(Errno::EINTR) => {}
                        // EOF or EIO: every process holding the shell's side
                        // has closed it; the shell's exit comes as SIGCHLD.
                        Ok(_) | Err(_) => pty_open = false,
                    }
                }
                ready = writable(&writer), if pty_open && writer.is_some() => {
                    if let Ok(mut guard) = ready {
                        let pending = self.proxy.take_queued();
                        match guard.try_io(|fd| nix::unistd::write(fd.get_ref(), &pending).map_err(std::io::Error::from)) {
                            Ok(Ok(n)) => self.proxy.requeue(pending[n..].to_vec()),
                            Ok(Err(_)) => {}
                            Err(_would_block) => self.proxy.requeue(pending),
                        }
                    }
                }
                key = read_keys(&mut keys), if keys_open && !self.keys.editing() => match key {
                    Keys::Bytes(bytes) => self.on_input(bytes),
                    Keys::Nothing => {}
                    Keys::Gone => {
                        // The terminal is gone (closed window, dropped ssh).
                        keys_open = false;
                        self.proxy.hang_up();
                    }
                },
                wake = self.driver.wake(), if self.driver.waiting() => self.drive(|d, out| d.on_wake(wake, out)),
                edited = self.keys.edited(), if self.keys.editing() => self.drive(|d, out| d.input(Input::Edited(edited), out)),
                line = next_line(&mut self.batch), if self.batch.as_ref().is_some_and(Batch::reading) => {
                    self.on_batch_line(line);
                }
                found = board_changed(&mut self.board), if self.board.is_some() => self.on_board(found),
                change = changed_child(&mut self.children), if self.children.is_some() => self.on_child(change),
                _ = sleep_until(deadline) , if deadline.is_some() => self.on_deadline(),
            }
        }
    }

    /// Carries out what the driver asked for, in order. The one place its
    /// requests meet the terminal and the shell.
    fn carry_out(&mut self) {
        while let Some(out) = self.out.pop() {
            match out {
                Out::Event(e) => {
                    // A child tells its parent everything it draws.
                    crate::child::report::event(&e);
                    let text = self.front.event(&e);
                    self.write_front(&text);
                    if matches!(e, AgentEvent::ApprovalRequest { .. }) {
                        self.asked();
                    }
                }
                Out::Chrome(c) => {
                    let text = self.front.chrome(&c);
                    self.write_front(&text);
                    if matches!(c, Chrome::Footer { .. }) {
                        self.board_footer();
                    }
                }
                Out::Shell(op) => self.shell(op),
                Out::Edit(command) => {
                    if let Err(message) = self.keys.edit(&command) {
                        let text = self.front.event(&AgentEvent::Error { message, kind: "editor".into() });
                        self.write_front(&text);
                        self.driver.edit_failed();
                    }
                }
                Out::TurnEnded(end) => self.turn_ended(&end),
            }
        }
    }

    /// What a front end drew, on stdout.
    fn write_front(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.front.lines_only() {
            self.proxy.write_events(text.as_bytes());
        } else {
            self.proxy.write_out(text.as_bytes());
        }
    }

    /// A line on stderr (plain in a file or pipe).
    fn write_err(&mut self, msg: &str) {
        let line = if self.exec.plain() { format!("{msg}\n") } else { format!("\r\n{msg}\r\n") };
        let _ = crate::terminal::write_all(std::os::fd::AsFd::as_fd(&std::io::stderr()), line.as_bytes());
    }

    /// The shell executor's share of the turn.
    fn shell(&mut self, op: ShellOp) {
        match op {
            ShellOp::TurnStarted => self.exec.turn_started(),
            ShellOp::Run(p) => {
                self.exec.hold(p);
                self.type_waiting();
            }
            ShellOp::Interrupt => self.exec.interrupt(Instant::now(), &mut self.proxy),
            ShellOp::Pause => self.exec.pause(&mut self.proxy),
            ShellOp::Resume => self.exec.resume(),
            ShellOp::FreshPrompt => self.proxy.fresh_prompt(),
            ShellOp::TurnEnding => {
                let (ends_line, rest) = self.exec.turn_ending();
                if let Some(ends_line) = ends_line {
                    // Ended while a command ran: its output may have left
                    // the cursor mid-line.
                    self.front.chrome(&Chrome::LineStart(ends_line));
                }
                if !rest.is_empty() {
                    self.proxy.write_out(rest.as_bytes());
                }
            }
        }
    }

    /// Types the command that waits, if the shell is ready for it: the
    /// journal hears of it first.
    fn type_waiting(&mut self) {
        let Some(p) = self.exec.ready(Instant::now()) else { return };
        let line = self.driver.command_typed(&p, &mut self.out);
        self.exec.type_command(&line, &mut self.proxy);
    }

    fn turn_ended(&mut self, end: &TurnEnd) {
        if let Some(b) = self.batch.as_mut() {
            b.turn_ended(end);
            // Hidden as before; the next fresh prompt runs what waits.
            self.exec.turn_over(After::Batch, &mut self.proxy);
            return;
        }
        if self.ends_with_turn {
            // Batch mode's result line is drawn (and so reported) above;
            // a one-shot on a terminal draws none, but its parent needs one.
            crate::child::report::event(&end.result());
            self.exit_now = Some(end.status);
            return;
        }
        // Ask the shell for a fresh prompt: an empty line runs nothing
        // and keeps `$?`. A command still running draws one when it ends.
        self.exec.turn_over(After::Shell, &mut self.proxy);
    }

    /// Shell output: each stretch up to a marker goes where the executor's
    /// view says, then the marker takes effect, so what a marker changes
    /// (a turn starting at a fresh prompt, a command's output beginning)
    /// applies from the next byte on.
    fn on_output(&mut self, bytes: &[u8]) {
        let mut events = self.proxy.scan(bytes);
        let mut pos = 0;
        for (end, e) in events.drain(..) {
            // Up to the end of the marker: in plain output (a file or pipe,
            // `ssh host '# …'`) it is stripped with every other escape.
            self.route(&bytes[pos..end]);
            pos = end;
            self.on_marker(&e);
        }
        self.proxy.scanned(events);
        self.route(&bytes[pos..]);
        if self.board.as_ref().is_some_and(TaskBoard::alerting) {
            self.draw_alerts();
        }
        if self.exec.active() {
            return;
        }
        self.proxy.after_output();
    }

    fn route(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if !self.exec.active() {
            self.proxy.show(bytes);
            if let Some(b) = self.board.as_mut() {
                b.prompt().shown(bytes);
            }
            return;
        }
        match self.exec.route(bytes) {
            Routed::Hidden => {}
            Routed::Shown => {
                self.clear_child_progress();
                self.proxy.shown_for_agent(bytes);
                self.proxy.write_out(bytes);
            }
            Routed::Text(text) => {
                self.clear_child_progress();
                self.proxy.shown_for_agent(bytes);
                if text.is_empty() {
                    return;
                }
                // A stream of lines only (NDJSON) gets the output as
                // events, for a program that shows a command as it runs.
                if self.front.lines_only() {
                    if let Some(id) = self.exec.running_id() {
                        let event = AgentEvent::Output {
                            id: id.to_string(),
                            text: ua_context::secrets::redact_secrets(&text).into_owned(),
                        };
                        let line = self.front.event(&event);
                        self.write_front(&line);
                    }
                    return;
                }
                self.proxy.write_out(text.as_bytes());
            }
        }
    }

    /// The one place a shell marker takes effect, whether or not a turn
    /// is running.
    fn on_marker(&mut self, e: &ShellEvent) {
        match self.proxy.marker(e, self.exec.active()) {
            Transition::FreshInput => self.on_fresh_prompt(),
            Transition::CommandStarted => {
                if self.exec.command_started() {
                    self.driver.command_started();
                }
            }
            Transition::CommandFinished(code) => self.on_command_ended(code),
            Transition::IntegrationConfirmed | Transition::RedrawnInput | Transition::CwdChanged | Transition::None => {
            }
        }
        if *e == ShellEvent::PromptStart && self.exec.prompt_started() {
            // The turn left the cursor at the start of a line, where the
            // prompt is drawn now.
            self.proxy.line_starts();
        }
        if !self.exec.active()
            && let Some(b) = self.board.as_mut()
        {
            b.prompt().marker(e);
        }
    }

    /// A child's report changed: its start or end is an event for every
    /// front end and a line in the journal.
    fn on_child(&mut self, change: (std::path::PathBuf, bool)) {
        let Some(children) = self.children.as_mut() else { return };
        let events = children.read(change);
        self.children_said(events);
        self.child_progress();
    }

    /// The foreground child's progress line, drawn on the terminal while
    /// the agent's command that started it runs: beside the command's
    /// output, never in what is captured of it.
    fn child_progress(&mut self) {
        if self.front.lines_only() || !self.exec.running() {
            return;
        }
        let width = usize::from(crate::terminal::size().0).saturating_sub(1);
        if let Some(text) = self.children.as_mut().and_then(|c| c.progress_line(width)) {
            self.proxy.write_out(text.as_bytes());
        }
    }

    /// Erases a child's progress line before anything else is written
    /// where it stands.
    fn clear_child_progress(&mut self) {
        if let Some(text) = self.children.as_mut().and_then(Children::clear_line) {
            self.proxy.write_out(text.as_bytes());
        }
    }

    /// Every child's report read to its end now (see `Children::settle`).
    fn settle_children(&mut self) {
        let Some(children) = self.children.as_mut() else { return };
        let events = children.settle();
        self.children_said(events);
    }

    /// At the run's end: every report read, every spool left imported.
    pub(super) fn finish_children(&mut self) {
        let Some(children) = self.children.as_mut() else { return };
        let events = children.finish();
        self.children_said(events);
    }

    fn children_said(&mut self, events: Vec<AgentEvent>) {
        if events.is_empty() {
            return;
        }
        for e in events {
            if let AgentEvent::Child { status, usage, .. } = &e
                && *status != ua_protocol::agent::ChildStatus::Running
            {
                self.driver.descendants_used(*usage);
            }
            if let Some(entry) = super::children::journal_entry(&e) {
                self.driver.record(entry, &mut self.out);
            }
            self.out.event(e);
        }
        self.carry_out();
    }

    /// A fresh prompt: what waits for one runs (a batch
    /// instruction, a batch shell line, an agent command, keys typed
    /// ahead); a command that never started (a syntax error) is over.
    fn on_fresh_prompt(&mut self) {
        self.exec.prompt_seen();
        if !self.driver.turn_running() {
            if self.batch.is_some() {
                self.batch_next();
            } else if let Some(keys) = self.exec.idle_prompt(&mut self.proxy) {
                self.on_input(&keys);
            }
            return;
        }
        if let Some(u) = self.exec.turn_prompt(&self.proxy) {
            // The line never ran: report what the shell said about it.
            self.drive(|d, out| d.command_unstarted(u, out));
            return;
        }
        self.type_waiting();
        self.carry_out();
    }

    /// The shell finished a command line (`133;D`): the agent's, if it ran
    /// one.
    fn on_command_ended(&mut self, code: Option<i32>) {
        let Some((rest, finished)) = self.exec.command_ended(code) else { return };
        if finished.is_some() {
            self.clear_child_progress();
            self.settle_children();
        }
        if !rest.is_empty() {
            self.proxy.write_out(rest.as_bytes());
        }
        if let Some(f) = finished {
            let proxy = &self.proxy;
            self.driver.command_finished(f, || proxy.cwd(), &mut self.out);
            self.carry_out();
        }
    }

    /// Starts a turn for an instruction typed at the prompt (or given to
    /// `-c`, or read in batch mode).
    fn start_turn(&mut self, text: &str) {
        let proxy = &mut self.proxy;
        let board = self.board.as_mut();
        self.driver.instruction(text, |lines| context(proxy, board, lines), &mut self.out);
        if let Some(b) = self.board.as_mut() {
            b.prompt().forget();
            // Alerts that found no prompt to go above go out with the turn.
            for alert in b.take_alerts() {
                self.out.chrome(Chrome::Alert(alert));
            }
        }
        self.carry_out();
    }

    /// Tasks changed state on the board, whoever moved them: a `task`
    /// event each for NDJSON and a running turn; at a terminal with no
    /// turn running, a task that entered `blocked` is drawn above the
    /// prompt (other moves show in the next turn's footer).
    fn on_board(&mut self, found: Option<Vec<TaskChange>>) {
        let Some(found) = found else {
            // The watcher's thread is gone: nothing more will come.
            self.board = None;
            return;
        };
        let Some(board) = self.board.as_mut() else { return };
        // A turn paused at a question has given the prompt back: as idle.
        let (ndjson, turn) = (self.front.lines_only(), self.driver.takes_keys());
        let held = !ndjson && !turn && self.batch.is_none();
        let events = board.events(&found, held);
        if ndjson || turn {
            for e in events {
                self.out.event(e);
            }
            self.carry_out();
        }
        self.draw_alerts();
    }

    /// Draws the alerts waiting, above the prompt the person types at,
    /// when the shell is reading a line and nothing else has the terminal.
    fn draw_alerts(&mut self) {
        let Some(board) = self.board.as_mut() else { return };
        if !board.alerting() || self.driver.takes_keys() || self.exec.active() || !board.prompt().ready() {
            return;
        }
        let lines: String = board.take_alerts().into_iter().map(|a| self.front.chrome(&Chrome::Alert(a))).collect();
        match board.prompt().above(&lines, self.proxy.width()) {
            Some(bytes) => {
                self.proxy.write_out(&bytes);
                // The `#` editor draws its line again over the shell's.
                self.proxy.after_output();
            }
            // The prompt cannot be placed: the alert still shows.
            None => self.proxy.write_out(format!("\r\n{lines}").as_bytes()),
        }
    }

    /// The board's counts under the footer closing a turn, when they
    /// changed since they were last drawn.
    fn board_footer(&mut self) {
        if self.front.lines_only() {
            return;
        }
        let Some(line) = self.board.as_mut().and_then(TaskBoard::footer) else { return };
        let text = self.front.chrome(&Chrome::BoardFooter(line));
        self.write_front(&text);
    }

    fn on_input(&mut self, bytes: &[u8]) {
        if self.driver.takes_keys() {
            self.turn_keys(bytes);
            return;
        }
        // While a command runs every key goes to it as it is.
        if self.proxy.pass_through(bytes) {
            return;
        }
        for action in self.proxy.keys(bytes) {
            match action {
                // The editor has ended its line.
                Action::Instruction(text) => self.start_turn(&text),
                other => self.proxy.act(other),
            }
        }
        if self.proxy.editing() {
            self.driver.prepare();
        }
    }

    /// Keys while a turn runs.
    fn turn_keys(&mut self, bytes: &[u8]) {
        if self.exec.running() {
            // The command has the terminal: every byte goes to the shell,
            // so Ctrl+C interrupts it as it would without unixagent. A
            // one-shot (a child agent in its parent's terminal, say) stops
            // at the first: like any program given Ctrl+C, it ends, its
            // shell with it, and whoever started it hears 130.
            if bytes.contains(&0x03) && (self.keys.double_interrupt() || self.ends_with_turn) {
                self.proxy.send(b"\x03");
                self.drive(|d, out| d.input(Input::Cancel, out));
                return;
            }
            self.proxy.send(bytes);
            return;
        }
        if !self.driver.asking() && !self.keys.editing() {
            if bytes.contains(&0x03) {
                self.exec.drop_type_ahead();
                self.drive(|d, out| d.input(Input::Cancel, out));
            } else {
                self.exec.type_ahead(bytes);
            }
            return;
        }
        for key in self.keys.decode(bytes) {
            if !self.driver.turn_running() {
                break;
            }
            self.drive(|d, out| d.input(Input::Key(key), out));
        }
    }

    fn resize(&mut self) {
        if let Some(width) = self.proxy.resize() {
            self.front.resize(width);
        }
    }

    fn on_deadline(&mut self) {
        let now = Instant::now();
        if let Some(u) = self.proxy.integration_expired(now) {
            if self.ends_with_turn || self.batch.is_some() {
                let msg = startup::failure_message(u.shell_name, u.waited_ms, u.printed.as_deref(), true);
                self.write_err(&msg);
                if self.batch.is_some() {
                    self.out.event(AgentEvent::Error { message: msg, kind: "integration".into() });
                    self.carry_out();
                    self.batch_finish(Some((RunStatus::Error, 1)));
                }
                self.exit_now = Some(1);
                return;
            }
            let msg = startup::failure_message(u.shell_name, u.waited_ms, u.printed.as_deref(), false);
            self.proxy.go_heuristic(&msg, now);
        }
        self.proxy.on_deadline(now);
        if self.front.deadline().is_some_and(|d| d <= now) {
            let frame = self.front.tick(now);
            self.write_front(&frame);
        }
        self.exec.on_deadline(now, &mut self.proxy);
        let asking = self.driver.asking_id().is_some();
        if let Some(input) = self.batch.as_mut().and_then(|b| b.on_deadline(now, asking)) {
            self.drive(|d, out| d.input(input, out));
        }
    }

    /// A question was asked: batch mode waits for an approval, but not
    /// forever, and not at all once its input has closed.
    fn asked(&mut self) {
        if let Some(input) = self.batch.as_mut().and_then(|b| b.asked(Instant::now())) {
            self.driver.input(input, &mut self.out);
        }
    }

    /// One batch input line, or the end of input (`None`).
    fn on_batch_line(&mut self, line: Option<String>) {
        let (asking, turn_running) = (self.driver.asking_id(), self.driver.turn_running());
        let Some(b) = self.batch.as_mut() else { return };
        let read = match line {
            Some(line) => b.read(&line, asking, turn_running),
            None => {
                let read = b.closed(asking.is_some());
                self.driver.set_can_ask(false);
                read
            }
        };
        match read {
            Read::Input(input) => self.drive(|d, out| d.input(input, out)),
            Read::Next => self.batch_next(),
            Read::Refused(message) => {
                self.out.event(AgentEvent::Error { message, kind: "input".into() });
                self.carry_out();
            }
            Read::Nothing => {}
        }
    }

    /// The shell shows a fresh prompt and no turn runs: run what waits
    /// next, or end the run when nothing can come any more.
    fn batch_next(&mut self) {
        if self.driver.turn_running() {
            return;
        }
        let Some(b) = self.batch.as_mut() else { return };
        match b.next() {
            Next::Instruction(text) => self.start_turn(&text),
            Next::Shell(line) => {
                self.proxy.line_ended();
                self.proxy.send(&line);
            }
            Next::Finish => self.batch_finish(None),
            Next::Wait => {}
        }
    }

    /// Writes the `result` line once and ends the run with its exit code.
    fn batch_finish(&mut self, forced: Option<(RunStatus, i32)>) {
        self.settle_children();
        let Some((event, code)) = self.batch.as_mut().and_then(|b| b.finish(forced)) else { return };
        if let Some(event) = event {
            self.out.event(event);
            self.carry_out();
        }
        self.exit_now = Some(code);
    }

    /// SIGTERM or SIGINT: the running turn is cancelled and the run ends.
    fn batch_signal(&mut self) {
        if let Some(b) = self.batch.as_mut() {
            b.drop_pending();
        }
        self.drive(|d, out| d.input(Input::Stop, out));
        self.batch_finish(Some((RunStatus::Cancelled, 130)));
    }

    /// The shell exited before the run ended (an `exit` line, a crash).
    fn batch_shell_exited(&mut self, code: i32) {
        let status = if self.driver.turn_running() { RunStatus::Error } else { RunStatus::Ok };
        self.drive(|d, out| d.input(Input::Cancel, out));
        self.batch_finish(Some((status, code)));
    }
}

/// What the shell's side knows when an instruction starts a turn: the
/// instruction's line is not a command the user ran.
fn context(proxy: &mut Proxy, board: Option<&mut TaskBoard>, lines: usize) -> TurnContext {
    let user_commands = proxy.take_commands();
    TurnContext {
        cwd: proxy.cwd(),
        shell: proxy.shell_path().display().to_string(),
        recent_lines: proxy.recent_lines(lines),
        user_commands,
        markers: proxy.markers(),
        board: board.is_some(),
        active_tasks: board.and_then(TaskBoard::for_turn),
    }
}
