//! Dates as trackers write them: RFC 3339, `YYYY-MM-DD[ HH:MM[:SS]]`, unix seconds.

use super::*;

pub(super) fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// Unix seconds of `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|±HH:MM]`
/// (no offset: UTC) or plain unix seconds.
pub(super) fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(n) = digits(s) {
        return Some(n);
    }
    if !s.is_ascii() || s.len() < 10 || &s[4..5] != "-" || &s[7..8] != "-" {
        return None;
    }
    let (y, mo, d) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match mo {
        2 => 28 + i64::from(leap),
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&mo) || !(1..=month_days).contains(&d) {
        return None;
    }
    let day = days_from_civil(y as i32, mo as u32, d as u32) * 86_400;
    let Some(rest) = s[10..].strip_prefix(['T', 't', ' ']) else {
        return s[10..].is_empty().then_some(day);
    };
    let (h, mi) = (digits(rest.get(..2)?)?, digits(rest.get(3..5)?)?);
    if &rest[2..3] != ":" || h > 23 || mi > 59 {
        return None;
    }
    let (mut rest, mut sec) = (&rest[5..], 0);
    if let Some(r) = rest.strip_prefix(':') {
        (sec, rest) = (digits(r.get(..2)?)?, &r[2..]);
        if let Some(r) = rest.strip_prefix(['.', ',']) {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            (n > 0 && sec <= 60).then_some(())?;
            rest = &r[n..];
        }
    }
    let offset = match rest.trim_start() {
        "" | "Z" | "z" | "UTC" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let o = o.strip_prefix(['+', '-'])?;
            let (oh, om) = match o.len() {
                5 if &o[2..3] == ":" => (digits(&o[..2])?, digits(&o[3..])?),
                4 => (digits(&o[..2])?, digits(&o[2..])?),
                2 => (digits(o)?, 0),
                _ => return None,
            };
            (oh < 24 && om < 60).then_some(sign * (oh * 3600 + om * 60))?
        }
    };
    (sec <= 60).then_some(day + h * 3600 + mi * 60 + sec - offset)
}
