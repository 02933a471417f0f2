//! What the task board costs, with the release binary:
//!
//! - **Claiming at once**: 20 `unixagent board claim --json` processes
//!   started together on a board of 10 ready tasks. Each task must go to
//!   exactly one of them (checked every round: 10 exit 0 with distinct
//!   ids, 10 exit 1, nothing left in todo); the row is the time from the
//!   first spawn to the last exit.
//! - **Reading a big board**: `unixagent board --json` on a board of 1,000
//!   tasks (bodies of about 600 bytes, spread over the five states, some
//!   depending on others, the ones in doing assigned to a live process).
//!   Target p99 under 50 ms.
//! - **Watching**: a [`Watcher`] in this process over a board of 100
//!   tasks; each round moves one task with `rename(2)` and times until the
//!   change arrives. Target under 100 ms. Then the board is left alone for
//!   two seconds and the watcher's reads of it counted: the target is
//!   none (the thread sleeps in the kernel until a file changes).
//! - **In a session**: `unixagent --json` at its prompt over a board of
//!   100 tasks; each round moves one task with `rename(2)` and times until
//!   the session's `task` event is read from its stdout. Target under
//!   100 ms. Then the session is left alone for two seconds and the
//!   context switches of all its threads counted (`/proc/PID/task/*/status`,
//!   as the proxy benchmark counts them): the target is none.
//!
//! Takes the release binary like the other benchmarks (`$UA_BENCH_BIN`,
//! else `target/release/unixagent`); `UA_BENCH_QUICK=1` runs fewer
//! rounds.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use ua_store::board::watch::Watcher;
use ua_store::board::{Board, Claimant, NewTask, State};

#[path = "support/release.rs"]
mod release;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("board benchmark: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let bin = release::release_binary()?;
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some();
    let tmp = tempfile::tempdir()?;
    let claims = claiming(&bin, tmp.path(), if quick { 5 } else { 30 })?;
    let reads = reading(&bin, tmp.path(), if quick { 20 } else { 200 })?;
    let (latency, idle_reads) = watching(tmp.path(), if quick { 20 } else { 100 })?;
    let (session, idle_switches) = in_a_session(&bin, tmp.path(), if quick { 20 } else { 100 })?;
    println!("\n{:<60} {:>10} {:>10}  target", "", "p50", "p99");
    row("20 processes claim 10 ready tasks: time to drain", claims, "each task exactly once");
    row("unixagent board --json, 1,000 tasks", reads, "p99 < 50 ms");
    row("a move → the watcher's change (in process)", latency, "< 100 ms");
    println!("{:<60} {idle_reads:>10}  0", "the watcher's reads of the board in 2 s idle");
    row("a move → the task event on a session's NDJSON stream", session, "< 100 ms");
    println!("{:<60} {idle_switches:>10}  0", "the session's context switches in 2 s idle");
    Ok(())
}

fn row(name: &str, mut v: Vec<f64>, target: &str) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!("{name:<60} {:>8.1}ms {:>8.1}ms  {target}", at(0.5), at(0.99));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `unixagent board ARGS` on `board`, outside any session.
fn board_cmd(bin: &Path, home: &Path, board: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(["board"])
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("UNIXAGENT_BOARD", board)
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("UNIXAGENT_PID")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn claiming(bin: &Path, tmp: &Path, rounds: usize) -> anyhow::Result<Vec<f64>> {
    let mut times = Vec::new();
    for round in 0..=rounds {
        let root = tmp.join(format!("claim-{round}/board"));
        let board = Board::create(&root)?;
        for i in 0..10 {
            board.add(&NewTask::titled(&format!("task {i}")), 0)?;
        }
        let start = Instant::now();
        let children = (0..20)
            .map(|i| {
                board_cmd(bin, tmp, &root, &["claim", "--json"])
                    .env("UNIXAGENT_SESSION", format!("claimer-{i}"))
                    .spawn()
                    .context("starting a claimer")
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut ids = Vec::new();
        let mut none = 0;
        for child in children {
            let o = child.wait_with_output()?;
            match o.status.code() {
                Some(0) => {
                    let v: serde_json::Value = serde_json::from_slice(&o.stdout)?;
                    ids.push(v["id"].as_u64().context("a claimed task's id")?);
                }
                Some(1) => none += 1,
                other => anyhow::bail!("a claimer exited {other:?}: {}", String::from_utf8_lossy(&o.stderr)),
            }
        }
        let took = ms(start.elapsed());
        ids.sort_unstable();
        ensure!(ids == (1..=10).collect::<Vec<u64>>() && none == 10, "claims were not one per task: {ids:?}");
        ensure!(board.snapshot()?.counts()[State::Todo as usize] == 0, "tasks were left in todo");
        // The first round warms the page cache.
        if round > 0 {
            times.push(took);
        }
    }
    Ok(times)
}

fn reading(bin: &Path, tmp: &Path, rounds: usize) -> anyhow::Result<Vec<f64>> {
    let root = tmp.join("big/board");
    let board = Board::create(&root)?;
    let body = "Do the thing described here, carefully.\n\n## Acceptance criteria\n\n".to_string()
        + &"- [ ] one criterion that the work must meet\n".repeat(12);
    for i in 0..1000u32 {
        let depends_on = if i % 7 == 3 { vec![i] } else { vec![] };
        let tags = vec!["bench".to_string(), format!("group-{}", i % 10)];
        board.add(&NewTask { title: format!("Task number {i}"), body: body.clone(), depends_on, tags }, 0)?;
    }
    let me = Claimant { name: "bench".into(), pid: Some(std::process::id()) };
    let states = [State::Done, State::Done, State::Doing, State::Blocked, State::Review];
    for id in (1..=1000u32).filter(|i| i % 2 == 0) {
        let to = states[(id as usize / 2) % states.len()];
        board.move_to(id, to, (to == State::Blocked).then_some("waiting"), &me, 0)?;
    }
    let mut times = Vec::new();
    for round in 0..=rounds {
        let start = Instant::now();
        let o = board_cmd(bin, tmp, &root, &["--json"]).output()?;
        let took = ms(start.elapsed());
        ensure!(o.status.success(), "board --json failed: {}", String::from_utf8_lossy(&o.stderr));
        if round == 0 {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout)?;
            ensure!(v["tasks"].as_array().map(Vec::len) == Some(1000), "not every task was read");
            continue;
        }
        times.push(took);
    }
    Ok(times)
}

fn watching(tmp: &Path, rounds: usize) -> anyhow::Result<(Vec<f64>, u64)> {
    let root = tmp.join("watched/board");
    let board = Board::create(&root)?;
    for i in 0..100 {
        board.add(&NewTask::titled(&format!("task {i}")), 0)?;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let watcher = Watcher::start(board.clone(), move |changes| {
        let _ = tx.send((Instant::now(), changes));
    })?;
    let mut times = Vec::new();
    for round in 0..rounds {
        let id = u32::try_from(round % 100).unwrap_or(0) + 1;
        let (from, path) = board.find(id)?;
        let state = if from == State::Todo { State::Doing } else { State::Todo };
        let to = root.join(state.name()).join(path.file_name().context("a file name")?);
        let start = Instant::now();
        std::fs::rename(&path, &to)?;
        loop {
            let (at, changes) = rx.recv_timeout(Duration::from_secs(5)).context("the change never arrived")?;
            if changes.iter().any(|c| c.id == id && c.state == state) {
                times.push(ms(at.duration_since(start)));
                break;
            }
        }
    }
    let before = watcher.reads();
    std::thread::sleep(Duration::from_secs(2));
    Ok((times, watcher.reads() - before))
}

/// The latency from a move to the `task` event of a running `unixagent
/// --json` session, and the session's context switches while idle.
fn in_a_session(bin: &Path, tmp: &Path, rounds: usize) -> anyhow::Result<(Vec<f64>, u64)> {
    use std::io::BufRead as _;
    let home = tmp.join("session-home");
    std::fs::create_dir_all(&home)?;
    let mut child = Command::new(bin)
        .args(["--shell", "/bin/bash", "--json"])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("ANTHROPIC_API_KEY", "unused: no instruction is given")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("UNIXAGENT_PID")
        .env_remove("UNIXAGENT_BOARD")
        .current_dir(&home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting a session")?;
    // Kept open: the session runs until its input ends.
    let input = child.stdin.take();
    let out = child.stdout.take().context("the session's stdout")?;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let next = || -> anyhow::Result<(Instant, serde_json::Value)> {
        let (at, line) = lines.recv_timeout(Duration::from_secs(10)).context("the session wrote nothing")?;
        Ok((at, serde_json::from_str(&line).with_context(|| format!("not JSON: {line}"))?))
    };
    let (_, start) = next()?;
    let journal = start["journal"].as_str().context("the session event names no journal")?;
    let root = Path::new(journal).parent().context("the session's directory")?.join("board");
    let board = Board::open(&root)?;
    for i in 0..100 {
        board.add(&NewTask::titled(&format!("task {i}")), 0)?;
    }
    let mut added = 0;
    while added < 100 {
        if next()?.1["type"] == "task" {
            added += 1;
        }
    }
    let mut times = Vec::new();
    for round in 0..rounds {
        let id = u32::try_from(round % 100).unwrap_or(0) + 1;
        let (from, path) = board.find(id)?;
        let state = if from == State::Todo { State::Doing } else { State::Todo };
        let to = root.join(state.name()).join(path.file_name().context("a file name")?);
        let start = Instant::now();
        std::fs::rename(&path, &to)?;
        loop {
            let (at, v) = next()?;
            if v["type"] == "task" && v["id"] == id && v["state"] == state.name() {
                times.push(ms(at.duration_since(start)));
                break;
            }
        }
    }
    let pid = child.id();
    let before = switches(pid)?;
    std::thread::sleep(Duration::from_secs(2));
    let idle = switches(pid)? - before;
    drop(input);
    let _ = child.wait();
    Ok((times, idle))
}

/// Voluntary and involuntary context switches of all of a process's
/// threads: each is a time it ran.
fn switches(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).context("listing the session's threads")? {
        let status = std::fs::read_to_string(task?.path().join("status"))?;
        for key in ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"] {
            total += status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .with_context(|| format!("{key} is missing"))?;
        }
    }
    Ok(total)
}
