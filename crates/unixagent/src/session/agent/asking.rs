//! The person in the loop: asking about a proposal, reading the keys that
//! answer it (the [`Question`] state
//! machine decides what each key means), editing, pausing and steering.

use super::*;

impl Session {
    pub(super) fn ask(&mut self, p: &Proposal, v: &Verdict) -> Vec<Effect> {
        let rule = self.decided_by();
        self.emit(events::command(p, v, GateDecision::Ask, rule));
        self.emit(events::approval(p, v));
        self.agent.shown = Some((p.id.clone(), p.command.clone()));
        self.agent.asked = Some(v.clone());
        if self.batch.is_some() {
            self.agent.asking = Some(Question::new(v.strong));
            self.batch_asked();
            return Vec::new();
        }
        self.agent.asking = Some(Question::new(v.strong));
        Vec::new()
    }

    pub(super) fn answer(&mut self, answer: Answer) {
        self.agent.asking = None;
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
            let risk = self.agent.asked.as_ref().map(|v| v.risk.clone()).unwrap_or_default();
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
        if self.agent.running.is_some() {
            // The command has the terminal: every byte goes to the shell,
            // so Ctrl+C interrupts it as it would without unixagent.
            if bytes.contains(&0x03) && self.double_interrupt() {
                self.send(b"\x03");
                self.cancel_turn();
                return;
            }
            self.send(bytes);
            return;
        }
        if self.agent.asking.is_none() && self.agent.editing.is_none() {
            if bytes.contains(&0x03) {
                self.agent.typeahead.clear();
                self.cancel_turn();
            } else {
                self.agent.typeahead.extend_from_slice(bytes);
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
        let Some(question) = self.agent.asking.as_mut() else {
            // Streaming or waiting: only Ctrl+C means something.
            if key == Key::Ctrl('c') {
                self.cancel_turn();
            }
            return;
        };
        for step in question.key(key) {
            match step {
                Step::Echo(text) => self.show(text),
                Step::EchoChar(c) => self.show(&c.to_string()),
                Step::Edit => {
                    self.edit_current();
                    if self.agent.editing.is_none()
                        && let Some(q) = self.agent.asking.as_mut()
                    {
                        q.reset();
                    }
                }
                Step::Pause => self.pause(),
                Step::Answer(reply) => self.reply(reply),
            }
        }
    }

    /// The id of the proposal a question is waiting on, if any.
    pub(in crate::session) fn asking_id(&self) -> Option<String> {
        self.agent.asking.as_ref()?;
        self.agent.turn.as_ref().and_then(|t| t.current()).map(|p| p.id.clone())
    }

    /// Answers the question on screen from outside the keyboard (batch
    /// mode's approvals).
    pub(in crate::session) fn answer_question(&mut self, answer: Answer) {
        if self.agent.asking.is_some() {
            self.answer(answer);
        }
    }

    /// The person's answer to the question ([`Question`]).
    pub(super) fn reply(&mut self, reply: Reply) {
        let current = self.agent.turn.as_ref().and_then(|t| t.current()).map(|p| p.command.clone());
        match reply {
            Reply::Run => {
                self.agent.plan_approved |= self.agent.question_approves_plan;
                self.answer(Answer::Run)
            }
            Reply::RunAndAllowCommand => {
                if let Some(command) = current {
                    self.agent.grants.add(Grant::exact(&command));
                }
                self.answer(Answer::Run)
            }
            Reply::RunAndAllowProgram => {
                if let Some(command) = current {
                    let grant = gate::grant_program(&command).unwrap_or_else(|| Grant::exact(&command));
                    self.agent.grants.add(grant);
                }
                self.answer(Answer::Run)
            }
            Reply::Skip => self.answer(Answer::Skip),
            Reply::Quit => self.answer(Answer::Quit),
            Reply::Steer(text) => self.answer(Answer::Steer(text)),
        }
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
        let _ = crate::terminal::raw_on();
        match edited {
            Some(Ok(command)) if !command.trim().is_empty() => self.answer(Answer::Edit(command.trim().to_string())),
            Some(Ok(_)) | None => self.answer(Answer::Skip),
            Some(Err(e)) => {
                self.emit(AgentEvent::Error { message: e, kind: "editor".into() });
                if let Some(q) = self.agent.asking.as_mut() {
                    q.reset();
                }
                let again = self.agent.render.question(self.current_verdict().strong);
                self.show(&again);
            }
        }
    }

    pub(super) fn current_verdict(&self) -> Verdict {
        self.agent.asked.clone().unwrap_or(Verdict {
            outcome: Outcome::Ask,
            risk: String::new(),
            reason: String::new(),
            note: None,
            strong: false,
            rewritten: None,
            defines: Vec::new(),
        })
    }

    /// Esc at a question: the shell comes back with the turn waiting. A
    /// lone `#` resumes it; `# text` steers it.
    pub(super) fn pause(&mut self) {
        if let Some(q) = self.agent.asking.as_mut() {
            q.reset();
        }
        self.agent.paused = true;
        let out = self.agent.render.hand_over();
        self.show(&out);
        self.notice("paused: the shell is yours; # alone resumes, # with text steers");
        self.agent.view = View::UntilPrompt;
        self.agent.shell_ready = false;
        self.state.line_ended();
        self.send(b"\r");
    }

    pub(super) fn resume(&mut self, text: &str) {
        self.agent.paused = false;
        self.agent.view = View::Hidden;
        self.agent.render.set_line_start(true);
        if !text.trim().is_empty() {
            self.answer(Answer::Steer(text.trim().to_string()));
            return;
        }
        let Some(p) = self.agent.turn.as_ref().and_then(|t| t.current()).cloned() else { return };
        let v = self.current_verdict();
        self.agent.asking = None;
        self.ask(&p, &v);
    }
}
