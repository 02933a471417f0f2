//! The one tool the model gets: `shell` (design §2.10.1).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The name the model calls the shell tool by.
pub const SHELL_TOOL: &str = "shell";

/// A tool as offered to a model: name, description and JSON Schema input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The `shell` tool definition.
pub fn shell_tool() -> ToolDefinition {
    ToolDefinition {
        name: SHELL_TOOL.to_owned(),
        description: "Run a command in the user's interactive shell. The command is typed \
                      into the same shell the user works in, so cd and exported variables \
                      persist between calls. The result holds the output and exit status."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The shell command line to run."
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["full", "final"],
                    "description": "full (default): all output. final: only what is left \
                                    after carriage-return overwrites, for progress bars."
                }
            },
            "required": ["command"]
        }),
    }
}

/// How much of a command's output goes back to the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    #[default]
    Full,
    /// Only what a terminal would still show after `\r` overwrites.
    Final,
}

/// The parsed input of a `shell` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellInput {
    pub command: String,
    #[serde(default)]
    pub output_mode: OutputMode,
}

impl ShellInput {
    /// Reads a `shell` call's input; the error says what was wrong, so it
    /// can go back to the model as an error tool result.
    pub fn from_value(input: &Value) -> Result<Self, String> {
        serde_json::from_value(input.clone()).map_err(|e| format!("invalid input for the shell tool: {e}"))
    }

    /// Applies this call's output mode to captured output.
    pub fn filter_output(&self, output: &str) -> String {
        apply_output_mode(self.output_mode, output)
    }
}

/// Applies an output mode to captured output.
pub fn apply_output_mode(mode: OutputMode, output: &str) -> String {
    match mode {
        OutputMode::Full => output.to_owned(),
        OutputMode::Final => final_output(output),
    }
}

/// What remains of `output` on a terminal once carriage returns and
/// backspaces have done their overwriting, line by line.
///
/// `\r` moves to column 0 and later characters overwrite in place, so
/// `"abcdef\rXY"` leaves `"XYcdef"` exactly as a terminal would, and a
/// progress bar that redraws itself collapses to its last state. `\r\n` is
/// an ordinary line end. Escape sequences are not interpreted: output
/// reaching here has already been stripped of them.
pub fn final_output(output: &str) -> String {
    let mut out = String::with_capacity(output.len());
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    for ch in output.chars() {
        match ch {
            '\n' => {
                out.extend(line.drain(..));
                out.push('\n');
                col = 0;
            }
            '\r' => col = 0,
            '\u{8}' => col = col.saturating_sub(1),
            c => {
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    out.extend(line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bar_collapses_to_last_state() {
        assert_eq!(
            final_output("Downloading  10%\rDownloading  55%\rDownloading 100%\ndone\n"),
            "Downloading 100%\ndone\n"
        );
    }

    #[test]
    fn shorter_overwrite_keeps_the_tail_like_a_terminal() {
        assert_eq!(final_output("abcdef\rXY"), "XYcdef");
    }

    #[test]
    fn crlf_is_a_plain_line_end() {
        assert_eq!(final_output("one\r\ntwo\r\n"), "one\ntwo\n");
    }

    #[test]
    fn backspace_moves_left() {
        assert_eq!(final_output("ab\u{8}c"), "ac");
        assert_eq!(final_output("\u{8}\u{8}x"), "x");
    }

    #[test]
    fn multibyte_characters_overwrite_whole() {
        assert_eq!(final_output("ééé\rab"), "abé");
    }

    #[test]
    fn full_mode_is_identity() {
        assert_eq!(apply_output_mode(OutputMode::Full, "a\rb"), "a\rb");
        assert_eq!(apply_output_mode(OutputMode::Final, "a\rb"), "b");
    }

    #[test]
    fn shell_input_defaults_to_full_and_rejects_bad_input() {
        let i = ShellInput::from_value(&json!({"command": "ls"})).unwrap();
        assert_eq!(i.output_mode, OutputMode::Full);
        let i = ShellInput::from_value(&json!({"command": "make", "output_mode": "final"})).unwrap();
        assert_eq!(i.output_mode, OutputMode::Final);
        assert_eq!(i.filter_output("1\r2"), "2");
        let e = ShellInput::from_value(&json!({"cmd": "ls"})).unwrap_err();
        assert!(e.contains("command"), "{e}");
        assert!(ShellInput::from_value(&json!({"command": "x", "output_mode": "half"})).is_err());
    }

    #[test]
    fn shell_tool_schema_requires_command() {
        let t = shell_tool();
        assert_eq!(t.name, "shell");
        assert_eq!(t.input_schema["required"], json!(["command"]));
        assert_eq!(t.input_schema["properties"]["output_mode"]["enum"], json!(["full", "final"]));
    }
}
