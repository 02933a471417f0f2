//! Token usage totals from the index alone, and the `7d`-style ages that
//! select them.
//!
//! Usage is kept per UTC day (compacted lines keep one bucket per day, not
//! one per turn), so a report starts at the beginning of the UTC day that
//! holds `since`: `--since 7d` counts the whole of the day seven days ago.
//! Cost is not reported: nothing in unixagent knows a price per token.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ua_protocol::event::Usage;
use ua_protocol::time::Utc;

use super::fold::Summaries;

const DAY_MS: u64 = 86_400_000;

/// One UTC day's usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayUsage {
    /// Days since 1970-01-01, UTC.
    pub day: u64,
    /// Turns that ended that day.
    pub turns: u32,
    pub usage: Usage,
    /// Commands the agent ran in those turns.
    #[serde(default)]
    pub commands: u64,
    /// What the priced ones cost, in millionths of a US dollar.
    #[serde(default)]
    pub cost_micros: u64,
    #[serde(default)]
    pub priced_turns: u32,
}

impl DayUsage {
    /// Midnight UTC at the start of the day, as a calendar date.
    pub fn date(&self) -> Utc {
        Utc::from_unix_ms(self.day * DAY_MS)
    }

    pub(crate) fn add(&mut self, usage: &Usage, commands: u32, cost_micros: Option<u64>) {
        self.turns += 1;
        self.commands += u64::from(commands);
        if let Some(c) = cost_micros {
            self.cost_micros += c;
            self.priced_turns += 1;
        }
        self.usage.add(usage);
    }

    fn merge(&mut self, other: &DayUsage) {
        self.turns += other.turns;
        self.commands += other.commands;
        self.cost_micros += other.cost_micros;
        self.priced_turns += other.priced_turns;
        self.usage.add(&other.usage);
    }
}

/// One session's usage within a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionUsage {
    pub id: String,
    pub cwd: String,
    pub started_ms: u64,
    pub turns: u32,
    pub usage: Usage,
    pub commands: u64,
    pub cost_micros: u64,
    pub priced_turns: u32,
}

/// Usage since a day, in total, by day and by session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageReport {
    /// The first day counted, in days since 1970-01-01 UTC.
    pub since_day: u64,
    pub turns: u64,
    pub total: Usage,
    pub commands: u64,
    pub cost_micros: u64,
    pub priced_turns: u64,
    /// Days with at least one turn, oldest first.
    pub by_day: Vec<DayUsage>,
    /// Sessions with at least one turn in range, newest first.
    pub by_session: Vec<SessionUsage>,
}

impl Summaries {
    /// Usage of turns that ended on or after the UTC day holding
    /// `since_ms` (milliseconds since the Unix epoch).
    pub fn usage(&self, since_ms: u64) -> UsageReport {
        let since_day = since_ms / DAY_MS;
        let mut report = UsageReport { since_day, ..UsageReport::default() };
        let mut by_day: Vec<DayUsage> = Vec::new();
        for s in self.sessions() {
            let mut mine = SessionUsage {
                id: s.id.clone(),
                cwd: s.cwd.clone(),
                started_ms: s.started_ms,
                turns: 0,
                usage: Usage::default(),
                commands: 0,
                cost_micros: 0,
                priced_turns: 0,
            };
            for d in s.days.iter().filter(|d| d.day >= since_day) {
                mine.turns += d.turns;
                mine.commands += d.commands;
                mine.cost_micros += d.cost_micros;
                mine.priced_turns += d.priced_turns;
                mine.usage.add(&d.usage);
                match by_day.binary_search_by_key(&d.day, |x| x.day) {
                    Ok(i) => by_day[i].merge(d),
                    Err(i) => by_day.insert(i, *d),
                }
            }
            if mine.turns > 0 {
                report.turns += u64::from(mine.turns);
                report.commands += mine.commands;
                report.cost_micros += mine.cost_micros;
                report.priced_turns += u64::from(mine.priced_turns);
                report.total.add(&mine.usage);
                report.by_session.push(mine);
            }
        }
        report.by_day = by_day;
        report
    }
}

/// Parses an age such as `30m`, `12h`, `7d` or `2w`: a whole number and
/// one unit (`s`, `m` for minutes, `h`, `d`, `w`).
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let bad =
        || format!("`{text}` is not an age: write a whole number and a unit (s, m, h, d or w), as in 12h, 7d or 2w");
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let seconds: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    n.checked_mul(seconds).map(Duration::from_secs).ok_or_else(|| format!("`{text}` is too long an age"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::fold::Fold;
    use crate::index::record::Record;

    #[test]
    fn ages() {
        assert_eq!(parse_age("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("2w"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_age("45m"), Ok(Duration::from_secs(45 * 60)));
        assert_eq!(parse_age(" 90s "), Ok(Duration::from_secs(90)));
        assert_eq!(parse_age("0d"), Ok(Duration::ZERO));
    }

    #[test]
    fn bad_ages_say_what_to_write() {
        for bad in ["", "7", "d", "7 d", "-7d", "1.5d", "7D", "7days", "d7", "7dd"] {
            let err = parse_age(bad).unwrap_err();
            assert!(err.contains("as in 12h, 7d or 2w"), "{bad:?}: {err}");
        }
        assert!(parse_age("99999999999999999999d").is_err());
        assert_eq!(parse_age("999999999999999999w").unwrap_err(), "`999999999999999999w` is too long an age");
    }

    fn turn(id: &str, ts: u64, input: u64) -> Record {
        Record::Turn {
            id: id.into(),
            ts,
            turn: 1,
            instruction: None,
            usage: Usage { input_tokens: input, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 5 },
            commands: 0,
            cost_micros: None,
        }
    }

    #[test]
    fn usage_by_day_and_by_session_from_whole_days() {
        let mut f = Fold::default();
        for r in [
            turn("old", 2 * DAY_MS + 1, 1000),
            turn("a", 9 * DAY_MS + 10, 1),
            turn("a", 10 * DAY_MS + 10, 2),
            turn("b", 10 * DAY_MS + 20, 4),
            turn("b", 10 * DAY_MS + 30, 8),
        ] {
            f.apply(r);
        }
        let s = f.finish(|_| false);
        // Half way through day 9: the whole of day 9 counts.
        let r = s.usage(9 * DAY_MS + DAY_MS / 2);
        assert_eq!(r.since_day, 9);
        assert_eq!((r.turns, r.total.input_tokens, r.total.output_tokens, r.total.cache_write_tokens), (4, 15, 4, 20));
        assert_eq!(
            r.by_day.iter().map(|d| (d.day, d.turns, d.usage.input_tokens)).collect::<Vec<_>>(),
            [(9, 1, 1), (10, 3, 14)]
        );
        assert_eq!(
            r.by_session.iter().map(|s| (s.id.as_str(), s.usage.input_tokens)).collect::<Vec<_>>(),
            [("b", 12), ("a", 3)]
        );
        assert_eq!(r.by_day[1].date().rfc3339(), "1970-01-11T00:00:00.000Z");
        assert_eq!(s.usage(0).turns, 5);
        assert_eq!(s.usage(11 * DAY_MS), UsageReport { since_day: 11, ..UsageReport::default() });
    }
}
