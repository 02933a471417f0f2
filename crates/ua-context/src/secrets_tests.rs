use super::*;

// Fixtures are assembled at run time so that secret scanners do not flag
// this file; none of them is a real credential.
fn gh(prefix: &str) -> String {
    format!("{prefix}_{}", "a1B2c3D4e5F6".repeat(3))
}

fn assert_redacted(input: &str, kind: &str, secret: &str) {
    let out = redact_secrets(input);
    assert!(out.contains(&format!("[REDACTED:{kind}]")), "{kind} not redacted in {input:?}: {out:?}");
    assert!(!out.contains(secret), "{kind} secret survived in {out:?}");
}

#[test]
fn rules_compile() {
    assert!(COMPILED.is_some(), "{:?}", Compiled::new().err());
}

#[test]
fn github_tokens_of_every_kind() {
    for prefix in ["ghp", "gho", "ghu", "ghs", "ghr"] {
        let t = gh(prefix);
        assert_redacted(&format!("token {t} here"), "github_token", &t);
    }
    let pat = format!("github_pat_11ABCDEFG0{}", "x_Y9".repeat(14));
    assert_redacted(&format!("GH={pat}"), "github_token", &pat);
}

#[test]
fn aws_access_key_and_secret_assignment() {
    let id = ["AKIA", "IOSFODNN7", "EXAMPLE"].concat();
    assert_redacted(&format!("aws_access_key_id = {id}"), "aws_access_key_id", &id);
    let sk = ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"].concat();
    let out = redact_secrets(&format!("aws_secret_access_key = {sk}\nregion = us-east-1")).into_owned();
    assert_eq!(out, "aws_secret_access_key = [REDACTED:aws_secret_key]\nregion = us-east-1");
    assert_redacted(&format!("export AWS_SECRET_ACCESS_KEY=\"{sk}\""), "aws_secret_key", &sk);
}

#[test]
fn slack_stripe_openai_anthropic() {
    let slack = ["xoxb-", "123456789012-", "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"].concat();
    assert_redacted(&slack, "slack_token", &slack);
    let hook = ["https://hooks.slack.com/services/", "T000/B000/XXXXXXXX"].concat();
    assert_redacted(&format!("curl {hook}"), "slack_webhook", "T000/B000");
    for p in ["sk_live_", "rk_live_", "sk_test_"] {
        let k = format!("{p}{}", "4eC39HqLyjWDarjtT1zdp7dc");
        assert_redacted(&k, "stripe_key", &k);
    }
    let openai = format!("sk-proj-{}", "Ab3dEf6hIj9lMn2pQr5tUv8x".repeat(2));
    assert_redacted(&format!("OPENAI={openai}"), "openai_key", &openai);
    let legacy = format!("sk-{}", "T3BlbkFJ".repeat(5));
    assert_redacted(&legacy, "openai_key", &legacy);
    let ant = format!("sk-ant-api03-{}", "Zx9_Yw8-".repeat(8));
    let out = redact_secrets(&format!("key: {ant}")).into_owned();
    assert_eq!(out, "key: [REDACTED:anthropic_key]", "anthropic wins over the generic sk- rule");
}

#[test]
fn jwt_and_authorization_headers() {
    let jwt = [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
    .concat();
    assert_redacted(&format!("cookie={jwt};"), "jwt", &jwt);

    let out = redact_secrets("curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://x");
    assert_eq!(out, "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://x");
    let out = redact_secrets("Authorization: Basic dXNlcjpwYXNzd29yZA==");
    assert_eq!(out, "Authorization: Basic [REDACTED:authorization]");
    let out = redact_secrets("--header \"bearer 0123456789abcdefXYZ\"");
    assert_eq!(out, "--header \"bearer [REDACTED:bearer_token]\"");
}

#[test]
fn pem_private_key_blocks_span_lines() {
    let body = "MIIEowIBAAKCAQEA7\nq3Zx5\nabc==";
    let pem = format!("before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter\n");
    assert_eq!(redact_secrets(&pem), "before\n[REDACTED:private_key]\nafter\n");
    let ssh = format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----");
    assert_eq!(redact_secrets(&ssh), "[REDACTED:private_key]");
    let pgp = format!("-----BEGIN PGP PRIVATE KEY BLOCK-----\n{body}\n-----END PGP PRIVATE KEY BLOCK-----");
    assert_eq!(redact_secrets(&pgp), "[REDACTED:private_key]");
}

#[test]
fn a_truncated_pem_block_is_redacted_to_the_end() {
    let cut = "ok\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n";
    assert_eq!(redact_secrets(cut), "ok\n[REDACTED:private_key]");
}

#[test]
fn public_keys_and_certificates_are_kept() {
    let cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    assert_eq!(redact_secrets(cert), cert);
    let pubkey = "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----";
    assert_eq!(redact_secrets(pubkey), pubkey);
}

#[test]
fn passwords_in_urls() {
    let out = redact_secrets("git clone https://alice:hunter2@example.com/r.git");
    assert_eq!(out, "git clone https://alice:[REDACTED:url_password]@example.com/r.git");
    let out = redact_secrets("DATABASE_URL=postgres://app:s3cr3t@db:5432/app");
    assert_eq!(out, "DATABASE_URL=postgres://app:[REDACTED:url_password]@db:5432/app");
}

#[test]
fn generic_high_entropy_assignments() {
    let random = "q8Zr2LxN5vT0bWc7YkPm3HsJ";
    assert!(shannon_entropy(random) > OTHER_NAME_ENTROPY);
    assert_eq!(redact_secrets(&format!("MY_SERVICE_KEY={random}")), "MY_SERVICE_KEY=[REDACTED:high_entropy]");
    assert_eq!(redact_secrets(&format!(r#"{{"session": "{random}"}}"#)), r#"{"session": "[REDACTED:high_entropy]"}"#);
    assert_eq!(redact_secrets(&format!("value: {random}{random}")), "value: [REDACTED:high_entropy]");
}

#[test]
fn password_assignments_of_any_entropy() {
    assert_eq!(redact_secrets("db_password=correcthorsebatterystaple"), "db_password=[REDACTED:password]");
    assert_eq!(redact_secrets("PGPASSWORD=hunter22 psql"), "PGPASSWORD=[REDACTED:password] psql");
    assert_eq!(redact_secrets(r#"{"password":"abc12345"}"#), r#"{"password":"[REDACTED:password]"}"#);
    assert_eq!(redact_secrets("password=abc"), "password=[REDACTED:password]");
    assert_eq!(redact_secrets("Driver=x;UID=sa;PWD=hunter22;"), "Driver=x;UID=sa;PWD=[REDACTED:password];");
    for kept in [
        "PASSWORD=$DB_PASS",
        "password: (none)",
        "Password: [hidden]",
        "Password: ********",
        "PWD=/home/me/src",
        "OLDPWD=~/x",
    ] {
        assert_eq!(redact_secrets(kept), kept);
    }
}

#[test]
fn credential_files_keep_their_shape() {
    let cases = [
        ("machine h login me password pw1", "machine h login me password [REDACTED:password]"),
        ("machine h\n  login me\n  password pw2\n", "machine h\n  login me\n  password [REDACTED:password]\n"),
        ("requirepass pw3", "requirepass [REDACTED:password]"),
        ("db:5432:app:me:pw4", "db:5432:app:me:[REDACTED:password]"),
        ("*:*:*:me:p\\:w5", "*:*:*:me:[REDACTED:password]"),
        ("password = a b c", "password = [REDACTED:password]"),
        ("secret_key = k6 x=1", "secret_key = [REDACTED:api_key] x=1"),
        ("_auth = dTpw", "_auth = [REDACTED:password]"),
        ("oauth_token: 't7 x'", "oauth_token: '[REDACTED:token]'"),
        (r#"  "auth": "dTpw","#, r#"  "auth": "[REDACTED:password]","#),
        (r#"{"identitytoken": "t8", "x": 1}"#, r#"{"identitytoken": "[REDACTED:token]", "x": 1}"#),
        ("api_token      t9", "api_token      [REDACTED:token]"),
        ("ALTER USER app WITH PASSWORD 'p w'", "ALTER USER app WITH PASSWORD '[REDACTED:password]'"),
        ("CREATE USER 'a'@'%' IDENTIFIED BY 'pw'", "CREATE USER 'a'@'%' IDENTIFIED BY '[REDACTED:password]'"),
        ("SET PASSWORD FOR 'a'@'%' = 'pw'", "SET PASSWORD FOR 'a'@'%' = '[REDACTED:password]'"),
    ];
    for (input, want) in cases {
        assert_eq!(redact_secrets(input), want, "{input:?}");
        assert_eq!(redact_secrets(want), want, "twice: {input:?}");
    }
    for kept in [
        "root:x:0:0:root:/root:/bin/bash",
        "src/main.rs:12:fn:main:ok",
        "password = ${DB_PASSWORD}",
        "token: null",
        "//registry.npmjs.org/:_authToken = (protected)",
        r#"{"token": ""}"#,
        "password     changed      2 days ago",
        "the machine login password prompt appears",
    ] {
        assert!(matches!(redact_secrets(kept), Cow::Borrowed(_)), "changed: {kept:?} -> {:?}", redact_secrets(kept));
    }
}

#[test]
fn ordinary_output_is_untouched_and_borrowed() {
    let texts = [
        "total 48\ndrwxr-xr-x  5 alice staff  160 Nov 21 10:00 src\n",
        "commit: 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id = 123e4567-e89b-12d3-a456-426614174000",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "see https://github.com/rust-lang/rust/blob/master/README.md",
        "password: (none)",
        "task-force: ready",
    ];
    for t in texts {
        assert!(matches!(redact_secrets(t), Cow::Borrowed(_)), "changed: {t:?} -> {:?}", redact_secrets(t));
    }
}

#[test]
fn entropy_bounds() {
    assert_eq!(shannon_entropy(""), 0.0);
    assert_eq!(shannon_entropy("aaaa"), 0.0);
    assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-9);
    assert!(shannon_entropy("0123456789abcdef") <= 4.0 + 1e-9);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_planted_token_never_survives(
            before in "[ -~\n]{0,80}",
            after in "[ -~\n]{0,80}",
            body in "[A-Za-z0-9]{36}",
            prefix in prop::sample::select(vec!["ghp_", "gho_", "ghs_", "xoxb-", "sk_live_", "sk-ant-", "sk-proj-"]),
        ) {
            let token = format!("{prefix}{body}");
            let text = format!("{before} {token} {after}");
            let out = redact_secrets(&text);
            prop_assert!(!out.contains(&body), "{:?} -> {:?}", text, out);
        }

        #[test]
        fn redaction_is_idempotent(text in "[ -~\n]{0,200}") {
            let once = crate::scrub(&text).into_owned();
            let twice = crate::scrub(&once).into_owned();
            prop_assert_eq!(once, twice);
        }
    }
}
