//! Unix time as a UTC calendar date, for timestamps people read (the audit
//! log, session ids). Pure arithmetic: taking the time is the caller's.

/// A UTC instant split into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: u64,
    pub month: u64,
    pub day: u64,
    pub hour: u64,
    pub minute: u64,
    pub second: u64,
    pub millis: u64,
}

impl Utc {
    /// The instant `unix_ms` milliseconds after 1970-01-01T00:00:00Z.
    pub fn from_unix_ms(unix_ms: u64) -> Utc {
        let secs = unix_ms / 1000;
        let (year, month, day) = civil_from_days(secs / 86_400);
        let rem = secs % 86_400;
        Utc { year, month, day, hour: rem / 3600, minute: rem % 3600 / 60, second: rem % 60, millis: unix_ms % 1000 }
    }

    /// RFC 3339 with milliseconds: `2026-11-21T20:13:05.123Z`.
    pub fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `civil_from_days`, restricted to dates after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(Utc::from_unix_ms(0).rfc3339(), "1970-01-01T00:00:00.000Z");
        // A leap day.
        assert_eq!(Utc::from_unix_ms(951_782_400_005).rfc3339(), "2000-02-29T00:00:00.005Z");
        assert_eq!(Utc::from_unix_ms(1_795_000_000_999).rfc3339(), "2026-11-18T11:06:40.999Z");
        let t = Utc::from_unix_ms(1_795_291_985_123);
        assert_eq!((t.year, t.month, t.day, t.hour, t.minute, t.second, t.millis), (2026, 11, 21, 20, 13, 5, 123));
    }
}
