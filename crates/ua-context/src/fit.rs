//! Fitting a model call into its token budget (design §8, §19.2.7).
//!
//! Cheapest losses go first:
//!
//! 1. the oldest terminal lines of the snapshot, down to none;
//! 2. the oldest whole turns of the conversation;
//! 3. the oldest exchanges of the current turn (an assistant message
//!    with the tool results that answer it), always keeping the current
//!    instruction and the latest exchange;
//! 4. the output of the oldest commands the user ran (the commands
//!    themselves and their exit status stay).
//!
//! A `tool_use` is never separated from its `tool_result`: both belong to
//! the same exchange, and exchanges and turns are dropped whole.
//!
//! A turn starts at a user message that carries no tool result (an
//! instruction, a steering line); a user message with tool results
//! continues the turn it answers.
//!
//! `history` should be the whole conversation as the journal folds it
//! (`ua_store::rebuild::rebuild_conversation`), so that
//! [`Fitted::omitted`] holds the journal's indices.
//!
//! The budget is for the system prompt and the messages only: pass the
//! context window minus the output reservation and the tool definitions.
//! The estimate need not be exact, but it must not shrink when text grows.

use std::fmt;

use ua_protocol::conversation::{Block, Message, Role};

use crate::prompt::{ContextSnapshot, Cuts};

/// A model call that fits.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub system: String,
    /// The messages to send: `history` without the `omitted` ranges.
    pub messages: Vec<Message>,
    /// Half-open ranges of `history` indices left out, ascending; the
    /// journal's `model_request.omitted` takes them as they are.
    pub omitted: Vec<[usize; 2]>,
    pub dropped: Dropped,
    /// The estimated size of `system` plus `messages`.
    pub estimated_tokens: u64,
}

/// What fitting left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    pub terminal_lines: usize,
    /// Whole earlier turns.
    pub turns: usize,
    /// Exchanges of the current turn.
    pub exchanges: usize,
    /// User commands whose output was left out.
    pub command_outputs: usize,
}

impl Dropped {
    pub fn is_empty(&self) -> bool {
        *self == Dropped::default()
    }
}

/// Even the smallest prompt is over budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitError {
    /// The estimated size of the smallest prompt fitting could make.
    pub needed: u64,
    pub budget: u64,
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the instruction and its latest step need about {} tokens but the model allows {}; \
             shorten the instruction or use a model with a larger context window",
            self.needed, self.budget
        )
    }
}

impl std::error::Error for FitError {}

/// The budget to retry with after the provider said the context was too
/// long: our estimate was off by an unknown factor, so halve it.
pub fn retry_budget(budget: u64) -> u64 {
    budget / 2
}

/// Fits `snapshot` and `history` into `budget` tokens as estimated by
/// `estimate`; see the module docs for what goes first.
pub fn fit(
    snapshot: &ContextSnapshot,
    history: &[Message],
    budget: u64,
    estimate: impl Fn(&Message) -> u64,
) -> Result<Fitted, FitError> {
    let text_cost = |text: String| (estimate(&Message::user_text(text.as_str())), text);
    let costs: Vec<u64> = history.iter().map(&estimate).collect();
    let units = Units::of(history);
    let mut kept = vec![true; history.len()];
    let mut msgs: u64 = costs.iter().sum();
    let mut cuts = Cuts::default();
    let mut dropped = Dropped::default();

    // 1. Terminal lines: the fewest dropped that fit, found by bisection
    // (the rendered size only shrinks as lines go).
    let (mut sys_cost, mut system) = text_cost(snapshot.render(cuts));
    if sys_cost + msgs > budget {
        let n = snapshot.recent_output_lines.len();
        let render = |lines| text_cost(snapshot.render(Cuts { lines, outputs: 0 }));
        let (lo_cost, lo_text) = render(n);
        if lo_cost + msgs > budget {
            (sys_cost, system, cuts.lines) = (lo_cost, lo_text, n);
        } else {
            let (mut lo, mut hi) = (0, n); // hi fits, lo does not
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if render(mid).0 + msgs <= budget { hi = mid } else { lo = mid }
            }
            cuts.lines = hi;
            (sys_cost, system) = render(hi);
        }
        dropped.terminal_lines = cuts.lines;
    }

    // 2 and 3. Whole earlier turns, then earlier exchanges of this turn.
    for unit in units.droppable() {
        if sys_cost + msgs <= budget {
            break;
        }
        kept[unit.range.clone()].iter_mut().for_each(|k| *k = false);
        msgs -= costs[unit.range.clone()].iter().sum::<u64>();
        match unit.kind {
            UnitKind::Turn => dropped.turns += 1,
            UnitKind::Exchange => dropped.exchanges += 1,
        }
    }

    // 4. Output of the user's own commands, oldest first.
    while sys_cost + msgs > budget && cuts.outputs < snapshot.user_commands.len() {
        cuts.outputs += 1;
        (sys_cost, system) = text_cost(snapshot.render(cuts));
        dropped.command_outputs = cuts.outputs;
    }

    let total = sys_cost + msgs;
    if total > budget {
        return Err(FitError { needed: total, budget });
    }
    Ok(Fitted {
        system,
        messages: history.iter().zip(&kept).filter(|(_, k)| **k).map(|(m, _)| m.clone()).collect(),
        omitted: ranges(&kept),
        dropped,
        estimated_tokens: total,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    Turn,
    Exchange,
}

#[derive(Debug, Clone)]
struct Unit {
    kind: UnitKind,
    range: std::ops::Range<usize>,
}

/// The history cut into droppable pieces, oldest first.
struct Units {
    turns: Vec<std::ops::Range<usize>>,
}

impl Units {
    fn of(history: &[Message]) -> Self {
        let mut starts: Vec<usize> = history
            .iter()
            .enumerate()
            .filter(|(i, m)| *i == 0 || (m.role == Role::User && !has_tool_result(m)))
            .map(|(i, _)| i)
            .collect();
        starts.push(history.len());
        Units { turns: starts.windows(2).map(|w| w[0]..w[1]).collect() }
    }

    /// Earlier turns whole, then the exchanges of the last turn between its
    /// opening message(s) and its latest exchange.
    fn droppable(&self) -> Vec<Unit> {
        let Some((current, earlier)) = self.turns.split_last() else {
            return Vec::new();
        };
        let mut out: Vec<Unit> = earlier.iter().map(|r| Unit { kind: UnitKind::Turn, range: r.clone() }).collect();
        out.extend(Self::exchanges(current).into_iter().map(|range| Unit { kind: UnitKind::Exchange, range }));
        out
    }

    /// The exchanges of a turn that may go: the turn's opening message is
    /// kept, and so is its last exchange.
    fn exchanges(turn: &std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
        // Within a turn, after the opening message, messages alternate
        // assistant, user-with-results; an exchange is such a pair (or a
        // lone trailing assistant message).
        let mut out = Vec::new();
        let mut i = turn.start + 1;
        while i < turn.end {
            let end = (i + 2).min(turn.end);
            out.push(i..end);
            i = end;
        }
        out.pop();
        out
    }
}

fn has_tool_result(m: &Message) -> bool {
    m.content.iter().any(|b| matches!(b, Block::ToolResult(_)))
}

/// Runs of `false` in `kept` as half-open ranges.
fn ranges(kept: &[bool]) -> Vec<[usize; 2]> {
    let mut out: Vec<[usize; 2]> = Vec::new();
    for (i, k) in kept.iter().enumerate() {
        if *k {
            continue;
        }
        match out.last_mut() {
            Some(r) if r[1] == i => r[1] = i + 1,
            _ => out.push([i, i + 1]),
        }
    }
    out
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
