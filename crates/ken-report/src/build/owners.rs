//! Ownership and bus factor per directory, from blame: each person's share
//! of the current lines, the smallest set of people owning half of them,
//! and directories whose owners have all stopped committing.

use std::collections::{BTreeMap, HashMap};

use ken_core::time::format_date;

use super::{Ctx, area_of, round2};
use crate::model::{DirOwnership, OwnerShare};

/// The top `n` owners of `lines` (person, lines), largest first.
pub(super) fn owner_shares(ctx: &Ctx<'_>, lines: &[(String, u32)], n: usize) -> Vec<OwnerShare> {
    let total: u64 = lines.iter().map(|(_, l)| u64::from(*l)).sum();
    let mut sorted: Vec<&(String, u32)> = lines.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sorted
        .into_iter()
        .take(n)
        .map(|(p, l)| OwnerShare {
            person: ctx.name(p),
            lines: *l,
            share: if total == 0 {
                0.0
            } else {
                round2(f64::from(*l) / total as f64)
            },
            last_commit: ctx.last_commit.get(p.as_str()).map(|&t| format_date(t)),
            inactive: ctx.inactive(p),
        })
        .collect()
}

/// The smallest number of owners (largest first) holding at least half the lines.
pub(crate) fn bus_factor(lines: &[(String, u32)]) -> u32 {
    let total: u64 = lines.iter().map(|(_, l)| u64::from(*l)).sum();
    let mut sorted: Vec<u32> = lines.iter().map(|(_, l)| *l).collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut held = 0u64;
    for (n, l) in sorted.iter().enumerate() {
        held += u64::from(*l);
        if 2 * held >= total {
            return n as u32 + 1;
        }
    }
    sorted.len() as u32
}

pub(super) fn ownership(ctx: &Ctx<'_>) -> Vec<DirOwnership> {
    // Every directory down to the report's depth, and the root.
    let mut dirs: BTreeMap<String, HashMap<&str, u32>> = BTreeMap::new();
    for f in &ctx.input.files {
        if f.owners.is_empty() {
            continue;
        }
        let mut keys = vec![".".to_string()];
        for depth in 1..=ctx.params.dir_depth {
            let a = area_of(&f.path, depth);
            if a != "." && !keys.contains(&a) {
                keys.push(a);
            }
        }
        for k in keys {
            let e = dirs.entry(k).or_default();
            for (p, l) in &f.owners {
                *e.entry(p.as_str()).or_default() += l;
            }
        }
    }
    let total: u64 = dirs
        .get(".")
        .map_or(0, |m| m.values().map(|&l| u64::from(l)).sum());
    let mut out: Vec<DirOwnership> = dirs
        .into_iter()
        .map(|(dir, m)| {
            let lines: Vec<(String, u32)> =
                m.into_iter().map(|(p, l)| (p.to_string(), l)).collect();
            let bus = bus_factor(&lines);
            let owners = owner_shares(ctx, &lines, 5);
            let mut top = lines.clone();
            top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let orphaned = top.iter().take(bus as usize).all(|(p, _)| ctx.inactive(p));
            DirOwnership {
                id: String::new(),
                dir,
                lines: lines.iter().map(|(_, l)| u64::from(*l)).sum(),
                owners,
                bus_factor: bus,
                orphaned,
            }
        })
        .collect();
    // The root, then the largest directories (at least 1% of the lines),
    // orphaned ones always kept.
    let keep = ctx.params.top * 3;
    out.sort_by(|a, b| {
        (b.dir == ".")
            .cmp(&(a.dir == "."))
            .then_with(|| b.lines.cmp(&a.lines))
            .then_with(|| a.dir.cmp(&b.dir))
    });
    let mut kept = Vec::new();
    for (n, d) in out.into_iter().enumerate() {
        if (n < keep && d.lines * 100 >= total) || (d.orphaned && d.lines * 1000 >= total) {
            kept.push(d);
        }
    }
    kept.sort_by(|a, b| {
        (a.dir != ".")
            .cmp(&(b.dir != "."))
            .then_with(|| a.dir.cmp(&b.dir))
    });
    for (n, d) in kept.iter_mut().enumerate() {
        d.id = format!("O{}", n + 1);
    }
    kept
}
