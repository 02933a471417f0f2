//! Arbitrary UTF-8 as a proposed command line: the classifier must never
//! panic, and its verdict must keep the promises the safety pipeline
//! relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ua_policy::classify::{Analysis, analyze};
use ua_policy::parse::PartKind;
use ua_policy::risk::Risk;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else { return };
    let a = analyze(command);
    check(command, &a);
    // A pure function: the same text gets the same verdict.
    assert_eq!(format!("{a:?}"), format!("{:?}", analyze(command)), "analysis is not deterministic");
});

fn check(command: &str, a: &Analysis) {
    assert_eq!(a.parsed.source, command, "the parse must keep the text as proposed");
    assert_eq!(a.parts.len(), a.parsed.parts.len(), "one verdict per parsed part");
    let highest = a.parts.iter().map(|p| p.risk).max().unwrap_or(Risk::ReadOnly);
    assert!(a.risk >= highest, "overall {:?} is below a part's {highest:?}", a.risk);
    match &a.denied {
        Some(m) => assert_eq!(a.risk, Risk::Denied, "deny rule {} matched but risk is {:?}", m.rule, a.risk),
        None => assert_eq!(a.risk, highest, "without a deny match the risk is the parts' maximum"),
    }
    for (part, verdict) in a.parsed.parts.iter().zip(&a.parts) {
        let floor = match part.kind {
            PartKind::Exec | PartKind::Redirection => Risk::ReadOnly,
            // Fails closed: what runs is not known from the text alone, or
            // it changes the live shell.
            PartKind::Dynamic | PartKind::Unparseable(_) | PartKind::FunctionDef(_) | PartKind::Assignment => {
                Risk::Write
            }
        };
        let mut floors = vec![(floor, "its kind")];
        if part.privileged {
            floors.push((Risk::Privileged, "a privilege-raising wrapper"));
        }
        if part.background {
            floors.push((Risk::Write, "running in the background"));
        }
        if !verdict.effects.writes.is_empty() {
            floors.push((Risk::Write, "writing files"));
        }
        if !verdict.effects.hosts.is_empty() {
            floors.push((Risk::Network, "contacting a host"));
        }
        for (min, why) in floors {
            assert!(
                verdict.risk >= min,
                "part {:?} is {:?}, below {min:?} for {why} ({})",
                verdict.program,
                verdict.risk,
                verdict.reason,
            );
        }
    }
}
