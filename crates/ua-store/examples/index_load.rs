//! How long the session index takes with 10,000 sessions: appending,
//! loading (before and after compaction), the usage report, compaction and
//! a reindex from journals.
//!
//! ```sh
//! cargo run -p ua-store --release --example index_load
//! # keep the data, then time whole processes that only read it:
//! cargo run -p ua-store --release --example index_load -- --keep /tmp/ua-index
//! time target/release/examples/index_load --read /tmp/ua-index
//! ```

use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use ua_protocol::event::Usage;
use ua_protocol::journal::{JournalEntry, TurnEndReason};
use ua_store::index::{Index, Record, RecordFeed, SessionState, Summaries};
use ua_store::journal::{Journal, SyncPolicy};
use ua_store::session::{SessionDir, SessionMeta};

const SESSIONS: u64 = 10_000;
const DAY_MS: u64 = 86_400_000;
/// Above `pid_max`: these sessions read as crashed.
const DEAD_PID: u32 = i32::MAX as u32;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["--read", dir] => read_once(Path::new(dir)),
        ["--keep", dir] => run(Path::new(dir)),
        [] => {
            let tmp = std::env::temp_dir().join(format!("ua-index-load-{}", std::process::id()));
            let result = run(&tmp);
            std::fs::remove_dir_all(&tmp).ok();
            result
        }
        _ => Err("usage: index_load [--keep DIR | --read DIR]".into()),
    }
}

/// What `sessions list` and `--usage --since 7d` do: one load, one report.
fn read_once(dir: &Path) -> Result<(), Box<dyn Error>> {
    let summaries = Index::open(dir)?.load()?;
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as u64 - 7 * DAY_MS;
    let usage = summaries.usage(since);
    println!("{} sessions, {} turns in the last 7 days", summaries.len(), usage.turns);
    Ok(())
}

fn run(tmp: &Path) -> Result<(), Box<dyn Error>> {
    let index = Index::open(tmp)?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as u64;
    let began = Instant::now();
    let mut appends = 0u32;
    // Two turns per session and an end for most: four lines a session, the
    // most the file holds before compaction is due.
    for n in 0..SESSIONS {
        let dir = session_dir(tmp, n)?;
        let mut journal = Journal::open(dir.journal_path(), SyncPolicy::Never)?;
        let mut feed = RecordFeed::new(dir.id(), None);
        let mut ts = now - 60 * DAY_MS + n * 60 * DAY_MS / SESSIONS;
        let pid = if n % 10 == 0 { std::process::id() } else { DEAD_PID };
        let mut entries = vec![JournalEntry::SessionStart {
            session: dir.id().into(),
            pid,
            shell: "/bin/bash".into(),
            cwd: format!("/home/u/project{}", n % 50),
            os: "linux".into(),
            version: "0.1.0".into(),
        }];
        for turn in 1..=2 {
            entries.push(JournalEntry::Instruction { turn, text: format!("look at the failing test number {n}") });
            entries.push(JournalEntry::TurnEnd {
                turn,
                reason: TurnEndReason::Answered,
                usage: Usage {
                    input_tokens: 2000 + n,
                    output_tokens: 300,
                    cache_read_tokens: 1500,
                    cache_write_tokens: 0,
                },
                commands: 2,
                cost_micros: None,
                descendants: None,
            });
        }
        if n % 10 != 0 && n % 7 != 0 {
            entries.push(JournalEntry::SessionEnd { exit_code: Some(0) });
        }
        for entry in entries {
            ts += 60_000;
            journal.append_at(&entry, ts)?;
            if let Some(record) = feed.feed(ts, &entry) {
                index.append(&record)?;
                appends += 1;
            }
        }
    }
    let building = began.elapsed();
    println!("{SESSIONS} sessions: {appends} records appended with their journals in {} ms", building.as_millis());
    let one = Instant::now();
    for _ in 0..1000 {
        index.append(&Record::Resumed { id: "nonexistent".into(), ts: now, pid: DEAD_PID })?;
    }
    println!("append alone: {:.1} µs each (1000 records)", one.elapsed().as_secs_f64() * 1e6 / 1000.0);
    index.append(&Record::Pruned { id: "nonexistent".into(), ts: now })?;

    report("uncompacted", &index, now)?;
    std::fs::copy(index.path(), tmp.join("uncompacted.jsonl"))?;
    let t = Instant::now();
    let done = index.compact()?;
    println!("compact: {} lines -> {} in {} ms", done.lines, done.sessions, t.elapsed().as_millis());
    report("compacted", &index, now)?;

    let t = Instant::now();
    let rebuilt = index.reindex()?;
    println!("reindex from {} journals: {} ms", rebuilt.sessions, t.elapsed().as_millis());
    // Leave the worst case behind for --read: four lines a session.
    std::fs::rename(tmp.join("sessions").join("index.jsonl"), tmp.join("compacted.jsonl"))?;
    std::fs::rename(tmp.join("uncompacted.jsonl"), tmp.join("sessions").join("index.jsonl"))?;
    Ok(())
}

fn session_dir(tmp: &Path, n: u64) -> Result<SessionDir, Box<dyn Error>> {
    let meta = SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: DEAD_PID,
        shell: "/bin/bash".into(),
        cwd: format!("/home/u/project{}", n % 50),
        version: "0.1.0".into(),
        parent: None,
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    };
    Ok(SessionDir::create(tmp, meta)?)
}

fn report(label: &str, index: &Index, now: u64) -> Result<(), Box<dyn Error>> {
    let size = std::fs::metadata(index.path())?.len();
    let mut loads = Vec::new();
    let mut summaries = Summaries::default();
    for _ in 0..10 {
        let t = Instant::now();
        summaries = index.load()?;
        loads.push(t.elapsed());
    }
    loads.sort();
    let t = Instant::now();
    let usage = summaries.usage(now - 7 * DAY_MS);
    let usage_time = t.elapsed();
    let t = Instant::now();
    let latest = summaries.latest_in("/home/u/project7").map(|s| s.id.clone());
    let latest_time = t.elapsed();
    let running = summaries.sessions().iter().filter(|s| matches!(s.state, SessionState::Running { .. })).count();
    println!(
        "{label}: {} lines, {:.1} MiB; load {} sessions ({running} running): median {} ms, max {} ms; \
         usage --since 7d ({} turns, {} tokens in): {} µs; latest in a cwd ({}): {} µs",
        summaries.lines,
        size as f64 / (1 << 20) as f64,
        summaries.len(),
        ms(loads[loads.len() / 2]),
        ms(loads[loads.len() - 1]),
        usage.turns,
        usage.total.input_tokens,
        usage_time.as_micros(),
        latest.is_some(),
        latest_time.as_micros(),
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}
