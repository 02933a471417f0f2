//! A child's own output: its fold line and its answer, and nothing else.
//! That is what the parent's model reads as the command's output, so it
//! carries no progress, spinner frames or escape sequences. In the
//! foreground of its parent's terminal the child draws nothing while it
//! runs either: the parent draws its progress line, from the child's
//! report, beside the command's output rather than in it (see
//! `session::children`).
//!
//! The child runs as a batch session (no questions: "ask" is "deny") whose
//! NDJSON events are read here from a pipe put in place of stdout, exactly
//! as a parent reads a `--json` child, and folded by [`super::fold`]. With
//! `-v` the child prints everything instead (batch mode's plain text, or
//! in the foreground of a terminal an ordinary one-shot that may ask).

use std::io::{BufRead as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::time::{Duration, Instant};

use super::fold::Fold;

/// stdout is a pipe into the folding thread until [`Quiet::finish`].
#[derive(Debug)]
pub struct Quiet {
    /// The real stdout, where the summary goes.
    out: OwnedFd,
    reader: std::thread::JoinHandle<Fold>,
    started: Instant,
}

impl Quiet {
    /// Puts a pipe in place of stdout and starts reading it.
    pub fn start(instruction: &str) -> std::io::Result<Self> {
        let started = Instant::now();
        let out = nix::fcntl::fcntl(std::io::stdout().as_fd(), nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))
            .map_err(std::io::Error::from)?;
        // SAFETY: fcntl just returned this descriptor; nothing else owns it.
        let out = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(out) };
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
        // fd 1 becomes the pipe's only writing end (the pipe's own closes
        // here), so end of file comes when fd 1 is put back.
        nix::unistd::dup2_stdout(&write).map_err(std::io::Error::from)?;
        drop(write);
        let instruction = instruction.to_string();
        let reader = std::thread::Builder::new().name("child-fold".into()).spawn(move || {
            let mut fold = Fold::new(&instruction);
            let file = std::fs::File::from(read);
            for line in std::io::BufReader::new(file).lines() {
                let Ok(line) = line else { break };
                if let Ok(e) = serde_json::from_str(&line) {
                    fold.event(&e);
                }
            }
            fold
        })?;
        Ok(Self { out, reader, started })
    }

    /// Puts stdout back, waits for the last events and prints the summary.
    pub fn finish(self) {
        let _ = nix::unistd::dup2_stdout(&self.out);
        let took = self.started.elapsed();
        let Ok(fold) = self.reader.join() else { return };
        let mut out = std::fs::File::from(self.out);
        let _ = out.write_all(render(&fold, took).as_bytes());
    }
}

/// The fold line, the answer, and a line per command nobody could approve.
pub fn render(fold: &Fold, took: Duration) -> String {
    let mut s = fold.line(took);
    s.push('\n');
    for (command, why) in &fold.denied {
        s.push_str(&format!("  denied: {command} ({why})\n"));
    }
    if let Some(e) = &fold.error {
        s.push_str(e);
        s.push('\n');
    }
    let answer = fold.answer();
    if !answer.is_empty() {
        s.push_str(answer);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_the_line_then_the_answer() {
        let text = "{\"type\":\"text\",\"text\":\"All good.\"}\n\
                    {\"type\":\"result\",\"status\":\"ok\",\"exit_code\":0,\"usage\":{\"input\":10,\"output\":5},\"commands\":0}\n";
        let fold = super::super::fold::from_ndjson("check", text);
        assert_eq!(
            render(&fold, Duration::from_millis(500)),
            "▸ child ---- \"check\" · done · 0.5 s · 15 tokens · 0 commands\nAll good.\n"
        );
    }
}
