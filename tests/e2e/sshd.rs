//! A real OpenSSH server on loopback for the remote tests.
//!
//! sshd runs unprivileged: as the test's own user, or as `nobody` when the
//! tests run as root (it then cannot switch users, so the accounts it
//! serves have its uid). The accounts exist only for it: libnss_wrapper
//! (preloaded into sshd and, through `SetEnv`, into every session) reads
//! them from a passwd file in the test's directory, so no real account is
//! touched and the login shell can be the unixagent under test.
//!
//! | account | login shell | home |
//! |---|---|---|
//! | `uatest` | unixagent | `DIR/home-ua` |
//! | `uabash` | /bin/bash | `DIR/home-bash` |
//!
//! Field notes: `StrictModes no` for keys in a temporary directory,
//! `UsePAM no` and no privilege separation when not root, and sshd must be
//! started by its absolute path.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use crate::support::unixagent;

const SSHD: &str = "/usr/sbin/sshd";
const SFTP_SERVER: &str = "/usr/lib/openssh/sftp-server";
const NSS_WRAPPER: [&str; 2] =
    ["/usr/lib/x86_64-linux-gnu/libnss_wrapper.so", "/usr/lib/aarch64-linux-gnu/libnss_wrapper.so"];

/// The account whose login shell is unixagent.
pub const UA: &str = "uatest";
/// The account whose login shell is bash.
pub const BASH: &str = "uabash";

pub struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    uid: u32,
    gid: u32,
    log: Arc<Mutex<String>>,
    /// The unixagent the accounts run (the login shell of `uatest`).
    shell: PathBuf,
}

impl Sshd {
    /// Starts sshd, or says why it cannot run here.
    pub fn start() -> Result<Sshd, String> {
        if !Path::new(SSHD).is_file() {
            return Err(format!("{SSHD} is not installed (scripts/test-deps.sh installs openssh-server)"));
        }
        let nss = NSS_WRAPPER
            .iter()
            .find(|p| Path::new(p).is_file())
            .ok_or("libnss_wrapper is not installed (scripts/test-deps.sh installs libnss-wrapper)")?;
        let root = nix::unistd::getuid().is_root();
        let (uid, gid) =
            if root { (65534, 65534) } else { (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()) };
        let dir = tempfile::Builder::new().prefix("ua-sshd").tempdir().map_err(|e| e.to_string())?;
        let d = dir.path();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
        for key in ["host_key", "client_key"] {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .status()
                .map_err(|e| format!("ssh-keygen: {e}"))?;
            if !ok.success() {
                return Err("ssh-keygen failed".into());
            }
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).map_err(|e| e.to_string())?;
        let shell = login_shell(d, uid)?;
        let passwd = format!(
            "{UA}:x:{uid}:{gid}:unixagent test:{home_ua}:{shell}\n{BASH}:x:{uid}:{gid}:bash test:{home_bash}:/bin/bash\n",
            home_ua = d.join("home-ua").display(),
            home_bash = d.join("home-bash").display(),
            shell = shell.display(),
        );
        std::fs::write(d.join("passwd"), passwd).map_err(|e| e.to_string())?;
        std::fs::write(d.join("group"), format!("uatest:x:{gid}:\n")).map_err(|e| e.to_string())?;
        let port = free_port()?;
        let preload = format!(
            "LD_PRELOAD={nss} NSS_WRAPPER_PASSWD={p} NSS_WRAPPER_GROUP={g}",
            p = d.join("passwd").display(),
            g = d.join("group").display()
        );
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nAuthorizedKeysFile {ak}\nPidFile none\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nSubsystem sftp {SFTP_SERVER}\nAcceptEnv TRACEPARENT UA_TRACE_ID UA_SPAN_ID\n\
             SetEnv {preload}\nLogLevel INFO\n",
            hk = d.join("host_key").display(),
            ak = d.join("authorized_keys").display(),
        );
        std::fs::write(d.join("sshd_config"), config).map_err(|e| e.to_string())?;
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host ua\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {ck}\n  IdentitiesOnly yes\n  \
                 StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  BatchMode yes\n",
                ck = d.join("client_key").display()
            ),
        )
        .map_err(|e| e.to_string())?;
        if root {
            // The server reads its host key as `nobody`.
            chown(&d.join("host_key"), uid, gid)?;
        }
        let mut child = spawn(d, uid, gid, root, nss)?;
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, started) = mpsc::channel();
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let sink = Arc::clone(&log);
        // sshd says it listens on stderr; the thread keeps draining it.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Server listening") {
                    let _ = tx.send(());
                }
                if let Ok(mut l) = sink.lock() {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
        let s = Sshd { child, dir, uid, gid, log, shell };
        s.mkdir(&s.home(UA))?;
        s.mkdir(&s.home(BASH))?;
        s.wait_listening(&started)?;
        Ok(s)
    }

    /// The unixagent binary as the server's accounts run it.
    pub fn unixagent(&self) -> &Path {
        &self.shell
    }

    pub fn home(&self, account: &str) -> PathBuf {
        self.dir.path().join(if account == UA { "home-ua" } else { "home-bash" })
    }

    /// Writes a file in an account's home, owned by the account.
    pub fn write(&self, account: &str, rel: &str, text: &str) {
        let p = self.home(account).join(rel);
        let mut created = Vec::new();
        let mut up = p.parent().map(Path::to_path_buf);
        while let Some(d) = up.filter(|d| !d.exists()) {
            up = d.parent().map(Path::to_path_buf);
            created.push(d);
        }
        for d in created.iter().rev() {
            self.mkdir(d).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        chown(&p, self.uid, self.gid).expect("chown");
    }

    fn mkdir(&self, d: &Path) -> Result<(), String> {
        std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
        chown(d, self.uid, self.gid)
    }

    /// `ssh` set up for this server: the host is `ua`.
    pub fn ssh(&self) -> Command {
        let mut c = Command::new("ssh");
        c.arg("-F").arg(self.ssh_config());
        c
    }

    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The ssh command line (for `GIT_SSH_COMMAND` and `rsync -e`).
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.ssh_config().display())
    }

    fn wait_listening(&self, started: &mpsc::Receiver<()>) -> Result<(), String> {
        match started.recv_timeout(Duration::from_secs(10)) {
            Ok(()) => Ok(()),
            Err(_) => Err(format!("sshd did not start: {}", self.log().trim())),
        }
    }

    /// What sshd has said so far, for a failing test's message.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server, or fails the calling test saying why it cannot run
/// here (no test passes without running).
pub fn sshd() -> Sshd {
    Sshd::start().unwrap_or_else(|why| panic!("sshd cannot run on loopback: {why}"))
}

/// unixagent as a login shell the server's user can run: the binary
/// itself when every directory above it lets that user through, else a
/// copy in the test's directory (a build tree may be private to root).
fn login_shell(dir: &Path, uid: u32) -> Result<PathBuf, String> {
    let bin = unixagent();
    let reachable = uid == nix::unistd::getuid().as_raw()
        || bin.ancestors().skip(1).all(|a| a.metadata().map(|m| m.permissions().mode() & 0o001 != 0).unwrap_or(false))
            && bin.metadata().map(|m| m.permissions().mode() & 0o001 != 0).unwrap_or(false);
    if reachable {
        return Ok(bin);
    }
    let copy = dir.join("unixagent");
    if std::fs::hard_link(&bin, &copy).is_err() {
        std::fs::copy(&bin, &copy).map_err(|e| format!("copying unixagent: {e}"))?;
    }
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    Ok(copy)
}

fn spawn(d: &Path, uid: u32, gid: u32, root: bool, nss: &str) -> Result<Child, String> {
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).arg("--clear-groups").arg(SSHD);
        c
    } else {
        Command::new(SSHD)
    };
    cmd.arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(d.join("sshd_config"))
        .env("LD_PRELOAD", nss)
        .env("NSS_WRAPPER_PASSWD", d.join("passwd"))
        .env("NSS_WRAPPER_GROUP", d.join("group"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd.spawn().map_err(|e| format!("starting sshd: {e}"))
}

fn chown(p: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::chown(p, Some(uid), Some(gid)).map_err(|e| format!("chown {}: {e}", p.display()))
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// The output of `cmd` with its status, and stderr for failure messages.
pub fn output(cmd: &mut Command) -> (String, String, Option<i32>) {
    let out = cmd.stdin(Stdio::null()).output().expect("run");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}
