//! The task board in the running session: the part that owns the
//! board's watcher and what the session shows of the board.
//!
//! The watcher (`ua_store::board::watch::Watcher`) runs on a thread of its
//! own, woken by the kernel's file notifications, and sends each burst of
//! state changes over a channel that one branch of the event loop reads:
//! while the board does not change, nothing wakes. Each change becomes a
//! `task` event for every front end. A terminal draws two things more:
//! the board's counts beside the footer closing a turn (only when they
//! changed since it last drew them: the terminal is the person's), and a
//! task entering `blocked` as an alert at once, also while no turn runs,
//! above the prompt the person is typing at (see `above_prompt`).

use tokio::sync::mpsc;
use ua_protocol::agent::AgentEvent;
use ua_store::board::watch::{TaskChange, Watcher};
use ua_store::board::{Board, State};

use super::above_prompt::PromptLine;
use crate::board::render;

/// The session's task board. See the module docs.
#[derive(Debug)]
pub(in crate::session) struct TaskBoard {
    board: Board,
    /// Kept for its thread: dropping it stops the watching.
    _watcher: Watcher,
    changes: mpsc::UnboundedReceiver<Vec<TaskChange>>,
    /// The counts a terminal drew last, so that it draws them again only
    /// when they changed.
    footer_drawn: Option<String>,
    /// What the first instruction after a resume carries: the tasks in
    /// `doing` and `blocked`.
    resumed: Option<String>,
    /// Alerts a terminal has not drawn yet (no prompt to draw them above).
    alerts: Vec<String>,
    /// What the shell drew since its prompt started.
    prompt: PromptLine,
}

impl TaskBoard {
    /// Watches `board`; what is on it already is no change. `resumed`:
    /// the session continues an earlier one, whose active tasks its first
    /// instruction carries.
    pub(in crate::session) fn start(board: Board, resumed: bool) -> Result<Self, String> {
        let (tx, changes) = mpsc::unbounded_channel();
        let watcher = Watcher::start(board.clone(), move |found| {
            let _ = tx.send(found);
        })
        .map_err(|e| e.to_string())?;
        let resumed =
            if resumed { crate::board::judged(&board).ok().and_then(|s| render::active_tasks(&s)) } else { None };
        Ok(Self {
            board,
            _watcher: watcher,
            changes,
            footer_drawn: None,
            resumed,
            alerts: Vec::new(),
            prompt: PromptLine::default(),
        })
    }

    /// The next burst of changes (the loop's branch).
    /// `None` once the watcher's thread has stopped.
    pub(in crate::session) async fn changed(&mut self) -> Option<Vec<TaskChange>> {
        self.changes.recv().await
    }

    /// What an instruction's context says of the board: that there is one,
    /// and after a resume (the first time only) its active tasks.
    pub(in crate::session) fn for_turn(&mut self) -> Option<String> {
        self.resumed.take()
    }

    /// The changes as `task` events. `hold_alerts`: a terminal with no
    /// turn to draw them keeps the alerts of tasks that entered `blocked`
    /// (see [`TaskBoard::take_alerts`]).
    pub(in crate::session) fn events(&mut self, found: &[TaskChange], hold_alerts: bool) -> Vec<AgentEvent> {
        if hold_alerts {
            for c in found.iter().filter(|c| c.state == State::Blocked) {
                self.alerts.push(render::blocked_alert(c.id, &c.title, c.assignee.as_deref(), c.reason.as_deref()));
            }
        }
        found.iter().map(render::event).collect()
    }

    /// The alerts not drawn yet.
    pub(in crate::session) fn take_alerts(&mut self) -> Vec<String> {
        std::mem::take(&mut self.alerts)
    }

    /// Alerts wait to be drawn.
    pub(in crate::session) fn alerting(&self) -> bool {
        !self.alerts.is_empty()
    }

    /// The footer line, read from the board now, when it differs from the
    /// last one drawn.
    pub(in crate::session) fn footer(&mut self) -> Option<String> {
        let line = render::footer(&crate::board::judged(&self.board).ok()?)?;
        if self.footer_drawn.as_deref() == Some(line.as_str()) {
            return None;
        }
        self.footer_drawn = Some(line.clone());
        Some(line)
    }

    /// What the person is told of the board when the session continues:
    /// its counts, and the tasks in `doing` and `blocked`.
    pub(in crate::session) fn resume_lines(&mut self) -> Vec<String> {
        let Ok(snap) = crate::board::judged(&self.board) else { return Vec::new() };
        let mut lines: Vec<String> = render::footer(&snap).into_iter().collect();
        self.footer_drawn = lines.first().cloned();
        for t in snap.tasks.iter().filter(|t| matches!(t.state, State::Doing | State::Blocked)) {
            let mut line = format!("  task {} [{}] {}", t.id, t.state, render::printable(&t.title));
            if snap.gone.contains(&t.id) {
                line.push_str(&format!(" (assignee gone: `unixagent board claim {}` takes it over)", t.id));
            }
            if let Some(r) = t.blocked_by.as_deref().filter(|_| t.state == State::Blocked) {
                line.push_str(&format!(" — {}", render::printable(r)));
            }
            lines.push(line);
        }
        lines
    }

    /// The shell's prompt as it is drawn (see [`PromptLine`]).
    pub(in crate::session) fn prompt(&mut self) -> &mut PromptLine {
        &mut self.prompt
    }
}
