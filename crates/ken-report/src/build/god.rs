//! God objects: files and classes that many people and many commits
//! change, that are large, and that much of the code depends on.
//!
//! Each figure is put on a log scale relative to the largest of its kind
//! in the repository (so the ranking adapts to the repository at hand) and
//! the score is their product: an object must be high on all four.

use std::collections::{HashMap, HashSet};

use super::{Ctx, owners::owner_shares, round2};
use crate::model::GodObject;

/// `ln(1 + x) / ln(1 + max)`, 0 when the maximum is 0.
fn scaled(x: u32, max: u32) -> f64 {
    if max == 0 {
        0.0
    } else {
        (1.0 + f64::from(x)).ln() / (1.0 + f64::from(max)).ln()
    }
}

struct Figures {
    kind: &'static str,
    path: String,
    name: Option<String>,
    lines: u32,
    commits: u32,
    authors: u32,
    fan_in: u32,
    owners: Vec<(String, u32)>,
}

pub(super) fn god_objects(ctx: &Ctx<'_>) -> Vec<GodObject> {
    // Commits and human authors per path, over history up to the period's end.
    let mut history: HashMap<&str, (u32, HashSet<&str>)> = HashMap::new();
    for c in &ctx.input.commits {
        if c.committer_time >= ctx.input.period.until || c.is_merge() {
            continue;
        }
        for f in &c.files {
            let e = history.entry(f.path.as_str()).or_default();
            e.0 += 1;
            if !ctx.is_bot(&c.person) {
                e.1.insert(c.person.as_str());
            }
        }
    }
    let humans = |owners: &[(String, u32)]| -> u32 {
        owners.iter().filter(|(p, _)| !ctx.is_bot(p)).count() as u32
    };
    let files = ctx.input.files.iter().map(|f| {
        let (commits, authors) = history
            .get(f.path.as_str())
            .map_or((0, 0), |(n, who)| (*n, who.len() as u32));
        Figures {
            kind: "file",
            path: f.path.clone(),
            name: None,
            lines: f.lines,
            commits,
            authors: authors.max(humans(&f.owners)),
            fan_in: f.fan_in,
            owners: f.owners.clone(),
        }
    });
    let classes = ctx.input.classes.iter().map(|c| Figures {
        kind: "class",
        path: c.path.clone(),
        name: Some(c.name.clone()),
        lines: c.end_line.saturating_sub(c.start_line) + 1,
        commits: c.commits,
        authors: humans(&c.owners),
        fan_in: c.fan_in,
        owners: c.owners.clone(),
    });
    let mut out = Vec::new();
    for group in [files.collect::<Vec<_>>(), classes.collect::<Vec<_>>()] {
        let max = |f: fn(&Figures) -> u32| group.iter().map(f).max().unwrap_or(0);
        let (ml, mc, ma, mf) = (
            max(|f| f.lines),
            max(|f| f.commits),
            max(|f| f.authors),
            max(|f| f.fan_in),
        );
        for f in group {
            // One author or no dependants: not a god object, whatever its size.
            if f.authors < 2 || f.fan_in == 0 || f.commits < 2 {
                continue;
            }
            let score = scaled(f.lines, ml)
                * scaled(f.commits, mc)
                * scaled(f.authors, ma)
                * scaled(f.fan_in, mf);
            out.push(GodObject {
                id: String::new(),
                kind: f.kind.to_string(),
                path: f.path,
                name: f.name,
                lines: f.lines,
                commits: f.commits,
                authors: f.authors,
                fan_in: f.fan_in,
                score: round2(score * 100.0),
                owners: owner_shares(ctx, &f.owners, 3),
            });
        }
    }
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.name.cmp(&b.name))
    });
    out.truncate(ctx.params.top);
    for (n, g) in out.iter_mut().enumerate() {
        g.id = format!("G{}", n + 1);
    }
    out
}
