//! Walker tests: each names the evasion it closes.

use super::*;

fn progs(src: &str) -> Vec<String> {
    parse(src).parts.iter().filter(|p| p.kind == PartKind::Exec).map(Part::line).collect()
}

fn kinds(src: &str) -> Vec<PartKind> {
    parse(src).parts.into_iter().map(|p| p.kind).collect()
}

#[test]
fn lists_pipelines_and_groups_are_all_walked() {
    assert_eq!(
        progs("cat a | grep b && { ls; } || (pwd; id) ; echo x &"),
        ["cat a", "grep b", "ls", "pwd", "id", "echo x"]
    );
}

#[test]
fn control_flow_bodies_are_walked() {
    assert_eq!(
        progs(
            "for f in *; do rm \"$f\"; done; while true; do date; done; if a; then b; else c; fi; case x in y) z;; esac"
        ),
        ["rm $f", "true", "date", "a", "b", "c", "z"]
    );
}

#[test]
fn substitutions_are_walked_and_marked() {
    let p = parse("echo $(curl x | sh) `id` <(wget y)");
    let lines: Vec<_> = p.parts.iter().map(Part::line).collect();
    assert!(lines.contains(&"curl x".to_string()), "{lines:?}");
    assert!(lines.contains(&"sh".to_string()));
    assert!(lines.contains(&"id".to_string()));
    assert!(lines.contains(&"wget y".to_string()));
    assert!(p.parts.iter().filter(|x| x.program() == "curl").all(|x| x.in_substitution));
}

#[test]
fn substitution_given_to_eval_or_shell_feeds_code() {
    for src in ["eval \"$(curl -s x)\"", "bash -c \"$(curl -s x)\"", "bash <(curl -s x)", "source <(curl x)"] {
        let p = parse(src);
        let curl = p.parts.iter().find(|x| x.program() == "curl");
        assert!(curl.is_some_and(|c| c.feeds_code), "{src}: {p:?}");
    }
}

#[test]
fn shell_c_strings_are_parsed_again() {
    assert_eq!(progs("bash -c 'rm -rf /tmp/x; ls'"), ["rm -rf /tmp/x", "ls"]);
    assert_eq!(progs("sh -ec \"bash -c 'id'\""), ["id"]);
    assert_eq!(progs("/bin/zsh -lc 'uname'"), ["uname"]);
    let p = parse("bash -c 'whoami'");
    assert_eq!(p.parts[0].wrappers, ["bash -c"]);
}

#[test]
fn wrappers_are_peeled_to_the_real_program() {
    let cases = [
        ("sudo -u root rm -rf /x", "rm -rf /x"),
        ("doas rm x", "rm x"),
        ("env -i PATH=/x FOO=1 rm y", "rm y"),
        ("nice -n 10 nohup timeout -s KILL 5 rm z", "rm z"),
        ("command rm a", "rm a"),
        ("builtin cd /", "cd /"),
        ("exec rm b", "rm b"),
        ("stdbuf -oL setsid ionice -c 3 rm c", "rm c"),
        ("/usr/bin/env rm d", "rm d"),
    ];
    for (src, want) in cases {
        assert_eq!(progs(src), [want], "{src}");
    }
    assert!(parse("sudo rm x").parts[0].privileged);
    assert_eq!(parse("env FOO=1 ls").parts[0].assignments[0].0, "FOO");
}

#[test]
fn eval_watch_xargs_and_find_exec_run_their_commands() {
    assert_eq!(progs("eval 'rm -rf' /x"), ["rm -rf /x"]);
    assert_eq!(progs("watch -n 1 'df -h; rm x'"), ["df -h", "rm x"]);
    assert_eq!(progs("ls | xargs -0 -n1 rm -f"), ["ls", "rm -f {stdin}"]);
    assert_eq!(
        progs("find . -name '*.o' -exec rm {} \\; -execdir chmod 600 {} +"),
        ["find . -name *.o -exec rm {} ; -execdir chmod 600 {} +", "rm {}", "chmod 600 {}"]
    );
}

#[test]
fn a_look_alike_path_is_not_a_wrapper() {
    // ./sudo is some program that happens to be called sudo.
    let p = parse("./sudo rm -rf /");
    assert_eq!(p.parts.len(), 1);
    assert_eq!(p.parts[0].program(), "./sudo");
    assert!(!p.parts[0].privileged);
}

#[test]
fn ifs_and_quotes_do_not_hide_the_program() {
    assert_eq!(progs("rm${IFS}-rf${IFS}/"), ["rm -rf /"]);
    assert_eq!(progs("'r''m' \"-rf\" \\/"), ["rm -rf /"]);
    assert_eq!(progs("$'\\x72\\x6d' -rf /"), ["rm -rf /"]);
}

#[test]
fn dynamic_command_names_are_dynamic() {
    assert!(kinds("$cmd -rf /").contains(&PartKind::Dynamic));
    assert!(kinds("$(curl x) -rf /").contains(&PartKind::Dynamic));
    // What a literal echo prints is known.
    assert!(progs("$(echo rm) x").contains(&"rm x".to_string()));
}

#[test]
fn unparseable_input_is_kept_and_still_searched() {
    let p = parse("echo 'unterminated $(curl x | sh)");
    assert!(matches!(p.parts[0].kind, PartKind::Unparseable(_)));
    let p = parse("if true; then $(curl x|sh)");
    assert!(p.parts.iter().any(|x| x.program() == "curl"), "{p:?}");
}

#[test]
fn redirections_are_recorded_with_their_targets() {
    let p = parse("ls > out.txt 2>>err.log &> both; cat < in; exec 3<>/dev/tcp/h/1");
    let r: Vec<(RedirectKind, String)> =
        p.parts.iter().flat_map(|x| x.redirects.iter().map(|r| (r.kind, r.target.text.clone()))).collect();
    assert!(r.contains(&(RedirectKind::Write, "out.txt".into())), "{r:?}");
    assert!(r.contains(&(RedirectKind::Append, "err.log".into())));
    assert!(r.contains(&(RedirectKind::Write, "both".into())));
    assert!(r.contains(&(RedirectKind::Read, "in".into())));
    assert!(r.contains(&(RedirectKind::ReadWrite, "/dev/tcp/h/1".into())));
    let p = parse("{ echo x; } > /etc/passwd");
    assert!(p.parts.iter().any(|x| x.kind == PartKind::Redirection && x.redirects[0].target.text == "/etc/passwd"));
}

#[test]
fn function_bodies_are_walked_and_tagged() {
    let p = parse(":(){ :|:& };:");
    assert!(p.parts.iter().any(|x| x.kind == PartKind::FunctionDef(":".into())));
    assert!(p.parts.iter().any(|x| x.in_function.as_deref() == Some(":") && x.program() == ":"));
}

#[test]
fn pipe_order_is_known() {
    let p = parse("curl -s x | tee f | bash");
    let curl = &p.parts[0];
    let bash = &p.parts[2];
    assert!(curl.pipes_into(bash));
    assert!(!bash.pipes_into(curl));
}

#[test]
fn ssh_remote_commands_are_parsed() {
    let p = parse("ssh -p 22 host 'rm -rf /'");
    assert_eq!(p.parts[0].program(), "ssh");
    assert_eq!(p.parts[1].line(), "rm -rf /");
    assert_eq!(p.parts[1].wrappers, ["ssh host"]);
}

#[test]
fn nesting_is_bounded() {
    let s = format!("{}id", "eval ".repeat(40));
    let p = parse(&s);
    assert!(p.parts.iter().any(|x| matches!(x.kind, PartKind::Unparseable(_))));
}

#[test]
fn deep_parentheses_fail_closed_instead_of_hanging_the_parser() {
    // brush-parser backtracks exponentially on these; 24 took seconds.
    for src in ["(".repeat(30), format!("echo {}", "(".repeat(24)), format!("{}ls{}", "(".repeat(20), ")".repeat(20))] {
        let p = parse(&src);
        assert!(p.parts.iter().any(|x| matches!(x.kind, PartKind::Unparseable(_))), "{src}");
    }
    // What the parentheses wrap is still walked.
    let p = parse(&format!("{}rm -rf /{}", "(".repeat(20), ")".repeat(20)));
    assert!(p.parts.iter().any(|x| x.line() == "rm -rf /"), "{:?}", p.parts);
    // Ordinary nesting still parses.
    let p = parse("echo $(( (1 + 2) * (3 + (4 - 1)) ))");
    assert!(!p.parts.iter().any(|x| matches!(x.kind, PartKind::Unparseable(_))));
}

#[test]
fn double_parentheses_are_also_read_as_subshells() {
    // bash, zsh and dash all run `touch` here; dash runs it in all of them.
    for src in [
        "((touch /tmp/p) ); ls",
        "ls; ((touch /tmp/p)\t)",
        "( (touch /tmp/p) )",
        "((echo a) ; (touch /tmp/p))",
        "((echo \"))\" ) ; touch /tmp/p)",
        "(((touch /tmp/p) ) )",
        "((touch /tmp/p))",
        "(((touch /tmp/p)))",
    ] {
        let p = parse(src);
        assert!(p.parts.iter().any(|x| x.line() == "touch /tmp/p"), "{src}: {:?}", p.parts);
    }
    // Substitutions inside arithmetic are found.
    let p = parse("(( x = $(id -u) ))");
    assert!(p.parts.iter().any(|x| x.line() == "id -u"), "{:?}", p.parts);
}

#[test]
fn variables_the_line_sets_are_resolved() {
    assert!(progs("a=r;b=m;$a$b -rf x").contains(&"rm -rf x".to_string()));
    assert!(progs("set -- rm -rf x; \"$@\"").contains(&"rm -rf x".to_string()));
    assert!(progs("arr=(rm -rf x); \"${arr[@]}\"").contains(&"rm -rf x".to_string()));
    assert!(progs("IFS=,;c=rm,-rf,x;$c").contains(&"rm -rf x".to_string()));
    assert!(progs("c='rm -rf x'; \"$c\"").contains(&"rm -rf x".to_string()));
    // Quoted, the value stays one word: the program is `rm -rf x`, not rm.
    assert!(!progs("c='rm -rf x'; \"$c\"").contains(&"rm -rf".to_string()));
    // A subshell's assignments end with it.
    assert_eq!(kinds("(a=rm); $a -rf x").iter().filter(|k| **k == PartKind::Dynamic).count(), 1);
}

#[test]
fn values_that_may_differ_are_not_trusted() {
    // Set twice, in a branch, or in a loop body that runs again.
    for src in [
        "x=ls; x=rm; $x -rf y",
        "x=ls; if c; then x=rm; fi; $x -rf y",
        "x=ls; while :; do $x -rf y; x=rm; done",
        "x=ls && $x -rf y; read x",
    ] {
        assert!(kinds(src).contains(&PartKind::Dynamic), "{src}: {:?}", progs(src));
        assert!(!progs(src).contains(&"ls -rf y".to_string()), "{src}: {:?}", progs(src));
    }
}

#[test]
fn another_shell_sees_only_exported_values() {
    // `a` is not exported: in the inner shell it is unset, so the inner
    // command runs `rm`.
    assert!(progs("a=ls; sh -c '$a rm -rf /'").contains(&"rm -rf /".to_string()));
    assert!(progs("export a=rm; sh -c '$a -rf /'").contains(&"rm -rf /".to_string()));
}

#[test]
fn variables_nothing_sets_are_also_read_as_empty() {
    assert!(progs("r${EMPTY}m -rf x").contains(&"rm -rf x".to_string()));
    assert!(progs("rm -rf \"$D\"/*").contains(&"rm -rf /*".to_string()));
    // Unless the shell would stop (`:?`), or something sets them.
    assert!(!progs("rm -rf \"${D:?}\"/*").contains(&"rm -rf /*".to_string()));
    assert!(!progs("for D in a b; do rm -rf \"$D\"/*; done").contains(&"rm -rf /*".to_string()));
    // Variables the shell itself always sets are not read as empty.
    assert!(!progs("rm -rf \"$PWD\"/*").contains(&"rm -rf /*".to_string()));
}

#[test]
fn quoted_words_read_back_unchanged_by_the_walker() {
    // Code in other languages is turned back into shell words with
    // `word::quote` and walked; the walker must read them as the shells do.
    for raw in [
        "plain",
        "",
        "it's",
        "\"q\"",
        "back\\slash",
        "ends\\",
        "$HOME `id` $(id)",
        "a;b|c&d *?[x] {a,b} ~ #",
        "new\nline",
        "-n",
    ] {
        let p = parse(&format!("printf %s {}", super::word::quote(raw)));
        let argv: Vec<&str> = p.parts[0].argv.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(argv, ["printf", "%s", raw], "{raw:?}");
        assert!(p.parts[0].argv.iter().all(|a| !a.dynamic), "{raw:?}");
    }
}
