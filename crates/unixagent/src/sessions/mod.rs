//! `unixagent sessions …`: past sessions read back from the data
//! directory.

pub mod render;

use std::path::Path;

use ua_store::session::SessionDir;

/// The session whose id is `prefix` or starts with it. An ambiguous
/// prefix is an error listing the candidates.
pub fn find(data_dir: &Path, prefix: &str) -> Result<SessionDir, String> {
    let sessions = data_dir.join("sessions");
    let prefix = prefix.trim();
    if prefix.is_empty() {
        return Err("a session id (or a prefix of one) is needed".into());
    }
    let entries = match std::fs::read_dir(&sessions) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("there are no sessions yet ({} does not exist)", sessions.display()));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", sessions.display())),
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.starts_with(prefix))
        .collect();
    found.sort();
    match found.as_slice() {
        [] => Err(format!("no session id starts with {prefix:?} (`unixagent sessions list --all` lists them)")),
        [one] => SessionDir::open(sessions.join(one)).map_err(|e| e.to_string()),
        many => {
            let shown: Vec<&str> = many.iter().rev().take(5).map(String::as_str).collect();
            let more = if many.len() > 5 { format!(" and {} more", many.len() - 5) } else { String::new() };
            Err(format!("{prefix:?} names {} sessions: {}{more}; give more of the id", many.len(), shown.join(", ")))
        }
    }
}

/// Reads a session's journal, saying on stderr what was skipped.
fn read(dir: &SessionDir) -> Result<ua_store::journal::JournalContents, String> {
    let contents = ua_store::journal::read_journal(&dir.journal_path()).map_err(|e| e.to_string())?;
    for s in &contents.skipped {
        eprintln!("unixagent: {s}");
    }
    if contents.torn_tail {
        eprintln!("unixagent: the journal's last line is incomplete (the session was cut short) and was skipped");
    }
    Ok(contents)
}

/// `sessions show ID`.
pub fn show(prefix: &str) -> Result<i32, String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let dir = find(&data, prefix)?;
    let contents = read(&dir)?;
    print!("{}", render::render(&contents.lines, render::Style::Text));
    Ok(0)
}

/// `sessions export ID --format md|jsonl`.
pub fn export(prefix: &str, format: &str) -> Result<i32, String> {
    let data = ua_store::session::data_dir().map_err(|e| e.to_string())?;
    let dir = find(&data, prefix)?;
    match format {
        "jsonl" => {
            // The journal as it is, byte for byte.
            let path = dir.journal_path();
            let mut file = std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            std::io::copy(&mut file, &mut std::io::stdout().lock())
                .map_err(|e| format!("writing the export failed: {e}"))?;
        }
        _ => {
            let contents = read(&dir)?;
            print!("{}", render::render(&contents.lines, render::Style::Markdown));
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_finds_one_session_and_an_ambiguous_one_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["20261123T100000.000Z-aaaa", "20261123T100000.000Z-aabb", "20261124T090000.000Z-cccc"] {
            let d = dir.path().join("sessions").join(id);
            std::fs::create_dir_all(&d).unwrap();
            let meta = format!(
                r#"{{"id":"{id}","created_ms":0,"pid":1,"shell":"/bin/sh","cwd":"/","version":"0.1.0"}}"#
            );
            std::fs::write(d.join("meta.json"), meta).unwrap();
        }
        assert_eq!(find(dir.path(), "20261124").unwrap().id(), "20261124T090000.000Z-cccc");
        let err = find(dir.path(), "20261123T100000.000Z-aa").unwrap_err();
        assert!(err.contains("names 2 sessions") && err.contains("-aabb") && err.contains("-aaaa"), "{err}");
        assert!(find(dir.path(), "2027").unwrap_err().contains("no session id starts with"));
        assert!(find(&dir.path().join("none"), "2026").unwrap_err().contains("no sessions yet"));
    }
}
