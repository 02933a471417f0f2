//! unixagent's own files: the config and its warnings, the policy files
//! (`policy check`), the data directory (writable, its size), the session
//! index's health and the audit log's permissions. Nothing is written:
//! writability is asked of the kernel (`access(2)`), which also answers
//! for a read-only file system.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use nix::unistd::AccessFlags;

use super::Check;
use crate::config::{ConfigError, Loaded};

const AREA: &str = "files";

pub fn checks(named: Option<&Path>, loaded: &Result<Loaded, ConfigError>) -> Vec<Check> {
    let mut out = config(named, loaded);
    out.push(policy());
    match ua_store::session::data_dir() {
        Ok(data) => {
            let (dir, writable) = data_dir(&data);
            out.push(dir);
            if writable {
                out.push(index(&data));
            }
        }
        Err(e) => out.push(Check::problem(
            AREA,
            "data directory",
            format!("{e}, so sessions keep no journal and decisions no audit log"),
            "set HOME (or XDG_DATA_HOME) to an absolute path",
        )),
    }
    let env = |k: &str| std::env::var(k).ok();
    if let Ok(policy) = ua_policy::gate::PolicyConfig::from_env(&env) {
        out.push(audit_log(&policy.audit_path()));
    }
    out
}

fn config(named: Option<&Path>, loaded: &Result<Loaded, ConfigError>) -> Vec<Check> {
    let name = "config";
    match loaded {
        Err(e) => vec![Check::problem(
            AREA,
            name,
            e.to_string(),
            "fix the file; until then unixagent starts with the default settings",
        )],
        Ok(l) => {
            let place = crate::config::locate(named).map(|(p, _)| p);
            let mut out = vec![match &place {
                Some(p) if p.is_file() => Check::ok(AREA, name, format!("{} read", p.display())),
                Some(p) => Check::ok(AREA, name, format!("no {} (the defaults apply)", p.display())),
                None => Check::ok(AREA, name, "no config file (the defaults apply)"),
            }];
            out.extend(l.warnings.iter().map(|w| Check::warning(AREA, name, w.clone(), "remove or rename the key")));
            out
        }
    }
}

fn policy() -> Check {
    match crate::policy_cmd::check_report() {
        Ok(report) => {
            let policies: usize = report.layers.iter().map(|(_, n)| n).sum();
            let files = if report.files.is_empty() {
                "the built-in policy only".to_string()
            } else {
                report.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
            };
            let hooks = report.pre_exec.len() + report.post_exec.len();
            let hooks = if hooks == 0 { String::new() } else { format!(", {hooks} hooks") };
            Check::ok(AREA, "policy", format!("{policies} policies valid against the schema ({files}){hooks}"))
        }
        Err(e) => Check::problem(
            AREA,
            "policy",
            format!("the policy does not load, so agent commands cannot be checked: {e}"),
            "fix the file it names (`unixagent policy check` shows this again)",
        ),
    }
}

/// The data directory's line, and whether it is writable.
fn data_dir(data: &Path) -> (Check, bool) {
    let name = "data directory";
    let unwritable = |why: String| {
        Check::problem(
            AREA,
            name,
            format!(
                "{} is not writable ({why}), so sessions keep no journal and decisions no audit log",
                data.display()
            ),
            format!("`chmod u+rwx {}`, or set XDG_DATA_HOME to a directory you can write", data.display()),
        )
    };
    if !data.exists() {
        // It is made at the first session, in its nearest existing parent.
        let parent = data.ancestors().skip(1).find(|p| p.exists()).unwrap_or(Path::new("/"));
        return match nix::unistd::access(parent, AccessFlags::W_OK | AccessFlags::X_OK) {
            Ok(()) => (Check::ok(AREA, name, format!("{} is made at the first session", data.display())), false),
            Err(e) => (unwritable(format!("{} cannot be written: {}", parent.display(), e.desc())), false),
        };
    }
    if !data.is_dir() {
        return (unwritable("it is not a directory".into()), false);
    }
    if let Err(e) = nix::unistd::access(data, AccessFlags::W_OK | AccessFlags::X_OK) {
        return (unwritable(e.desc().to_string()), false);
    }
    let (bytes, files) = size(data);
    let mib = bytes as f64 / f64::from(1 << 20);
    (Check::ok(AREA, name, format!("{} is writable; {mib:.1} MiB in {files} files", data.display())), true)
}

/// Bytes and files under `dir`, not following symbolic links.
fn size(dir: &Path) -> (u64, u64) {
    let mut total = (0, 0);
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else { continue };
            if meta.is_dir() {
                todo.push(e.path());
            } else {
                total.0 += meta.len();
                total.1 += 1;
            }
        }
    }
    total
}

fn index(data: &Path) -> Check {
    let name = "session index";
    let sessions = data.join("sessions");
    let on_disk = std::fs::read_dir(&sessions)
        .map(|d| d.flatten().filter(|e| e.path().join(ua_store::session::META_FILE).is_file()).count())
        .unwrap_or(0);
    let file = sessions.join(ua_store::index::INDEX_FILE);
    if !file.exists() {
        if on_disk == 0 {
            return Check::ok(AREA, name, "no sessions yet");
        }
        return Check::warning(
            AREA,
            name,
            format!("{on_disk} sessions but no index, so listing them reads every journal once"),
            "`unixagent sessions reindex` builds it (`sessions list` does too)",
        );
    }
    let summaries = match ua_store::index::Index::open(data).and_then(|i| i.load()) {
        Ok(s) => s,
        Err(e) => {
            return Check::problem(
                AREA,
                name,
                format!("it cannot be read: {e}"),
                "`unixagent sessions reindex` rebuilds it",
            );
        }
    };
    let missing = on_disk.saturating_sub(summaries.len());
    if summaries.skipped > 0 || missing > 0 {
        let mut what = Vec::new();
        if summaries.skipped > 0 {
            what.push(format!("{} of its lines cannot be read", summaries.skipped));
        }
        if missing > 0 {
            what.push(format!("{missing} sessions on disk are not in it"));
        }
        return Check::warning(
            AREA,
            name,
            format!("{}: {}", file.display(), what.join(", ")),
            "`unixagent sessions reindex` rebuilds it from the journals",
        );
    }
    Check::ok(AREA, name, format!("{} sessions, every line readable", summaries.len()))
}

/// The audit log holds every command the agent proposed: only its owner
/// may read it (unixagent creates it 0600).
pub fn audit_log(path: &Path) -> Check {
    let name = "audit log";
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::ok(AREA, name, format!("none yet ({} is made at the first decision)", path.display()));
        }
        Err(e) => {
            return Check::problem(
                AREA,
                name,
                format!("{} cannot be read: {e}", path.display()),
                "check its permissions",
            );
        }
    };
    let mode = meta.mode() & 0o777;
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Check::problem(
            AREA,
            name,
            format!("{} belongs to user {}, not to you", path.display(), meta.uid()),
            format!("`chown $(id -u) {}` as that user or root", path.display()),
        );
    }
    if mode & 0o077 != 0 {
        return Check::problem(
            AREA,
            name,
            format!("{} can be read by other users (mode {mode:04o})", path.display()),
            format!("`chmod 600 {}`", path.display()),
        );
    }
    if let Err(e) = nix::unistd::access(path, AccessFlags::W_OK) {
        return Check::problem(
            AREA,
            name,
            format!("{} is not writable ({}), so decisions go unrecorded", path.display(), e.desc()),
            format!("`chmod 600 {}`", path.display()),
        );
    }
    Check::ok(AREA, name, format!("{} is yours alone (mode {mode:04o})", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn an_audit_log_others_can_read_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        assert_eq!(audit_log(&log).status, Status::Ok, "none yet");
        std::fs::write(&log, "{}\n").unwrap();
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = audit_log(&log);
        assert_eq!(c.status, Status::Problem);
        assert!(c.message.contains("mode 0644"), "{}", c.message);
        assert_eq!(c.fix.unwrap(), format!("`chmod 600 {}`", log.display()));
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(audit_log(&log).status, Status::Ok);
    }
}
