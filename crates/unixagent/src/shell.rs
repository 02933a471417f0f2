//! Which shell unixagent runs, and running `-c STRING` exactly as the shell
//! would.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// Environment variable set for the inner shell; its presence tells a
/// unixagent started inside that shell that it would be nested.
pub const SESSION_ENV: &str = "UNIXAGENT_SESSION";

/// Picks the inner shell: `--shell`, then `shell.command`, then `$SHELL`,
/// then the account's login shell, then /bin/bash, then /bin/sh. A
/// candidate that is unixagent itself is skipped: when unixagent is the
/// login shell, `$SHELL` points at it, and running it inside itself would
/// recurse.
pub fn resolve(cli: Option<&Path>, config: Option<&Path>) -> PathBuf {
    let me = std::env::current_exe().ok().and_then(|p| p.canonicalize().ok());
    let is_me = |p: &Path| {
        p.file_name().is_some_and(|n| n == "unixagent")
            || me.as_deref().is_some_and(|me| p.canonicalize().ok().as_deref() == Some(me))
    };
    let account_shell = || nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().map(|u| u.shell);
    if let Some(p) = cli.or(config) {
        return p.to_path_buf();
    }
    std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain(account_shell())
        .chain([PathBuf::from("/bin/bash"), PathBuf::from("/bin/sh")])
        .find(|p| !is_me(p) && p.is_file())
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// Replaces this process with `shell -c STRING [ARGS…]`, so stdin, stdout,
/// stderr, signals and the exit status are the shell's own: there is no
/// PTY and no unixagent process left in between. Returns only on failure.
pub fn exec_dash_c(shell: &Path, login: bool, string: &str, args: &[OsString]) -> std::io::Error {
    let mut cmd = std::process::Command::new(shell);
    if login {
        cmd.arg("-l");
    }
    cmd.arg("-c").arg(string).args(args);
    cmd.exec()
}

/// Replaces this process with the plain shell (used when unixagent would
/// be nested inside itself).
pub fn exec_plain(shell: &Path, login: bool, args: &[OsString]) -> std::io::Error {
    let mut cmd = std::process::Command::new(shell);
    if login {
        cmd.arg("-l");
    }
    cmd.args(args).exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_choices_win() {
        assert_eq!(resolve(Some(Path::new("/bin/zsh")), Some(Path::new("/bin/fish"))), PathBuf::from("/bin/zsh"));
        assert_eq!(resolve(None, Some(Path::new("/bin/fish"))), PathBuf::from("/bin/fish"));
    }

    #[test]
    fn never_picks_unixagent_itself() {
        let p = resolve(None, None);
        assert_ne!(p.file_name().unwrap(), "unixagent");
        assert!(p.is_file());
    }
}
