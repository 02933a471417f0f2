use super::*;
use crate::secrets::redact_secrets;

/// Each line of terminal text and what the model may see of it. Every
/// password here is `hunter2`-like and low in entropy: no rule of a known
/// format catches them, only where they stand.
const REDACTED: &[(&str, &str)] = &[
    // sshpass
    ("sshpass -p hunter2 ssh host", "sshpass -p [REDACTED:password] ssh host"),
    ("sshpass -phunter2 ssh -p 22 host", "sshpass -p[REDACTED:password] ssh -p 22 host"),
    ("sshpass -v -p 'a b c' ssh host", "sshpass -v -p '[REDACTED:password]' ssh host"),
    ("/usr/bin/sshpass -p hunter2 scp f host:", "/usr/bin/sshpass -p [REDACTED:password] scp f host:"),
    // the mysql family: attached only
    ("mysql -u root -phunter2 app", "mysql -u root -p[REDACTED:password] app"),
    ("mysql -p\"x y\" -h db", "mysql -p\"[REDACTED:password]\" -h db"),
    ("mysql -p'x y'", "mysql -p'[REDACTED:password]'"),
    ("mysqldump -uroot -phunter2 db > d.sql", "mysqldump -uroot -p[REDACTED:password] db > d.sql"),
    ("mariadb-dump -phunter2 db", "mariadb-dump -p[REDACTED:password] db"),
    ("mysql --password=hunter2 db", "mysql --password=[REDACTED:password] db"),
    ("mysql --password=pw db", "mysql --password=[REDACTED:password] db"),
    ("mysql --password=\"a b\" db", "mysql --password=\"[REDACTED:password]\" db"),
    ("7z x -phunter2 a.7z", "7z x -p[REDACTED:password] a.7z"),
    // environment assignments, any length, quoted or not
    ("PGPASSWORD=pw psql -h db", "PGPASSWORD=[REDACTED:password] psql -h db"),
    ("PGPASSWORD='a b' psql -p 5432", "PGPASSWORD='[REDACTED:password]' psql -p 5432"),
    ("export DB_PASSWORD=hunter2", "export DB_PASSWORD=[REDACTED:password]"),
    ("export SOME_SERVICE_PASSWORD=\"x y z\"", "export SOME_SERVICE_PASSWORD=\"[REDACTED:password]\""),
    ("export GITHUB_TOKEN=abc123", "export GITHUB_TOKEN=[REDACTED:token]"),
    ("export DB_PASS=pw", "export DB_PASS=[REDACTED:password]"),
    ("MYSQL_PWD=pw mysql", "MYSQL_PWD=[REDACTED:password] mysql"),
    ("SSHPASS=pw sshpass -e ssh h", "SSHPASS=[REDACTED:password] sshpass -e ssh h"),
    ("export OPENAI_API_KEY=short", "export OPENAI_API_KEY=[REDACTED:api_key]"),
    ("JWT_SECRET=s3 node app.js", "JWT_SECRET=[REDACTED:secret] node app.js"),
    ("env REDISCLI_AUTH=pw redis-cli", "env REDISCLI_AUTH=[REDACTED:password] redis-cli"),
    (
        "docker run -e POSTGRES_PASSWORD=pw -p 5432:5432 pg",
        "docker run -e POSTGRES_PASSWORD=[REDACTED:password] -p 5432:5432 pg",
    ),
    (
        "\"Env\": [\"POSTGRES_PASSWORD=a b\", \"PATH=/bin\"]",
        "\"Env\": [\"POSTGRES_PASSWORD=[REDACTED:password]\", \"PATH=/bin\"]",
    ),
    ("password=abc", "password=[REDACTED:password]"),
    (
        "java -Dspring.datasource.password=pw -jar a.jar",
        "java -Dspring.datasource.password=[REDACTED:password] -jar a.jar",
    ),
    (
        "mount -o username=u,password=pw,uid=1000 //s/x /mnt",
        "mount -o username=u,password=[REDACTED:password],uid=1000 //s/x /mnt",
    ),
    ("curl 'https://api/x?access_token=abc&q=1'", "curl 'https://api/x?access_token=[REDACTED:token]&q=1'"),
    ("//registry.npmjs.org/:_authToken=abc", "//registry.npmjs.org/:_authToken=[REDACTED:token]"),
    // options named for a secret, space-separated or `=`-attached
    ("gh auth login --token abc", "gh auth login --token [REDACTED:token]"),
    ("cli --token=abc", "cli --token=[REDACTED:token]"),
    ("cli --api-key abc", "cli --api-key [REDACTED:api_key]"),
    ("cli --api-key=abc", "cli --api-key=[REDACTED:api_key]"),
    ("cli --apikey abc", "cli --apikey [REDACTED:api_key]"),
    ("svn co --password 'a b c' url", "svn co --password '[REDACTED:password]' url"),
    ("cli --password \"x y\" --user me", "cli --password \"[REDACTED:password]\" --user me"),
    ("cli --client-secret s3 --client-id app", "cli --client-secret [REDACTED:secret] --client-id app"),
    ("cli --secret s3", "cli --secret [REDACTED:secret]"),
    ("cli --access-token t0k", "cli --access-token [REDACTED:token]"),
    ("cli --auth-token t0k", "cli --auth-token [REDACTED:token]"),
    ("cli --refresh-token t0k", "cli --refresh-token [REDACTED:token]"),
    ("aws --secret-access-key k3y", "aws --secret-access-key [REDACTED:api_key]"),
    ("gpg --batch --passphrase pp -d f.gpg", "gpg --batch --passphrase [REDACTED:password] -d f.gpg"),
    ("wget --http-password=pw url", "wget --http-password=[REDACTED:password] url"),
    ("kubectl --token=abc get pods", "kubectl --token=[REDACTED:token] get pods"),
    ("curl --oauth2-bearer abc url", "curl --oauth2-bearer [REDACTED:token] url"),
    ("influx -password pw", "influx -password [REDACTED:password]"),
    ("keytool -list -storepass changeit", "keytool -list -storepass [REDACTED:password]"),
    ("openssl rsa -passin pass:pw -in k", "openssl rsa -passin pass:[REDACTED:password] -in k"),
    ("cli --token \\\n  abc", "cli --token \\\n  [REDACTED:token]"),
    ("http --auth me:pw example.org", "http --auth me:[REDACTED:password] example.org"),
    // docker login and friends
    ("docker login -u me -p hunter2 registry", "docker login -u me -p [REDACTED:password] registry"),
    ("docker login -u me -phunter2", "docker login -u me -p[REDACTED:password]"),
    ("docker login --password hunter2 reg", "docker login --password [REDACTED:password] reg"),
    ("podman login -p pw quay.io", "podman login -p [REDACTED:password] quay.io"),
    ("helm registry login -u me -p pw reg", "helm registry login -u me -p [REDACTED:password] reg"),
    // htpasswd
    ("htpasswd -b .htpasswd alice pw", "htpasswd -b .htpasswd alice [REDACTED:password]"),
    ("htpasswd -bc .htpasswd alice 'a b'", "htpasswd -bc .htpasswd alice '[REDACTED:password]'"),
    ("htpasswd -nb alice pw", "htpasswd -nb alice [REDACTED:password]"),
    ("htpasswd -B -C 10 -b f alice pw", "htpasswd -B -C 10 -b f alice [REDACTED:password]"),
    // curl and other user:password forms
    ("curl -u user:pw https://x", "curl -u user:[REDACTED:password] https://x"),
    ("curl -su user:pw https://x", "curl -su user:[REDACTED:password] https://x"),
    ("curl -uuser:pw https://x", "curl -uuser:[REDACTED:password] https://x"),
    ("curl --user 'user:a b' https://x", "curl --user 'user:[REDACTED:password]' https://x"),
    ("curl -U proxy:pw https://x", "curl -U proxy:[REDACTED:password] https://x"),
    ("smbclient //s/share -U alice%pw", "smbclient //s/share -U alice%[REDACTED:password]"),
    ("lftp -u alice,pw ftp.example.org", "lftp -u alice,[REDACTED:password] ftp.example.org"),
    // other programs with a password option of their own
    ("redis-cli -h r -a pw ping", "redis-cli -h r -a [REDACTED:password] ping"),
    ("mongosh -u admin -p pw", "mongosh -u admin -p [REDACTED:password]"),
    ("ldapsearch -x -D cn=admin -w pw", "ldapsearch -x -D cn=admin -w [REDACTED:password]"),
    ("sqlcmd -S db -U sa -P pw", "sqlcmd -S db -U sa -P [REDACTED:password]"),
    ("zip -P pw out.zip f", "zip -P [REDACTED:password] out.zip f"),
    ("plink -pw pw host", "plink -pw [REDACTED:password] host"),
    ("xfreerdp /u:me /p:pw /v:host", "xfreerdp /u:me /p:[REDACTED:password] /v:host"),
    // passwords in URLs, any scheme
    ("git clone https://me:pw@example.com/r.git", "git clone https://me:[REDACTED:url_password]@example.com/r.git"),
    ("redis-cli -u redis://:pw@host:6379", "redis-cli -u redis://:[REDACTED:url_password]@host:6379"),
    ("psql postgresql://app:p@ss@db/app", "psql postgresql://app:[REDACTED:url_password]@db/app"),
    ("amqp://guest:pw@mq:5672", "amqp://guest:[REDACTED:url_password]@mq:5672"),
    // at a prompt, in `set -x` traces, in `ps`, inside quotes
    ("me@host:~/src$ mysql -phunter2", "me@host:~/src$ mysql -p[REDACTED:password]"),
    ("+ sshpass -p pw ssh h", "+ sshpass -p [REDACTED:password] ssh h"),
    ("me  4242  0.0  mysql -uroot -phunter2", "me  4242  0.0  mysql -uroot -p[REDACTED:password]"),
    ("echo 'mysql -pSECRET'", "echo 'mysql -p[REDACTED:password]'"),
    ("echo \"curl -u me:pw x\" | sh", "echo \"curl -u me:[REDACTED:password] x\" | sh"),
    ("bash -c 'export API_TOKEN=abc; run'", "bash -c 'export API_TOKEN=[REDACTED:token]; run'"),
    ("it's mysql -pfoo here", "it's mysql -p[REDACTED:password] here"),
    // several on one line
    (
        "PGPASSWORD=a psql && mysql -pb && curl -u u:c x | sshpass -p d ssh h; cli --token e",
        "PGPASSWORD=[REDACTED:password] psql && mysql -p[REDACTED:password] && curl -u u:[REDACTED:password] x \
         | sshpass -p [REDACTED:password] ssh h; cli --token [REDACTED:token]",
    ),
    // a command after an assignment, even one whose value is redacted
    ("API_TOKEN=docker login -u me -p pw r", "API_TOKEN=[REDACTED:token] login -u me -p [REDACTED:password] r"),
    ("SECRET=mysql -ppw", "SECRET=[REDACTED:secret] -p[REDACTED:password]"),
    // prompts and logs that run into the program's name
    ("##[command]docker login -p pw", "##[command]docker login -p [REDACTED:password]"),
    ("C:\\src>docker.exe login -p pw", "C:\\src>docker.exe login -p [REDACTED:password]"),
    // setters: a value after a key that names a secret
    ("aws configure set aws_session_token t0k", "aws configure set aws_session_token [REDACTED:token]"),
    (
        "aws configure set --profile ci profile.ci.aws_secret_access_key k3y",
        "aws configure set --profile ci profile.ci.aws_secret_access_key [REDACTED:api_key]",
    ),
    ("npm config set //r.example/:_authToken t0k", "npm config set //r.example/:_authToken [REDACTED:token]"),
    ("npm config set _auth dTpw", "npm config set _auth [REDACTED:password]"),
    ("git config --global user.password pw", "git config --global user.password [REDACTED:password]"),
    ("git config sendemail.smtpPass pw", "git config sendemail.smtpPass [REDACTED:password]"),
    ("poetry config http-basic.pypi me pw", "poetry config http-basic.pypi me [REDACTED:password]"),
    ("set -gx GITHUB_TOKEN t0k", "set -gx GITHUB_TOKEN [REDACTED:token]"),
    ("setenv API_KEY k3y", "setenv API_KEY [REDACTED:api_key]"),
    ("doppler configure set token t0k", "doppler configure set token [REDACTED:token]"),
    ("nmcli dev wifi connect Home password pw", "nmcli dev wifi connect Home password [REDACTED:password]"),
    (
        "nmcli dev wifi connect Home password pw ifname wlan0",
        "nmcli dev wifi connect Home password [REDACTED:password] ifname wlan0",
    ),
    // secret stores: every value
    ("gh secret set NAME --body s3", "gh secret set NAME --body [REDACTED:secret]"),
    ("gh secret set NAME -bs3", "gh secret set NAME -b[REDACTED:secret]"),
    ("doppler secrets set NAME s3", "doppler secrets set NAME [REDACTED:secret]"),
    ("vault kv put secret/app a=s3 b='x y'", "vault kv put secret/app a=[REDACTED:secret] b='[REDACTED:secret]'"),
    ("heroku config:set A=s3 -a app", "heroku config:set A=[REDACTED:secret] -a app"),
    (
        "kubectl create secret generic db --from-literal=user=u -n prod",
        "kubectl create secret generic db --from-literal=user=[REDACTED:secret] -n prod",
    ),
    ("pulumi config set --secret stripe s3", "pulumi config set --secret stripe [REDACTED:secret]"),
    // a positional token
    ("cargo login --registry r t0k", "cargo login --registry r [REDACTED:token]"),
    ("vault login t0k", "vault login [REDACTED:token]"),
    ("ngrok config add-authtoken t0k", "ngrok config add-authtoken [REDACTED:token]"),
    ("mc alias set s http://h ak sk", "mc alias set s http://h [REDACTED:secret] [REDACTED:secret]"),
    (
        "security add-generic-password -a me -s svc -w pw",
        "security add-generic-password -a me -s svc -w [REDACTED:password]",
    ),
    // request headers named for a credential
    ("curl -H 'X-Api-Key: k3y' u", "curl -H 'X-Api-Key: [REDACTED:api_key]' u"),
    ("curl -H 'Authorization: Basic dTpw' u", "curl -H 'Authorization: Basic [REDACTED:secret]' u"),
    ("http GET u PRIVATE-TOKEN:t0k", "http GET u PRIVATE-TOKEN:[REDACTED:token]"),
    ("wget --header='Cookie: s=1' u", "wget --header='Cookie: [REDACTED:secret]' u"),
    // a secret fed on stdin on the same line
    ("echo pw | docker login -u me --password-stdin", "echo [REDACTED:password] | docker login -u me --password-stdin"),
    (
        "echo -n 'p w' | docker login --password-stdin r",
        "echo -n '[REDACTED:password]' | docker login --password-stdin r",
    ),
    ("printf '%s' t0k | gh auth login --with-token", "printf '%s' [REDACTED:password] | gh auth login --with-token"),
    ("echo 'u:pw' | sudo chpasswd", "echo '[REDACTED:password]' | sudo chpasswd"),
    ("gh auth login --with-token <<< t0k", "gh auth login --with-token <<< [REDACTED:password]"),
    // A help text's placeholder is one of its option's own kind.
    ("cli --token SECRET", "cli --token [REDACTED:token]"),
    ("cli --password SECRET", "cli --password [REDACTED:password]"),
    // Six characters or more after `password=` are the generic rule's,
    // which knows no placeholders.
    ("  -p, --password=PASSWORD", "  -p, --password=[REDACTED:password]"),
    (
        "cli --token t1 --secret s2 --password p3",
        "cli --token [REDACTED:token] --secret [REDACTED:secret] --password [REDACTED:password]",
    ),
];

/// Text that speaks of passwords and tokens, or uses `-p` for something
/// else: none of it may change.
const KEPT: &[&str] = &[
    "grep -r password src/",
    "echo \"reset your password here\"",
    "git log --grep token",
    "git log --grep=token",
    "cargo test token_refresh",
    "ls --password-file-dir /tmp",
    "cli --password-file /run/secrets/pw",
    "cli --token-file ~/.token",
    "docker login -u me --password-stdin reg",
    "psql --no-password -h db",
    "ansible-playbook --ask-pass site.yml",
    "ssh -p 22 host",
    "docker run -p 8080:80 nginx",
    "docker run -p 8080:80 img login",
    "mysql -p",
    "mysql -p dbname",
    "mysql -u root -p --password dbname",
    "psql -p 5432 -h db",
    "curl -u user https://x",
    "sshpass -f pwfile ssh -p 22 host",
    "sshpass -e ssh -p 2222 host",
    "htpasswd -c .htpasswd alice",
    "htpasswd -n alice",
    "PASSWORD=$DB_PASS",
    "export TOKEN=\"$(cat ~/.token)\"",
    "cli --token \"${TOKEN}\"",
    "cli --password $PW",
    "mysql -p\"$MYSQL_PW\"",
    "curl -u \"me:$PW\" x",
    "MAX_TOKENS=100",
    "TOKEN_LIMIT=5",
    "PWD=/home/me",
    "OLDPWD=/tmp",
    "REQUIRE_PASSWORD=true",
    "password=",
    "password: (none)",
    "ffmpeg -i a.mp4 -pass 1 -f null /dev/null",
    "openssl rsa -passin env:PW -in k",
    "docker build --secret id=npm,src=.npmrc .",
    "cli --sort-key name",
    "ssh-keygen -f key",
    "  --token string   token for the API",
    "  --token TOKEN        the API token",
    "       --http-password=PASS        set http password to PASS",
    "      --change-passphrase            change a passphrase",
    "       If --oauth2-bearer is provided several times, the last set value",
    "       See also -x, --proxy and --proxy-tlspassword. Added in 7.52.0.",
    "        curl -u name:password --basic https://example.com",
    "curl --mail-auth user@example.com -T mail smtp://example.com/",
    "  --api-key <API_KEY>  key",
    "helm install --set db.password={{ .Values.pw }} x",
    "kubectl get secret mysecret -o yaml",
    "git commit -m \"rotate the api token\"",
    "it passed key tests",
    "see https://github.com/rust-lang/rust",
    "ssh://git@github.com:22/x.git",
    "cli --token --verbose",
    "cli --password -",
    "mysql -pSECRET-was-[REDACTED:password]",
    // setters with nothing secret in them, or whose value is elsewhere
    "aws configure set region us-east-1",
    "aws configure get aws_secret_access_key",
    "npm config get //registry.npmjs.org/:_authToken",
    "npm config set always-auth true",
    "git config --global user.signingkey 1A2B3C4D",
    "git config --unset user.password",
    "set -gx GITHUB_TOKEN (gh auth token)",
    "set -e GITHUB_TOKEN",
    "set -x PATH $PATH ~/bin",
    "set the password to something long",
    "a1b2c3d set token refresh interval",
    "config user.password is deprecated",
    "The config file sets the password for the database.",
    "gh secret set NAME < token.txt",
    "gh secret set NAME --body \"$VALUE\"",
    "vault kv put secret/app @data.json",
    "vault kv put secret/app password=-",
    "vault login -method=oidc",
    "kubectl create secret generic db --from-file=./db.env",
    "heroku config:get A -a app",
    "cargo login",
    "cargo test -p ua-context token",
    "mc alias set local http://127.0.0.1:9000",
    "security find-generic-password -s svc -w",
    "curl -H 'Accept: application/json' u",
    "curl -H \"X-Api-Key: $KEY\" u",
    "http GET localhost:8080/items",
    "docker-compose login -u me -p pw",
    "echo \"$CI_JOB_TOKEN\" | docker login -u ci --password-stdin",
    "cat ~/.token | docker login --password-stdin",
    "echo done | tee log; docker login --password-stdin < pw.txt",
];

#[test]
fn secrets_on_command_lines_are_redacted_in_shape() {
    let mut failures = Vec::new();
    for (input, want) in REDACTED {
        let got = redact_secrets(input);
        if got != *want {
            failures.push(format!("  {input:?}\n    got  {got:?}\n    want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {}:\n{}", failures.len(), REDACTED.len(), failures.join("\n"));
}

#[test]
fn ordinary_words_and_other_uses_of_p_are_kept() {
    let changed: Vec<String> = KEPT
        .iter()
        .filter(|t| !t.contains("[REDACTED"))
        .filter_map(|t| match redact_secrets(t) {
            Cow::Borrowed(_) => None,
            Cow::Owned(o) => Some(format!("  {t:?} -> {o:?}")),
        })
        .collect();
    assert!(changed.is_empty(), "changed:\n{}", changed.join("\n"));
}

#[test]
fn redacting_twice_changes_nothing() {
    for (input, _) in REDACTED {
        let once = redact_secrets(input).into_owned();
        assert_eq!(redact_secrets(&once), once, "{input:?}");
    }
}

#[test]
fn names_of_secrets() {
    let secret = |n: &str| classify(n);
    assert_eq!(secret("--password"), Some(Name::Secret(Kind::Password)));
    assert_eq!(secret("PGPASSWORD"), Some(Name::Secret(Kind::Password)));
    assert_eq!(secret("db.pass"), Some(Name::Secret(Kind::Password)));
    assert_eq!(secret("--auth"), Some(Name::UserPass));
    assert_eq!(secret("-passout"), Some(Name::OpensslPass));
    assert_eq!(secret("--pass"), Some(Name::OpensslPass), "only a pass:VALUE after it");
    for not in ["pass", "PWD", "--private-key", "--key", "--no-token", "--ask-vault-pass", "tokens"] {
        assert_eq!(secret(not), None, "{not}");
    }
}

#[test]
fn the_tokenizer_never_splits_a_character_and_never_runs_away() {
    // Unterminated quotes, escapes before multi-byte characters, a
    // thousand anchors on one line: no panic. How long the long ones take
    // (a quadratic scan would take seconds) is the scrub benchmark's
    // "pathological lines" row, not a timed assertion here.
    let nasty = [
        "--password 'é".to_string(),
        "--password \\é".to_string(),
        format!("--password '{}", "é".repeat(2000)),
        "mysql -p\"\\".to_string(),
        "--token ".repeat(1000),
        "mysql ".repeat(1000) + "-pfoo",
        format!("x=1,{}", "password=a,".repeat(500)),
        "curl -u".to_string(),
        "htpasswd -b".to_string(),
        "--token=".to_string(),
        format!("{}\n", "--password '".repeat(50_000)),
        "a".repeat(200_000) + "key=" + &"b".repeat(200_000),
    ];
    for t in &nasty {
        let out = redact_secrets(t);
        assert!(out.len() <= t.len() + 64 * t.matches(['-', '=']).count().max(1), "{t:.40}");
    }
    assert!(redact_secrets(&("mysql ".repeat(1000) + "-pfoo")).ends_with("mysql -p[REDACTED:password]"));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that make text the tokenizer has to think about, quotes
    /// left open included.
    const PIECES: &[&str] = &[
        " ",
        "\n",
        "\t",
        "'",
        "\"",
        "\\",
        "=",
        ",",
        ";",
        "|",
        "&",
        "$",
        "`",
        "(",
        ")",
        "<",
        ">",
        ":",
        "@",
        "%",
        "é",
        "a",
        "b1",
        "-p",
        "-u",
        "-a",
        "--",
        "mysql ",
        "sshpass ",
        "curl ",
        "docker ",
        "login ",
        "htpasswd ",
        "-b ",
        "--token",
        "--password",
        "PASSWORD=",
        "api_key",
        "pass:",
        "https://u:",
        "[REDACTED:password]",
        "config set ",
        "secrets set ",
        "set -gx ",
        "kv put ",
        "cargo login ",
        "vault ",
        "aws_secret_access_key ",
        "_authToken ",
        "http-basic.x ",
        "-H ",
        "X-Api-Key:",
        "docker.exe ",
        "##[command]",
    ];

    /// Words of command lines, each balanced in its quotes.
    const WORDS: &[&str] = &[
        "mysql",
        "-p",
        "-pabc",
        "'a b'",
        "\"x y\"",
        "--token",
        "--password",
        "--password=",
        "PASSWORD=",
        "a=b",
        "login",
        "htpasswd",
        "-b",
        "-nb",
        "curl",
        "-u",
        "u:p",
        "|",
        ";",
        "&&",
        "$X",
        "\"$X\"",
        "é",
        "docker",
        "sshpass",
        "ssh",
        "-p22",
        "x,y",
        "--api-key=",
        "API_TOKEN=",
        "https://u:p@h/x",
        "-a",
        "redis-cli",
        "'c'",
        "\\\n",
        "-e",
        "env",
        "config",
        "set",
        "secrets",
        "kv",
        "put",
        "--secret",
        "--body",
        "user.password",
        "GITHUB_TOKEN",
        "http-basic.x",
        "vault",
        "cargo",
        "-H",
        "'X-Api-Key: k'",
        "mysql.exe",
    ];
    const SEPARATORS: &[&str] = &[" ", "", "\n", "\t", "="];

    /// Forms that carry `{}` as the password.
    const FORMS: &[&str] = &[
        "sshpass -p {} ssh h",
        "mysql -u root -p{} db",
        "PGPASSWORD={} psql",
        "export MY_TOKEN={}",
        "cli --password {} x",
        "cli --api-key={} x",
        "curl -u me:{} url",
        "docker login -u me -p {} reg",
        "htpasswd -b f me {}",
        "htpasswd -nb me {}",
        "smbclient //s/x -U me%{}",
        "redis-cli -a {} ping",
        "aws configure set aws_secret_access_key {}",
        "npm config set //r.example/:_authToken {}",
        "git config --global user.password {}",
        "set -gx GITHUB_TOKEN {}",
        "gh secret set NAME --body {}",
        "doppler secrets set NAME {}",
        "vault kv put secret/app k={}",
        "heroku config:set K={} -a app",
        "cargo login {}",
        "http GET url X-Api-Key:{}",
        "API_TOKEN=docker login -u me -p {} reg",
    ];

    fn anchors() -> Regex {
        Regex::new(&pattern()).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The command-line pass reads its own output the same way. (The
        /// whole scrubber is checked on random text in secrets_tests.rs;
        /// on text built to confuse, a rule of a known format and this
        /// pass can disagree about where a value ends, which only moves
        /// where the redaction stops.)
        #[test]
        fn command_lines_are_redacted_once_and_for_all(
            words in prop::collection::vec((prop::sample::select(WORDS), prop::sample::select(SEPARATORS)), 0..16),
        ) {
            let text: String = words.iter().flat_map(|(w, s)| [*w, *s]).collect();
            let re = anchors();
            let once = redact(&text, &re).into_owned();
            let twice = redact(&once, &re).into_owned();
            prop_assert_eq!(once, twice, "{:?}", text);
        }

        #[test]
        fn text_built_to_confuse_never_panics(parts in prop::collection::vec(prop::sample::select(PIECES), 0..80)) {
            let text = parts.concat();
            let once = redact_secrets(&text);
            // Markers are never nested.
            prop_assert!(!once.contains("[REDACTED:[REDACTED"), "{:?} -> {:?}", text, once);
        }

        #[test]
        fn a_planted_password_never_survives(
            before in "[ -~]{0,40}",
            after in "[ -~]{0,40}",
            form in prop::sample::select(FORMS),
            secret in "[A-Za-z0-9]{6,12}",
            quoting in 0..3usize,
        ) {
            let secret = format!("Zq{secret}");
            let value = match quoting {
                0 => secret.clone(),
                1 => format!("'{secret} x'"),
                _ => format!("\"{secret} x\""),
            };
            let text = format!("{before}\n{} {after}", form.replace("{}", &value));
            let out = redact_secrets(&text);
            prop_assert!(!out.contains(&secret), "{:?} -> {:?}", text, out);
        }
    }
}
