//! Floors that depend on more than one part, or on where a part runs:
//! a command that truncates a file it reads, and writes to files that
//! belong to root.

use super::PartRisk;
use crate::deny::Scope;
use crate::parse::{Parsed, RedirectKind};
use crate::paths::system_program;
use crate::risk::Risk;

/// Raises the parts of `parsed` that these floors apply to.
pub(crate) fn raise(parsed: &Parsed, parts: &mut [PartRisk]) {
    let mut raises: Vec<(usize, Risk, String)> = Vec::new();
    {
        let s = Scope::new(parsed, parts);
        for i in s.parts() {
            if let Some(file) = truncates_input(&s, i) {
                raises.push((
                    i,
                    Risk::Destructive,
                    format!("empties {file} before it is read: the shell truncates it first"),
                ));
            }
            if let Some(file) = s.certain_writes(i).iter().find(|t| root_owned(t)) {
                raises.push((i, Risk::Privileged, format!("writes {file}, which only root may change")));
            }
        }
    }
    for (i, risk, reason) in raises {
        if let Some(p) = parts.get_mut(i)
            && risk > p.risk
        {
            p.risk = risk;
            p.reason = reason;
        }
    }
}

/// The file part `i` truncates with `>` that it, or a stage of its own
/// pipeline, reads: `sort f > f`, `jq . f > f`, `cat f | sort > f`. The
/// shell opens (and empties) the target before any program reads it.
fn truncates_input(s: &Scope<'_>, i: usize) -> Option<String> {
    let p = s.part(i);
    let targets: Vec<String> = p
        .redirects
        .iter()
        .filter(|r| r.kind == RedirectKind::Write && !r.target.dynamic && !super::effects::is_sink(&r.target.text))
        .map(|r| s.resolve(i, &r.target.text))
        .collect();
    if targets.is_empty() {
        return None;
    }
    let reads = |j: usize| -> Vec<String> {
        let q = s.part(j);
        // The part's reads as if it wrote nowhere: effects drop a path it
        // both reads and writes from its reads, which is the case here.
        let mut bare = q.clone();
        bare.redirects.retain(|r| !r.kind.writes());
        let fx = super::effects::effects(&bare);
        let mut out: Vec<String> = fx.reads.iter().map(|r| s.resolve(j, r)).collect();
        out.extend(q.redirects.iter().filter(|r| r.kind == RedirectKind::Read).map(|r| s.resolve(j, &r.target.text)));
        // A program whose reads are not modelled may read any operand it
        // names (`python3 fmt.py f > f`).
        let modelled = system_program(q.program()).is_some_and(super::effects::models_writes) || !fx.reads.is_empty();
        if !modelled {
            out.extend(q.args().iter().filter(|a| !a.text.starts_with('-')).map(|a| s.resolve(j, &a.text)));
        }
        out
    };
    let mine = reads(i);
    if let Some(t) = targets.iter().find(|t| mine.contains(t)) {
        return Some(t.clone());
    }
    s.parts().filter(|&j| s.pipes_into(j, i)).flat_map(reads).find(|r| targets.contains(r))
}

/// Paths under the trees that root owns on every Unix system: changing
/// them takes root's privileges (`sed -i … /etc/hosts`, `tee /etc/…`).
fn root_owned(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else { return false };
    let top = rest.split('/').next().unwrap_or("");
    let scratch = ["var/tmp", "var/folders"].iter().any(|x| rest == *x || rest.starts_with(&format!("{x}/")));
    !scratch
        && (matches!(
            top,
            "etc"
                | "usr"
                | "bin"
                | "sbin"
                | "lib"
                | "lib32"
                | "lib64"
                | "libx32"
                | "boot"
                | "opt"
                | "srv"
                | "var"
                | "root"
                | "sys"
                | "snap"
        ) || rest.starts_with("proc/sys/"))
}

#[cfg(test)]
mod tests {
    use crate::classify::analyze;
    use crate::risk::Risk;

    #[test]
    fn a_command_that_truncates_its_own_input_is_destructive() {
        for c in [
            "jq . f > f",
            "sort f > f",
            "cat f > ./f",
            "grep -v x f > f",
            "sed 's/a/b/' f > f",
            "sort < f > f",
            "cat f | sort > f",
            "cd /tmp/d && awk '{print}' f > /tmp/d/f",
            "python3 fmt.py data.json > data.json",
        ] {
            assert!(analyze(c).risk >= Risk::Destructive, "{c}: {:?}", analyze(c).risk);
        }
        for c in ["sort -o f f", "jq . f > g", "cat f >> f", "sort f > /dev/null", "sed -i s/a/b/ f"] {
            assert!(analyze(c).risk < Risk::Destructive, "{c}: {:?}", analyze(c).risk);
        }
    }

    #[test]
    fn writes_to_files_root_owns_are_privileged() {
        for c in [
            "sed -i 's/a/b/' /etc/hosts",
            "echo x | tee -a /etc/resolv.conf",
            "tee /etc/apt/sources.list < f",
            "echo x > /etc/hosts",
            "cd /etc && sed -i s/a/b/ hosts",
            "cp f /usr/local/bin/f",
            "echo 1 > /proc/sys/net/ipv4/ip_forward",
        ] {
            assert_eq!(analyze(c).risk, Risk::Privileged, "{c}");
        }
        for c in ["sed -i s/a/b/ etc/hosts", "echo x > /var/tmp/x", "echo x | tee /tmp/x", "cat /etc/hosts"] {
            assert!(analyze(c).risk < Risk::Privileged, "{c}: {:?}", analyze(c).risk);
        }
    }
}
