//! What child agents and traces cost, with the release binary and a fake
//! model in this process (it answers at once):
//!
//! - **20 children at once**: an unattended parent (`--json -c`, so its
//!   shell and every child run in the sandbox) whose one command starts 20
//!   children in the background and waits; each child runs one command and
//!   answers. The row is the parent's whole run; every child must print
//!   its fold line with `done` (checked every round).
//! - **A child's start**: `unixagent -c '# …' < /dev/null` from inside a
//!   session (a child: admission, its slot, its sandbox, its quiet output),
//!   from its spawn until its first model request arrives; beside it the
//!   same one-shot not started from a session, and the start-up of the
//!   shell it runs in (`unixagent sandbox -- bash -i` on an empty stdin:
//!   the sandbox set up and an interactive bash started and ended). The
//!   child's own overhead is the child's time less the shell's, per round.
//!   The same rounds again under load, a thread spinning on every core
//!   (target: the child's own overhead p99 under 30 ms).
//! - **Keystroke echo in the parent**: an interactive parent
//!   (`unixagent --shell bash` on a PTY this program owns) at its prompt;
//!   keys typed one at a time, each timed from its write to its echo,
//!   first while nothing else runs, then while 20 children started from
//!   that prompt (`unixagent -c '# …' &`, so they are its children and
//!   report to it) each run a command printing a line every 100 ms.
//!   Every key is typed while all 20 still run (checked every round).
//! - **Appending a span**: one `execute_tool` span line appended to
//!   `traces.jsonl` by [`ua_trace::Sink::append`] (open, one write,
//!   close), in this process.
//! - **Exporting 100,000 spans**: `unixagent traces export` over a
//!   `traces.jsonl` of 100,000 spans (an instruction, two model calls and a
//!   command, repeated), writing OTLP/JSON to /dev/null; target under 1 s.
//!
//! Prints a table and asserts only that every child finished. Takes the
//! release binary like the other benchmarks (`$UA_BENCH_BIN`, else
//! `target/release/unixagent`); `UA_BENCH_QUICK=1` runs fewer rounds.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use ua_testkit::provider::{FakeProvider, Scenario};
use ua_trace::context::TraceContext;
use ua_trace::tracer::{Command as Cmd, ModelCall, ModelCallEnd, Tracer};

#[path = "support/pty.rs"]
mod pty;
#[path = "support/release.rs"]
mod release;

const CHILDREN: usize = 20;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("children benchmark: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let bin = release::release_binary()?;
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some();
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    setup_home(&bin, &home)?;
    let fan_out = twenty_at_once(&bin, &home, if quick { 2 } else { 5 })?;
    let (child, oneshot, shell, overhead) = child_start(&bin, &home, if quick { 10 } else { 60 })?;
    let loaded = {
        let _load = Load::start();
        child_start(&bin, &home, if quick { 10 } else { 60 })?
    };
    let (idle, busy) = echo_with_children(&bin, &home, if quick { 1 } else { 3 }, if quick { 20 } else { 100 })?;
    let appends = appending(tmp.path(), if quick { 2_000 } else { 20_000 })?;
    let exports = exporting(&bin, tmp.path(), if quick { 2 } else { 5 })?;
    println!("\n{:<62} {:>10} {:>10}  target", "", "p50", "p99");
    row("20 children started by one command, all done (parent's run)", fan_out, "all finish");
    row("a child: spawn → its first model request", child, "");
    row("the same one-shot, not a child", oneshot, "");
    row("its shell's start-up (sandbox, interactive bash)", shell, "");
    row("a child's own overhead (child − shell, per round)", overhead, "");
    row("under load (a busy thread per core): a child's start", loaded.0, "");
    row("under load: its shell's start-up", loaded.2, "");
    row("under load: a child's own overhead", loaded.3, "p99 < 30 ms");
    row_us("keystroke echo in the parent, idle", idle, "");
    row_us("keystroke echo in the parent while 20 children run", busy, "");
    row_us("appending a span to traces.jsonl", appends, "microseconds");
    row("unixagent traces export, 100,000 spans", exports, "< 1 s");
    Ok(())
}

fn row(name: &str, mut v: Vec<f64>, target: &str) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!("{name:<62} {:>8.1}ms {:>8.1}ms  {target}", at(0.5), at(0.99));
}

fn row_us(name: &str, mut v: Vec<f64>, target: &str) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!("{name:<62} {:>8.1}µs {:>8.1}µs  {target}", at(0.5) * 1e3, at(0.99) * 1e3);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Every core kept busy, one thread spinning on each, until dropped.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A home whose `unixagent` on PATH is `bin`, the judge off, delegation
/// and the children's commands allowed, room for every child.
fn setup_home(bin: &Path, home: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(home.join("bin"))?;
    std::fs::create_dir_all(home.join(".config/unixagent"))?;
    std::fs::create_dir_all(home.join("tmp"))?;
    std::fs::create_dir_all(home.join("work"))?;
    symlink(bin, home.join("bin/unixagent"))?;
    std::fs::write(
        home.join(".config/unixagent/config.toml"),
        format!("[judge]\nmode = \"off\"\n[agent]\nmax_children = {}\n", CHILDREN + 4),
    )?;
    std::fs::write(
        home.join(".config/unixagent/policy.cedar"),
        "@id(\"bench.all\")\n@reason(\"the benchmark's commands run without asking\")\npermit (principal, action, resource);\n",
    )?;
    Ok(())
}

/// `bin ARGS` in `home`, talking to `server`, outside any session.
fn ua(bin: &Path, home: &Path, server: &FakeProvider) -> Command {
    let path = format!("{}:{}", home.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut c = Command::new(bin);
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("TMPDIR", home.join("tmp"))
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "bench")
        .env("OPENAI_API_KEY", "")
        .current_dir(home.join("work"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for v in ["UNIXAGENT_SESSION", "TRACEPARENT", "UA_TRACE_ID", "UA_SPAN_ID", "UA_TRACE_DEPTH", "UA_TRACE_SINK"] {
        c.env_remove(v);
    }
    c
}

fn twenty_at_once(bin: &Path, home: &Path, rounds: usize) -> anyhow::Result<Vec<f64>> {
    let mut toml = String::from("[[conversation]]\ninstruction_contains = \"fan out\"\nrepeat = true\n");
    let out = home.join("tmp");
    let cmd = format!(
        "for i in $(seq -w {CHILDREN}); do unixagent -c \\\"# bench child-$i\\\" < /dev/null > {}/child-$i.out & done; wait",
        out.display()
    );
    toml.push_str(&format!(
        "[[conversation.turn]]\ntool_calls = [{{ name = \"shell\", input = {{ command = \"{cmd}\" }} }}]\n[[conversation.turn]]\ntext = \"all started\"\n"
    ));
    for i in 1..=CHILDREN {
        toml.push_str(&format!(
            "[[conversation]]\ninstruction_contains = \"bench child-{i:02}\"\nrepeat = true\n[[conversation.turn]]\ntool_calls = [{{ name = \"shell\", input = {{ command = \"true\" }} }}]\n[[conversation.turn]]\ntext = \"child {i} done\"\n"
        ));
    }
    let server = FakeProvider::start(Scenario::from_toml(&toml).map_err(anyhow::Error::msg)?)?;
    let mut times = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let run = ua(bin, home, &server).args(["--json", "-c", "# fan out"]).output()?;
        times.push(ms(started.elapsed()));
        ensure!(run.status.success(), "the parent failed: {}", String::from_utf8_lossy(&run.stdout));
        for i in 1..=CHILDREN {
            let text = std::fs::read_to_string(out.join(format!("child-{i:02}.out")))?;
            ensure!(text.contains(" · done · "), "child {i} did not finish: {text:?}");
        }
    }
    Ok(times)
}

/// The prompt of the interactive parent's bash.
const PROMPT: &[u8] = b"UA-BENCH> ";
/// How long each child's command runs: a line every 100 ms.
const CHILD_RUNS: Duration = Duration::from_secs(5);

/// Echo times in milliseconds at an interactive parent's prompt: idle, and
/// while 20 of its children run. `rounds` of `keys` keys each.
fn echo_with_children(bin: &Path, home: &Path, rounds: usize, keys: usize) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let lines = CHILD_RUNS.as_millis() / 100;
    let mut toml = String::new();
    for i in 1..=CHILDREN {
        toml.push_str(&format!(
            "[[conversation]]\ninstruction_contains = \"busy child-{i:02}\"\nrepeat = true\n\
             [[conversation.turn]]\ntool_calls = [{{ name = \"shell\", input = {{ command = \"for j in $(seq {lines}); do echo line $j; sleep 0.1; done\" }} }}]\n\
             [[conversation.turn]]\ntext = \"child {i} done\"\n"
        ));
    }
    let server = FakeProvider::start(Scenario::from_toml(&toml).map_err(anyhow::Error::msg)?)?;
    std::fs::write(home.join(".bashrc"), "PS1='UA-BENCH> '\nHISTFILE=~/.bash_history\n")?;
    let mut parent = ua(bin, home, &server);
    parent.args(["--shell", "/bin/bash"]).env("TERM", "xterm-256color");
    let mut s = pty::Session::start(parent, "the interactive parent", PROMPT)?;
    let (mut idle, mut busy) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        echo_keys(&mut s, keys, &mut idle)?;
        let before = server.request_count();
        s.send(
            format!(
                "for i in $(seq -w {CHILDREN}); do unixagent -c \"# busy child-$i\" < /dev/null > /dev/null 2>&1 & done\r"
            )
            .as_bytes(),
        )?;
        s.wait_for(PROMPT, pty::STEP_TIMEOUT)?;
        server
            .wait_until(pty::STEP_TIMEOUT, |r| r.len() >= before + CHILDREN)
            .map_err(anyhow::Error::msg)
            .context("the children never all asked their model")?;
        // From here each child's command runs for CHILD_RUNS at least.
        let running = Instant::now();
        echo_keys(&mut s, keys, &mut busy)?;
        ensure!(
            running.elapsed() < CHILD_RUNS - Duration::from_millis(500),
            "typing took {:?}: the children may have ended before it did; type fewer keys",
            running.elapsed()
        );
        s.send(b"wait; echo UA_\"\"DONE\r")?;
        s.wait_for(b"UA_DONE", Duration::from_secs(120)).context("the children never ended")?;
        s.wait_for(PROMPT, pty::STEP_TIMEOUT)?;
        ensure!(
            server.request_count() >= before + 2 * CHILDREN,
            "not every child answered after its command: {} requests",
            server.request_count() - before
        );
    }
    s.close()?;
    Ok((idle, busy))
}

/// Types `keys` keys on a command line starting with `: ` (so Enter runs a
/// no-op), each timed from the write until its echo is read back, 50 to a
/// line so it never wraps. `Z` appears in nothing else the terminal shows.
fn echo_keys(s: &mut pty::Session, keys: usize, out: &mut Vec<f64>) -> anyhow::Result<()> {
    let mut left = keys;
    while left > 0 {
        let line = left.min(50);
        left -= line;
        s.send(b": ")?;
        s.wait_for(b": ", pty::STEP_TIMEOUT)?;
        for _ in 0..line {
            let t = Instant::now();
            s.send(b"Z")?;
            s.wait_for(b"Z", pty::STEP_TIMEOUT)?;
            out.push(ms(t.elapsed()));
        }
        s.send(b"\r")?;
        s.wait_for(PROMPT, pty::STEP_TIMEOUT)?;
    }
    Ok(())
}

/// Milliseconds per round: a child's start to its first model request, a
/// plain one-shot's, the sandboxed shell's start, and the child's overhead
/// beyond that shell.
type StartTimes = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// Per round: a child, a plain one-shot and the sandboxed shell, in turn.
fn child_start(bin: &Path, home: &Path, rounds: usize) -> anyhow::Result<StartTimes> {
    let toml =
        "[[conversation]]\ninstruction_contains = \"start me\"\nrepeat = true\n[[conversation.turn]]\ntext = \"ok\"\n";
    let server = FakeProvider::start(Scenario::from_toml(toml).map_err(anyhow::Error::msg)?)?;
    let (mut child, mut oneshot, mut shell, mut overhead) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let first_request = |cmd: &mut Command| -> anyhow::Result<f64> {
        let before = server.request_count();
        let started = Instant::now();
        let mut p = cmd.spawn()?;
        server
            .wait_until(Duration::from_secs(30), |r| r.len() > before)
            .map_err(anyhow::Error::msg)
            .context("the model call never came")?;
        let t = ms(started.elapsed());
        p.wait()?;
        Ok(t)
    };
    for _ in 0..rounds {
        let mut c = ua(bin, home, &server);
        c.args(["-c", "# start me"])
            .env("UNIXAGENT_SESSION", "20261126T000000.000Z-00000001")
            .env("UA_TRACE_DEPTH", "0");
        let tc = first_request(&mut c)?;
        let mut o = ua(bin, home, &server);
        o.args(["-c", "# start me"]);
        oneshot.push(first_request(&mut o)?);
        let started = Instant::now();
        let s = ua(bin, home, &server).args(["sandbox", "--", "/bin/bash", "--norc", "-i"]).output()?;
        ensure!(s.status.success(), "the sandboxed shell failed");
        let ts = ms(started.elapsed());
        child.push(tc);
        shell.push(ts);
        overhead.push(tc - ts);
    }
    Ok((child, oneshot, shell, overhead))
}

/// A command's span, as a session records it.
fn command_span(t: &mut Tracer, n: u64) -> Vec<ua_trace::Span> {
    let at = n * 1_000_000;
    let turn = u32::try_from(n).unwrap_or(u32::MAX);
    let mut spans = t.instruction_started(at, turn, "check the logs for timeouts and say which service").1;
    t.model_call_started(
        at + 1,
        &ModelCall { provider: "anthropic", model: "claude-sonnet-4-5", ..Default::default() },
    );
    let usage = ua_protocol::event::Usage { input_tokens: 1200, output_tokens: 80, ..Default::default() };
    spans.extend(
        t.model_call_ended(at + 2, &ModelCallEnd { usage, finish_reason: Some("tool_use"), ..Default::default() }),
    );
    let id = format!("toolu_{n}");
    let cmd = Cmd {
        id: &id,
        command: "journalctl -u api --since -1h | grep -c timeout",
        risk: "read_only",
        decision: "allow",
        rule: Some("builtin.read-only"),
    };
    t.command_started(at + 3, &cmd);
    spans.extend(t.command_ended(at + 4, &id, Some(0), "ok"));
    t.model_call_started(
        at + 5,
        &ModelCall { provider: "anthropic", model: "claude-sonnet-4-5", ..Default::default() },
    );
    spans.extend(
        t.model_call_ended(at + 6, &ModelCallEnd { usage, finish_reason: Some("end_turn"), ..Default::default() }),
    );
    spans.extend(t.instruction_ended(at + 7, "ok"));
    spans
}

fn appending(dir: &Path, n: usize) -> anyhow::Result<Vec<f64>> {
    let ctx = TraceContext::from_lookup(|_| None);
    let mut t = Tracer::new(ctx, "bench", ua_trace::span::resource("bench"));
    let span = command_span(&mut t, 1).into_iter().find(|s| s.name.starts_with("execute_tool")).context("a span")?;
    let sink = ua_trace::Sink::at(dir.join("append/traces.jsonl"));
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        sink.append(std::slice::from_ref(&span))?;
        times.push(ms(started.elapsed()));
    }
    Ok(times)
}

fn exporting(bin: &Path, dir: &Path, rounds: usize) -> anyhow::Result<Vec<f64>> {
    let data = dir.join("export/data");
    let sink = ua_trace::Sink::at(data.join("unixagent/traces.jsonl"));
    let ctx = TraceContext::from_lookup(|_| None);
    let mut t = Tracer::new(ctx, "bench", ua_trace::span::resource("bench"));
    let mut spans = Vec::with_capacity(100_000);
    let mut n = 1;
    while spans.len() < 100_000 {
        spans.extend(command_span(&mut t, n));
        n += 1;
    }
    spans.truncate(100_000);
    sink.append(&spans)?;
    let mut times = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let out = Command::new(bin)
            .args(["traces", "export"])
            .env("HOME", dir)
            .env("XDG_DATA_HOME", &data)
            .env("XDG_CONFIG_HOME", dir.join("export/config"))
            .env_remove("UA_TRACE_SINK")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        times.push(ms(started.elapsed()));
        ensure!(out.status.success(), "export failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(times)
}
