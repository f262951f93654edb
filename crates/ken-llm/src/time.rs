//! Calendar arithmetic on Unix seconds (UTC), enough for `since March` and
//! HTTP dates without a date-time crate.

pub(crate) use ken_core::time::{DAY, civil_from_days, days_from_civil, format_date, weekday};

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
