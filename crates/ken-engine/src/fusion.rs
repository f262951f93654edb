//! File-level fusion: how files are ranked from the ranks they hold in each
//! retrieval list. One function, used by search (files mode) and by the
//! learner (tune.rs), so what is learned is exactly what is searched with.

use std::collections::HashMap;
use std::hash::Hash;

use crate::params::RankParams;

/// The lists a file can hold a rank in, in the order of [`FileRow::ranks`]:
/// whole-file BM25, chunk BM25, dense retrieval, exact symbols (each list of
/// chunks read as files in the order of their best chunk), files near the
/// best ones in the code graph, files an issue points at.
pub const SIGNALS: [&str; 6] = ["file", "bm25", "dense", "exact", "ppr", "mention"];

/// Where the mention list is in [`SIGNALS`].
const MENTION: usize = 5;

/// What fusion knows of one candidate file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRow {
    pub path: String,
    /// 1-based rank of the file in each list of [`SIGNALS`] (None: absent).
    pub ranks: [Option<u32>; SIGNALS.len()],
    /// Not code (docs, configuration, plain text).
    pub prose: bool,
    pub test: bool,
    /// The file's PageRank in the code graph, when the prior is on.
    pub pagerank: Option<f32>,
    /// Position among the pinned exact hits (pinned files come first).
    pub pinned: Option<usize>,
    /// Its mention is a traceback frame (decaying with `k_mention`).
    pub framed: bool,
    /// Commits that changed the file, and those of them that were fixes.
    pub changes: u32,
    pub fixes: u32,
    /// Commits that changed it in the year before.
    pub recent: u32,
}

impl FileRow {
    /// A file in no list yet: code, not a test, no history, not pinned.
    pub fn new(path: impl Into<String>) -> FileRow {
        FileRow {
            path: path.into(),
            ranks: [None; SIGNALS.len()],
            prose: false,
            test: false,
            pagerank: None,
            pinned: None,
            framed: false,
            changes: 0,
            fixes: 0,
            recent: 0,
        }
    }
}

/// The constants of file fusion, taken from [`RankParams`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileWeights {
    pub k: f32,
    /// The mention list's own decay ([`RankParams::k_mention`]).
    pub k_mention: f32,
    pub lists: [f32; SIGNALS.len()],
    pub prose_prior: f32,
    pub test_prior: f32,
    pub w_pagerank: f32,
    pub w_churn: f32,
    pub w_fixes: f32,
    pub w_recent: f32,
}

impl FileWeights {
    /// `with_dense`: a dense list takes part (the whole-file list then
    /// weighs `w_file_dense`).
    pub fn new(p: &RankParams, with_dense: bool) -> Self {
        FileWeights {
            k: p.k,
            k_mention: p.k_mention,
            lists: [
                if with_dense { p.w_file_dense } else { p.w_file },
                p.w_bm25_file,
                p.w_dense_file,
                p.w_symbol,
                p.w_ppr,
                p.w_mention,
            ],
            prose_prior: p.prose_prior,
            test_prior: p.test_prior,
            w_pagerank: p.w_pagerank,
            w_churn: p.w_churn,
            w_fixes: p.w_fixes,
            w_recent: p.w_recent,
        }
    }
}

/// A file's fused score: weighted reciprocal ranks times its priors.
pub fn file_score(row: &FileRow, w: &FileWeights) -> f32 {
    let mut s = 0.0;
    for (i, (rank, weight)) in row.ranks.iter().zip(w.lists).enumerate() {
        if let Some(r) = rank
            && weight > 0.0
        {
            s += if i == MENTION {
                crate::params::mention_score(weight, w.k, w.k_mention, *r as f32, row.framed)
            } else {
                weight / (w.k + *r as f32)
            };
        }
    }
    if row.prose {
        s *= w.prose_prior;
    }
    if row.test {
        s *= w.test_prior;
    }
    if let Some(pr) = row.pagerank {
        s *= pr.max(0.05).powf(w.w_pagerank);
    }
    if w.w_churn != 0.0 {
        s *= (1.0 + (row.changes as f32).ln_1p()).powf(w.w_churn);
    }
    if w.w_fixes != 0.0 {
        s *= (1.0 + (row.fixes as f32).ln_1p()).powf(w.w_fixes);
    }
    if w.w_recent != 0.0 {
        s *= (1.0 + (row.recent as f32).ln_1p()).powf(w.w_recent);
    }
    s
}

/// Files in the order search gives them: pinned ones by their position,
/// then by fused score, ties by path.
pub fn order(rows: &[FileRow], w: &FileWeights) -> Vec<usize> {
    let scores: Vec<f32> = rows.iter().map(|r| file_score(r, w)).collect();
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| {
        let (ra, rb) = (&rows[a], &rows[b]);
        match (ra.pinned, rb.pinned) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => scores[b]
                .total_cmp(&scores[a])
                .then_with(|| ra.path.cmp(&rb.path)),
        }
    });
    idx
}

/// Several ranked lists (of several queries, or repositories) fused by
/// reciprocal rank: an item at rank r (1-based) of a list gains
/// 1 / (k + r), and 1 more when it is pinned there. Each key keeps the item
/// it was first seen with; ties keep the order of first appearance.
pub fn fuse_lists<K: Eq + Hash + Clone, T>(
    lists: impl IntoIterator<Item = Vec<(K, T, bool)>>,
    k: f32,
) -> Vec<(K, T)> {
    let mut at: HashMap<K, usize> = HashMap::new();
    let mut fused: Vec<(K, T, f32)> = Vec::new();
    for list in lists {
        for (i, (key, item, pinned)) in list.into_iter().enumerate() {
            let gain = 1.0 / (k + (i + 1) as f32) + if pinned { 1.0 } else { 0.0 };
            match at.get(&key) {
                Some(&j) => fused[j].2 += gain,
                None => {
                    at.insert(key.clone(), fused.len());
                    fused.push((key, item, gain));
                }
            }
        }
    }
    // stable: equal scores keep the order of first appearance
    fused.sort_by(|a, b| b.2.total_cmp(&a.2));
    fused.into_iter().map(|(k, t, _)| (k, t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, ranks: [Option<u32>; 6]) -> FileRow {
        FileRow {
            ranks,
            ..FileRow::new(path)
        }
    }

    #[test]
    fn traceback_frames_lose_weight_with_depth_other_mentions_do_not() {
        assert_eq!(SIGNALS[MENTION], "mention");
        let p = RankParams::default();
        let w = FileWeights::new(&p, false);
        let mention = |rank: u32, framed: bool| {
            let mut r = row("a.py", [None, None, None, None, None, Some(rank)]);
            r.framed = framed;
            file_score(&r, &w)
        };
        // the innermost frame weighs what the head of any list does
        let head = p.w_mention / (p.k + 1.0);
        assert!((mention(1, true) - head).abs() < 1e-6);
        assert!((mention(1, false) - head).abs() < 1e-6);
        // deeper frames fall off with k_mention, a named path with k
        let third = head * (p.k_mention + 1.0) / (p.k_mention + 3.0);
        assert!((mention(3, true) - third).abs() < 1e-6);
        assert!((mention(3, false) - p.w_mention / (p.k + 3.0)).abs() < 1e-6);
        assert!(mention(3, true) < mention(3, false));
        // at k_mention = k frames decay like every other list
        let flat = RankParams {
            k_mention: p.k,
            ..RankParams::default()
        };
        let wf = FileWeights::new(&flat, false);
        let mut r = row("a.py", [None, None, None, None, None, Some(4)]);
        r.framed = true;
        assert!((file_score(&r, &wf) - p.w_mention / (p.k + 4.0)).abs() < 1e-6);
        // the chunk stage scores a mention the same way
        assert!((p.mention_rrf(3, true) - third).abs() < 1e-6);
    }

    #[test]
    fn scores_are_weighted_reciprocal_ranks_times_priors() {
        let p = RankParams::default();
        let w = FileWeights::new(&p, false);
        let r = row("a.py", [Some(1), Some(3), None, None, None, None]);
        let expect = p.w_file / (p.k + 1.0) + p.w_bm25_file / (p.k + 3.0);
        assert!((file_score(&r, &w) - expect).abs() < 1e-6);
        let mut t = r.clone();
        t.test = true;
        t.prose = true;
        assert!((file_score(&t, &w) - expect * p.test_prior * p.prose_prior).abs() < 1e-6);
        // with a dense list the whole-file list weighs w_file_dense
        let wd = FileWeights::new(&p, true);
        assert_eq!(wd.lists[0], p.w_file_dense);
        // a list of weight 0 counts for nothing
        let mut off = w;
        off.lists[1] = 0.0;
        assert!((file_score(&r, &off) - p.w_file / (p.k + 1.0)).abs() < 1e-6);
        // history priors: a file fixed often gains, by the learned exponent
        let mut hist = w;
        hist.w_fixes = 1.0;
        let mut fixed = r.clone();
        fixed.fixes = 9;
        let gain = file_score(&fixed, &hist) / file_score(&r, &hist);
        assert!((gain - (1.0 + 10f32.ln())).abs() < 1e-4);
    }

    #[test]
    fn lists_fuse_by_reciprocal_rank_and_pins_count_more() {
        let a = vec![("x", 1, false), ("y", 2, false), ("z", 3, false)];
        let b = vec![("y", 20, false), ("x", 10, false)];
        let fused = fuse_lists([a.clone(), b], 60.0);
        let keys: Vec<&str> = fused.iter().map(|(k, _)| *k).collect();
        // x and y tie (1/61 + 1/62 each): first seen first; z once
        assert_eq!(keys, ["x", "y", "z"]);
        // an item keeps what it was first seen with
        assert_eq!(fused[1].1, 2);
        let c = vec![("z", 3, true)];
        let keys: Vec<&str> = fuse_lists([a, c], 60.0).iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["z", "x", "y"]);
    }

    #[test]
    fn pinned_files_come_first_then_scores_then_paths() {
        let w = FileWeights::new(&RankParams::default(), false);
        let mut pinned = row("z.py", [None, None, None, Some(1), None, None]);
        pinned.pinned = Some(0);
        let rows = vec![
            row("b.py", [Some(1), None, None, None, None, None]),
            row("a.py", [Some(2), None, None, None, None, None]),
            pinned,
            row("c.py", [Some(1), None, None, None, None, None]),
        ];
        assert_eq!(order(&rows, &w), vec![2, 0, 3, 1]);
    }
}
