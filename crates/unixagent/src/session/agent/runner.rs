//! The agent's commands and the shell: the session's side of the shell
//! executor (`session::executor`). What the executor reports (a command
//! started, ended, never ran) is passed to the turn, and what the turn
//! asks (run this) to the executor.

use super::*;

impl Session {
    /// Interrupts the agent command running in the shell, as Ctrl+C would.
    pub(in crate::session) fn interrupt_command(&mut self) {
        self.exec.interrupt(Instant::now(), &mut self.proxy);
    }

    /// Hands an approved command to the executor, which types it when the
    /// shell is at a fresh prompt.
    pub(super) fn run_command(&mut self, p: Proposal) {
        if p.command.trim().is_empty() {
            let effects = self.turn_input(|t| t.command_done(0, "(empty command: nothing ran)".into()));
            self.apply(effects);
            return;
        }
        self.exec.hold(p);
        self.type_waiting();
    }

    /// Types the command that waits, if the shell is ready for it.
    fn type_waiting(&mut self) {
        let Some(p) = self.exec.ready(Instant::now()) else { return };
        // The ledger: written (and synced, unless read-only) before the
        // command can do anything, so a crash leaves no doubt it started.
        let read_only = self.agent.gate.read_only();
        self.journal(JournalEntry::CommandIntent {
            turn: self.agent.turn_no,
            tool_use_id: p.id.clone(),
            command: p.command.clone(),
            read_only,
        });
        self.exec.type_command(&mut self.proxy);
    }

    /// A fresh prompt: a waiting command can be typed, a command that
    /// never started (a syntax error) is over.
    pub(in crate::session) fn on_fresh_prompt(&mut self) {
        self.exec.prompt_seen();
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
            if let Some(keys) = self.exec.idle_prompt(&mut self.proxy) {
                self.on_input(&keys);
            }
            return;
        }
        if let Some(u) = self.exec.turn_prompt(&self.proxy) {
            // The line never ran: report what the shell said about it.
            let out = self.agent.render.text(&format!("{}\n", u.said));
            self.show(&out);
            let framed = frame_tool_output(Some(u.exit_code), &u.said, false);
            let effects = self.turn_input(|t| t.command_done(u.exit_code, framed));
            self.apply(effects);
            return;
        }
        self.type_waiting();
    }

    /// Shell output while a turn routes it (the executor is active): shown
    /// and captured, or held back.
    pub(in crate::session) fn route_in_turn(&mut self, bytes: &[u8]) {
        match self.exec.route(bytes) {
            Routed::Hidden => {}
            Routed::Shown => {
                self.proxy.shown_for_agent(bytes);
                self.proxy.write_out(bytes);
            }
            Routed::Text(text) => {
                self.proxy.shown_for_agent(bytes);
                if !text.is_empty() {
                    self.proxy.write_out(text.as_bytes());
                }
            }
        }
    }

    /// The shell started a command line (`133;C`): the agent's, if one
    /// waits for it.
    pub(in crate::session) fn agent_command_started(&mut self) {
        if self.exec.command_started() {
            // Refusals from before this command are not its own.
            if let Some(w) = self.agent.sandbox.as_mut() {
                w.decisions();
            }
        }
    }

    /// The shell finished a command line (`133;D`).
    pub(in crate::session) fn agent_command_ended(&mut self, code: Option<i32>) {
        let Some((rest, finished)) = self.exec.command_ended(code) else { return };
        if !rest.is_empty() {
            self.proxy.write_out(rest.as_bytes());
        }
        if let Some(f) = finished {
            self.command_finished(f);
        }
    }

    /// The shell started drawing a prompt (`133;A`).
    pub(in crate::session) fn agent_prompt_started(&mut self) {
        if self.exec.prompt_started() {
            // The turn left the cursor at the start of a line, where the
            // prompt is drawn now.
            self.proxy.line_starts();
        }
    }

    fn command_finished(&mut self, f: Finished) {
        self.agent.render.set_line_start(f.ends_line);
        let out = self.agent.render.hand_over();
        self.show(&out);
        let code = f.exit_code;
        let mut output = f.output;
        self.explain_sandbox(&mut output, code);
        let framed = frame_tool_output(Some(code), &output, f.truncated);
        self.journal(JournalEntry::ToolResult {
            turn: self.agent.turn_no,
            tool_use_id: f.proposal.id.clone(),
            command: f.proposal.command.clone(),
            exit_code: Some(code),
            output: framed.clone(),
            is_error: code != 0,
            truncated: f.truncated,
            duration_ms: u64::try_from(f.duration.as_millis()).unwrap_or(u64::MAX),
        });
        self.audit_outcome(code, f.duration);
        let status = if f.timed_out {
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
        let cwd = self.proxy.cwd();
        let Some(w) = self.agent.sandbox.as_mut() else { return };
        let decisions = w.decisions();
        let lines = ua_sandbox::explain::explain(&w.rules, std::path::Path::new(&cwd), output, &decisions, code != 0);
        // Each host the command reached, or was refused, goes to the audit
        // log beside the command's own records.
        if let Some((req, d)) = self.agent.gate.last() {
            let id = self.agent.records.audit_id();
            let records: Vec<_> = decisions
                .iter()
                .map(|n| {
                    let target = format!("{}:{}", n.host, n.port);
                    ua_policy::audit::Record::network(id.clone(), req, d, target, n.allowed, n.reason.as_deref())
                })
                .collect();
            for record in records {
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
        self.exec.on_deadline(now, &mut self.proxy);
    }
}
