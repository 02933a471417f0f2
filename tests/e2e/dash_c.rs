//! `unixagent -c STRING` behaves exactly like `bash -c STRING`, so
//! unixagent can be a login shell for sshd, scp, rsync and git.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::support::*;

struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
    signal: Option<i32>,
}

fn run_with(mut cmd: Command, stdin: &[u8]) -> Ran {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Ran { stdout: out.stdout, stderr: out.stderr, code: out.status.code(), signal: out.status.signal() }
}

#[test]
fn dash_c_matches_bash_dash_c() {
    let home = Home::new();
    let cases: &[(&str, &[&str], &[u8])] = &[
        ("echo hello", &[], b""),
        (r#"echo "$0" "$1" "$#""#, &["zero", "one", "two"], b""),
        ("exit 42", &[], b""),
        (r#"printf 'a\tb\n'; echo err >&2; exit 3"#, &[], b""),
        ("cat", &[], b"piped input\nsecond line\n"),
        ("read -r x; echo got:$x", &[], b"a line\n"),
        (r#"echo 'single' "double $((1+2))" \$HOME"#, &[], b""),
        ("false || echo fallback", &[], b""),
        ("kill -TERM $$", &[], b""),
        (r"\# not an instruction", &[], b""),
        ("  echo leading-space", &[], b""),
        ("-x", &[], b""),
    ];
    for (string, args, stdin) in cases {
        let mut bash = Command::new("/bin/bash");
        bash.arg("-c").arg(string).args(*args).env("HOME", home.path());
        let mut ua = Command::new(unixagent());
        ua.arg("--shell").arg("/bin/bash").arg("-c").arg(string).args(*args).env("HOME", home.path());
        let (a, b) = (run_with(bash, stdin), run_with(ua, stdin));
        assert_eq!(String::from_utf8_lossy(&a.stdout), String::from_utf8_lossy(&b.stdout), "stdout of {string:?}");
        // bash names itself in its messages; so does the exec'd shell.
        assert_eq!(String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr), "stderr of {string:?}");
        assert_eq!((a.code, a.signal), (b.code, b.signal), "status of {string:?}");
    }
}

#[test]
fn login_shell_use_never_recurses_into_itself() {
    // sshd runs `$SHELL -c CMD` with $SHELL = unixagent.
    let home = Home::new();
    let out = Command::new(unixagent())
        .args(["-c", "echo via-$0"])
        .env("SHELL", unixagent())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("via-") && !stdout.contains("unixagent"), "{stdout}");
}

#[test]
fn dash_c_instruction_is_a_one_shot_turn() {
    let home = Home::new();
    let out = Command::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# list the files here"])
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(REPLY), "{stdout}");
    // Not a terminal: plain line ends, no escapes, no spinner.
    assert!(!stdout.contains('\r') && !stdout.contains('\x1b'), "{stdout:?}");
    assert_eq!(home.instructions(), vec!["list the files here"]);
}

#[test]
fn one_shot_without_a_terminal_denies_what_would_ask_and_exits_zero() {
    let home = Home::new();
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ name = \"shell\", input = { command = \"touch made-by-agent\" } }]\n[[turn]]\ntext = \"ok\"\n",
    );
    let out = Command::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# make a file"])
        .env("HOME", home.path())
        .current_dir(home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!home.path().join("made-by-agent").exists());
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    assert!(results[0].0.contains("no terminal to ask on"), "{results:?}");
}

#[test]
fn one_shot_in_a_terminal_asks_and_exits_with_the_last_status() {
    let home = Home::new();
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ name = \"shell\", input = { command = \"echo one-shot-$((40+2)); (exit 7)\" } }]\n[[turn]]\ntext = \"finished\"\n",
    );
    let mut t = Spawn::new(unixagent())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .cwd(home.path())
        .args(["--shell", "/bin/bash", "-c", "# do it"])
        .start();
    t.wait_text("[y] run");
    t.send("y");
    t.wait_text("one-shot-42");
    t.wait_text("finished");
    assert_eq!(t.wait_exit(), 7);
    // The shell's own prompt never showed.
    assert!(!t.screen_text().contains("$ "), "{}", t.screen_text());
}

#[test]
fn lines_on_a_pipe_go_to_the_shell_and_hash_lines_are_instructions() {
    let home = Home::new();
    // Both streams into one pipe, to check ordering.
    let script = format!(
        "printf 'echo one\\n# do a thing\\ncd /tmp\\necho two $PWD\\nexit 3\\necho never\\n' | {} --shell /bin/bash 2>&1",
        unixagent().display()
    );
    let out = Command::new("/bin/sh").arg("-c").arg(script).env("HOME", home.path()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "one\n# captured: do a thing\ntwo /tmp\n");
    assert_eq!(out.status.code(), Some(3));
}

/// A one-shot whose model fails after a command that succeeded exits
/// non-zero, and a file or pipe gets the command's output as text: no
/// colours, no shell markers.
#[test]
fn one_shot_exits_non_zero_when_the_turn_fails_and_writes_only_text() {
    let home = Home::new();
    let server = crate::agent::model(
        r#"
[[turn]]
tool_calls = [{ name = "shell", input = { command = "echo plain-$((1+1)); grep --color=always mark <<< 'a mark here'" } }]

[[turn]]
status = 400
body = '{"type":"error","error":{"type":"invalid_request_error","message":"something the server did not like"}}'
"#,
    );
    let out = Command::new(unixagent())
        .args(["--shell", "/bin/bash", "-c", "# show me"])
        .env("HOME", home.path())
        .current_dir(home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("plain-2") && stdout.contains("a mark here"), "{stdout:?}");
    assert!(!stdout.contains('\x1b') && !stdout.contains('\r') && !stdout.contains('\x07'), "{stdout:?}");
    assert!(format!("{stdout}{stderr}").contains("something the server did not like"), "{stdout}{stderr}");
}
