use std::os::unix::fs::symlink;

use super::*;
use crate::journal::{Journal, SyncPolicy};
use crate::session::now_ms;
use ua_protocol::journal::JournalEntry;

fn meta(parent: &str) -> SessionMeta {
    SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: std::process::id(),
        shell: "/bin/bash".into(),
        cwd: "/tmp".into(),
        version: "0".into(),
        parent: Some(parent.into()),
        trace_id: None,
        trace_parent: None,
        parent_command: Some("toolu_1".into()),
        depth: 1,
    }
}

/// A data directory with the root session `ROOT` and its report directory.
struct World {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    reports: PathBuf,
    root: String,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("unixagent");
    let mut m = meta("nobody");
    m.parent = None;
    let root = SessionDir::create(&data, m).unwrap();
    let reports = root.path().join("board/.children-x");
    fs::create_dir_all(&reports).unwrap();
    World { data, reports, root: root.id().to_string(), _tmp: tmp }
}

/// A spooled child of `parent` in `reports` that journaled a start and an
/// end and finished one span.
fn spooled(reports: &Path, parent: &str) -> SessionDir {
    let dir = create(reports, meta(parent)).unwrap();
    let mut j = Journal::open(dir.journal_path(), SyncPolicy::default()).unwrap();
    j.append(&JournalEntry::SessionStart {
        session: dir.id().into(),
        pid: 1,
        shell: "/bin/bash".into(),
        cwd: "/".into(),
        os: "linux".into(),
        version: "0".into(),
    })
    .unwrap();
    j.append(&JournalEntry::SessionEnd { exit_code: Some(0) }).unwrap();
    fs::write(spans_of(dir.path()), "{\"span\":1}\n").unwrap();
    dir
}

fn ids(results: &[Result<Imported, SpoolError>]) -> Vec<Result<String, String>> {
    results.iter().map(|r| r.as_ref().map(|i| i.id.clone()).map_err(|e| e.why.to_string())).collect()
}

#[test]
fn a_spool_and_the_spools_it_carries_become_sessions_in_the_index() {
    let w = world();
    let child = spooled(&w.reports, &w.root);
    let grandchild = spooled(&children_of(child.path()), child.id());
    fs::write(children_of(child.path()).join(".1-2.ndjson"), "a report left behind\n").unwrap();
    let results = import(&w.reports, child.id(), &w.root, &w.data);
    assert_eq!(ids(&results), [Ok(child.id().to_string()), Ok(grandchild.id().to_string())]);
    let first = results[0].as_ref().unwrap();
    assert_eq!(first.spans, b"{\"span\":1}\n");
    assert!(first.index_error.is_none());
    let sessions = w.data.join("sessions");
    for id in [child.id(), grandchild.id()] {
        let names: Vec<String> =
            fs::read_dir(sessions.join(id)).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        assert!(!names.contains(&SPANS_FILE.to_string()) && !names.contains(&CHILDREN_DIR.to_string()), "{names:?}");
        assert!(names.contains(&JOURNAL_FILE.to_string()), "{names:?}");
    }
    assert!(!child.path().exists(), "the spool is gone");
    let summaries = Index::open(&w.data).unwrap().load().unwrap();
    let parent_of = |id: &str| summaries.sessions.iter().find(|s| s.id == id).and_then(|s| s.parent.clone());
    assert_eq!(parent_of(child.id()), Some(w.root.clone()));
    assert_eq!(parent_of(grandchild.id()), Some(child.id().to_string()));
    // Nothing is left beside the sessions.
    let left: Vec<_> =
        fs::read_dir(&w.data).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != "sessions").collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_forged_spool_is_refused_and_nothing_outside_is_touched() {
    let w = world();
    let outside = w.data.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "keep me").unwrap();
    let id = |n: u32| crate::session::session_id(now_ms(), n);

    // A symbolic link in place of the spool, one inside it, and a hard link.
    symlink(&outside, w.reports.join(id(1))).unwrap();
    let linked = spooled(&w.reports, &w.root);
    fs::remove_file(linked.journal_path()).unwrap();
    symlink(outside.join("secret"), linked.journal_path()).unwrap();
    let hard = spooled(&w.reports, &w.root);
    fs::hard_link(hard.journal_path(), outside.join("hard")).unwrap();
    // A file where a directory is expected.
    fs::write(w.reports.join(id(2)), "not a directory").unwrap();
    // A name that is no session id, and the root's own id.
    fs::create_dir(w.reports.join("not-an-id")).unwrap();
    let taken = w.reports.join(&w.root);
    fs::create_dir(&taken).unwrap();
    // A spool naming another parent.
    let stranger = spooled(&w.reports, "20200101T000000.000Z-00000000");

    let mut results = Vec::new();
    for name in spools_in(&w.reports) {
        results.extend(import(&w.reports, &name, &w.root, &w.data));
    }
    results.extend(import(&w.reports, "../../outside", &w.root, &w.data));
    results.extend(import(&w.reports, &format!("../{}", id(3)), &w.root, &w.data));
    let whys: Vec<String> =
        results.iter().map(|r| r.as_ref().map(|i| i.id.clone()).unwrap_err().why.to_string()).collect();
    assert_eq!(whys.len(), 9, "{whys:?}");
    for expected in [
        "the spool is not a regular file or a directory",
        "journal.jsonl is not a regular file or a directory",
        "journal.jsonl has more than one link",
        "its name is not a session id",
        "a session with that id already exists and was left as it was",
    ] {
        assert!(whys.iter().any(|w| w == expected), "{expected:?} in {whys:?}");
    }
    assert!(whys.iter().any(|w| w.starts_with("its meta.json names another parent")), "{whys:?}");
    // The outside files are as they were, the root session too, and no
    // forged session reached the index or the sessions directory.
    assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "keep me");
    assert!(outside.join("hard").exists());
    let sessions: Vec<_> = fs::read_dir(w.data.join("sessions"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    assert_eq!(sessions, std::slice::from_ref(&w.root));
    assert!(SessionDir::open(w.data.join("sessions").join(&w.root)).is_ok());
    assert!(!stranger.path().exists() && !linked.path().exists());
    let left: Vec<_> =
        fs::read_dir(&w.data).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != "sessions").collect();
    assert!(left.is_empty(), "{left:?}");
}
