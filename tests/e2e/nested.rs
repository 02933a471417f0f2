//! Shells that are not ours: a nested bash, zsh or fish whose prompt prints
//! OSC 133 markers of its own (bare, with another `aid`, or fish 4's), and
//! a second unixagent. unixagent follows only its own shell's markers: `#`
//! typed in the nested shell goes to that shell, the model hears nothing,
//! the agent never types into it, and after `exit` our own `#` works again.

use crate::agent::{messages, model, start_with, tool_results};
use crate::support::*;

/// A nested shell with an integration of its own, started at our prompt.
pub struct Nested {
    /// What to type at our prompt to start it.
    pub command: &'static str,
    /// An rc file it reads (path relative to HOME, text).
    pub rc: (&'static str, &'static str),
    /// Its prompt.
    pub prompt: &'static str,
    /// A foreign marker its prompt prints, to wait for.
    pub marker: &'static [u8],
}

/// A bash with bare markers (as VS Code's or WezTerm's integration prints).
pub const BASH: Nested = Nested {
    command: "bash --rcfile ~/nested.bashrc",
    rc: (
        "nested.bashrc",
        "PS1='\\[\\e]133;A\\a\\]NESTED> \\[\\e]133;B\\a\\]'\nPS0='\\e]133;C\\a'\n\
         PROMPT_COMMAND='printf \"\\e]133;D;%s\\a\\e]7;file://h/nested-bash\\a\" $?'\nHISTFILE=/dev/null\n",
    ),
    prompt: "NESTED> ",
    marker: b"\x1b]133;B\x07",
};

/// A zsh whose markers carry its own id (as ghostty's and DomTerm's do).
pub const ZSH: Nested = Nested {
    command: "ZDOTDIR=~/nested-zsh zsh",
    rc: (
        "nested-zsh/.zshrc",
        "setopt interactivecomments\nHISTFILE=/dev/null\nPS1=$'%{\\e]133;A;aid=zsh'$$$'\\a%}NESTED> %{\\e]133;B;aid=zsh'$$$'\\a%}'\n\
         precmd() { print -n \"\\e]133;D;$?;aid=zsh$$\\a\\e]7;file://h/nested-zsh\\a\" }\n\
         preexec() { print -n \"\\e]133;C;aid=zsh$$\\a\" }\n",
    ),
    prompt: "NESTED> ",
    marker: b"\x1b]133;B;aid=zsh",
};

/// A fish printing what fish 4 prints by itself.
pub const FISH: Nested = Nested {
    command: "fish --no-config -C 'source ~/nested.fish'",
    rc: (
        "nested.fish",
        "function fish_prompt; printf '\\e]133;A;click_events=1\\a\\e]7;file://h/nested-fish\\a'; \
         printf 'NESTED> '; printf '\\e]133;B\\a'; end\n\
         function __c --on-event fish_preexec; printf '\\e]133;C;cmdline_url=%s\\a' (string escape --style=url -- $argv); end\n\
         function __d --on-event fish_postexec; printf '\\e]133;D;%s\\a' $status; end\n",
    ),
    prompt: "NESTED> ",
    marker: b"\x1b]133;A;click_events=1\x07",
};

/// Starts `nested` at our prompt and waits for its prompt.
pub fn enter(t: &mut Term, home: &Home, nested: &Nested) {
    home.write(nested.rc.0, nested.rc.1);
    t.send(format!("{}\r", nested.command));
    wait_nested_prompt(t, nested, 1);
}

/// Waits until the nested shell has printed its prompt `n` times.
pub fn wait_nested_prompt(t: &Term, nested: &Nested, n: usize) {
    t.wait_for(&format!("nested prompt #{n}"), |s| {
        s.count(nested.marker) >= n && s.cursor_row().ends_with(nested.prompt.trim_end())
    });
}

#[test]
fn hash_in_a_nested_shell_goes_to_that_shell() {
    for (outer, nested) in [("bash", &BASH), ("bash", &ZSH), ("bash", &FISH), ("zsh", &BASH), ("fish", &ZSH)] {
        let home = Home::new();
        let mut t = home.start(outer);
        let ours = prompts(&t);
        enter(&mut t, &home, nested);
        // Its markers reach the terminal as it printed them.
        let before = t.with(|s| s.count(nested.marker));
        assert!(before >= 1);

        // A comment for the nested shell, not an instruction for us.
        t.send("# hello-nested\r");
        wait_nested_prompt(&t, nested, before + 1);
        let sum = if nested.command.starts_with("fish") { "(math 6 \\* 7)" } else { "$((6*7))" };
        t.send(format!("echo nested-{sum}\r"));
        t.wait_text("nested-42");
        wait_nested_prompt(&t, nested, before + 2);
        assert_eq!(home.model.request_count(), 0, "{outer} > {}: the model was asked", nested.command);
        let screen = t.screen_text();
        assert!(screen.contains("NESTED> # hello-nested"), "{outer} > {}:\n{screen}", nested.command);
        assert_eq!(prompts(&t), ours, "{outer} > {}: a nested prompt counted as ours", nested.command);

        // Back in our shell, `#` is ours again.
        t.send("exit\r");
        wait_prompt(&t, ours + 1);
        t.send("# hello-outer\r");
        assert_eq!(home.wait_instructions(1), vec!["hello-outer".to_string()], "{outer} > {}", nested.command);
        t.wait_text(REPLY);
    }
}

#[test]
fn without_integration_a_nested_shell_neither_confirms_markers_nor_moves_the_cwd() {
    // Our shell (dash) has no integration: every marker and cwd report is
    // someone else's, and prompts stay guessed.
    let home = Home::new();
    home.write(BASH.rc.0, BASH.rc.1);
    let mut t = Spawn::new(unixagent())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("PS1", "dash$ ")
        .cwd(home.path())
        .args(["--shell", "/bin/dash"])
        .start();
    t.wait_text("start instructions with ##");
    t.wait_for("dash prompt", |s| s.cursor_row() == "dash$");
    t.send(format!("{}\r", BASH.command.replace('~', &home.path().display().to_string())));
    wait_nested_prompt(&t, &BASH, 1);
    t.send("echo in-nested\r");
    wait_nested_prompt(&t, &BASH, 2);
    t.send("exit\r");
    t.wait_for("dash prompt again", |s| s.cursor_row() == "dash$");
    t.send("## where am I\r");
    assert_eq!(home.wait_instructions(1), vec!["where am I".to_string()]);
    let system = home.model.requests()[0].json()["system"].to_string();
    let want = home.path().canonicalize().unwrap().display().to_string();
    assert!(system.contains(&want) && !system.contains("nested-bash"), "not our cwd: {system}");
}

const RUNS_A_NESTED_SHELL: &str = r#"
[[turn]]
text = "Opening a shell, then one more command."
tool_calls = [
  { name = "shell", input = { command = "bash --rcfile ~/nested.bashrc" } },
  { name = "shell", input = { command = "echo outer-ran-$((2+3))" } },
]

[[turn]]
text = "Both done."
"#;

#[test]
fn agent_commands_are_never_typed_into_a_nested_shell() {
    let home = Home::new();
    home.write(BASH.rc.0, BASH.rc.1);
    let server = model(RUNS_A_NESTED_SHELL);
    let mut t = start_with(&home, "bash", &server);
    t.send("# open a shell\r");
    t.wait_text("❯ bash --rcfile");
    t.send("y");
    wait_nested_prompt(&t, &BASH, 1);
    // The nested prompt is not our shell's: the second command waits for
    // ours. Keys go to the running command, i.e. the nested shell.
    t.send("echo still-nested\r");
    t.wait_text("still-nested");
    wait_nested_prompt(&t, &BASH, 2);
    let screen = t.screen_text();
    assert!(!screen.contains("outer-ran"), "the agent's next command was shown or typed early:\n{screen}");
    assert_eq!(server.request_count(), 1);

    t.send("exit\r");
    t.wait_text("❯ echo outer-ran-$((2+3))");
    t.send("y");
    t.wait_text("outer-ran-5");
    t.wait_text("Both done.");
    let results = tool_results(&messages(&server, 1));
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].0.contains("still-nested") && results[0].0.contains("exit status: 0"), "{results:?}");
    assert!(results[1].0.contains("outer-ran-5"), "{results:?}");
    let screen = t.screen_text();
    assert!(!screen.contains("NESTED> echo outer-ran"), "{screen}");
}

#[test]
fn hash_in_a_nested_unixagent_is_its_instruction() {
    let home = Home::new();
    let inner_model = model("repeat = true\n[[turn]]\ntext = \"inner-reply\"\n");
    home.write("inner/.zshrc", "PS1='INNER> '\nsetopt interactivecomments\nHISTFILE=/dev/null\n");
    let mut t = home.start("bash");
    let ours = prompts(&t);
    // UNIXAGENT_SESSION unset, as after `sudo -i` or `ssh`: the inner one
    // runs a whole session of its own, with markers of its own id.
    t.send(format!(
        "env -u UNIXAGENT_SESSION ZDOTDIR=~/inner ANTHROPIC_BASE_URL={} {} --shell {}\r",
        inner_model.base_url(),
        unixagent().display(),
        which("zsh").display()
    ));
    t.wait_for("inner prompt", |s| s.cursor_row().ends_with("INNER>"));
    t.send("# hello-inner\r");
    inner_model.wait_until(std::time::Duration::from_secs(20), |r| !r.is_empty()).expect("the inner model is asked");
    t.wait_text("inner-reply");
    t.wait_for("inner prompt again", |s| s.cursor_row().ends_with("INNER>") && s.text().contains("inner-reply"));
    assert_eq!(home.model.request_count(), 0, "the outer model was asked");
    assert_eq!(prompts(&t), ours);

    t.send("exit\r");
    wait_prompt(&t, ours + 1);
    t.send("# hello-outer\r");
    assert_eq!(home.wait_instructions(1), vec!["hello-outer".to_string()]);
    assert_eq!(inner_model.request_count(), 1);
}

/// fish ≥ 4 (`fish4`, from scripts/test-deps.sh, or another one named by
/// `UA_TEST_FISH4`; Debian 12 ships fish 3.6): as our shell its own
/// markers are off and ours work; nested, its own markers (which it prints
/// by default) are not ours.
#[test]
fn fish_4_marks_with_our_id_as_our_shell_and_is_foreign_when_nested() {
    let fish4 = std::env::var_os("UA_TEST_FISH4").map_or_else(|| which("fish4"), Into::into);
    const FISH4_A: &[u8] = b"\x1b]133;A;special_key=1";
    const FISH4_A_NEWER: &[u8] = b"\x1b]133;A;click_events=1";
    let home = Home::new();
    let mut t = Spawn::new(unixagent())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .cwd(home.path())
        .arg("--shell")
        .arg(&fish4)
        .start();
    wait_prompt(&t, 1);
    run(&mut t, "echo fish4-(math 6 \\* 7)");
    t.wait_text("fish4-42");
    // From 4.0.6 `no-mark-prompt` turns its own markers off; 4.0.0–4.0.5
    // (Debian 13's 4.0.2) print them regardless, and ours work beside them.
    let own = t.with(|s| s.count(FISH4_A) + s.count(FISH4_A_NEWER));
    if knows_no_mark_prompt(&fish4) {
        assert_eq!(own, 0, "fish printed its own markers");
    } else {
        assert!(own > 0, "fish 4 before 4.0.6 printed no markers of its own");
    }
    t.send("# hello-fish4\r");
    assert_eq!(home.wait_instructions(1), vec!["hello-fish4".to_string()]);
    t.wait_text(REPLY);
    drop(t);

    let home = Home::new();
    let mut t = home.start("bash");
    let ours = prompts(&t);
    t.send(format!("{} --no-config -C 'function fish_prompt; printf \"F4> \"; end'\r", fish4.to_string_lossy()));
    t.wait_for("fish 4 prompt", |s| s.count(FISH4_A) + s.count(FISH4_A_NEWER) >= 1 && s.cursor_row().ends_with("F4>"));
    t.send("# hello-nested\r");
    t.send("echo nested-(math 6 \\* 7)\r");
    t.wait_text("nested-42");
    assert_eq!(home.model.request_count(), 0);
    t.send("exit\r");
    wait_prompt(&t, ours + 1);
    t.send("# hello-outer\r");
    assert_eq!(home.wait_instructions(1), vec!["hello-outer".to_string()]);
}

/// Whether this fish 4 knows the `no-mark-prompt` feature (4.0.6 and
/// later).
fn knows_no_mark_prompt(fish: &std::path::Path) -> bool {
    let out = std::process::Command::new(fish).arg("--version").output().expect("fish --version");
    let text = String::from_utf8_lossy(&out.stdout);
    // "fish, version 4.0.2"
    let version: Vec<u32> =
        text.rsplit(' ').next().unwrap_or_default().trim().split(['.', '-']).map_while(|p| p.parse().ok()).collect();
    assert!(version.len() >= 2, "unexpected version text {text:?}");
    version >= vec![4, 0, 6]
}
