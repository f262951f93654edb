//! The scoring stage: each candidate's fused lists, plus what its file's
//! signals add, times its priors; candidates the filters exclude leave.

use std::collections::{HashMap, HashSet};

use ken_core::{Language, is_test_path};
use ken_store::{HistoryStore, StoredChunk};

use super::Candidate;
use crate::Result;
use crate::params::RankParams;

/// What whole files say of their chunks: whole-file BM25, the files a bug
/// report mentions (the first `framed` from its traceback), graph
/// neighbours of the best files, and each file's PageRank.
pub(super) struct FileSignals<'a> {
    pub file_rank: &'a HashMap<&'a str, (usize, f32)>,
    pub mention_rank: &'a HashMap<&'a str, usize>,
    pub framed: usize,
    pub ppr_rank: &'a HashMap<String, (usize, f32)>,
    pub file_pr: &'a HashMap<String, f32>,
}

/// What a hit must satisfy whichever signal found it (dense hits come from
/// an index that knows nothing of paths or languages).
pub(super) struct Keep<'a> {
    pub languages: &'a [Language],
    pub paths: Option<&'a HashSet<&'a str>>,
    /// Commits one of which must have written a line of the chunk.
    pub shas: Option<&'a HashSet<String>>,
}

/// The candidates that pass `keep`, each scored: its lists' fused score,
/// plus what its file's signals add, times its priors.
pub(super) fn score_candidates(
    store: &dyn HistoryStore,
    cands: HashMap<u64, Candidate>,
    chunks: &HashMap<u64, StoredChunk>,
    by_file: &FileSignals<'_>,
    keep: &Keep<'_>,
    p: &RankParams,
) -> Result<Vec<(u64, Candidate)>> {
    let mut scored: Vec<(u64, Candidate)> = Vec::new();
    for (id, mut c) in cands {
        let Some(chunk) = chunks.get(&id) else {
            continue;
        };
        if !keep.languages.is_empty() && !keep.languages.contains(&chunk.language) {
            continue;
        }
        if let Some(set) = keep.paths
            && !set.contains(chunk.path.as_str())
        {
            continue;
        }
        if let Some(shas) = keep.shas
            && !store.blame_of(&chunk.path)?.iter().any(|b| {
                b.end_line >= chunk.start_line
                    && b.start_line <= chunk.end_line
                    && shas.contains(&b.sha)
            })
        {
            continue;
        }
        if let Some((rank, score)) = by_file.file_rank.get(chunk.path.as_str()) {
            c.fused += p.rrf(p.w_file, *rank);
            c.signals.set("file", *rank as u32, *score);
        }
        if let Some(&rank) = by_file.mention_rank.get(chunk.path.as_str()) {
            // the signal's score: 1 for a traceback frame, else 0
            let framed = rank <= by_file.framed;
            c.fused += p.mention_rrf(rank, framed);
            c.signals
                .set("mention", rank as u32, if framed { 1.0 } else { 0.0 });
        }
        if let Some((rank, score)) = by_file.ppr_rank.get(&chunk.path) {
            c.fused += p.rrf(p.w_ppr, *rank);
            c.signals.set("ppr", *rank as u32, *score);
        }
        c.fused *= prior(chunk, p);
        if let Some(r) = by_file.file_pr.get(&chunk.path) {
            c.fused *= r.max(0.05).powf(p.w_pagerank);
            c.signals.set("pagerank", 0, *r);
        }
        scored.push((id, c));
    }
    Ok(scored)
}

/// Static priors: trivial bodies, prose and tests rank lower.
fn prior(c: &StoredChunk, p: &RankParams) -> f32 {
    let trivial = if c.trivial { p.trivial_prior } else { 1.0 };
    trivial * file_prior(&c.path, c.language, p)
}

/// Priors that apply to a whole file (prose, tests).
pub fn file_prior(path: &str, language: Language, p: &RankParams) -> f32 {
    let mut f = 1.0;
    if !language.is_code() {
        f *= p.prose_prior;
    }
    if is_test_path(path) {
        f *= p.test_prior;
    }
    f
}
