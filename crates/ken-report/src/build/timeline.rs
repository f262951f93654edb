//! Commits and lines over the period, per week or per month.

use ken_core::time::{DAY, civil_from_days, days_from_civil, format_date, weekday};

use super::Ctx;
use crate::model::Bucket;

/// Buckets from the period's start to its end; months when the period is
/// longer than two years.
pub(super) fn timeline(ctx: &Ctx<'_>) -> (Vec<Bucket>, String) {
    let p = &ctx.input.period;
    let (since, until) = (p.since, p.until.max(p.since + 1));
    let monthly = until - since > 2 * 365 * DAY;
    let start_of = |t: i64| -> i64 {
        let day = t.div_euclid(DAY);
        if monthly {
            let (y, m, _) = civil_from_days(day);
            days_from_civil(y, m, 1) * DAY
        } else {
            (day - i64::from(weekday(day))) * DAY
        }
    };
    let next = |t: i64| -> i64 {
        if monthly {
            let (y, m, _) = civil_from_days(t.div_euclid(DAY));
            let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
            days_from_civil(y, m, 1) * DAY
        } else {
            t + 7 * DAY
        }
    };
    let mut buckets = Vec::new();
    let mut t = start_of(since);
    while t < until && buckets.len() < 2_000 {
        buckets.push(Bucket {
            start: format_date(t),
            commits: 0,
            lines_added: 0,
            lines_removed: 0,
        });
        t = next(t);
    }
    let origin = start_of(since);
    let last = buckets.len().saturating_sub(1) as i64;
    let index = |t: i64| -> usize {
        let t = start_of(t);
        let k = if monthly {
            let (y0, m0, _) = civil_from_days(origin.div_euclid(DAY));
            let (y1, m1, _) = civil_from_days(t.div_euclid(DAY));
            (i64::from(y1) * 12 + i64::from(m1)) - (i64::from(y0) * 12 + i64::from(m0))
        } else {
            (t - origin).div_euclid(7 * DAY)
        };
        k.clamp(0, last) as usize
    };
    for &i in &ctx.period {
        let c = ctx.commit(i);
        let k = index(c.committer_time);
        let Some(b) = buckets.get_mut(k) else {
            continue;
        };
        b.commits += 1;
        for f in &c.files {
            b.lines_added += u64::from(f.added.unwrap_or(0));
            b.lines_removed += u64::from(f.removed.unwrap_or(0));
        }
    }
    let unit = if monthly { "month" } else { "week" };
    (buckets, unit.to_string())
}
