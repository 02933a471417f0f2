//! Secrets in command lines and credential files that the terminal
//! prints, not only types: `history` lists the setters the user ran, a
//! `bash -x` trace shows a deploy script's commands with its token
//! expanded, and `cat` shows `~/.netrc`, `~/.pgpass`, docker's
//! `config.json` and `~/.pypirc`. The fake model server's record of the
//! request holds `[REDACTED:…]` where each secret was, and never the
//! secret.

use crate::agent::model;
use crate::command_line_secrets::{body, system};
use crate::support::*;

/// Programs the typed lines and the script name, harmless here.
const FUNCTIONS: &str = "aws(){ :; }; npm(){ :; }; git(){ :; }; login(){ :; }\n";

/// What the user types: setters whose value is a secret, and a command
/// after an assignment.
const TYPED: &[&str] = &[
    "SOMETHING=docker login -u me -p Pq8n10 registry.invalid",
    "aws configure set aws_secret_access_key Pq8n01",
    "npm config set //registry.npmjs.org/:_authToken Pq8n02",
    "git config --global user.password Pq8n03",
];

/// A deploy script that reads its token from a file: its `set -x` trace
/// shows the token in every command that uses it.
const DEPLOY: &str = r#"docker() { :; }; gh() { :; }; heroku() { :; }
TOKEN=$(cat "$HOME/.ci-token")
DOCKER_CONFIG=/tmp/docker-ci docker login -u ci -p "$TOKEN" ghcr.invalid
gh secret set DEPLOY_KEY --body "$TOKEN"
heroku config:set STRIPE="$TOKEN" -a shop
"#;

/// Credential files, each holding one secret.
const FILES: &[(&str, &str)] = &[
    (
        ".netrc",
        "machine api.example.invalid login me password Pq8n05\nmachine git.example.invalid\n  login me\n  password Pq8n06\n",
    ),
    (".pgpass", "db.example.invalid:5432:app:me:Pq8n07\n"),
    // base64 of `me:Pq8n08`
    (
        ".docker/config.json",
        "{\n  \"auths\": {\n    \"ghcr.invalid\": {\n      \"auth\": \"bWU6UHE4bjA4\"\n    }\n  }\n}\n",
    ),
    (".pypirc", "[pypi]\nusername = __token__\npassword = Pq8n09 and more\n"),
];

const SECRETS: &[&str] =
    &["Pq8n01", "Pq8n02", "Pq8n03", "Pq8n04", "Pq8n05", "Pq8n06", "Pq8n07", "bWU6UHE4bjA4", "Pq8n09", "Pq8n10"];

/// What the model may see of the printed lines, in the terminal's recent
/// lines and in the output of the commands the user ran.
const SHOWN: &[&str] = &[
    // `history`
    "SOMETHING=docker login -u me -p [REDACTED:password] registry.invalid",
    "aws configure set aws_secret_access_key [REDACTED:api_key]",
    "npm config set //registry.npmjs.org/:_authToken [REDACTED:token]",
    "git config --global user.password [REDACTED:password]",
    // `bash -x deploy.sh`
    "+ TOKEN=[REDACTED:token]",
    "+ DOCKER_CONFIG=/tmp/docker-ci\n+ docker login -u ci -p [REDACTED:password] ghcr.invalid",
    "+ gh secret set DEPLOY_KEY --body [REDACTED:secret]",
    "+ heroku config:set STRIPE=[REDACTED:secret] -a shop",
    // `cat`
    "machine api.example.invalid login me password [REDACTED:password]",
    "  password [REDACTED:password]",
    "db.example.invalid:5432:app:me:[REDACTED:password]",
    "\"auth\": \"[REDACTED:password]\"",
    "password = [REDACTED:password]",
];

#[test]
fn secrets_in_printed_command_lines_and_credential_files_reach_the_model_redacted() {
    let home = Home::new();
    home.write(".bashrc", &format!("PS1='{PROMPT}'\nHISTFILE=~/.bash_history_test\n{FUNCTIONS}"));
    home.write(".ci-token", "Pq8n04\n");
    home.write("deploy.sh", DEPLOY);
    for (path, text) in FILES {
        home.write(path, text);
    }
    home.write(
        ".config/unixagent/config.toml",
        "[shell]\nconfirm_mode = \"each\"\n[judge]\nmode = \"off\"\n[context]\nterminal_lines = 300\n",
    );
    let server = model("[[turn]]\ntext = \"ok\"\n");
    let mut t = home
        .spawn("bash")
        .size(200, 50)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "")
        .start();
    wait_prompt(&t, 1);
    for line in TYPED {
        run(&mut t, line);
    }
    run(&mut t, "history");
    run(&mut t, "bash -x deploy.sh");
    run(&mut t, "cat ~/.netrc ~/.pgpass ~/.docker/config.json ~/.pypirc");
    t.send("# what did I run?\r");
    t.wait_text("ok");
    server.wait_until(std::time::Duration::from_secs(20), |r| !r.is_empty()).expect("the request arrives");

    let sent = body(&server, 0);
    for s in SECRETS {
        assert!(!sent.contains(s), "{s} reached the model:\n{sent}");
    }
    let sys = system(&server, 0);
    let (commands, terminal) = sys.split_once("## Recent terminal output").expect("both sections");
    for shown in SHOWN {
        assert!(commands.contains(shown), "the commands' output lacks {shown:?}:\n{commands}");
        assert!(terminal.contains(shown), "the terminal lines lack {shown:?}:\n{terminal}");
    }
}
