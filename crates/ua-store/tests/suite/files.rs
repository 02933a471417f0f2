//! Session directories and journal files on a real filesystem.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ua_protocol::conversation::Message;
use ua_protocol::event::Usage;
use ua_protocol::journal::{DecisionOutcome, JournalEntry, TurnEndReason};
use ua_store::StoreError;
use ua_store::journal::{Journal, SyncPolicy, read_journal};
use ua_store::session::{SessionDir, SessionMeta};

fn meta() -> SessionMeta {
    SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: 4242,
        shell: "/bin/zsh".into(),
        cwd: "/home/u".into(),
        version: "0.1.0".into(),
        parent: None,
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    }
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn sample_entries() -> Vec<JournalEntry> {
    vec![
        JournalEntry::SessionStart {
            session: "s1".into(),
            pid: 1,
            shell: "/bin/bash".into(),
            cwd: "/".into(),
            os: "linux".into(),
            version: "0.1.0".into(),
        },
        JournalEntry::UserCommand {
            command: "make".into(),
            cwd: Some("/src".into()),
            exit_code: Some(2),
            output: "error: ünïcode \"quoted\"\nline two\r\n".into(),
        },
        JournalEntry::Instruction { turn: 1, text: "why did make fail?".into() },
        JournalEntry::ModelRequest {
            turn: 1,
            call: 1,
            backend: "openai".into(),
            model: "gpt-4o".into(),
            system: "sys\nwith lines".into(),
            messages_appended: vec![Message::user_text("why did make fail?")],
            omitted: vec![],
            tools: Some(vec![ua_protocol::tool::shell_tool()]),
            purpose: ua_protocol::journal::CallPurpose::Conversation,
        },
        JournalEntry::Decision {
            turn: 1,
            tool_use_id: "c1".into(),
            command: "rm -rf build".into(),
            risk: "destructive".into(),
            outcome: DecisionOutcome::Denied,
            decided_by: "user".into(),
            approver: Some("u".into()),
        },
        JournalEntry::TurnEnd {
            turn: 1,
            reason: TurnEndReason::Stopped,
            usage: Usage::default(),
            commands: 0,
            cost_micros: None,
            descendants: None,
        },
        JournalEntry::SessionEnd { exit_code: Some(0) },
    ]
}

#[test]
fn session_directory_and_files_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data/unixagent");
    let session = SessionDir::create(&data, meta()).unwrap();
    assert_eq!(session.path(), data.join("sessions").join(session.id()));
    assert_eq!(mode(session.path()), 0o700);
    assert_eq!(mode(&data.join("sessions")), 0o700);
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&session.path().join("meta.json")), 0o600);

    let mut j = Journal::open(session.journal_path(), SyncPolicy::EveryLine).unwrap();
    j.append(&JournalEntry::Instruction { turn: 1, text: "x".into() }).unwrap();
    assert_eq!(mode(&session.journal_path()), 0o600);
}

#[test]
fn meta_round_trips_and_reopens() {
    let tmp = tempfile::tempdir().unwrap();
    let session = SessionDir::create(tmp.path(), meta()).unwrap();
    let m = session.meta().unwrap();
    assert_eq!(m.id, session.id());
    assert!(m.created_ms > 0);
    assert_eq!(m.shell, "/bin/zsh");
    let again = SessionDir::open(session.path()).unwrap();
    assert_eq!(again, session);
}

#[test]
fn two_sessions_get_distinct_ids_in_creation_order() {
    let tmp = tempfile::tempdir().unwrap();
    let a = SessionDir::create(tmp.path(), meta()).unwrap();
    let b = SessionDir::create(tmp.path(), meta()).unwrap();
    assert_ne!(a.id(), b.id());
    // Same millisecond: only the random suffix differs, so order is not
    // promised; different milliseconds sort by time.
    if a.id()[..19] != b.id()[..19] {
        assert!(a.id() < b.id());
    }
}

#[test]
fn journal_round_trips_every_line() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let mut j = Journal::open(&path, SyncPolicy::TurnBoundaries).unwrap();
    let entries = sample_entries();
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(j.append(e).unwrap(), i as u64 + 1);
    }
    let read = read_journal(&path).unwrap();
    assert!(read.skipped.is_empty() && !read.torn_tail && !read.unterminated);
    assert_eq!(read.entries().cloned().collect::<Vec<_>>(), entries);
    let seqs: Vec<u64> = read.lines.iter().map(|l| l.seq).collect();
    assert_eq!(seqs, (1..=entries.len() as u64).collect::<Vec<_>>());
    assert!(read.lines.windows(2).all(|w| w[0].ts <= w[1].ts));
    assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), entries.len(), "one line per entry");
}

#[test]
fn torn_last_line_is_tolerated_and_closed_off_on_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let entries = sample_entries();
    {
        let mut j = Journal::open(&path, SyncPolicy::Never).unwrap();
        j.append(&entries[0]).unwrap();
        j.append(&entries[1]).unwrap();
    }
    // A crash in the middle of the third write.
    fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(br#"{"seq":3,"ts":9,"type":"instru"#).unwrap();

    let read = read_journal(&path).unwrap();
    assert_eq!(read.lines.len(), 2);
    assert!(read.torn_tail);
    assert!(read.skipped.is_empty());

    let mut j = Journal::open(&path, SyncPolicy::Never).unwrap();
    assert_eq!(j.next_seq(), 3);
    j.append(&entries[2]).unwrap();
    let read = read_journal(&path).unwrap();
    assert_eq!(read.entries().cloned().collect::<Vec<_>>(), entries[..3].to_vec());
    assert_eq!(read.skipped.len(), 1, "the old fragment is now a corrupt middle line");
    assert!(!read.torn_tail);
}

#[test]
fn corrupt_middle_lines_are_reported_and_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.jsonl");
    let entries = sample_entries();
    let mut j = Journal::open(&path, SyncPolicy::Never).unwrap();
    j.append(&entries[0]).unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{not json}\n{\"type\":\"mystery\"}\n")
        .unwrap();
    j.append(&entries[1]).unwrap();

    let read = read_journal(&path).unwrap();
    assert_eq!(read.entries().cloned().collect::<Vec<_>>(), entries[..2].to_vec());
    assert_eq!(read.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 3]);
    assert!(!read.torn_tail);
}

#[test]
fn a_full_disk_gives_one_clear_error_and_the_writer_keeps_going() {
    let mut j = Journal::open("/dev/full", SyncPolicy::EveryLine).unwrap();
    let e = JournalEntry::Error { turn: None, message: "x".into() };

    let first = j.append(&e).unwrap_err();
    let text = first.to_string();
    assert!(matches!(first, StoreError::JournalWrite { .. }), "{first:?}");
    assert!(text.starts_with("cannot write the session journal /dev/full: "), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(first.should_report());

    for _ in 0..3 {
        let again = j.append(&e).unwrap_err();
        assert!(!again.should_report(), "a run of failures is reported once");
    }
    assert_eq!(j.next_seq(), 1, "nothing was written");
    assert!(j.sync().is_ok(), "syncing a device is a no-op, not an error");
}

#[test]
fn unwritable_places_fail_with_the_path_in_the_message() {
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("file");
    fs::write(&blocker, "").unwrap();
    let err = SessionDir::create(&blocker, meta()).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with(&format!("cannot create {}", blocker.join("sessions").display())), "{text}");

    let err = Journal::open(tmp.path().join("missing/journal.jsonl"), SyncPolicy::Never).unwrap_err();
    assert!(err.to_string().contains("missing/journal.jsonl"), "{err}");
}
