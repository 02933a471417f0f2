//! `unixagent doctor [--json] [--offline]`: what keeps unixagent from
//! working on this machine, checked in the real environment (the user's
//! own start-up files, kernel, keys and files, never a clean stand-in).
//!
//! Each check ends as one [`Check`]: ok, a warning, or a problem that
//! names its fix. The checks that wait (starting each shell, asking each
//! backend's endpoint) run on threads of their own while the quick ones
//! run here, and the report keeps one fixed order whatever finished
//! first. Exit status: 0 when nothing is a problem, 1 otherwise.

mod backends;
mod files;
mod login;
mod sandbox;
mod shells;

use std::fmt::Write as _;
use std::os::fd::AsFd as _;
use std::path::PathBuf;

use serde::Serialize;

/// What the command line asked for.
#[derive(Debug)]
pub struct Options {
    /// `--config`, as for every other command.
    pub config: Option<PathBuf>,
    pub json: bool,
    /// Do not contact the backends.
    pub offline: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Works, but something is weaker or slower than it should be.
    Warning,
    /// Something the user relies on does not work.
    Problem,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// The group it belongs to: shells, sandbox, backends, files, login.
    pub area: &'static str,
    /// What was checked (`bash`, `Landlock`, `key anthropic`).
    pub name: String,
    pub status: Status,
    /// What was found.
    pub message: String,
    /// What to do about it; every problem has one.
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(area: &'static str, name: impl Into<String>, message: impl Into<String>) -> Self {
        Self { area, name: name.into(), status: Status::Ok, message: message.into(), fix: None }
    }

    pub fn warning(
        area: &'static str,
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self { area, name: name.into(), status: Status::Warning, message: message.into(), fix: Some(fix.into()) }
    }

    pub fn problem(
        area: &'static str,
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self { area, name: name.into(), status: Status::Problem, message: message.into(), fix: Some(fix.into()) }
    }

    /// The line people read: status, name, what was found and what to do.
    pub fn line(&self, colour: bool) -> String {
        let (word, code) = match self.status {
            Status::Ok => ("ok", "32"),
            Status::Warning => ("warning", "33"),
            Status::Problem => ("problem", "31"),
        };
        let word = if colour { format!("\x1b[{code}m{word:<7}\x1b[0m") } else { format!("{word:<7}") };
        match &self.fix {
            Some(fix) => format!("{word}  {}: {}; {fix}", self.name, self.message),
            None => format!("{word}  {}: {}", self.name, self.message),
        }
    }
}

/// Every check, in the order they are shown.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    pub fn problems(&self) -> usize {
        self.checks.iter().filter(|c| c.status == Status::Problem).count()
    }

    pub fn warnings(&self) -> usize {
        self.checks.iter().filter(|c| c.status == Status::Warning).count()
    }

    /// 0 when nothing is a problem, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.problems() > 0)
    }

    pub fn text(&self, colour: bool) -> String {
        let mut out = String::new();
        let mut area = "";
        for c in &self.checks {
            if c.area != area {
                area = c.area;
                let _ = writeln!(out, "{}{area}", if out.is_empty() { "" } else { "\n" });
            }
            let _ = writeln!(out, "  {}", c.line(colour));
        }
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(out, "\n{}, {}.", plural(self.problems(), "problem"), plural(self.warnings(), "warning"));
        out
    }

    pub fn json(&self) -> String {
        serde_json::json!({
            "checks": self.checks,
            "problems": self.problems(),
            "warnings": self.warnings(),
        })
        .to_string()
    }
}

/// Runs every check and prints the report; returns the exit status.
pub fn run(opts: &Options) -> i32 {
    let report = collect(opts);
    if opts.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text(crate::terminal::colour(std::io::stdout().as_fd())));
    }
    report.exit_code()
}

fn collect(opts: &Options) -> Report {
    let loaded = crate::config::load(opts.config.as_deref());
    let config = loaded.as_ref().map(|l| &l.config).ok();
    let default = crate::config::Config::default();
    let cfg = config.unwrap_or(&default);
    let user_shell = crate::shell::resolve(None, cfg.shell.command.as_deref());
    let timeout = std::time::Duration::from_millis(cfg.shell.integration_timeout_ms.max(100));
    // The slow ones first, on their own threads.
    let shells = shells::start(&user_shell, timeout);
    let backends = backends::start(cfg.backend.clone(), opts.offline);
    let mut report = Report::default();
    report.checks.extend(shells::finish(shells, cfg.shell.integration));
    report.checks.extend(sandbox::checks(&cfg.sandbox));
    report.checks.extend(backends::finish(backends));
    report.checks.extend(files::checks(opts.config.as_deref(), &loaded));
    report.checks.extend(login::checks());
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_sets_the_exit_status_and_names_its_fix() {
        let mut r = Report::default();
        r.checks.push(Check::ok("files", "config", "none (the defaults apply)"));
        r.checks.push(Check::warning("files", "audit log", "readable by others", "chmod 600 it"));
        assert_eq!(r.exit_code(), 0);
        r.checks.push(Check::problem("sandbox", "Landlock", "not available", "boot a kernel with it"));
        assert_eq!(r.exit_code(), 1);
        let text = r.text(false);
        assert!(text.contains("\n  problem  Landlock: not available; boot a kernel with it\n"), "{text}");
        assert!(text.contains("  ok       config: none (the defaults apply)\n"), "{text}");
        assert!(text.ends_with("\n1 problem, 1 warning.\n"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(v["problems"], 1);
        assert_eq!(v["checks"][2]["status"], "problem");
        assert_eq!(v["checks"][2]["fix"], "boot a kernel with it");
    }
}
