//! The person's side of a turn, as a pure state machine: the question on
//! screen, the proposal it is about, a pause, and the plan the current
//! answer proposed.
//!
//! A terminal feeds it keys (through [`Question`]); batch mode answers it
//! with [`Answer`]s read from NDJSON. Either way what comes out is the
//! [`Answer`] the turn takes, and the grant a reply adds. It does no I/O:
//! the turn driver shows and records what it decides.

use ua_policy::grants::Grant;
use ua_term::keys::Key;

use super::ConfirmMode;
use super::gate::grant_program;
use super::question::{Question, Reply, Step};
use super::turn::{Answer, Outcome, Proposal, Turn, Verdict};

/// The question part of a turn.
#[derive(Debug, Default)]
pub struct Asking {
    /// The question on screen, while the turn waits for the person.
    question: Option<Question>,
    /// The proposal (id, command) whose line is on screen.
    shown: Option<(String, String)>,
    /// The verdict of the proposal being asked about, to ask again.
    asked: Option<Verdict>,
    /// Esc at a question gave the shell back; the turn waits.
    paused: bool,
    /// The answer (call number, commands) whose plan is on screen.
    plan_shown: Option<(usize, usize)>,
    /// `y` at the first question of a plan approved the rest of it.
    plan_approved: bool,
    /// The question about the current proposal is the plan's: its `y`
    /// approves the plan ([`super::confirm::Step::Ask`]).
    approves_plan: bool,
}

impl Asking {
    /// Asks about `p`: its line and the question are going on screen.
    pub fn ask(&mut self, p: &Proposal, v: &Verdict) {
        self.shown = Some((p.id.clone(), p.command.clone()));
        self.asked = Some(v.clone());
        self.question = Some(Question::new(v.strong));
    }

    /// A question waits for an answer.
    pub fn open(&self) -> bool {
        self.question.is_some()
    }

    /// The question is answered or abandoned.
    pub fn close(&mut self) {
        self.question = None;
    }

    /// One key at the question; `None` when no question is open.
    pub fn key(&mut self, key: Key) -> Option<Vec<Step>> {
        self.question.as_mut().map(|q| q.key(key))
    }

    /// Back to the question as first asked (after the editor).
    pub fn reset(&mut self) {
        if let Some(q) = self.question.as_mut() {
            q.reset();
        }
    }

    /// The person's reply to the question, as the answer the turn takes
    /// and the grant it adds for the rest of the session. `command` is the
    /// proposal asked about.
    pub fn reply(&mut self, reply: Reply, command: Option<&str>) -> (Answer, Option<Grant>) {
        match reply {
            Reply::Run => {
                self.plan_approved |= self.approves_plan;
                (Answer::Run, None)
            }
            Reply::RunAndAllowCommand => (Answer::Run, command.map(Grant::exact)),
            Reply::RunAndAllowProgram => {
                (Answer::Run, command.map(|c| grant_program(c).unwrap_or_else(|| Grant::exact(c))))
            }
            Reply::Skip => (Answer::Skip, None),
            Reply::Quit => (Answer::Quit, None),
            Reply::Steer(text) => (Answer::Steer(text), None),
        }
    }

    /// The verdict asked about (to ask again), or a plain question.
    pub fn verdict(&self) -> Verdict {
        self.asked.clone().unwrap_or(Verdict {
            outcome: Outcome::Ask,
            risk: String::new(),
            reason: String::new(),
            note: None,
            strong: false,
            rewritten: None,
            defines: Vec::new(),
        })
    }

    /// The risk of the proposal asked about, for the journal.
    pub fn risk(&self) -> String {
        self.asked.as_ref().map(|v| v.risk.clone()).unwrap_or_default()
    }

    /// `p` is about to run: the question is over. True when its line is
    /// already on screen (it was asked about), so it is not drawn again.
    pub fn running(&mut self, p: &Proposal) -> bool {
        self.question = None;
        self.shown.take() == Some((p.id.clone(), p.command.clone()))
    }

    /// Esc at the question: the shell is the person's until they resume.
    pub fn pause(&mut self) {
        self.reset();
        self.paused = true;
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The turn goes on after a pause; the question is asked again unless
    /// the person steers.
    pub fn resume(&mut self) {
        self.paused = false;
        self.question = None;
    }

    /// In plan mode, the plan of a new answer to show before its first
    /// command is gated: its text, once per answer, when it has several
    /// commands.
    pub fn plan(&mut self, turn: &Turn, mode: ConfirmMode) -> Option<String> {
        let plan = turn.plan();
        let key = (turn.calls(), plan.len());
        if mode != ConfirmMode::Plan || self.plan_shown == Some(key) {
            return None;
        }
        self.plan_shown = Some(key);
        self.plan_approved = false;
        if plan.len() < 2 {
            return None;
        }
        let mut text = String::from("plan:");
        for (i, c) in plan.iter().enumerate() {
            text.push_str(&format!("\r\n  {}. {}", i + 1, c.replace('\n', " ")));
        }
        Some(text)
    }

    /// A `y` earlier in this answer approved its plan.
    pub fn plan_approved(&self) -> bool {
        self.plan_approved
    }

    /// Whether a `y` to the coming question approves the plan.
    pub fn set_approves_plan(&mut self, approves: bool) {
        self.approves_plan = approves;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(strong: bool) -> Verdict {
        Verdict {
            outcome: Outcome::Ask,
            risk: if strong { "privileged" } else { "write" }.into(),
            reason: "test".into(),
            note: None,
            strong,
            rewritten: None,
            defines: Vec::new(),
        }
    }

    fn proposal(id: &str, command: &str) -> Proposal {
        Proposal { id: id.into(), command: command.into(), mode: ua_protocol::tool::OutputMode::Full }
    }

    #[test]
    fn a_y_to_the_plans_question_approves_the_plan_and_other_replies_do_not() {
        let mut a = Asking::default();
        a.set_approves_plan(true);
        a.ask(&proposal("t1", "touch a"), &verdict(false));
        assert_eq!(a.reply(Reply::Skip, Some("touch a")), (Answer::Skip, None));
        assert!(!a.plan_approved());
        assert_eq!(a.reply(Reply::Run, Some("touch a")), (Answer::Run, None));
        assert!(a.plan_approved());
        // An ordinary question's `y` approves nothing more.
        let mut a = Asking::default();
        a.reply(Reply::Run, Some("touch a"));
        assert!(!a.plan_approved());
    }

    #[test]
    fn always_replies_grant_the_command_or_its_program() {
        let mut a = Asking::default();
        let (answer, grant) = a.reply(Reply::RunAndAllowCommand, Some("touch a"));
        assert_eq!((answer, grant), (Answer::Run, Some(Grant::exact("touch a"))));
        let (_, grant) = a.reply(Reply::RunAndAllowProgram, Some("make test"));
        assert_eq!(grant, Some(Grant::program("make".to_string())));
        // Not one simple program: the exact command.
        let (_, grant) = a.reply(Reply::RunAndAllowProgram, Some("make test | tee log"));
        assert_eq!(grant, Some(Grant::exact("make test | tee log")));
    }

    #[test]
    fn a_proposal_asked_about_is_not_drawn_again_when_it_runs() {
        let mut a = Asking::default();
        let p = proposal("t1", "touch a");
        a.ask(&p, &verdict(false));
        assert!(a.open());
        assert!(a.running(&p));
        assert!(!a.open());
        // Once: the next run of the same id was not asked about.
        assert!(!a.running(&p));
        // An edit runs another command than the one shown.
        a.ask(&p, &verdict(false));
        assert!(!a.running(&proposal("t1", "touch b")));
    }

    #[test]
    fn a_pause_keeps_the_question_and_its_kind() {
        let mut a = Asking::default();
        a.ask(&proposal("t1", "sudo ls"), &verdict(true));
        a.key(Key::Char('y'));
        a.pause();
        assert!(a.paused());
        assert_eq!(a.verdict(), verdict(true));
        a.resume();
        assert!(!a.paused() && !a.open());
        a.ask(&proposal("t1", "sudo ls"), &a.verdict());
        // Still a question that wants `yes` typed out.
        let steps: Vec<Step> = "y\r"
            .chars()
            .flat_map(|c| a.key(if c == '\r' { Key::Enter } else { Key::Char(c) }).unwrap_or_default())
            .collect();
        assert!(steps.contains(&Step::Answer(Reply::Skip)), "{steps:?}");
    }
}
