//! Tests of the floors `classify_part` applies whatever the program.

use super::*;

fn risk(src: &str) -> Risk {
    analyze(src).risk
}

fn reason(src: &str) -> String {
    analyze(src).parts.iter().max_by_key(|p| p.risk).map(|p| p.reason.clone()).unwrap_or_default()
}

#[test]
fn parts_line_up_with_the_parse() {
    let a = analyze("ls | grep x; ./cat y > out");
    assert_eq!(a.parts.len(), a.parsed.parts.len());
    let programs: Vec<&str> = a.parts.iter().map(|p| p.program.as_str()).collect();
    assert_eq!(programs, ["ls", "grep", "./cat"]);
    assert_eq!(a.parts[2].effects.writes, ["out"]);
}

#[test]
fn an_empty_command_is_read_only() {
    assert_eq!(risk(""), Risk::ReadOnly);
    assert_eq!(risk("# just a comment"), Risk::ReadOnly);
}

#[test]
fn writing_redirections_raise_but_sinks_do_not() {
    assert_eq!(risk("ls > /dev/null 2>&1"), Risk::ReadOnly);
    assert_eq!(risk("ls > out"), Risk::Write);
    assert_eq!(risk("ls > \"$F\""), Risk::Write);
    assert_eq!(risk("ls > /dev/tcp/h/1"), Risk::Network);
}

#[test]
fn steering_variables_raise_but_turning_a_pager_off_does_not() {
    assert_eq!(risk("LD_LIBRARY_PATH=/tmp/lib ls"), Risk::Write);
    assert!(reason("LD_LIBRARY_PATH=/tmp/lib ls").contains("LD_LIBRARY_PATH"));
    // An injected library is denied outright (deny rule `library-injection`).
    assert_eq!(risk("LD_PRELOAD=/tmp/x.so ls"), Risk::Denied);
    assert_eq!(risk("GIT_PAGER=cat git log"), Risk::ReadOnly);
    // The pager is a program only known at run time.
    assert_eq!(risk("GIT_PAGER=\"$P\" git log"), Risk::Destructive);
    assert_eq!(risk("MANPAGER=cat man ls"), Risk::ReadOnly);
    assert_eq!(risk("GIT_PAGER=less git log"), Risk::Write);
}

#[test]
fn exec_background_and_privilege_raise() {
    assert_eq!(risk("exec ls"), Risk::Write);
    assert_eq!(risk("ls &"), Risk::Write);
    assert_eq!(risk("sudo ls"), Risk::Privileged);
    assert_eq!(risk("ssh h ls"), Risk::Network);
}

#[test]
fn the_program_actually_run_decides() {
    assert_eq!(risk("cat f"), Risk::ReadOnly);
    assert_eq!(risk("/usr/bin/cat f"), Risk::ReadOnly);
    assert_eq!(risk("./cat f"), Risk::Write);
    assert_eq!(risk("/usr/bin/../../tmp/cat f"), Risk::Write);
    assert_eq!(risk("$CAT f"), Risk::Destructive);
}

#[test]
fn sed_scripts_with_addresses_are_read() {
    assert_eq!(risk("sed -n '1,5p' f"), Risk::ReadOnly);
    assert_eq!(risk("sed '1e id' f"), Risk::Write);
    assert_eq!(risk("sed '/x/w out' f"), Risk::Write);
    assert_eq!(risk("sed -e '$!d' f"), Risk::ReadOnly);
}

#[test]
fn version_queries_of_toolchains_only_print() {
    assert_eq!(risk("rustc --version"), Risk::ReadOnly);
    assert_eq!(risk("cargo build --version"), Risk::BuildTest);
    assert_eq!(risk("./configure --version"), Risk::Write);
}
