//! Whether a gated command runs, is asked about, or is refused, given the
//! confirm mode and what the person already approved.
//!
//! The gate's verdict says what the policy wants; the confirm mode
//! (`shell.confirm_mode`) and the plan shown for the current answer can
//! only turn it into more questions, with one exception: in `plan` mode one
//! `y` approves the rest of an answer's commands that would ask. That
//! exception never reaches a command whose approval must be typed out
//! (Privileged and above) or one the judge warned about: each of those
//! gets its own question, in every mode. The whole rule is [`step`], a pure
//! function, so every combination is tested below.

use super::ConfirmMode;
use super::turn::{Outcome, Verdict};

/// What the session does with a gated proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Type it into the shell. `by_plan`: a `y` to the plan covered it.
    Run { by_plan: bool },
    /// Ask the person.
    Ask {
        /// Approval must be typed out as `yes`.
        typed: bool,
        /// A `y` here also approves the answer's later commands that would
        /// ask (plan mode, an ordinary question).
        approves_plan: bool,
    },
    /// Refuse it.
    Deny,
}

/// What the session knows besides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Situation {
    pub mode: ConfirmMode,
    /// A `y` earlier in this answer approved the plan.
    pub plan_approved: bool,
    /// A session grant (`a`, `A`) allowed the command.
    pub granted: bool,
    /// A person can answer questions.
    pub can_ask: bool,
}

/// True when the verdict needs a question of its own whatever was approved
/// before: a privileged command, or one the judge warned about.
fn needs_own_question(v: &Verdict) -> bool {
    v.strong || v.note.is_some()
}

/// The rule. See the module docs.
pub fn step(v: &Verdict, s: Situation) -> Step {
    let ask = |approves_plan: bool| Step::Ask { typed: v.strong, approves_plan };
    match v.outcome {
        Outcome::Deny => Step::Deny,
        Outcome::Allow if s.mode == ConfirmMode::Each && !s.granted && s.can_ask => ask(false),
        Outcome::Allow => Step::Run { by_plan: false },
        Outcome::Ask if !s.can_ask => Step::Deny,
        Outcome::Ask => {
            let plan = s.mode == ConfirmMode::Plan && !needs_own_question(v);
            if plan && s.plan_approved { Step::Run { by_plan: true } } else { ask(plan) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(outcome: Outcome, strong: bool, warned: bool) -> Verdict {
        Verdict {
            outcome,
            risk: if strong { "privileged" } else { "write" }.into(),
            reason: "test".into(),
            note: warned.then(|| "the judge calls this unsafe: deletes the build cache".into()),
            strong,
            rewritten: None,
            defines: Vec::new(),
        }
    }

    fn situation(mode: ConfirmMode, plan_approved: bool, granted: bool, can_ask: bool) -> Situation {
        Situation { mode, plan_approved, granted, can_ask }
    }

    const MODES: [ConfirmMode; 3] = [ConfirmMode::Auto, ConfirmMode::Each, ConfirmMode::Plan];
    const BOOLS: [bool; 2] = [false, true];

    /// The rule written out case by case, independently of [`step`]'s
    /// structure, and compared over every combination of inputs.
    fn expected(outcome: Outcome, strong: bool, warned: bool, s: Situation) -> Step {
        match outcome {
            Outcome::Deny => Step::Deny,
            Outcome::Allow => {
                if s.mode == ConfirmMode::Each && !s.granted && s.can_ask {
                    Step::Ask { typed: strong, approves_plan: false }
                } else {
                    Step::Run { by_plan: false }
                }
            }
            Outcome::Ask => {
                if !s.can_ask {
                    Step::Deny
                } else if s.mode != ConfirmMode::Plan || strong || warned {
                    Step::Ask { typed: strong, approves_plan: false }
                } else if s.plan_approved {
                    Step::Run { by_plan: true }
                } else {
                    Step::Ask { typed: false, approves_plan: true }
                }
            }
        }
    }

    #[test]
    fn every_combination_follows_the_rule() {
        let mut n = 0;
        for outcome in [Outcome::Allow, Outcome::Ask, Outcome::Deny] {
            for bits in 0..32u8 {
                let bit = |i: u8| bits >> i & 1 == 1;
                let (strong, warned, plan_approved, granted, can_ask) = (bit(0), bit(1), bit(2), bit(3), bit(4));
                for mode in MODES {
                    let s = situation(mode, plan_approved, granted, can_ask);
                    let v = verdict(outcome, strong, warned);
                    assert_eq!(step(&v, s), expected(outcome, strong, warned, s), "{outcome:?} {v:?} {s:?}");
                    n += 1;
                }
            }
        }
        assert_eq!(n, 3 * 32 * 3);
    }

    #[test]
    fn a_privileged_command_is_never_approved_by_the_plan() {
        let v = verdict(Outcome::Ask, true, false);
        for plan_approved in BOOLS {
            let s = situation(ConfirmMode::Plan, plan_approved, false, true);
            assert_eq!(step(&v, s), Step::Ask { typed: true, approves_plan: false });
        }
    }

    #[test]
    fn a_judge_warning_always_gets_its_own_question() {
        let v = verdict(Outcome::Ask, false, true);
        for mode in MODES {
            for plan_approved in BOOLS {
                let s = situation(mode, plan_approved, false, true);
                assert_eq!(step(&v, s), Step::Ask { typed: false, approves_plan: false }, "{mode:?}");
            }
        }
    }

    #[test]
    fn one_y_approves_the_rest_of_a_plan_that_would_ask() {
        let v = verdict(Outcome::Ask, false, false);
        assert_eq!(
            step(&v, situation(ConfirmMode::Plan, false, false, true)),
            Step::Ask { typed: false, approves_plan: true }
        );
        assert_eq!(step(&v, situation(ConfirmMode::Plan, true, false, true)), Step::Run { by_plan: true });
        // Outside plan mode an earlier `y` covers nothing.
        assert_eq!(
            step(&v, situation(ConfirmMode::Auto, true, false, true)),
            Step::Ask { typed: false, approves_plan: false }
        );
    }

    #[test]
    fn each_mode_asks_about_allowed_commands_unless_granted_or_nobody_can_answer() {
        let v = verdict(Outcome::Allow, false, false);
        assert_eq!(
            step(&v, situation(ConfirmMode::Each, false, false, true)),
            Step::Ask { typed: false, approves_plan: false }
        );
        assert_eq!(step(&v, situation(ConfirmMode::Each, false, true, true)), Step::Run { by_plan: false });
        assert_eq!(step(&v, situation(ConfirmMode::Each, false, false, false)), Step::Run { by_plan: false });
    }

    #[test]
    fn a_question_with_nobody_to_answer_is_a_denial() {
        for mode in MODES {
            let s = situation(mode, true, false, false);
            assert_eq!(step(&verdict(Outcome::Ask, false, false), s), Step::Deny);
        }
    }
}
