//! The index on a real filesystem: appends, compaction, prune, reindex and
//! concurrent writers.

use std::os::unix::fs::PermissionsExt;

use ua_protocol::event::Usage;
use ua_protocol::journal::{JournalEntry, TurnEndReason};

use super::*;
use crate::journal::{Journal, SyncPolicy};
use crate::session::{SessionDir, SessionMeta};

/// Above `pid_max` on every system: `kill` says ESRCH.
const DEAD_PID: u32 = i32::MAX as u32;
const DAY_MS: u64 = 86_400_000;

fn start(id: &str, ts: u64, pid: u32) -> Record {
    Record::Start {
        id: id.into(),
        ts,
        cwd: "/work".into(),
        shell: "/bin/bash".into(),
        pid,
        parent: None,
        first_instruction: None,
    }
}

fn turn(id: &str, ts: u64, n: u32) -> Record {
    Record::Turn {
        id: id.into(),
        ts,
        turn: n,
        instruction: Some(format!("instruction {n}")),
        usage: Usage { input_tokens: 10, output_tokens: 2, cache_read_tokens: 1, cache_write_tokens: 0 },
        commands: 1,
        cost_micros: None,
    }
}

fn end(id: &str, ts: u64) -> Record {
    Record::End { id: id.into(), ts, exit_code: Some(0) }
}

#[test]
fn appended_records_load_back_and_the_files_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    assert!(!index.exists());
    assert!(index.load().unwrap().is_empty(), "no file is an empty index");
    index.append(&start("a", 1, DEAD_PID)).unwrap();
    index.append(&turn("a", 2, 1)).unwrap();
    index.append(&start("b", 3, std::process::id())).unwrap();
    index.append(&end("a", 4)).unwrap();
    let s = index.load().unwrap();
    assert_eq!(s.sessions().iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(s.get("a").unwrap().state, SessionState::Ended { exit_code: Some(0) });
    assert_eq!(s.get("b").unwrap().state, SessionState::Running { pid: std::process::id() });
    assert_eq!((s.lines, s.skipped, s.torn_tail), (4, 0, false));
    for file in [index.path(), &tmp.path().join("sessions").join(LOCK_FILE)] {
        assert_eq!(fs::metadata(file).unwrap().permissions().mode() & 0o777, 0o600, "{file:?}");
    }
}

#[test]
fn a_crashed_session_is_one_whose_process_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    index.append(&start("gone", 1, DEAD_PID)).unwrap();
    index.append(&start("here", 2, std::process::id())).unwrap();
    // pid 0 would address our own process group, which is alive.
    index.append(&start("zero", 3, 0)).unwrap();
    let s = index.load().unwrap();
    assert_eq!(s.get("gone").unwrap().state, SessionState::Crashed);
    assert_eq!(s.get("here").unwrap().state, SessionState::Running { pid: std::process::id() });
    assert_eq!(s.get("zero").unwrap().state, SessionState::Crashed);
}

#[test]
fn an_append_after_a_torn_line_keeps_both_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    index.append(&start("a", 1, DEAD_PID)).unwrap();
    let mut f = OpenOptions::new().append(true).open(index.path()).unwrap();
    f.write_all(br#"{"type":"turn","id":"a","ts":2,"tu"#).unwrap();
    assert!(index.load().unwrap().torn_tail);
    index.append(&turn("a", 3, 1)).unwrap();
    let s = index.load().unwrap();
    assert_eq!((s.lines, s.skipped, s.torn_tail), (3, 1, false));
    assert_eq!(s.get("a").unwrap().turns, 1);
}

#[test]
fn long_instructions_are_cut_on_append() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    let Record::Turn { id, ts, turn: n, usage, commands, .. } = turn("a", 1, 1) else { unreachable!() };
    index
        .append(&Record::Turn {
            id,
            ts,
            turn: n,
            instruction: Some("ü".repeat(5000)),
            usage,
            commands,
            cost_micros: None,
        })
        .unwrap();
    let bytes = fs::read(index.path()).unwrap();
    assert!(bytes.len() < 1024, "{}", bytes.len());
    let s = index.load().unwrap();
    assert_eq!(s.get("a").unwrap().first_instruction.as_ref().unwrap().chars().count(), INSTRUCTION_CHARS);
}

#[test]
fn compaction_keeps_every_session_and_its_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    for i in 0..300u64 {
        let id = format!("s{i:04}");
        index.append(&start(&id, i * 1000, if i % 7 == 0 { std::process::id() } else { DEAD_PID })).unwrap();
        for t in 1..=3 {
            index.append(&turn(&id, i * 1000 + u64::from(t) * DAY_MS / 2, t)).unwrap();
        }
        if i % 3 == 0 {
            index.append(&end(&id, i * 1000 + 2 * DAY_MS)).unwrap();
        }
    }
    index.append(&Record::Pruned { id: "s0001".into(), ts: 9 }).unwrap();
    fs::OpenOptions::new().append(true).open(index.path()).unwrap().write_all(b"garbage\n").unwrap();
    let before = index.load().unwrap();
    assert_eq!(before.len(), 299);
    assert!(before.needs_compaction(), "{} lines", before.lines);

    let done = index.compact_if_needed(&before).unwrap().unwrap();
    assert_eq!(done, Compacted { lines: before.lines, sessions: 299, dropped: 1 });
    let after = index.load().unwrap();
    assert_eq!(after.sessions(), before.sessions());
    assert_eq!(after.usage(0), before.usage(0));
    let usage = after.usage(0);
    assert_eq!((usage.turns, usage.commands), (897, 897), "one command a turn, kept through compaction");
    assert_eq!(usage.by_day.iter().map(|d| d.commands).sum::<u64>(), 897);
    assert_eq!((after.lines, after.skipped), (299, 0));
    assert!(index.compact_if_needed(&before).unwrap().is_none(), "the file is compact already");
    assert!(!tmp.path().join("sessions").join(TEMP_FILE).exists());

    // Records appended after compaction fold on top of the compacted lines.
    index.append(&turn("s0002", 5, 9)).unwrap();
    index.append(&end("s0007", 6 * DAY_MS)).unwrap();
    let later = index.load().unwrap();
    assert_eq!(later.get("s0002").unwrap().turns, 4);
    assert_eq!(later.get("s0007").unwrap().state, SessionState::Ended { exit_code: Some(0) });
}

#[test]
fn an_append_gives_up_while_a_rewrite_holds_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    let held = index.lock(true, Duration::ZERO).unwrap();
    let other = Index::open(tmp.path()).unwrap();
    let err = other.lock(false, Duration::from_millis(30)).unwrap_err();
    assert!(err.to_string().contains("held the index for over 30 ms"), "{err}");
    assert!(other.lock(true, Duration::ZERO).is_err(), "one rewrite at a time");
    drop(held);
    other.append(&start("a", 1, DEAD_PID)).unwrap();
}

/// A session directory with meta.json, last active at `ts`.
fn session_dir(tmp: &Path, index: &Index, ts: u64, pid: u32, ended: bool) -> String {
    let meta = SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid,
        shell: "/bin/sh".into(),
        cwd: "/work".into(),
        version: "0.1.0".into(),
        parent: None,
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    };
    let dir = SessionDir::create(tmp, meta).unwrap();
    let id = dir.id().to_string();
    index.append(&start(&id, ts, pid)).unwrap();
    if ended {
        index.append(&end(&id, ts)).unwrap();
    }
    id
}

#[test]
fn prune_removes_old_finished_sessions_and_never_a_running_one() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    let now = 100 * DAY_MS;
    let me = std::process::id();
    let old_running = session_dir(tmp.path(), &index, DAY_MS, me, false);
    let old_ended = session_dir(tmp.path(), &index, DAY_MS, DEAD_PID, true);
    let old_crashed = session_dir(tmp.path(), &index, 2 * DAY_MS, DEAD_PID, false);
    let recent = session_dir(tmp.path(), &index, now - DAY_MS, DEAD_PID, true);
    // Ids the index may hold but prune must never follow.
    for bad in ["../escape", "/etc", "index.jsonl", "..", ""] {
        index.append(&start(bad, 0, DEAD_PID)).unwrap();
    }
    fs::write(tmp.path().join("escape"), "keep me").unwrap();

    let pruned = index.prune(30 * DAY_MS, now).unwrap();
    let mut removed: Vec<&str> = pruned.removed.iter().map(|s| s.id.as_str()).collect();
    removed.sort_unstable();
    let mut want = vec![old_ended.as_str(), old_crashed.as_str()];
    want.sort_unstable();
    assert_eq!(removed, want);
    assert_eq!(pruned.failed.len(), 5, "{:?}", pruned.failed);
    let sessions = tmp.path().join("sessions");
    assert!(sessions.join(&old_running).is_dir() && sessions.join(&recent).is_dir());
    assert!(!sessions.join(&old_ended).exists() && !sessions.join(&old_crashed).exists());
    assert!(tmp.path().join("escape").exists() && index.path().is_file());

    let s = index.load().unwrap();
    assert!(s.get(&old_ended).is_none() && s.get(&old_crashed).is_none());
    assert_eq!(s.get(&old_running).unwrap().state, SessionState::Running { pid: me });
    assert!(index.prune(0, u64::MAX).unwrap().removed.iter().all(|s| s.id != old_running));
}

/// Writes a session's journal and, as the running session would, its index
/// records; returns nothing but leaves both on disk.
fn live_session(tmp: &Path, index: &Index, n: u64) {
    let me = std::process::id();
    let parent = (n % 4 == 1).then(|| "20260101T000000.000Z-00000000".to_string());
    let meta = SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: me,
        shell: "/bin/zsh".into(),
        cwd: format!("/work/{}", n % 3),
        version: "0.1.0".into(),
        parent: parent.clone(),
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    };
    let dir = SessionDir::create(tmp, meta).unwrap();
    let mut journal = Journal::open(dir.journal_path(), SyncPolicy::Never).unwrap();
    let mut feed = RecordFeed::new(dir.id(), parent);
    let mut ts = n * DAY_MS / 3;
    let mut write = |entry: JournalEntry| {
        ts += 40 * 60_000;
        journal.append_at(&entry, ts).unwrap();
        if let Some(record) = feed.feed(ts, &entry) {
            index.append(&record).unwrap();
        }
    };
    let started = |pid| JournalEntry::SessionStart {
        session: "other".into(),
        pid,
        shell: "/bin/zsh".into(),
        cwd: format!("/work/{}", n % 3),
        os: "linux".into(),
        version: "0.1.0".into(),
    };
    write(started(DEAD_PID));
    for t in 1..=(n % 5) as u32 {
        write(JournalEntry::Instruction { turn: t, text: format!("task {n}.{t} {}", "x".repeat(t as usize * 90)) });
        if t == 2 {
            write(JournalEntry::Instruction { turn: t, text: "and steer".into() });
        }
        write(JournalEntry::UserCommand { command: "ls".into(), cwd: None, exit_code: Some(0), output: String::new() });
        write(JournalEntry::TurnEnd {
            turn: t,
            reason: TurnEndReason::Answered,
            usage: Usage { input_tokens: n + 1, output_tokens: t.into(), cache_read_tokens: 3, cache_write_tokens: n },
            commands: t,
            cost_micros: None,
            descendants: None,
        });
    }
    match n % 4 {
        0 => write(JournalEntry::SessionEnd { exit_code: Some(0) }),
        1 => {
            write(JournalEntry::SessionEnd { exit_code: Some(1) });
            write(started(me));
        }
        2 => write(started(me)),
        _ => {}
    }
}

#[test]
fn reindex_rebuilds_what_the_sessions_appended() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    for n in 0..40 {
        live_session(tmp.path(), &index, n);
    }
    // A directory that is not a session, and one with a broken meta.json.
    fs::create_dir(tmp.path().join("sessions/stray")).unwrap();
    fs::create_dir(tmp.path().join("sessions/broken")).unwrap();
    fs::write(tmp.path().join("sessions/broken/meta.json"), "{").unwrap();
    let incremental = index.load().unwrap();
    assert_eq!(incremental.len(), 40);
    assert!(incremental.sessions().iter().any(|s| matches!(s.state, SessionState::Running { .. })));
    assert!(incremental.sessions().iter().any(|s| s.state == SessionState::Crashed));
    assert!(incremental.sessions().iter().any(|s| s.state == SessionState::Ended { exit_code: Some(0) }));

    fs::remove_file(index.path()).unwrap();
    let report = index.reindex().unwrap();
    assert_eq!((report.sessions, report.skipped_lines, report.problems.len()), (40, 0, 2));
    let rebuilt = index.load().unwrap();
    assert_eq!(rebuilt.sessions(), incremental.sessions());
    assert_eq!(rebuilt.lines, 40);
}

#[test]
fn concurrent_appends_survive_concurrent_compaction() {
    const WRITERS: usize = 4;
    const SESSIONS: usize = 60;
    const TURNS: u32 = 5;
    let tmp = tempfile::tempdir().unwrap();
    // Each writer says when it has finished a session; the compactor
    // compacts once per batch of those, while the writers go on appending.
    let (finished, sessions_done) = std::sync::mpsc::channel::<()>();
    let compactor = {
        let dir = tmp.path().to_owned();
        std::thread::spawn(move || {
            let index = Index::open(&dir).unwrap();
            let mut runs = 0;
            // Ends when every writer has finished and dropped its sender.
            while sessions_done.recv().is_ok() {
                while sessions_done.try_recv().is_ok() {}
                index.compact().unwrap();
                runs += 1;
            }
            runs
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (dir, finished) = (tmp.path().to_owned(), finished.clone());
            std::thread::spawn(move || {
                let index = Index::open(&dir).unwrap();
                for s in 0..SESSIONS {
                    let id = format!("w{w}-s{s}");
                    index.append(&start(&id, 1, DEAD_PID)).unwrap();
                    for t in 1..=TURNS {
                        index.append(&turn(&id, 2, t)).unwrap();
                    }
                    index.append(&end(&id, 3)).unwrap();
                    finished.send(()).unwrap();
                }
            })
        })
        .collect();
    drop(finished);
    for w in writers {
        w.join().unwrap();
    }
    let runs = compactor.join().unwrap();
    assert!(runs > 0);
    let index = Index::open(tmp.path()).unwrap();
    let s = index.load().unwrap();
    assert_eq!((s.len(), s.skipped, s.torn_tail), (WRITERS * SESSIONS, 0, false));
    for summary in s.sessions() {
        assert_eq!(summary.turns, TURNS, "{}", summary.id);
        assert_eq!(summary.usage.input_tokens, 10 * u64::from(TURNS), "{}", summary.id);
        assert_eq!(summary.state, SessionState::Ended { exit_code: Some(0) }, "{}", summary.id);
    }
}

#[test]
fn a_compaction_after_a_load_reuses_it_unless_the_file_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    for i in 0..400u64 {
        let id = format!("s{i:04}");
        index.append(&start(&id, i, DEAD_PID)).unwrap();
        for t in 1..=4 {
            index.append(&turn(&id, i + u64::from(t), t)).unwrap();
        }
    }
    let loaded = index.load().unwrap();
    assert!(loaded.needs_compaction());
    // Another session appends after the load: the compaction must see it.
    index.append(&start("late", 10_000, DEAD_PID)).unwrap();
    index.compact_if_needed(&loaded).unwrap().unwrap();
    let after = index.load().unwrap();
    assert_eq!(after.len(), 401, "the late session survives");
    // Unchanged since the load: the same sessions, one line each.
    index.append(&turn("late", 10_001, 1)).unwrap();
    for _ in 0..2000 {
        index.append(&turn("s0001", 20_000, 9)).unwrap();
    }
    let loaded = index.load().unwrap();
    let done = index.compact_if_needed(&loaded).unwrap().unwrap();
    assert_eq!(done.sessions, 401);
    let again = index.load().unwrap();
    assert_eq!(again.sessions(), loaded.sessions());
    assert_eq!(again.lines, 401);
}
