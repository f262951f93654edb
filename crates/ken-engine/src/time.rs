//! Times as users write them: `2024-05-01`, `2w` (two weeks ago), `3d`,
//! `6m`, `1y`, `12h`, `yesterday`, `today`, or seconds since the epoch.

use crate::{EngineError, Result};

/// Seconds since the epoch, now (0 on a clock before 1970).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Seconds since the epoch for `s`, relative to `now`.
pub fn parse_time(s: &str, now: i64) -> Result<i64> {
    let t = s.trim().to_ascii_lowercase();
    let bad = || {
        EngineError::bad_input(format!(
            "cannot read the time `{s}`: use a date (2024-05-01), an age (3d, 2w, 6m, 1y), `yesterday`, or a commit sha"
        ))
    };
    match t.as_str() {
        "now" => return Ok(now),
        "today" => return Ok(now - now.rem_euclid(86_400)),
        "yesterday" => return Ok(now - now.rem_euclid(86_400) - 86_400),
        _ => {}
    }
    if let Some((at, unit)) = t.char_indices().last()
        && unit.is_ascii_alphabetic()
        && let Ok(n) = t[..at].trim().parse::<i64>()
    {
        let secs = match unit {
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            'm' => 30 * 86_400,
            'y' => 365 * 86_400,
            _ => return Err(bad()),
        };
        return Ok(now - n * secs);
    }
    if let Some(d) = parse_date(&t) {
        return Ok(d);
    }
    if t.len() >= 9 && t.chars().all(|c| c.is_ascii_digit()) {
        return t.parse().map_err(|_| bad());
    }
    Err(bad())
}

/// `YYYY-MM-DD` (UTC midnight).
fn parse_date(t: &str) -> Option<i64> {
    let mut it = t.split('-');
    let y: i32 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.get(..2)?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(ken_core::time::days_from_civil(y, m, d) * 86_400)
}

/// `YYYY-MM-DD` of a time (UTC).
pub use ken_core::time::format_date;

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000; // 2023-11-14T22:13:20Z

    #[test]
    fn dates_and_ages() {
        assert_eq!(parse_time("2023-11-14", NOW).unwrap(), 1_699_920_000);
        assert_eq!(format_date(1_699_920_000), "2023-11-14");
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(parse_time("2w", NOW).unwrap(), NOW - 14 * 86_400);
        assert_eq!(parse_time("3d", NOW).unwrap(), NOW - 3 * 86_400);
        assert_eq!(
            parse_time("yesterday", NOW).unwrap(),
            1_699_920_000 - 86_400
        );
        assert_eq!(parse_time("1700000000", NOW).unwrap(), NOW);
        assert!(parse_time("next tuesday", NOW).is_err());
        assert!(parse_time("3é", NOW).is_err());
        assert!(parse_time("3x", NOW).is_err());
        assert!(parse_time("2023-13-01", NOW).is_err());
        for t in [0, 951_782_400, 1_700_000_000, 4_102_444_800] {
            assert_eq!(
                parse_time(&format_date(t), NOW).unwrap(),
                t - t.rem_euclid(86_400)
            );
        }
    }
}
