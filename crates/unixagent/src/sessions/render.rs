//! A journal as a person reads it: instructions, answers, the commands
//! with their decisions and status, the user's own commands, errors.
//! `sessions show` prints it as text; `sessions export --format md` as
//! Markdown. Thinking, system prompts and tool definitions stay in the
//! journal (`--format jsonl`).

use std::fmt::Write as _;

use ua_protocol::conversation::{Block, Role};
use ua_protocol::journal::{CallPurpose, DecisionOutcome, JournalEntry, JournalLine};

/// How to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Text,
    Markdown,
}

/// The session's task board: its counts for `show`; for a Markdown
/// export every task with its state, assignee, reason and body.
pub fn board(snap: &ua_store::board::Snapshot, style: Style) -> String {
    use ua_store::board::State;
    let counts: Vec<String> =
        State::ALL.iter().zip(snap.counts()).filter(|(_, n)| *n > 0).map(|(s, n)| format!("{n} {s}")).collect();
    let mut counts = counts.join(" · ");
    if !snap.broken.is_empty() {
        let _ = write!(counts, "{}{} unreadable", if counts.is_empty() { "" } else { " · " }, snap.broken.len());
    }
    if style == Style::Text {
        return format!("── board ──\n{counts}\n");
    }
    let mut out = format!("## Task board\n\n{counts}\n");
    for state in State::ALL {
        let tasks: Vec<_> = snap.tasks.iter().filter(|t| t.state == state).collect();
        if tasks.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {state}\n");
        for t in tasks {
            let _ = write!(out, "#### {} {}\n\n", t.id, t.title);
            let mut facts = Vec::new();
            if let Some(a) = &t.assignee {
                facts.push(format!("assignee `{a}`"));
            }
            if let Some(r) = t.blocked_by.as_deref().filter(|_| state == State::Blocked) {
                facts.push(format!("blocked by: {r}"));
            }
            if !t.depends_on.is_empty() {
                let deps: Vec<String> = t.depends_on.iter().map(u32::to_string).collect();
                facts.push(format!("depends on {}", deps.join(", ")));
            }
            if !t.tags.is_empty() {
                facts.push(format!("tags: {}", t.tags.join(", ")));
            }
            if !facts.is_empty() {
                let _ = writeln!(out, "{}\n", facts.join("; "));
            }
            if !t.body.trim().is_empty() {
                let _ = writeln!(out, "{}\n", t.body.trim_end());
            }
        }
    }
    for b in &snap.broken {
        let _ = writeln!(out, "- unreadable: `{}`:{}: {}", b.path.display(), b.line, b.message);
    }
    out
}

/// Output longer than this many lines is cut in the middle.
const OUTPUT_LINES: usize = 40;

/// Renders the lines of one journal.
pub fn render(lines: &[JournalLine], style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    for line in lines {
        match &line.entry {
            JournalEntry::SessionStart { session, shell, cwd, version, .. } => {
                let when = utc(line.ts);
                if md {
                    let _ = writeln!(
                        out,
                        "# Session {session}\n\nStarted {when} in `{cwd}` ({shell}, unixagent {version}).\n"
                    );
                } else {
                    let _ =
                        writeln!(out, "session {session}\nstarted {when} in {cwd} ({shell}, unixagent {version})\n");
                }
            }
            JournalEntry::Instruction { turn, text } => {
                if md {
                    let _ = writeln!(out, "## Turn {turn}\n\n> \\# {}\n", text.replace('\n', "\n> "));
                } else {
                    let _ = writeln!(out, "── turn {turn} ──\n# {text}\n");
                }
            }
            JournalEntry::ModelResponse { message, purpose: CallPurpose::Conversation, .. }
                if message.role == Role::Assistant =>
            {
                for b in &message.content {
                    if let Block::Text { text } = b
                        && !text.trim().is_empty()
                    {
                        let _ = writeln!(out, "{}\n", text.trim_end());
                    }
                }
            }
            JournalEntry::Decision { command, risk, outcome, decided_by, .. } => {
                let what = match outcome {
                    DecisionOutcome::Run => "run".to_string(),
                    DecisionOutcome::Edited { command } => format!("edited to `{command}`"),
                    DecisionOutcome::Skipped => "skipped".into(),
                    DecisionOutcome::Denied => "denied".into(),
                    DecisionOutcome::Stopped => "stopped".into(),
                };
                if md {
                    let _ = writeln!(out, "- proposed `{}` ({risk}): {what} by {decided_by}", one_line(command));
                } else {
                    let _ = writeln!(out, "  proposed: {} ({risk}): {what} by {decided_by}", one_line(command));
                }
            }
            JournalEntry::ToolResult { command, exit_code, output, duration_ms, .. } => {
                let status = match exit_code {
                    Some(0) => "ok".to_string(),
                    Some(c) => format!("exit {c}"),
                    None => "not run".into(),
                };
                let secs = *duration_ms as f64 / 1000.0;
                if md {
                    let _ = writeln!(out, "\n```console\n$ {command}\n{}\n```\n_{status}, {secs:.1} s_\n", cut(output));
                } else {
                    let _ = writeln!(out, "  $ {command}    [{status}, {secs:.1} s]");
                    for l in cut(output).lines() {
                        let _ = writeln!(out, "  │ {l}");
                    }
                    out.push('\n');
                }
            }
            JournalEntry::UserCommand { command, exit_code, .. } => {
                let status = exit_code.map_or(String::new(), |c| format!(" (exit {c})"));
                if md {
                    let _ = writeln!(out, "- you ran `{}`{status}", one_line(command));
                } else {
                    let _ = writeln!(out, "you ran: {}{status}", one_line(command));
                }
            }
            JournalEntry::TurnEnd { reason, usage, commands, .. } => {
                let reason = serde_json::to_value(reason).ok().and_then(|v| v.as_str().map(str::to_string));
                let reason = reason.unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{}turn ended: {reason}; {commands} command(s); {} tokens in, {} out{}\n",
                    if md { "_" } else { "(" },
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
                    usage.output_tokens,
                    if md { "_" } else { ")" },
                );
            }
            JournalEntry::Summary { covers_through_turn, .. } => {
                let _ = writeln!(
                    out,
                    "{}turns up to {covers_through_turn} summarised for the model{}\n",
                    if md { "_" } else { "(" },
                    if md { "_" } else { ")" }
                );
            }
            JournalEntry::Resumed { cwd, .. } => {
                let _ = writeln!(
                    out,
                    "{}continued {} in {cwd}{}\n",
                    if md { "_" } else { "── " },
                    utc(line.ts),
                    if md { "_" } else { " ──" }
                );
            }
            JournalEntry::Error { message, .. } => {
                let _ = writeln!(out, "{}{message}\n", if md { "**error:** " } else { "error: " });
            }
            JournalEntry::SessionEnd { exit_code } => {
                let code = exit_code.map_or(String::new(), |c| format!(" (shell exit {c})"));
                let _ = writeln!(
                    out,
                    "{}session ended {}{code}{}",
                    if md { "_" } else { "" },
                    utc(line.ts),
                    if md { "_" } else { "" }
                );
            }
            _ => {}
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ⏎ ")
}

/// At most [`OUTPUT_LINES`] lines of command output.
fn cut(output: &str) -> String {
    elide_lines(output, OUTPUT_LINES)
}

/// `text` with at most `max` lines: the first and last halves, and a line
/// saying how many were left out between them.
pub fn elide_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.len() <= max {
        return lines.join("\n");
    }
    let half = max / 2;
    let mut v: Vec<&str> = lines[..half].to_vec();
    let gap = format!("… {} lines …", lines.len() - 2 * half);
    v.push(&gap);
    v.extend_from_slice(&lines[lines.len() - half..]);
    v.join("\n")
}

/// Milliseconds since the epoch as `2026-11-23 14:05 UTC`.
pub fn utc(ms: u64) -> String {
    let t = ua_protocol::time::Utc::from_unix_ms(ms);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year, t.month, t.day, t.hour, t.minute)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ua_protocol::conversation::Message;
    use ua_protocol::event::Usage;
    use ua_protocol::journal::TurnEndReason;

    fn line(seq: u64, entry: JournalEntry) -> JournalLine {
        JournalLine { seq, ts: 1_763_906_700_000, entry }
    }

    fn journal() -> Vec<JournalLine> {
        vec![
            line(
                1,
                JournalEntry::SessionStart {
                    session: "S1".into(),
                    pid: 1,
                    shell: "/bin/bash".into(),
                    cwd: "/home/u/p".into(),
                    os: "linux".into(),
                    version: "0.1.0".into(),
                },
            ),
            line(2, JournalEntry::Instruction { turn: 1, text: "count the files".into() }),
            line(
                3,
                JournalEntry::ModelResponse {
                    turn: 1,
                    call: 1,
                    message: Message { role: Role::Assistant, content: vec![Block::text("Counting them.")] },
                    usage: None,
                    stop: None,
                    purpose: ua_protocol::journal::CallPurpose::Conversation,
                },
            ),
            line(
                4,
                JournalEntry::Decision {
                    turn: 1,
                    tool_use_id: "t1".into(),
                    command: "ls | wc -l".into(),
                    risk: "read_only".into(),
                    outcome: DecisionOutcome::Run,
                    decided_by: "policy".into(),
                    approver: None,
                },
            ),
            line(
                5,
                JournalEntry::ToolResult {
                    turn: 1,
                    tool_use_id: "t1".into(),
                    command: "ls | wc -l".into(),
                    exit_code: Some(0),
                    output: "42".into(),
                    is_error: false,
                    truncated: false,
                    duration_ms: 1200,
                },
            ),
            line(
                6,
                JournalEntry::TurnEnd {
                    turn: 1,
                    reason: TurnEndReason::Answered,
                    usage: Usage { input_tokens: 100, output_tokens: 20, ..Usage::default() },
                    commands: 1,
                    cost_micros: None,
                    descendants: None,
                },
            ),
        ]
    }

    #[test]
    fn text_reads_as_the_session_went() {
        let text = render(&journal(), Style::Text);
        let want = [
            "session S1",
            "started 2025-11-23 14:05 UTC in /home/u/p",
            "# count the files",
            "Counting them.",
            "proposed: ls | wc -l (read_only): run by policy",
            "$ ls | wc -l    [ok, 1.2 s]",
            "│ 42",
            "turn ended: answered; 1 command(s); 100 tokens in, 20 out",
        ];
        let mut at = 0;
        for w in want {
            let found = text[at..].find(w).unwrap_or_else(|| panic!("{w:?} not after byte {at} in:\n{text}"));
            at += found + w.len();
        }
    }

    #[test]
    fn markdown_has_headings_and_fenced_output() {
        let md = render(&journal(), Style::Markdown);
        assert!(md.starts_with("# Session S1\n"), "{md}");
        assert!(md.contains("## Turn 1\n\n> \\# count the files"), "{md}");
        assert!(md.contains("```console\n$ ls | wc -l\n42\n```\n_ok, 1.2 s_"), "{md}");
    }

    #[test]
    fn long_output_is_cut_in_the_middle() {
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let c = cut(&long);
        assert!(c.starts_with("line 1\n") && c.ends_with("line 100"), "{c}");
        assert!(c.contains("… 60 lines …"));
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_763_906_700_000), "2025-11-23 14:05 UTC");
    }

    #[test]
    fn the_board_shows_as_counts_and_exports_as_tasks() {
        use ua_store::board::{Snapshot, State, Task};
        let task = |id: u32, state: State| Task {
            id,
            title: format!("task {id}"),
            state,
            created: None,
            updated: None,
            depends_on: if id == 2 { vec![1] } else { vec![] },
            blocked_by: (state == State::Blocked).then(|| "needs a key".into()),
            assignee: (state != State::Todo).then(|| "s-1".into()),
            assignee_pid: None,
            tags: vec![],
            body: format!("Do {id}.\n"),
            path: format!("/b/{state}/{id}-t.md").into(),
        };
        let snap = Snapshot {
            tasks: vec![task(1, State::Done), task(2, State::Todo), task(3, State::Blocked)],
            ..Snapshot::default()
        };
        assert_eq!(board(&snap, Style::Text), "── board ──\n1 todo · 1 blocked · 1 done\n");
        assert_eq!(
            board(&snap, Style::Markdown),
            "## Task board\n\n1 todo · 1 blocked · 1 done\n\n### todo\n\n#### 2 task 2\n\ndepends on 1\n\nDo 2.\n\n\n\
             ### blocked\n\n#### 3 task 3\n\nassignee `s-1`; blocked by: needs a key\n\nDo 3.\n\n\n\
             ### done\n\n#### 1 task 1\n\nassignee `s-1`\n\nDo 1.\n\n"
        );
    }
}
