//! unixagent as the login shell: whether it is one, whether `/etc/shells`
//! lists it (chsh, some ssh and ftp set-ups refuse a shell it does not),
//! and, when it is one, the way back out should a session ever fail to
//! start.

use std::path::{Path, PathBuf};

use super::Check;

const AREA: &str = "login";

const SHELLS: &str = "/etc/shells";

pub fn checks() -> Vec<Check> {
    let account = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten();
    let login_shell = account.as_ref().map(|u| u.shell.clone());
    let me = std::env::current_exe().ok();
    let listed = std::fs::read_to_string(SHELLS).unwrap_or_default();
    verdict(login_shell.as_deref(), me.as_deref(), &listed)
}

/// Whether `shell` is unixagent: by name, or the very binary running.
fn is_unixagent(shell: &Path, me: Option<&Path>) -> bool {
    let canon = |p: &Path| p.canonicalize().ok();
    shell.file_name().is_some_and(|n| n == "unixagent")
        || me.is_some_and(|me| canon(shell).is_some() && canon(shell) == canon(me))
}

/// The lines for an account whose login shell is `login_shell`, with
/// `/etc/shells` reading `listed`.
pub fn verdict(login_shell: Option<&Path>, me: Option<&Path>, listed: &str) -> Vec<Check> {
    let lists = |p: &Path| listed.lines().map(str::trim).any(|l| Path::new(l) == p);
    let way_back = "if a session ever fails to start, `chsh -s /bin/bash` gets your old shell back, from any terminal or as `ssh HOST chsh -s /bin/bash` (a command over ssh runs in your real shell, not in a session)";
    match login_shell {
        Some(shell) if is_unixagent(shell, me) => {
            let mut out = vec![];
            if lists(shell) {
                out.push(Check::ok(
                    AREA,
                    "login shell",
                    format!("{} is your login shell and is in {SHELLS}", shell.display()),
                ));
            } else {
                out.push(Check::problem(
                    AREA,
                    "login shell",
                    format!(
                        "{} is your login shell but is not in {SHELLS}, so chsh and some ssh and ftp servers refuse it",
                        shell.display()
                    ),
                    format!("`make install-login-shell`, or add the line {} to {SHELLS} as root", shell.display()),
                ));
            }
            out.push(Check::ok(AREA, "way back", way_back));
            out
        }
        _ => {
            let me = me.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("unixagent"));
            let registered = if lists(&me) { "" } else { " once `make install-login-shell` has put it in /etc/shells" };
            vec![Check::ok(
                AREA,
                "login shell",
                format!("not unixagent; `chsh -s {}` makes it one{registered}", me.display()),
            )]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn a_login_shell_missing_from_etc_shells_is_a_problem_and_the_way_back_is_named() {
        let me = Path::new("/usr/local/bin/unixagent");
        let c = verdict(Some(me), Some(me), "/bin/sh\n/bin/bash\n");
        assert_eq!(c[0].status, Status::Problem);
        assert!(c[0].fix.as_deref().unwrap().contains("make install-login-shell"));
        assert!(c[1].message.contains("chsh -s /bin/bash"));
        let c = verdict(Some(me), Some(me), "/bin/sh\n/usr/local/bin/unixagent\n");
        assert_eq!(c[0].status, Status::Ok);
        let c = verdict(Some(Path::new("/bin/bash")), Some(me), "/bin/bash\n");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].status, Status::Ok);
        assert!(c[0].message.starts_with("not unixagent; `chsh -s /usr/local/bin/unixagent` makes it one once"));
    }
}
