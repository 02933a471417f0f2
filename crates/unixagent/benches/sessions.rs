//! What reading sessions back costs with a big data directory: listing,
//! usage and `--continue`, each next to a fresh start measured in the same
//! run.
//!
//! The data directory holds 10,000 sessions (a `meta.json` and a small
//! journal each, over the last 60 days, one in 50 started in the directory
//! the benchmark runs in, one in 97 crashed) and one long session, the
//! newest there, whose journal has 50,000 entries and about 330 MB: turns
//! of up to five commands with outputs of 4–32 KB (each output twice, in
//! its `tool_result` and in the next request), the person's own commands
//! with their output, a summary every eight turns, and a checkpoint after
//! each `turn_end`. All of it is written through `ua_store` as a running
//! session writes it (`Journal::append_at`, `Journal::checkpoint`, every
//! index record from a `RecordFeed` through `Index::append`), then the
//! index is compacted.
//!
//! Rows, each the whole process, p50 and p99 over the rounds:
//!
//! - `unixagent -c '# hi'` in a home of its own: a fresh start, which
//!   opens a new session, starts bash, asks the model and exits;
//! - `unixagent --continue -c '# hi'` in the big home: the same after
//!   finding the session in the index and rebuilding its conversation from
//!   the last checkpoint, and its request carries that conversation (some
//!   360 KB) instead of one message. Without a terminal the prompt itself
//!   cannot be watched for, but up to it the two runs differ only by the
//!   continuing, and after it only by the request's size; so their
//!   difference, taken per round (the two run back to back), is what
//!   `--continue` adds to the time to the prompt, plus sending the bigger
//!   request. The model is a fake server in this process that answers at
//!   once; stdin is not a terminal, so both run their shell in the
//!   sandbox;
//! - `sessions list` (this directory's), `sessions list --all`, `--usage`
//!   and `--usage --since 7d`;
//! - `sessions list` and `--usage` over the index as appended, before its
//!   compaction (6.7 lines a session, more than a reader leaves behind, as
//!   the first one compacts it past 4), in a home holding only that index,
//!   put back before each run; and, in this process, `Index::load` and
//!   `Index::compact` of it, the two halves of such a run;
//! - `ua_store::resume::load` of the long session in this process: the
//!   library's share of `--continue`.
//!
//! One round before the counted ones warms the page cache, where every
//! file stays, as for a session ended recently; nothing is asserted. Takes
//! the release binary like the proxy benchmark (`$UA_BENCH_BIN`, else
//! `target/release/unixagent`); `UA_BENCH_QUICK=1` runs 5 rounds instead
//! of 30 over the same data.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use ua_context::prompt::frame_tool_output;
use ua_protocol::conversation::{Block, Message, Role, ToolResult, ToolUse};
use ua_protocol::event::{StopReason, Usage};
use ua_protocol::journal::{CallPurpose, DecisionOutcome, JournalEntry, TurnEndReason};
use ua_protocol::tool::shell_tool;
use ua_store::index::{Index, RecordFeed};
use ua_store::journal::{Journal, SyncPolicy};
use ua_store::session::{JOURNAL_FILE, META_FILE, SessionMeta, now_ms, session_id};
use ua_testkit::provider::{FakeProvider, Scenario, Turn};

#[path = "support/release.rs"]
mod release;

const SESSIONS: u64 = 10_000;
const LONG_ENTRIES: u64 = 50_000;
/// A summary replaces the turns before it every this many turns, which
/// keeps the live conversation near 100k tokens.
const SUMMARY_EVERY: u32 = 8;
const DAY_MS: u64 = 86_400_000;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sessions benchmark: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A home directory: config, data and the directory the runs start in.
struct Home {
    root: PathBuf,
    work: PathBuf,
}

impl Home {
    fn new(root: PathBuf) -> anyhow::Result<Self> {
        let work = root.join("work");
        std::fs::create_dir_all(&work)?;
        std::fs::create_dir_all(root.join(".config"))?;
        Ok(Home { root, work })
    }

    fn data(&self) -> PathBuf {
        self.root.join(".local/share/unixagent")
    }

    fn command(&self, bin: &Path, server: &FakeProvider, args: &[&str]) -> Command {
        let mut c = Command::new(bin);
        c.args(args)
            .env("HOME", &self.root)
            .env("XDG_CONFIG_HOME", self.root.join(".config"))
            .env("XDG_DATA_HOME", self.root.join(".local/share"))
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "bench")
            .env("OPENAI_API_KEY", "")
            .env_remove("UNIXAGENT_SESSION")
            .env_remove("UNIXAGENT_CONFIG")
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }
}

fn run() -> anyhow::Result<()> {
    let bin = release::release_binary()?;
    let rounds = if std::env::var_os("UA_BENCH_QUICK").is_some() { 5 } else { 30 };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let fresh = Home::new(tmp.path().join("fresh"))?;
    let big = Home::new(tmp.path().join("big"))?;
    let raw = Home::new(tmp.path().join("uncompacted"))?;
    let server = FakeProvider::start(Scenario { repeat: true, ..Scenario::new().turn(Turn::text("Hello.")) })?;

    let started = Instant::now();
    let (long, entries) = generate(&big)?;
    let index = Index::open(&big.data())?;
    let raw_index = raw.data().join("sessions").join(ua_store::index::INDEX_FILE);
    std::fs::create_dir_all(raw_index.parent().context("an index has a directory")?)?;
    let uncompacted = tmp.path().join("index.uncompacted.jsonl");
    std::fs::copy(index.path(), &uncompacted)?;
    let compacted = index.compact()?;
    // What a session writes it syncs at each turn's end; left dirty, the
    // first run's sync would write out the whole generated journal.
    nix::unistd::sync();
    let journal_bytes = std::fs::metadata(long.join(JOURNAL_FILE))?.len();
    let loaded = ua_store::resume::load(&long)?;
    ensure!(loaded.report.used_checkpoint(), "the long session did not resume from a checkpoint");
    println!(
        "{} sessions, index {} lines before compaction; long session {} entries, {} MB, resumed from {} lines \
         ({} KB) into {} messages; generated in {:.1} s",
        compacted.sessions,
        compacted.lines,
        entries,
        journal_bytes / 1_000_000,
        loaded.report.lines_read,
        loaded.report.bytes_read / 1000,
        loaded.conversation.len(),
        started.elapsed().as_secs_f64()
    );

    let mut t = Timings::default();
    let oneshot = ["--shell", "/bin/bash", "-c", "# hi"];
    let continued = ["--shell", "/bin/bash", "--continue", "-c", "# hi"];
    // A round to warm up, not counted: the binary and bash come from disk.
    time(&mut fresh.command(&bin, &server, &oneshot))?;
    let (_, stderr) = time_with_stderr(&mut big.command(&bin, &server, &continued))?;
    ensure!(stderr.contains("continuing session"), "--continue did not continue the long session: {stderr}");
    let sent = |i: usize| server.requests().get(i).map_or(0, |r| r.body.len() / 1000);
    println!("a fresh start's model request: {} KB; a continued one's: {} KB", sent(0), sent(1));
    let raw_in_process = Index::open(&raw.data())?;
    for _ in 0..rounds {
        let f = time(&mut fresh.command(&bin, &server, &oneshot))?;
        let c = time(&mut big.command(&bin, &server, &continued))?;
        t.fresh.push(f);
        t.continued.push(c);
        t.extra.push(c - f);
        t.list.push(time(&mut big.command(&bin, &server, &["sessions", "list"]))?);
        t.list_all.push(time(&mut big.command(&bin, &server, &["sessions", "list", "--all"]))?);
        t.usage.push(time(&mut big.command(&bin, &server, &["--usage"]))?);
        t.usage_week.push(time(&mut big.command(&bin, &server, &["--usage", "--since", "7d"]))?);
        std::fs::copy(&uncompacted, &raw_index)?;
        t.raw_list.push(time(&mut raw.command(&bin, &server, &["sessions", "list"]))?);
        std::fs::copy(&uncompacted, &raw_index)?;
        t.raw_usage.push(time(&mut raw.command(&bin, &server, &["--usage"]))?);
        std::fs::copy(&uncompacted, &raw_index)?;
        let start = Instant::now();
        std::hint::black_box(raw_in_process.load()?);
        t.raw_load.push(ms(start.elapsed()));
        let start = Instant::now();
        raw_in_process.compact()?;
        t.raw_compact.push(ms(start.elapsed()));
        let start = Instant::now();
        std::hint::black_box(ua_store::resume::load(&long)?);
        t.load.push(ms(start.elapsed()));
    }
    t.print(rounds);
    Ok(())
}

/// Milliseconds, per row.
#[derive(Default)]
struct Timings {
    fresh: Vec<f64>,
    continued: Vec<f64>,
    extra: Vec<f64>,
    list: Vec<f64>,
    list_all: Vec<f64>,
    usage: Vec<f64>,
    usage_week: Vec<f64>,
    raw_list: Vec<f64>,
    raw_usage: Vec<f64>,
    raw_load: Vec<f64>,
    raw_compact: Vec<f64>,
    load: Vec<f64>,
}

impl Timings {
    fn print(mut self, rounds: usize) {
        println!("\n{rounds} rounds{:<47} {:>10} {:>10}  target", "", "p50", "p99");
        row("fresh start: unixagent -c '# hi'", &mut self.fresh, "");
        row("unixagent --continue -c '# hi'", &mut self.continued, "");
        row("  --continue beyond a fresh start (per round)", &mut self.extra, "< 300 ms");
        row("  ua_store::resume::load, in process", &mut self.load, "");
        row("unixagent sessions list", &mut self.list, "< 100 ms");
        row("unixagent sessions list --all", &mut self.list_all, "< 100 ms");
        row("unixagent --usage", &mut self.usage, "< 200 ms");
        row("unixagent --usage --since 7d", &mut self.usage_week, "< 200 ms");
        row("sessions list, uncompacted index (compacts it)", &mut self.raw_list, "< 100 ms");
        row("--usage, uncompacted index (compacts it)", &mut self.raw_usage, "< 200 ms");
        row("  Index::load of it, in process", &mut self.raw_load, "");
        row("  Index::compact of it, in process", &mut self.raw_compact, "");
    }
}

fn row(name: &str, v: &mut [f64], target: &str) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!("{name:<56} {:>8.1}ms {:>8.1}ms  {target}", at(0.5), at(0.99));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn time(cmd: &mut Command) -> anyhow::Result<f64> {
    time_with_stderr(cmd).map(|(d, _)| d)
}

fn time_with_stderr(cmd: &mut Command) -> anyhow::Result<(f64, String)> {
    let start = Instant::now();
    let out = cmd.output()?;
    let elapsed = ms(start.elapsed());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ensure!(out.status.success(), "{cmd:?} failed: {}\n{stderr}", out.status);
    Ok((elapsed, stderr))
}

/// Writes the 10,000 sessions and the long one into `home`'s data
/// directory and index; returns the long session's directory and how
/// many entries its journal has.
fn generate(home: &Home) -> anyhow::Result<(PathBuf, u64)> {
    let data = home.data();
    let index = Index::open(&data)?;
    let now = now_ms();
    let work = home.work.display().to_string();
    let long_start = now - 3 * DAY_MS + 1234;
    let mut rng = Rng(0x5eed_cafe);
    for i in 0..SESSIONS {
        let start = now - 60 * DAY_MS + i * (60 * DAY_MS / SESSIONS);
        // The long session must be the newest one here for --continue.
        let cwd = if i % 50 == 0 && start < long_start { work.clone() } else { format!("/src/project-{}", i % 47) };
        // One session in 97 crashed: no end, and a pid that cannot exist.
        let crashed = i % 97 == 0;
        let pid = if crashed { 5_000_000 + i as u32 } else { 1000 + (i % 30_000) as u32 };
        let mut w = Writer::create(&data, &index, session_id(start, i as u32), start, 20_000, pid, &cwd)?;
        for turn in 1..=1 + (i * 7 % 8) as u32 {
            let instruction = format!("task {turn} of session {i}: why does the build of project {} fail?", i % 47);
            w.write(JournalEntry::Instruction { turn, text: instruction.clone() })?;
            w.write(request(turn, 1, vec![Message::user_text(instruction)], turn == 1))?;
            let usage = rng.usage();
            w.write(response(turn, 1, Message::assistant_text("The linker cannot find libssl."), usage))?;
            w.write(JournalEntry::TurnEnd {
                turn,
                reason: TurnEndReason::Answered,
                usage,
                commands: 0,
                cost_micros: None,
                descendants: None,
            })?;
            w.journal.checkpoint()?;
        }
        if !crashed {
            w.write(JournalEntry::SessionEnd { exit_code: Some(0) })?;
        }
    }
    let id = session_id(long_start, 0x1009);
    let step = 3 * DAY_MS / LONG_ENTRIES / 2;
    let mut w = Writer::create(&data, &index, id.clone(), long_start, step, 4242, &work)?;
    let outputs = Outputs::new();
    let mut turn = 0;
    while w.journal.next_seq() < LONG_ENTRIES {
        turn += 1;
        write_long_turn(&mut w, turn, &mut rng, &outputs, &work)?;
    }
    w.write(JournalEntry::SessionEnd { exit_code: Some(0) })?;
    Ok((data.join("sessions").join(id), w.journal.next_seq() - 1))
}

/// One turn of the long session: the person's own commands since the
/// last turn, a summary when one is due, up to five agent commands with
/// their outputs, the answer, `turn_end` and the checkpoint.
fn write_long_turn(w: &mut Writer, turn: u32, rng: &mut Rng, outputs: &Outputs, cwd: &str) -> anyhow::Result<()> {
    for n in 0..rng.below(3) {
        let output = outputs.take(rng);
        let command = format!("make test-{turn}-{n}");
        w.write(JournalEntry::UserCommand { command, cwd: Some(cwd.into()), exit_code: Some(2), output })?;
    }
    let instruction = format!("turn {turn}: the tests still fail; find out why and fix it");
    w.write(JournalEntry::Instruction { turn, text: instruction.clone() })?;
    let mut call = 1;
    if turn % SUMMARY_EVERY == 1 && turn > 1 {
        let ask = Message::user_text(format!("Summarise turns 1 to {}.", turn - 1));
        let summary = outputs.take(rng)[..2000].to_string();
        w.write(JournalEntry::ModelRequest {
            turn,
            call,
            backend: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            system: "Summarise the conversation.".into(),
            messages_appended: vec![ask],
            omitted: vec![],
            tools: None,
            purpose: CallPurpose::Summary,
        })?;
        let usage = rng.usage();
        w.write(JournalEntry::ModelResponse {
            turn,
            call,
            message: Message::assistant_text(summary.clone()),
            usage: Some(usage),
            stop: Some(StopReason::EndTurn),
            purpose: CallPurpose::Summary,
        })?;
        w.write(JournalEntry::Summary {
            turn,
            covers_through_turn: turn - 1,
            text: summary,
            model: "claude-sonnet-4-5".into(),
            usage: Some(usage),
        })?;
        call += 1;
    }
    let mut appended = vec![Message::user_text(instruction)];
    let mut total = Usage::default();
    let commands = 1 + rng.below(5);
    for n in 0..commands {
        w.write(request(turn, call, std::mem::take(&mut appended), turn == 1 && call == 1))?;
        let id = format!("toolu_{turn:05}_{n}");
        let command = format!("grep -rn 'fn test_{n}' src/ tests/ | head -400; cargo test -q test_{turn}_{n}");
        let ask = Message {
            role: Role::Assistant,
            content: vec![
                Block::text("Let me look at the failing test."),
                Block::ToolUse(ToolUse {
                    id: id.clone(),
                    name: "shell".into(),
                    input: serde_json::json!({"command": command}),
                }),
            ],
        };
        let usage = rng.usage();
        add(&mut total, usage);
        w.write(JournalEntry::ModelResponse {
            turn,
            call,
            message: ask,
            usage: Some(usage),
            stop: Some(StopReason::ToolUse),
            purpose: CallPurpose::Conversation,
        })?;
        w.write(JournalEntry::Decision {
            turn,
            tool_use_id: id.clone(),
            command: command.clone(),
            risk: "read_only".into(),
            outcome: DecisionOutcome::Run,
            decided_by: "policy".into(),
            approver: None,
        })?;
        w.write(JournalEntry::CommandIntent {
            turn,
            tool_use_id: id.clone(),
            command: command.clone(),
            read_only: true,
        })?;
        let output = frame_tool_output(Some(1), &outputs.take(rng), false);
        w.write(JournalEntry::ToolResult {
            turn,
            tool_use_id: id.clone(),
            command,
            exit_code: Some(1),
            output: output.clone(),
            is_error: true,
            truncated: false,
            duration_ms: 1200,
        })?;
        let mut result = ToolResult::text(id, output);
        result.is_error = true;
        appended = vec![Message { role: Role::User, content: vec![Block::ToolResult(result)] }];
        call += 1;
    }
    w.write(request(turn, call, appended, false))?;
    let usage = rng.usage();
    add(&mut total, usage);
    w.write(response(turn, call, Message::assistant_text("Fixed: the fixture path was wrong."), usage))?;
    w.write(JournalEntry::TurnEnd {
        turn,
        reason: TurnEndReason::Answered,
        usage: total,
        commands,
        cost_micros: None,
        descendants: None,
    })?;
    w.journal.checkpoint()?;
    Ok(())
}

/// One session being written: its journal, and the index records its
/// entries imply, as a running session writes both.
struct Writer<'a> {
    journal: Journal,
    feed: RecordFeed,
    index: &'a Index,
    ts: u64,
    step: u64,
}

impl<'a> Writer<'a> {
    /// Creates `sessions/<id>` with its `meta.json`, and writes the
    /// `session_start` line.
    fn create(
        data: &Path,
        index: &'a Index,
        id: String,
        start: u64,
        step: u64,
        pid: u32,
        cwd: &str,
    ) -> anyhow::Result<Self> {
        let dir = data.join("sessions").join(&id);
        std::fs::create_dir_all(&dir)?;
        let meta = SessionMeta {
            id: id.clone(),
            created_ms: start,
            pid,
            shell: "/bin/bash".into(),
            cwd: cwd.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parent: None,
            trace_id: None,
            trace_parent: None,
            parent_command: None,
            depth: 0,
        };
        std::fs::write(dir.join(META_FILE), serde_json::to_vec_pretty(&meta)?)?;
        let journal = Journal::open(dir.join(JOURNAL_FILE), SyncPolicy::Never)?;
        let mut w = Writer { journal, feed: RecordFeed::new(id.clone(), None), index, ts: start, step };
        w.write(JournalEntry::SessionStart {
            session: id,
            pid,
            shell: "/bin/bash".into(),
            cwd: cwd.into(),
            os: "linux".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        })?;
        Ok(w)
    }

    fn write(&mut self, entry: JournalEntry) -> anyhow::Result<()> {
        self.journal.append_at(&entry, self.ts)?;
        if let Some(record) = self.feed.feed(self.ts, &entry) {
            self.index.append(&record)?;
        }
        self.ts += self.step;
        Ok(())
    }
}

fn request(turn: u32, call: u32, messages_appended: Vec<Message>, first: bool) -> JournalEntry {
    JournalEntry::ModelRequest {
        turn,
        call,
        backend: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        system: "You are unixagent, working in the user's shell.".into(),
        messages_appended,
        omitted: vec![],
        tools: first.then(|| vec![shell_tool()]),
        purpose: CallPurpose::Conversation,
    }
}

fn response(turn: u32, call: u32, message: Message, usage: Usage) -> JournalEntry {
    JournalEntry::ModelResponse {
        turn,
        call,
        message,
        usage: Some(usage),
        stop: Some(StopReason::EndTurn),
        purpose: CallPurpose::Conversation,
    }
}

fn add(total: &mut Usage, u: Usage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cache_read_tokens += u.cache_read_tokens;
}

/// Command output to take slices of: compiler and test lines, 4–32 KB a
/// slice.
struct Outputs(String);

impl Outputs {
    fn new() -> Self {
        let mut s = String::new();
        for i in 0..4000 {
            s.push_str(&format!(
                "error[E0308]: mismatched types --> src/module_{i:04}.rs:{}:{}\n  test tests::case_{i} ... FAILED\n",
                i % 400,
                i % 80
            ));
        }
        Outputs(s)
    }

    fn take(&self, rng: &mut Rng) -> String {
        let len = 4096 + rng.below(28 * 1024) as usize;
        let at = rng.below((self.0.len() - len) as u32) as usize;
        self.0[at..at + len].to_string()
    }
}

/// A xorshift generator: the same data on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n)) as u32
    }

    fn usage(&mut self) -> Usage {
        Usage {
            input_tokens: 2000 + u64::from(self.below(30_000)),
            output_tokens: 50 + u64::from(self.below(800)),
            cache_read_tokens: u64::from(self.below(60_000)),
            cache_write_tokens: 0,
        }
    }
}
