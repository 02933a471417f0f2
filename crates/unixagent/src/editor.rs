//! Editing a proposed command in the user's editor, like `git commit`:
//! `$VISUAL`, else `$EDITOR`, else `vi`, on a temporary file, with the
//! terminal handed over (the event loop stops reading the keyboard, raw
//! mode is off) until it exits.

use std::io::Write;
use std::process::Command;

use tokio::sync::oneshot;

/// The editor command, split like a shell would split a simple word list
/// (`EDITOR="code --wait"` works).
pub fn command() -> Vec<String> {
    let chosen = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    chosen.split_whitespace().map(str::to_string).collect()
}

/// Starts the editor on `command`; the receiver gets the edited text. The
/// caller stops reading the keyboard until then, and re-enables raw mode
/// when it arrives.
pub fn spawn(text: &str) -> Result<oneshot::Receiver<Result<String, String>>, String> {
    let mut file = tempfile::Builder::new()
        .prefix("unixagent-command-")
        .suffix(".sh")
        .tempfile()
        .map_err(|e| format!("could not create a file to edit the command in: {e}"))?;
    writeln!(file, "{text}").map_err(|e| format!("could not write the command to edit: {e}"))?;
    let argv = command();
    let (tx, rx) = oneshot::channel();
    crate::terminal::raw_off();
    let spawned = std::thread::Builder::new().name("editor".into()).spawn(move || {
        let Some((program, args)) = argv.split_first() else {
            let _ = tx.send(Err("no editor is set: set EDITOR".to_string()));
            return;
        };
        let status = Command::new(program).args(args).arg(file.path()).status();
        let result = match status {
            Ok(s) if s.success() => std::fs::read_to_string(file.path())
                .map(|text| text.trim_end_matches('\n').to_string())
                .map_err(|e| format!("could not read the edited command back: {e}")),
            Ok(s) => Err(format!("the editor ({program}) exited with {s}; the command was not changed")),
            Err(e) => Err(format!("could not start the editor {program}: {e}; set EDITOR")),
        };
        let _ = tx.send(result);
    });
    if let Err(e) = spawned {
        let _ = crate::terminal::raw_on();
        return Err(format!("could not start the editor: {e}"));
    }
    Ok(rx)
}
