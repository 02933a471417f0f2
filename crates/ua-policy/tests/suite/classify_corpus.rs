//! The classification corpus (`tests/fixtures/classify-corpus.txt`) and
//! the everyday read-only figure, driven by one table test each that
//! reports every mismatch at once.

use ua_policy::classify::analyze;
use ua_policy::deny::RULES;
use ua_policy::gate::Outcome;
use ua_policy::grants::Grants;
use ua_policy::risk::Risk;

const CORPUS: &str = include_str!("../fixtures/classify-corpus.txt");
const EVERYDAY: &str = include_str!("../fixtures/everyday-readonly.txt");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    AtLeast(Risk),
    Exactly(Risk),
    Below(Risk),
    DeniedBy(&'static str),
}

struct Case {
    line: usize,
    expect: Expect,
    command: &'static str,
}

fn level(name: &str, line: usize) -> Risk {
    Risk::from_name(name).unwrap_or_else(|| panic!("corpus line {line}: unknown risk level {name:?}"))
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (n, raw) in CORPUS.lines().enumerate() {
        let line = n + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let (tag, command) = raw.split_once(' ').unwrap_or_else(|| panic!("corpus line {line}: no command"));
        let command = command.trim_start();
        let expect = if let Some(l) = tag.strip_prefix(">=") {
            Expect::AtLeast(level(l, line))
        } else if let Some(l) = tag.strip_prefix('=') {
            Expect::Exactly(level(l, line))
        } else if let Some(l) = tag.strip_prefix('<') {
            Expect::Below(level(l, line))
        } else if tag == "denied" {
            Expect::AtLeast(Risk::Denied)
        } else if let Some(id) = tag.strip_prefix("denied:") {
            let rule =
                RULES.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("corpus line {line}: no deny rule {id:?}"));
            Expect::DeniedBy(rule.id)
        } else {
            panic!("corpus line {line}: unknown expectation {tag:?}");
        };
        out.push(Case { line, expect, command });
    }
    out
}

#[test]
fn corpus_classifies_every_command_at_or_above_its_floor() {
    let cases = cases();
    assert!(cases.len() >= 400, "the corpus has only {} cases", cases.len());
    let mut bad = Vec::new();
    for c in &cases {
        let a = analyze(c.command);
        let got = a.risk;
        let rule = a.denied.as_ref().map(|d| d.rule);
        let ok = match c.expect {
            Expect::AtLeast(r) => got >= r,
            Expect::Exactly(r) => got == r,
            Expect::Below(r) => got < r,
            Expect::DeniedBy(id) => rule == Some(id),
        };
        if !ok {
            let why: Vec<String> = a
                .parsed
                .parts
                .iter()
                .zip(&a.parts)
                .map(|(p, r)| format!("{:?} {} ({})", p.line(), r.risk, r.reason))
                .collect();
            bad.push(format!(
                "line {}: {:?}\n    expected {:?}, got {got} {}\n    parts: {}",
                c.line,
                c.command,
                c.expect,
                rule.map(|r| format!("by {r}")).unwrap_or_default(),
                why.join("; ")
            ));
        }
    }
    assert!(bad.is_empty(), "{} of {} corpus cases are misclassified:\n{}", bad.len(), cases.len(), bad.join("\n"));
}

/// The paging edit over the whole corpus: where it edits, it only adds
/// its switches, never raises a part, never touches a denied command, and
/// leaves a command that still meets the corpus's floor.
#[test]
fn the_paging_edit_only_adds_switches_and_never_lowers_a_floor() {
    let mut edited = 0;
    let mut bad = Vec::new();
    let corpus = cases();
    let everyday = EVERYDAY.lines().filter(|l| !l.starts_with('#') && !l.is_empty());
    let all = corpus.iter().map(|c| (c.line, Some(c.expect), c.command)).chain(everyday.map(|c| (0, None, c)));
    for (line, expect, command) in all {
        let a = analyze(command);
        let Some(e) = ua_policy::paging::turn_off(&a) else { continue };
        edited += 1;
        let restored = e.command.replace(" --no-pager", "").replace("MANPAGER=cat ", "");
        let ok = restored == command
            && a.denied.is_none()
            && e.analysis.denied.is_none()
            && e.analysis.risk <= a.risk
            && e.analysis.parts.len() >= a.parts.len()
            && match expect {
                Some(Expect::AtLeast(r) | Expect::Exactly(r)) if r > Risk::Write => e.analysis.risk >= r,
                _ => true,
            };
        if !ok {
            bad.push(format!("line {line}: {command} -> {} ({})", e.command, e.analysis.risk));
        }
    }
    assert!(edited >= 20, "only {edited} commands were edited");
    assert!(bad.is_empty(), "bad edits:\n{}", bad.join("\n"));
}

#[test]
fn every_deny_rule_has_corpus_cases() {
    let cases = cases();
    let missing: Vec<&str> =
        RULES.iter().map(|r| r.id).filter(|id| !cases.iter().any(|c| c.expect == Expect::DeniedBy(id))).collect();
    assert!(missing.is_empty(), "deny rules without a corpus case: {missing:?}");
    assert!(RULES.len() >= 50, "only {} deny rules", RULES.len());
}

/// The share of everyday read-only commands that run without a question,
/// measured through what decides in a session: unixagent's paging edit,
/// the classifier, the repository check and the default policy, with a
/// clean git repository as the working directory. The floor is the figure
/// unixagent achieves; it may only go up. What still asks pages with no
/// switch to turn that off (less) or is not a read after all.
#[test]
fn everyday_reads_mostly_run_without_a_prompt() {
    let cmds: Vec<&str> = EVERYDAY.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    assert!(cmds.len() >= 120, "only {} everyday commands", cmds.len());
    let repo = super::git_repos::TempRepo::new();
    let gate = super::Env::new().gate();
    let asks: Vec<String> = cmds
        .iter()
        .map(|c| (c, gate.decide(&super::git_repos::request(&repo.root, c), &Grants::new())))
        .filter(|(_, d)| d.outcome != Outcome::Allow)
        .map(|(c, d)| {
            let why: Vec<&str> = d.analysis.parts.iter().map(|p| p.reason.as_str()).collect();
            format!("{c} -> {} {} ({})", d.outcome.name(), d.risk, why.join("; "))
        })
        .collect();
    let run = cmds.len() - asks.len();
    println!(
        "everyday read-only commands that run without a question: {run} of {} ({:.1}%)",
        cmds.len(),
        100.0 * run as f64 / cmds.len() as f64
    );
    for a in &asks {
        println!("  asks: {a}");
    }
    assert!(
        run * 100 >= cmds.len() * 95 && run >= 128,
        "only {run} of {} everyday reads run without a question; these ask:\n{}",
        cmds.len(),
        asks.join("\n")
    );
}
