//! `unixagent doctor` on a healthy home and on broken ones: a ~/.bashrc
//! that keeps the markers from arriving, no key, a kernel without Landlock
//! (the seccomp stand-in), an unwritable data directory. Each run is the
//! real binary over the real shells, kernel and files.

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::*;

/// The key the healthy home's backend uses; it must never be printed.
const KEY: &str = "sk-doctor-secret-0451";

/// `unixagent doctor ARGS…` in `home` with bash as the user's shell and the
/// home's fake model as the backend.
fn doctor(home: &Home) -> Command {
    let mut c = Command::new(unixagent());
    c.arg("doctor")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .env("SHELL", which("bash"))
        .env("ANTHROPIC_BASE_URL", home.model.base_url())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("OPENAI_API_KEY", "")
        .env_remove("UNIXAGENT_CONFIG")
        .env_remove("UNIXAGENT_BACKEND")
        .env_remove("UNIXAGENT_SESSION")
        .env_remove("NO_COLOR")
        .env_remove("XDG_RUNTIME_DIR")
        .current_dir(home.path());
    c
}

struct Report {
    code: Option<i32>,
    text: String,
    stderr: String,
}

impl Report {
    fn of(out: Output) -> Self {
        Self {
            code: out.status.code(),
            text: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The one line for the check `name`, without its status word.
    #[track_caller]
    fn line(&self, status: &str, name: &str) -> String {
        let head = format!("{status:<7}  {name}: ");
        let found: Vec<&str> = self.text.lines().map(str::trim_start).filter(|l| l.starts_with(&head)).collect();
        assert_eq!(found.len(), 1, "one `{head}` line expected in:\n{}\nstderr: {}", self.text, self.stderr);
        found[0][head.len()..].to_string()
    }

    #[track_caller]
    fn no_problems(&self) {
        let problems: Vec<&str> = self.text.lines().filter(|l| l.trim_start().starts_with("problem")).collect();
        assert!(problems.is_empty(), "problems:\n{}\n\nall:\n{}", problems.join("\n"), self.text);
    }
}

fn run(c: &mut Command) -> Report {
    Report::of(c.output().expect("run unixagent doctor"))
}

fn short_timeout(home: &Home) {
    home.write(".config/unixagent/config.toml", "[shell]\nintegration_timeout_ms = 1500\n");
}

#[test]
fn a_healthy_home_has_no_problem_and_the_key_is_never_printed() {
    let home = Home::new();
    let r = run(&mut doctor(&home));
    assert_eq!(r.code, Some(0), "{}\n{}", r.text, r.stderr);
    r.no_problems();
    for shell in SHELLS {
        let name = if shell == "bash" { "bash (your shell)".to_string() } else { shell.to_string() };
        let line = r.line("ok", &name);
        assert!(line.contains("markers arrive, first prompt after"), "{line}");
    }
    assert!(r.line("ok", "Landlock").starts_with("ABI "));
    assert!(r.line("ok", "sandbox rules").contains("they build and apply in"));
    assert!(r.line("ok", "sandbox status").starts_with("mode enforce:"));
    assert!(r.line("ok", "backends").starts_with("anthropic ("));
    assert_eq!(r.line("ok", "key anthropic"), "found in the variable ANTHROPIC_API_KEY");
    let endpoint = r.line("ok", "endpoint anthropic");
    assert!(endpoint.contains("/v1/models answers (HTTP 200"), "{endpoint}");
    assert!(r.line("ok", "policy").contains("valid against the schema"));
    r.line("ok", "data directory");
    r.line("ok", "audit log");
    r.line("ok", "login shell");
    assert!(r.text.trim_end().ends_with("0 problems, 0 warnings."), "{}", r.text);
    // One cheap request, with the key in its header and nowhere in print.
    let asked = home.model.requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!((asked[0].method.as_str(), asked[0].path.as_str()), ("GET", "/v1/models"));
    assert_eq!(asked[0].header("x-api-key"), Some(KEY));
    assert!(!r.text.contains(KEY) && !r.stderr.contains(KEY), "the key was printed");

    // --json says the same; --offline asks nothing of the endpoint.
    let out = doctor(&home).args(["--json", "--offline"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["problems"], 0, "{v}");
    let checks = v["checks"].as_array().unwrap();
    let endpoint = checks.iter().find(|c| c["name"] == "endpoint anthropic").unwrap();
    assert_eq!(endpoint["message"], "not contacted (--offline)");
    assert!(checks.iter().all(|c| c["status"] != "problem"));
    assert_eq!(home.model.request_count(), 1, "--offline contacted the endpoint");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
}

#[test]
fn a_bashrc_that_keeps_the_markers_away_is_quoted_with_its_fix() {
    let home = Home::new();
    home.write(".bashrc", ". ~/.config/missing-aliases.sh\nexec bash --norc --noprofile\n");
    short_timeout(&home);
    let r = run(doctor(&home).arg("--offline"));
    assert_eq!(r.code, Some(1), "{}", r.text);
    let line = r.line("problem", "bash (your shell)");
    assert!(line.contains("no prompt marker after 1.5"), "{line}");
    assert!(line.contains("bash printed:") && line.contains("missing-aliases.sh: No such file or directory"), "{line}");
    assert!(line.contains(&format!("`unixagent --shell-debug --shell {}`", which("bash").display())), "{line}");
    // The other shells' start-up files are fine.
    r.line("ok", "zsh");
    r.line("ok", "fish");
    assert!(r.text.trim_end().ends_with("1 problem, 0 warnings."), "{}", r.text);
}

#[test]
fn no_key_anywhere_is_a_problem_that_says_where_to_put_one() {
    let home = Home::new();
    let r = run(doctor(&home).arg("--offline").env_remove("ANTHROPIC_API_KEY").env_remove("OPENAI_API_KEY"));
    assert_eq!(r.code, Some(1), "{}", r.text);
    let line = r.line("problem", "backends");
    assert!(line.starts_with("no LLM backend is configured; set ANTHROPIC_API_KEY or OPENAI_API_KEY"), "{line}");

    // A configured backend whose variable is empty, and one whose key a
    // command prints: the first is the problem, the second says where its
    // key came from and never what it is.
    home.write(
        ".config/unixagent/config.toml",
        "[backend]\ndefault = \"main\"\nfallback = [\"spare\"]\n\
         [backend.main]\nkind = \"anthropic\"\napi_key_env = \"UA_DOCTOR_KEY\"\n\
         [backend.spare]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_cmd = \"echo sk-from-command-77\"\n",
    );
    let r = run(doctor(&home).arg("--offline").env("UA_DOCTOR_KEY", ""));
    assert_eq!(r.code, Some(1), "{}", r.text);
    let line = r.line("problem", "key main");
    assert!(line.contains("needs an API key") && line.contains("set UA_DOCTOR_KEY"), "{line}");
    assert_eq!(r.line("ok", "key spare"), "printed by api_key_cmd `echo sk-from-command-77` (config.toml)");
    let r = run(doctor(&home).arg("--offline").env("UA_DOCTOR_KEY", "sk-variable-key-99"));
    assert_eq!(r.code, Some(0), "{}", r.text);
    assert_eq!(r.line("ok", "key main"), "found in the variable UA_DOCTOR_KEY (named by api_key_env in config.toml)");
    assert!(!r.text.contains("sk-variable-key-99"));
}

#[test]
fn without_landlock_the_kernel_and_the_rules_are_problems() {
    let home = Home::new();
    let mut c = doctor(&home);
    c.arg("--offline");
    crate::sandbox::without_landlock_syscalls(&mut c);
    let r = run(&mut c);
    assert_eq!(r.code, Some(1), "{}", r.text);
    let line = r.line("problem", "Landlock");
    assert!(line.contains("not available in this kernel"), "{line}");
    assert!(line.contains("Linux 5.13 or later") && line.contains("best-effort"), "{line}");
    let line = r.line("problem", "sandbox rules");
    assert!(line.contains("will not run") && line.contains("Landlock is not available"), "{line}");
    // Best effort: agent commands run, and the kernel line only warns.
    home.write(".config/unixagent/config.toml", "[sandbox]\nmode = \"best-effort\"\n");
    let mut c = doctor(&home);
    c.arg("--offline");
    crate::sandbox::without_landlock_syscalls(&mut c);
    let r = run(&mut c);
    assert_eq!(r.code, Some(0), "{}", r.text);
    r.line("warning", "Landlock");
    assert!(r.line("warning", "sandbox rules").contains("Landlock"), "{}", r.text);
}

#[test]
fn an_unwritable_data_directory_is_a_problem() {
    let home = Home::new();
    let data = home.path().join(".local/share/unixagent");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o500)).unwrap();
    let mut c = doctor(&home);
    c.arg("--offline");
    // Permission bits do not stop root: run as nobody, in a home of its own.
    if nix::unistd::getuid().is_root() {
        chown_all(home.path(), 65534, 65534);
        let mut as_nobody = Command::new("setpriv");
        as_nobody.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(c.get_program());
        as_nobody.args(c.get_args());
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => as_nobody.env(k, v),
                None => as_nobody.env_remove(k),
            };
        }
        as_nobody.current_dir(home.path());
        c = as_nobody;
    }
    let r = run(&mut c);
    assert_eq!(r.code, Some(1), "{}\n{}", r.text, r.stderr);
    let line = r.line("problem", "data directory");
    assert!(line.contains(&format!("{} is not writable (Permission denied)", data.display())), "{line}");
    assert!(line.contains(&format!("`chmod u+rwx {}`", data.display())), "{line}");
    assert!(!r.text.contains("session index"), "an index in an unwritable directory was checked:\n{}", r.text);
}

fn chown_all(dir: &std::path::Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(gid)).unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.symlink_metadata().unwrap().is_dir() {
            chown_all(&p, uid, gid);
        } else {
            std::os::unix::fs::lchown(&p, Some(uid), Some(gid)).unwrap();
        }
    }
}

/// A developer's home whose credential stores nest (`~/.docker` and the
/// file `~/.docker/config.json` are both protected): doctor's trial of the
/// rules says exactly what an unattended agent command would meet, so a
/// home that breaks the sandbox's set-up shows up here first.
#[test]
fn the_rules_line_says_what_an_agent_command_would_meet() {
    let home = Home::new();
    // Outside /tmp, which is writable in the sandbox by design.
    let dev = tempfile::tempdir_in("/var/tmp").unwrap();
    for (rel, text) in [(".docker/config.json", "{}\n"), (".ssh/id_ed25519", "KEY\n"), (".aws/credentials", "[x]\n")] {
        let p = dev.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let sandboxed = Command::new(unixagent())
        .args(["sandbox", "--", "true"])
        .env("HOME", dev.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("UNIXAGENT_CONFIG")
        .current_dir(dev.path())
        .output()
        .unwrap();
    let r = run(doctor(&home)
        .arg("--offline")
        .env("HOME", dev.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .current_dir(dev.path()));
    if sandboxed.status.success() {
        assert!(r.line("ok", "sandbox rules").contains("they build and apply in"), "{}", r.text);
    } else {
        let said = String::from_utf8_lossy(&sandboxed.stderr);
        let said = said.lines().last().unwrap_or_default().trim_start_matches("unixagent: ");
        let line = r.line("problem", "sandbox rules");
        assert!(line.contains(said), "doctor: {line}\nsandbox -- true: {said}");
        assert_eq!(r.code, Some(1));
    }
}
