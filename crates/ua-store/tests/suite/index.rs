//! The session index written by several processes at once.
//!
//! The test binary re-runs itself: a child runs only
//! [`appender_child`], which appends sessions when the environment says so
//! until the parent, having compacted enough times under it, tells it to
//! stop, and then says how many sessions it wrote.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ua_protocol::event::Usage;
use ua_store::index::{Index, Record, SessionState};

const CHILD_DIR: &str = "UA_STORE_INDEX_CHILD_DIR";
const CHILD_NUMBER: &str = "UA_STORE_INDEX_CHILD_NUMBER";
const STOP_FILE: &str = "stop";
const REPORT: &str = "appended sessions: ";
const CHILDREN: usize = 4;
const COMPACTIONS: usize = 10;
const TURNS: u32 = 4;

/// Appends whole sessions until the stop file appears; returns how many.
fn append_sessions(dir: &Path, writer: usize) -> usize {
    let index = Index::open(dir).unwrap();
    let mut s = 0;
    while !dir.join(STOP_FILE).exists() {
        let id = format!("p{writer}-s{s}");
        let start = Record::Start {
            id: id.clone(),
            ts: 1,
            cwd: format!("/work/{writer}"),
            shell: "/bin/sh".into(),
            pid: std::process::id(),
            parent: None,
            first_instruction: None,
        };
        index.append(&start).unwrap();
        for turn in 1..=TURNS {
            let usage = Usage { input_tokens: 7, output_tokens: 3, ..Usage::default() };
            index
                .append(&Record::Turn {
                    id: id.clone(),
                    ts: 2,
                    turn,
                    instruction: None,
                    usage,
                    commands: 1,
                    cost_micros: None,
                })
                .unwrap();
        }
        index.append(&Record::End { id, ts: 3, exit_code: Some(0) }).unwrap();
        s += 1;
        // Real sessions append a line per turn, not back to back; without
        // a pause four appenders keep a shared lock held almost all the
        // time, and the compactor waits seconds for a gap.
        std::thread::sleep(Duration::from_millis(1));
    }
    s
}

/// Runs only in a child started by [`processes_append_while_another_compacts`].
#[test]
fn appender_child() {
    let (Some(dir), Some(n)) = (std::env::var_os(CHILD_DIR), std::env::var_os(CHILD_NUMBER)) else { return };
    let written = append_sessions(Path::new(&dir), n.to_str().unwrap().parse().unwrap());
    println!("{REPORT}{written}");
}

fn spawn_child(dir: &Path, n: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "suite::index::appender_child", "--nocapture"])
        .env(CHILD_DIR, dir)
        .env(CHILD_NUMBER, n.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn processes_append_while_another_compacts() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open(tmp.path()).unwrap();
    let mut children: Vec<Child> = (0..CHILDREN).map(|n| spawn_child(tmp.path(), n)).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut compactions = 0;
    let mut last_size = 0;
    loop {
        // Compact whenever something was appended since the last time.
        let size = std::fs::metadata(index.path()).map_or(0, |m| m.len());
        if size != last_size {
            index.compact().unwrap();
            compactions += 1;
            last_size = std::fs::metadata(index.path()).map_or(0, |m| m.len());
            if compactions == COMPACTIONS {
                std::fs::write(tmp.path().join(STOP_FILE), "").unwrap();
            }
        }
        if children.iter_mut().all(|c| c.try_wait().unwrap().is_some()) {
            break;
        }
        assert!(Instant::now() < deadline, "the appending processes did not finish in time");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut written = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a child failed: {}", String::from_utf8_lossy(&out.stdout));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let n = stdout.lines().find_map(|l| l.strip_prefix(REPORT)).expect("the child's report");
        written.push(n.parse::<usize>().unwrap());
    }
    assert!(compactions >= COMPACTIONS, "{compactions}");

    let s = index.load().unwrap();
    assert_eq!((s.len(), s.skipped, s.torn_tail), (written.iter().sum(), 0, false));
    for summary in s.sessions() {
        assert_eq!((summary.turns, summary.commands), (TURNS, u64::from(TURNS)), "{}", summary.id);
        assert_eq!(summary.usage.input_tokens, 7 * u64::from(TURNS), "{}", summary.id);
        assert_eq!(summary.state, SessionState::Ended { exit_code: Some(0) }, "{}", summary.id);
    }
    for (n, written) in written.into_iter().enumerate() {
        assert_eq!(s.in_cwd(&format!("/work/{n}")).count(), written);
    }
}
