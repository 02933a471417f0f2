use super::*;
use crate::span::{Kind, Status, Value};

fn span(writer: usize, n: usize, pad: usize) -> Span {
    let mut attributes = crate::span::Attributes::new();
    attributes.insert("writer".into(), Value::Int(i64::try_from(writer).unwrap()));
    attributes.insert("n".into(), Value::Int(i64::try_from(n).unwrap()));
    attributes.insert("pad".into(), "x".repeat(pad).into());
    Span {
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
        span_id: format!("{:016x}", writer * 100_000 + n + 1),
        parent_span_id: None,
        name: "execute_tool shell".into(),
        kind: Kind::Internal,
        start_ns: 1,
        end_ns: 2,
        status: Status::Unset,
        status_message: None,
        attributes,
        resource: Default::default(),
        summary: None,
    }
}

const WRITERS: usize = 12;
const LINES: usize = 150;
const WRITER_ENV: &str = "UA_SINK_TEST_WRITER";

/// Run twice over: as the test, it starts [`WRITERS`] copies of this test
/// binary that each run only this test with `UA_SINK_TEST_WRITER` set, and
/// those append [`LINES`] lines each, of sizes around and far above the
/// pipe buffer (4 KiB), all to one file at once.
#[test]
fn many_processes_append_whole_lines() {
    if let Some(spec) = std::env::var_os(WRITER_ENV) {
        let spec = spec.to_string_lossy().into_owned();
        let (writer, path) = spec.split_once(':').unwrap();
        let writer: usize = writer.parse().unwrap();
        let sink = Sink::at(path);
        for n in 0..LINES {
            // 0, 3000, 6000, … up to about 45 KB: many lines cross 4 KiB.
            sink.append(&[span(writer, n, (n * 3000) % 48_000)]).unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/traces.jsonl");
    let me = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            std::process::Command::new(&me)
                .args(["--exact", "sink::tests::many_processes_append_whole_lines", "--test-threads", "1"])
                .env(WRITER_ENV, format!("{w}:{}", path.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let mut seen = vec![0usize; WRITERS];
    for line in text.lines() {
        let s: Span = serde_json::from_str(line).unwrap_or_else(|e| panic!("a torn line ({e}): {:.200}", line));
        let Value::Int(w) = s.attributes["writer"] else { panic!("{s:?}") };
        seen[usize::try_from(w).unwrap()] += 1;
    }
    assert_eq!(seen, vec![LINES; WRITERS], "every line of every writer, whole");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
}

#[test]
fn the_inherited_sink_wins_then_the_config_then_the_data_directory() {
    let data = Path::new("/d/unixagent");
    let w = |env, configured| Where { env, configured, enabled: true, data_dir: Some(data) };
    assert_eq!(Sink::resolve(&w(None, None)).unwrap().unwrap().path(), Path::new("/d/unixagent/traces.jsonl"));
    let s = Sink::resolve(&w(None, Some("file:///var/log/ua/t.jsonl"))).unwrap().unwrap();
    assert_eq!(s.path(), Path::new("/var/log/ua/t.jsonl"));
    assert_eq!(s.url(), "file:///var/log/ua/t.jsonl");
    let s = Sink::resolve(&w(Some("file:///p/t.jsonl"), Some("file:///var/log/ua/t.jsonl"))).unwrap().unwrap();
    assert_eq!(s.path(), Path::new("/p/t.jsonl"));
    let e = Sink::resolve(&w(None, Some("http://collector:4318"))).unwrap_err();
    assert!(e.contains("[telemetry] sink") && e.contains("absolute path"), "{e}");
    assert_eq!(Sink::resolve(&Where { enabled: false, ..w(None, None) }).unwrap(), None);
}

#[test]
fn a_huge_span_is_still_one_line() {
    let mut s = span(0, 0, 3 * MAX_LINE);
    s.summary = Some(crate::span::Summary {
        actions: (0..500)
            .map(|_| crate::span::Action {
                kind: "shell".into(),
                command: "y".repeat(5000),
                exit: Some(0),
                duration_ms: 1,
                decision: "allow".into(),
            })
            .collect(),
        ..Default::default()
    });
    let l = line(&s);
    assert!(l.len() <= MAX_LINE && l.ends_with('\n') && l.matches('\n').count() == 1, "{}", l.len());
    let back: Span = serde_json::from_str(&l).unwrap();
    assert_eq!(back.span_id, s.span_id);
}

#[test]
fn rotation_renames_the_file_and_drops_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::at(dir.path().join(FILE));
    sink.append(&[span(0, 0, 0)]).unwrap();
    let old = dir.path().join("traces-20200101.jsonl");
    std::fs::write(&old, "{}\n").unwrap();
    let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(400 * 86_400);
    std::fs::File::options().write(true).open(&old).unwrap().set_modified(year_ago).unwrap();
    let problems = rotate(dir.path(), 30, std::time::SystemTime::now());
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!old.exists(), "older than 30 days");
    assert!(!dir.path().join(FILE).exists());
    let files = files(dir.path());
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].file_name().unwrap().to_string_lossy().starts_with("traces-2"));
    // Appending goes on in a new file.
    sink.append(&[span(0, 1, 0)]).unwrap();
    assert!(dir.path().join(FILE).exists());
}

#[test]
fn spans_are_read_back_across_rotated_files() {
    let dir = tempfile::tempdir().unwrap();
    let spans = vec![span(0, 0, 0), span(0, 1, 0), span(1, 0, 0)];
    Sink::at(dir.path().join("traces-20260101.jsonl")).append(&spans[..1]).unwrap();
    let sink = Sink::at(dir.path().join(FILE));
    sink.append(&spans[1..]).unwrap();
    OpenOptions::new().append(true).open(sink.path()).unwrap().write_all(b"{\"torn\":").unwrap();
    let (back, skipped) = read_all(dir.path(), |_| true);
    assert_eq!(back, spans);
    assert_eq!(skipped, 1);
}
