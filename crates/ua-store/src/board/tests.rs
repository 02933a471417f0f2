use super::*;

fn board() -> (tempfile::TempDir, Board) {
    let dir = tempfile::tempdir().unwrap();
    let b = Board::create(dir.path().join("board")).unwrap();
    (dir, b)
}

fn me(name: &str) -> Claimant {
    Claimant { name: name.into(), pid: Some(std::process::id()) }
}

fn all_alive(_: &str, _: Option<u32>) -> bool {
    true
}

#[test]
fn tasks_are_files_in_their_state_directory() {
    let (_d, b) = board();
    let t = b
        .add(&NewTask { body: "Parse it.".into(), tags: vec!["parser".into()], ..NewTask::titled("Fix the parser") }, 0)
        .unwrap();
    assert_eq!(t.id, 1);
    assert_eq!(t.path, b.root().join("todo/1-fix-the-parser.md"));
    let text = fs::read_to_string(&t.path).unwrap();
    assert_eq!(
        text,
        "---\nid: 1\ntitle: Fix the parser\ncreated: \"1970-01-01T00:00:00.000Z\"\nupdated: \"1970-01-01T00:00:00.000Z\"\ntags: [parser]\n---\nParse it.\n"
    );
    let (moved, from) = b.move_to(1, State::Review, None, &me("s"), 1000).unwrap();
    assert_eq!((from, moved.state), (State::Todo, State::Review));
    assert!(!t.path.exists() && b.root().join("review/1-fix-the-parser.md").exists());
    assert_eq!(moved.updated.as_deref(), Some("1970-01-01T00:00:01.000Z"));
}

#[test]
fn ids_are_never_reused_even_after_a_task_is_deleted() {
    let (_d, b) = board();
    let a = b.add(&NewTask::titled("a"), 0).unwrap();
    fs::remove_file(&a.path).unwrap();
    assert_eq!(b.add(&NewTask::titled("b"), 0).unwrap().id, 2);
    // A hand-made task with a higher id moves the count on.
    fs::write(b.root().join("todo/10-by-hand.md"), "---\ntitle: by hand\n---\n").unwrap();
    assert_eq!(b.add(&NewTask::titled("c"), 0).unwrap().id, 11);
}

#[test]
fn ids_are_unique_across_threads_adding_at_once() {
    let (_d, b) = board();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let b = b.clone();
            std::thread::spawn(move || {
                (0..10).map(|j| b.add(&NewTask::titled(&format!("t{i}-{j}")), 0).unwrap().id).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<u32> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=80).collect::<Vec<_>>());
}

#[test]
fn a_claim_takes_the_first_ready_task_and_respects_dependencies() {
    let (_d, b) = board();
    let one = b.add(&NewTask::titled("one"), 0).unwrap();
    let two = b.add(&NewTask { depends_on: vec![one.id], ..NewTask::titled("two") }, 0).unwrap();
    let e = b.claim(Some(two.id), &me("s-1"), &all_alive, 0).unwrap_err();
    assert!(matches!(&e, BoardError::NotReady { why, .. } if why == "it depends on task 1, which is not done"), "{e}");
    let c = b.claim(None, &me("s-1"), &all_alive, 0).unwrap();
    assert_eq!((c.id, c.state, c.assignee.as_deref()), (one.id, State::Doing, Some("s-1")));
    assert_eq!(c.assignee_pid, Some(std::process::id()));
    let e = b.claim(None, &me("s-2"), &all_alive, 0).unwrap_err();
    assert!(matches!(&e, BoardError::NoneReady { why } if why.contains("waits on tasks")), "{e}");
    let e = b.claim(Some(one.id), &me("s-2"), &all_alive, 0).unwrap_err();
    assert!(matches!(&e, BoardError::NotReady { why, .. } if why == "it is in doing, claimed by s-1"), "{e}");
    b.move_to(one.id, State::Done, None, &me("s-1"), 0).unwrap();
    assert_eq!(b.claim(None, &me("s-2"), &all_alive, 0).unwrap().id, two.id);
    let e = b.claim(None, &me("s-3"), &all_alive, 0).unwrap_err();
    assert!(matches!(&e, BoardError::NoneReady { why } if why == "nothing is in todo"), "{e}");
    assert!(matches!(b.claim(Some(99), &me("s"), &all_alive, 0), Err(BoardError::NoSuchTask { id: 99 })));
}

#[test]
fn threads_claiming_at_once_each_get_a_different_task() {
    let (_d, b) = board();
    for i in 0..10 {
        b.add(&NewTask::titled(&format!("task {i}")), 0).unwrap();
    }
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let b = b.clone();
            std::thread::spawn(move || b.claim(None, &me(&format!("s-{i}")), &all_alive, 0).ok().map(|t| (t.id, i)))
        })
        .collect();
    let won: Vec<(u32, i32)> = handles.into_iter().filter_map(|h| h.join().unwrap()).collect();
    let mut ids: Vec<u32> = won.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>(), "{won:?}");
    // Each file names the claimer that won it.
    for (id, i) in won {
        assert_eq!(b.get(id).unwrap().assignee, Some(format!("s-{i}")));
    }
}

#[test]
fn a_task_whose_assignee_is_gone_can_be_claimed_again() {
    let (_d, b) = board();
    let t = b.add(&NewTask::titled("orphan"), 0).unwrap();
    b.claim(None, &Claimant { name: "s-dead".into(), pid: Some(1) }, &all_alive, 0).unwrap();
    let alive = |s: &str, _: Option<u32>| s != "s-dead";
    let mut snap = b.snapshot().unwrap();
    snap.judge(&alive);
    assert!(snap.gone.contains(&t.id));
    // Not while it lives.
    assert!(matches!(b.claim(None, &me("s-2"), &all_alive, 0), Err(BoardError::NoneReady { .. })));
    let again = b.claim(None, &me("s-2"), &alive, 0).unwrap();
    assert_eq!((again.id, again.state, again.assignee.as_deref()), (t.id, State::Doing, Some("s-2")));
    // A task in doing without an assignee (moved by hand) is nobody's to take.
    let u = b.add(&NewTask::titled("by hand"), 0).unwrap();
    fs::rename(&u.path, b.root().join("doing").join(u.file_name())).unwrap();
    let mut snap = b.snapshot().unwrap();
    snap.judge(&|_: &str, _: Option<u32>| false);
    assert!(!snap.gone.contains(&u.id));
}

#[test]
fn blocked_needs_a_reason_and_leaving_blocked_drops_it() {
    let (_d, b) = board();
    let t = b.add(&NewTask::titled("x"), 0).unwrap();
    assert!(matches!(b.move_to(t.id, State::Blocked, None, &me("s"), 0), Err(BoardError::Invalid(_))));
    assert!(matches!(b.move_to(t.id, State::Blocked, Some("  "), &me("s"), 0), Err(BoardError::Invalid(_))));
    let (blocked, _) = b.move_to(t.id, State::Blocked, Some("needs an API key"), &me("s"), 0).unwrap();
    assert_eq!(blocked.blocked_by.as_deref(), Some("needs an API key"));
    let (doing, from) = b.move_to(t.id, State::Doing, None, &me("s-9"), 0).unwrap();
    assert_eq!((from, doing.blocked_by, doing.assignee.as_deref()), (State::Blocked, None, Some("s-9")));
    let (todo, _) = b.move_to(t.id, State::Todo, None, &me("s"), 0).unwrap();
    assert_eq!((todo.assignee, todo.assignee_pid), (None, None));
}

#[test]
fn a_broken_file_is_reported_and_never_rewritten() {
    let (_d, b) = board();
    let good = b.add(&NewTask::titled("good"), 0).unwrap();
    let path = b.root().join("todo/5-broken.md");
    let text = "---\nid: 5\ntitle: \"unterminated\nnote: kept\n---\nbody\n";
    fs::write(&path, text).unwrap();
    fs::write(b.root().join("todo/notes.md"), "just notes").unwrap();
    let snap = b.snapshot().unwrap();
    assert_eq!(snap.tasks.iter().map(|t| t.id).collect::<Vec<_>>(), [good.id]);
    let found: Vec<(Option<u32>, usize)> = snap.broken.iter().map(|x| (x.id, x.line)).collect();
    assert_eq!(found, [(Some(5), 3), (None, 1)]);
    for r in [
        b.claim(Some(5), &me("s"), &all_alive, 0).map(|_| ()),
        b.move_to(5, State::Done, None, &me("s"), 0).map(|_| ()),
    ] {
        let e = r.unwrap_err();
        assert!(matches!(&e, BoardError::Broken { line: 3, .. }), "{e}");
        assert!(e.to_string().starts_with(&format!("{}:3: ", path.display())), "{e}");
    }
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    // The good task is still claimed around it.
    assert_eq!(b.claim(None, &me("s"), &all_alive, 0).unwrap().id, good.id);
}

#[test]
fn hand_edits_survive_a_claim_and_a_move() {
    let (_d, b) = board();
    let t = b.add(&NewTask::titled("edit me"), 0).unwrap();
    let text = fs::read_to_string(&t.path).unwrap();
    let edited = text.replacen("title: edit me\n", "title: edit me\npriority: high   # hers\n", 1);
    assert_ne!(edited, text);
    fs::write(&t.path, &edited).unwrap();
    let c = b.claim(None, &me("s-1"), &all_alive, 1000).unwrap();
    let (done, _) = b.move_to(c.id, State::Done, None, &me("s-1"), 2000).unwrap();
    let after = fs::read_to_string(&done.path).unwrap();
    assert!(after.contains("priority: high   # hers\n"), "{after}");
    assert!(after.contains("assignee: \"s-1\"\n") || after.contains("assignee: s-1\n"), "{after}");
}

#[test]
fn the_plan_is_one_file() {
    let (_d, b) = board();
    assert_eq!(b.plan().unwrap(), None);
    b.set_plan("# Plan\n\n1. parse\n").unwrap();
    assert_eq!(b.plan().unwrap().as_deref(), Some("# Plan\n\n1. parse\n"));
    let missing = Board::at("/nonexistent/board");
    assert!(matches!(missing.plan(), Err(BoardError::NoBoard { .. })));
    assert!(matches!(missing.snapshot(), Err(BoardError::NoBoard { .. })));
    assert!(matches!(Board::open("/nonexistent/board"), Err(BoardError::NoBoard { .. })));
}

#[test]
fn liveness_follows_the_index_then_the_process() {
    assert!(liveness(None, "anyone", None), "a person is never gone");
    assert!(liveness(None, "s", Some(std::process::id())));
    // Process ids above the kernel's maximum are never in use.
    assert!(!liveness(None, "s", Some(4_194_304 + 7)));
}

#[test]
fn the_watcher_reports_moves_by_any_process_and_sleeps_otherwise() {
    let (_d, b) = board();
    let t = b.add(&NewTask::titled("watched"), 0).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let w = watch::Watcher::start(b.clone(), move |c| {
        let _ = tx.send(c);
    })
    .unwrap();
    // The move is made by another process: mv.
    let status = std::process::Command::new("mv")
        .arg(&t.path)
        .arg(b.root().join("blocked").join(t.file_name()))
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = std::time::Duration::from_secs(10);
    let got = rx.recv_timeout(deadline).unwrap();
    assert_eq!(
        got.iter().map(|c| (c.id, c.from, c.state)).collect::<Vec<_>>(),
        [(t.id, Some(State::Todo), State::Blocked)]
    );
    b.claim(None, &me("s"), &all_alive, 0).ok();
    b.move_to(t.id, State::Done, None, &me("s"), 0).unwrap();
    let mut states = Vec::new();
    while !states.contains(&State::Done) {
        states.extend(rx.recv_timeout(deadline).unwrap().into_iter().map(|c| c.state));
    }
    // Reading the board (as the watcher itself does) wakes nobody: after
    // many reads, one change costs the watcher its own settling reads (a
    // wake-up or two, as the change's notifications arrive), and then it
    // goes quiet. Were reads to wake it, each of its reads would wake it
    // again and it would never go quiet. Measured from quiet to quiet, so
    // the settling of the moves above is not counted.
    let before = quiet(&w);
    for _ in 0..5 {
        b.snapshot().unwrap();
    }
    let u = b.add(&NewTask::titled("next"), 0).unwrap();
    let got = rx.recv_timeout(deadline).unwrap();
    assert_eq!(got[0].id, u.id);
    let used = quiet(&w) - before;
    assert!((1..=2 * super::watch::SETTLE_READS as u64).contains(&used), "{used} reads for one change");
}

/// The watcher's read count once it has read nothing for a while; fails
/// if it never stops reading (a watcher woken by its own reads).
fn quiet(w: &watch::Watcher) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut last = w.reads();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let now = w.reads();
        if now == last {
            return now;
        }
        assert!(std::time::Instant::now() < deadline, "the watcher never went quiet ({now} reads)");
        last = now;
    }
}

/// Child agents write their reports into a dot-directory of the board many
/// times a second; none of that may wake a session's board watcher (every
/// session of a tree watches the same board).
#[test]
fn writes_in_a_dot_directory_of_the_board_wake_no_watcher() {
    let (_d, b) = board();
    let (tx, rx) = std::sync::mpsc::channel();
    let w = watch::Watcher::start(b.clone(), move |c| {
        let _ = tx.send(c);
    })
    .unwrap();
    let reports = b.root().join(".children-test");
    std::fs::create_dir(&reports).unwrap();
    let before = w.reads();
    {
        use std::io::Write;
        let mut report = std::fs::File::create(reports.join("c1")).unwrap();
        for i in 0..200 {
            writeln!(report, "{{\"type\":\"text\",\"text\":\"line {i}\"}}").unwrap();
            report.flush().unwrap();
        }
    }
    // A real change afterwards: once it has arrived, everything before it
    // has been seen.
    let t = b.add(&NewTask::titled("after the reports"), 0).unwrap();
    let got = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(got[0].id, t.id);
    let used = w.reads() - before;
    assert!((1..=super::watch::SETTLE_READS as u64 + 1).contains(&used), "{used} reads for one change");
}
