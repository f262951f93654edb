//! Calendar arithmetic on Unix seconds (UTC), enough for `since March` and
//! HTTP dates without a date-time crate.

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1-12, day 1-31) of a day number.
pub(crate) fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    ((y + i64::from(m <= 2)) as i32, m, d)
}

/// 0 = Monday ... 6 = Sunday.
pub(crate) fn weekday(day: i64) -> u32 {
    // 1970-01-01 was a Thursday (3).
    (day + 3).rem_euclid(7) as u32
}

pub(crate) const DAY: i64 = 86_400;

/// Month number of an English month name or abbreviation (`Mar`, `march`, `Sept`).
pub(crate) fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    if n.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| m.starts_with(&n))
        .map(|i| i as u32 + 1)
}

/// Unix seconds of 00:00 UTC on a date.
pub(crate) fn midnight(y: i32, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, d) * DAY
}

/// Days in a month.
pub(crate) fn month_len(y: i32, m: u32) -> u32 {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (days_from_civil(ny, nm, 1) - days_from_civil(y, m, 1)) as u32
}

/// `YYYY-MM-DD` of Unix seconds.
pub(crate) fn format_date(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in [-1000, 0, 59, 60, 11_016, 19_000, 20_000] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(weekday(0), 3);
        assert_eq!(weekday(days_from_civil(2024, 6, 3)), 0, "a Monday");
        assert_eq!(month_len(2024, 2), 29);
        assert_eq!(month_len(2023, 2), 28);
        assert_eq!(format_date(midnight(2024, 3, 9) + 5), "2024-03-09");
    }

    #[test]
    fn months() {
        assert_eq!(month_number("March"), Some(3));
        assert_eq!(month_number("mar"), Some(3));
        assert_eq!(month_number("Sept"), Some(9));
        assert_eq!(month_number("Nov"), Some(11));
        assert_eq!(month_number("dec."), Some(12));
        assert_eq!(month_number("ma"), None);
        assert_eq!(month_number("mayday"), None);
    }
}
