//! Files a program writes because an option or operand names them:
//! `sort -o FILE`, `base64 -d -o FILE`, `curl -o FILE`, `tar -xf A -C DIR`,
//! `gzip FILE`, `sed 'w FILE'`, `awk '{print > "FILE"}'`.
//!
//! A program that is read-only by its rule becomes Write as soon as it
//! writes a file (`classify_part` raises it), and every path here reaches
//! the deny list and the Cedar policy as a redirection to it would: `base64
//! -d -o ~/.bashrc x` meets the start-up file rule. Paths are returned as
//! written; `effects` normalises them and drops sinks like `/dev/null`.

use super::args::{Args, option_values};
use crate::parse::Arg;

/// The last path segment of a URL (`index.html` when there is none), as
/// `curl -O` and `wget` name the file they save.
fn url_file_name(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let path = rest.split(['?', '#']).next().unwrap_or("");
    let name = path.split_once('/').map_or("", |(_, p)| p.rsplit('/').next().unwrap_or(""));
    Some(if name.is_empty() { "index.html".to_string() } else { name.to_string() })
}

/// Files `name` writes, as written. `name` is the system program's name.
pub(crate) fn writes(name: &str, args: &[Arg]) -> Vec<String> {
    let a = Args(args);
    let ops: Vec<&str> = a.operands().iter().map(|o| o.text.as_str()).collect();
    let opts = |names: &[&str]| option_values(args, names).into_iter().map(str::to_string).collect::<Vec<_>>();
    match name {
        "base64" | "base32" | "basenc" | "gbase64" | "sort" | "shuf" | "iconv" | "gpg" | "gpg2" | "info" => {
            opts(&["-o", "--output"])
        }
        "tree" | "sdiff" | "patch" | "strace" | "ltrace" => opts(&["-o", "--output"]),
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "rustc" | "ld" | "as" => opts(&["-o"]),
        "go" if ops.first() == Some(&"build") => opts(&["-o"]),
        "less" | "more" => opts(&["-o", "-O", "--log-file", "--LOG-FILE"]),
        "openssl" => opts(&["-out", "-keyout"]),
        "ssh" => opts(&["-E"]),
        "tcpdump" => opts(&["-w"]),
        "nmap" => opts(&["-oN", "-oX", "-oG", "-oA", "-oS"]),
        "pg_dump" | "pg_dumpall" => opts(&["-f", "--file"]),
        "mysqldump" => opts(&["-r", "--result-file"]),
        "find" => opts(&["-fprint", "-fprint0", "-fprintf", "-fls"]),
        "ssh-keygen" if !a.flag('l', "") && !a.flag('y', "") && !a.flag('B', "") && !a.flag('F', "") => opts(&["-f"]),
        "git" => {
            let mut w = opts(&["--output"]);
            if matches!(a.first_operand(), Some("archive" | "format-patch")) {
                w.extend(opts(&["-o", "--output-directory"]));
            }
            w
        }
        "curl" => curl(args, &ops),
        "wget" => wget(args, &ops),
        "tar" | "bsdtar" | "gtar" => tar(args),
        "unzip" => {
            if a.flag('l', "") || a.flag('t', "") || a.flag('v', "") || a.flag('p', "") || a.flag('Z', "") {
                Vec::new()
            } else {
                let dir = opts(&["-d"]);
                if dir.is_empty() { vec![".".to_string()] } else { dir }
            }
        }
        "7z" | "7za" | "7zr" => match ops.first() {
            Some(&("x" | "e")) => {
                let dirs: Vec<String> =
                    args.iter().filter_map(|x| x.text.strip_prefix("-o")).map(str::to_string).collect();
                if dirs.is_empty() { vec![".".to_string()] } else { dirs }
            }
            Some(&("a" | "u" | "d" | "rn")) => ops.get(1).map(|s| s.to_string()).into_iter().collect(),
            _ => Vec::new(),
        },
        // `zip ARCHIVE FILES…` writes the archive.
        "zip" => ops.first().map(|s| s.to_string()).into_iter().collect(),
        // Compressors replace each file operand unless writing to stdout.
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma" | "zstd" | "unzstd" | "lz4"
        | "compress" | "uncompress" => {
            let listing = a.flag('c', "stdout") || a.flag('l', "list") || a.flag('t', "test") || a.has("--to-stdout");
            if listing { Vec::new() } else { ops.iter().map(|s| s.to_string()).collect() }
        }
        // `xxd IN OUT`, `uniq IN OUT`: the second operand is the output.
        "xxd" | "uniq" => ops.get(1).map(|s| s.to_string()).into_iter().collect(),
        "split" => ops.get(1).map(|s| s.to_string()).into_iter().collect(),
        "csplit" => opts(&["-f", "--prefix"]),
        // `script [FILE]` records the session into FILE (`typescript`).
        "script" => {
            let mut w = opts(&["-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T", "--log-timing"]);
            let command = option_values(args, &["-c", "--command"]);
            let file = ops.iter().find(|o| !command.contains(o)).map_or("typescript", |s| s);
            w.push(file.to_string());
            w
        }
        "perl"
            if a.0
                .iter()
                .any(|x| x.text.starts_with("-i") || x.text.starts_with("-pi") || x.text.starts_with("-ni")) =>
        {
            // `perl -pi -e CODE FILES`: the files are edited in place.
            let code = option_values(args, &["-e", "-E"]);
            ops.iter().filter(|o| !code.contains(o)).map(|s| s.to_string()).collect()
        }
        "sed" | "gsed" => sed_writes(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk_writes(args),
        _ => Vec::new(),
    }
}

fn curl(args: &[Arg], ops: &[&str]) -> Vec<String> {
    let mut w: Vec<String> = option_values(
        args,
        &[
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        ],
    )
    .into_iter()
    .map(str::to_string)
    .collect();
    // `-O` saves under the URL's file name, in `--output-dir` if given.
    let remote_name =
        args.iter().any(|x| x.text == "--remote-name" || x.text == "--remote-name-all" || bundle_has(&x.text, 'O'));
    if remote_name {
        let dir = option_values(args, &["--output-dir"]).first().map_or(".".to_string(), |d| d.to_string());
        for u in ops {
            if let Some(f) = url_file_name(u) {
                w.push(format!("{dir}/{f}"));
            }
        }
    }
    w
}

fn wget(args: &[Arg], ops: &[&str]) -> Vec<String> {
    let mut w: Vec<String> = option_values(
        args,
        &["-o", "--output-file", "-a", "--append-output", "--save-cookies", "--warc-file", "--save-headers"],
    )
    .into_iter()
    .map(str::to_string)
    .collect();
    let named = option_values(args, &["-O", "--output-document"]);
    if named.is_empty() {
        // Without -O, wget saves each URL under its file name.
        let dir = option_values(args, &["-P", "--directory-prefix"]).first().map_or(".".to_string(), |d| d.to_string());
        for u in ops {
            if let Some(f) = url_file_name(u) {
                w.push(format!("{dir}/{f}"));
            }
        }
    } else {
        w.extend(named.into_iter().map(str::to_string));
    }
    w
}

/// True when `t` is a bundle of short options (`-sLO`) containing `c`.
fn bundle_has(t: &str, c: char) -> bool {
    t.len() > 1
        && t.starts_with('-')
        && !t.starts_with("--")
        && t[1..].chars().all(|x| x.is_ascii_alphabetic())
        && t.contains(c)
}

/// tar: the archive it creates or updates, or the directory it extracts
/// into (`-C DIR`, else the working directory). The first word may be an
/// old-style bundle without a dash (`tar xzf a.tgz`).
fn tar(args: &[Arg]) -> Vec<String> {
    let first_bundle = args.first().filter(|x| !x.text.starts_with('-')).map(|x| x.text.as_str());
    let has = |c: char, long: &[&str]| {
        first_bundle.is_some_and(|b| b.contains(c))
            || args.iter().any(|x| {
                bundle_has(&x.text, c) || long.iter().any(|l| x.text == *l || x.text.starts_with(&format!("{l}=")))
            })
    };
    let archive: Option<String> = option_values(args, &["-f", "--file"]).first().map(|s| s.to_string()).or_else(|| {
        // `tar czf out.tgz dir`: the archive is the word after the bundle.
        first_bundle.filter(|b| b.contains('f')).and_then(|_| args.get(1)).map(|x| x.text.clone())
    });
    let mut w = Vec::new();
    if has('c', &["--create"])
        || has('r', &["--append"])
        || has('u', &["--update"])
        || has('A', &["--catenate", "--concatenate"])
        || args.iter().any(|x| x.text == "--delete")
    {
        w.extend(archive);
    } else if has('x', &["--extract", "--get"]) && !has('O', &["--to-stdout", "--to-command"]) {
        let dirs = option_values(args, &["-C", "--directory"]);
        if dirs.is_empty() {
            w.push(".".to_string());
        } else {
            w.extend(dirs.into_iter().map(str::to_string));
        }
    }
    w
}

/// The sed script: the `-e` values, or the first operand.
fn sed_scripts(args: &[Arg]) -> Vec<&str> {
    let e = option_values(args, &["-e", "--expression"]);
    if !e.is_empty() {
        return e;
    }
    Args(args).operands().first().map(|x| vec![x.text.as_str()]).unwrap_or_default()
}

/// `w FILE`, `W FILE` and the `w FILE` flag of `s///`.
fn sed_writes(args: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    for script in sed_scripts(args) {
        for t in super::programs::sed_commands(script) {
            let file = if let Some(rest) = t.strip_prefix(['w', 'W']) {
                Some(rest)
            } else if let Some(body) = t.strip_prefix('s') {
                // s/re/rep/FLAGS: a `w` flag writes to the rest of the line.
                let delim = body.chars().next().unwrap_or('/');
                let pieces: Vec<&str> = body[delim.len_utf8().min(body.len())..].splitn(3, delim).collect();
                pieces.get(2).and_then(|flags| flags.find('w').map(|k| &flags[k + 1..]))
            } else {
                None
            };
            if let Some(f) = file.map(str::trim).filter(|f| !f.is_empty()) {
                out.push(f.to_string());
            }
        }
    }
    out
}

/// gawk's `-o`/`-p`/`-d` report files and the literal files an awk program
/// prints into (`print > "f"`, `printf … >> "f"`).
fn awk_writes(args: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    for x in args {
        let t = x.text.as_str();
        for (short, long, default) in [
            ("-o", "--pretty-print", "awkprof.out"),
            ("-p", "--profile", "awkprof.out"),
            ("-d", "--dump-variables", "awkvars.out"),
        ] {
            if t == short || t == long {
                out.push(default.to_string());
            } else if let Some(v) = t.strip_prefix(&format!("{long}=")) {
                out.push(v.to_string());
            } else if let Some(v) = t.strip_prefix(short).filter(|v| !v.is_empty() && !t.starts_with("--")) {
                out.push(v.to_string());
            }
        }
    }
    let program = if option_values(args, &["-f", "--file"]).is_empty() {
        Args(args).operands().first().map(|o| o.text.clone())
    } else {
        None
    };
    if let Some(code) = program {
        // Only a redirection of a print statement writes: `$1 > "m"`
        // elsewhere is a comparison.
        for stmt in code.split("print").skip(1) {
            let stmt = stmt.split([';', '}', '\n']).next().unwrap_or("");
            if let Some(k) = stmt.find('>') {
                let after = stmt[k + 1..].trim_start_matches('>').trim_start();
                if let Some(body) = after.strip_prefix('"')
                    && let Some(end) = body.find('"')
                {
                    out.push(body[..end].to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(src: &str) -> Vec<String> {
        let words: Vec<Arg> = src.split_whitespace().map(Arg::literal).collect();
        writes(&words[0].text, &words[1..])
    }

    #[test]
    fn option_values_in_every_spelling() {
        for src in ["sort -o out x", "sort -oout x", "sort --output out x", "sort --output=out x", "sort -ro out x"] {
            assert_eq!(w(src), ["out"], "{src}");
        }
        assert!(w("sort -- -o out").is_empty());
        assert_eq!(w("base64 -d -o /home/u/.bashrc x"), ["/home/u/.bashrc"]);
        assert_eq!(w("base64 -do f x"), ["f"]);
        assert_eq!(w("openssl enc -d -in a -out b"), ["b"]);
        assert_eq!(w("find . -name x -fprint list"), ["list"]);
    }

    #[test]
    fn downloads_save_where_they_say() {
        assert_eq!(w("curl -sLo f https://x/y"), ["f"]);
        assert_eq!(w("curl -O https://x/a/.bashrc"), ["./.bashrc"]);
        assert_eq!(w("curl --output-dir d -O https://x/"), ["d/index.html"]);
        assert_eq!(w("wget https://x/p/a.sh"), ["./a.sh"]);
        assert_eq!(w("wget -P /tmp https://x/a.sh"), ["/tmp/a.sh"]);
        assert_eq!(w("wget -O - https://x/a.sh"), ["-"]);
        assert!(w("curl https://x/a.sh").is_empty());
    }

    #[test]
    fn archives_write_the_archive_or_the_extraction_directory() {
        assert_eq!(w("tar -czf out.tgz src"), ["out.tgz"]);
        assert_eq!(w("tar czf out.tgz src"), ["out.tgz"]);
        assert_eq!(w("tar -xf a.tar -C /home/u"), ["/home/u"]);
        assert_eq!(w("tar xzf a.tgz"), ["."]);
        assert_eq!(w("tar --extract --file=a.tar --directory=d"), ["d"]);
        assert!(w("tar -tf a.tar").is_empty());
        assert!(w("tar -xOf a.tar x").is_empty());
        assert_eq!(w("unzip a.zip -d out"), ["out"]);
        assert!(w("unzip -l a.zip").is_empty());
        assert_eq!(w("gzip big.log"), ["big.log"]);
        assert!(w("gzip -c big.log").is_empty());
        assert_eq!(w("xxd -r hex out"), ["out"]);
    }

    #[test]
    fn scripts_that_name_files() {
        assert_eq!(w("sed -n w/tmp/x f"), ["/tmp/x"]);
        assert_eq!(w("sed s/a/b/w_out f"), ["_out"]);
        assert_eq!(w("sed /x/w_out f"), ["_out"]);
        assert_eq!(w("sed 1,5w_out f"), ["_out"]);
        assert!(w("sed s/who/what/ f").is_empty());
        assert!(w("sed /who/d f").is_empty());
        assert!(w("awk $3>\"2020\" f").is_empty());
        assert_eq!(w("awk {print>\"/tmp/o\"}"), ["/tmp/o"]);
        assert_eq!(w("gawk --profile=p.out 1"), ["p.out"]);
    }
}
