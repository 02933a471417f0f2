//! What the kernel sandbox costs a command, next to the same command
//! outside it.
//!
//! Two figures. Per command: an agent command is typed into a shell that
//! already runs in the sandbox, so what it pays is starting a process under
//! Landlock and seccomp; a bash loop starts `/bin/true` N times inside
//! `unixagent sandbox --` and outside, and the difference per start is the
//! cost. Set-up: `unixagent sandbox -- /bin/true` against `/bin/true`,
//! which is what a sandboxed shell pays once (namespaces, carve-outs,
//! rulesets, the launcher's exec). p50 and p99 of each; nothing asserted.
//!
//! Takes the release binary like the proxy benchmark (`$UA_BENCH_BIN`,
//! else `target/release/unixagent`); `UA_BENCH_QUICK=1` runs a short
//! version.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/release.rs"]
mod release;

fn main() -> anyhow::Result<()> {
    let bin = release::release_binary()?;
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some();
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let (rounds, loop_n) = if quick { (20, 50) } else { (200, 500) };

    // Per command: time a loop of process starts, per start.
    let looped = format!("for i in $(seq {loop_n}); do /bin/true; done");
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for _ in 0..rounds / 10 {
        outside.push(time(Command::new("bash").args(["-c", &looped]), home.path())? / loop_n);
        inside.push(time(Command::new(&bin).args(["sandbox", "--", "bash", "-c", &looped]), home.path())? / loop_n);
    }
    // Set-up: the whole launch, once per run.
    let mut plain = Vec::new();
    let mut sandboxed = Vec::new();
    for _ in 0..rounds {
        plain.push(time(&mut Command::new("/bin/true"), home.path())?);
        sandboxed.push(time(Command::new(&bin).args(["sandbox", "--", "/bin/true"]), home.path())?);
    }
    println!("{:<44} {:>10} {:>10}", "", "p50", "p99");
    row("start a process, outside", &mut outside);
    row("start a process, in the sandbox", &mut inside);
    row("run /bin/true", &mut plain);
    row("unixagent sandbox -- /bin/true", &mut sandboxed);
    Ok(())
}

fn time(cmd: &mut Command, home: &Path) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let status = cmd.current_dir(home).env("HOME", home).stdin(Stdio::null()).stdout(Stdio::null()).status()?;
    anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
    Ok(start.elapsed())
}

fn row(name: &str, v: &mut [Duration]) {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!("{name:<44} {:>8.3}ms {:>8.3}ms", at(0.5).as_secs_f64() * 1e3, at(0.99).as_secs_f64() * 1e3);
}
