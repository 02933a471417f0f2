//! Shell integration: the scripts that make bash, zsh and fish emit OSC 133
//! and OSC 7, and how each shell is started so it loads them without
//! anything typed or shown on screen.
//!
//! The scripts live in `shell-integration/` at the top of the repository as
//! ordinary files and are embedded at build time. At start-up they are
//! written to a private directory (mode 0700) that is removed as soon as the
//! shell has read them (the first prompt marker) or when unixagent exits.
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
    let dir = ScriptDir::create()?;
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
            init.push(shell_quote(&script));
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

/// Single-quotes a path for fish (and POSIX shells).
fn shell_quote(p: &Path) -> OsString {
    let s = p.to_string_lossy().replace('\'', "'\\''");
    format!("'{s}'").into()
}

/// A private directory for the integration scripts, removed on drop.
#[derive(Debug)]
pub struct ScriptDir {
    path: PathBuf,
}

impl ScriptDir {
    fn create() -> Result<Self, TermError> {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_dir());
        // mkdtemp creates the directory with mode 0700. Inside unixagent's
        // sandbox (a child agent's) the runtime directory is not writable,
        // the temporary directory is.
        let make = |base: &Path| nix::unistd::mkdtemp(&base.join("unixagent-XXXXXX"));
        let made = match runtime.as_deref().map(make) {
            Some(Ok(path)) => Ok(path),
            _ => make(&std::env::temp_dir()),
        };
        let path = made.map_err(|e| {
            TermError::io(format!("creating a directory in {}", std::env::temp_dir().display()), e.into())
        })?;
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, name: &str, text: &str) -> Result<PathBuf, TermError> {
        let p = self.path.join(name);
        std::fs::write(&p, text).map_err(|e| TermError::io(format!("writing {}", p.display()), e))?;
        Ok(p)
    }
}

impl Drop for ScriptDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
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
        assert_eq!(args[3], format!("source '{}'", script.display()));
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
}
