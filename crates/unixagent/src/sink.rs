//! Where submitted instructions go.
//!
//! Until the agent is connected, an instruction is acknowledged with one
//! dim line, `# captured: <text>`, and the shell gets its prompt back.

/// The acknowledgement line for `text`, dimmed when `colour` is set. It has
/// no trailing newline: in the interactive session the shell's fresh
/// prompt supplies it.
pub fn captured_line(text: &str, colour: bool) -> String {
    if colour { format!("\x1b[2m# captured: {text}\x1b[0m") } else { format!("# captured: {text}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_only_with_colour() {
        assert_eq!(captured_line("x", false), "# captured: x");
        assert_eq!(captured_line("x", true), "\x1b[2m# captured: x\x1b[0m");
    }
}
