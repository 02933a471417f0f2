//! What a path or host names, for the deny rules: disk devices, credential
//! files and stores, shell histories, start-up files that run at every
//! login, and the places schedulers and init systems run programs from.
//! Paths arrive resolved and normalised (`~` kept for the home directory).

pub(crate) fn is_block_device(p: &str) -> bool {
    let Some(dev) = p.strip_prefix("/dev/") else {
        return false;
    };
    [
        "sd",
        "hd",
        "vd",
        "xvd",
        "nvme",
        "mmcblk",
        "disk",
        "rdisk",
        "md",
        "dm-",
        "mapper/",
        "loop",
        "sr",
        "nbd",
        "zd",
        "mtdblock",
        "by-id/",
        "by-uuid/",
        "by-label/",
        "by-path/",
        "disk/",
    ]
    .iter()
    .any(|pre| dev.starts_with(pre))
}

/// Paths that hold private keys, tokens or passwords.
pub(crate) fn is_credential_path(t: &str) -> bool {
    let t = t.trim_start_matches('@');
    const MARKERS: &[&str] = &[
        ".ssh/id_",
        ".ssh/identity",
        ".aws/credentials",
        ".netrc",
        ".gnupg/private-keys",
        ".gnupg/secring",
        ".git-credentials",
        ".config/gh/hosts.yml",
        ".docker/config.json",
        ".kube/config",
        "/etc/shadow",
        "/etc/gshadow",
        ".pgpass",
        ".my.cnf",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials",
        ".config/gcloud/credentials",
        "application_default_credentials.json",
        ".azure/accessTokens",
        ".vault-token",
        ".password-store",
        ".local/share/keyrings",
        "Login Data",
        ".mozilla/firefox",
        ".config/unixagent/credentials",
        ".config/unixagent/secrets",
        "/etc/ssh/ssh_host_",
        ".terraform.d/credentials",
        ".config/hub",
    ];
    let private_key = t.contains(".ssh/id_") && t.ends_with(".pub");
    !private_key && MARKERS.iter().any(|m| t.contains(m))
        || t == ".env"
        || t.ends_with("/.env")
        || is_credential_store(t)
        || glob_reaches_credentials(t)
}

/// Where credentials usually live, below a home directory.
const CREDENTIAL_FILES: &[&str] = &[
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".ssh/id_ecdsa",
    ".ssh/id_dsa",
    ".ssh/identity",
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    ".gnupg/private-keys-v1.d/key.key",
    ".gnupg/secring.gpg",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".pgpass",
    ".cargo/credentials",
    ".vault-token",
];

/// True when a path with glob characters (`~/.s*/id_rsa`) would expand to
/// a credential file: the shell expands it before the program sees it, so
/// the markers above cannot be found in its text. The pattern is tried, as
/// the shell would, component by component (`*` never crosses `/`, and a
/// component starting with `.` is matched only by a pattern that starts
/// with `.`), on the usual credential files below the directory where it
/// starts and one level further down.
fn glob_reaches_credentials(t: &str) -> bool {
    let Some(first) = t.find(['*', '?', '[']) else { return false };
    let rest = match t[..first].rfind('/') {
        Some(i) => &t[i + 1..],
        None => t,
    };
    let pattern: Vec<&str> = rest.split('/').collect();
    let mut matchers = Vec::with_capacity(pattern.len());
    for p in &pattern {
        match globset::Glob::new(p) {
            Ok(g) => matchers.push(g.compile_matcher()),
            Err(_) => return false,
        }
    }
    let fits = |path: &str| {
        let parts: Vec<&str> = path.split('/').collect();
        parts.len() == pattern.len()
            && parts
                .iter()
                .zip(&pattern)
                .zip(&matchers)
                .all(|((part, pat), m)| (!part.starts_with('.') || pat.starts_with('.')) && m.is_match(part))
    };
    CREDENTIAL_FILES.iter().any(|f| fits(f) || fits(&format!("u/{f}")))
}

pub(crate) fn is_history_path(t: &str) -> bool {
    ["_history", ".zhistory", ".histfile", ".lesshst", "fish_history", ".zsh_sessions"].iter().any(|m| t.contains(m))
}

/// Directories that hold nothing but keys, tokens and passwords: reading
/// one (`tar czf - ~/.ssh`) reads them all.
const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gcloud",
    ".local/share/keyrings",
];

/// True for a credential store itself (`~/.ssh`, `/home/u/.aws/`), which
/// [`is_credential_path`]'s file markers do not name.
pub(crate) fn is_credential_store(t: &str) -> bool {
    let t = t.trim_end_matches('/');
    home_relative(t).is_some_and(|rel| CREDENTIAL_STORES.contains(&rel))
}

/// `t` relative to a home directory: after `~/`, `$HOME/`, `/root/` or
/// `/home/USER/`.
pub(crate) fn home_relative(t: &str) -> Option<&str> {
    if let Some(rest) = t.strip_prefix("~/").or_else(|| t.strip_prefix("/root/")) {
        return Some(rest);
    }
    let rest = t.strip_prefix("/home/")?;
    rest.split_once('/').map(|(_, r)| r)
}

/// Name patterns of credential files, as `find -name` and friends give
/// them (`*.pem`, `id_*`, `.netrc`).
pub(crate) fn is_credential_pattern(t: &str) -> bool {
    let name = t.rsplit('/').next().unwrap_or(t).trim_start_matches('*').to_ascii_lowercase();
    const SUFFIXES: &[&str] = &[
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".kdbx",
        ".ovpn",
        ".ppk",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".netrc",
        ".pgpass",
        "credentials",
        "credentials.json",
        ".git-credentials",
        ".env",
        "shadow",
    ];
    !name.ends_with(".pub") && (SUFFIXES.iter().any(|s| name.ends_with(s)) || name.starts_with("id_"))
}

/// Start-up files and directories below a home directory: each runs code in
/// every new shell or session, so writing one outlives the command.
const HOME_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bashrc.d",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/zsh",
    ".oh-my-zsh/custom",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".config/fish/functions",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    ".pam_environment",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd/user",
];

/// System-wide start-up files and directories.
const SYSTEM_STARTUP: &[&str] = &[
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zsh",
    "/etc/zshrc",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zlogin",
    "/etc/environment",
    "/etc/fish",
    "/etc/inputrc",
    "/etc/xdg/autostart",
];

fn is_at_or_below(t: &str, base: &str) -> bool {
    t == base || t.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
}

/// True for a shell or session start-up file, or a path inside a start-up
/// directory: below a home directory, system-wide, or named through a
/// variable the classifier cannot see (`$ZDOTDIR/.zshrc`).
pub(crate) fn is_startup_path(t: &str) -> bool {
    let t = t.replace("$XDG_CONFIG_HOME/", "~/.config/");
    if let Some(rel) = home_relative(&t)
        && HOME_STARTUP.iter().any(|s| is_at_or_below(rel, s))
    {
        return true;
    }
    if SYSTEM_STARTUP.iter().any(|s| is_at_or_below(&t, s)) {
        return true;
    }
    // `$ZDOTDIR/.zshrc`, `"$D"/.bashrc`: a start-up file's name under a
    // directory only known at run time.
    t.starts_with('$')
        && t.rsplit('/').next().is_some_and(|name| HOME_STARTUP.iter().any(|s| !s.contains('/') && *s == name))
}

/// Places cron, systemd and init run programs from, on a schedule or at
/// boot.
const SCHEDULER_DIRS: &[&str] = &[
    "/etc/crontab",
    "/etc/cron.d",
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/etc/anacrontab",
    "/var/spool/cron",
    "/etc/systemd/system",
    "/etc/systemd/user",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/usr/lib/systemd/user",
    "/run/systemd/system",
    "/etc/init.d",
    "/etc/rc.local",
    "/etc/update-motd.d",
];

/// True for a path where a scheduler or init system picks up programs to
/// run (`/etc/cron.d/x`, `/etc/systemd/system/x.service`, `/etc/rc3.d/S01x`).
pub(crate) fn is_scheduler_path(t: &str) -> bool {
    SCHEDULER_DIRS.iter().any(|s| is_at_or_below(t, s))
        || t.strip_prefix("/etc/rc").is_some_and(|r| r.split('/').next().is_some_and(|d| d.ends_with(".d")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_up_files_in_every_spelling() {
        for p in [
            "~/.bashrc",
            "/home/alice/.zshrc",
            "/root/.profile",
            "~/.config/fish/config.fish",
            "~/.config/fish/conf.d/x.fish",
            "$XDG_CONFIG_HOME/fish/functions/ls.fish",
            "$ZDOTDIR/.zshrc",
            "/etc/profile.d/x.sh",
            "~/.config/autostart/x.desktop",
        ] {
            assert!(is_startup_path(p), "{p}");
        }
        for p in ["~/.bashrc.bak", "~/src/.bashrc", ".bashrc", "/etc/profiles", "~/.config/fish/fish_variables"] {
            assert!(!is_startup_path(p), "{p}");
        }
    }

    #[test]
    fn scheduler_paths() {
        for p in [
            "/etc/cron.d/x",
            "/etc/crontab",
            "/etc/systemd/system/x.service",
            "/etc/rc2.d/S01x",
            "/var/spool/cron/crontabs/root",
        ] {
            assert!(is_scheduler_path(p), "{p}");
        }
        for p in ["/etc/cron", "/etc/systemd/journald.conf", "/etc/rcfile"] {
            assert!(!is_scheduler_path(p), "{p}");
        }
    }

    #[test]
    fn credential_stores_and_patterns() {
        assert!(is_credential_path("~/.ssh"));
        assert!(is_credential_path("/home/u/.aws/"));
        assert!(!is_credential_path("~/.sshd"));
        assert!(!is_credential_path("~/src/.ssh"));
        for p in ["*.pem", "id_*", "*.key", ".netrc", "credentials"] {
            assert!(is_credential_pattern(p), "{p}");
        }
        for p in ["*.rs", "*.pub", "id_rsa.pub", "Cargo.toml"] {
            assert!(!is_credential_pattern(p), "{p}");
        }
    }
}
