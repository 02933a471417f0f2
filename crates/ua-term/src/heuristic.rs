//! Guessing prompts when a shell has no integration.
//!
//! Without OSC 133 markers unixagent treats the shell as "at a prompt" once
//! its output has been quiet for [`QUIET`] and the current line looks like a
//! prompt. This is a guess, which is why instructions then need `##`: a
//! false guess can at worst turn a line starting with `##` into an
//! instruction.

use std::time::Duration;

/// How long the shell must be silent before its last line counts as a prompt.
pub const QUIET: Duration = Duration::from_millis(120);

/// Characters prompts commonly end with.
const PROMPT_ENDINGS: &[char] = &['$', '#', '%', '>', '❯', '»', '➜', ':'];

/// Whether the visible text of the current line looks like a shell prompt.
pub fn looks_like_prompt(line: &str) -> bool {
    let trimmed = line.trim_end();
    trimmed.len() < 200 && trimmed.ends_with(PROMPT_ENDINGS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prompts() {
        for p in ["$ ", "user@host:~$ ", "# ", "% ", "> ", "❯ ", "[me@box tmp]$"] {
            assert!(looks_like_prompt(p), "{p:?}");
        }
    }

    #[test]
    fn not_prompts() {
        for p in ["", "Downloading 45%...", "hello world", "Progress: 10/20 done"] {
            assert!(!looks_like_prompt(p), "{p:?}");
        }
    }
}
