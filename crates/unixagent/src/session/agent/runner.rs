//! Running an approved command in the user's shell: typing it at a
//! fresh prompt, routing the shell's output by [`View`] as
//! the markers arrive, capturing what the command printed, its timeout,
//! and interrupting it (see [`Interrupting`]).

use super::*;

impl Session {
    /// Interrupts the agent command running in the shell, as Ctrl+C would.
    pub(in crate::session) fn interrupt_command(&mut self) {
        let Some(r) = &self.agent.running else { return };
        if !r.started {
            // Typed but not started yet: Ctrl+C drops the line at the
            // prompt, and the prompt bash draws then is a fresh one.
            self.state.line_ended();
        }
        let started = r.started;
        self.send(b"\x03");
        // Without markers nothing says when the prompt is back, and a job
        // on the terminal later may be the user's own.
        if !self.state.integrated() {
            return;
        }
        let now = Instant::now();
        self.agent.interrupting = Some(Interrupting {
            signalled: self.pty.foreground_job(),
            started_then: started,
            started,
            typed_at: now,
            check_at: now + INTERRUPT_CHECK,
            give_up: now + INTERRUPT_WATCH,
        });
    }

    /// Sees that an interrupted command got its interrupt (see
    /// [`Interrupting`]).
    pub(super) fn watch_interrupt(&mut self, now: Instant) {
        let Some(i) = self.agent.interrupting.as_mut().filter(|i| i.check_at <= now) else { return };
        if now >= i.give_up {
            self.agent.interrupting = None;
            return;
        }
        i.check_at = now + INTERRUPT_CHECK;
        match self.pty.foreground_job() {
            Some(job) if i.signalled.as_ref() != Some(&job) => {
                self.pty.signal_job(&job, nix::sys::signal::Signal::SIGINT);
                i.signalled = Some(job);
            }
            Some(_) => {}
            None if (i.started && !i.started_then) || (!i.started && now >= i.typed_at + INTERRUPT_LOST) => {
                i.started_then = i.started;
                i.typed_at = now;
                self.send(b"\x03");
            }
            None => {}
        }
    }

    /// Types an approved command into the shell, or waits for its prompt.
    pub(super) fn run_command(&mut self, p: Proposal) {
        if p.command.trim().is_empty() {
            let effects = self.turn_input(|t| t.command_done(0, "(empty command: nothing ran)".into()));
            self.apply(effects);
            return;
        }
        if !self.agent.shell_ready {
            self.agent.waiting_run = Some(p);
            return;
        }
        self.agent.shell_ready = false;
        // A command that starts a child agent runs with its own trace
        // context (its TRACEPARENT), so the child joins the trace under it.
        let typed = crate::trace::typed_command(
            &self.agent.opts.telemetry,
            &self.shell_path,
            &self.agent.session_id,
            self.agent.turn_no,
            &p,
        );
        let mut line = Vec::new();
        if typed.contains('\n') {
            // A bracketed paste keeps a multi-line command one command line.
            line.extend_from_slice(b"\x1b[200~");
            line.extend_from_slice(typed.as_bytes());
            line.extend_from_slice(b"\x1b[201~");
        } else {
            line.extend_from_slice(typed.as_bytes());
        }
        line.push(b'\r');
        // The ledger: written (and synced, unless read-only) before the
        // command can do anything, so a crash leaves no doubt it started.
        let read_only = self.agent.gated.as_ref().is_some_and(|g| g.verdict.risk == "read_only");
        self.journal(JournalEntry::CommandIntent {
            turn: self.agent.turn_no,
            tool_use_id: p.id.clone(),
            command: p.command.clone(),
            read_only,
        });
        self.agent.running = Some(Running {
            proposal: p,
            capture: Capture::new(self.agent.opts.output_cap),
            before_start: Vec::new(),
            started: false,
            timeout_at: Instant::now() + self.agent.opts.command_timeout,
            timed_out: false,
            began: Instant::now(),
        });
        self.state.line_ended();
        self.send(&line);
    }

    /// A fresh prompt: a waiting command can be typed, a command that
    /// never started (a syntax error) is over.
    pub(in crate::session) fn on_fresh_prompt(&mut self) {
        self.agent.interrupting = None;
        if self.agent.turn.is_none()
            && let Some(text) = self.agent.oneshot_pending.take()
        {
            self.start_turn(&text);
            return;
        }
        if self.agent.turn.is_none() && self.batch.is_some() {
            self.batch_next();
            return;
        }
        if self.agent.turn.is_none() {
            if self.agent.view == View::UntilPrompt {
                // This prompt started while the turn still hid the shell's
                // output (a slow prompt: themes run programs in precmd), so
                // its start was not shown: ask for another.
                self.state.line_ended();
                self.send(b"\r");
                return;
            }
            if !self.agent.typeahead.is_empty() && self.agent.view == View::Shell {
                let keys = std::mem::take(&mut self.agent.typeahead);
                self.on_input(&keys);
            }
            return;
        }
        self.agent.shell_ready = true;
        if let Some(r) = self.agent.running.take_if(|r| !r.started) {
            // The line never ran: report what the shell said about it.
            let said = ua_context::clean::strip_escapes(&r.before_start);
            let said: String = said.replace("\r\n", "\n").lines().skip(1).collect::<Vec<_>>().join("\n");
            let out = self.agent.render.text(&format!("{said}\n"));
            self.show(&out);
            let code = self.state.last_exit().unwrap_or(0);
            let framed = frame_tool_output(Some(code), &said, false);
            let effects = self.turn_input(|t| t.command_done(code, framed));
            self.apply(effects);
            return;
        }
        if let Some(p) = self.agent.waiting_run.take() {
            self.run_command(p);
        }
    }

    /// Shell output while a turn routes it (the agent's view is not
    /// [`View::Shell`]): shown and captured, or held back.
    pub(in crate::session) fn route_in_turn(&mut self, bytes: &[u8]) {
        match self.agent.view {
            View::Shell => {}
            View::Command => {
                self.recorder.shown(bytes, false);
                if let Some(r) = self.agent.running.as_mut() {
                    r.capture.push(bytes);
                }
                if self.agent.plain_output {
                    // A file or pipe gets text a line at a time: the end of
                    // the last line may be the shell's PROMPT_SP, which
                    // only the command's end tells apart.
                    self.agent.plain_held.extend_from_slice(bytes);
                    let held = &self.agent.plain_held;
                    let upto = match held.iter().rposition(|&b| b == b'\n') {
                        Some(nl) => nl + 1,
                        None if held.len() > PLAIN_LINE_MAX => held.len(),
                        None => 0,
                    };
                    let line: Vec<u8> = self.agent.plain_held.drain(..upto).collect();
                    self.write_plain(&line);
                } else {
                    self.write_out(bytes);
                }
            }
            View::Hidden | View::UntilPrompt => {
                if let Some(r) = self.agent.running.as_mut().filter(|r| !r.started && r.before_start.len() < 64 * 1024)
                {
                    r.before_start.extend_from_slice(bytes);
                }
            }
        }
    }

    /// The shell started a command line (`133;C`): the agent's, if one
    /// waits for it.
    pub(in crate::session) fn agent_command_started(&mut self) {
        if let Some(i) = self.agent.interrupting.as_mut() {
            i.started = true;
        }
        if let Some(r) = self.agent.running.as_mut().filter(|r| !r.started) {
            r.started = true;
            self.agent.view = View::Command;
            // Refusals from before this command are not its own.
            if let Some(w) = self.agent.sandbox.as_mut() {
                w.decisions();
            }
        }
    }

    /// The shell finished a command line (`133;D`).
    pub(in crate::session) fn agent_command_ended(&mut self, code: Option<i32>) {
        if self.agent.view == View::Command {
            self.agent.view = View::Hidden;
            let mut held = std::mem::take(&mut self.agent.plain_held);
            if let Some(r) = crate::agent::capture::prompt_sp(&held) {
                held.drain(r);
            }
            self.write_plain(&held);
            if let Some(r) = self.agent.running.as_mut() {
                r.capture.drop_prompt_sp();
            }
            self.command_finished(code.unwrap_or(0));
        }
    }

    /// Command output to a file or pipe: text, with no escape sequence
    /// (colours, the shell's own markers) and no carriage returns.
    pub(super) fn write_plain(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.agent.plain_text.feed(bytes);
        let text = self.agent.plain_text.drain().replace(['\r', '\x08'], "");
        self.write_out(text.as_bytes());
    }

    /// The shell started drawing a prompt (`133;A`).
    pub(in crate::session) fn agent_prompt_started(&mut self) {
        if self.agent.view == View::UntilPrompt {
            // The turn left the cursor at the start of a line, where the
            // prompt is drawn now.
            self.agent.view = View::Shell;
            self.tail = ua_term::column::LineTail::new();
        }
    }

    pub(super) fn command_finished(&mut self, code: i32) {
        let Some(r) = self.agent.running.take() else { return };
        self.agent.render.set_line_start(r.capture.ends_line());
        let out = self.agent.render.hand_over();
        self.show(&out);
        let truncated = r.capture.truncated();
        let mut output = r.capture.text(r.proposal.mode);
        if r.timed_out {
            let secs = self.agent.opts.command_timeout.as_secs();
            output.push_str(&format!("\n[interrupted by unixagent: still running after {secs} s]"));
        }
        self.explain_sandbox(&mut output, code);
        let framed = frame_tool_output(Some(code), &output, truncated);
        self.journal(JournalEntry::ToolResult {
            turn: self.agent.turn_no,
            tool_use_id: r.proposal.id.clone(),
            command: r.proposal.command.clone(),
            exit_code: Some(code),
            output: framed.clone(),
            is_error: code != 0,
            truncated,
            duration_ms: u64::try_from(r.began.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        self.audit_outcome(code, r.began.elapsed());
        let status = if r.timed_out {
            CommandStatus::Timeout
        } else if code == 0 {
            CommandStatus::Ok
        } else {
            CommandStatus::Failed
        };
        let effects = self.turn_input(|t| t.command_ended(code, framed, status));
        self.apply(effects);
    }

    /// Adds to a command's output what the sandbox may have refused it,
    /// and shows the person the refusals it can name.
    fn explain_sandbox(&mut self, output: &mut String, code: i32) {
        if self.agent.sandbox.is_none() {
            return;
        }
        let cwd = self.cwd();
        let Some(w) = self.agent.sandbox.as_mut() else { return };
        let decisions = w.decisions();
        let lines = ua_sandbox::explain::explain(&w.rules, std::path::Path::new(&cwd), output, &decisions, code != 0);
        // Each host the command reached, or was refused, goes to the audit
        // log beside the command's own records.
        if let Some(g) = self.agent.gated.clone()
            && let Some(d) = &g.decision
        {
            let id = self.agent.audit_id.clone().unwrap_or_else(|| self.next_audit_id());
            for n in &decisions {
                let target = format!("{}:{}", n.host, n.port);
                let record = ua_policy::audit::Record::network(
                    id.clone(),
                    &g.request,
                    d,
                    target,
                    n.allowed,
                    n.reason.as_deref(),
                );
                self.audit(record);
            }
        }
        for line in &lines {
            output.push_str(&format!("\n[sandbox: {line}]"));
        }
        let named: Vec<&String> = lines.iter().filter(|l| *l != ua_sandbox::explain::MAY_BE_THE_SANDBOX).collect();
        if !named.is_empty() {
            let text = named.iter().map(|l| format!("sandbox: {l}")).collect::<Vec<_>>().join("\r\n");
            self.notice(text);
        }
    }

    pub(in crate::session) fn agent_deadlines(&mut self, now: Instant) {
        if self.agent.spin_at.is_some_and(|d| d <= now) {
            let out = self.agent.render.spin();
            self.show(&out);
            self.agent.spin_at = Some(now + SPINNER_FRAME);
        }
        if let Some(r) = self.agent.running.as_mut().filter(|r| !r.timed_out && r.timeout_at <= now) {
            r.timed_out = true;
            // As if the user pressed Ctrl+C: the shell's foreground job
            // gets SIGINT.
            self.interrupt_command();
        }
        self.watch_interrupt(now);
    }
}
