//! The environment allowlist (`context.include_env`, design §8.1, §14.3).
//!
//! Only variables the user named are sent, and even a named one is
//! withheld when its name looks like a credential: an allowlist entry
//! `*` must not be a way to send `AWS_SECRET_ACCESS_KEY`.

use ua_protocol::text::wildcard;

/// Names (glob patterns, case-insensitive) never sent whatever the
/// allowlist says.
pub const NEVER_SEND: &[&str] = &[
    "*_KEY",
    "*_KEYS",
    "*_KEY_ID",
    "*APIKEY*",
    "*API_KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PWD",
    "*CREDENTIAL*",
    "*_AUTH",
    "*_AUTH_*",
    "*COOKIE*",
    "*PRIVATE*",
    "*SESSION*",
    "*_DSN",
    "*DATABASE_URL*",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "UNIXAGENT_*",
];

/// True when `name` must never be sent, allowlisted or not.
pub fn is_sensitive_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    NEVER_SEND.iter().any(|p| wildcard(p, &upper))
}

/// The variables of `vars` that `include` allows (exact names or globs
/// with `*` and `?`, case-sensitive as variable names are) and that are not
/// sensitive, sorted by name so the prompt is stable between calls.
pub fn allowed_env<I, K, V>(include: &[impl AsRef<str>], vars: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<String>,
{
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .filter(|(k, _)| include.iter().any(|p| wildcard(p.as_ref(), k)) && !is_sensitive_name(k))
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_pass_even_with_a_star() {
        let vars = [
            ("PATH", "/bin"),
            ("TERM", "xterm"),
            ("OPENAI_API_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("DB_PASSWORD", "x"),
            ("AWS_PROFILE", "dev"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("CLIENT_SECRET", "x"),
            ("GCP_CREDENTIALS", "x"),
            ("github_token", "x"),
            ("DATABASE_URL", "postgres://u:p@h/db"),
            ("SENTRY_DSN", "x"),
            ("OLDPWD", "/tmp"),
            ("KEYBOARD", "us"),
        ];
        let got = allowed_env(&["*"], vars);
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["KEYBOARD", "OLDPWD", "PATH", "TERM"]);
    }

    #[test]
    fn only_listed_names_pass_sorted() {
        let vars = vec![
            ("TERM".to_string(), "xterm".to_string()),
            ("LANG".into(), "C.UTF-8".into()),
            ("LC_ALL".into(), "C".into()),
            ("HOME".into(), "/home/u".into()),
        ];
        let got = allowed_env(&["LC_*", "TERM", "lang"], vars);
        assert_eq!(got, [("LC_ALL".to_string(), "C".to_string()), ("TERM".into(), "xterm".into())]);
        assert!(allowed_env(&[] as &[&str], [("TERM", "x")]).is_empty());
    }
}
