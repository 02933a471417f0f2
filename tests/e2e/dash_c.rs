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

/// `unixagent --shell SHELL -c INSTRUCTION` in `home`, with no terminal
/// and its model at `base_url`.
fn one_shot(home: &Home, base_url: &str, shell: &std::path::Path, instruction: &str) -> std::process::Output {
    Command::new(unixagent())
        .arg("--shell")
        .arg(shell)
        .args(["-c", instruction])
        .env("HOME", home.path())
        .current_dir(home.path())
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn dash_c_instruction_is_a_one_shot_turn() {
    let home = Home::new();
    let out = one_shot(&home, &home.model.base_url(), "/bin/bash".as_ref(), "# list the files here");
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
    let out = one_shot(&home, &server.base_url(), "/bin/bash".as_ref(), "# make a file");
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

/// `script` piped into unixagent over bash in `home`, its model `server`;
/// stdout and stderr go into one pipe, to check their order.
fn pipe_into(home: &Home, server: &ua_testkit::provider::FakeProvider, script: &str) -> (String, Option<i32>) {
    pipe_into_shell(home, server, script, "/bin/bash")
}

fn pipe_into_shell(
    home: &Home,
    server: &ua_testkit::provider::FakeProvider,
    script: &str,
    shell: &str,
) -> (String, Option<i32>) {
    if !home.path().join(".config/unixagent/config.toml").exists() {
        home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    }
    home.write("script.txt", script);
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{} --shell {shell} < script.txt 2>&1", unixagent().display()))
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .env_remove("UNIXAGENT_SESSION")
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

#[test]
fn lines_on_a_pipe_go_to_the_shell_and_hash_lines_are_instructions() {
    let home = Home::new();
    let server = crate::agent::model(
        r#"
[[turn]]
text = "Looked: it is fine."
"#,
    );
    let (out, code) = pipe_into(&home, &server, "echo one\n# do a thing\ncd /tmp\necho two $PWD\nexit 3\necho never\n");
    // In script order; the agent's answer is plain text, with no escape.
    assert!(out.starts_with("one\nLooked: it is fine.\n"), "{out:?}");
    assert!(out.ends_with("\ntwo /tmp\n"), "{out:?}");
    assert!(!out.contains('\x1b') && !out.contains('\r') && !out.contains("never"), "{out:?}");
    assert_eq!(code, Some(3));
    let asked = crate::agent::messages(&server, 0);
    assert!(asked.last().unwrap().to_string().contains("do a thing"), "{asked:?}");
}

const PIPE_TWO_TURNS: &str = r#"
[[turn]]
text = "Here:"
tool_calls = [{ name = "shell", input = { command = "echo agent-in-$PWD; cat note.txt" } }]

[[turn]]
text = "First done."

[[turn]]
text = "Second done."
"#;

/// The agent works where the script is, and the instructions of one pipe
/// are one conversation.
#[test]
fn hash_lines_run_in_the_scripts_directory_and_share_a_conversation() {
    let home = Home::new();
    home.write("sub/note.txt", "a note from sub\n");
    let server = crate::agent::model(PIPE_TWO_TURNS);
    let (out, code) = pipe_into(&home, &server, "cd sub\n# what is in the note\necho between\n# and now\n");
    let sub = home.path().join("sub");
    let first = format!("agent-in-{}\na note from sub\n", sub.display());
    assert!(out.contains(&first), "{out:?}");
    let order: Vec<usize> = [first.as_str(), "First done.", "between", "Second done."]
        .iter()
        .map(|t| out.find(t).unwrap_or_else(|| panic!("{t:?} in {out:?}")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{out:?}");
    assert_eq!(code, Some(0), "{out}");
    // The second instruction's request carries the first one's exchange.
    let second = crate::agent::messages(&server, 2);
    let text = serde_json::to_string(&second).unwrap();
    assert!(
        text.contains("what is in the note") && text.contains("a note from sub") && text.contains("and now"),
        "{text}"
    );
}

/// Nobody is there to answer a question: a command that needs one is a
/// denial, and the model hears so.
#[test]
fn on_a_pipe_a_command_that_needs_a_person_is_denied() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n");
    let server = crate::agent::model(
        r#"
[[turn]]
tool_calls = [{ name = "shell", input = { command = "touch made-by-agent" } }]

[[turn]]
text = "Could not."
"#,
    );
    let (out, code) = pipe_into(&home, &server, "# make a file\n");
    assert!(out.contains("Could not."), "{out:?}");
    assert!(!home.path().join("made-by-agent").exists());
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    assert!(results.len() == 1 && results[0].0.contains("denied"), "{results:?}");
    assert_eq!(code, Some(0), "{out}");
}

/// A turn that fails as the last line makes the run fail, even though the
/// shell's last command succeeded.
#[test]
fn a_failed_turn_as_the_last_line_of_a_pipe_exits_non_zero() {
    let home = Home::new();
    let server = crate::agent::model(
        r#"
[[turn]]
status = 400
body = '{"type":"error","error":{"type":"invalid_request_error","message":"something the server did not like"}}'
"#,
    );
    let (out, code) = pipe_into(&home, &server, "true\n# try it\n");
    assert!(out.contains("something the server did not like"), "{out:?}");
    assert_ne!(code, Some(0), "{out}");
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
    let out = one_shot(&home, &server.base_url(), "/bin/bash".as_ref(), "# show me");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("plain-2") && stdout.contains("a mark here"), "{stdout:?}");
    assert!(!stdout.contains('\x1b') && !stdout.contains('\r') && !stdout.contains('\x07'), "{stdout:?}");
    assert!(format!("{stdout}{stderr}").contains("something the server did not like"), "{stdout}{stderr}");
}

/// A one-shot builds its backend as it starts, before any call waits for
/// it: a backend that cannot be built is the turn's error all the same,
/// said once, with the model never asked and the journal saying why.
#[test]
fn a_one_shot_whose_backend_cannot_be_built_says_why_once() {
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[backend]\ndefault = \"nowhere\"\n");
    let out = one_shot(&home, &home.model.base_url(), "/bin/bash".as_ref(), "# list the files here");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(text.matches("unknown backend 'nowhere'").count(), 1, "{text}");
    assert!(home.model.requests().is_empty(), "the model was asked");
    let session = only_session(&home.path().join(".local/share/unixagent/sessions"));
    let journal = std::fs::read_to_string(session.join("journal.jsonl")).unwrap();
    let errors: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{journal}");
    assert!(errors[0]["message"].as_str().unwrap().contains("unknown backend 'nowhere'"), "{journal}");
}

/// zsh prints PROMPT_SP (its end-of-line mark, spaces and `\r \r`)
/// after every command and before its hooks run: in text for a file or
/// pipe, and in what the model reads, it is noise and must not show.
#[test]
fn zsh_one_shot_output_has_no_prompt_sp_mark() {
    let home = Home::new();
    let server = crate::agent::model(
        r#"
[[turn]]
tool_calls = [{ name = "shell", input = { command = "printf no-newline-%s x" } }]

[[turn]]
text = "all done"
"#,
    );
    let out = one_shot(&home, &server.base_url(), &which("zsh"), "# show me");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find(|l| l.contains("no-newline-x")).unwrap_or_else(|| panic!("{stdout:?}"));
    assert_eq!(line.trim_start_matches(['$', ' ']), "no-newline-x", "{stdout:?}");
    assert!(!stdout.contains("   "), "{stdout:?}");
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    assert!(results[0].0.contains("no-newline-x") && !results[0].0.contains("x%"), "{results:?}");
    assert!(!results[0].0.contains("    "), "{results:?}");
}

/// fish runs a piped script only once it has read all of it, so nothing
/// can run between its lines: the instruction is skipped, with the reason,
/// and the run neither hangs nor loses the shell lines.
#[test]
fn a_hash_line_piped_into_fish_is_skipped_with_the_reason() {
    let home = Home::new();
    let server = crate::agent::model("[[turn]]\ntext = \"never asked\"\n");
    let fish = which("fish");
    let (out, code) = pipe_into_shell(&home, &server, "echo one\n# do a thing\necho two\n", &fish.to_string_lossy());
    assert!(out.contains("skipped `# do a thing`: fish runs a piped script only after reading all of it"), "{out:?}");
    assert!(out.contains("one\ntwo\n"), "{out:?}");
    assert_eq!(code, Some(0));
    assert_eq!(server.request_count(), 0);
}

/// A one-shot's instruction (and `--json -c`'s) goes to the model while
/// the shell still starts: start-up files that take their time (pyenv,
/// nvm, a slow prompt) are not waited for first. The command the model
/// proposes waits for the first prompt and runs as usual. Here the
/// `.bashrc` waits on a FIFO the test opens only once the model has been
/// asked.
#[test]
fn a_one_shot_asks_the_model_while_the_shell_still_starts() {
    one_shot_before_the_prompt(&["-c", "# say the answer"]);
    one_shot_before_the_prompt(&["--json", "-c", "# say the answer"]);
}

fn one_shot_before_the_prompt(args: &[&str]) {
    let home = Home::new();
    let fifo = home.path().join("startup.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    home.write(".bashrc", "PS1='PS1-MARK> '\nread -r _ < ~/startup.fifo\n");
    home.write(".config/unixagent/config.toml", "[shell]\nintegration_timeout_ms = 60000\n");
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ name = \"shell\", input = { command = \"echo ran-$((6*7))\" } }]\n[[turn]]\ntext = \"done\"\n",
    );
    let mut child = Command::new(unixagent())
        .args(["--shell", "/bin/bash"])
        .args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .current_dir(home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let asked = server.wait_until(std::time::Duration::from_secs(20), |r| !r.is_empty());
    // Let the shell go on, whatever happened: once its `.bashrc` reads the
    // FIFO (the model may well be asked before bash gets that far), and
    // not at all when it has already gone.
    eventually(std::time::Duration::from_secs(20), || {
        let go = nix::fcntl::open(
            &fifo,
            nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_NONBLOCK,
            nix::sys::stat::Mode::empty(),
        );
        match go {
            Ok(fd) => nix::unistd::write(&fd, b"go\n").is_ok(),
            Err(_) => child.try_wait().unwrap().is_some(),
        }
    });
    let out = child.wait_with_output().unwrap();
    assert!(asked.is_ok(), "{args:?}: the model was not asked before the shell's first prompt");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    assert!(results[0].0.contains("ran-42"), "{results:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("done"));
}
