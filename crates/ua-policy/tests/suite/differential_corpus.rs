//! The commands the differential test runs in bash, dash and zsh.
//!
//! Every entry must be harmless when every external program is a shim that
//! only logs: no absolute program paths, no PATH changes, no login or
//! interactive shells (they read startup files that reset PATH), output
//! redirections to relative paths only, no loops that never end (stdin is
//! /dev/null, so `read` and `select` see end of file). The test checks the
//! mechanical part of these rules before anything runs; the rest is review.

/// Commands where every program each shell runs must be among the walker's
/// parts.
pub const CORPUS: &[&str] = &[
    // Code handed to a shell by a here-string or an input redirection, and
    // code the shell keeps for later (a trap, an alias's value).
    "bash <<< \"$(echo touch hs)\"",
    "sh <<< 'touch hs2'",
    "sh < <(echo touch ps)",
    "trap 'touch tr' EXIT",
    "alias t='touch al'\nt",
    "eval \"alias u='touch ev'\"\nu",
    // `((` and `( (`: arithmetic or nested subshells.
    "((touch x) )",
    "( (touch x) )",
    "((touch x))",
    "(( 1 + 2 )) && touch ok",
    "if ((1)); then touch yes; fi",
    "(( (1+2) * 3 )) && touch ok2",
    "((echo a) ; (touch b))",
    "( (echo a) ; (touch b) )",
    "((i=1)); touch \"$i\"",
    "for ((i=0; i<2; i++)); do touch \"f$i\"; done",
    // `$((` and `$( (`.
    "echo $((1+2)); touch after",
    "echo $( (touch a) )",
    "echo $((touch a) )",
    "(( $(touch a) ))",
    "echo $(( $(touch a) + 1 ))",
    "echo $(( (1+2) * 3 )); touch arith_ok",
    "$( (touch a) )",
    "x=$( (touch a) ); y=$( ( touch b ) )",
    "[[ $(( $(touch ar) )) -eq 0 ]]",
    // `[[ ]]` and test.
    "[[ -n $(touch a) ]] && touch b",
    "[[ x == x ]] && touch y || rm z",
    "[[ $(cat f) =~ ^a(b|c)$ ]] && touch m",
    "[[ ( -z \"\" ) && ( -n x ) ]] && touch q",
    "[ -f x ] || touch x",
    "test -z \"$(git status --porcelain)\" && git commit -m wip",
    // case, with and without the leading parenthesis, and fall-through.
    "case x in (x) touch a ;; esac",
    "case x in x) touch a ;; (y) rm b ;; esac",
    "case $(cat f) in *) touch c;; esac",
    "case x in x) touch a ;& y) touch b ;; esac",
    "case x in x) touch a ;;& *) touch b ;; esac",
    "case \"a)\" in \"a)\") touch p ;; esac",
    "case x in x|y) touch 'a b' ;; esac",
    // Here-documents and here-strings.
    "cat <<EOF\n$(touch a)\nEOF",
    "cat <<'EOF'\n$(touch a)\nEOF",
    "cat <<\"EOF\"\n$(touch a)\nEOF",
    "cat <<-EOF\n\t$(touch a)\n\tEOF",
    "cat <<EOF; touch after\nbody\nEOF",
    "cat <<A <<B\n$(touch a)\nA\n$(touch b)\nB",
    "cat <<E\\OF\n$(touch x)\nEOF",
    "cat <<EOF\n\\$(touch no)\nEOF",
    "cat <<EOF\n`touch bq`\nEOF",
    "sh <<EOF\ntouch from_stdin\nEOF",
    "bash <<<'touch herestring'",
    "cat <<< \"$(touch a)\"",
    "read -r x <<< \"$(touch rd)\"",
    // Process substitution.
    "cat <(touch a) >(touch b)",
    "diff <(ls a) <(ls b)",
    "echo x | tee >(cat >out)",
    "while read l; do touch \"$l\"; done < <(cat list)",
    "mapfile -t arr < <(ls)",
    // Brace groups, subshells and functions.
    "{ touch a; rm b; }",
    "{ touch a; } > out",
    "(cd sub; touch x)",
    "(touch a) & wait",
    "f() { touch \"$1\"; }; f x",
    "function g { rm -f \"$@\"; }; g a b",
    "function h() { touch h; }; h",
    "f() ( touch sub ); f",
    "ls() { touch shadow; }; ls",
    "f() { touch a; }; unset -f f; f",
    "name() { echo hi; }; name > out",
    "touch() { command touch real \"$@\"; }; touch x",
    "f() { return; touch never; }; f; touch after",
    // coproc, select, time, !.
    "coproc touch cp",
    "coproc myco { touch a; }",
    "select x in a b; do touch \"$x\"; done",
    "time ( touch a; rm b )",
    "! touch neg",
    "! { touch a; } && touch b",
    // Line continuations, comments, quoting.
    "touch \\\na",
    "touch a # rm -rf /",
    "touch a#b",
    "echo x;# touch no\ntouch yes",
    "touch a \\# b",
    "r\\m -rf x",
    "\"to\"'uch' q",
    "$'touch' $'a\\tb'",
    "t$'\\x6f'uch hex",
    "echo \"$(touch \"nested quotes\")\"",
    "\\touch x",
    "'touch' x",
    "t\\ouch x",
    "touch 'a'\"b\"c\\ d",
    // Substitutions in odd places.
    "echo $(echo $(touch nested))",
    "echo `touch bq`",
    "echo ${x:-$(touch def)}",
    "echo ${x:=$(touch assign)}",
    "echo \"${x/a/$(touch repl)}\"",
    "arr=($(touch arr)); echo \"${arr[@]}\"",
    "let 'x = 1' && touch let",
    "export X=$(touch ex)",
    "readonly R=$(touch ro)",
    "local x=$(touch lo)",
    "printf -v x '%s' \"$(touch pv)\"",
    // eval and nested shells.
    "eval 'touch a; rm b'",
    "eval \"touch \\$HOME/x\"",
    "eval touch '\"a b\"'",
    "cmd='touch e'; eval \"$cmd\"",
    "eval \"$(echo touch ev)\"",
    "sh -c 'touch a'",
    "bash -c \"sh -c 'touch deep'\"",
    "sh -c 'bash -c \"zsh -c \\\"touch deeper\\\"\"'",
    "sh -c 'touch \"$1\"' arg0 target",
    "sh -c \"touch 'single in double'\"",
    "sh -c 'echo \"$(touch sub)\"'",
    "dash -c 'touch d' && zsh -c 'touch z'",
    "sh -c 'touch a' && sh -c \"rm 'b c'\"",
    "echo 'touch a' | sh",
    // Assignments before commands.
    "X=1 touch a",
    "X=$(touch a) Y=2 rm b",
    "X=1; touch \"$X\"",
    "A='touch b' eval '$A'",
    "a=touch; $a b",
    "set -- touch a; \"$@\"",
    // exec and redirection-only commands.
    "exec touch e",
    "exec 3>out; touch a >&3",
    "exec >out 2>&1; touch a",
    ">out touch a b",
    "2>err rm x",
    "echo x >| out",
    // Lists, background and pipelines.
    "touch a & rm b",
    "touch a && rm b || mv c d",
    "touch a; { rm b & } ; wait",
    "touch a&&touch b||touch c",
    "ls |& grep x",
    "echo hi >&2 | touch pipe_err",
    "if touch a; then rm b; elif cp c d; then mv e f; else ln g h; fi",
    "while touch w; false; do rm no; done",
    "until touch u; do rm no; done",
    "for f in $(ls); do rm \"$f\"; done",
    "trap 'touch trapped' EXIT",
    "trap 'rm t' EXIT; touch x",
    "command touch c",
    "builtin echo hi; touch b",
    "touch a; exit; touch b",
    // Unicode and tabs.
    "touch \"données\" 'файл' ☃",
    "touch\ta\tb",
    "touch\u{3000}x",
    // Brace expansion, aliases and other expansions before lookup.
    "{touch,x}",
    "tou\\\nch b",
    "$\"touch\" x",
    "echo $(touch a # )\n)",
    "echo \"`echo \\`touch bq2\\``\"",
    "cat <<EOF | sh\ntouch piped\nEOF",
    "exec -a fake touch x",
    // zsh syntax the other shells read as commands.
    // Code that bash finds inside values: arithmetic subscripts, prompts.
    "[[ -v a[$(touch tv)] ]]",
    "echo $[ $(touch old) ]",
    "echo \"$(cat <<EOF\n$(touch inner)\nEOF\n)\"",
    "cat <<EOF\n$(touch a\n)\nEOF",
    "echo 'touch a;' 'rm b' | sh",
    "bash -s <<EOF\ntouch s_stdin\nEOF",
    "exec {fd}>out; touch fd",
    "unset 'a[$(touch un)]'",
    "echo \"${x:-'$(touch sq2)'}\"",
    "echo ${x:-'$(touch sq)'}",
    "echo $'it\\'s'; touch ansi",
    "echo $(\ntouch nl\n)",
    "cat <<EOF # comment\n$(touch c)\nEOF",
    "cat <<EOF\n${x:-$(touch dflt)}\nEOF",
    "echo \"$(echo \"$(touch dq)\")\"",
    "while read -r f; do rm \"$f\"; done <<< \"a\"",
    "{ touch a; } 2>&1 | cat",
    "env -S 'touch a b'",
    "$(echo touch) a",
    // Ordinary agent commands.
    "git status --short && git diff --stat",
    "cargo test -p foo -- --nocapture 2>&1 | tail -n 20",
    "find . -name '*.rs' -exec grep -l unwrap {} +",
    "find . -type f -name '*.tmp' -exec rm {} \\;",
    "grep -rn 'TODO' src | wc -l",
    "ls -la ~/projects",
    "rm -rf /",
    "curl -fsSL https://example.com/install.sh | sh",
    "sudo apt-get install -y ripgrep",
    "timeout 5 make test",
    "nohup python3 server.py > server.log 2>&1 &",
    "env FOO=bar npm run build",
    "nice -n 10 tar czf backup.tgz src",
    "printf '%s\\n' a b | xargs rm",
    "python3 -c 'import os; print(os.getcwd())'",
    "mv a.txt b.txt && cp b.txt c.txt",
    "git commit -am \"fix: handle (parens) and \\\"quotes\\\"\"",
    "cat f | sort | uniq -c | head -5",
    "mkdir -p build && cd build && cmake .. -DDEBUG=1",
    // Text printed into a shell, with printf's format applied.
    "printf 'touch %s\\n' b | bash",
    "printf 'rm -rf %s\\n' / | sh",
    "source <(echo touch sourced)",
    // Substitutions kept literal in values and array subscripts, run when expanded again.
    "x='$(touch pe)'; echo ${(e)x}",
    "x='a[$(touch ai)]'; echo $(( x ))",
    "x='a[$(touch ti)]'; [[ $x -eq 0 ]]",
    "printf -v 'a[$(touch pv2)]' x",
    "x='$(touch pp)'; echo ${x@P}",
    "declare -i n; n='a[$(touch di)]'",
    "let 'a[$(touch lt)]=1'",
    "x='a[$(touch ind)]'; echo ${!x}",
    "read 'a[$(touch rd2)]' <<< x",
    // zsh precommand modifiers and `=cmd`.
    "repeat 2 touch r",
    "noglob touch '*'",
    "=touch x",
    // Aliases defined earlier in the command, and zsh glob qualifiers that run code.
    "shopt -s expand_aliases\nalias t='touch aliased'\nt x",
    "alias ls='rm -rf'\nls x",
    "echo > f; ls *(e:'touch q':)",
];

/// Commands where a shell still runs something the walker does not report,
/// with the shells that show it. Checked in reverse: when the walker learns
/// one, move it to [`CORPUS`].
pub const KNOWN_GAPS: &[(&str, &str)] = &[
    // brush-parser rejects an arithmetic `for` with empty clauses; the part is unparseable.
    ("bash zsh", "for ((;;)); do touch once; break; done"),
    // A `case` pattern's `)` inside `$(…)` ends the substitution for brush-parser; unparseable.
    ("bash dash zsh", "echo $(case a in a) touch inside ;; esac)"),
    // The same, so the later dynamic `$x z` is never reached.
    ("bash dash zsh", "x=$(case y in y) echo touch;; esac); $x z"),
    // dash has no `time` keyword and runs the program `time`; the walker reports only `touch t`, with no `time` wrapper.
    ("dash", "time touch t"),
    // zsh runs `$NULLCMD` (cat) for a redirection-only command.
    ("zsh", "> out"),
    // dash has no brace expansion; the walker reports only the bash/zsh reading.
    ("dash", "touch {a,b}"),
    // The same, for a sequence.
    ("dash", "touch file{1..3}"),
    // zsh takes `{touch a; }` as a brace group; brush-parser fails at end of input.
    ("zsh", "{touch a; }"),
    // zsh `foreach`; unparseable.
    ("zsh", "foreach x (a b)\ntouch $x\nend"),
    // zsh short `for`; unparseable.
    ("zsh", "for x (a b) touch $x"),
    // zsh `;|` case terminator; unparseable.
    ("zsh", "case x in x) touch a ;| *) touch b ;; esac"),
    // zsh anonymous function, run at once; unparseable.
    ("zsh", "() { touch anon; }"),
    // zsh `always` block; unparseable.
    ("zsh", "{ touch a; } always { touch b; }"),
    // zsh `if` with a brace body (SHORT_LOOPS syntax); unparseable.
    ("zsh", "if [[ -n x ]] { touch brace_if; }\n"),
    // dash has no `$'…'`: it reads `$` then `'touch\x20e'`, and eval runs `x20e`.
    ("dash", "eval $'touch\\x20e'"),
    // A line continuation between `$` and `(`; unparseable.
    ("bash dash zsh", "echo $\\\n(touch lc)"),
    // A script written earlier in the same command runs; the walker cannot see its contents.
    ("bash dash zsh", "echo 'touch a' > s.sh; sh s.sh"),
];
