//! The period in figures: commits, authors, areas, lines, the largest
//! changes, new and deleted files.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::Ctx;
use crate::model::{AreaChange, Summary};

pub(super) fn summary(ctx: &Ctx<'_>) -> Summary {
    let mut humans = HashSet::new();
    let mut bots = HashSet::new();
    let (mut merges, mut bot_commits) = (0u32, 0u32);
    let (mut added, mut removed) = (0u64, 0u64);
    let mut files = HashSet::new();
    let mut areas: BTreeMap<String, (u32, u64, u64, HashSet<&str>)> = BTreeMap::new();
    let (mut new_files, mut deleted_files) = (BTreeSet::new(), BTreeSet::new());
    for &i in &ctx.period {
        let c = ctx.commit(i);
        if ctx.is_bot(&c.person) {
            bots.insert(c.person.as_str());
            bot_commits += 1;
        } else {
            humans.insert(c.person.as_str());
        }
        if c.is_merge() {
            merges += 1;
            continue;
        }
        let mut touched = HashSet::new();
        for f in &c.files {
            let (a, r) = (
                u64::from(f.added.unwrap_or(0)),
                u64::from(f.removed.unwrap_or(0)),
            );
            added += a;
            removed += r;
            files.insert(f.path.as_str());
            let area = ctx.area(&f.path);
            let e = areas.entry(area.clone()).or_default();
            e.1 += a;
            e.2 += r;
            e.3.insert(c.person.as_str());
            if touched.insert(area) {
                e.0 += 1;
            }
            match f.status.as_str() {
                "added" => {
                    deleted_files.remove(&f.path);
                    new_files.insert(f.path.clone());
                }
                "deleted" if !new_files.remove(&f.path) => {
                    deleted_files.insert(f.path.clone());
                }
                _ => {}
            }
        }
    }
    let mut areas: Vec<AreaChange> = areas
        .into_iter()
        .map(|(area, (commits, a, r, who))| AreaChange {
            area,
            commits,
            lines_added: a,
            lines_removed: r,
            authors: who.len() as u32,
        })
        .collect();
    areas.sort_by(|a, b| {
        (b.commits, b.lines_added + b.lines_removed)
            .cmp(&(a.commits, a.lines_added + a.lines_removed))
            .then_with(|| a.area.cmp(&b.area))
    });
    areas.truncate(ctx.params.top);
    let mut largest: Vec<usize> = ctx
        .period
        .iter()
        .copied()
        .filter(|&i| !ctx.commit(i).is_merge())
        .collect();
    let size = |i: usize| -> u64 {
        ctx.commit(i)
            .files
            .iter()
            .map(|f| u64::from(f.added.unwrap_or(0)) + u64::from(f.removed.unwrap_or(0)))
            .sum()
    };
    largest.sort_by(|&a, &b| size(b).cmp(&size(a)).then_with(|| a.cmp(&b)));
    let largest_changes = largest
        .into_iter()
        .take(5)
        .map(|i| ctx.commit_ref(i, "large"))
        .collect();
    let (new_file_count, deleted_file_count) = (new_files.len() as u32, deleted_files.len() as u32);
    let top = ctx.params.top * 2;
    Summary {
        id: "S1".to_string(),
        commits: ctx.period.len() as u32,
        merges,
        authors: humans.len() as u32,
        bots: bots.len() as u32,
        bot_commits,
        lines_added: added,
        lines_removed: removed,
        files_changed: files.len() as u32,
        areas,
        largest_changes,
        new_files: new_files.into_iter().take(top).collect(),
        deleted_files: deleted_files.into_iter().take(top).collect(),
        new_file_count,
        deleted_file_count,
    }
}
