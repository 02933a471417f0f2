//! Differential test of the command walker against real bash, dash and zsh.
//!
//! The deny list and the risk rules only see the parts the walker reports,
//! so a program the shell would run that the walker does not report is a
//! hole. For every command of a reviewed corpus this test runs the command
//! in each real shell with every external program replaced by a logging
//! shim, and checks that every program the shell executed (name and argv)
//! appears among the walker's parts. The check is one-way: the walker may
//! report more than runs (both readings of `((…))`, function bodies, code in
//! variables), never less.
//!
//! Safety: the corpus holds things like `rm -rf /`. Every external program
//! is a shim that only appends a record to a log (shells excepted: their
//! shims log and then run the real shell, so `sh -c '…'` nests for real),
//! PATH holds nothing but the shim directory, the corpus is checked against
//! a list of ways to reach a real program before anything runs, and under
//! root the shells run as `nobody` (setpriv) in a scratch directory.
//!
//! `KNOWN_GAPS` lists commands where the walker still misses what a shell
//! runs. They are checked in reverse: when one is fixed, the test fails
//! until the entry moves to `CORPUS`.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ua_policy::classify::analyze;
use ua_policy::parse::{Arg, Part, PartKind};

#[path = "differential_corpus.rs"]
mod corpus;
use corpus::{CORPUS, KNOWN_GAPS};

/// How long one command may run in one shell before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The unprivileged user the shells run as when the test runs as root.
const NOBODY: u32 = 65534;

/// Record and field separators in the shim log (ASCII RS and US), which no
/// corpus argument contains.
const RS: char = '\u{1e}';
const US: char = '\u{1f}';

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shell {
    Bash,
    Dash,
    Zsh,
}

const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Dash, Shell::Zsh];

impl Shell {
    fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Dash => "dash",
            Shell::Zsh => "zsh",
        }
    }

    /// Flags that keep startup files out of the way.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Shell::Bash => &["--norc", "--noprofile"],
            Shell::Dash => &[],
            Shell::Zsh => &["-f"],
        }
    }

    fn parse(name: &str) -> Shell {
        match name {
            "bash" => Shell::Bash,
            "dash" => Shell::Dash,
            "zsh" => Shell::Zsh,
            other => panic!("unknown shell {other:?} in KNOWN_GAPS"),
        }
    }
}

/// Shells whose shims run the real shell after logging.
const NESTED_SHELLS: [&str; 4] = ["sh", "bash", "dash", "zsh"];

/// Programs the shims always cover, beyond the words of the corpus.
const ALWAYS_SHIMMED: &[&str] = &[
    "rm", "touch", "curl", "cat", "ls", "mv", "cp", "git", "sudo", "env", "xargs", "find", "timeout", "nice", "nohup",
    "time", "grep", "sort", "head", "tail", "wc", "mkdir", "ln", "tee", "diff", "make", "python3", "wget",
];

/// Reserved words of one of the shells. They get no shim, so a shell that
/// does not know the word reports "not found", as it would on a machine
/// without such a program, instead of running a program of that name.
const RESERVED: &[&str] = &[
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "case",
    "esac",
    "while",
    "until",
    "for",
    "in",
    "function",
    "select",
    "coproc",
    "repeat",
    "foreach",
    "end",
    "nocorrect",
    "noglob",
];

/// Text no corpus entry may contain: each is a way to reach a real program
/// past the shim-only PATH, or to leave the scratch directory.
const FORBIDDEN: &[&str] = &[
    "command -p",
    "PATH",
    "exec /",
    "/bin/",
    "/usr/",
    "/sbin/",
    "hash -p",
    "enable",
    "cd /",
    "cd ..",
    "--login",
    "-lc",
    "-ic",
    "--rcfile",
    "--init-file",
    "source /",
    ". /",
    "ENV=",
    "BASH_ENV",
    "ZDOTDIR",
];

/// Panics when a corpus entry could reach a real program or write outside
/// the scratch directory.
fn check_corpus_safety(commands: &[&str]) {
    let mut bad = Vec::new();
    for cmd in commands {
        for f in FORBIDDEN {
            if cmd.contains(f) {
                bad.push(format!("{cmd:?} contains {f:?}"));
            }
        }
        let words: Vec<&str> = cmd.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] == "builtin" && pair[1].contains('/') {
                bad.push(format!("{cmd:?} runs a path through builtin"));
            }
        }
        // Output redirections go to relative paths or /dev/null only.
        for (i, _) in cmd.match_indices('>') {
            let target = cmd[i + 1..].trim_start_matches(['>', '|', '&', ' ', '\t']);
            if target.starts_with('/') && !target.starts_with("/dev/null") {
                bad.push(format!("{cmd:?} redirects to an absolute path"));
            }
        }
        if cmd.contains(['\u{1e}', '\u{1f}']) {
            bad.push(format!("{cmd:?} contains the shim log's separators"));
        }
    }
    assert!(bad.is_empty(), "unsafe corpus entries:\n{}", bad.join("\n"));
}

/// Absolute path of a program from the test's own PATH.
fn which(name: &str) -> PathBuf {
    which_opt(name)
        .unwrap_or_else(|| panic!("{name} is not installed; install it (scripts/test-deps.sh does) and run again"))
}

/// Words of the corpus that could name a program, so that every program a
/// shell could look up has a shim and "not found" cannot hide a run.
fn shim_names(commands: &[&str]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> =
        ALWAYS_SHIMMED.iter().chain(NESTED_SHELLS.iter()).map(|s| s.to_string()).collect();
    for cmd in commands {
        for tok in cmd.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
            if tok.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                names.insert(tok.to_string());
            }
        }
    }
    names.retain(|n| !RESERVED.contains(&n.as_str()));
    names
}

/// One program a shell executed, as the shim logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    program: String,
    args: Vec<String>,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.program)?;
        for a in &self.args {
            write!(f, " {a:?}")?;
        }
        Ok(())
    }
}

/// What one command did in one shell.
#[derive(Debug)]
struct Outcome {
    runs: Vec<Run>,
    status: Option<ExitStatus>,
    stderr: String,
    /// The directory the command ran in.
    work: PathBuf,
}

impl Outcome {
    fn rejected_syntax(&self) -> bool {
        let e = self.stderr.to_ascii_lowercase();
        e.contains("syntax error") || e.contains("parse error")
    }

    /// Program names the shell reported as not found.
    fn not_found(&self) -> Vec<String> {
        let mut out = Vec::new();
        for line in self.stderr.lines() {
            if let Some(name) = line.split("command not found: ").nth(1) {
                out.push(name.trim().to_string()); // zsh
            } else if let Some(head) =
                line.strip_suffix(": command not found").or_else(|| line.strip_suffix(": not found"))
            {
                out.push(head.rsplit(": ").next().unwrap_or(head).to_string()); // bash, dash
            }
        }
        out
    }
}

/// A scratch directory with the shims, the log, and the shells to run.
struct Sandbox {
    root: tempfile::TempDir,
    bin: PathBuf,
    log: PathBuf,
    shells: Vec<(Shell, PathBuf)>,
    setpriv: Option<PathBuf>,
    shimmed: BTreeSet<String>,
    cases: usize,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn chown_nobody(p: &Path) {
    std::os::unix::fs::chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
}

impl Sandbox {
    fn new(commands: &[&str]) -> Sandbox {
        check_corpus_safety(commands);
        let setpriv = is_root().then(|| {
            let p = which_opt("setpriv");
            p.unwrap_or_else(|| {
                panic!("setpriv (util-linux) is needed to run the shells unprivileged; install util-linux")
            })
        });
        let shells: Vec<(Shell, PathBuf)> = SHELLS.iter().map(|s| (*s, which(s.name()))).collect();
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let log = root.path().join("log");
        std::fs::write(&log, "").unwrap();
        if setpriv.is_some() {
            // The log is the only file outside a case's own directory that
            // the shells may write; the shims stay root's.
            chown_nobody(&log);
        }
        let shimmed = shim_names(commands);
        for name in &shimmed {
            let mut body = format!(
                "#!/bin/sh\nr=\"${{0##*/}}\"\nfor a in \"$@\"; do r=\"$r{US}$a\"; done\nprintf '%s{RS}' \"$r\" >> '{}'\n",
                log.display()
            );
            if NESTED_SHELLS.contains(&name.as_str()) {
                body.push_str(&format!("exec '{}' \"$@\"\n", which(name).display()));
            }
            let p = bin.join(name);
            std::fs::write(&p, body).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Sandbox { root, bin, log, shells, setpriv, shimmed, cases: 0 }
    }

    /// Runs `command` in `shell` in a fresh directory and returns what ran.
    fn run(&mut self, shell: Shell, command: &str) -> Outcome {
        self.cases += 1;
        let case = self.root.path().join(format!("case-{}", self.cases));
        let (work, home) = (case.join("work"), case.join("home"));
        for d in [&case, &work, &home] {
            std::fs::create_dir(d).unwrap();
            if self.setpriv.is_some() {
                chown_nobody(d);
            }
        }
        std::fs::write(&self.log, "").unwrap();
        let shell_path = &self.shells.iter().find(|(s, _)| *s == shell).unwrap().1;
        let mut cmd = match &self.setpriv {
            Some(sp) => {
                let mut c = Command::new(sp);
                c.args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}"), "--clear-groups".into()]);
                c.arg("--").arg(shell_path);
                c
            }
            None => Command::new(shell_path),
        };
        cmd.args(shell.flags())
            .arg("-c")
            .arg(command)
            .env_clear()
            .env("PATH", &self.bin)
            .env("HOME", &home)
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().unwrap();
        let pgid = i32::try_from(child.id()).unwrap();
        let (tx, rx) = mpsc::channel::<(u8, Vec<u8>)>();
        let mut streams: Vec<Box<dyn Read + Send>> = vec![Box::new(child.stdout.take().unwrap())];
        streams.push(Box::new(child.stderr.take().unwrap()));
        for (i, mut s) in streams.into_iter().enumerate() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = s.read_to_end(&mut buf);
                let _ = tx.send((u8::try_from(i).unwrap(), buf));
            });
        }
        let (wtx, wrx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = wtx.send(child.wait());
        });
        let deadline = Instant::now() + TIMEOUT;
        let status = wrx.recv_timeout(TIMEOUT).ok().and_then(Result::ok);
        // The pipes close when every process holding them has exited, which
        // includes programs the command put in the background.
        let mut stderr = Vec::new();
        let mut closed = 0;
        while closed < 2 {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((i, buf)) => {
                    if i == 1 {
                        stderr = buf;
                    }
                    closed += 1;
                }
                Err(_) => break,
            }
        }
        // A background program whose output was redirected (`cmd >log &`)
        // may outlive both; its record must land in this case's log.
        let settled = group_gone(pgid, deadline);
        // SAFETY: kill has no memory preconditions; the group is the one the
        // shell was started in, so only its processes are signalled.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        assert!(
            status.is_some() && closed == 2 && settled,
            "{} did not finish {command:?} within {TIMEOUT:?}; stderr: {stderr}",
            shell.name()
        );
        Outcome { runs: self.read_log(&home), status, stderr, work }
    }

    fn read_log(&self, home: &Path) -> Vec<Run> {
        let text = String::from_utf8_lossy(&std::fs::read(&self.log).unwrap()).into_owned();
        let home = home.to_string_lossy().into_owned();
        text.split(RS)
            .filter(|r| !r.is_empty())
            .map(|r| {
                let mut fields = r.split(US).map(|f| tilde(f, &home));
                let program = fields.next().unwrap_or_default();
                Run { program, args: fields.collect() }
            })
            .collect()
    }
}

/// The running processes of group `pgid` (zombies excluded: whether they
/// are reaped promptly depends on the machine's init).
fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(Result::ok)
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // Fields after the parenthesised command name: state ppid pgrp …
            let (_, rest) = stat.rsplit_once(')')?;
            let mut f = rest.split_whitespace();
            let state = f.next();
            let pgrp = f.nth(1).and_then(|g| g.parse::<i32>().ok());
            (pgrp == Some(pgid) && state != Some("Z")).then_some(pid)
        })
        .collect()
}

/// Waits until no process of group `pgid` runs, or the deadline passes;
/// true when the group is gone. Each member's pidfd becomes readable when
/// it exits, so this sleeps in poll(2) until something changes.
fn group_gone(pgid: i32, deadline: Instant) -> bool {
    loop {
        let members = group_members(pgid);
        if members.is_empty() {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut fds: Vec<libc::pollfd> = members
            .iter()
            .filter_map(|pid| {
                // SAFETY: pidfd_open takes a pid and flags and returns a new
                // descriptor or -1; no memory is passed.
                let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, *pid, 0) };
                let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
                Some(libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
            })
            .collect();
        if !fds.is_empty() {
            let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
            // SAFETY: fds points at fds.len() initialised pollfd structs.
            unsafe {
                libc::poll(fds.as_mut_ptr(), libc::nfds_t::try_from(fds.len()).unwrap_or(0), ms);
            }
            for f in &fds {
                // SAFETY: each fd was opened above and is closed once.
                unsafe {
                    libc::close(f.fd);
                }
            }
        }
    }
}

fn which_opt(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The walker writes `~` for both `~` and `$HOME`; the shell expands them to
/// the scratch home, which is mapped back here.
fn tilde(arg: &str, home: &str) -> String {
    match arg.strip_prefix(home) {
        Some("") => "~".to_string(),
        Some(rest) if rest.starts_with('/') => format!("~{rest}"),
        _ => arg.to_string(),
    }
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// True when `pattern` (walker argv) matches `words` (what ran) exactly.
///
/// A dynamic argument (`$x`, `$(…)`, `"$@"`) and an unquoted glob stand for
/// any number of words, since expansion may drop, keep or split them. All
/// other arguments must be equal after the `~` mapping above. `program`
/// compares basenames for the first pattern element (`./x` is kept by the
/// walker, the shim logs its basename).
fn argv_matches(pattern: &[Arg], words: &[String], program: bool) -> bool {
    let Some((p, rest)) = pattern.split_first() else { return words.is_empty() };
    if p.dynamic || p.glob && !program {
        return (0..=words.len()).any(|k| argv_matches(rest, &words[k..], false));
    }
    let Some((w, wrest)) = words.split_first() else { return false };
    let equal = if program { basename(&p.text) == w } else { p.text == *w };
    equal && argv_matches(rest, wrest, false)
}

/// True when some part of the walk accounts for `run`.
///
/// - A part with the same program (basename) and argv.
/// - A part of unknown code (`eval "$x"`, `$cmd`): its program is dynamic.
/// - A wrapper the walker peels (`sudo`, `env`, `timeout`, `xargs`, …): the
///   shim cannot run the inner command, so the log holds the wrapper's argv;
///   it matches a part wrapped by that program whose argv appears in a row
///   inside the wrapper's arguments (or inside them split at blanks, for
///   `env -S 'cmd args'`).
/// - A shell: its shim runs the real shell, whose own runs are checked on
///   their own; it matches a part that the walker found inside that shell
///   (`sh -c`, `sh stdin`).
fn accounted(run: &Run, parts: &[Part]) -> bool {
    parts.iter().any(|p| {
        if p.argv.first().is_some_and(|a| a.dynamic) {
            // The program itself is only known at run time and may expand
            // to several words (`$cmd` holding `touch a`).
            let words: Vec<String> = std::iter::once(run.program.clone()).chain(run.args.iter().cloned()).collect();
            return argv_matches(&p.argv, &words, false);
        }
        if p.kind == PartKind::Exec && basename(p.program()) == run.program && argv_matches(p.args(), &run.args, false)
        {
            return true;
        }
        let wrapped_by_run = p.wrappers.iter().any(|w| w.split(' ').next() == Some(run.program.as_str()));
        if !wrapped_by_run {
            return false;
        }
        if NESTED_SHELLS.contains(&run.program.as_str()) {
            return true;
        }
        // `env -S 'cmd args'` hands its command over as one string to split.
        let split: Vec<String> = run.args.iter().flat_map(|a| a.split_whitespace()).map(str::to_string).collect();
        [&run.args, &split].iter().any(|args| (0..args.len()).any(|i| argv_matches_prefix(&p.argv, &args[i..])))
    })
}

/// True when `pattern` matches a leading run of `words`.
fn argv_matches_prefix(pattern: &[Arg], words: &[String]) -> bool {
    (0..=words.len()).any(|k| argv_matches(pattern, &words[..k], true))
}

fn describe(p: &Part) -> String {
    let mut s = match &p.kind {
        PartKind::Exec => p.argv.iter().map(|a| format!("{:?}", a.text)).collect::<Vec<_>>().join(" "),
        PartKind::Dynamic => format!("dynamic {}", p.line()),
        PartKind::Unparseable(why) => format!("unparseable ({why})"),
        PartKind::FunctionDef(n) => format!("function {n}"),
        PartKind::Assignment => "assignment".into(),
        PartKind::Redirection => "redirection".into(),
    };
    if !p.wrappers.is_empty() {
        s.push_str(&format!(" [in {}]", p.wrappers.join(", ")));
    }
    s
}

/// One run the walker did not account for.
struct Miss {
    shell: Shell,
    run: Run,
}

/// What checking one command in every shell found.
struct Checked {
    misses: Vec<Miss>,
    rejected_by: Vec<Shell>,
    /// Names a shell could not find although they have a shim (a broken
    /// sandbox), with the shell.
    lost_shims: Vec<String>,
    parts: Vec<String>,
    /// How many programs ran, over all shells.
    ran: usize,
}

fn check(sandbox: &mut Sandbox, command: &str) -> Checked {
    let parts = analyze(command).parsed.parts;
    let mut out = Checked {
        misses: Vec::new(),
        rejected_by: Vec::new(),
        lost_shims: Vec::new(),
        parts: parts.iter().map(describe).collect(),
        ran: 0,
    };
    for shell in SHELLS {
        let o = sandbox.run(shell, command);
        // A shell that rejects the syntax may still have run what came
        // before the error; whatever ran is checked either way.
        if o.rejected_syntax() {
            out.rejected_by.push(shell);
        }
        for name in o.not_found() {
            if sandbox.shimmed.contains(&name) {
                out.lost_shims.push(format!("{}: {name} ({:?})", shell.name(), o.status));
            }
        }
        out.ran += o.runs.len();
        for run in o.runs {
            if !accounted(&run, &parts) {
                out.misses.push(Miss { shell, run });
            }
        }
    }
    out
}

fn report(command: &str, c: &Checked) -> String {
    let mut s = format!("command: {command:?}\n");
    for m in &c.misses {
        s.push_str(&format!("  {:<5} ran:    {}\n", m.shell.name(), m.run));
    }
    s.push_str(&format!("  walker: {}\n", if c.parts.is_empty() { "(nothing)".into() } else { c.parts.join(" | ") }));
    s
}

#[test]
fn differential_corpus_is_safe_to_run() {
    let all: Vec<&str> = CORPUS.iter().copied().chain(KNOWN_GAPS.iter().map(|g| g.1)).collect();
    check_corpus_safety(&all);
    let names = shim_names(&all);
    assert!(names.contains("rm") && names.contains("sh") && !names.contains("if"));
}

#[test]
fn differential_sandbox_logs_what_each_shell_runs() {
    // The last program runs in the background with its output elsewhere,
    // so only waiting for the process group catches its record.
    let cmd = "touch a 'b c' ~/h; sh -c 'rm \"x y\"'; echo > made; touch bg >o 2>&1 &";
    let mut sandbox = Sandbox::new(&[cmd]);
    for shell in SHELLS {
        let o = sandbox.run(shell, cmd);
        let got: Vec<String> = o.runs.iter().map(ToString::to_string).collect();
        let want = [r#"touch "a" "b c" "~/h""#, r#"sh "-c" "rm \"x y\"""#, r#"rm "x y""#, r#"touch "bg""#];
        assert_eq!(got, want, "{}: {}", shell.name(), o.stderr);
        let made = std::fs::metadata(o.work.join("made")).unwrap();
        if is_root() {
            assert_eq!(std::os::unix::fs::MetadataExt::uid(&made), NOBODY, "{} ran as root", shell.name());
        }
    }
    let parts = analyze("touch a; sudo -u bob rm x").parsed.parts;
    let run = |p: &str, args: &[&str]| Run { program: p.into(), args: args.iter().map(|a| a.to_string()).collect() };
    assert!(accounted(&run("touch", &["a"]), &parts));
    assert!(accounted(&run("sudo", &["-u", "bob", "rm", "x"]), &parts));
    assert!(!accounted(&run("touch", &["b"]), &parts));
    assert!(!accounted(&run("rm", &["a"]), &parts));
    assert!(!accounted(&run("sudo", &["-u", "bob", "rm", "y"]), &parts));
}

#[test]
fn differential_every_program_a_shell_runs_is_a_part() {
    let mut sandbox = Sandbox::new(CORPUS);
    let mut failures = Vec::new();
    let mut rejected = Vec::new();
    let mut lost = Vec::new();
    let mut idle = Vec::new();
    for command in CORPUS {
        let c = check(&mut sandbox, command);
        if !c.misses.is_empty() {
            failures.push(report(command, &c));
        }
        if !c.rejected_by.is_empty() {
            let names: Vec<&str> = c.rejected_by.iter().map(|s| s.name()).collect();
            rejected.push(format!("  {command:?}: {}", names.join(" ")));
        }
        if c.ran == 0 {
            idle.push(format!("  {command:?}"));
        }
        lost.extend(c.lost_shims.iter().map(|l| format!("  {command:?}: {l}")));
    }
    eprintln!("syntax rejected (ran nothing past the error):\n{}", rejected.join("\n"));
    eprintln!("ran no external program in any shell:\n{}", idle.join("\n"));
    assert!(lost.is_empty(), "shims went missing, so the runs below prove nothing:\n{}", lost.join("\n"));
    assert!(
        failures.is_empty(),
        "{} of {} commands ran programs the walker did not report:\n{}",
        failures.len(),
        CORPUS.len(),
        failures.join("\n")
    );
}

#[test]
fn differential_known_gaps_still_differ() {
    let commands: Vec<&str> = KNOWN_GAPS.iter().map(|g| g.1).collect();
    let mut sandbox = Sandbox::new(&commands);
    let mut changed = Vec::new();
    for (shells, command) in KNOWN_GAPS {
        let want: BTreeSet<Shell> = shells.split_whitespace().map(Shell::parse).collect();
        let c = check(&mut sandbox, command);
        let got: BTreeSet<Shell> = c.misses.iter().map(|m| m.shell).collect();
        if got != want {
            let names: Vec<&str> = got.iter().map(|s| s.name()).collect();
            changed.push(format!("{}  now differs in: [{}], listed: {shells:?}", report(command, &c), names.join(" ")));
        }
    }
    assert!(
        changed.is_empty(),
        "known gaps changed (move fixed ones to CORPUS, update the shells of the rest):\n{}",
        changed.join("\n")
    );
}
