//! `unixagent sessions …`: past sessions read back from the data
//! directory.

pub mod render;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use ua_store::index::{Index, SessionState, SessionSummary, Summaries};
use ua_store::session::SessionDir;

/// The index of this user's data directory, rebuilt from the journals
/// first if it does not exist yet (sessions from before it existed).
fn index() -> Result<(PathBuf, Index), String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let index = Index::open(&data).map_err(|e| e.to_string())?;
    if !index.exists() {
        let done = index.reindex().map_err(|e| e.to_string())?;
        for p in &done.problems {
            eprintln!("unixagent: {p}");
        }
    }
    Ok((data, index))
}

fn load(index: &Index) -> Result<Summaries, String> {
    let summaries = index.load().map_err(|e| e.to_string())?;
    // Folding many records per session costs more than rewriting them
    // as one line each; whoever reads the index next does it.
    if summaries.needs_compaction() {
        let _ = index.compact_if_needed(&summaries);
    }
    Ok(summaries)
}

fn now_ms() -> u64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn state_word(s: &SessionSummary) -> String {
    match s.state {
        SessionState::Running { pid } => format!("running ({pid})"),
        SessionState::Ended { .. } => "ended".into(),
        SessionState::Crashed => "crashed".into(),
    }
}

fn tokens(s: &SessionSummary) -> u64 {
    s.usage.total()
}

/// One line per session, for people.
fn table(sessions: &[&SessionSummary]) -> String {
    sessions.iter().enumerate().map(|(i, s)| row(i + 1, s)).collect()
}

/// Session `n` of a list, one line.
fn row(n: usize, s: &SessionSummary) -> String {
    let first = s.first_instruction.as_deref().unwrap_or("");
    let first: String = first.chars().take(60).collect::<String>().replace('\n', " ");
    let dir = if s.cwd.is_empty() { "?" } else { s.cwd.as_str() };
    let cost = if s.priced_turns > 0 { format!(", ${:.4}", dollars(s.cost_micros)) } else { String::new() };
    format!(
        "{n:>3}  {}  {}  {dir}  {} turn{}, {} tokens{cost}, {}  # {first}\n",
        s.id,
        render::utc(s.started_ms),
        s.turns,
        if s.turns == 1 { "" } else { "s" },
        tokens(s),
        state_word(s),
    )
}

fn json(s: &SessionSummary) -> serde_json::Value {
    let (state, pid) = match s.state {
        SessionState::Running { pid } => ("running", Some(pid)),
        SessionState::Ended { .. } => ("ended", None),
        SessionState::Crashed => ("crashed", None),
    };
    serde_json::json!({
        "id": s.id,
        "started_ms": s.started_ms,
        "cwd": s.cwd,
        "shell": s.shell,
        "first_instruction": s.first_instruction,
        "turns": s.turns,
        "tokens": { "input": s.usage.input_tokens + s.usage.cache_read_tokens + s.usage.cache_write_tokens,
                    "output": s.usage.output_tokens },
        "commands": s.commands,
        "cost_usd": (s.priced_turns > 0).then(|| dollars(s.cost_micros)),
        "state": state,
        "pid": pid,
        "last_active_ms": s.last_active_ms,
        "parent": s.parent,
    })
}

/// `sessions list [--json] [--all]`: first sessions, newest first, each
/// followed by the child agents it started (and theirs), oldest first.
pub fn list(as_json: bool, all: bool) -> Result<i32, String> {
    let (_, index) = index()?;
    let summaries = load(&index)?;
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    let rows = tree_rows(&summaries, |s| all || s.cwd == cwd);
    let mut out = std::io::stdout().lock();
    if as_json {
        for (s, depth) in &rows {
            let _ = writeln!(out, "{}", tree_json(&summaries, s, *depth));
        }
        return Ok(0);
    }
    if rows.is_empty() {
        let more = if all { "" } else { " in this directory (`--all` lists every directory's)" };
        eprintln!("unixagent: no sessions{more}");
        return Ok(0);
    }
    let _ = out.write_all(tree_table(&summaries, &rows).as_bytes());
    Ok(0)
}

/// The sessions to list, each with its depth under its root: every root
/// that `chosen` picks (itself or one of its descendants), then its
/// descendants.
fn tree_rows(summaries: &Summaries, chosen: impl Fn(&SessionSummary) -> bool) -> Vec<(&SessionSummary, u32)> {
    let mut roots: Vec<&str> = Vec::new();
    for s in summaries.sessions().iter().filter(|s| chosen(s)) {
        let root = summaries.root_of(&s.id);
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    // Newest first, as the index keeps them.
    roots.sort_by_key(|r| std::cmp::Reverse(summaries.get(r).map_or(0, |s| s.started_ms)));
    let mut rows = Vec::new();
    for r in roots {
        let Some(root) = summaries.get(r) else { continue };
        rows.push((root, 0));
        rows.extend(summaries.descendants(r));
    }
    rows
}

/// One line per first session, its children indented under it.
fn tree_table(summaries: &Summaries, rows: &[(&SessionSummary, u32)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut n = 0;
    for (s, depth) in rows {
        if *depth == 0 {
            n += 1;
            out.push_str(&row(n, s));
            let r = summaries.rollup(&s.id);
            if r.sessions > 0 {
                let cost = if r.priced_turns > 0 { format!(", ${:.4}", dollars(r.cost_micros)) } else { String::new() };
                let _ = writeln!(
                    out,
                    "     + {} child agent{}: {} tokens{cost}",
                    r.sessions,
                    if r.sessions == 1 { "" } else { "s" },
                    r.usage.total()
                );
            }
        } else {
            let first: String =
                s.first_instruction.as_deref().unwrap_or("").chars().take(60).collect::<String>().replace('\n', " ");
            let cost = if s.priced_turns > 0 { format!(", ${:.4}", dollars(s.cost_micros)) } else { String::new() };
            let _ = writeln!(
                out,
                "     {}└ {}  {} turn{}, {} tokens{cost}, {}  # {first}",
                "  ".repeat(usize::try_from(depth - 1).unwrap_or(0)),
                s.id,
                s.turns,
                if s.turns == 1 { "" } else { "s" },
                tokens(s),
                state_word(s),
            );
        }
    }
    out
}

/// A session's JSON line in `sessions list --json`: its own figures, where
/// it stands in its tree, and its descendants' usage added up.
fn tree_json(summaries: &Summaries, s: &SessionSummary, depth: u32) -> serde_json::Value {
    let mut v = json(s);
    let r = summaries.rollup(&s.id);
    let input = |u: &ua_protocol::event::Usage| u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;
    let mut all = s.usage;
    all.add(&r.usage);
    let priced = s.priced_turns + r.priced_turns;
    if let Some(o) = v.as_object_mut() {
        o.insert("root".into(), summaries.root_of(&s.id).into());
        o.insert("depth".into(), depth.into());
        o.insert(
            "descendants".into(),
            serde_json::json!({
                "sessions": r.sessions,
                "turns": r.turns,
                "commands": r.commands,
                "tokens": { "input": input(&r.usage), "output": r.usage.output_tokens },
                "cost_usd": (r.priced_turns > 0).then(|| dollars(r.cost_micros)),
            }),
        );
        o.insert(
            "total".into(),
            serde_json::json!({
                "turns": s.turns + r.turns,
                "commands": s.commands + r.commands,
                "tokens": { "input": input(&all), "output": all.output_tokens },
                "cost_usd": (priced > 0).then(|| dollars(s.cost_micros + r.cost_micros)),
            }),
        );
    }
    v
}

/// `sessions prune --older-than AGE`.
pub fn prune(older_than: &str) -> Result<i32, String> {
    let age = ua_store::index::parse_age(older_than)?;
    let (_, index) = index()?;
    let pruned =
        index.prune(u64::try_from(age.as_millis()).unwrap_or(u64::MAX), now_ms()).map_err(|e| e.to_string())?;
    for s in &pruned.removed {
        println!("removed {}  {}  {}", s.id, render::utc(s.last_active_ms), s.cwd);
    }
    for e in &pruned.failed {
        eprintln!("unixagent: {e}");
    }
    println!("{} session{} removed", pruned.removed.len(), if pruned.removed.len() == 1 { "" } else { "s" });
    Ok(if pruned.failed.is_empty() { 0 } else { 1 })
}

/// `sessions reindex`.
pub fn reindex() -> Result<i32, String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let index = Index::open(&data).map_err(|e| e.to_string())?;
    let done = index.reindex().map_err(|e| e.to_string())?;
    for p in &done.problems {
        eprintln!("unixagent: {p}");
    }
    println!(
        "{} session{} indexed; {} unreadable journal line{} skipped",
        done.sessions,
        if done.sessions == 1 { "" } else { "s" },
        done.skipped_lines,
        if done.skipped_lines == 1 { "" } else { "s" }
    );
    Ok(0)
}

/// Removes sessions older than `journal.retain_days`, at most once a day
/// (a marker file's age says when it last ran). Quiet unless it fails.
pub fn prune_retained(retain_days: Option<u64>) {
    let Some(days) = retain_days.filter(|d| *d > 0) else { return };
    let Ok(data) = ua_store::session::data_dir() else { return };
    let marker = data.join("sessions").join(".pruned");
    let recent = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e.as_secs() < 86_400));
    if recent {
        return;
    }
    let Ok(index) = Index::open(&data) else { return };
    let _ = std::fs::write(&marker, b"");
    match index.prune(days.saturating_mul(86_400_000), now_ms()) {
        Ok(p) => {
            for e in &p.failed {
                eprintln!("unixagent: pruning old sessions: {e}");
            }
        }
        Err(e) => eprintln!("unixagent: pruning old sessions (journal.retain_days): {e}"),
    }
    // The spans of those sessions go the same way: traces.jsonl is renamed
    // for the day and rotated files past the age are deleted.
    for p in ua_trace::sink::rotate(&data, days, std::time::SystemTime::now()) {
        eprintln!("unixagent: rotating traces.jsonl (journal.retain_days): {p}");
    }
}

/// `--usage [--json] [--since AGE]`.
pub fn usage(as_json: bool, since: Option<&str>) -> Result<i32, String> {
    let since_ms = match since {
        Some(age) => {
            now_ms().saturating_sub(u64::try_from(ua_store::index::parse_age(age)?.as_millis()).unwrap_or(u64::MAX))
        }
        None => 0,
    };
    let (_, index) = index()?;
    let report = load(&index)?.usage(since_ms);
    let input = |u: &ua_protocol::event::Usage| u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;
    // Dollars when some turn had a price; JSON gives `null` otherwise.
    let usd = |micros: u64, priced: u64| (priced > 0).then(|| dollars(micros));
    let mut out = std::io::stdout().lock();
    if as_json {
        let days: Vec<_> = report
            .by_day
            .iter()
            .map(|d| {
                let t = d.date();
                serde_json::json!({ "day": format!("{:04}-{:02}-{:02}", t.year, t.month, t.day), "turns": d.turns,
                                    "commands": d.commands, "input": input(&d.usage), "output": d.usage.output_tokens,
                                    "cost_usd": usd(d.cost_micros, u64::from(d.priced_turns)),
                                    "unpriced_turns": d.turns - d.priced_turns })
            })
            .collect();
        let sessions: Vec<_> = report
            .by_session
            .iter()
            .map(|s| {
                serde_json::json!({ "id": s.id, "cwd": s.cwd, "turns": s.turns, "commands": s.commands,
                                    "input": input(&s.usage), "output": s.usage.output_tokens,
                                    "cost_usd": usd(s.cost_micros, u64::from(s.priced_turns)),
                                    "unpriced_turns": s.turns - s.priced_turns })
            })
            .collect();
        let v = serde_json::json!({
            "since_ms": since_ms,
            "turns": report.turns,
            "commands": report.commands,
            "input": input(&report.total),
            "output": report.total.output_tokens,
            "cache_read": report.total.cache_read_tokens,
            "cache_write": report.total.cache_write_tokens,
            "cost_usd": usd(report.cost_micros, report.priced_turns),
            "unpriced_turns": report.turns - report.priced_turns,
            "by_day": days,
            "by_session": sessions,
        });
        let _ = writeln!(out, "{v}");
        return Ok(0);
    }
    let cost = |micros: u64, priced: u64, turns: u64| match (priced, turns - priced) {
        (0, _) => "no price".to_string(),
        (_, 0) => format!("${:.4}", dollars(micros)),
        (_, unpriced) => format!("${:.4} + {unpriced} unpriced", dollars(micros)),
    };
    let _ = writeln!(
        out,
        "{}, {}: {} tokens in, {} out, {}",
        counted(report.turns, "turn"),
        counted(report.commands, "command"),
        input(&report.total),
        report.total.output_tokens,
        cost(report.cost_micros, report.priced_turns, report.turns),
    );
    if report.priced_turns < report.turns {
        let _ = writeln!(out, "(a turn has a cost when its model has a price in config.toml's [pricing])");
    }
    if !report.by_day.is_empty() {
        let _ = writeln!(out, "\nby day (UTC):");
        for d in &report.by_day {
            let t = d.date();
            let _ = writeln!(
                out,
                "  {:04}-{:02}-{:02}  {:>10}  {:>14}  {:>10} in  {:>9} out  {}",
                t.year,
                t.month,
                t.day,
                counted(d.turns, "turn"),
                counted(d.commands, "command"),
                input(&d.usage),
                d.usage.output_tokens,
                cost(d.cost_micros, u64::from(d.priced_turns), u64::from(d.turns)),
            );
        }
    }
    if !report.by_session.is_empty() {
        let _ = writeln!(out, "\nby session:");
        for s in &report.by_session {
            let _ = writeln!(
                out,
                "  {}  {:>10}  {:>14}  {:>10} in  {:>9} out  {}  {}",
                s.id,
                counted(s.turns, "turn"),
                counted(s.commands, "command"),
                input(&s.usage),
                s.usage.output_tokens,
                cost(s.cost_micros, u64::from(s.priced_turns), u64::from(s.turns)),
                s.cwd
            );
        }
    }
    Ok(0)
}

/// `1 turn`, `2 turns`.
fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Millionths of a dollar as dollars.
#[allow(clippy::cast_precision_loss)]
fn dollars(micros: u64) -> f64 {
    micros as f64 / 1_000_000.0
}

/// The session `--continue` or `--resume` names, as its directory; `None`
/// when neither was given. A running session is not taken over: two
/// processes would write one journal.
pub fn to_resume(continue_: bool, any: bool, resume: Option<&str>) -> Result<Option<crate::session::Resume>, String> {
    if !continue_ && resume.is_none() {
        return Ok(None);
    }
    let (data, index) = index()?;
    let summaries = load(&index)?;
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    let idle = |s: &&SessionSummary| !matches!(s.state, SessionState::Running { .. });
    let id = match resume {
        _ if continue_ => {
            let found = summaries.sessions().iter().filter(|s| any || s.cwd == cwd).find(idle);
            match found {
                Some(s) => s.id.clone(),
                None if any => return Err("there is no earlier session to continue".into()),
                None => {
                    return Err(
                        "there is no earlier session in this directory to continue (`--continue --any` takes the latest anywhere)"
                            .into(),
                    );
                }
            }
        }
        Some("") => choose(&summaries, &cwd)?,
        Some(prefix) => find(&data, prefix)?.id().to_string(),
        None => return Ok(None),
    };
    // A session the index does not know yet (its start record lost or not
    // written yet): its own process may still run it.
    let state = summaries.get(&id).map(|s| s.state).or_else(|| {
        let meta =
            ua_store::session::read_meta(&data.join("sessions").join(&id).join(ua_store::session::META_FILE)).ok()?;
        ua_store::index::process_alive(meta.pid).then_some(SessionState::Running { pid: meta.pid })
    });
    if let Some(SessionState::Running { pid }) = state {
        return Err(format!("session {id} is still running (process {pid}); continue it there, or end it first"));
    }
    let used = summaries.get(&id).map(|s| s.usage).unwrap_or_default();
    Ok(Some(crate::session::Resume { dir: data.join("sessions").join(id), used }))
}

/// `--resume` without an id: recent sessions (this directory's, else
/// everyone's), and the number typed on the terminal.
fn choose(summaries: &Summaries, cwd: &str) -> Result<String, String> {
    let here: Vec<&SessionSummary> = summaries.in_cwd(cwd).take(10).collect();
    let shown: Vec<&SessionSummary> =
        if here.is_empty() { summaries.sessions().iter().take(10).collect() } else { here };
    if shown.is_empty() {
        return Err("there are no sessions to continue yet".into());
    }
    eprint!("{}", table(&shown));
    if !std::io::stdin().is_terminal() {
        return Err("give one of these ids to --resume (there is no terminal to choose on)".into());
    }
    eprint!("continue which one? [1-{}] ", shown.len());
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("reading the choice: {e}"))?;
    let n: usize = line.trim().parse().map_err(|_| format!("{:?} is not one of the numbers shown", line.trim()))?;
    shown.get(n.wrapping_sub(1)).map(|s| s.id.clone()).ok_or_else(|| format!("{n} is not one of the numbers shown"))
}

/// The session whose id is `prefix` or starts with it. An ambiguous
/// prefix is an error listing the candidates.
/// Why no session directory starts with `prefix`: a child agent that runs
/// in its parent's sandbox is listed from its start, but its directory
/// comes with its parent's import once it ends.
fn not_found(data_dir: &Path, prefix: &str) -> String {
    let summaries = Index::open(data_dir).ok().and_then(|i| i.load().ok());
    let running = summaries.as_ref().and_then(|s| {
        s.sessions().iter().find(|s| s.id.starts_with(prefix) && matches!(s.state, SessionState::Running { .. }))
    });
    match running.and_then(|s| Some((&s.id, s.parent.as_ref()?))) {
        Some((id, parent)) => format!(
            "session {id} is a child agent still running in the sandbox of session {parent}; its journal is kept there until it ends, then `unixagent sessions show {id}` shows it"
        ),
        None => format!("no session id starts with {prefix:?} (`unixagent sessions list --all` lists them)"),
    }
}

pub fn find(data_dir: &Path, prefix: &str) -> Result<SessionDir, String> {
    let sessions = data_dir.join("sessions");
    let prefix = prefix.trim();
    if prefix.is_empty() {
        return Err("a session id (or a prefix of one) is needed".into());
    }
    let entries = match std::fs::read_dir(&sessions) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("there are no sessions yet ({} does not exist)", sessions.display()));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", sessions.display())),
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.starts_with(prefix))
        .collect();
    found.sort();
    match found.as_slice() {
        [] => Err(not_found(data_dir, prefix)),
        [one] => SessionDir::open(sessions.join(one)).map_err(|e| e.to_string()),
        many => {
            let shown: Vec<&str> = many.iter().rev().take(5).map(String::as_str).collect();
            let more = if many.len() > 5 { format!(" and {} more", many.len() - 5) } else { String::new() };
            Err(format!("{prefix:?} names {} sessions: {}{more}; give more of the id", many.len(), shown.join(", ")))
        }
    }
}

/// Reads a session's journal, saying on stderr what was skipped.
fn read(dir: &SessionDir) -> Result<ua_store::journal::JournalContents, String> {
    let contents = ua_store::journal::read_journal(&dir.journal_path()).map_err(|e| e.to_string())?;
    for s in &contents.skipped {
        eprintln!("unixagent: {s}");
    }
    if contents.torn_tail {
        eprintln!("unixagent: the journal's last line is incomplete (the session was cut short) and was skipped");
    }
    Ok(contents)
}

/// `sessions show ID`: the conversation, the board's counts, then the
/// child agents it started (and theirs), each in one line with its status
/// and cost.
pub fn show(prefix: &str) -> Result<i32, String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let dir = find(&data, prefix)?;
    let contents = read(&dir)?;
    print!("{}", render::render(&contents.lines, render::Style::Text));
    if let Some(snap) = board_of(&dir) {
        print!("{}", render::board(&snap, render::Style::Text));
    }
    let summaries = Index::open(&data).ok().and_then(|i| i.load().ok());
    if let Some(summaries) = summaries {
        print!("{}", children(&data, &summaries, dir.id()));
    }
    Ok(0)
}

/// The child agents below `id`, one fold line each (status, time, tokens,
/// commands, cost), indented by depth.
fn children(data: &Path, summaries: &Summaries, id: &str) -> String {
    use std::fmt::Write as _;
    let below = summaries.descendants(id);
    if below.is_empty() {
        return String::new();
    }
    let r = summaries.rollup(id);
    let mut out = format!(
        "\nchild agents ({}, {} tokens{}):\n",
        below.len(),
        r.usage.total(),
        if r.priced_turns > 0 { format!(", ${:.4}", dollars(r.cost_micros)) } else { String::new() }
    );
    for (s, depth) in below {
        let journal = data.join("sessions").join(&s.id).join(ua_store::session::JOURNAL_FILE);
        let lines = ua_store::journal::read_journal(&journal).map(|c| c.lines).unwrap_or_default();
        let mut fold = crate::child::fold::from_journal(&lines);
        fold.outcome = match s.state {
            SessionState::Running { .. } => crate::child::fold::Outcome::Running,
            SessionState::Crashed => crate::child::fold::Outcome::Crashed,
            SessionState::Ended { .. } => fold.outcome,
        };
        if fold.instruction.is_empty() {
            fold.instruction = s.first_instruction.clone().unwrap_or_default();
        }
        let took = fold.journal_duration().unwrap_or_default();
        let cost = if s.priced_turns > 0 { format!(" · ${:.4}", dollars(s.cost_micros)) } else { String::new() };
        let _ =
            writeln!(out, "{}{}{cost}  {}", "  ".repeat(usize::try_from(depth).unwrap_or(1)), fold.line(took), s.id);
    }
    out
}

/// The session's task board as it is now, if it has one with anything on
/// it. Unreadable task files are listed with it, never fatal.
fn board_of(dir: &SessionDir) -> Option<ua_store::board::Snapshot> {
    let snap = ua_store::board::Board::of_session(dir.path()).snapshot().ok()?;
    (!snap.is_empty()).then_some(snap)
}

/// `sessions export ID --format md|jsonl`.
pub fn export(prefix: &str, format: &str) -> Result<i32, String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let dir = find(&data, prefix)?;
    match format {
        "jsonl" => {
            // The journal as it is, byte for byte.
            let path = dir.journal_path();
            let mut file = std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            std::io::copy(&mut file, &mut std::io::stdout().lock())
                .map_err(|e| format!("writing the export failed: {e}"))?;
        }
        _ => {
            let contents = read(&dir)?;
            print!("{}", render::render(&contents.lines, render::Style::Markdown));
            if let Some(snap) = board_of(&dir) {
                print!("{}", render::board(&snap, render::Style::Markdown));
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_finds_one_session_and_an_ambiguous_one_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["20261123T100000.000Z-aaaa", "20261123T100000.000Z-aabb", "20261124T090000.000Z-cccc"] {
            let d = dir.path().join("sessions").join(id);
            std::fs::create_dir_all(&d).unwrap();
            let meta =
                format!(r#"{{"id":"{id}","created_ms":0,"pid":1,"shell":"/bin/sh","cwd":"/","version":"0.1.0"}}"#);
            std::fs::write(d.join("meta.json"), meta).unwrap();
        }
        assert_eq!(find(dir.path(), "20261124").unwrap().id(), "20261124T090000.000Z-cccc");
        let err = find(dir.path(), "20261123T100000.000Z-aa").unwrap_err();
        assert!(err.contains("names 2 sessions") && err.contains("-aabb") && err.contains("-aaaa"), "{err}");
        assert!(find(dir.path(), "2027").unwrap_err().contains("no session id starts with"));
        assert!(find(&dir.path().join("none"), "2026").unwrap_err().contains("no sessions yet"));
    }
}
