//! The rules, in the order they are tried. Each test looks at one part `i`
//! of the parsed command in its [`Scope`]. Attack tests for each id live in
//! `tests.rs` beside this file and in the classification corpus.

use super::Rule;
use super::scope::{Broad, INTERPRETERS, SHELLS, Scope, broad};
use super::targets::{
    is_block_device, is_credential_path, is_credential_pattern, is_history_path, is_scheduler_path, is_startup_path,
};
use crate::classify::effects::models_writes;
use crate::parse::{PartKind, RedirectKind};

const fn r(id: &'static str, what: &'static str, test: fn(&Scope<'_>, usize) -> bool) -> Rule {
    Rule { id, what, test }
}

/// Every deny rule, in the order they are tried.
pub static RULES: &[Rule] = &[
    // Destroying data in bulk.
    r("rm-root", "removes the root directory", |s, i| {
        s.is(i, &["rm"]) && s.operands(i).iter().any(|o| broad(o) == Some(Broad::Root))
    }),
    r("rm-no-preserve-root", "disables rm's protection of /", |s, i| {
        s.is(i, &["rm", "chmod", "chown", "chgrp"]) && s.arg_texts(i).any(|t| t == "--no-preserve-root")
    }),
    r("rm-home", "removes a home directory", |s, i| {
        rm_recursive(s, i) && s.operands(i).iter().any(|o| broad(o) == Some(Broad::Home))
    }),
    r("rm-system-dir", "removes a system directory", |s, i| {
        rm_recursive(s, i) && s.operands(i).iter().any(|o| broad(o) == Some(Broad::System))
    }),
    r("rm-credential-dir", "removes keys or credentials", |s, i| {
        s.is(i, &["rm", "shred", "srm", "wipe"])
            && s.operands(i).iter().any(|o| is_credential_path(o) || o.ends_with("/.ssh") || o.ends_with("/.gnupg"))
    }),
    r("find-delete-broad", "deletes files across the root, home or a system tree", |s, i| {
        s.is(i, &["find"])
            && find_roots(s, i).iter().any(|o| broad(o).is_some())
            && s.arg_texts(i)
                .any(|t| t == "-delete" || matches!(t, "rm" | "shred" | "unlink" | "/bin/rm" | "/usr/bin/rm"))
    }),
    r("rsync-delete-broad", "mirrors over the root, home or a system tree with --delete", |s, i| {
        s.is(i, &["rsync"])
            && s.arg_texts(i).any(|t| t.starts_with("--delete") || t.starts_with("--remove"))
            && s.operands(i).last().is_some_and(|d| broad(d).is_some())
    }),
    r("mv-system-dir", "moves the root, a home or a system directory away", |s, i| {
        s.is(i, &["mv"]) && s.operands(i).split_last().is_some_and(|(_, srcs)| srcs.iter().any(|o| broad(o).is_some()))
    }),
    r("mv-to-dev-null", "moves files onto /dev/null", |s, i| {
        s.is(i, &["mv", "cp", "ln"]) && s.operands(i).last().is_some_and(|d| d == "/dev/null")
    }),
    r("truncate-system-tree", "truncates or shreds files across a system tree", |s, i| {
        s.is(i, &["truncate", "shred", "wipe"]) && s.operands(i).iter().any(|o| broad(o).is_some())
    }),
    // Disks and devices.
    r("mkfs", "makes a file system (erases a device)", |s, i| {
        let b = s.base(i);
        b.starts_with("mkfs")
            || matches!(b, "mke2fs" | "mkdosfs" | "mkntfs" | "mkexfatfs" | "newfs" | "mkswap")
            || b == "zpool"
                && s.args(i).first_operand().is_some_and(|o| matches!(o, "create" | "destroy" | "labelclear"))
    }),
    r("dd-device", "dd writes onto a disk device", |s, i| {
        s.is(i, &["dd"])
            && s.arg_texts(i).filter_map(|t| t.strip_prefix("of=")).any(|p| is_block_device(&s.resolve(i, p)))
    }),
    r("wipefs", "erases file system signatures", |s, i| s.is(i, &["wipefs"]) && !s.args(i).flag('n', "no-act")),
    r("blkdiscard", "discards every block of a device", |s, i| s.is(i, &["blkdiscard"])),
    r("partition-table-wipe", "destroys a partition table", |s, i| {
        (s.is(i, &["sgdisk"])
            && (s.args(i).flag('Z', "zap-all") || s.args(i).flag('o', "clear") || s.args(i).flag('z', "zap")))
            || (s.is(i, &["parted"]) && s.arg_texts(i).any(|t| matches!(t, "mklabel" | "mktable" | "rm")))
            || (s.is(i, &["sfdisk"])
                && (s.arg_texts(i).any(|t| t == "--delete")
                    || s.part(i)
                        .redirects
                        .iter()
                        .any(|r| r.kind == RedirectKind::Read || r.kind == RedirectKind::Inline)))
    }),
    r("block-device-write", "writes onto a disk device", |s, i| s.write_targets(i).iter().any(|t| is_block_device(t))),
    r("raw-memory-write", "writes raw kernel or process memory", |s, i| {
        s.writes_containing(i, &["/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore"])
            || s.write_targets(i).iter().any(|t| t.starts_with("/proc/") && t.ends_with("/mem"))
    }),
    r("sysrq-trigger", "triggers kernel SysRq actions (reboot, crash)", |s, i| {
        s.writes_containing(i, &["/proc/sysrq-trigger", "/proc/sys/kernel/sysrq"])
    }),
    r("kill-all-processes", "signals every process", |s, i| {
        (s.is(i, &["kill"]) && s.part(i).args().iter().skip(1).any(|a| a.text == "-1")
            || s.is(i, &["kill"]) && s.arg_texts(i).collect::<Vec<_>>() == ["--", "-1"])
            || s.is(i, &["killall5"])
            || s.is(i, &["pkill", "killall"])
                && s.args(i).operands().iter().any(|o| matches!(o.text.as_str(), "." | ".*" | "-1"))
    }),
    r("power-off", "shuts down or reboots the machine", |s, i| {
        s.is(i, &["shutdown", "reboot", "halt", "poweroff", "kexec"])
            || s.is(i, &["init", "telinit"]) && s.args(i).first_operand().is_some_and(|o| matches!(o, "0" | "6"))
            || s.is(i, &["systemctl", "loginctl"])
                && s.args(i).first_operand().is_some_and(|o| {
                    matches!(o, "poweroff" | "reboot" | "halt" | "kexec" | "emergency" | "rescue" | "soft-reboot")
                })
    }),
    // Resource exhaustion.
    r("fork-bomb", "a function that spawns copies of itself", |s, i| {
        let p = s.part(i);
        p.in_function.as_deref().is_some_and(|f| p.program() == f && (p.background || !p.pipes.is_empty()))
    }),
    r("interpreter-fork-bomb", "inline code that forks in a loop", |s, i| {
        s.is(i, INTERPRETERS)
            && s.inline_code(i).is_some_and(|c| {
                c.contains("fork") && (c.contains("while") || c.contains("for ") || c.contains("loop"))
            })
    }),
    // Remote control of this machine.
    r("dev-tcp-shell", "connects a shell to the network through /dev/tcp", |s, i| {
        let p = s.part(i);
        let net = p
            .redirects
            .iter()
            .any(|r| r.target.text.starts_with("/dev/tcp/") || r.target.text.starts_with("/dev/udp/"));
        net && (s.is(i, SHELLS)
            || s.is(i, &["exec"])
            || p.kind == PartKind::Redirection
            || p.redirects.iter().any(|r| r.kind == RedirectKind::ReadWrite))
    }),
    r("nc-exec", "netcat runs a program for the remote side", |s, i| {
        s.is(i, &["nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"])
            && (s.args(i).flag('e', "exec") || s.args(i).flag('c', "sh-exec") || s.args(i).has_prefix("--lua-exec"))
    }),
    r("socat-exec", "socat connects a program to the network", |s, i| {
        let lower: Vec<String> = s.arg_texts(i).map(str::to_ascii_lowercase).collect();
        s.is(i, &["socat"])
            && lower.iter().any(|t| t.starts_with("exec:") || t.starts_with("system:"))
            && lower.iter().any(|t| t.contains("tcp") || t.contains("udp") || t.contains("ssl") || t.contains("listen"))
    }),
    r("interpreter-reverse-shell", "inline code connects a socket to a shell", |s, i| {
        s.is(i, INTERPRETERS)
            && s.inline_code(i).is_some_and(|c| {
                let sock = [
                    "socket",
                    "TCPSocket",
                    "fsockopen",
                    "IO::Socket",
                    "net.connect",
                    "net.Socket",
                    "require('net')",
                    "require(\"net\")",
                    "/dev/tcp/",
                ]
                .iter()
                .any(|m| c.contains(m));
                let shell = [
                    "subprocess",
                    "pty.spawn",
                    "dup2",
                    "/bin/sh",
                    "/bin/bash",
                    "exec(",
                    "popen",
                    "system(",
                    "spawn(",
                    "child_process",
                    "proc_open",
                    "shell_exec",
                    "cmd.exe",
                ]
                .iter()
                .any(|m| c.contains(m));
                sock && shell
            })
    }),
    r("awk-inet", "awk opens a network connection", |s, i| {
        s.is(i, &["awk", "gawk"])
            && s.arg_texts(i).any(|t| t.contains("/inet/") || t.contains("/inet4/") || t.contains("/inet6/"))
    }),
    r("xterm-remote-display", "opens a terminal on a remote display", |s, i| {
        s.is(i, &["xterm", "xterm.real"]) && s.args(i).value("-display", "").is_some_and(|d| !d.starts_with(':'))
    }),
    // Running code from the network.
    r("download-pipe-shell", "pipes a download into a shell or interpreter", |s, i| {
        s.reads_code_from_stdin(i) && s.parts().any(|j| s.pipes_into(j, i) && s.is_download(j))
    }),
    r("download-exec-substitution", "runs a download as shell code", |s, i| s.is_download(i) && s.part(i).feeds_code),
    r("interpreter-runs-download", "hands a download to an interpreter as code", |s, i| {
        s.is(i, INTERPRETERS)
            && s.part(i).args().iter().any(|a| {
                a.dynamic
                    && ["$(curl", "$(wget", "`curl", "`wget", "$(fetch", "$(nc "].iter().any(|m| a.text.contains(m))
            })
    }),
    r("download-and-run", "downloads a file and runs it", |s, i| {
        if !s.is_download(i) {
            return false;
        }
        let files = s.write_targets(i);
        files.iter().any(|f| s.parts().any(|j| j > i && s.runs_file(j, f)))
    }),
    r("decoded-payload-to-shell", "decodes a hidden payload and runs it", |s, i| {
        decodes(s, i) && (s.part(i).feeds_code || s.parts().any(|j| s.pipes_into(i, j) && s.reads_code_from_stdin(j)))
    }),
    r(
        "generated-code-to-shell",
        "runs code another program computes (translated, rewritten or printed by inline code)",
        |s, i| {
            generates_code(s, i)
                && (s.part(i).feeds_code || s.parts().any(|j| s.pipes_into(i, j) && s.reads_code_from_stdin(j)))
        },
    ),
    r("input-as-code", "runs each line of its input, or each file name, as shell code", |s, i| {
        let p = s.part(i);
        p.kind == PartKind::Dynamic
            && p.argv.first().is_some_and(|a| a.text == "{stdin}" || a.text == "{}")
            && p.wrappers.iter().any(|w| w == "xargs" || w == "parallel" || w.starts_with("find -"))
            && p.wrappers.last().is_some_and(|w| w.ends_with(" -c") || w == "eval" || w == "parallel")
    }),
    r("shell-network-pipe", "pipes a shell's input or output through a network connection", |s, i| {
        s.reads_code_from_stdin(i) && s.parts().any(|j| s.same_pipeline(i, j) && s.is_net(j))
    }),
    // Secrets leaving the machine.
    r("credential-upload", "sends keys or credentials to another host", |s, i| {
        s.is_net(i) && sent_texts(s, i).iter().any(|t| is_credential_path(t))
    }),
    r("credential-pipe-to-network", "pipes keys or credentials to another host", |s, i| {
        mentions_credentials(s, i) && s.parts().any(|j| s.pipes_into(i, j) && s.is_net(j))
    }),
    r("credential-read", "prints private keys or credentials (into the model's context)", |s, i| {
        s.is(i, READERS) && read_texts(s, i).iter().any(|t| is_credential_path(t))
    }),
    r("credential-find-exfil", "searches for keys or credentials and sends or prints each one", |s, i| {
        s.is(i, &["find"])
            && find_reaches_credentials(s, i)
            && s.parts().any(|j| {
                j != i
                    && (s.is_net(j) || s.is(j, READERS))
                    && (s.part(j).wrappers.iter().any(|w| w.starts_with("find -exec") || w.starts_with("find -ok"))
                        || s.pipes_into(i, j) && s.is_net(j))
            })
    }),
    r("dns-exfil", "hides command output in a host name (data leaves through DNS)", |s, i| {
        let dns = s.is(
            i,
            &[
                "dig",
                "nslookup",
                "host",
                "drill",
                "ping",
                "ping6",
                "traceroute",
                "traceroute6",
                "tracepath",
                "mtr",
                "whois",
                "nc",
                "ncat",
                "netcat",
                "telnet",
                "ssh",
                "getent",
            ],
        );
        let urls = s.is_download(i) || s.is(i, &["http", "https", "xh", "wget2"]);
        (dns || urls) && s.part(i).args().iter().any(|a| host_has_substitution(&a.text))
    }),
    r("ssh-reverse-tunnel", "opens a reverse tunnel or SOCKS proxy through another host", |s, i| {
        s.is(i, &["ssh", "autossh"]) && ssh_tunnels_out(s.part(i).args(), s.is(i, &["autossh"]))
    }),
    r("environment-exfil", "sends the environment (API keys, tokens) to another host", |s, i| {
        let dumps =
            s.is(i, &["env", "printenv", "export", "declare", "set", "typeset"]) && s.args(i).operands().is_empty();
        (dumps && s.parts().any(|j| s.pipes_into(i, j) && s.is_net(j)))
            || s.is_net(i)
                && s.arg_texts(i).any(|t| {
                    ["$(env)", "$(printenv", "`env`", "`printenv", "/proc/self/environ"].iter().any(|m| t.contains(m))
                })
    }),
    r("history-exfil", "sends shell history to another host", |s, i| {
        (s.is_net(i) && sent_texts(s, i).iter().any(|t| is_history_path(t)))
            || (s.is(i, &["history", "fc"]) || s.arg_texts(i).any(is_history_path))
                && s.parts().any(|j| s.pipes_into(i, j) && s.is_net(j))
    }),
    r("keychain-dump", "dumps the system keychain", |s, i| {
        s.is(i, &["security"])
            && s.args(i).first_operand().is_some_and(|o| {
                o == "dump-keychain"
                    || o.starts_with("find-")
                        && o.ends_with("-password")
                        && (s.args(i).flag('w', "") || s.args(i).flag('g', ""))
            })
            || s.is(i, &["secret-tool"]) && s.args(i).first_operand() == Some("lookup")
    }),
    r("git-credential-dump", "prints stored git credentials", |s, i| {
        s.is(i, &["git"]) && {
            let ops: Vec<&str> = s.args(i).operands().iter().map(|a| a.text.as_str()).collect();
            ops.windows(2).any(|w| w[0] == "credential" && w[1] == "fill")
                || ops.first().is_some_and(|o| o.starts_with("credential-") && ops.contains(&"get"))
        }
    }),
    r("gpg-export-secret", "exports secret keys", |s, i| {
        s.is(i, &["gpg", "gpg2"]) && s.arg_texts(i).any(|t| t.starts_with("--export-secret"))
    }),
    // History tampering.
    r("history-clear", "clears or rewrites the shell history", |s, i| {
        s.is(i, &["history"])
            && (s.args(i).flag('c', "")
                || s.args(i).flag('d', "")
                || s.args(i).flag('w', "") && s.arg_texts(i).any(|t| t == "/dev/null"))
    }),
    r("history-disable", "stops the shell recording history", |s, i| {
        let p = s.part(i);
        let var =
            |n: &str| matches!(n, "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" | "HISTIGNORE" | "HISTCONTROL");
        p.assignments.iter().any(|(n, _)| var(n))
            || s.is(i, &["unset", "export", "declare", "typeset", "readonly", "local"])
                && s.arg_texts(i).any(|t| var(t.split(['=', '+']).next().unwrap_or(t)))
            || s.is(i, &["set"])
                && s.arg_texts(i).collect::<Vec<_>>().windows(2).any(|w| w[0] == "+o" && w[1] == "history")
            || s.is(i, &["unsetopt", "setopt"])
                && s.arg_texts(i).any(|t| t.to_ascii_lowercase().replace('_', "").contains("hist"))
    }),
    r("history-file-tamper", "removes or rewrites a shell history file", |s, i| {
        s.write_targets(i).iter().any(|t| is_history_path(t))
    }),
    // Permissions and system configuration.
    r("chmod-world-writable-system", "makes a system tree or home world-writable", |s, i| {
        s.is(i, &["chmod"])
            && mode_world_writable(s, i)
            && chmod_targets(s, i).iter().any(|o| broad(o).is_some() || under_system(o))
    }),
    r("chmod-recursive-system", "changes permissions across a system tree", |s, i| {
        s.is(i, &["chmod", "chown", "chgrp", "setfacl", "chattr"])
            && (s.args(i).flag('R', "recursive") || s.is(i, &["setfacl", "chattr"]) && s.args(i).flag('R', ""))
            && chmod_targets(s, i).iter().any(|o| matches!(broad(o), Some(Broad::Root | Broad::System)))
    }),
    r("chmod-setuid", "makes a program run as its owner (setuid/setgid)", |s, i| {
        s.is(i, &["chmod"]) && mode_setuid(s, i)
    }),
    r("auth-file-write", "writes the system's account or authentication files", |s, i| {
        s.writes_containing(
            i,
            &[
                "/etc/passwd",
                "/etc/shadow",
                "/etc/group",
                "/etc/gshadow",
                "/etc/pam.d",
                "/etc/security/",
                "/etc/ssh/sshd_config",
                "/etc/login.defs",
            ],
        )
    }),
    r("sudoers-write", "writes sudo's configuration", |s, i| {
        s.writes_containing(i, &["/etc/sudoers", "/etc/doas.conf"])
    }),
    r("ld-preload-write", "injects a library into every program", |s, i| {
        s.writes_containing(i, &["/etc/ld.so.preload", "/etc/ld.so.conf"])
    }),
    r("authorized-keys-write", "adds or changes keys that may log in over ssh", |s, i| {
        s.writes_containing(i, &["/.ssh/authorized_keys", "/.ssh/rc", "~/.ssh/authorized_keys"])
    }),
    r("startup-file-write", "changes a shell or session start-up file (it runs at every login)", |s, i| {
        s.certain_writes(i).iter().any(|t| is_startup_path(t))
    }),
    r("scheduler-write", "installs a program that cron, systemd or init runs on a schedule or at boot", |s, i| {
        s.certain_writes(i).iter().any(|t| is_scheduler_path(t))
    }),
    r("crontab-install", "installs a crontab from text", |s, i| {
        let a = s.args(i);
        s.is(i, &["crontab"]) && !a.flag('l', "list") && !a.flag('e', "edit") && !a.flag('r', "remove")
    }),
    r("library-injection", "runs programs with an injected library (LD_PRELOAD, LD_AUDIT)", |s, i| {
        let p = s.part(i);
        let injects = |n: &str| matches!(n, "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES");
        p.assignments.iter().any(|(n, v)| injects(n) && !v.text.is_empty())
            || s.is(i, &["export", "declare", "typeset", "local", "readonly"])
                && s.arg_texts(i)
                    .any(|t| t.split_once('=').is_some_and(|(n, v)| injects(n.trim_end_matches('+')) && !v.is_empty()))
    }),
    r("credential-write", "overwrites keys or credentials", |s, i| {
        // Permissions and times are not contents: `chmod 600 ~/.ssh/id_rsa`
        // is how keys are fixed.
        !s.is(i, &["chmod", "chown", "chgrp", "setfacl", "chattr", "touch"])
            && s.certain_writes(i).iter().any(|t| is_credential_path(t))
    }),
    r("unixagent-config-write", "changes unixagent's own configuration or policy", |s, i| {
        s.writes_containing(i, &["/.config/unixagent", "~/.config/unixagent", "$XDG_CONFIG_HOME/unixagent"])
            || writes_dir_named(s, i, ".config/unixagent", "")
    }),
    r("unixagent-audit-write", "changes unixagent's audit log", |s, i| {
        s.writes_containing(i, &["/.local/share/unixagent/audit", "$XDG_DATA_HOME/unixagent/audit"])
            || writes_dir_named(s, i, ".local/share/unixagent", "/audit")
    }),
    r("system-log-tamper", "removes or rewrites system logs", |s, i| {
        s.writes_containing(
            i,
            &[
                "/var/log/wtmp",
                "/var/log/btmp",
                "/var/log/lastlog",
                "/var/log/auth.log",
                "/var/log/secure",
                "/var/log/syslog",
                "/var/log/messages",
                "/var/log/audit",
                "/var/log/journal",
            ],
        ) || s.is(i, &["journalctl"]) && s.arg_texts(i).any(|t| t.starts_with("--vacuum") || t == "--rotate")
    }),
    r("firewall-flush", "removes the firewall", |s, i| {
        s.is(i, &["iptables", "ip6tables", "iptables-legacy", "iptables-nft"])
            && (s.args(i).flag('F', "flush") || s.args(i).flag('X', "delete-chain"))
            || s.is(i, &["nft"])
                && s.arg_texts(i).collect::<Vec<_>>().windows(2).any(|w| w[0] == "flush" && w[1] == "ruleset")
            || s.is(i, &["ufw"]) && s.args(i).first_operand().is_some_and(|o| matches!(o, "disable" | "reset"))
            || s.is(i, &["systemctl"])
                && s.args(i).first_operand().is_some_and(|o| matches!(o, "stop" | "disable" | "mask"))
                && s.arg_texts(i).any(|t| {
                    t.starts_with("firewalld")
                        || t.starts_with("ufw")
                        || t.starts_with("nftables")
                        || t.starts_with("apparmor")
                })
    }),
    r("selinux-disable", "turns off mandatory access control", |s, i| {
        s.is(i, &["setenforce"])
            && s.args(i).first_operand().is_some_and(|o| o == "0" || o.eq_ignore_ascii_case("permissive"))
            || s.is(i, &["aa-teardown"])
    }),
    r("password-remove", "removes an account's password", |s, i| {
        s.is(i, &["passwd"]) && s.args(i).flag('d', "delete")
            || s.is(i, &["usermod"]) && s.args(i).value("-p", "--password").is_some_and(str::is_empty)
    }),
    r("crontab-remove-all", "removes every scheduled job", |s, i| s.is(i, &["crontab"]) && s.args(i).flag('r', "")),
];

/// Programs that print a file's bytes (or copy them somewhere readable).
const READERS: &[&str] = &[
    "cat", "tac", "head", "tail", "less", "more", "bat", "batcat", "nl", "od", "xxd", "hexdump", "strings", "base64",
    "base32", "basenc", "grep", "egrep", "fgrep", "rg", "awk", "gawk", "sed", "cut", "tr", "sort", "uniq", "cp", "tar",
    "zip", "gzip", "bzip2", "xz", "7z", "view", "vim", "vi", "nvim", "emacs", "nano", "jq", "yq", "diff", "cmp",
    "paste", "rev", "fold", "column", "dd", "openssl", "gpg", "python", "python3", "perl", "ruby", "node", "php",
    "sqlite3", "tee", "install", "rsync", "ln", "mv",
];

fn rm_recursive(s: &Scope<'_>, i: usize) -> bool {
    s.is(i, &["rm"]) && (s.args(i).flag('r', "recursive") || s.args(i).flag('R', ""))
}

/// The starting points of `find` (the operands before the first expression).
fn find_roots(s: &Scope<'_>, i: usize) -> Vec<String> {
    s.arg_texts(i)
        .skip_while(|t| matches!(*t, "-H" | "-L" | "-P") || t.starts_with("-O") || t.starts_with("-D"))
        .take_while(|t| !t.starts_with('-') && *t != "(" && *t != "!")
        .map(|t| s.resolve(i, t))
        .collect()
}

/// The texts a network program sends: its arguments (minus identity and
/// TLS files it uses to authenticate), files it reads, and stdin redirects.
/// ssh's own arguments are a remote command and are left out.
fn sent_texts(s: &Scope<'_>, i: usize) -> Vec<String> {
    let p = s.part(i);
    let mut out: Vec<String> = s.risks[i].effects.reads.iter().map(|r| s.resolve(i, r)).collect();
    for r in &p.redirects {
        if matches!(r.kind, RedirectKind::Read | RedirectKind::ReadWrite) {
            out.push(s.resolve(i, &r.target.text));
        }
    }
    if s.is(i, &["ssh", "mosh"]) {
        return out;
    }
    let mut skip = false;
    for a in p.args() {
        if skip {
            skip = false;
            continue;
        }
        if matches!(
            a.text.as_str(),
            "-i" | "-F" | "-E" | "--cert" | "--key" | "--cacert" | "-K" | "--config" | "--netrc-file" | "--private-key"
        ) {
            skip = true;
            continue;
        }
        if s.is(i, &["scp", "rsync", "sftp"]) && a.text.starts_with("-e") {
            continue;
        }
        out.push(a.text.clone());
        out.push(s.resolve(i, &a.text));
    }
    out
}

/// What a reading program reads: modelled reads, stdin redirects and, for
/// programs whose reads are not modelled, every argument.
fn read_texts(s: &Scope<'_>, i: usize) -> Vec<String> {
    let p = s.part(i);
    let mut out: Vec<String> = s.risks[i].effects.reads.iter().map(|r| s.resolve(i, r)).collect();
    for r in p.redirects.iter().filter(|r| r.kind == RedirectKind::Read) {
        out.push(s.resolve(i, &r.target.text));
    }
    if !models_writes(s.base(i)) {
        // Every argument may be read, except a file it writes (`-o FILE`).
        let writes = s.certain_writes(i);
        out.extend(p.args().iter().map(|a| s.resolve(i, &a.text)).filter(|a| !writes.contains(a)));
    }
    out
}

fn mentions_credentials(s: &Scope<'_>, i: usize) -> bool {
    if s.is(
        i,
        &[
            "ssh",
            "scp",
            "sftp",
            "ssh-add",
            "ssh-keygen",
            "ssh-copy-id",
            "git",
            "chmod",
            "chown",
            "ls",
            "stat",
            "test",
            "[",
            "file",
        ],
    ) {
        return false;
    }
    let p = s.part(i);
    p.args()
        .iter()
        .chain(p.redirects.iter().filter(|r| r.kind == RedirectKind::Read).map(|r| &r.target))
        .any(|a| is_credential_path(&s.resolve(i, &a.text)))
}

/// Programs whose output is text they compute from text they are given:
/// what they print is not in the command line as written, so as shell
/// code it cannot be read (`tr a-z n-za-m <<< '…' | sh`).
const TRANSFORMERS: &[&str] = &[
    "tr", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "rev", "tac", "cut", "paste", "fold", "jq", "yq", "envsubst",
    "m4", "iconv", "sort", "shuf",
];

/// True when part `i` computes text: a transformer, or an interpreter
/// running inline code (`python3 -c 'print(…)'`).
fn generates_code(s: &Scope<'_>, i: usize) -> bool {
    use crate::classify::code::{Lang, inline};
    let base = s.base(i);
    s.is(i, TRANSFORMERS)
        || crate::deny::is_interpreter(base)
            && Lang::of(base).is_some_and(|lang| inline(base, lang, s.part(i).args()).is_some())
}

fn decodes(s: &Scope<'_>, i: usize) -> bool {
    let a = s.args(i);
    (s.is(i, &["base64", "base32", "basenc", "gbase64"]) && (a.flag('d', "decode") || a.flag('D', "")))
        || s.is(i, &["xxd"]) && a.flag('r', "revert")
        || s.is(i, &["openssl"]) && (a.has("-d") || a.has("-base64") && a.has("-d"))
        || s.is(i, &["uudecode", "rev", "zcat", "gunzip", "bzcat", "xzcat"])
        || s.is(i, &["gzip", "bzip2", "xz", "zstd"]) && a.flag('d', "decompress")
        || s.is(i, &["tr"]) && s.arg_texts(i).any(|t| t.contains("A-Za-z") || t.contains("a-zA-Z"))
        || s.is(i, &["printf", "echo"]) && s.arg_texts(i).any(|t| t.contains("\\x") || t.matches('\\').count() > 3)
}

/// chmod's file operands (the first operand is the mode unless --reference).
fn chmod_targets(s: &Scope<'_>, i: usize) -> Vec<String> {
    let ops = s.operands(i);
    let skip = usize::from(
        !s.args(i).has_prefix("--reference") && s.is(i, &["chmod", "chown", "chgrp"])
            || s.is(i, &["setfacl"]) && s.args(i).flag('m', "modify"),
    );
    ops.into_iter().skip(skip).collect()
}

fn chmod_mode(s: &Scope<'_>, i: usize) -> Option<String> {
    s.part(i)
        .args()
        .iter()
        .map(|a| a.text.as_str())
        .find(|t| !t.starts_with('-') || t[1..].chars().all(|c| "rwxXst".contains(c)) && t.len() > 1)
        .map(str::to_string)
}

fn mode_world_writable(s: &Scope<'_>, i: usize) -> bool {
    let Some(m) = chmod_mode(s, i) else { return false };
    if m.chars().all(|c| c.is_ascii_digit()) {
        return m.chars().last().and_then(|c| c.to_digit(8)).is_some_and(|d| d & 2 != 0);
    }
    m.split(',').any(|clause| {
        let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
        let rest = &clause[who.len()..];
        (who.contains('o') || who.contains('a'))
            && (rest.starts_with('+') || rest.starts_with('='))
            && rest.contains('w')
    })
}

fn mode_setuid(s: &Scope<'_>, i: usize) -> bool {
    let Some(m) = chmod_mode(s, i) else { return false };
    if m.chars().all(|c| c.is_ascii_digit()) {
        return m.len() == 4 && m.chars().next().and_then(|c| c.to_digit(8)).is_some_and(|d| d & 6 != 0);
    }
    m.split(',').any(|clause| {
        let rest = clause.trim_start_matches(|c| "ugoa".contains(c));
        (rest.starts_with('+') || rest.starts_with('=')) && rest.contains('s')
    })
}

/// Paths anywhere under the system's directories (except scratch space).
fn under_system(p: &str) -> bool {
    let scratch = ["/tmp", "/var/tmp", "/dev/shm", "/dev/", "/run/user/", "/home/", "/mnt/", "/media/"];
    p.starts_with('/')
        && !scratch.iter().any(|x| p.starts_with(x))
        && p[1..].split('/').next().is_some_and(|top| {
            ["bin", "boot", "etc", "lib", "lib32", "lib64", "opt", "root", "sbin", "srv", "usr", "var"].contains(&top)
        })
}

/// `cd ~/.config && rm -rf unixagent`: a write whose resolved path is
/// `dir` itself or lies under `dir` + `inside`.
fn writes_dir_named(s: &Scope<'_>, i: usize, dir: &str, inside: &str) -> bool {
    let under = format!("{dir}{inside}");
    s.write_targets(i).iter().any(|t| t.ends_with(dir) || t.contains(&under))
}

/// True when `find` part `i` searches credential stores or the whole home
/// or root (which hold them), or matches credential file names (`-name
/// '*.pem'`).
fn find_reaches_credentials(s: &Scope<'_>, i: usize) -> bool {
    let texts: Vec<&str> = s.arg_texts(i).collect();
    let patterns: Vec<&str> = texts
        .windows(2)
        .filter(|w| {
            matches!(
                w[0],
                "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" | "-regex" | "-iregex"
            )
        })
        .map(|w| w[1])
        .collect();
    // A credential name anywhere, or every file under a tree that holds
    // credentials.
    patterns.iter().any(|p| is_credential_pattern(p))
        || patterns.is_empty()
            && find_roots(s, i)
                .iter()
                .any(|r| is_credential_path(r) || matches!(broad(r), Some(Broad::Home | Broad::Root)))
}

/// True when a host name, alone or as the authority of a URL, is built
/// around a command substitution: `$(whoami).evil.example`,
/// `https://x.$(id -u).evil.example/`. A name that is only a substitution
/// (`ping $(hostname)`) is an ordinary lookup and does not count.
fn host_has_substitution(t: &str) -> bool {
    let rest = t.split_once("://").map_or(t, |(_, r)| r);
    // Blank out substitutions, then cut the authority at `/`, `?` or `#`.
    let mut literal = String::new();
    let mut depth = 0usize;
    let mut in_backquote = false;
    let mut found = false;
    let b = rest.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if c == b'$' && b.get(k + 1) == Some(&b'(') && !in_backquote {
            depth += 1;
            found = true;
            k += 2;
            continue;
        }
        match c {
            b'(' if depth > 0 => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b'`' if depth == 0 => {
                in_backquote = !in_backquote;
                found = true;
            }
            _ if depth > 0 || in_backquote => {}
            b'/' | b'?' | b'#' => break,
            _ => literal.push(char::from(c)),
        }
        k += 1;
    }
    let hostlike = literal.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | ':'));
    let domain = literal.split('.').skip(1).any(|label| label.starts_with(|c: char| c.is_ascii_alphabetic()));
    found && hostlike && domain
}

/// ssh options that make the remote side reach back into this machine
/// (`-R`) or proxy through it (`-D`), to a host other than this one.
fn ssh_tunnels_out(args: &[crate::parse::Arg], autossh: bool) -> bool {
    // autossh's own `-M PORT` takes a value; ssh's `-M` does not.
    let valued = if autossh { "BbcDEeFIiJLlMmOopQRSWw" } else { "BbcDEeFIiJLlmOopQRSWw" };
    let mut tunnels = false;
    let mut host = None;
    let mut it = args.iter().map(|a| a.text.as_str());
    while let Some(t) = it.next() {
        if let Some(opts) = t.strip_prefix('-').filter(|o| !o.is_empty() && !o.starts_with('-')) {
            for (k, c) in opts.char_indices() {
                if matches!(c, 'R' | 'D') {
                    tunnels = true;
                }
                if valued.contains(c) {
                    let value = if k + 1 < opts.len() { Some(&opts[k + 1..]) } else { it.next() };
                    if c == 'o'
                        && let Some(v) = value
                    {
                        let key = v.split(['=', ' ']).next().unwrap_or("").to_ascii_lowercase();
                        tunnels |= key == "remoteforward" || key == "dynamicforward";
                    }
                    break;
                }
            }
            continue;
        }
        host = Some(t);
        break;
    }
    let local = |h: &str| {
        let h = h.rsplit('@').next().unwrap_or(h).trim_start_matches("ssh://");
        let h = h.split(':').next().unwrap_or(h).trim_matches(['[', ']']);
        h == "localhost" || h.starts_with("127.") || h == "::1" || h.is_empty()
    };
    tunnels && host.is_some_and(|h| !local(h))
}
