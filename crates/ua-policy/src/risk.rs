//! Risk levels: the classifier's verdict on one command.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How much harm a command can do, ordered so that the risk of a compound
/// command is the maximum over its parts (design 001, decisions log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads state and prints it; changes nothing, runs nothing else.
    ReadOnly,
    /// Builds or tests a project: writes only build outputs, runs project code.
    BuildTest,
    /// Changes files or the live shell's state, or runs code we cannot see.
    Write,
    /// Removes or overwrites data in bulk.
    Destructive,
    /// Talks to other machines.
    Network,
    /// Runs with more privilege than the user (sudo, doas, su, system config).
    Privileged,
    /// Never runs, whatever any policy, hook, grant or human says.
    Denied,
}

impl Risk {
    /// Every level, lowest first.
    pub const ALL: [Risk; 7] = [
        Risk::ReadOnly,
        Risk::BuildTest,
        Risk::Write,
        Risk::Destructive,
        Risk::Network,
        Risk::Privileged,
        Risk::Denied,
    ];

    /// The level as a small integer (ReadOnly = 0 … Denied = 6), the form Cedar
    /// policies compare with `resource.risk_level`.
    pub fn level(self) -> i64 {
        match self {
            Risk::ReadOnly => 0,
            Risk::BuildTest => 1,
            Risk::Write => 2,
            Risk::Destructive => 3,
            Risk::Network => 4,
            Risk::Privileged => 5,
            Risk::Denied => 6,
        }
    }

    /// The snake_case name used in fixtures, JSON and Cedar.
    pub fn name(self) -> &'static str {
        match self {
            Risk::ReadOnly => "read_only",
            Risk::BuildTest => "build_test",
            Risk::Write => "write",
            Risk::Destructive => "destructive",
            Risk::Network => "network",
            Risk::Privileged => "privileged",
            Risk::Denied => "denied",
        }
    }

    /// Parses [`Risk::name`] output back.
    pub fn from_name(s: &str) -> Option<Risk> {
        Risk::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matches_the_documented_ladder() {
        let mut sorted = Risk::ALL;
        sorted.sort();
        assert_eq!(sorted, Risk::ALL);
        assert!(Risk::Network > Risk::Destructive);
        assert_eq!(Risk::ALL.map(Risk::level), [0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn names_round_trip() {
        for r in Risk::ALL {
            assert_eq!(Risk::from_name(r.name()), Some(r));
        }
        assert_eq!(Risk::from_name("safe"), None);
    }
}
