//! Throughput of the secret scrubber, which runs on every chunk of text
//! sent to a model: a mebibyte of ordinary output (ls, compiler, logs),
//! of output mentioning tokens and passwords, and of command lines full of
//! options; and lines built to make a careless scanner quadratic (a
//! thousand anchors on one line, unterminated quotes). Prints the fastest
//! of 30 runs, the least disturbed by other load. Run with `cargo bench -p ua-context --bench scrub` (`make bench`).

use std::hint::black_box;
use std::time::Instant;
use ua_context::secrets::redact_secrets;

const LINES: &[&str] = &[
    "drwxr-xr-x  5 alice staff  160 Nov 21 10:00 src",
    "-rw-r--r--  1 alice staff 4096 Nov 21 10:00 Cargo.toml",
    "   Compiling regex-automata v0.4.18",
    "2026-11-21T10:00:00Z INFO request id=9fceb02d path=/api/v1/items status=200 took=12ms",
    "{\"level\":\"info\",\"msg\":\"token refreshed\",\"user\":\"alice\",\"expires_in\":3600}",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "    Fix the password reset flow when the token has expired",
    "src/auth.rs:42:    let token = session.token()?;",
];

const COMMANDS: &[&str] = &[
    "git log --oneline --grep token | head -20",
    "docker run -p 8080:80 -e LOG_LEVEL=debug nginx",
    "ssh -p 2222 alice@host 'ls -la /var/log'",
    "mysql -u root -phunter2 -e 'select 1' app",
    "curl -sS -u alice:pw https://api.example.com/v1/items?limit=10",
    "export DB_PASSWORD=hunter2 && ./run --token abc --verbose",
    "psql -p 5432 -h db -U app -c 'select now()'",
    "cargo test -p ua-context token_refresh -- --nocapture",
];

/// Lines that would take seconds if the work per anchor were not bounded.
fn pathological() -> String {
    [
        "--token ".repeat(1000),
        "mysql ".repeat(1000) + "-pfoo",
        format!("x=1,{}", "password=a,".repeat(500)),
        "--password '".repeat(50_000),
        "a".repeat(200_000) + "key=" + &"b".repeat(200_000),
    ]
    .join("\n")
}

fn main() {
    let quick = std::env::var_os("UA_BENCH_QUICK").is_some();
    let runs = if quick { 5 } else { 30 };
    for (name, set) in [("plain output", &LINES[..3]), ("output with secret words", LINES), ("command lines", COMMANDS)]
    {
        let mut text = String::new();
        while text.len() < 1 << 20 {
            for l in set {
                text.push_str(l);
                text.push('\n');
            }
        }
        let _ = redact_secrets(&text);
        let per = (0..runs)
            .map(|_| {
                let start = Instant::now();
                black_box(redact_secrets(black_box(&text)));
                start.elapsed()
            })
            .min()
            .unwrap_or_default();
        let mbps = text.len() as f64 / per.as_secs_f64() / 1e6;
        println!("scrub {name:<26} {} bytes in {per:>10.2?} ({mbps:.0} MB/s)", text.len());
    }
    let text = pathological();
    let start = Instant::now();
    black_box(redact_secrets(black_box(&text)));
    let took = start.elapsed();
    let mbps = text.len() as f64 / took.as_secs_f64() / 1e6;
    println!("scrub {:<26} {} bytes in {took:>10.2?} ({mbps:.0} MB/s)", "pathological lines", text.len());
}
