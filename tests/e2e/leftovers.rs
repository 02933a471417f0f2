//! Nothing of unixagent's is left in the temporary directories, even when
//! it is killed with SIGKILL at the moments its private files used to be
//! on disk: while the user's start-up files run, while a sandboxed shell
//! or command runs, while a pipe's script and its instructions run. Each
//! test gives unixagent a `TMPDIR` and an `XDG_RUNTIME_DIR` of its own and
//! checks that both end empty.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// The private temporary and runtime directories of one test.
struct Private {
    tmp: PathBuf,
    run: PathBuf,
}

impl Private {
    fn in_home(home: &Home) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let p = Self { tmp: home.path().join("private-tmp"), run: home.path().join("private-run") };
        for d in [&p.tmp, &p.run] {
            std::fs::create_dir_all(d).expect("mkdir");
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        }
        p
    }

    /// What is in either directory.
    fn left(&self) -> Vec<PathBuf> {
        [&self.tmp, &self.run]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).expect("read_dir").flatten().map(|e| e.path()))
            .collect()
    }

    #[track_caller]
    fn assert_empty(&self, when: &str) {
        let left = self.left();
        assert!(left.is_empty(), "{when}: left behind: {left:?}");
    }

    /// Waits, up to a deadline, until both directories are empty.
    #[track_caller]
    fn wait_empty(&self, when: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.left().is_empty() {
            assert!(Instant::now() < deadline, "{when}: still there: {:?}", self.left());
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn sigkill(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("pid");
    // SAFETY: kill takes a pid and a signal number and touches no memory.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "kill -9 {pid}");
}

/// unixagent in `home` with the private directories, not on a terminal.
fn command(home: &Home, p: &Private) -> Command {
    let mut c = Command::new(unixagent());
    c.current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("TMPDIR", &p.tmp)
        .env("XDG_RUNTIME_DIR", &p.run)
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .env_remove("UNIXAGENT_SESSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Reads `child`'s stdout until a line contains `text`.
fn read_until(child: &mut Child, text: &str) -> impl Iterator<Item = String> + use<> {
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines().map_while(Result::ok);
    for line in lines.by_ref() {
        if line.contains(text) {
            return lines;
        }
    }
    panic!("{text:?} never came");
}

#[test]
fn integration_scripts_are_gone_while_the_users_start_up_files_still_run() {
    for shell in ["bash", "zsh"] {
        let home = Home::new();
        let p = Private::in_home(&home);
        let hold = home.path().join("hold");
        nix::unistd::mkfifo(&hold, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        // A start-up file that takes its time: it waits on a FIFO nobody
        // writes to.
        let rc = format!("echo RC-RUNNING\nread -r _ < {}\nPS1='PS1-MARK> '\n", hold.display());
        // Integration is not given up on (which also removes the scripts)
        // while the test waits.
        home.write(".config/unixagent/config.toml", "[shell]\nintegration_timeout_ms = 120000\n");
        home.write(if shell == "bash" { ".bashrc" } else { ".zshrc" }, &rc);
        let t = home.spawn(shell).env("TMPDIR", &p.tmp).env("XDG_RUNTIME_DIR", &p.run).start();
        t.wait_text("RC-RUNNING");
        // The shell has opened the scripts: they are off the disk although
        // it has not reached its first prompt.
        p.wait_empty(&format!("{shell} still reading its start-up files"));
        sigkill(t.pid());
        p.assert_empty(&format!("{shell}: after kill -9"));
    }
}

#[test]
fn a_sandboxed_session_killed_leaves_nothing() {
    let home = Home::new();
    let p = Private::in_home(&home);
    // With hosts allowed, the proxy's hand-over socket is made too.
    home.write(".config/unixagent/policy.toml", "[approval.network]\nallow_hosts = [\"localhost\"]\n");
    let t = home.spawn("bash").arg("--sandbox").env("TMPDIR", &p.tmp).env("XDG_RUNTIME_DIR", &p.run).start();
    wait_prompt(&t, 1);
    p.assert_empty("a sandboxed shell at its prompt");
    sigkill(t.pid());
    p.assert_empty("after kill -9");
}

#[test]
fn a_batch_run_killed_while_its_agent_command_runs_leaves_nothing() {
    let home = Home::new();
    let p = Private::in_home(&home);
    home.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ id = \"t1\", name = \"shell\", input = { command = \"echo started > work/ran.txt; read -r _ < hold\" } }]\n[[turn]]\ntext = \"done\"\n",
    );
    nix::unistd::mkfifo(&home.path().join("hold"), nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    // (Nothing new is made directly in the home, where start-up files are
    // missing: the command writes below it.)
    std::fs::create_dir(home.path().join("work")).expect("mkdir");
    let mut c = command(&home, &p);
    c.env("ANTHROPIC_BASE_URL", server.base_url()).args(["--shell", "/bin/bash", "--json"]);
    let mut child = c.spawn().expect("unixagent starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{}", serde_json::json!({ "type": "instruction", "text": "run it" })).expect("send");
    let stdout = child.stdout.take().expect("stdout");
    // Approves what is asked until unixagent is gone.
    let approver = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let v: serde_json::Value = serde_json::from_str(&line).expect("json");
            if v["type"] == "approval_request" {
                let answer = serde_json::json!({ "type": "approval", "id": v["id"], "decision": "allow" });
                let _ = writeln!(stdin, "{answer}");
            }
        }
    });
    // The command is running (it waits on a FIFO nobody writes to).
    let ran = home.path().join("work/ran.txt");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ran.exists() {
        assert!(Instant::now() < deadline, "the agent's command never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    p.assert_empty("while the agent's command runs");
    sigkill(child.id());
    child.wait().expect("reaped");
    approver.join().expect("approver");
    p.assert_empty("after kill -9");
}

#[test]
fn a_sandboxed_command_killed_or_ended_leaves_nothing() {
    let home = Home::new();
    let p = Private::in_home(&home);
    home.write(".config/unixagent/policy.toml", "[approval.network]\nallow_hosts = [\"localhost\"]\n");
    // Ended normally.
    let o = command(&home, &p).args(["sandbox", "--", "true"]).output().expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    p.assert_empty("after `sandbox -- true`");
    // Killed while the command runs.
    let mut child = command(&home, &p)
        .args(["sandbox", "--", "bash", "-c", "echo cmd-running; read -r _"])
        .spawn()
        .expect("unixagent starts");
    let _rest = read_until(&mut child, "cmd-running");
    p.assert_empty("while the command runs");
    sigkill(child.id());
    child.wait().expect("reaped");
    drop(child.stdin.take());
    p.assert_empty("after kill -9");
}

#[test]
fn a_pipe_killed_between_its_lines_or_ended_leaves_nothing() {
    let home = Home::new();
    let p = Private::in_home(&home);
    // Ended normally, with an instruction among the lines.
    let mut child = command(&home, &p).args(["--shell", "/bin/bash"]).spawn().expect("unixagent starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "cd {}\necho one\n# say hello\necho two", quoted(home.path())).expect("send");
    drop(stdin);
    let o = child.wait_with_output().expect("runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("one") && out.contains(REPLY) && out.contains("two"), "{out}");
    p.assert_empty("after a pipe ended");
    // Killed after a shell line and after an instruction.
    let mut child = command(&home, &p).args(["--shell", "/bin/bash"]).spawn().expect("unixagent starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "echo pipe-ready").expect("send");
    let mut lines = read_until(&mut child, "pipe-ready");
    p.assert_empty("while the pipe's shell runs");
    writeln!(stdin, "# say hello").expect("send");
    assert!(lines.any(|l| l.contains(REPLY)), "the instruction was answered");
    p.assert_empty("while the pipe's agent session runs");
    sigkill(child.id());
    child.wait().expect("reaped");
    p.assert_empty("after kill -9");
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}
