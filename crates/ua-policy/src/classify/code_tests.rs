//! What reading code in each language finds.

use super::*;

fn commands(lang: Lang, code: &str) -> Vec<String> {
    inspect(lang, code).commands
}

#[test]
fn shell_commands_in_python() {
    assert_eq!(commands(Lang::Python, "import os; os.system(\"rm -rf /\")"), ["rm -rf /"]);
    assert_eq!(
        commands(Lang::Python, "import subprocess as s; subprocess.run(['rm', '-rf', '~'], check=True)"),
        ["rm -rf '~'"]
    );
    assert_eq!(commands(Lang::Python, "import subprocess; subprocess.run('curl x | sh', shell=True)"), ["curl x | sh"]);
    assert_eq!(commands(Lang::Python, "from os import system; system('id')"), ["id"]);
    assert_eq!(commands(Lang::Python, r#"exec("import os\nos.system('reboot')")"#), ["reboot"]);
    // A shell variable in the command text is the shell's business.
    assert_eq!(commands(Lang::Python, "import os; os.system('rm -rf $HOME')"), ["rm -rf $HOME"]);
}

#[test]
fn computed_commands_and_code_are_hidden() {
    for (lang, code) in [
        (Lang::Python, "import os; os.system(cmd)"),
        (Lang::Python, "import os; os.system('rm -rf ' + d)"),
        (Lang::Python, "import os; os.system(f'rm -rf {d}')"),
        (Lang::Python, "exec(open('x.py').read())"),
        (Lang::Python, "import base64; exec(base64.b64decode('cHJpbnQoMSk='))"),
        (Lang::Python, "from subprocess import run; run(c)"),
        (Lang::Perl, "system $ARGV[0]"),
        (Lang::Perl, "system(\"rm -rf $dir\")"),
        (Lang::Perl, "eval pack('H*', '7072696e74')"),
        (Lang::Ruby, "system(\"rm -rf #{d}\")"),
        (Lang::JavaScript, "require('child_process').execSync(process.argv[1])"),
        (Lang::JavaScript, "eval(Buffer.from(s, 'base64').toString())"),
        (Lang::Awk, "{ system($0) }"),
        (Lang::Awk, "{ system(\"rm \" $1) }"),
        (Lang::Awk, "{ $0 | getline x }"),
        (Lang::PowerShell, "Get-ChildItem"),
    ] {
        assert!(inspect(lang, code).hidden.is_some(), "{lang:?} {code}");
    }
}

#[test]
fn shell_commands_in_other_languages() {
    assert_eq!(commands(Lang::Perl, "system('rm', '-rf', '/tmp/x')"), ["rm -rf /tmp/x"]);
    assert_eq!(commands(Lang::Perl, "system \"id\"; print `uname -a`"), ["id", "uname -a"]);
    assert_eq!(commands(Lang::Perl, "print qx{ls /}"), ["ls /"]);
    assert_eq!(commands(Lang::Perl, "open(my $f, '-|', 'ps aux'); open(G, \"| mail x\")"), ["mail x", "ps aux"]);
    assert_eq!(commands(Lang::Ruby, "system 'rm -rf ~/x'; %x(id)"), ["id", "rm -rf ~/x"]);
    assert_eq!(
        commands(Lang::JavaScript, "require('child_process').execSync('rm -rf ~', {stdio: 'inherit'})"),
        ["rm -rf ~"]
    );
    assert_eq!(
        commands(Lang::JavaScript, "const cp = require('child_process'); cp.spawn('rm', ['-rf', 'x'])"),
        ["rm -rf x"]
    );
    assert_eq!(commands(Lang::Php, "echo shell_exec('whoami');"), ["whoami"]);
    assert_eq!(commands(Lang::Lua, "os.execute('rm -rf /')"), ["rm -rf /"]);
    assert_eq!(commands(Lang::R, "system(\"rm -rf ~\")"), ["rm -rf ~"]);
    assert_eq!(commands(Lang::Tcl, "exec rm -rf /tmp/x"), ["rm -rf /tmp/x"]);
    assert_eq!(commands(Lang::AppleScript, "do shell script \"rm -rf ~\""), ["rm -rf ~"]);
    assert_eq!(commands(Lang::Lisp, "(shell-command \"rm -rf ~\")"), ["rm -rf ~"]);
    assert_eq!(commands(Lang::Awk, "BEGIN { system(\"rm -rf ~\") }"), ["rm -rf ~"]);
    assert_eq!(commands(Lang::Awk, "BEGIN { \"date\" | getline d; print d | \"mail x\" }"), ["date", "mail x"]);
}

#[test]
fn deletion_and_network_are_seen() {
    assert!(inspect(Lang::Python, "import shutil; shutil.rmtree('/srv')").deletes);
    assert!(inspect(Lang::Ruby, "require 'fileutils'; FileUtils.rm_rf('x')").deletes);
    assert!(inspect(Lang::JavaScript, "require('fs').rmSync('x', {recursive: true})").deletes);
    assert!(inspect(Lang::Perl, "unlink glob '*'").deletes);
    assert!(inspect(Lang::Python, "import urllib.request as u; u.urlopen('http://x')").network);
    assert!(inspect(Lang::JavaScript, "fetch('https://x')").network);
    assert!(inspect(Lang::Ruby, "require 'net/http'").network);
}

#[test]
fn ordinary_code_is_readable_and_quiet() {
    for (lang, code) in [
        (Lang::Python, "print(1 + 2)"),
        (Lang::Python, "import json, sys; print(json.load(sys.stdin)['name'])"),
        (Lang::Python, "print('the operating system is fine')"),
        (Lang::Python, "print(eval('1+2'))"),
        (Lang::JavaScript, "console.log(/a(b)/.exec('ab'))"),
        (Lang::JavaScript, "console.log(process.version)"),
        (Lang::Perl, "print \"file system ok\\n\""),
        (Lang::Perl, "while (<>) { print if /x/ }"),
        (Lang::Ruby, "puts RUBY_VERSION"),
        (Lang::Awk, "{ print $1 }"),
        (Lang::Awk, "{ s += $2 } END { print s }"),
        (Lang::Awk, "$3 > 10 || $4 == \"x\""),
    ] {
        let i = inspect(lang, code);
        assert_eq!(i, Inspection::default(), "{lang:?} {code}");
    }
}

#[test]
fn inline_code_per_program() {
    let args = |s: &str| s.split_whitespace().map(Arg::literal).collect::<Vec<_>>();
    let code = |p: &str, s: &str| inline(p, Lang::of(p).unwrap_or(Lang::Python), &args(s)).map(|i| i.text);
    assert_eq!(code("python3", "-c print(1)"), Some("print(1)".into()));
    assert_eq!(code("perl", "-lne print"), Some("print".into()));
    assert_eq!(code("node", "--eval=x()"), Some("x()".into()));
    assert_eq!(code("deno", "eval x()"), Some("x()".into()));
    assert_eq!(code("awk", "-F: {print}"), Some("{print}".into()));
    assert_eq!(code("awk", "-f prog.awk data"), None);
    assert_eq!(code("python3", "script.py"), None);
    let dynamic = vec![Arg::literal("-c"), Arg { text: "$CODE".into(), dynamic: true, glob: false }];
    assert!(inline("python3", Lang::Python, &dynamic).is_some_and(|i| i.dynamic));
}
