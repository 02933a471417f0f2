//! `make install` and `make uninstall` into a temporary prefix, and
//! `make install-login-shell`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use crate::manpage::{man_page, ok, workspace};
use crate::support::*;

/// Every file and directory under `dir`, relative to it.
fn tree(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(dir).unwrap().display().to_string());
            if p.symlink_metadata().unwrap().is_dir() {
                todo.push(p);
            }
        }
    }
    out
}

fn make(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new("make");
    c.arg("--no-print-directory").args(args).current_dir(workspace());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("make is installed")
}

#[test]
fn make_install_puts_each_file_where_its_reader_looks_and_uninstall_leaves_nothing() {
    let prefix = tempfile::tempdir().unwrap();
    let p = |rel: &str| prefix.path().join(rel);
    // Something of someone else's under the prefix stays.
    std::fs::create_dir_all(p("share/man/man1")).unwrap();
    std::fs::write(p("share/man/man1/other.1"), ".TH OTHER 1\n").unwrap();
    let before = tree(prefix.path());
    let prefix_arg = format!("PREFIX={}", prefix.path().display());
    let bin_arg = format!("BIN={}", unixagent().display());
    ok(&make(&["install", &prefix_arg, &bin_arg], &[]));
    for f in [
        "bin/unixagent",
        "share/man/man1/unixagent.1",
        "share/bash-completion/completions/unixagent",
        "share/zsh/site-functions/_unixagent",
        "share/fish/vendor_completions.d/unixagent.fish",
    ] {
        assert!(p(f).is_file(), "{f} was not installed");
    }
    let version = ok(&Command::new(p("bin/unixagent")).arg("--version").output().unwrap());
    assert!(version.starts_with(&format!("unixagent {}", env!("CARGO_PKG_VERSION"))), "{version}");
    assert_eq!(std::fs::read(p("share/man/man1/unixagent.1")).unwrap(), man_page());
    // man finds the page in the prefix.
    let found = ok(&Command::new("man").arg("-M").arg(p("share/man")).args(["-w", "unixagent"]).output().unwrap());
    assert_eq!(found.trim(), p("share/man/man1/unixagent.1").display().to_string());
    // The bash script loads and registers the completion.
    let bash = Command::new("bash")
        .arg("-c")
        .arg(format!(". {} && complete -p unixagent", p("share/bash-completion/completions/unixagent").display()))
        .output()
        .unwrap();
    assert!(ok(&bash).contains("_clap_complete_unixagent"), "{:?}", bash);

    ok(&make(&["uninstall", &prefix_arg], &[]));
    assert_eq!(tree(prefix.path()), before, "uninstall left something behind, or took something else");
}

#[test]
fn the_login_shell_is_registered_only_when_asked_and_the_way_back_is_told() {
    let prefix = tempfile::tempdir().unwrap();
    let shells = prefix.path().join("shells");
    std::fs::write(&shells, "/bin/sh\n/bin/bash\n").unwrap();
    let prefix_arg = format!("PREFIX={}", prefix.path().display());
    let shells_arg = format!("SHELLS_FILE={}", shells.display());
    let bin_arg = format!("BIN={}", unixagent().display());
    ok(&make(&["install", &prefix_arg, &bin_arg], &[]));
    assert_eq!(std::fs::read_to_string(&shells).unwrap(), "/bin/sh\n/bin/bash\n", "install registered it");
    let said = ok(&make(&["install-login-shell", &prefix_arg, &shells_arg], &[]));
    let path = prefix.path().join("bin/unixagent");
    assert_eq!(std::fs::read_to_string(&shells).unwrap(), format!("/bin/sh\n/bin/bash\n{}\n", path.display()));
    assert!(said.contains(&format!("chsh -s {}", path.display())) && said.contains("chsh -s /bin/bash"), "{said}");
    let again = ok(&make(&["install-login-shell", &prefix_arg, &shells_arg], &[]));
    assert!(again.contains("already in"), "{again}");
    assert_eq!(std::fs::read_to_string(&shells).unwrap().matches("unixagent").count(), 1);
    ok(&make(&["uninstall-login-shell", &prefix_arg, &shells_arg], &[]));
    assert_eq!(std::fs::read_to_string(&shells).unwrap(), "/bin/sh\n/bin/bash\n");
    ok(&make(&["uninstall", &prefix_arg], &[]));
}
