//! The keyboard as a source of the turn's inputs: keys decoded for the
//! question, the person's editor for `e`, and the timing of Ctrl+C.

use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;
use ua_term::keys::{Key, KeyDecoder};

/// Two Ctrl+C within this long end the turn at once.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(1);

/// The keys a turn reads.
#[derive(Debug, Default)]
pub(in crate::session) struct KeyInput {
    decoder: KeyDecoder,
    /// The person's editor, while it has the terminal.
    editing: Option<oneshot::Receiver<Result<String, String>>>,
    last_interrupt: Option<Instant>,
}

impl KeyInput {
    /// The keys in `bytes`.
    pub(in crate::session) fn decode(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.decoder.decode(bytes).into_iter().map(|k| k.key).collect()
    }

    /// Ctrl+C now: true when it is the second within a second.
    pub(in crate::session) fn double_interrupt(&mut self) -> bool {
        let now = Instant::now();
        let double = self.last_interrupt.is_some_and(|t| now.duration_since(t) < DOUBLE_INTERRUPT);
        self.last_interrupt = Some(now);
        double
    }

    /// Opens `command` in `$VISUAL` / `$EDITOR` (like `git commit`); the
    /// loop stops reading keys until it closes.
    pub(in crate::session) fn edit(&mut self, command: &str) -> Result<(), String> {
        self.editing = Some(crate::editor::spawn(command)?);
        Ok(())
    }

    /// The editor has the terminal.
    pub(in crate::session) fn editing(&self) -> bool {
        self.editing.is_some()
    }

    /// The edited command, once the editor closes (raw mode is back on).
    pub(in crate::session) async fn edited(&mut self) -> Option<Result<String, String>> {
        let edited = match &mut self.editing {
            Some(rx) => rx.await.ok(),
            None => std::future::pending().await,
        };
        self.editing = None;
        let _ = crate::terminal::raw_on();
        edited
    }
}
