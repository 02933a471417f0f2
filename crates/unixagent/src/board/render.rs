//! The board as people and the model read it. Pure: a snapshot in, text
//! or JSON out.

use std::fmt::Write as _;

use ua_protocol::agent::AgentEvent;
use ua_store::board::watch::TaskChange;
use ua_store::board::{Snapshot, State, Task};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The footer line: `board 3 todo · 1 doing · 1 blocked · 4 done`, the
/// states that hold tasks in board order, then tasks whose assignee is
/// gone. `None` for an empty board: no footer.
pub fn footer(snap: &Snapshot) -> Option<String> {
    let counts = snap.counts();
    let mut parts: Vec<String> =
        State::ALL.iter().zip(counts).filter(|(_, n)| *n > 0).map(|(s, n)| format!("{n} {s}")).collect();
    if !snap.gone.is_empty() {
        parts.push(format!("{} assignee gone", snap.gone.len()));
    }
    if !snap.broken.is_empty() {
        parts.push(format!("{} unreadable", snap.broken.len()));
    }
    (!parts.is_empty()).then(|| format!("board {}", parts.join(" · ")))
}

/// What the first request after a resume carries about the board: the
/// tasks in `doing` and `blocked`, as the design's context reload says.
/// `None` when there are none.
pub fn active_tasks(snap: &Snapshot) -> Option<String> {
    let active: Vec<&Task> = snap.tasks.iter().filter(|t| matches!(t.state, State::Doing | State::Blocked)).collect();
    if active.is_empty() {
        return None;
    }
    let mut out = String::from("Active tasks on the task board (`unixagent board show ID` prints one):\n");
    for t in active {
        let _ = write!(out, "- task {} [{}] {}", t.id, t.state, t.title);
        if let Some(a) = &t.assignee {
            let _ = write!(out, "; assignee {a}");
            if snap.gone.contains(&t.id) {
                let _ = write!(out, " (gone: `unixagent board claim {}` takes it over)", t.id);
            }
        }
        if let Some(r) = t.blocked_by.as_deref().filter(|_| t.state == State::Blocked) {
            let _ = write!(out, "; blocked by: {r}");
        }
        out.push('\n');
    }
    Some(out)
}

/// The line the person sees at once when a task enters `blocked`: the
/// terminal draws the NDJSON `task` event with it. Whoever can write the
/// board (any agent command) writes its text, so control characters are
/// shown as `?`: an escape sequence in a title must not reach the
/// terminal.
pub fn blocked_alert(id: u32, title: &str, assignee: Option<&str>, reason: Option<&str>) -> String {
    let who = assignee.map(|a| format!(" ({})", printable(a))).unwrap_or_default();
    let reason = reason.map_or_else(|| "no reason given".to_string(), printable);
    format!("task {id} blocked{who}: {} — {reason}", printable(title))
}

/// `s` with every control character shown as `?`.
pub fn printable(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// A state change as the NDJSON `task` event.
pub fn event(c: &TaskChange) -> AgentEvent {
    AgentEvent::Task {
        id: c.id,
        title: c.title.clone(),
        state: c.state.name().to_string(),
        from: c.from.map(|s| s.name().to_string()),
        assignee: c.assignee.clone(),
        reason: c.reason.clone(),
    }
}

/// One task as JSON, with what the board says about it.
pub fn task_json(t: &Task, snap: Option<&Snapshot>) -> serde_json::Value {
    let mut v = serde_json::to_value(t).unwrap_or_default();
    if let (Some(map), Some(snap)) = (v.as_object_mut(), snap) {
        map.insert("assignee_gone".into(), snap.gone.contains(&t.id).into());
        let waits = (t.state == State::Todo).then(|| snap.unmet(t)).flatten();
        map.insert("ready".into(), (t.state == State::Todo && waits.is_none()).into());
        if let Some(w) = waits {
            map.insert("waits".into(), w.into());
        }
    }
    v
}

/// The whole board as JSON.
pub fn board_json(root: &std::path::Path, snap: &Snapshot, plan: bool) -> serde_json::Value {
    let counts: serde_json::Map<String, serde_json::Value> =
        State::ALL.iter().zip(snap.counts()).map(|(s, n)| (s.name().to_string(), n.into())).collect();
    serde_json::json!({
        "board": root,
        "plan": plan.then(|| root.join(ua_store::board::PLAN_FILE)),
        "counts": counts,
        "tasks": snap.tasks.iter().map(|t| task_json(t, Some(snap))).collect::<Vec<_>>(),
        "broken": snap.broken,
    })
}

/// What a task line adds after the title.
fn notes(t: &Task, snap: &Snapshot) -> String {
    let mut n = String::new();
    if t.state == State::Todo && snap.unmet(t).is_some() {
        let deps: Vec<String> = t.depends_on.iter().map(u32::to_string).collect();
        let _ = write!(n, " (waits on {})", deps.join(", "));
    }
    if t.state == State::Doing {
        match (&t.assignee, snap.gone.contains(&t.id)) {
            (Some(a), true) => {
                let _ = write!(n, " ({}, assignee gone)", short(a));
            }
            (Some(a), false) => {
                let _ = write!(n, " ({})", short(a));
            }
            (None, _) => {}
        }
    }
    if let Some(r) = t.blocked_by.as_deref().filter(|_| t.state == State::Blocked) {
        let _ = write!(n, " — {r}");
    }
    n
}

/// A session id's distinctive end (`…0000abcd`); other names whole.
fn short(assignee: &str) -> String {
    match assignee.rsplit_once('-') {
        Some((stamp, tail)) if stamp.ends_with('Z') && tail.len() == 8 => format!("…{tail}"),
        _ => assignee.to_string(),
    }
}

/// The board as plain text (a pipe): each state, then its tasks.
pub fn plain(snap: &Snapshot, plan: Option<&std::path::Path>) -> String {
    let mut out = String::new();
    if let Some(p) = plan {
        let _ = writeln!(out, "plan: {}", p.display());
    }
    for (state, n) in State::ALL.iter().zip(snap.counts()) {
        let _ = writeln!(out, "{state} ({n})");
        for t in snap.tasks.iter().filter(|t| t.state == *state) {
            let _ = writeln!(out, "  {}  {}{}", t.id, t.title, notes(t, snap));
        }
    }
    broken_lines(snap, &mut out);
    out
}

fn broken_lines(snap: &Snapshot, out: &mut String) {
    for b in &snap.broken {
        let _ = writeln!(out, "unreadable: {}:{}: {}", b.path.display(), b.line, b.message);
    }
}

/// The board in columns, one per state, for a terminal `width` wide.
pub fn columns(snap: &Snapshot, width: usize, plan: Option<&std::path::Path>) -> String {
    const GAP: usize = 2;
    let n = State::ALL.len();
    let col = (width.saturating_sub(GAP * (n - 1)) / n).max(8);
    let cells: Vec<Vec<String>> = State::ALL
        .iter()
        .zip(snap.counts())
        .map(|(state, count)| {
            let mut c = vec![format!("{} ({count})", state.name().to_uppercase()), "─".repeat(col)];
            for t in snap.tasks.iter().filter(|t| t.state == *state) {
                c.push(format!("{} {}{}", t.id, t.title, notes(t, snap)));
            }
            c
        })
        .collect();
    let rows = cells.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    if let Some(p) = plan {
        let _ = writeln!(out, "plan: {}", p.display());
    }
    for r in 0..rows {
        let line: Vec<String> = cells.iter().map(|c| fit(c.get(r).map_or("", String::as_str), col)).collect();
        let _ = writeln!(out, "{}", line.join(&" ".repeat(GAP)).trim_end());
    }
    broken_lines(snap, &mut out);
    out
}

/// `s` cut or padded to exactly `width` columns.
fn fit(s: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    if s.width() > width {
        for c in s.chars() {
            let w = c.width().unwrap_or(0);
            if used + w + 1 > width {
                break;
            }
            out.push(c);
            used += w;
        }
        out.push('…');
        used += 1;
    } else {
        out.push_str(s);
        used = s.width();
    }
    out.push_str(&" ".repeat(width.saturating_sub(used)));
    out
}

/// One task for `show` and `claim`: what it is, where it stands, its body.
pub fn task_text(t: &Task, snap: Option<&Snapshot>) -> String {
    let mut out = format!("task {}: {}\nstate: {}", t.id, t.title, t.state);
    if let Some(a) = &t.assignee {
        let gone = snap.is_some_and(|s| s.gone.contains(&t.id));
        let _ = write!(out, " (assignee {a}{})", if gone { ", gone" } else { "" });
    }
    out.push('\n');
    if let Some(r) = &t.blocked_by {
        let _ = writeln!(out, "blocked by: {r}");
    }
    if !t.depends_on.is_empty() {
        let deps: Vec<String> = t
            .depends_on
            .iter()
            .map(|d| match snap.and_then(|s| s.get(*d)) {
                Some(dep) => format!("{d} ({})", dep.state),
                None => format!("{d} (not on the board)"),
            })
            .collect();
        let _ = writeln!(out, "depends on: {}", deps.join(", "));
    }
    if !t.tags.is_empty() {
        let _ = writeln!(out, "tags: {}", t.tags.join(", "));
    }
    let _ = writeln!(out, "file: {}", t.path.display());
    if !t.body.trim().is_empty() {
        let _ = write!(out, "\n{}", t.body);
        if !t.body.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn task(id: u32, state: State, title: &str) -> Task {
        Task {
            id,
            title: title.into(),
            state,
            created: None,
            updated: None,
            depends_on: vec![],
            blocked_by: None,
            assignee: None,
            assignee_pid: None,
            tags: vec![],
            body: String::new(),
            path: PathBuf::from(format!("/b/{state}/{id}-t.md")),
        }
    }

    fn board() -> Snapshot {
        let mut tasks = vec![
            task(1, State::Done, "Parse"),
            task(2, State::Doing, "Test the parser"),
            task(3, State::Todo, "Docs"),
            task(4, State::Blocked, "Release"),
            task(5, State::Todo, "Ship"),
        ];
        tasks[1].assignee = Some("20261124T100000.000Z-0000abcd".into());
        tasks[3].blocked_by = Some("needs a signing key".into());
        tasks[4].depends_on = vec![4];
        Snapshot { tasks, ..Snapshot::default() }
    }

    #[test]
    fn the_footer_counts_the_states_that_hold_tasks() {
        assert_eq!(footer(&board()).unwrap(), "board 2 todo · 1 doing · 1 blocked · 1 done");
        let mut s = board();
        s.gone.insert(2);
        assert_eq!(footer(&s).unwrap(), "board 2 todo · 1 doing · 1 blocked · 1 done · 1 assignee gone");
        assert_eq!(footer(&Snapshot::default()), None);
    }

    #[test]
    fn the_resume_context_lists_doing_and_blocked() {
        let mut s = board();
        s.gone.insert(2);
        assert_eq!(
            active_tasks(&s).unwrap(),
            "Active tasks on the task board (`unixagent board show ID` prints one):\n\
             - task 2 [doing] Test the parser; assignee 20261124T100000.000Z-0000abcd (gone: `unixagent board claim 2` takes it over)\n\
             - task 4 [blocked] Release; blocked by: needs a signing key\n"
        );
        let idle = Snapshot { tasks: vec![task(1, State::Done, "x")], ..Snapshot::default() };
        assert_eq!(active_tasks(&idle), None);
    }

    #[test]
    fn blocked_changes_become_an_alert_and_every_change_an_event() {
        let c = TaskChange {
            id: 4,
            title: "Release".into(),
            state: State::Blocked,
            from: Some(State::Doing),
            assignee: Some("s-1".into()),
            reason: Some("needs a signing key".into()),
        };
        assert_eq!(
            blocked_alert(c.id, &c.title, c.assignee.as_deref(), c.reason.as_deref()),
            "task 4 blocked (s-1): Release — needs a signing key"
        );
        assert_eq!(
            blocked_alert(5, "a\x1b]0;pwned\x07b", Some("s\r"), Some("x\x1b[2Jy")),
            "task 5 blocked (s?): a?]0;pwned?b — x?[2Jy"
        );
        assert_eq!(
            event(&c).to_line(),
            "{\"type\":\"task\",\"id\":4,\"title\":\"Release\",\"state\":\"blocked\",\"from\":\"doing\",\"assignee\":\"s-1\",\"reason\":\"needs a signing key\"}\n"
        );
    }

    #[test]
    fn plain_text_and_columns() {
        let s = board();
        assert_eq!(
            plain(&s, None),
            "todo (2)\n  3  Docs\n  5  Ship (waits on 4)\ndoing (1)\n  2  Test the parser (…0000abcd)\nblocked (1)\n  4  Release — needs a signing key\nreview (0)\ndone (1)\n  1  Parse\n"
        );
        let cols = columns(&s, 80, None);
        let lines: Vec<&str> = cols.lines().collect();
        assert!(lines[0].starts_with("TODO (2)") && lines[0].contains("DOING (1)"), "{cols}");
        assert!(lines.iter().all(|l| l.width() <= 80), "{cols}");
        assert!(lines[2].starts_with("3 Docs"), "{cols}");
        assert_eq!(lines[3], "5 Ship (waits…", "{cols}");
        assert!(cols.contains("…"), "long lines are cut: {cols}");
    }
}
