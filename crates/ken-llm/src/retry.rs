//! When to try again, and how long to wait first.
//!
//! Policy: only 429 and 5xx (except 501 Not Implemented and 505) are retried;
//! other 4xx, timeouts and refused connections are not (they do not get better
//! by waiting a second). The wait before retry `n` (0-based) is `Retry-After`
//! when the server sent one (plus up to 10% jitter), otherwise
//! "equal jitter" exponential backoff: half of `min(8 s, 500 ms × 2ⁿ)` fixed
//! plus a random part up to the other half. A `Retry-After` longer than
//! [`MAX_WAIT`] is not waited for: the error is returned at once, with the wait.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::time::days_from_civil;

pub(crate) const BASE: Duration = Duration::from_millis(500);
pub(crate) const CAP: Duration = Duration::from_secs(8);
/// The longest `Retry-After` we sit through.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// Is this HTTP status worth another attempt?
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status) && status != 501 && status != 505
}

/// The wait before retry number `retry` (0 for the first retry).
pub fn backoff_delay(retry: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(after) = retry_after {
        return after + after.mul_f64(0.1 * random_unit());
    }
    let exp = BASE.saturating_mul(1u32 << retry.min(16)).min(CAP);
    let half = exp / 2;
    half + half.mul_f64(random_unit())
}

/// A number in [0, 1), different on every call (no RNG crate needed for jitter).
fn random_unit() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Parse a `Retry-After` header: delay-seconds (`"3"`, `"0"`, `"1.5"` from
/// some servers) or an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = parse_http_date(v)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs() as i64;
    Some(Duration::from_secs(when.saturating_sub(now).max(0) as u64))
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to Unix seconds.
fn parse_http_date(v: &str) -> Option<i64> {
    let rest = v.split_once(',').map(|(_, r)| r).unwrap_or(v).trim();
    let mut it = rest.split_whitespace();
    let day: u32 = it.next()?.parse().ok()?;
    let month = crate::time::month_number(it.next()?)?;
    let year: i32 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: i64 = hms.next()?.parse().ok()?;
    let s: i64 = hms.next()?.parse().ok()?;
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422, 501, 505] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn backoff_grows_with_jitter_and_caps() {
        for retry in 0..10 {
            let d = backoff_delay(retry, None);
            let exp = BASE.saturating_mul(1 << retry).min(CAP);
            assert!(d >= exp / 2 && d <= exp, "{retry}: {d:?}");
        }
        assert_eq!(
            backoff_delay(3, Some(Duration::ZERO)),
            Duration::ZERO,
            "Retry-After: 0 means now"
        );
        let d = backoff_delay(0, Some(Duration::from_secs(2)));
        assert!(d >= Duration::from_secs(2) && d <= Duration::from_millis(2200));
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06 08:49:37
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
