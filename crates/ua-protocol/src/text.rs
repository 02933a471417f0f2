//! Small pure text helpers shared by crates above this one.

/// Matches `text` against `pattern`, where `*` is any run of characters
/// (`/` included) and `?` any one character; everything else is literal.
/// Used for environment-variable allowlists and session grants.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Two pointers, backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        assert!(wildcard("*", ""));
        assert!(wildcard("LC_*", "LC_ALL"));
        assert!(!wildcard("LC_*", "LANG"));
        assert!(wildcard("*_KEY", "OPENAI_API_KEY"));
        assert!(!wildcard("*_KEY", "KEYBOARD"));
        assert!(wildcard("T?RM", "TERM"));
        assert!(wildcard("*A*B*", "xxAyyBzz"));
        assert!(!wildcard("*A*B", "xxAyyBzz"));
        assert!(wildcard("a*b*c", "abbbc"));
        assert!(wildcard("-name *", "-name *.rs"));
        assert!(!wildcard("status", "status --x"));
        assert!(wildcard("*x*y", "axbxy"));
    }
}
