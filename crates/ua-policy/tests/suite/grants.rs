//! Session grants in their three shapes, consulted only where the cascade
//! would ask.

use super::Env;
use ua_policy::gate::{DecidedBy, Outcome};
use ua_policy::grants::{Grant, Grants};

fn outcome(env: &Env, grants: &Grants, cmd: &str) -> Outcome {
    env.gate().decide(&env.request(cmd), grants).outcome
}

#[test]
fn exact_grant_covers_only_that_command() {
    let env = Env::new();
    let mut g = Grants::new();
    g.add(Grant::exact(" touch a.txt "));
    let d = env.gate().decide(&env.request("touch a.txt"), &g);
    assert_eq!(d.outcome, Outcome::Allow);
    assert_eq!(d.decided_by, DecidedBy::Grant { grant: Grant::exact("touch a.txt") });
    assert_eq!(outcome(&env, &g, "touch b.txt"), Outcome::Ask);
    assert_eq!(outcome(&env, &g, "touch a.txt; touch b.txt"), Outcome::Ask);
}

#[test]
fn pattern_grant_matches_the_arguments() {
    let env = Env::new();
    let mut g = Grants::new();
    g.add(Grant::pattern("git", "commit *"));
    assert_eq!(outcome(&env, &g, "git commit -m 'fix the build'"), Outcome::Allow);
    assert_eq!(outcome(&env, &g, "git push"), Outcome::Ask);
    assert_eq!(outcome(&env, &g, "git commit -m x && git push"), Outcome::Ask);
}

#[test]
fn program_grant_covers_every_use_of_that_program_and_nothing_else() {
    let env = Env::new();
    let mut g = Grants::new();
    g.add(Grant::program("touch"));
    assert_eq!(outcome(&env, &g, "touch a b c"), Outcome::Allow);
    assert_eq!(outcome(&env, &g, "touch a; rm b"), Outcome::Ask);
    assert_eq!(outcome(&env, &g, "./touch a"), Outcome::Ask);
    assert_eq!(outcome(&env, &g, "env touch a"), Outcome::Ask);
    assert_eq!(outcome(&env, &g, "touch $FILE"), Outcome::Ask);
    g.add(Grant::program("rm"));
    assert_eq!(outcome(&env, &g, "touch a; rm b"), Outcome::Allow);
    assert!(g.remove(&Grant::program("rm")));
    assert_eq!(outcome(&env, &g, "touch a; rm b"), Outcome::Ask);
}

#[test]
fn grants_never_override_a_deny() {
    let env = Env::new();
    env.config_file("policy.toml", "[approval.network]\nmode = \"deny\"\n");
    let mut g = Grants::new();
    g.add(Grant::program("curl"));
    g.add(Grant::exact("sudo rm -rf /"));
    let d = env.gate().decide(&env.request("curl https://example.com"), &g);
    assert_eq!(d.outcome, Outcome::Deny);
    assert!(matches!(d.decided_by, DecidedBy::Mode { .. }), "{:?}", d.decided_by);
    assert_eq!(outcome(&env, &g, "sudo rm -rf /"), Outcome::Deny);
}
