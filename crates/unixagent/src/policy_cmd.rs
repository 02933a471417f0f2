//! `unixagent policy explain` and `unixagent policy check`: the safety
//! pipeline's decision for one command, and a validation of the policy
//! files, for people and for scripts.

use ua_policy::explain;
use ua_policy::gate::{Gate, PolicyConfig, Request};
use ua_policy::grants::Grants;

/// Exit status when the policy cannot be loaded at all (0, 1 and 2 mean
/// allowed, asks and denied).
const UNDECIDED: i32 = 3;

/// The session's policy, with the narrowing layers of the session this
/// runs in (`UNIXAGENT_POLICY_LAYERS`).
fn config() -> Result<PolicyConfig, String> {
    let env = |k: &str| std::env::var(k).ok();
    let mut cfg = PolicyConfig::from_env(&env).map_err(|e| e.to_string())?;
    cfg.narrowing = crate::agent::gate::layers(None)?;
    Ok(cfg)
}

/// Prints how `command` would be decided; returns the exit status.
pub fn explain(command: &str, json: bool) -> i32 {
    let gate = match config().and_then(|cfg| Gate::load(&cfg).map_err(|e| e.to_string())) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("unixagent: the policy did not load: {e}");
            return UNDECIDED;
        }
    };
    let request = Request {
        command: command.to_string(),
        cwd: std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into()),
        session: "explain".into(),
        // The session this runs in: its depth, as its shell exports it.
        depth: std::env::var(crate::trace::context::DEPTH_ENV).ok().and_then(|d| d.trim().parse().ok()).unwrap_or(0),
        human_attached: true,
        instruction: None,
    };
    let decision = gate.decide(&request, &Grants::new());
    if json {
        println!("{}", explain::render_json(&decision));
    } else {
        print!("{}", explain::render_text(&decision));
    }
    explain::exit_code(&decision)
}

/// What `policy check` finds, without printing it.
pub fn check_report() -> Result<explain::CheckReport, String> {
    config().and_then(|cfg| explain::check(&cfg).map_err(|e| e.to_string()))
}

/// Validates the policy files; 0 when they load, 1 with the errors.
pub fn check() -> i32 {
    match check_report() {
        Ok(report) => {
            print!("{}", report.render());
            let layers = crate::agent::gate::layers(None).unwrap_or_default();
            for w in crate::agent::gate::policy_warnings(&layers) {
                println!("warning: {w}");
            }
            0
        }
        Err(e) => {
            eprintln!("unixagent: {e}");
            1
        }
    }
}
