use std::os::unix::fs::symlink;

use super::*;
use crate::index::SessionState;
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

fn start(id: &str, parent: &str, pid: u32) -> Record {
    Record::Start {
        id: id.into(),
        ts: now_ms(),
        cwd: "/work".into(),
        shell: "/bin/bash".into(),
        pid,
        parent: Some(parent.into()),
        first_instruction: Some("check the logs".into()),
    }
}

/// A spooled child is in the index, under its root, from its start; its
/// import completes the record from its journal.
#[test]
fn a_spooled_child_is_indexed_while_it_runs_and_completed_by_its_import() {
    let w = world();
    let child = spooled(&w.reports, &w.root);
    let index = Index::open(&w.data).unwrap();
    assert!(index_running(&w.reports, &w.data, &start(child.id(), &w.root, std::process::id())).unwrap());
    let running = index.load().unwrap();
    let s = running.get(child.id()).expect("indexed while it runs");
    assert_eq!(s.parent.as_deref(), Some(w.root.as_str()));
    assert_eq!(s.state, SessionState::Running { pid: std::process::id() });
    assert_eq!(s.first_instruction.as_deref(), Some("check the logs"));
    assert_eq!(ids(&import(&w.reports, child.id(), &w.root, &w.data)), [Ok(child.id().to_string())]);
    let done = index.load().unwrap();
    let s = done.get(child.id()).unwrap();
    assert_eq!((s.exit_code, s.parent.as_deref()), (Some(0), Some(w.root.as_str())));
    assert_eq!(done.sessions().iter().filter(|s| s.id == child.id()).count(), 1);
}

/// A report cannot rewrite another session's record, nor index a spool
/// that is not there; one indexed and then refused leaves the index.
#[test]
fn only_a_spool_that_is_there_and_new_is_indexed_and_a_refused_one_leaves() {
    let w = world();
    let index = Index::open(&w.data).unwrap();
    let Record::Start { id, ts, cwd, shell, pid, .. } = start(&w.root, "", 1) else { unreachable!() };
    index.append(&Record::Start { id, ts, cwd, shell, pid, parent: None, first_instruction: None }).unwrap();
    // The root's own id (it has a session directory), a name that is not
    // an id, and an id with no spool.
    for id in [w.root.as_str(), "../../outside", "20261126T000000.000Z-0badc0de"] {
        assert!(!index_running(&w.reports, &w.data, &start(id, &w.root, 1)).unwrap(), "{id}");
    }
    assert!(index.load().unwrap().get(&w.root).unwrap().parent.is_none(), "the root's record is untouched");
    // A spool that is a symbolic link: indexed as it starts, refused at
    // its import, and out of the index after.
    let elsewhere = tempfile::tempdir().unwrap();
    let forged = "20261126T000000.000Z-0000f00d";
    symlink(elsewhere.path(), w.reports.join(forged)).unwrap();
    assert!(index_running(&w.reports, &w.data, &start(forged, &w.root, 1)).unwrap());
    assert!(index.load().unwrap().get(forged).is_some());
    assert!(import(&w.reports, forged, &w.root, &w.data)[0].is_err());
    unindex(&w.data, forged).unwrap();
    assert!(index.load().unwrap().get(forged).is_none());
    // unindex leaves a session that has a directory alone.
    unindex(&w.data, &w.root).unwrap();
    assert!(index.load().unwrap().get(&w.root).is_some());
}
