//! Lexical path handling shared by the walker, the classifier and the deny
//! list. Nothing here touches the filesystem: the classifier is a pure
//! function, and the path the agent names is what the shell will use.

/// Directories whose programs are "the system's" program of that name. A
/// program named by any other path (`./cat`, `/tmp/x/sed`) is an unknown
/// program, whatever its basename.
const SYSTEM_BIN_DIRS: [&str; 6] = ["/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"];

/// Lexically normalises a path: collapses `//` and `/./`, resolves `..`
/// against what precedes it, drops a trailing slash. `~` stays `~`.
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|s| *s != ".." && *s != "~") || (absolute && !out.is_empty()) {
                    out.pop();
                } else if !absolute {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    let body = out.join("/");
    if absolute {
        format!("/{body}")
    } else if body.is_empty() {
        ".".to_string()
    } else {
        body
    }
}

/// The name of the system program that `word` runs, or `None` when `word`
/// names a program by a path outside the system directories.
pub fn system_program(word: &str) -> Option<&str> {
    if !word.contains('/') {
        return Some(word);
    }
    let norm = normalize(word);
    let (dir, base) = norm.rsplit_once('/')?;
    let dir = if dir.is_empty() { "/" } else { dir };
    if SYSTEM_BIN_DIRS.contains(&dir) && !base.is_empty() {
        // Return a slice of the input so callers can borrow it.
        word.rsplit('/').next()
    } else {
        None
    }
}

/// Expands a leading `~` against `home`, and makes relative paths absolute
/// against `cwd`, then normalises.
pub fn absolute(path: &str, cwd: &str, home: &str) -> String {
    if path == "~" {
        return normalize(home);
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return normalize(&format!("{home}/{rest}"));
    }
    if path.starts_with('/') { normalize(path) } else { normalize(&format!("{cwd}/{path}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_collapses_tricks() {
        assert_eq!(normalize("//"), "/");
        assert_eq!(normalize("/usr/.."), "/");
        assert_eq!(normalize("/./etc/"), "/etc");
        assert_eq!(normalize("/../../etc"), "/etc");
        assert_eq!(normalize("~/"), "~");
        assert_eq!(normalize("~/.ssh/../.ssh/id_rsa"), "~/.ssh/id_rsa");
        assert_eq!(normalize("a/../../b"), "../b");
        assert_eq!(normalize("./"), ".");
    }

    #[test]
    fn only_system_dirs_name_system_programs() {
        assert_eq!(system_program("cat"), Some("cat"));
        assert_eq!(system_program("/bin/cat"), Some("cat"));
        assert_eq!(system_program("/usr//bin/sed"), Some("sed"));
        assert_eq!(system_program("./cat"), None);
        assert_eq!(system_program("/tmp/x/sed"), None);
        assert_eq!(system_program("/usr/bin/../../tmp/cat"), None);
    }

    #[test]
    fn absolute_resolves_home_and_cwd() {
        assert_eq!(absolute("~/.ssh", "/w", "/home/u"), "/home/u/.ssh");
        assert_eq!(absolute("../x", "/w/a", "/home/u"), "/w/x");
        assert_eq!(absolute("/etc//passwd", "/w", "/h"), "/etc/passwd");
    }
}
