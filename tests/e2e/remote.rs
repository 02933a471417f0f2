//! Remote use against a real sshd on loopback (see `sshd.rs`): unixagent
//! as the login shell (commands, scp, rsync, git, an interactive `ssh -tt`,
//! a one-shot `ssh host '# …'`), `ssh -t host unixagent`, `#` typed in an
//! ssh session from a local unixagent, and the trace context. The fake
//! model listens on 127.0.0.1, which the "remote" reaches too: each remote
//! account gets its own config pointing at the model the test gives it.

use std::path::Path;
use std::process::Command;

use ua_testkit::provider::FakeProvider;

use crate::agent::{messages, model, tool_results};
use crate::nested;
use crate::sshd::{BASH, Sshd, UA, output, sshd};
use crate::support::*;

/// The remote account's own unixagent config, talking to `server`, and a
/// bash prompt the helpers recognise.
fn remote_setup(s: &Sshd, account: &str, server: &FakeProvider, shell_extra: &str) {
    s.write(
        account,
        ".config/unixagent/config.toml",
        &format!(
            "[shell]\n{shell_extra}\n[judge]\nmode = \"off\"\n[backend]\ndefault = \"remote\"\n\
             [backend.remote]\nkind = \"anthropic\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_cmd = \"echo test-key\"\n",
            server.base_url()
        ),
    );
    s.write(account, ".bashrc", "PS1='PS1-MARK> '\nHISTFILE=/dev/null\n");
    s.write(account, ".bash_profile", ". ~/.bashrc\n");
}

fn ssh(s: &Sshd, account: &str) -> Command {
    let mut c = s.ssh();
    c.arg(format!("{account}@ua"));
    c
}

fn local_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[test]
fn login_shell_runs_ssh_commands_with_their_output_and_status() {
    let s = sshd();
    let (out, err, code) = output(ssh(&s, UA).arg("echo hi-$((1+2)); echo to-stderr >&2; exit 7"));
    assert_eq!(code, Some(7), "stdout {out:?} stderr {err:?}\n{}", s.log());
    assert_eq!(out, "hi-3\n");
    assert!(err.contains("to-stderr"), "{err}");
    // Input reaches the command.
    let mut c = ssh(&s, UA);
    c.arg("tr a-z A-Z").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"piped\n").unwrap();
    let got = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout), "PIPED\n");
}

#[test]
fn scp_rsync_and_git_work_through_the_login_shell() {
    let s = sshd();
    let local = local_dir();
    let l = local.path();
    std::fs::write(l.join("payload.txt"), "payload-1\n").unwrap();
    let env = |c: &mut Command| {
        c.env("HOME", l).current_dir(l);
    };
    let run = |mut c: Command, what: &str| {
        env(&mut c);
        let (out, err, code) = output(&mut c);
        assert_eq!(code, Some(0), "{what}: {out}{err}\n{}", s.log());
        out
    };
    let home = s.home(UA);
    let cfg = s.ssh_config();

    // scp over sftp (the default), then the legacy protocol (`scp -t`
    // through the login shell), and back.
    for (flag, name) in [(None, "by-sftp.txt"), (Some("-O"), "by-scp.txt")] {
        let mut c = Command::new("scp");
        c.arg("-F").arg(&cfg).args(flag).arg("payload.txt").arg(format!("{UA}@ua:{name}"));
        run(c, "scp to");
        assert_eq!(std::fs::read_to_string(home.join(name)).unwrap(), "payload-1\n");
        let mut c = Command::new("scp");
        c.arg("-F").arg(&cfg).args(flag).arg(format!("{UA}@ua:{name}")).arg(format!("back-{name}"));
        run(c, "scp from");
        assert_eq!(std::fs::read_to_string(l.join(format!("back-{name}"))).unwrap(), "payload-1\n");
    }

    std::fs::create_dir(l.join("tree")).unwrap();
    std::fs::write(l.join("tree/a.txt"), "tree-a\n").unwrap();
    let mut c = Command::new("rsync");
    c.args(["-a", "-e"]).arg(s.ssh_command()).arg("tree/").arg(format!("{UA}@ua:synced/"));
    run(c, "rsync");
    assert_eq!(std::fs::read_to_string(home.join("synced/a.txt")).unwrap(), "tree-a\n");

    let (_, err, code) = output(ssh(&s, UA).arg("git init -q --bare repo.git"));
    assert_eq!(code, Some(0), "{err}");
    let git = |args: &[&str]| {
        let mut c = Command::new("git");
        c.args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .env("GIT_SSH_COMMAND", s.ssh_command());
        c
    };
    run(git(&["clone", "-q", &format!("{UA}@ua:repo.git"), "work"]), "git clone");
    std::fs::write(l.join("work/f.txt"), "f\n").unwrap();
    run(git(&["-C", "work", "add", "f.txt"]), "git add");
    run(git(&["-C", "work", "commit", "-qm", "pushed-over-ssh"]), "git commit");
    run(git(&["-C", "work", "push", "-q", "origin", "HEAD:refs/heads/main"]), "git push");
    let (log, err, _) = output(ssh(&s, UA).arg("git --git-dir=repo.git log --format=%s main"));
    assert_eq!(log, "pushed-over-ssh\n", "{err}");
    run(git(&["clone", "-q", &format!("{UA}@ua:repo.git"), "again"]), "git clone again");
    assert!(l.join("again/f.txt").is_file());
}

#[test]
fn ssh_tt_to_a_unixagent_login_shell_is_interactive_and_hash_works() {
    let s = sshd();
    let server = model("repeat = true\n[[turn]]\ntext = \"remote-reply\"\n");
    remote_setup(&s, UA, &server, "");
    let mut t = Spawn::new("ssh").arg("-F").arg(s.ssh_config()).arg("-tt").arg(format!("{UA}@ua")).start();
    wait_prompt(&t, 1);
    // The far end's markers, with the far end's id.
    assert!(our_aid(&t.raw()).is_some_and(|a| a.starts_with(b"ua")), "{:?}", String::from_utf8_lossy(&t.raw()));
    run(&mut t, "echo remote-$((2+2)) $HOME");
    t.wait_text(&format!("remote-4 {}", s.home(UA).display()));
    let n = prompts(&t);
    t.send("# hello-remote\r");
    t.wait_text("remote-reply");
    wait_prompt(&t, n + 1);
    let first = messages(&server, 0);
    assert!(first.last().unwrap().to_string().contains("hello-remote"), "{first:?}");
    t.send("exit\r");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn ssh_t_host_unixagent_runs_the_far_end_with_its_own_config() {
    let s = sshd();
    let server = model("repeat = true\n[[turn]]\ntext = \"far-reply\"\n");
    remote_setup(&s, BASH, &server, "");
    let mut t = Spawn::new("ssh")
        .arg("-F")
        .arg(s.ssh_config())
        .arg("-t")
        .arg(format!("{BASH}@ua"))
        .arg(s.unixagent().display().to_string())
        .start();
    wait_prompt(&t, 1);
    run(&mut t, "echo far-$((3+4)) $SHELL");
    t.wait_text("far-7 /bin/bash");
    t.send("# hello-far\r");
    t.wait_text("far-reply");
    assert!(messages(&server, 0).last().unwrap().to_string().contains("hello-far"));
    t.send("exit\r");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn hash_typed_in_an_ssh_session_goes_to_the_far_end() {
    let s = sshd();
    let home = Home::new();
    // The far bash prints markers of its own, without our id.
    s.write(BASH, ".bashrc", nested::BASH.rc.1);
    s.write(BASH, ".bash_profile", ". ~/.bashrc\n");
    let far_model = model("repeat = true\n[[turn]]\ntext = \"far-unixagent-reply\"\n");
    remote_setup(&s, UA, &far_model, "");
    let mut t = home.start("bash");
    let ours = prompts(&t);
    let cfg = s.ssh_config().display().to_string();

    // A far shell with markers: `#` is a comment there.
    t.send(format!("ssh -F {cfg} -tt {BASH}@ua\r"));
    nested::wait_nested_prompt(&t, &nested::BASH, 1);
    let before = t.with(|s| s.count(nested::BASH.marker));
    t.send("# hello-far-shell\r");
    nested::wait_nested_prompt(&t, &nested::BASH, before + 1);
    t.send("echo far-$((5*5))\r");
    t.wait_text("far-25");
    nested::wait_nested_prompt(&t, &nested::BASH, before + 2);
    assert!(t.screen_text().contains("NESTED> # hello-far-shell"), "{}", t.screen_text());
    t.send("exit\r");
    wait_prompt(&t, ours + 1);

    // A far unixagent: `#` is its instruction, for its model.
    t.send(format!("ssh -F {cfg} -tt {UA}@ua\r"));
    t.wait_for("far prompt", |s| {
        let raw = s.raw();
        let aids = raw.windows(12).filter(|w| w.starts_with(b"\x1b]133;A;aid=")).count();
        aids > our_markers(raw, 'A') && s.cursor_row().ends_with("PS1-MARK>")
    });
    t.send("# hello-far-agent\r");
    t.wait_text("far-unixagent-reply");
    assert_eq!(home.model.request_count(), 0, "the local model was asked");
    assert_eq!(prompts(&t), ours + 1, "a far prompt counted as ours");
    t.send("exit\r");
    wait_prompt(&t, ours + 2);

    // Home again: `#` is ours.
    t.send("# hello-local\r");
    assert_eq!(home.wait_instructions(1), vec!["hello-local".to_string()]);
    assert_eq!(far_model.request_count(), 1);
}

const ONE_SHOT: &str = r#"
[[turn]]
text = "Looking."
tool_calls = [
  { name = "shell", input = { command = "echo remote-ran-$((6*7))" } },
  { name = "shell", input = { command = "touch asked-file" } },
]

[[turn]]
text = "That was refused; one more."
tool_calls = [{ name = "shell", input = { command = "ls /nonexistent-remote-dir" } }]

[[turn]]
text = "done-remote"
"#;

#[test]
fn ssh_host_hash_instruction_is_a_one_shot_on_the_far_end() {
    let s = sshd();
    let server = model(ONE_SHOT);
    remote_setup(&s, UA, &server, "");
    let (out, err, code) = output(ssh(&s, UA).arg("# look around"));
    assert!(out.contains("remote-ran-42"), "stdout {out:?} stderr {err:?}\n{}", s.log());
    assert!(out.contains("done-remote"), "{out}");
    assert!(out.contains("No such file or directory") || err.contains("No such file or directory"), "{out}{err}");
    // No terminal: a question is a no, and nothing waits for an answer.
    assert!(!s.home(UA).join("asked-file").exists());
    assert!(!out.contains("[y] run") && !out.contains('\x1b'), "{out:?}");
    assert_eq!(code, Some(2), "the last command's status; stdout {out:?} stderr {err:?}");
    let results = tool_results(&messages(&server, 1));
    assert!(results[0].0.contains("remote-ran-42"), "{results:?}");
    assert!(results[1].1, "the asking command was refused: {results:?}");
    assert!(messages(&server, 0)[0].to_string().contains("look around"));
}

const SHOW_TRACE: &str = r#"
repeat = true

[[turn]]
tool_calls = [{ name = "shell", input = { command = "echo trace=$UA_TRACE_ID parent=$TRACEPARENT" } }]

[[turn]]
text = "traced"
"#;

/// The values after `trace=` and `parent=` in `out`.
fn trace_line(out: &str) -> (String, String) {
    let line = out.lines().find(|l| l.starts_with("trace=")).unwrap_or_else(|| panic!("no trace line in {out:?}"));
    let mut words = line.split(' ');
    let trace = words.next().unwrap().trim_start_matches("trace=").to_string();
    let parent = words.next().unwrap_or("").trim_start_matches("parent=").to_string();
    (trace, parent)
}

/// The `meta.json` of every session the account has run.
fn metas(home: &Path) -> Vec<serde_json::Value> {
    let dir = home.join(".local/share/unixagent/sessions");
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path().join("meta.json")).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_far_end_joins_the_trace_the_client_sends() {
    let s = sshd();
    let server = model(SHOW_TRACE);
    remote_setup(&s, UA, &server, "");
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    // SendEnv on the client, AcceptEnv on the server (see README).
    let (out, err, code) =
        output(ssh(&s, UA).args(["-o", "SendEnv=TRACEPARENT", "# show the trace"]).env("TRACEPARENT", TRACEPARENT));
    assert_eq!(code, Some(0), "{out}{err}");
    let (trace, parent) = trace_line(&out);
    assert_eq!(trace, TRACE);
    // The far shell carries the trace on (a command that starts another
    // unixagent there would carry a span of its own).
    assert_eq!(parent, TRACEPARENT, "{out}");
    let metas = metas(&s.home(UA));
    let meta = metas.iter().find(|m| m["trace_id"] == TRACE).unwrap_or_else(|| panic!("{metas:?}"));
    assert_eq!(meta["trace_parent"], "00f067aa0ba902b7", "its work hangs from the client's span");

    // Without a server change: the variable in the command itself.
    let cmd = format!(
        "TRACEPARENT=00-feedc0defeedc0defeedc0defeedc0de-00f067aa0ba902b7-01 {} -c '# show the trace'",
        s.unixagent().display()
    );
    let (out, err, code) = output(ssh(&s, UA).arg(cmd));
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(trace_line(&out).0, "feedc0defeedc0defeedc0defeedc0de");
}
