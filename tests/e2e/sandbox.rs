//! The kernel sandbox against the real kernel: each named attack next to
//! a positive control that shows the same thing works outside the sandbox
//! or on what is allowed. Runs through `unixagent sandbox -- bash -c …`,
//! exactly the sandbox agent commands get.
//!
//! The homes live in /var/tmp, not /tmp (nor a checkout that may itself
//! be under /tmp): /tmp is a write root, and a home inside it would be
//! writable by design.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::*;

pub(crate) struct Out {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// A home with credentials, start-up files, unixagent's own files and a
/// git repository `proj` holding a file.
struct Box {
    dir: tempfile::TempDir,
}

impl Box {
    fn new() -> Self {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir in /var/tmp");
        let b = Self { dir };
        b.write(".ssh/id_rsa", "PRIVATE-KEY-TEXT\n");
        b.write(".bashrc", "# rc\n");
        b.write(".zshrc", "# rc\n");
        b.write(".config/unixagent/policy.toml", "");
        b.write(".local/share/unixagent/audit.jsonl", "{\"audit\":1}\n");
        b.write("notes.txt", "READABLE-NOTES\n");
        b.write("proj/src.txt", "PROJECT-TEXT\n");
        let git = |args: &[&str]| {
            let s = Command::new("git").args(args).current_dir(b.path("proj")).output().expect("git");
            assert!(s.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&s.stderr));
        };
        git(&["init", "-q", "."]);
        git(&["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "start"]);
        b
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    fn command(&self, cwd: &str, script: &str, sandboxed: bool) -> Command {
        let mut c = if sandboxed {
            let mut c = Command::new(unixagent());
            c.args(["sandbox", "--", "bash", "-c", script]);
            c
        } else {
            let mut c = Command::new("bash");
            c.args(["-c", script]);
            c
        };
        c.current_dir(self.path(cwd))
            .env("HOME", self.dir.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("UNIXAGENT_CONFIG")
            .env_remove("TMPDIR")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null());
        c
    }

    /// `script` under the sandbox, in `cwd` (relative to the home).
    fn run(&self, cwd: &str, script: &str) -> Out {
        output(self.command(cwd, script, true))
    }

    /// The same without the sandbox: the control.
    fn run_plain(&self, cwd: &str, script: &str) -> Out {
        output(self.command(cwd, script, false))
    }
}

pub(crate) fn output(mut c: Command) -> Out {
    let o = c.output().expect("run");
    Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[track_caller]
fn ok(o: &Out) {
    assert_eq!(o.code, Some(0), "stdout: {}\nstderr: {}", o.stdout, o.stderr);
}

#[track_caller]
fn refused(o: &Out, what: &str) {
    assert_ne!(o.code, Some(0), "{what} should have failed; stdout: {}\nstderr: {}", o.stdout, o.stderr);
}

#[test]
fn credentials_cannot_be_read_by_any_path() {
    let b = Box::new();
    let key = b.path(".ssh/id_rsa");
    let key = key.display();
    // Control: the key is there, and readable without the sandbox.
    let control = b.run_plain("proj", &format!("cat {key}"));
    ok(&control);
    assert!(control.stdout.contains("PRIVATE-KEY-TEXT"));
    for attack in [
        format!("cat {key}"),
        "cat ~/.ssh/id_rsa".to_string(),
        "cat ../.ssh/id_rsa".to_string(),
        "cat ./../proj/../.ssh/id_rsa".to_string(),
        format!("cat /proc/self/root{key}"),
        "ls ~/.ssh".to_string(),
        "ln -s ~/.ssh/id_rsa link && cat link".to_string(),
        "ln ~/.ssh/id_rsa hard && cat hard".to_string(),
        "cat /proc/$PPID/root/$HOME/.ssh/id_rsa".to_string(),
        "python3 -c \"print(open('$HOME/.ssh/id_rsa').read())\"".to_string(),
    ] {
        let o = b.run("proj", &attack);
        refused(&o, &attack);
        assert!(!o.stdout.contains("PRIVATE-KEY-TEXT"), "{attack}: {}", o.stdout);
    }
    // Positive controls: the rest of the home and the system read fine.
    let o = b.run("proj", "cat ~/notes.txt && ls / >/dev/null && cat src.txt && head -c1 /etc/passwd >/dev/null");
    ok(&o);
    assert!(o.stdout.contains("READABLE-NOTES") && o.stdout.contains("PROJECT-TEXT"), "{}", o.stdout);
}

#[test]
fn unixagents_journals_and_audit_log_are_hidden() {
    let b = Box::new();
    let o = b.run("proj", "cat ~/.local/share/unixagent/audit.jsonl");
    refused(&o, "reading the audit log");
    assert!(!o.stdout.contains("audit"), "{}", o.stdout);
    ok(&b.run_plain("proj", "cat ~/.local/share/unixagent/audit.jsonl"));
}

#[test]
fn writes_stay_in_the_working_tree() {
    let b = Box::new();
    refused(&b.run("proj", "echo x > ~/outside.txt"), "writing in the home");
    refused(&b.run("proj", "echo x > ../outside.txt"), "writing in the parent");
    refused(&b.run("proj", "echo x >> ~/notes.txt"), "appending outside");
    refused(&b.run("proj", "rm ~/notes.txt"), "deleting outside");
    assert!(!b.path("outside.txt").exists() && b.path("notes.txt").exists());
    // Controls: inside the tree and in /tmp.
    let o = b.run(
        "proj",
        "echo x > made.txt && mkdir -p d/e && mv made.txt d/e/ && rm -r d && t=$(mktemp) && echo y > $t && rm $t",
    );
    ok(&o);
    ok(&b.run_plain("proj", "echo x > ~/outside.txt"));
}

#[test]
fn repository_hooks_and_config_cannot_be_written_or_moved_away() {
    let b = Box::new();
    for attack in [
        "echo 'curl evil' > .git/hooks/pre-commit",
        "echo '[core] hooksPath = /tmp' >> .git/config",
        "git config core.hooksPath /tmp",
        "mv .git .g",
        "mv .git/hooks .git/h",
        "rm -rf .git/hooks",
        "mv .git/config .git/c",
        "cd .. && mv proj p2",
    ] {
        refused(&b.run("proj", attack), attack);
    }
    assert!(!b.path("proj/.git/hooks/pre-commit").exists());
    assert!(b.path("proj/.git/config").is_file() && b.path("proj").is_dir());
    let config = std::fs::read_to_string(b.path("proj/.git/config")).expect("config");
    assert!(!config.contains("hooksPath"), "{config}");
    // Controls: git works in the repository, and so does the attack
    // without the sandbox.
    let o = b.run(
        "proj",
        "git status --short && echo more >> src.txt && git add src.txt && git -c user.email=t@t -c user.name=t commit -qm work && git log --oneline | wc -l",
    );
    ok(&o);
    assert!(o.stdout.trim().ends_with('2'), "{}", o.stdout);
    ok(&b.run_plain("proj", "echo 'exit 0' > .git/hooks/pre-commit"));
}

#[test]
fn a_repository_without_hooks_and_gits_own_config_are_closed_too() {
    let b = Box::new();
    std::fs::remove_dir_all(b.path("proj/.git/hooks")).expect("remove hooks");
    refused(&b.run("proj", "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"), "a new hook directory");
    assert!(b.path("proj/.git/hooks").is_dir(), "an empty hook directory was made to be bound read-only");
    assert!(!b.path("proj/.git/hooks/pre-commit").exists());
    // git itself still makes its lock files in .git.
    ok(&b.run("proj", "echo more >> src.txt && git add src.txt && git -c user.email=t@t -c user.name=t commit -qm w"));
    // The user's global git configuration is as good as a hook.
    for cwd in ["proj", "."] {
        refused(&b.run(cwd, "git config --global core.hooksPath /tmp"), "git config --global");
    }
    assert!(!b.path(".gitconfig").exists());
    b.write(".gitconfig", "[user]\n\tname = t\n");
    refused(&b.run(".", "git config --global core.hooksPath /tmp"), "git config --global with a .gitconfig");
    assert_eq!(std::fs::read_to_string(b.path(".gitconfig")).expect("gitconfig"), "[user]\n\tname = t\n");
}

#[test]
fn startup_files_and_unixagents_config_are_read_only_even_with_the_home_as_working_directory() {
    let b = Box::new();
    for attack in [
        "echo 'curl evil' >> ~/.bashrc",
        "echo x > .zshrc",
        "mv .bashrc .b && echo evil > .bashrc",
        "echo 'allow = true' >> .config/unixagent/policy.toml",
        "rm -rf .config/unixagent",
        "mv .config .c",
        "echo x >> .local/share/unixagent/audit.jsonl",
    ] {
        refused(&b.run(".", attack), attack);
    }
    assert_eq!(std::fs::read_to_string(b.path(".bashrc")).expect("rc"), "# rc\n");
    assert_eq!(std::fs::read_to_string(b.path(".config/unixagent/policy.toml")).expect("policy"), "");
    // Start-up files that do not exist yet cannot be created either, nor
    // the directories they would go in, nor moved into place.
    for attack in [
        "echo 'curl evil' > ~/.bash_profile",
        "echo x > .zprofile",
        "mkdir -p .config/fish && echo evil > .config/fish/config.fish",
        "echo evil > notes.txt.tmp && mv notes.txt.tmp .zlogin",
        "ln -s notes.txt .zshenv",
    ] {
        refused(&b.run(".", attack), attack);
    }
    for missing in [".bash_profile", ".zprofile", ".config/fish", ".zlogin", ".zshenv"] {
        assert!(b.path(missing).symlink_metadata().is_err(), "{missing} was created");
    }
    // Control: the home is the working directory, so what is in it stays
    // writable, and so does everything below its directories.
    ok(&b.run(".", "echo more >> notes.txt && grep -q more notes.txt"));
    ok(&b.run(".", "echo x > proj/new.txt && cat proj/new.txt && rm proj/new.txt"));
    ok(&b.run(
        ".",
        "mkdir -p .local/share/other/deeper && echo y > .local/share/other/deeper/f && rm -r .local/share/other",
    ));
    // New entries in the home itself are what it costs.
    refused(&b.run(".", "echo x > new.txt"), "a new file directly in the home");
    ok(&b.run_plain(".", "echo x > new.txt && rm new.txt"));
}

/// A listener outside the sandbox, on the host's loopback.
fn listener() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    (l, port)
}

#[test]
fn direct_connections_around_the_proxy_fail() {
    let b = Box::new();
    let (l, port) = listener();
    l.set_nonblocking(true).expect("nonblocking");
    for attack in [
        format!("curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{port}/"),
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)\""),
        format!("python3 -c \"import socket; socket.create_connection(('localhost', {port}), timeout=5)\""),
    ] {
        refused(&b.run("proj", &attack), &attack);
    }
    assert!(l.accept().is_err(), "a sandboxed process reached the host's loopback");
    // Control: the same connection works without the sandbox.
    ok(&b.run_plain("proj", &format!("echo hi > /dev/tcp/127.0.0.1/{port}")));
}

#[test]
fn udp_and_raw_sockets_are_refused() {
    let b = Box::new();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    let port = udp.local_addr().expect("addr").port();
    udp.set_read_timeout(Some(std::time::Duration::from_millis(500))).expect("timeout");
    let send = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', {port}))\""
    );
    let o = b.run("proj", &send);
    refused(&o, "a UDP socket");
    assert!(o.stderr.contains("Operation not permitted"), "{}", o.stderr);
    for attack in [
        "python3 -c \"import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\"",
        "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)\"",
        "python3 -c \"import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\"",
        "python3 -c \"import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)\"",
        "python3 -c \"import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)\"",
    ] {
        refused(&b.run("proj", attack), attack);
    }
    let mut buf = [0u8; 4];
    assert!(udp.recv(&mut buf).is_err(), "a datagram arrived from the sandbox");
    // Controls: the same datagram without the sandbox arrives; Unix and
    // TCP sockets can still be made inside.
    ok(&b.run_plain("proj", &send));
    assert_eq!(udp.recv(&mut buf).expect("datagram"), 1);
    ok(&b.run(
        "proj",
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); socket.socket(socket.AF_INET, socket.SOCK_STREAM)\"",
    ));
}

#[test]
fn no_new_privileges_and_setuid_gains_nothing() {
    let b = Box::new();
    let o = b.run("proj", "grep -E '^(NoNewPrivs|CapEff|CapBnd)' /proc/self/status");
    ok(&o);
    assert!(o.stdout.contains("NoNewPrivs:\t1"), "{}", o.stdout);
    assert!(o.stdout.contains("CapEff:\t0000000000000000"), "{}", o.stdout);
    // A set-user-id copy of `id` owned by another user: without the
    // sandbox it runs as that user, inside as the caller.
    let id = b.path("proj/setuid-id");
    std::fs::copy(which("id"), &id).expect("copy id");
    let (uid, setuid_ok) = make_setuid(&id);
    if !setuid_ok {
        // Not root: run the check the other way round, with a set-user-id
        // program that exists on every system.
        let o = b.run("proj", "su -c true root </dev/null");
        refused(&o, "su inside the sandbox");
        return;
    }
    let control = b.run_plain("proj", &format!("{} -u", id.display()));
    ok(&control);
    assert_eq!(control.stdout.trim(), uid.to_string(), "the control did not gain the owner's id");
    let o = b.run("proj", &format!("{} -u", id.display()));
    ok(&o);
    assert_ne!(o.stdout.trim(), uid.to_string(), "the set-user-id program gained privileges in the sandbox");
}

/// Makes `path` set-user-id and owned by `nobody` (needs root). Returns
/// the owner's uid and whether it worked.
fn make_setuid(path: &Path) -> (u32, bool) {
    use std::os::unix::fs::PermissionsExt;
    let nobody = 65534;
    let owned = std::os::unix::fs::chown(path, Some(nobody), None).is_ok();
    if !owned {
        return (nobody, false);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
    (nobody, true)
}

#[test]
fn builds_and_tools_work_in_the_project() {
    let b = Box::new();
    b.write("proj/hello.c", "#include <stdio.h>\nint main(void){puts(\"built-and-ran\");return 0;}\n");
    let o = b.run("proj", "cc -o hello hello.c && ./hello && python3 -m venv venv && ./venv/bin/python -c 'print(42)'");
    ok(&o);
    assert!(o.stdout.contains("built-and-ran") && o.stdout.contains("42"), "{}", o.stdout);
}

#[test]
fn the_status_names_each_enforcement() {
    let b = Box::new();
    let mut c = Command::new(unixagent());
    c.args(["sandbox", "status", "--json"]).current_dir(b.path("proj")).env("HOME", b.dir.path());
    let o = output(c);
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(v["kernel"]["landlock_abi"].as_i64().unwrap_or(0) >= 4, "{v}");
    let enforcement = v["enforcement"].to_string();
    assert!(enforcement.contains("network namespace") && enforcement.contains("Landlock"), "{enforcement}");
    let hidden = v["rules"]["read_deny"].to_string();
    assert!(hidden.contains(".ssh"), "{hidden}");
}

#[test]
fn a_directory_a_cedar_policy_forbids_is_hidden_by_the_kernel_too() {
    let b = Box::new();
    b.write("private/plan.txt", "PRIVATE-PLAN\n");
    b.write("public/plan.txt", "PUBLIC-PLAN\n");
    b.write(
        ".config/unixagent/policy.cedar",
        "@id(\"private-dir\")\n\
         forbid (principal, action == Action::\"read\", resource in Directory::\"${HOME}/private\");\n",
    );
    let cat = |rel: &str| {
        let mut c = Command::new(unixagent());
        c.args(["sandbox", "--", "cat"]).arg(b.path(rel)).current_dir(b.path("proj")).env("HOME", b.dir.path());
        c.env_remove("XDG_CONFIG_HOME").env_remove("XDG_DATA_HOME").env_remove("UNIXAGENT_CONFIG");
        output(c)
    };
    let o = cat("private/plan.txt");
    refused(&o, "reading a directory policy.cedar forbids");
    assert!(o.stderr.contains("Permission denied"), "{}", o.stderr);
    assert!(!o.stdout.contains("PRIVATE-PLAN"), "{}", o.stdout);
    // Controls: the sibling reads fine inside, and the file outside.
    let o = cat("public/plan.txt");
    ok(&o);
    assert!(o.stdout.contains("PUBLIC-PLAN"), "{}", o.stdout);
    ok(&b.run_plain("proj", "cat ~/private/plan.txt"));
    // The status names the rule and where it came from.
    let mut c = Command::new(unixagent());
    c.args(["sandbox", "status"]).current_dir(b.path("proj")).env("HOME", b.dir.path());
    c.env_remove("XDG_CONFIG_HOME").env_remove("XDG_DATA_HOME").env_remove("UNIXAGENT_CONFIG");
    let o = output(c);
    ok(&o);
    let policy = b.path(".config/unixagent/policy.cedar");
    let line = format!("{}  ({}: @id(\"private-dir\"))", b.path("private").display(), policy.display());
    assert!(o.stdout.contains(&line), "{line:?} not in:\n{}", o.stdout);
}

/// Runs unixagent with the Landlock system calls failing as on a kernel
/// without Landlock (ENOSYS), through a seccomp filter set in the child.
fn without_landlock(b: &Box, script: &str, config: Option<&str>) -> Out {
    let mut c = b.command("proj", script, true);
    if let Some(text) = config {
        b.write("config.toml", text);
        c.env("UNIXAGENT_CONFIG", b.path("config.toml"));
    }
    without_landlock_syscalls(&mut c);
    output(c)
}

/// Makes the Landlock system calls of `c`'s process fail with ENOSYS.
pub fn without_landlock_syscalls(c: &mut Command) {
    let filter = landlock_enosys();
    // SAFETY: the closure only makes the two system calls that install a
    // filter, which are async-signal-safe.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            seccompiler::apply_filter(&filter).map_err(std::io::Error::other)
        });
    }
}

fn landlock_enosys() -> seccompiler::BpfProgram {
    use seccompiler::{SeccompAction, SeccompFilter};
    let rules = [libc::SYS_landlock_create_ruleset, libc::SYS_landlock_add_rule, libc::SYS_landlock_restrict_self]
        .into_iter()
        .map(|n| (n, vec![]))
        .collect();
    let arch = std::env::consts::ARCH.try_into().expect("arch");
    let f = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)
        .expect("filter");
    f.try_into().expect("bpf")
}

#[test]
fn without_landlock_it_fails_closed_unless_best_effort_is_chosen() {
    let b = Box::new();
    let o = without_landlock(&b, "echo ran > ran.txt", None);
    assert_eq!(o.code, Some(125), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("Landlock is not available") && o.stderr.contains("best-effort"), "{}", o.stderr);
    assert!(!b.path("proj/ran.txt").exists(), "the command ran without the sandbox");
    // Best effort: it runs, and says what is not enforced.
    let o = without_landlock(&b, "echo ran > ran.txt", Some("[sandbox]\nmode = \"best-effort\"\n"));
    ok(&o);
    assert!(o.stderr.contains("not enforced") && o.stderr.contains("Landlock"), "{}", o.stderr);
    assert!(b.path("proj/ran.txt").exists());
}

#[test]
fn the_commands_status_is_passed_through_and_a_missing_one_is_reported() {
    let b = Box::new();
    assert_eq!(b.run("proj", "exit 7").code, Some(7));
    let o = output({
        let mut c = Command::new(unixagent());
        c.args(["sandbox", "--", "no-such-program-here"]).current_dir(b.path("proj")).env("HOME", b.dir.path());
        c
    });
    assert_eq!(o.code, Some(127), "{}", o.stderr);
    assert!(o.stderr.contains("no-such-program-here"), "{}", o.stderr);
}

/// A one-page HTTP server on the host's loopback, answering every request
/// with `body`.
fn http_server(body: &'static str) -> u16 {
    let (l, port) = listener();
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut buf);
            let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = std::io::Write::write_all(&mut stream, reply.as_bytes());
        }
    });
    port
}

#[test]
fn the_network_is_the_proxy_and_the_proxy_is_the_allowlist() {
    let b = Box::new();
    let port = http_server("hello-through-the-proxy");
    // Without allow_hosts there is no network at all, proxy included.
    let o = b.run("proj", &format!("curl -sS --max-time 5 http://localhost:{port}/"));
    refused(&o, "a request with no hosts allowed");
    b.write(".config/unixagent/policy.toml", "[approval.network]\nallow_hosts = [\"localhost\"]\n");
    // A listed name, through the proxy the environment names.
    let o = b.run("proj", &format!("echo $HTTP_PROXY; curl -sS --max-time 5 http://localhost:{port}/"));
    ok(&o);
    assert!(o.stdout.contains("hello-through-the-proxy"), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.starts_with("http://127.0.0.1:"), "{}", o.stdout);
    // An unlisted name and an address literal are refused by the proxy.
    let o = b.run("proj", "curl -sS --max-time 5 https://unlisted.example/");
    assert_eq!(o.code, Some(56), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("403"), "{}", o.stderr);
    let o = b.run("proj", &format!("curl -sS --max-time 5 -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/"));
    assert_eq!(o.stdout.trim(), "403", "{}{}", o.stdout, o.stderr);
    // And around the proxy there is still nothing.
    refused(
        &b.run("proj", &format!("curl -sS --max-time 5 --noproxy '*' http://localhost:{port}/")),
        "bypassing the proxy",
    );
}

/// `unixagent --json` in the box's project against `server`, judge off,
/// stdin piped: `instruction` is sent, every approval request is allowed,
/// and the lines of stdout come back once unixagent has exited.
fn batch(b: &Box, server: &ua_testkit::provider::FakeProvider, instruction: &str, filter: bool) -> (Out, Vec<Value>) {
    b.write(".config/unixagent/config.toml", "[judge]\nmode = \"off\"\n");
    batch_in(b.dir.path(), &b.path("proj"), server, instruction, filter)
}

/// [`batch`] for any home (whose config turns the judge off) and working
/// directory.
pub(crate) fn batch_in(
    home: &Path,
    cwd: &Path,
    server: &ua_testkit::provider::FakeProvider,
    instruction: &str,
    filter: bool,
) -> (Out, Vec<Value>) {
    use std::io::{BufRead as _, Write as _};
    let mut c = Command::new(unixagent());
    c.args(["--shell", "/bin/bash", "--json"])
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("UNIXAGENT_CONFIG")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("TMPDIR")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if filter {
        without_landlock_syscalls(&mut c);
    }
    let mut child = c.spawn().expect("unixagent starts");
    let mut input = child.stdin.take();
    if let Some(i) = input.as_mut() {
        let _ = writeln!(i, "{}", serde_json::json!({ "type": "instruction", "text": instruction }));
    }
    let mut stdout = String::new();
    let mut lines: Vec<Value> = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let Ok(line) = line else { break };
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if v["type"] == "approval_request"
            && let Some(i) = input.as_mut()
        {
            let _ = writeln!(i, "{}", serde_json::json!({ "type": "approval", "id": v["id"], "decision": "allow" }));
        }
        if v["type"] == "text" {
            // The turn is over: no more input.
            input = None;
        }
        stdout.push_str(&line);
        stdout.push('\n');
        lines.push(v);
    }
    drop(input);
    let o = child.wait_with_output().expect("unixagent runs");
    (Out { code: o.status.code(), stdout, stderr: String::from_utf8_lossy(&o.stderr).into_owned() }, lines)
}

#[test]
fn a_batch_run_the_kernel_cannot_sandbox_ends_with_an_error_and_a_result() {
    let b = Box::new();
    let server = crate::agent::model("[[turn]]\ntext = \"should not be asked\"\n");
    let (o, lines) = batch(&b, &server, "list files", true);
    assert_eq!(o.code, Some(125), "{}{}", o.stdout, o.stderr);
    let kinds: Vec<&str> = lines.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(kinds, ["error", "result"], "{}", o.stdout);
    assert_eq!(lines[0]["kind"], "sandbox");
    assert!(lines[0]["message"].as_str().is_some_and(|m| m.contains("Landlock")), "{}", o.stdout);
    assert_eq!(lines[1]["status"], "error");
    assert_eq!(lines[1]["exit_code"], 125);
    assert!(server.requests().is_empty(), "the model was asked although nothing could run");
}

#[test]
fn a_command_the_sandbox_refuses_is_named_to_the_model() {
    let b = Box::new();
    let server = crate::agent::model(
        "[[turn]]\ntool_calls = [{ id = \"t1\", name = \"shell\", input = { command = \"touch ../outside.txt\" } }]\n[[turn]]\ntext = \"done\"\n",
    );
    let (o, _) = batch(&b, &server, "make a file", false);
    assert!(!b.path("outside.txt").exists(), "the write outside the project went through");
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    let (text, is_error) = &results[0];
    assert!(*is_error, "{text}");
    let outside = b.path("outside.txt");
    let want = format!("[sandbox: {}: outside the directories the sandbox lets commands write", outside.display());
    assert!(text.contains(&want), "{text}\n---\n{}{}", o.stdout, o.stderr);
    assert!(text.contains(&b.path("proj").display().to_string()), "the writable directories are named: {text}");
}

#[test]
fn an_interactive_shell_starts_without_the_sandbox_it_asked_for_but_the_agent_runs_nothing() {
    // unixagent may be the login shell: a sandbox that cannot be applied
    // must not lock anyone out, and must not let the agent run unconfined.
    let home = Home::new();
    home.write(".config/unixagent/config.toml", "[sandbox]\nmode = \"strict\"\n[judge]\nmode = \"off\"\n");
    let mut t = home.spawn("bash").arg("--sandbox").start();
    wait_prompt(&t, 1);
    t.wait_text("agent commands will not run");
    assert!(t.screen_text().contains("sandbox.mode = \"strict\""), "{}", t.screen_text());
    t.send("echo shell-$((6*7))\r");
    t.wait_text("shell-42");
    wait_prompt(&t, 2);
    t.send("# list the files\r");
    t.wait_text("agent commands do not run here");
    wait_prompt(&t, 3);
    assert!(home.model.requests().is_empty(), "the model was asked although nothing could run");
}

#[test]
fn the_proxys_decisions_reach_the_model_and_the_audit_log() {
    let b = Box::new();
    let port = http_server("hello-audited");
    b.write(".config/unixagent/policy.toml", "[approval.network]\nallow_hosts = [\"localhost\"]\n");
    let command =
        format!("curl -sS --max-time 5 http://localhost:{port}/; curl -sS --max-time 5 https://unlisted.example/");
    let server = crate::agent::model(&format!(
        "[[turn]]\ntool_calls = [{{ id = \"t1\", name = \"shell\", input = {{ command = {command:?} }} }}]\n[[turn]]\ntext = \"done\"\n"
    ));
    let (o, _) = batch(&b, &server, "fetch two pages", false);
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    let (text, _) = &results[0];
    assert!(text.contains("hello-audited"), "{text}\n{}{}", o.stdout, o.stderr);
    assert!(text.contains("[sandbox: the sandbox's proxy refused unlisted.example:443"), "{text}");
    let audit = std::fs::read_to_string(b.path(".local/share/unixagent/audit.jsonl")).expect("audit log");
    let records: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let network = |target: &str| records.iter().find(|r| r["network"] == target).cloned();
    let allowed = network(&format!("localhost:{port}")).unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(allowed["decision"], "allow");
    let refused = network("unlisted.example:443").unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(refused["decision"], "deny");
    assert!(refused["rule"].as_str().unwrap().starts_with("sandbox:proxy"), "{refused}");
    assert_eq!(refused["id"], allowed["id"], "both belong to the command's records");
}

#[test]
fn an_agent_command_writes_the_sessions_board_and_nothing_else_of_the_data_directory() {
    let b = Box::new();
    let data = b.path(".local/share/unixagent");
    // Each step prints what happened; the paths come from variables, so
    // that the gate passes them on and the kernel is what decides.
    let command = format!(
        "U={ua}; D=\"$UNIXAGENT_BOARD/../..\"; \
         $U board add 'from the sandbox' >/dev/null && echo BOARD-ADD-OK; \
         echo '# plan' | $U board plan - && echo BOARD-PLAN-OK; \
         $U board claim >/dev/null && echo BOARD-CLAIM-OK; \
         (echo x >> \"$D/../audit.jsonl\") 2>/dev/null && echo AUDIT-WRITTEN || echo AUDIT-REFUSED; \
         (cat \"$UNIXAGENT_JOURNAL\" >/dev/null) 2>/dev/null && echo JOURNAL-READ || echo JOURNAL-HIDDEN; \
         (touch \"$UNIXAGENT_BOARD/../note\") 2>/dev/null && echo SESSION-WRITTEN || echo SESSION-REFUSED; \
         (mkdir \"$D/other\") 2>/dev/null && echo SESSIONS-WRITTEN || echo SESSIONS-REFUSED; \
         (ls \"$D\" >/dev/null) 2>/dev/null && echo SESSIONS-LISTED || echo SESSIONS-UNLISTED",
        ua = unixagent().display()
    );
    let server = crate::agent::model(&format!(
        "[[turn]]\ntool_calls = [{{ id = \"t1\", name = \"shell\", input = {{ command = {command:?} }} }}]\n[[turn]]\ntext = \"done\"\n"
    ));
    let (o, lines) = batch(&b, &server, "use the board", false);
    let results = crate::agent::tool_results(&crate::agent::messages(&server, 1));
    let (text, _) = &results[0];
    for want in [
        "BOARD-ADD-OK",
        "BOARD-PLAN-OK",
        "BOARD-CLAIM-OK",
        "AUDIT-REFUSED",
        "JOURNAL-HIDDEN",
        "SESSION-REFUSED",
        "SESSIONS-REFUSED",
        "SESSIONS-UNLISTED",
    ] {
        assert!(
            text.contains(want),
            "{want} missing from the command's output:\n{text}\n---\n{}{}",
            o.stdout,
            o.stderr
        );
    }
    let session = lines.iter().find(|v| v["type"] == "session").expect("a session event");
    let dir = data.join("sessions").join(session["id"].as_str().expect("an id"));
    let board = dir.join("board");
    assert_eq!(std::fs::read_to_string(board.join("PLAN.md")).expect("the plan"), "# plan\n");
    let claimed = std::fs::read_to_string(board.join("doing/1-from-the-sandbox.md")).expect("the claimed task");
    assert!(claimed.contains(&format!("assignee: \"{}\"", session["id"].as_str().unwrap_or(""))), "{claimed}");
    assert_eq!(std::fs::read_to_string(data.join("audit.jsonl")).expect("audit").lines().next(), Some("{\"audit\":1}"));
    assert!(!dir.join("note").exists() && !data.join("sessions/other").exists());
}
