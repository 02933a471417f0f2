//! `ua-testkit serve SCENARIO [--port N]`: run the fake provider by hand so
//! unixagent can be tried end to end without an API key.

use std::path::PathBuf;
use std::process::ExitCode;

use ua_testkit::provider::{FakeProvider, Scenario};

const USAGE: &str = "usage: ua-testkit serve SCENARIO.toml [--port N]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ua-testkit: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() != Some("serve") {
        return Err(USAGE.to_owned());
    }
    let mut scenario: Option<PathBuf> = None;
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| format!("--port needs a number; {USAGE}"))?;
            }
            _ if scenario.is_none() => scenario = Some(PathBuf::from(arg)),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let path = scenario.ok_or_else(|| USAGE.to_owned())?;
    let scenario = Scenario::load(&path)?;
    let turns = scenario.turns.len();
    let server =
        FakeProvider::start_on(scenario, port).map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    // The URL goes alone on stdout's first line so scripts can read it.
    println!("{}", server.base_url());
    eprintln!(
        "fake provider: {turns} turn(s) from {}\n  \
         ANTHROPIC_BASE_URL={} ANTHROPIC_API_KEY=fake\n  \
         OPENAI_BASE_URL={} OPENAI_API_KEY=fake\n\
         Ctrl+C to stop.",
        path.display(),
        server.base_url(),
        server.openai_base_url()
    );
    let mut seen = 0;
    loop {
        // Log each new request as it arrives; the wait has no deadline
        // that matters, it only bounds how long a wake-up can be missed.
        let reqs = server.wait_until(std::time::Duration::from_secs(3600), |r| r.len() > seen).unwrap_or_default();
        for r in reqs.iter().skip(seen) {
            eprintln!("{} {} ({} bytes)", r.method, r.path, r.body.len());
        }
        seen = seen.max(reqs.len());
    }
}
