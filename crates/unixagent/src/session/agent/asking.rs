//! The person in the loop: asking about a proposal, reading the keys that
//! answer it (the [`Question`] state
//! machine decides what each key means), editing, pausing and steering.

use super::*;

impl Session {
    pub(super) fn ask(&mut self, p: &Proposal, v: &Verdict) -> Vec<Effect> {
        let rule = self.decided_by();
        self.emit(events::command(p, v, GateDecision::Ask, rule));
        self.emit(events::approval(p, v));
        self.agent.asking.ask(p, v);
        if self.batch.is_some() {
            self.batch_asked();
        }
        Vec::new()
    }

    pub(super) fn answer(&mut self, answer: Answer) {
        self.agent.asking.close();
        let out = self.agent.render.hand_over();
        self.show(&out);
        if let Some(p) = self.agent.turn.as_ref().and_then(|t| t.current()).cloned() {
            let outcome = match &answer {
                Answer::Run => DecisionOutcome::Run,
                Answer::Edit(command) => DecisionOutcome::Edited { command: command.clone() },
                Answer::Skip => DecisionOutcome::Skipped,
                Answer::Deny(_) => DecisionOutcome::Denied,
                Answer::Quit | Answer::Steer(_) => DecisionOutcome::Stopped,
            };
            let risk = self.agent.asking.risk();
            let approved = matches!(answer, Answer::Run);
            self.journal_decision(&p, outcome, "the user", "human", &risk);
            if !matches!(answer, Answer::Edit(_)) {
                self.audit_human(approved);
            }
        }
        let effects = self.turn_input(|t| t.answer(answer));
        // A Run effect right after an answer must not draw the line again.
        self.apply(effects);
    }

    /// Keys while a turn runs.
    pub(in crate::session) fn agent_keys(&mut self, bytes: &[u8]) {
        if self.exec.running() {
            // The command has the terminal: every byte goes to the shell,
            // so Ctrl+C interrupts it as it would without unixagent.
            if bytes.contains(&0x03) && self.double_interrupt() {
                self.proxy.send(b"\x03");
                self.cancel_turn();
                return;
            }
            self.proxy.send(bytes);
            return;
        }
        if !self.agent.asking.open() && self.agent.editing.is_none() {
            if bytes.contains(&0x03) {
                self.exec.drop_type_ahead();
                self.cancel_turn();
            } else {
                self.exec.type_ahead(bytes);
            }
            return;
        }
        let keys = self.agent.keys.decode(bytes);
        for k in keys {
            if self.agent.turn.is_none() {
                break;
            }
            self.agent_key(k.key);
        }
    }

    pub(super) fn double_interrupt(&mut self) -> bool {
        let now = Instant::now();
        let double = self.agent.last_interrupt.is_some_and(|t| now.duration_since(t) < DOUBLE_INTERRUPT);
        self.agent.last_interrupt = Some(now);
        double
    }

    pub(super) fn agent_key(&mut self, key: Key) {
        if !self.agent.asking.open() {
            // Streaming or waiting: only Ctrl+C means something.
            if key == Key::Ctrl('c') {
                self.cancel_turn();
            }
            return;
        }
        for step in self.agent.asking.key(key).unwrap_or_default() {
            match step {
                Step::Echo(text) => self.show(text),
                Step::EchoChar(c) => self.show(&c.to_string()),
                Step::Edit => {
                    self.edit_current();
                    if self.agent.editing.is_none() {
                        self.agent.asking.reset();
                    }
                }
                Step::Pause => self.pause(),
                Step::Answer(reply) => self.reply(reply),
            }
        }
    }

    /// The id of the proposal a question is waiting on, if any.
    pub(in crate::session) fn asking_id(&self) -> Option<String> {
        if !self.agent.asking.open() {
            return None;
        }
        self.agent.turn.as_ref().and_then(|t| t.current()).map(|p| p.id.clone())
    }

    /// Answers the question on screen from outside the keyboard (batch
    /// mode's approvals).
    pub(in crate::session) fn answer_question(&mut self, answer: Answer) {
        if self.agent.asking.open() {
            self.answer(answer);
        }
    }

    /// The person's answer to the question ([`Question`]).
    pub(super) fn reply(&mut self, reply: Reply) {
        let current = self.agent.turn.as_ref().and_then(|t| t.current()).map(|p| p.command.clone());
        let (answer, grant) = self.agent.asking.reply(reply, current.as_deref());
        if let Some(grant) = grant {
            self.agent.gate.grant(grant);
        }
        self.answer(answer);
    }

    /// Opens the proposal in `$VISUAL` / `$EDITOR` (like `git commit`).
    pub(super) fn edit_current(&mut self) {
        let Some(command) = self.agent.turn.as_ref().and_then(|t| t.current()).map(|p| p.command.clone()) else {
            return;
        };
        let out = self.agent.render.hand_over();
        self.show(&out);
        match crate::editor::spawn(&command) {
            Ok(rx) => self.agent.editing = Some(rx),
            Err(e) => self.emit(AgentEvent::Error { message: e, kind: "editor".into() }),
        }
    }

    pub(in crate::session) fn on_edited(&mut self, edited: Option<Result<String, String>>) {
        let _ = crossterm::terminal::enable_raw_mode();
        match edited {
            Some(Ok(command)) if !command.trim().is_empty() => self.answer(Answer::Edit(command.trim().to_string())),
            Some(Ok(_)) | None => self.answer(Answer::Skip),
            Some(Err(e)) => {
                self.emit(AgentEvent::Error { message: e, kind: "editor".into() });
                self.agent.asking.reset();
                let again = self.agent.render.question(self.agent.asking.verdict().strong);
                self.show(&again);
            }
        }
    }

    /// Esc at a question: the shell comes back with the turn waiting. A
    /// lone `#` resumes it; `# text` steers it.
    pub(super) fn pause(&mut self) {
        self.agent.asking.pause();
        let out = self.agent.render.hand_over();
        self.show(&out);
        self.notice("paused: the shell is yours; # alone resumes, # with text steers");
        self.exec.pause(&mut self.proxy);
    }

    pub(super) fn resume(&mut self, text: &str) {
        self.agent.asking.resume();
        self.exec.resume();
        self.agent.render.set_line_start(true);
        if !text.trim().is_empty() {
            self.answer(Answer::Steer(text.trim().to_string()));
            return;
        }
        let Some(p) = self.agent.turn.as_ref().and_then(|t| t.current()).cloned() else { return };
        let v = self.agent.asking.verdict();
        self.ask(&p, &v);
    }
}
