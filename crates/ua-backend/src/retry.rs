//! When to retry and how long to wait: pure arithmetic, no clock.

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use crate::error::BackendError;

/// Exponential backoff with jitter, capped, honouring the server's wait.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// The wait before the first retry; doubled for each later one.
    pub base_delay: Duration,
    /// No computed wait exceeds this.
    pub max_delay: Duration,
    /// A server's retry-after longer than this is not waited for: the
    /// error goes to the user (with the wait in it) instead of a frozen
    /// prompt.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based) after `error`, or
    /// `None` when the error is not worth retrying or retries are spent.
    ///
    /// `jitter` in [0, 1) spreads clients apart: the wait is drawn from
    /// [backoff/2, backoff) ("equal jitter"). A server-given retry-after
    /// replaces the backoff and gets no jitter, since it is already the
    /// server's schedule.
    pub fn delay(&self, retry: u32, error: &BackendError, jitter: f64) -> Option<Duration> {
        if retry >= self.max_retries || !error.is_retryable() {
            return None;
        }
        if let Some(wait) = error.retry_after() {
            return (wait <= self.max_retry_after).then_some(wait);
        }
        let exp = self.base_delay.saturating_mul(2u32.saturating_pow(retry.min(16)));
        let capped = exp.min(self.max_delay);
        let jitter = jitter.clamp(0.0, 1.0);
        Some(capped.mul_f64(0.5 + jitter / 2.0))
    }
}

/// A fresh random number in [0, 1) without a `rand` dependency: std's
/// `RandomState` is seeded per instance from the OS, which is plenty for
/// spreading retries apart.
pub fn jitter() -> f64 {
    let bits = RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses `retry-after` (seconds, possibly fractional) or OpenAI's
/// `retry-after-ms`. HTTP dates are not used by either provider and are
/// ignored, falling back to backoff.
pub fn parse_retry_after(retry_after: Option<&str>, retry_after_ms: Option<&str>) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let secs = retry_after?.trim().parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overloaded() -> BackendError {
        BackendError::Overloaded { backend: "b".into(), detail: "x".into() }
    }

    #[test]
    fn backoff_doubles_with_equal_jitter_and_caps() {
        let p = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        let e = overloaded();
        assert_eq!(p.delay(0, &e, 0.0), Some(Duration::from_millis(50)));
        assert_eq!(p.delay(1, &e, 0.0), Some(Duration::from_millis(100)));
        assert_eq!(p.delay(2, &e, 0.999_999), Some(Duration::from_nanos(399_999_800)));
        assert_eq!(p.delay(9, &e, 0.0), Some(Duration::from_millis(500)));
        assert_eq!(p.delay(10, &e, 0.0), None);
    }

    #[test]
    fn retry_after_wins_and_long_waits_are_not_taken() {
        let p = RetryPolicy::default();
        let e = BackendError::RateLimited { backend: "b".into(), retry_after: Some(Duration::from_secs(7)) };
        assert_eq!(p.delay(0, &e, 0.5), Some(Duration::from_secs(7)));
        let e = BackendError::RateLimited { backend: "b".into(), retry_after: Some(Duration::from_secs(600)) };
        assert_eq!(p.delay(0, &e, 0.5), None);
    }

    #[test]
    fn fatal_errors_are_not_retried() {
        let e = BackendError::InvalidKey { backend: "b".into(), status: 401, hint: "K".into() };
        assert_eq!(RetryPolicy::default().delay(0, &e, 0.0), None);
    }

    #[test]
    fn retry_after_headers_parse() {
        assert_eq!(parse_retry_after(Some("2"), None), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(Some(" 0.25 "), None), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after(Some("2"), Some("30")), Some(Duration::from_millis(30)));
        assert_eq!(parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT"), None), None);
        assert_eq!(parse_retry_after(Some("-1"), None), None);
        assert_eq!(parse_retry_after(None, None), None);
    }

    #[test]
    fn jitter_is_in_range() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j));
        }
    }
}
