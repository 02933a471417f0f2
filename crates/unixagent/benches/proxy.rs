//! What unixagent's PTY proxy costs, next to `script -q` and no proxy at all.
//!
//! bash runs three ways in a terminal this program owns: straight on a bare
//! PTY, under `script -q`, and under `unixagent --shell`. For each it
//! measures what a person at that terminal would feel — bulk output
//! throughput, keystroke echo latency at the readline prompt and through a
//! program reading a raw terminal (`stty raw -echo` then one byte read and
//! written back at a time, as `cat` does), time to the first prompt — and
//! what the proxy costs while the prompt sits idle (resident memory and
//! wake-ups). It prints one table with unixagent's ratio to `script -q` on
//! every row, and asserts nothing.
//!
//! It builds nothing: `make bench` builds the release binary first, and this
//! program takes it from `$UA_BENCH_BIN`, else `$CARGO_TARGET_DIR/release`,
//! else the workspace's `target/release`. `UA_BENCH_QUICK=1` runs a short
//! version that only shows the benchmark works. `UA_BENCH_ALSO=LABEL=PATH`
//! (comma-separated) runs other unixagent binaries beside it in the same
//! run, taking turns with the others, and adds a table comparing them with
//! it (`make bench-static`: the static musl build against the glibc one).
//!
//! Every shell gets a throwaway HOME whose `.bashrc` sets a marker prompt,
//! so the user's dotfiles and history take no part.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

#[path = "support/pty.rs"]
mod pty;
#[path = "support/release.rs"]
mod release;

use pty::{STEP_TIMEOUT, Session};

/// The prompt every shell draws; seeing it means the shell waits for input.
const PROMPT: &[u8] = b"UA-BENCH> ";
/// Printed by `echo UA_""END` after the big `cat`; the file never contains
/// upper-case letters, and the echoed command line spells it differently.
const END: &[u8] = b"UA_END";
/// Keystrokes typed on one command line before it is cleared with Enter;
/// short enough that the line never wraps at 80 columns.
const KEYS_PER_LINE: usize = 50;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("proxy benchmark: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// How much to measure.
#[derive(Debug)]
struct Plan {
    file_bytes: u64,
    repeats: usize,
    keys: usize,
    /// Echo through a raw-mode program: rounds, each of this many keys per
    /// contender in turn.
    raw_rounds: usize,
    raw_keys: usize,
    starts: usize,
    idle: Duration,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("UA_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0") {
            Self {
                file_bytes: 16 << 20,
                repeats: 2,
                keys: 200,
                raw_rounds: 2,
                raw_keys: 200,
                starts: 3,
                idle: Duration::from_secs(1),
            }
        } else {
            Self {
                file_bytes: 256 << 20,
                repeats: 5,
                keys: 2000,
                raw_rounds: 20,
                raw_keys: 2000,
                starts: 20,
                idle: Duration::from_secs(5),
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contender {
    Bare,
    Script,
    Unixagent,
    /// Another unixagent binary: the index into `Rig::also`.
    Also(usize),
}

impl Contender {
    fn title(self, rig: &Rig) -> String {
        match self {
            Self::Bare => "bare PTY".into(),
            Self::Script => "script -q".into(),
            Self::Unixagent => "unixagent".into(),
            Self::Also(i) => rig.also[i].0.clone(),
        }
    }
}

/// Everything measured for one contender.
#[derive(Debug, Default)]
struct Figures {
    startups: Vec<Duration>,
    echoes: Vec<Duration>,
    /// Echo through a program reading the terminal in raw mode.
    raw_echoes: Vec<Duration>,
    /// Times the proxy ran during the echo phase, per key typed.
    wakeups_per_key: f64,
    mb_per_s: Vec<f64>,
    cpu: Duration,
    idle_rss_kib: u64,
    idle_wakeups: u64,
    peak_rss_kib: u64,
    /// `policy explain` runs of a unixagent (Cedar loaded and asked once:
    /// the allocation-heavy start of every agent turn), when compared.
    explains: Vec<Duration>,
}

fn run() -> anyhow::Result<()> {
    let plan = Plan::from_env();
    let load_before = loadavg();
    let rig = Rig::new()?;
    let file = rig.home.path().join("big.txt");
    write_file(&file, plan.file_bytes)?;
    let contenders = rig.contenders();
    let mut figs: Vec<Figures> = contenders.iter().map(|_| Figures::default()).collect();

    // Contenders take turns in every phase, so a burst of load from
    // elsewhere on the machine is shared out rather than hitting one column.
    measure_startup(&plan, &rig, &contenders, &mut figs)?;
    let mut sessions = Vec::new();
    for c in contenders.iter().copied() {
        sessions.push(Session::start(rig.command(c), &c.title(&rig), PROMPT)?);
    }
    measure_idle(&plan, &sessions, &mut figs)?;
    measure_echo(&plan, &mut sessions, &mut figs)?;
    measure_raw_echo(&plan, &mut sessions, &mut figs)?;
    measure_throughput(&plan, &mut sessions, &file, &mut figs)?;
    for (s, f) in sessions.iter().zip(&mut figs) {
        f.peak_rss_kib = Sample::take(s.pid())?.peak_rss_kib;
    }
    for s in sessions {
        s.close()?;
    }
    progress("");
    print!("{}", report(&plan, &figs, &load_before, &loadavg()));
    if !rig.also.is_empty() {
        measure_explain(&plan, &rig, &contenders, &mut figs)?;
        print!("{}", compare(&plan, &rig, &figs));
    }
    Ok(())
}

/// Time from spawning until the prompt is on the terminal, each run in a
/// fresh process.
fn measure_startup(plan: &Plan, rig: &Rig, contenders: &[Contender], figs: &mut [Figures]) -> anyhow::Result<()> {
    for round in 0..plan.starts {
        progress(&format!("startup {}/{}", round + 1, plan.starts));
        for (c, f) in contenders.iter().zip(figs.iter_mut()) {
            let started = Instant::now();
            let s = Session::start(rig.command(*c), &c.title(rig), PROMPT)?;
            f.startups.push(started.elapsed());
            s.close()?;
        }
    }
    Ok(())
}

/// `unixagent policy explain` run by each unixagent in turn: loading the
/// Cedar policy allocates a great deal, which is where a slow allocator
/// shows (musl's own took twice as long as glibc's).
fn measure_explain(plan: &Plan, rig: &Rig, contenders: &[Contender], figs: &mut [Figures]) -> anyhow::Result<()> {
    for round in 0..plan.starts {
        progress(&format!("policy explain {}/{}", round + 1, plan.starts));
        for (c, f) in contenders.iter().zip(figs.iter_mut()) {
            if matches!(c, Contender::Bare | Contender::Script) {
                continue;
            }
            let mut explain = Command::new(rig.binary(*c));
            explain.args(["policy", "explain", "ls -la | grep x"]).stdout(Stdio::null());
            rig.environment(&mut explain);
            let started = Instant::now();
            let status = explain.status().context("running policy explain")?;
            f.explains.push(started.elapsed());
            if !status.success() {
                bail!("policy explain failed under {}", c.title(rig));
            }
        }
    }
    progress("");
    Ok(())
}

/// Memory and wake-ups of each process sitting at its prompt. Counting
/// starts once every process has gone to sleep after drawing its prompt;
/// otherwise that last step would count as a wake-up.
fn measure_idle(plan: &Plan, sessions: &[Session], figs: &mut [Figures]) -> anyhow::Result<()> {
    progress(&format!("idle {} s", plan.idle.as_secs()));
    for s in sessions {
        wait_asleep(s.pid())?;
    }
    let before = sessions.iter().map(|s| Sample::take(s.pid())).collect::<anyhow::Result<Vec<_>>>()?;
    std::thread::sleep(plan.idle);
    for ((s, b), f) in sessions.iter().zip(&before).zip(figs) {
        let a = Sample::take(s.pid())?;
        f.idle_rss_kib = a.rss_kib;
        f.idle_wakeups = a.switches.saturating_sub(b.switches);
    }
    Ok(())
}

/// Echo latency of single keystrokes at the readline prompt, and how often
/// the proxy ran meanwhile (the count includes the Enter and the new prompt
/// after every line of keys).
fn measure_echo(plan: &Plan, sessions: &mut [Session], figs: &mut [Figures]) -> anyhow::Result<()> {
    let before = sessions.iter().map(|s| Sample::take(s.pid())).collect::<anyhow::Result<Vec<_>>>()?;
    for line in 0..plan.keys.div_ceil(KEYS_PER_LINE) {
        progress(&format!("echo {}/{}", (line + 1) * KEYS_PER_LINE, plan.keys));
        let n = KEYS_PER_LINE.min(plan.keys - line * KEYS_PER_LINE);
        for (s, f) in sessions.iter_mut().zip(figs.iter_mut()) {
            echo_line(s, n, &mut f.echoes)?;
        }
    }
    for ((s, b), f) in sessions.iter().zip(&before).zip(figs) {
        let switches = Sample::take(s.pid())?.switches.saturating_sub(b.switches);
        f.wakeups_per_key = switches as f64 / plan.keys.max(1) as f64;
    }
    Ok(())
}

/// Echo latency of single keystrokes through a program that reads the
/// terminal in raw mode and writes each byte back, as `stty raw -echo;
/// cat` does (`dd bs=1`, which ends by itself after a count). The
/// contenders take turns in rounds of `raw_keys` keys, so load from
/// elsewhere on the machine falls on all of them alike.
fn measure_raw_echo(plan: &Plan, sessions: &mut [Session], figs: &mut [Figures]) -> anyhow::Result<()> {
    let total = plan.raw_rounds * plan.raw_keys;
    for s in sessions.iter_mut() {
        s.send(format!("stty raw -echo; echo UA_\"\"RAW; dd bs=1 count={total} status=none; stty sane\r").as_bytes())?;
        s.wait_for(b"UA_RAW", STEP_TIMEOUT)?;
    }
    for round in 0..plan.raw_rounds {
        progress(&format!("raw echo {}/{}", round + 1, plan.raw_rounds));
        for (s, f) in sessions.iter_mut().zip(figs.iter_mut()) {
            for _ in 0..plan.raw_keys {
                let t = Instant::now();
                s.send(b"x")?;
                s.wait_for(b"x", STEP_TIMEOUT)?;
                f.raw_echoes.push(t.elapsed());
            }
        }
    }
    for s in sessions.iter_mut() {
        s.wait_for(PROMPT, STEP_TIMEOUT)?;
    }
    Ok(())
}

/// Bulk output: `cat` of the big file, and the proxy's CPU time for it.
fn measure_throughput(plan: &Plan, sessions: &mut [Session], file: &Path, figs: &mut [Figures]) -> anyhow::Result<()> {
    for round in 0..plan.repeats {
        progress(&format!("throughput {}/{}", round + 1, plan.repeats));
        for (s, f) in sessions.iter_mut().zip(figs.iter_mut()) {
            let cpu_before = Sample::take(s.pid())?.cpu;
            let took = cat_file(s, file)?;
            f.cpu += Sample::take(s.pid())?.cpu.saturating_sub(cpu_before);
            f.mb_per_s.push(plan.file_bytes as f64 / took.as_secs_f64() / 1e6);
        }
    }
    Ok(())
}

/// Shows what is being measured on a terminal, on one line that
/// `progress("")` clears; the table goes to standard output.
fn progress(what: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        let label = if what.is_empty() { "" } else { "proxy benchmark: " };
        eprint!("\r\x1b[K{label}{what}");
    }
}

/// Types `n` keys on a fresh command line, timing each from the write to
/// the moment its echo is read back, then clears the line with Enter. The
/// line starts with `: ` so Enter runs a no-op.
fn echo_line(s: &mut Session, n: usize, out: &mut Vec<Duration>) -> anyhow::Result<()> {
    s.send(b": ")?;
    s.wait_for(b": ", STEP_TIMEOUT)?;
    for _ in 0..n {
        let t = Instant::now();
        s.send(b"x")?;
        s.wait_for(b"x", STEP_TIMEOUT)?;
        out.push(t.elapsed());
    }
    s.send(b"\r")?;
    s.wait_for(PROMPT, STEP_TIMEOUT)
}

/// `cat`s the file and returns the time from Enter until the line printed
/// after it arrives. The command line is typed and echoed before the clock
/// starts.
fn cat_file(s: &mut Session, file: &Path) -> anyhow::Result<Duration> {
    let name = file.file_name().context("the benchmark file has no name")?.to_string_lossy();
    s.send(format!("cat {name}; echo UA_\"\"END").as_bytes())?;
    s.wait_for(b"\"\"END", STEP_TIMEOUT)?;
    let t = Instant::now();
    s.send(b"\r")?;
    s.wait_for(END, Duration::from_secs(600)).context("the file never finished printing")?;
    let took = t.elapsed();
    s.wait_for(PROMPT, STEP_TIMEOUT)?;
    Ok(took)
}

/// Lines of lower-case letters, `bytes` long in all.
fn write_file(path: &Path, bytes: u64) -> anyhow::Result<()> {
    let block: Vec<u8> =
        (0..1u32 << 20).map(|i| if i % 80 == 79 { b'\n' } else { b'a' + u8::try_from(i % 26).unwrap_or(0) }).collect();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).context("creating the benchmark file")?);
    let mut left = bytes;
    while left > 0 {
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(block.len());
        f.write_all(&block[..n]).context("writing the benchmark file")?;
        left -= n as u64;
    }
    f.flush().context("writing the benchmark file")?;
    Ok(())
}

/// The programs under test and the throwaway home they run in.
#[derive(Debug)]
struct Rig {
    home: tempfile::TempDir,
    bash: PathBuf,
    script: PathBuf,
    unixagent: PathBuf,
    /// Other unixagent binaries measured beside it, with their labels.
    also: Vec<(String, PathBuf)>,
    path: OsString,
}

impl Rig {
    fn new() -> anyhow::Result<Self> {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        let find = |name: &str, hint: &str| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
                .with_context(|| format!("{name} is not on PATH; install {hint} to run this benchmark"))
        };
        let bash = find("bash", "bash")?;
        let script = find("script", "util-linux's script (Debian package bsdutils)")?;
        let unixagent = release::release_binary()?;
        let home = tempfile::tempdir().context("creating a temporary home directory")?;
        std::fs::write(home.path().join(".bashrc"), "PS1='UA-BENCH> '\nHISTFILE=~/.bash_history\n")
            .context("writing the benchmark .bashrc")?;
        std::fs::write(home.path().join("config.toml"), "# unixagent defaults\n")
            .context("writing the benchmark config")?;
        let also = std::env::var("UA_BENCH_ALSO")
            .unwrap_or_default()
            .split(',')
            .filter(|e| !e.is_empty())
            .map(|e| match e.split_once('=') {
                Some((label, p)) if Path::new(p).is_file() => Ok((label.to_string(), PathBuf::from(p))),
                _ => bail!("UA_BENCH_ALSO entries are LABEL=PATH to a unixagent binary; {e:?} is not"),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self { home, bash, script, unixagent, also, path })
    }

    fn contenders(&self) -> Vec<Contender> {
        let mut c = vec![Contender::Bare, Contender::Script, Contender::Unixagent];
        c.extend((0..self.also.len()).map(Contender::Also));
        c
    }

    fn command(&self, c: Contender) -> Command {
        let mut cmd = match c {
            Contender::Bare => Command::new(&self.bash),
            Contender::Script => {
                let mut cmd = Command::new(&self.script);
                cmd.args(["-q", "-c"]).arg(&self.bash).arg("/dev/null");
                cmd
            }
            Contender::Unixagent | Contender::Also(_) => {
                let mut cmd = Command::new(self.binary(c));
                cmd.arg("--shell").arg(&self.bash);
                cmd
            }
        };
        self.environment(&mut cmd);
        cmd
    }

    /// The unixagent binary `c` runs (the one under test for the others).
    fn binary(&self, c: Contender) -> &Path {
        match c {
            Contender::Also(i) => &self.also[i].1,
            _ => &self.unixagent,
        }
    }

    /// The fixed environment and directory every contender starts with.
    fn environment(&self, cmd: &mut Command) {
        let home = self.home.path();
        cmd.env_clear()
            .env("PATH", &self.path)
            .env("HOME", home)
            .env("SHELL", &self.bash)
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("UNIXAGENT_CONFIG", home.join("config.toml"))
            .current_dir(home);
    }
}

/// What /proc says about a process at one moment.
#[derive(Debug)]
struct Sample {
    rss_kib: u64,
    peak_rss_kib: u64,
    /// Voluntary and involuntary context switches of all its threads: each
    /// one is a time the process ran.
    switches: u64,
    /// User and system CPU time of all its threads.
    cpu: Duration,
}

impl Sample {
    fn take(pid: u32) -> anyhow::Result<Self> {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let read = |p: &Path| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()));
        let status = read(&proc.join("status"))?;
        let field = |text: &str, key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .with_context(|| format!("{key} is missing from /proc/{pid}/status"))
        };
        let mut switches = 0;
        // /proc/PID/status counts the main thread only; the threads are in
        // /proc/PID/task.
        for task in std::fs::read_dir(proc.join("task")).context("listing threads")? {
            let task = read(&task?.path().join("status"))?;
            switches += field(&task, "voluntary_ctxt_switches")? + field(&task, "nonvoluntary_ctxt_switches")?;
        }
        // utime and stime are fields 14 and 15 of /proc/PID/stat, counted
        // after the parenthesised command name, which may contain spaces.
        let stat = read(&proc.join("stat"))?;
        let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
        let ticks: u64 = after_name.split_whitespace().skip(11).take(2).filter_map(|t| t.parse::<u64>().ok()).sum();
        let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().unwrap_or(100);
        let hz = u64::try_from(hz).unwrap_or(100).max(1);
        Ok(Self {
            rss_kib: field(&status, "VmRSS")?,
            peak_rss_kib: field(&status, "VmHWM")?,
            switches,
            cpu: Duration::from_micros(ticks * 1_000_000 / hz),
        })
    }
}

/// Waits until every thread of `pid` is blocked (state S in
/// /proc/PID/task/TID/stat), for at most a second.
fn wait_asleep(pid: u32) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(1);
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    while Instant::now() < deadline {
        let mut all_asleep = true;
        for task in std::fs::read_dir(&tasks).context("listing threads")? {
            let stat = std::fs::read_to_string(task?.path().join("stat")).context("reading a thread's state")?;
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
            all_asleep &= state == Some("S");
        }
        if all_asleep {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    bail!("process {pid} is still running a second after its prompt appeared")
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The nearest-rank percentile `p` (0-100) of `v`, in microseconds.
fn percentile_us(v: &[Duration], p: usize) -> f64 {
    let mut v: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e6).collect();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = (p * v.len()).div_ceil(100).clamp(1, v.len());
    v[rank - 1]
}

fn report(plan: &Plan, figs: &[Figures], load_before: &str, load_after: &str) -> String {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mib = plan.file_bytes >> 20;
    let secs = plan.idle.as_secs();
    let col = |f: &dyn Fn(&Figures) -> f64| -> Vec<f64> { figs.iter().map(f).collect() };
    let rows: Vec<(String, Vec<f64>, usize)> = vec![
        (format!("throughput, cat {mib} MiB (MB/s, median of {})", plan.repeats), col(&|f| median(&f.mb_per_s)), 0),
        (format!("proxy CPU per {mib} MiB (s)"), col(&|f| f.cpu.as_secs_f64() / f.mb_per_s.len().max(1) as f64), 2),
        (format!("echo latency p50 (µs, {} keys)", plan.keys), col(&|f| percentile_us(&f.echoes, 50)), 0),
        (format!("echo latency p99 (µs, {} keys)", plan.keys), col(&|f| percentile_us(&f.echoes, 99)), 0),
        (
            format!("raw echo p50 (µs, {}×{} keys)", plan.raw_rounds, plan.raw_keys),
            col(&|f| percentile_us(&f.raw_echoes, 50)),
            0,
        ),
        (
            format!("raw echo p99 (µs, {}×{} keys)", plan.raw_rounds, plan.raw_keys),
            col(&|f| percentile_us(&f.raw_echoes, 99)),
            0,
        ),
        ("proxy wake-ups per keystroke".into(), col(&|f| f.wakeups_per_key), 1),
        (
            format!("startup to prompt (ms, median of {})", plan.starts),
            col(&|f| median(&f.startups.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>())),
            1,
        ),
        ("idle RSS (KiB)".into(), col(&|f| f.idle_rss_kib as f64), 0),
        (format!("idle wake-ups in {secs} s"), col(&|f| f.idle_wakeups as f64), 0),
        ("peak RSS after the run (KiB)".into(), col(&|f| f.peak_rss_kib as f64), 0),
    ];
    let mut out = String::new();
    let _ = writeln!(out, "\nunixagent PTY proxy vs script -q vs bare PTY, bash on an 80x24 PTY");
    let _ = writeln!(out, "{cpus} CPUs; load average before {load_before}, after {load_after}");
    let _ = writeln!(
        out,
        "\n{:<44} {:>10} {:>10} {:>10} {:>12}",
        "metric", "bare PTY", "script -q", "unixagent", "ua / script"
    );
    for (name, values, decimals) in rows {
        let cell = |v: f64| if v.is_nan() { "-".to_string() } else { format!("{v:.decimals$}") };
        // On a bare PTY there is no proxy: the shell sleeps while cat runs.
        let bare = if name.starts_with("proxy CPU") { "-".to_string() } else { cell(values[0]) };
        let (script, ua) = (values[1], values[2]);
        let ratio = if script > 0.0 && ua.is_finite() { format!("{:.2}x", ua / script) } else { "-".to_string() };
        let _ = writeln!(out, "{name:<44} {bare:>10} {:>10} {:>10} {ratio:>12}", cell(script), cell(ua));
    }
    let _ = writeln!(
        out,
        "\nMB = 10^6 bytes. RSS, wake-ups and CPU are those of the proxy process (script, unixagent; on the bare PTY, bash)."
    );
    out
}

/// A row of the comparison: its name, how to read it from the figures,
/// and its decimals.
type Row<'a> = (String, &'a dyn Fn(&Figures) -> f64, usize);

/// The other unixagent binaries next to the first, measured in the same
/// run: the figures that tell builds apart.
fn compare(plan: &Plan, rig: &Rig, figs: &[Figures]) -> String {
    let mib = plan.file_bytes >> 20;
    let startup = |f: &Figures| median(&f.startups.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>());
    let explain = |f: &Figures| median(&f.explains.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>());
    let rows: Vec<Row<'_>> = vec![
        (format!("throughput, cat {mib} MiB (MB/s, median)"), &|f: &Figures| median(&f.mb_per_s), 0),
        (
            format!("proxy CPU per {mib} MiB (s)"),
            &|f: &Figures| f.cpu.as_secs_f64() / f.mb_per_s.len().max(1) as f64,
            2,
        ),
        ("startup to prompt (ms, median)".into(), &startup, 1),
        ("policy explain: Cedar loaded (ms, median)".into(), &explain, 1),
        ("echo latency p50 (µs)".into(), &|f: &Figures| percentile_us(&f.echoes, 50), 0),
        ("echo latency p99 (µs)".into(), &|f: &Figures| percentile_us(&f.echoes, 99), 0),
        ("idle RSS (KiB)".into(), &|f: &Figures| f.idle_rss_kib as f64, 0),
    ];
    let mut out = String::new();
    let _ = writeln!(out, "\nunixagent builds side by side (same run; ratio: each / unixagent)");
    let _ = write!(out, "\n{:<44} {:>10}", "metric", "unixagent");
    for (label, _) in &rig.also {
        let _ = write!(out, " {label:>10} {:>8}", "ratio");
    }
    let _ = writeln!(out);
    // figs[2] is the unixagent under test; the others follow in order.
    for (name, get, decimals) in rows {
        let base = get(&figs[2]);
        let _ = write!(out, "{name:<44} {base:>10.decimals$}");
        for f in &figs[3..] {
            let v = get(f);
            let _ = write!(out, " {v:>10.decimals$} {:>7.2}x", v / base);
        }
        let _ = writeln!(out);
    }
    for (label, path) in &rig.also {
        let _ = writeln!(out, "{label}: {}", path.display());
    }
    let _ = writeln!(out, "unixagent: {}", rig.unixagent.display());
    out
}
