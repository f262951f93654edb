//! File fusion (files mode): files ranked by [`fusion::file_score`] of
//! their lists, each file's best chunk carrying its file's score.

use std::collections::{HashMap, HashSet};

use ken_core::is_test_path;
use ken_store::StoredChunk;

use super::{Candidate, Ranked};
use crate::fusion;
use crate::params::RankParams;

/// Files mode: rank files by file-level fusion ([`fusion::file_score`] of
/// each file's [`file_rows`]) and give that score to each file's best
/// chunk; a file's other chunks fall behind it.
pub(super) fn fuse_files(
    scored: &mut [(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<String, (usize, f32)>,
    p: &RankParams,
    churn: Option<&crate::churn::FileChurn>,
) {
    let (rows, with_dense) = rows_of(scored, chunks, file_rank, churn);
    let w = fusion::FileWeights::new(p, with_dense);
    let file_score: HashMap<&str, f32> = rows
        .iter()
        .map(|r| (r.path.as_str(), fusion::file_score(r, &w)))
        .collect();
    let mut best: HashMap<&str, (u64, f32)> = HashMap::new();
    for (id, c) in scored.iter() {
        let path = chunks[id].path.as_str();
        let e = best.entry(path).or_insert((*id, c.fused));
        if c.fused > e.1 {
            *e = (*id, c.fused);
        }
    }
    for (id, c) in scored.iter_mut() {
        let path = chunks[id].path.as_str();
        let is_best = best.get(path).is_some_and(|(b, _)| b == id);
        let f = file_score.get(path).copied().unwrap_or(0.0);
        c.fused = if is_best { f } else { f * 0.5 };
    }
}

/// What file fusion knows of each candidate file (the learner's features).
pub(crate) fn file_rows(ranked: &Ranked) -> Vec<fusion::FileRow> {
    rows_of(&ranked.scored, &ranked.chunks, &ranked.file_rank, None).0
}

/// Each candidate file's rank in every list — whole-file BM25, and each
/// chunk signal as a list of files in the order of their best chunk — its
/// priors and its pin; and whether a dense list took part.
fn rows_of(
    scored: &[(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<String, (usize, f32)>,
    churn: Option<&crate::churn::FileChurn>,
) -> (Vec<fusion::FileRow>, bool) {
    let mut rows: Vec<fusion::FileRow> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (id, c) in scored {
        let chunk = &chunks[id];
        let path = chunk.path.as_str();
        let i = *at.entry(path).or_insert_with(|| {
            rows.push(fusion::FileRow {
                prose: !chunk.language.is_code(),
                test: is_test_path(path),
                ..fusion::FileRow::new(path)
            });
            rows.len() - 1
        });
        let row = &mut rows[i];
        if let Some((_, pos)) = c.pinned {
            row.pinned = Some(row.pinned.map_or(pos, |q| q.min(pos)));
        }
        if let Some(s) = c.signals.get("pagerank") {
            row.pagerank = Some(s.score);
        }
        if c.signals.get("mention").is_some_and(|s| s.score > 0.0) {
            row.framed = true;
        }
    }
    let with_dense = scored.iter().any(|(_, c)| c.signals.get("dense").is_some());
    for row in rows.iter_mut() {
        row.ranks[0] = file_rank.get(&row.path).map(|(r, _)| *r as u32);
        if let Some(c) = churn {
            let n = c.counts(&row.path, None);
            (row.changes, row.fixes, row.recent) = (n.changes, n.fixes, n.recent);
        }
    }
    for (slot, signal) in fusion::SIGNALS.iter().enumerate().skip(1) {
        let mut order: Vec<(u32, &str)> = scored
            .iter()
            .filter_map(|(id, c)| {
                c.signals
                    .get(signal)
                    .map(|s| (s.rank, chunks[id].path.as_str()))
            })
            .collect();
        order.sort();
        let mut seen: HashSet<&str> = HashSet::new();
        for (_, path) in order {
            if seen.insert(path) {
                rows[at[path]].ranks[slot] = Some(seen.len() as u32);
            }
        }
    }
    (rows, with_dense)
}
