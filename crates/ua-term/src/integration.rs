//! Shell integration: the scripts that make bash, zsh and fish emit OSC 133
//! and OSC 7, and how each shell is started so it loads them without
//! anything typed or shown on screen.
//!
//! The scripts live in `shell-integration/` at the top of the repository as
//! ordinary files and are embedded at build time. At start-up they are
//! written to a private directory (mode 0700, in `$XDG_RUNTIME_DIR` or the
//! temporary directory). A thread watches it with inotify: each script is
//! unlinked the moment the shell opens it (the shell reads on through its
//! open descriptor) and the directory goes with the last one, so it is on
//! disk only until the shell has opened every script: for bash, one file
//! opened at once; for fish, until its config.fish has run; for zsh, until
//! it reaches the last shim (.zshrc, or .zlogin for a login shell). The
//! first prompt marker, or unixagent ending, removes whatever is left.
//!
//! | shell | how it is started                         | what the script does first          |
//! |-------|-------------------------------------------|-------------------------------------|
//! | bash  | `bash --rcfile DIR/bashrc`                | sources ~/.bashrc (or, for a login session, /etc/profile and the first of ~/.bash_profile, ~/.bash_login, ~/.profile) |
//! | zsh   | `ZDOTDIR=DIR zsh`                         | each shim (.zshenv, .zprofile, .zshrc, .zlogin) sources the user's file of the same name from the ZDOTDIR their files see |
//! | fish  | `fish --features no-mark-prompt --init-command 'source DIR/…fish'` | runs after the user's config.fish |
//!
//! Each session's markers carry its own random application id
//! (`133;A;aid=ID`), written as the first line of the script that prints
//! them: a plain shell variable, never exported, so no child of the shell
//! (a nested shell, a second unixagent, ssh) can print it by accident. The
//! scanner follows only markers with this id ([`crate::osc::Follow`]).
//! fish 4 marks prompts itself; `--features no-mark-prompt` turns that off
//! from 4.0.6 on (fish 3 ignores a feature it does not know; 4.0.0–4.0.2
//! mark regardless, which is harmless: their markers have no id) and ours
//! are printed instead, with the id.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::pty::TermError;

const BASH: &str = include_str!("../../../shell-integration/bash.sh");
const ZSH_ENV: &str = include_str!("../../../shell-integration/zsh-env.zsh");
const ZSH_PROFILE: &str = include_str!("../../../shell-integration/zsh-profile.zsh");
const ZSH_RC: &str = include_str!("../../../shell-integration/zsh-rc.zsh");
const ZSH_LOGIN: &str = include_str!("../../../shell-integration/zsh-login.zsh");
const FISH: &str = include_str!("../../../shell-integration/fish.fish");

/// The shells unixagent knows how to integrate with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
    /// Any other shell (dash, ksh, …): no integration, heuristic prompts.
    Other,
}

impl ShellKind {
    /// Recognises a shell by its file name (`/usr/bin/zsh`, `-bash`, `zsh-5.9`).
    pub fn detect(program: &Path) -> Self {
        let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name.trim_start_matches('-');
        if name.starts_with("bash") {
            ShellKind::Bash
        } else if name.starts_with("zsh") {
            ShellKind::Zsh
        } else if name.starts_with("fish") {
            ShellKind::Fish
        } else {
            ShellKind::Other
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Zsh => "zsh",
            ShellKind::Fish => "fish",
            ShellKind::Other => "this shell",
        }
    }
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct ShellSpec {
    pub program: PathBuf,
    /// Start the shell as a login shell.
    pub login: bool,
    /// Extra words for the shell (after `--` on unixagent's command line).
    pub args: Vec<OsString>,
    /// Install shell integration (config `shell.integration`).
    pub integration: bool,
}

/// How to start the shell: its argv, extra environment, and the directory
/// holding the integration scripts (removed when dropped).
#[derive(Debug)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub kind: ShellKind,
    /// Whether integration was installed (so markers are expected).
    pub integrated: bool,
    /// The application id our markers carry (`aid=`), when integrated.
    pub aid: Option<String>,
    pub scripts: Option<ScriptDir>,
}

/// fish ≥ 4 prints OSC 133 itself unless this feature is off.
const FISH_NO_MARKS: &str = "no-mark-prompt";

/// Builds the launch for `spec`, writing integration scripts if needed.
pub fn prepare(spec: &ShellSpec) -> Result<Launch, TermError> {
    let kind = ShellKind::detect(&spec.program);
    let mut launch = Launch {
        program: spec.program.clone(),
        args: Vec::new(),
        env: Vec::new(),
        kind,
        integrated: false,
        aid: None,
        scripts: None,
    };
    if !spec.integration || kind == ShellKind::Other {
        if spec.login {
            launch.args.push("-l".into());
        }
        launch.args.extend(spec.args.iter().cloned());
        return Ok(launch);
    }
    let mut dir = ScriptDir::create()?;
    let aid = new_aid();
    match kind {
        ShellKind::Bash => {
            let rc = dir.write("bashrc", &format!("__ua_aid={aid}; export -n __ua_aid\n{BASH}"))?;
            launch.args.push("--rcfile".into());
            launch.args.push(rc.into());
            if spec.login {
                launch.env.push(("__UA_BASH_LOGIN".into(), "1".into()));
            }
        }
        ShellKind::Zsh => {
            dir.write(".zshenv", ZSH_ENV)?;
            dir.write(".zprofile", ZSH_PROFILE)?;
            dir.write(".zshrc", &format!("__ua_aid={aid}; typeset +x __ua_aid\n{ZSH_RC}"))?;
            dir.write(".zlogin", ZSH_LOGIN)?;
            if let Some(user) = std::env::var_os("ZDOTDIR") {
                launch.env.push(("__UA_USER_ZDOTDIR".into(), user));
            }
            launch.env.push(("ZDOTDIR".into(), dir.path().into()));
            if spec.login {
                launch.args.push("-l".into());
            }
        }
        ShellKind::Fish => {
            let script = dir.write("unixagent.fish", &format!("set -g __ua_aid {aid}\n{FISH}"))?;
            let mut init = OsString::from("source ");
            init.push(shell_quote(&script)?);
            launch.args.push("--features".into());
            launch.args.push(FISH_NO_MARKS.into());
            launch.args.push("--init-command".into());
            launch.args.push(init);
            if spec.login {
                launch.args.push("-l".into());
            }
        }
        ShellKind::Other => {}
    }
    launch.args.extend(spec.args.iter().cloned());
    // What the shell opens, in order.
    let opened: &[&str] = match (kind, spec.login) {
        (ShellKind::Bash, _) => &["bashrc"],
        (ShellKind::Zsh, false) => &[".zshenv", ".zshrc"],
        (ShellKind::Zsh, true) => &[".zshenv", ".zprofile", ".zshrc", ".zlogin"],
        (ShellKind::Fish, _) => &["unixagent.fish"],
        (ShellKind::Other, _) => &[],
    };
    dir.remove_once_opened(opened)?;
    launch.integrated = true;
    launch.aid = Some(aid);
    launch.scripts = Some(dir);
    Ok(launch)
}

impl Launch {
    /// Makes the shell trace its start-up, for `unixagent --shell-debug`:
    /// bash and zsh get `-x` (after bash's long options, which must come
    /// first), fish gets `fish_trace`. Tracing stays on at the prompt, so
    /// the hooks that run there show too.
    pub fn trace_startup(&mut self) {
        match self.kind {
            ShellKind::Bash | ShellKind::Zsh => {
                let at = if self.args.first().is_some_and(|a| a == "--rcfile") { 2 } else { 0 };
                self.args.insert(at.min(self.args.len()), "-x".into());
            }
            ShellKind::Fish => self.env.push(("fish_trace".into(), "1".into())),
            ShellKind::Other => {}
        }
    }
}

/// A fresh application id: `ua` and 16 hex digits from a randomly keyed
/// hash (the standard library seeds it from the kernel). Only letters and
/// digits, so it needs no quoting in any shell or in an OSC payload.
fn new_aid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    h.write_u128(now);
    format!("ua{:016x}", h.finish())
}

/// A path as one word fish (and POSIX shells) read back as that path,
/// bytes that are not UTF-8 included. A path cannot hold a NUL byte, which
/// is the one thing shlex refuses.
fn shell_quote(p: &Path) -> Result<OsString, TermError> {
    use std::os::unix::ffi::OsStringExt;
    let quoted = shlex::bytes::try_quote(p.as_os_str().as_encoded_bytes()).map_err(|e| {
        TermError::io(format!("quoting {}", p.display()), std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    })?;
    Ok(OsString::from_vec(quoted.into_owned()))
}

/// A private directory for the integration scripts, removed on drop if
/// its watcher has not removed it already.
#[derive(Debug)]
pub struct ScriptDir {
    dir: tempfile::TempDir,
    /// Set by the watcher once it has removed the directory.
    gone: Arc<AtomicBool>,
}

impl ScriptDir {
    fn create() -> Result<Self, TermError> {
        use std::os::unix::fs::PermissionsExt;
        let make = |base: &Path| {
            tempfile::Builder::new()
                .prefix("unixagent-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(base)
        };
        // Inside unixagent's sandbox (a child agent's) the runtime
        // directory is not writable; the temporary directory is.
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_dir());
        let base = std::env::temp_dir();
        let dir = match runtime.as_deref().map(make) {
            Some(Ok(dir)) => dir,
            _ => make(&base)
                .map_err(|e| TermError::io(format!("creating a private directory in {}", base.display()), e))?,
        };
        Ok(Self { dir, gone: Arc::new(AtomicBool::new(false)) })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: &str) -> Result<PathBuf, TermError> {
        let p = self.path().join(name);
        std::fs::write(&p, text).map_err(|e| TermError::io(format!("writing {}", p.display()), e))?;
        Ok(p)
    }

    /// Unlinks each of `names` as soon as something opens it, and the
    /// directory (with anything else in it) once all have been, from a
    /// thread that ends then (or when the directory is removed some other
    /// way).
    fn remove_once_opened(&mut self, names: &[&str]) -> Result<(), TermError> {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let failed = |e: nix::errno::Errno| TermError::io("watching the integration scripts".to_string(), e.into());
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC).map_err(failed)?;
        let watch = AddWatchFlags::IN_OPEN | AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_ONLYDIR;
        inotify.add_watch(self.path(), watch).map_err(failed)?;
        let dir = self.path().to_path_buf();
        let gone = Arc::clone(&self.gone);
        let mut left: Vec<OsString> = names.iter().map(OsString::from).collect();
        std::thread::Builder::new()
            .name("ua-scripts".into())
            .spawn(move || {
                while !left.is_empty() {
                    let Ok(events) = inotify.read_events() else { return };
                    for e in events {
                        if e.mask.intersects(AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_IGNORED) {
                            return;
                        }
                        let Some(name) = e.name.filter(|_| e.mask.contains(AddWatchFlags::IN_OPEN)) else { continue };
                        if let Some(i) = left.iter().position(|n| *n == name) {
                            let _ = std::fs::remove_file(dir.join(&name));
                            left.remove(i);
                        }
                    }
                }
                // With what this shell never reads (a non-login zsh's
                // .zprofile and .zlogin).
                // Marked first, so that a drop racing with the removal
                // never removes a directory made under the same name since.
                gone.store(true, Ordering::SeqCst);
                if std::fs::remove_dir_all(&dir).is_err() {
                    gone.store(false, Ordering::SeqCst);
                }
            })
            .map_err(|e| TermError::io("watching the integration scripts".to_string(), e))?;
        Ok(())
    }
}

impl Drop for ScriptDir {
    fn drop(&mut self) {
        // Gone already: a directory of the same name made since is not ours.
        self.dir.disable_cleanup(self.gone.load(Ordering::SeqCst));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_by_name() {
        assert_eq!(ShellKind::detect(Path::new("/bin/bash")), ShellKind::Bash);
        assert_eq!(ShellKind::detect(Path::new("-zsh")), ShellKind::Zsh);
        assert_eq!(ShellKind::detect(Path::new("/usr/local/bin/fish")), ShellKind::Fish);
        assert_eq!(ShellKind::detect(Path::new("/bin/dash")), ShellKind::Other);
    }

    fn spec(program: &str, login: bool) -> ShellSpec {
        ShellSpec { program: program.into(), login, args: vec!["-x".into()], integration: true }
    }

    #[test]
    fn bash_gets_an_rcfile_and_login_flag_through_the_environment() {
        let l = prepare(&spec("/bin/bash", true)).unwrap();
        assert_eq!(l.args[0], "--rcfile");
        let aid = l.aid.clone().unwrap();
        assert_eq!(std::fs::read_to_string(&l.args[1]).unwrap(), format!("__ua_aid={aid}; export -n __ua_aid\n{BASH}"));
        assert_eq!(l.args.last().unwrap(), "-x");
        assert!(l.env.contains(&("__UA_BASH_LOGIN".into(), "1".into())));
        assert!(l.integrated);
    }

    #[test]
    fn zsh_gets_a_zdotdir_shim() {
        let l = prepare(&spec("/usr/bin/zsh", false)).unwrap();
        let dir = l.scripts.as_ref().unwrap().path().to_path_buf();
        assert!(l.env.contains(&("ZDOTDIR".into(), dir.clone().into())));
        for f in [".zshenv", ".zprofile", ".zshrc", ".zlogin"] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        drop(l);
        assert!(!dir.exists(), "script directory is removed on drop");
    }

    #[test]
    fn tracing_goes_after_bashs_long_options() {
        let mut l = prepare(&spec("/bin/bash", false)).unwrap();
        l.trace_startup();
        assert_eq!(l.args[0], "--rcfile");
        assert_eq!(l.args[2], "-x");
        let mut l = prepare(&spec("/usr/bin/fish", false)).unwrap();
        l.trace_startup();
        assert!(l.env.contains(&("fish_trace".into(), "1".into())));
    }

    #[test]
    fn fish_marks_are_turned_off_and_ours_carry_the_id() {
        let l = prepare(&spec("/usr/bin/fish", true)).unwrap();
        let aid = l.aid.clone().unwrap();
        let args: Vec<String> = l.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args[..3], ["--features", "no-mark-prompt", "--init-command"]);
        assert_eq!(args[4..], ["-l", "-x"]);
        let script = l.scripts.as_ref().unwrap().path().join("unixagent.fish");
        let quoted = shlex::try_quote(script.to_str().unwrap()).unwrap().into_owned();
        assert_eq!(args[3], format!("source {quoted}"));
        let text = std::fs::read_to_string(script).unwrap();
        assert!(text.starts_with(&format!("set -g __ua_aid {aid}\n")), "{text}");
    }

    #[test]
    fn each_session_gets_its_own_plain_id() {
        let a = prepare(&spec("/usr/bin/zsh", false)).unwrap();
        let b = prepare(&spec("/usr/bin/zsh", false)).unwrap();
        let (a_id, b_id) = (a.aid.clone().unwrap(), b.aid.clone().unwrap());
        assert_ne!(a_id, b_id);
        assert!(a_id.len() == 18 && a_id.bytes().all(|c| c.is_ascii_alphanumeric()), "{a_id}");
        let rc = std::fs::read_to_string(a.scripts.as_ref().unwrap().path().join(".zshrc")).unwrap();
        assert!(rc.starts_with(&format!("__ua_aid={a_id}; typeset +x __ua_aid\n")));
        // No id travels in the environment, where children would inherit it.
        assert!(a.env.iter().all(|(_, v)| !v.to_string_lossy().contains(&a_id)));
    }

    #[test]
    fn other_shells_and_disabled_integration_get_nothing() {
        let l = prepare(&spec("/bin/dash", true)).unwrap();
        assert_eq!(l.args, vec![OsString::from("-l"), "-x".into()]);
        assert!(!l.integrated && l.scripts.is_none() && l.aid.is_none());
        let mut s = spec("/bin/bash", false);
        s.integration = false;
        assert!(!prepare(&s).unwrap().integrated);
    }

    /// Awkward words, non-UTF-8 bytes included (paths may hold any byte
    /// but NUL).
    const AWKWARD: &[&[u8]] = &[
        b"plain",
        b"",
        b"two words",
        b"it's",
        b"'",
        b"\"quoted\"",
        b"back\\slash",
        b"ends with \\",
        b"\\'",
        b"$HOME and $(id) and `id`",
        b"semi; pipe | amp & star * ? [x] {a,b} ~ # %self = ! ^ ",
        b"new\nline\ttab",
        b"-n",
        b"\xff\xfe not utf-8 \xc3(",
        b"caf\xc3\xa9",
    ];

    /// What `printf %s WORD` prints in `shell`, run with no start-up files.
    fn printed(shell: &str, word: &std::ffi::OsStr) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let mut script = OsString::from("printf %s ");
        script.push(word);
        let mut cmd = std::process::Command::new(shell);
        match shell {
            "bash" => cmd.args(["--norc", "--noprofile", "-c"]),
            "zsh" => cmd.args(["-f", "-c"]),
            _ => cmd.args(["--no-config", "-c"]), // fish 3 and fish 4
        };
        let out = cmd.arg(&script).env("LC_ALL", "C.UTF-8").output().unwrap_or_else(|e| panic!("{shell}: {e}"));
        assert!(
            out.status.success(),
            "{shell} failed on {:?}: {}",
            word.as_bytes(),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    #[test]
    fn quoted_paths_read_back_unchanged_in_bash_zsh_and_fish_3_and_4() {
        use std::os::unix::ffi::OsStrExt;
        for shell in ["bash", "zsh", "fish", "fish4"] {
            for raw in AWKWARD {
                let word = shell_quote(Path::new(std::ffi::OsStr::from_bytes(raw))).unwrap();
                assert_eq!(printed(shell, &word), *raw, "{shell} read {word:?} back differently");
            }
        }
    }

    /// Waits, up to a deadline, until `done` holds.
    fn wait(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn each_script_goes_once_the_shell_has_opened_it_and_the_directory_with_the_last() {
        use std::io::Read;
        let l = prepare(&spec("/usr/bin/zsh", false)).unwrap();
        let dir = l.scripts.as_ref().unwrap().path().to_path_buf();
        let mut env = std::fs::File::open(dir.join(".zshenv")).unwrap();
        wait(".zshenv is unlinked", || !dir.join(".zshenv").exists());
        // The shell reads on through what it opened.
        let mut text = String::new();
        env.read_to_string(&mut text).unwrap();
        assert_eq!(text, ZSH_ENV);
        // Not opened yet: still there (a non-login zsh never reads .zprofile).
        assert!(dir.join(".zshrc").is_file() && dir.join(".zprofile").is_file());
        std::fs::File::open(dir.join(".zshrc")).unwrap();
        wait("the directory is removed", || !dir.exists());
        // A directory of the same name made since is not ours to remove.
        std::fs::create_dir(&dir).unwrap();
        drop(l);
        assert!(dir.is_dir());
        std::fs::remove_dir(&dir).unwrap();
    }
}
