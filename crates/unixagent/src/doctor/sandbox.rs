//! The kernel sandbox: what the kernel offers (Landlock, seccomp, user
//! namespaces, and Ubuntu's AppArmor restriction of the latter), a real
//! trial of the rules on this home (the launcher applies them and runs a
//! command, so whatever this home holds that breaks the set-up shows here
//! rather than at the first unattended agent command), and `sandbox
//! status` in one line.

use std::path::Path;

use ua_sandbox::rules::{Mode, Rules};

use super::Check;
use crate::config::SandboxConfig;

const AREA: &str = "sandbox";

/// Where Ubuntu (23.10 and later) restricts unprivileged user namespaces.
const APPARMOR_USERNS: &str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";

const BEST_EFFORT: &str =
    "or set sandbox.mode = \"best-effort\" in config.toml to run agent commands with what can be enforced";

#[cfg(target_os = "linux")]
pub fn checks(cfg: &SandboxConfig) -> Vec<Check> {
    let support = ua_sandbox::linux::probe();
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let compiled = crate::agent::gate::layers(None).and_then(|l| crate::sandbox::compile(cfg, &cwd, &l));
    let enforce = match &compiled {
        Ok(c) => c.rules.mode == Mode::Enforce,
        Err(_) => cfg.mode.as_deref() != Some("best-effort"),
    };
    let mut out = vec![
        landlock(support.landlock_abi, enforce),
        seccomp(support.seccomp),
        namespaces(support.user_namespaces, compiled.as_ref().ok().map(|c| &c.rules), support.landlock_abi),
    ];
    let trial = match &compiled {
        Ok(_) => crate::sandbox::trial_run(cfg),
        Err(e) => Err(e.clone()),
    };
    let restricted = std::fs::read_to_string(APPARMOR_USERNS).ok();
    let exe = std::env::current_exe().unwrap_or_else(|_| "/usr/local/bin/unixagent".into());
    out.push(apparmor(restricted.as_deref(), support.user_namespaces && trial.is_ok(), &exe));
    out.push(rules_here(&cwd, &trial, enforce));
    out.push(match &compiled {
        Ok(c) => Check::ok(AREA, "sandbox status", summary(&c.rules, c.gate_only.len())),
        Err(e) => Check::problem(
            AREA,
            "sandbox status",
            format!("the rules cannot be compiled: {e}"),
            "`unixagent policy check` says which policy file is at fault",
        ),
    });
    out
}

#[cfg(target_os = "macos")]
pub fn checks(cfg: &SandboxConfig) -> Vec<Check> {
    let mut out = Vec::new();
    let present = Path::new(ua_sandbox::seatbelt::SANDBOX_EXEC).exists();
    out.push(if present {
        Check::ok(AREA, "Seatbelt", format!("{} is present", ua_sandbox::seatbelt::SANDBOX_EXEC))
    } else {
        Check::problem(
            AREA,
            "Seatbelt",
            format!(
                "{} is missing, so agent commands nobody watches cannot be sandboxed",
                ua_sandbox::seatbelt::SANDBOX_EXEC
            ),
            "reinstall macOS's command line tools",
        )
    });
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    out.push(match crate::agent::gate::layers(None).and_then(|l| crate::sandbox::compile(cfg, &cwd, &l)) {
        Ok(c) => Check::ok(AREA, "sandbox status", summary(&c.rules, c.gate_only.len())),
        Err(e) => Check::problem(
            AREA,
            "sandbox status",
            format!("the rules cannot be compiled: {e}"),
            "`unixagent policy check` says which policy file is at fault",
        ),
    });
    out
}

fn landlock(abi: i32, enforce: bool) -> Check {
    if abi > 0 {
        return Check::ok(AREA, "Landlock", format!("ABI {abi}"));
    }
    let message = "not available in this kernel, so nothing confines the files agent commands can reach";
    let fix = "boot a kernel with Landlock (Linux 5.13 or later, with landlock in its lsm= list)";
    if enforce {
        Check::problem(
            AREA,
            "Landlock",
            format!("{message}, and agent commands nobody watches do not run"),
            format!("{fix}, {BEST_EFFORT}"),
        )
    } else {
        Check::warning(AREA, "Landlock", format!("{message} (best-effort mode runs them unconfined)"), fix)
    }
}

fn seccomp(available: bool) -> Check {
    if available {
        Check::ok(AREA, "seccomp", "available")
    } else {
        Check::warning(
            AREA,
            "seccomp",
            "not available, so sandboxed commands may open UDP, raw and netlink sockets and use io_uring",
            "use a kernel built with CONFIG_SECCOMP_FILTER",
        )
    }
}

fn namespaces(available: bool, rules: Option<&Rules>, abi: i32) -> Check {
    if available {
        return Check::ok(AREA, "user namespaces", "available (network and mount namespaces for the sandbox)");
    }
    let missing = rules.map(|r| ua_sandbox::linux::shortfalls(abi.max(1), false, r)).unwrap_or_default();
    let what = if missing.is_empty() {
        "not available to unprivileged users; the sandbox falls back on Landlock's network rules".to_string()
    } else {
        format!("not available to unprivileged users: {}", missing.join("; "))
    };
    Check::warning(
        AREA,
        "user namespaces",
        what,
        "allow them (`sysctl user.max_user_namespaces=15000`; on Ubuntu see the AppArmor line)",
    )
}

/// Ubuntu's `kernel.apparmor_restrict_unprivileged_userns`: absent or 0
/// is fine; 1 confines an unprivileged process that makes a user
/// namespace to a profile without capabilities, so the sandbox's mounts
/// fail unless an AppArmor profile lets unixagent have them.
pub fn apparmor(value: Option<&str>, namespaces_work: bool, exe: &Path) -> Check {
    let name = "AppArmor";
    match value.map(str::trim) {
        None => Check::ok(AREA, name, "does not restrict user namespaces here"),
        Some("0") => Check::ok(AREA, name, "kernel.apparmor_restrict_unprivileged_userns = 0"),
        Some(_) if namespaces_work => Check::ok(
            AREA,
            name,
            "kernel.apparmor_restrict_unprivileged_userns = 1, and a profile lets unixagent use user namespaces",
        ),
        Some(_) => Check::problem(
            AREA,
            name,
            "kernel.apparmor_restrict_unprivileged_userns = 1 keeps unixagent from using user namespaces, so the sandbox cannot protect paths inside writable directories",
            format!(
                "give unixagent a profile: put `abi <abi/4.0>, include <tunables/global> profile unixagent {} flags=(unconfined) {{ userns, }}` in /etc/apparmor.d/unixagent and run `sudo apparmor_parser -r /etc/apparmor.d/unixagent` (or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` for every program)",
                exe.display()
            ),
        ),
    }
}

/// The trial's verdict: the rules built and applied here, or the line the
/// launcher failed with.
fn rules_here(cwd: &Path, trial: &Result<Vec<String>, String>, enforce: bool) -> Check {
    let name = "sandbox rules";
    match trial {
        Ok(gaps) if gaps.is_empty() => {
            Check::ok(AREA, name, format!("they build and apply in {} (a command ran in the sandbox)", cwd.display()))
        }
        Ok(gaps) => Check::warning(
            AREA,
            name,
            format!("a command ran in the sandbox in {}, but {}", cwd.display(), gaps.join("; ")),
            "see the kernel lines above for what is missing",
        ),
        Err(e) if e.contains("cannot be enforced") => Check::problem(
            AREA,
            name,
            format!("agent commands nobody watches will not run in {}: {e}", cwd.display()),
            if enforce { "fix what the lines above name" } else { "see the lines above" },
        ),
        Err(e) => Check::problem(
            AREA,
            name,
            format!("the sandbox cannot be applied in {}: {e}", cwd.display()),
            "`unixagent sandbox status` lists the rules; report that list with this line, since no home should make the set-up fail",
        ),
    }
}

/// `sandbox status` in one line.
fn summary(rules: &Rules, gate_only: usize) -> String {
    let mode = if rules.mode == Mode::Enforce { "enforce" } else { "best-effort" };
    let network = match rules.allow_hosts.len() {
        0 => "no network".to_string(),
        1 => "1 host through the proxy".to_string(),
        n => format!("{n} hosts through the proxy"),
    };
    let gate = match gate_only {
        0 => String::new(),
        1 => "; 1 forbid enforced by the gate only".to_string(),
        n => format!("; {n} forbids enforced by the gate only"),
    };
    format!(
        "mode {mode}: {} hidden, {} writable, {} never written; {network}{gate} (`unixagent sandbox status` lists them)",
        rules.read_deny.len(),
        rules.write_roots.len(),
        rules.write_protect.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn apparmor_matters_only_when_it_restricts_and_namespaces_fail() {
        let exe = Path::new("/usr/bin/unixagent");
        assert_eq!(apparmor(None, false, exe).status, Status::Ok);
        assert_eq!(apparmor(Some("0\n"), false, exe).status, Status::Ok);
        assert_eq!(apparmor(Some("1\n"), true, exe).status, Status::Ok);
        let c = apparmor(Some("1\n"), false, exe);
        assert_eq!(c.status, Status::Problem);
        let fix = c.fix.unwrap();
        assert!(fix.contains("profile unixagent /usr/bin/unixagent") && fix.contains("userns"), "{fix}");
    }

    #[test]
    fn without_landlock_enforce_is_a_problem_and_best_effort_a_warning() {
        assert_eq!(landlock(7, true).status, Status::Ok);
        let c = landlock(0, true);
        assert_eq!(c.status, Status::Problem);
        assert!(c.fix.unwrap().contains("best-effort"));
        assert_eq!(landlock(0, false).status, Status::Warning);
    }
}
