//! The audit log: append-only JSONL that survives a torn last line.

use super::Env;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use ua_policy::audit::{self, Approver, AuditLog, Record};
use ua_policy::grants::Grants;

#[test]
fn decisions_and_outcomes_are_recorded_with_the_same_id() {
    let env = Env::new();
    let gate = env.gate();
    let log = AuditLog::open(&env.cfg.audit_path()).unwrap();
    let req = env.request("rm -rf /");
    let denied = gate.decide(&req, &Grants::new());
    log.append(&Record::decision("c1", &req, &denied)).unwrap();
    let req2 = env.request("touch a.txt");
    let asked = gate.decide(&req2, &Grants::new());
    log.append(&Record::decision("c2", &req2, &asked)).unwrap();
    log.append(&Record::human("c2", &req2, &asked, true)).unwrap();
    log.append(&Record::outcome("c2", &req2, &asked, Some(0), Duration::from_millis(12))).unwrap();

    let records = audit::read(&env.cfg.audit_path()).unwrap();
    assert_eq!(records.len(), 4);
    assert_eq!(records[0].decision, "deny");
    assert_eq!(records[0].rule, "deny:rm-root");
    assert_eq!(records[0].approver, Approver::Policy);
    assert_eq!(records[0].session, "test-session");
    assert_eq!(records[0].pid, std::process::id());
    assert_eq!(records[1].decision, "ask");
    assert_eq!(records[2].approver, Approver::Human);
    assert_eq!(records[2].decision, "approved");
    assert_eq!((records[3].id.as_str(), records[3].exit_code, records[3].duration_ms), ("c2", Some(0), Some(12)));
    assert!(records[3].time.ends_with('Z') && records[3].time.len() == 24, "{}", records[3].time);
    let mode = std::fs::metadata(env.cfg.audit_path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn concurrent_writers_never_interleave_lines() {
    let env = Env::new();
    let path = env.cfg.audit_path();
    let req = env.request("ls");
    let d = env.gate().decide(&req, &Grants::new());
    std::thread::scope(|s| {
        for t in 0..4 {
            let (path, req, d) = (&path, &req, &d);
            s.spawn(move || {
                // Separate opens, as separate processes would have.
                let log = AuditLog::open(path).unwrap();
                for i in 0..200 {
                    let mut r = Record::decision(format!("{t}-{i}"), req, d);
                    r.command = "x".repeat(500 + i);
                    log.append(&r).unwrap();
                }
            });
        }
    });
    let records = audit::read(&path).unwrap();
    assert_eq!(records.len(), 800);
}

#[test]
fn a_torn_last_line_is_skipped_and_a_bad_middle_line_is_reported() {
    let env = Env::new();
    let path = env.cfg.audit_path();
    let req = env.request("ls");
    let d = env.gate().decide(&req, &Grants::new());
    let log = AuditLog::open(&path).unwrap();
    log.append(&Record::decision("a", &req, &d)).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"id\":\"b\",\"time\":\"20").unwrap();
    assert_eq!(audit::read(&path).unwrap().len(), 1);
    f.write_all(b"\n").unwrap();
    log.append(&Record::decision("c", &req, &d)).unwrap();
    let err = audit::read(&path).unwrap_err().to_string();
    assert!(err.contains(":2:"), "{err}");
}

#[test]
fn the_default_policy_keeps_agent_commands_away_from_the_log() {
    let env = Env::new();
    let gate = env.gate();
    let log = env.cfg.audit_path();
    for cmd in [
        format!("echo forged >> {}", log.display()),
        format!("rm {}", log.display()),
        format!("truncate -s 0 {}", log.display()),
        format!("mv {} /tmp/x", env.cfg.data_dir.display()),
    ] {
        let d = gate.decide(&env.request(&cmd), &Grants::new());
        assert_eq!(d.outcome, ua_policy::gate::Outcome::Deny, "{cmd}: {d:?}");
    }
}
