//! How long resuming a long session takes: generates a journal of about
//! 50,000 lines (over 100 MB, mostly command output), then times
//! `resume::load` from its checkpoint, without the side file, reopening the
//! journal for writing, and, for contrast, reading the whole file.
//!
//! ```text
//! cargo run -p ua-store --release --example resume_load [ENTRIES] [DIR]
//! ```
//!
//! `DIR` keeps the generated session (default: a temporary directory).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use ua_store::fold::ConversationFold;
use ua_store::journal::{Journal, SyncPolicy, read_journal};
use ua_store::resume::load;
use ua_store::session::{SessionDir, SessionMeta};

#[path = "../tests/suite/long_session.rs"]
mod long_session;

fn main() {
    let mut args = std::env::args().skip(1);
    let entries: u64 = args.next().map_or(50_000, |a| a.parse().expect("ENTRIES is a number"));
    let tmp = tempfile::tempdir().unwrap();
    let root = args.next().map_or_else(|| tmp.path().to_owned(), std::path::PathBuf::from);

    let meta = SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: std::process::id(),
        shell: "/bin/bash".into(),
        cwd: "/work".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        parent: None,
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    };
    let dir = SessionDir::create(&root, meta).unwrap();
    let started = Instant::now();
    let journal = Journal::open(dir.journal_path(), SyncPolicy::Never).unwrap();
    let mut session = long_session::Session::new(journal, 6 * 1024, 12 * 1024);
    long_session::generate(&mut session, entries, 20).unwrap();
    let len = std::fs::metadata(dir.journal_path()).unwrap().len();
    println!(
        "generated {} lines, {} turns, {:.1} MB in {:.1} s: {}",
        session.journal.next_seq() - 1,
        session.turn,
        mb(len),
        started.elapsed().as_secs_f64(),
        dir.path().display()
    );
    drop(session);

    let (r, t) = best_of(5, || load(dir.path()).unwrap());
    println!(
        "resume::load, checkpoint via checkpoint.json: {:>8.2} ms, {:>9} bytes read, {} messages, next turn {}",
        ms(t),
        r.report.bytes_read,
        r.conversation.len(),
        r.next_turn
    );
    let (_, t) = best_of(5, || Journal::open(dir.journal_path(), SyncPolicy::Never).unwrap());
    println!("Journal::open, to append again:              {:>8.2} ms", ms(t));

    let side = dir.path().join(ua_store::checkpoint::CHECKPOINT_FILE);
    let kept = std::fs::read(&side).unwrap();
    std::fs::remove_file(&side).unwrap();
    let (r, t) = best_of(5, || load(dir.path()).unwrap());
    println!("resume::load, no side file (backward scan):   {:>8.2} ms, {:>9} bytes read", ms(t), r.report.bytes_read);
    std::fs::write(&side, kept).unwrap();

    let (n, t) = best_of(1, || {
        let contents = read_journal(&dir.journal_path()).unwrap();
        let mut fold = ConversationFold::default();
        for l in &contents.lines {
            fold.push(Some(l.seq), &l.entry);
        }
        fold.finish().conversation.len()
    });
    println!("whole journal read and folded, for contrast:  {:>8.2} ms, {} messages", ms(t), n);
}

/// The fastest of `runs` runs, with its result.
fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut best: Option<(T, Duration)> = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        let took = start.elapsed();
        if best.as_ref().is_none_or(|(_, b)| took < *b) {
            best = Some((out, took));
        }
    }
    best.expect("at least one run")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
