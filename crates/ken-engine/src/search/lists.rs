//! The retrieval stage: each signal's ranked list of candidates (dense,
//! BM25 over chunks, symbol look-ups of the question's identifiers, BM25
//! over whole files, the files a bug report mentions), accumulated into
//! one weighted Reciprocal Rank Fusion score per chunk.

use std::collections::{HashMap, HashSet};

use ken_store::{
    ChunkFilter, ChunkStore, FileHit, IndexStore, LexicalQuery, StoredChunk, SymbolTier,
    VectorStore,
};

use super::{Candidate, Mode, SearchEnv, SearchRequest};
use crate::params::RankParams;
use crate::question::{QueryIdent, Question};
use crate::{Result, issue, semantic};

/// Dense retrieval as one RRF list (when the mode and the index allow).
pub(super) fn add_dense(
    store: &dyn VectorStore,
    req: &SearchRequest,
    env: SearchEnv<'_>,
    allowed: Option<&Vec<String>>,
    cands: &mut HashMap<u64, Candidate>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let p = env.rank;
    if let Some(e) = env.embedder.filter(|_| req.mode != Mode::Lexical) {
        match env.vectors {
            Some(view) => {
                let semantic::Dense { hits, held, chunks } = semantic::dense_search_in(
                    store,
                    view,
                    e,
                    &req.query,
                    p.candidates,
                    &ChunkFilter {
                        languages: req.filters.languages.clone(),
                        paths: allowed.cloned(),
                    },
                    p.adapter,
                )?;
                for (i, (id, score)) in hits.iter().enumerate() {
                    let c = cands.entry(*id).or_default();
                    c.fused += p.rrf(p.w_dense, i + 1);
                    c.signals.set("dense", i as u32 + 1, *score);
                }
                if held < chunks {
                    notes.push(format!(
                        "semantic coverage {:.0}% ({held} of {chunks} chunks embedded): run `ken index` to finish",
                        100.0 * held as f64 / chunks.max(1) as f64
                    ));
                }
            }
            None => notes.push(
                "no vectors for this model yet: lexical results only (run `ken index`)".into(),
            ),
        }
    }

    Ok(())
}

/// BM25 over chunks as one RRF list.
pub(super) fn add_bm25(
    store: &dyn ChunkStore,
    lex: &LexicalQuery,
    cands: &mut HashMap<u64, Candidate>,
    p: &RankParams,
) -> Result<()> {
    for (i, h) in store.search_chunks(lex)?.iter().enumerate() {
        let c = cands.entry(h.chunk_id).or_default();
        c.fused += p.rrf(p.w_bm25, i + 1);
        c.signals.set("bm25", i as u32 + 1, h.score);
    }
    Ok(())
}

/// BM25 over whole files: it lifts every candidate of a well-ranked file
/// (score.rs), and brings in files no chunk list found ([`load_heads`]).
pub(super) fn whole_files(
    store: &dyn ChunkStore,
    lex: &LexicalQuery,
    p: &RankParams,
) -> Result<Vec<FileHit>> {
    Ok(store.search_files(&LexicalQuery {
        limit: p.candidates / 2,
        ..lex.clone()
    })?)
}

/// The candidates' chunks without their text, and the files they cover.
/// The first chunk of each file that whole-file BM25 ranks among its best
/// 50, or that a report mentions among its first 20, joins the candidates
/// when no list found a chunk of it.
pub(super) fn load_heads(
    store: &dyn ChunkStore,
    cands: &mut HashMap<u64, Candidate>,
    file_hits: &[FileHit],
    mentioned: &[String],
) -> Result<(HashMap<u64, StoredChunk>, HashSet<String>)> {
    let ids: Vec<u64> = cands.keys().copied().collect();
    let mut chunks: HashMap<u64, StoredChunk> = store
        .chunk_heads(&ids)?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let covered: HashSet<String> = chunks.values().map(|c| c.path.clone()).collect();
    let uncovered: Vec<String> = file_hits
        .iter()
        .take(50)
        .map(|h| &h.path)
        .chain(mentioned.iter().take(20))
        .filter(|path| !covered.contains(*path))
        .cloned()
        .collect();
    for first in store.first_chunk_heads(&uncovered)? {
        cands.entry(first.id).or_default();
        chunks.insert(first.id, first);
    }
    Ok((chunks, covered))
}

/// Symbol look-ups of the query's identifiers as RRF lists: exact hits of
/// strong identifiers (returned in order, the pin candidates), exact hits
/// of plain words, prefix and substring hits.
pub(super) fn add_symbols(
    store: &dyn ChunkStore,
    question: &Question,
    lexical: bool,
    allowed: Option<&HashSet<&str>>,
    cands: &mut HashMap<u64, Candidate>,
    p: &RankParams,
) -> Result<Vec<(u64, SymbolTier, bool)>> {
    let mut exact_order: Vec<(u64, SymbolTier, bool)> = Vec::new();
    let mut partial_rank = 0usize;
    let mut weak_rank = 0usize;
    let asked: Vec<(String, bool)> = question
        .idents
        .iter()
        .filter(|_| lexical)
        .map(|QueryIdent { text, strong }| (text.clone(), *strong))
        .collect();
    let found = store.lookup_symbols_many(&asked, 50)?;
    for ((_, strong), matches) in asked.iter().zip(found) {
        let strong = *strong;
        for m in matches {
            if let Some(set) = allowed
                && !set.contains(m.path.as_str())
            {
                continue;
            }
            let c = cands.entry(m.chunk_id).or_default();
            match m.tier {
                SymbolTier::Exact | SymbolTier::ExactFolded if !strong => {
                    // a plain word of a longer query that happens to name a symbol
                    weak_rank += 1;
                    if c.signals.get("word_symbol").is_none() {
                        c.signals.set("word_symbol", weak_rank as u32, 0.5);
                        c.fused += p.rrf(p.w_weak, weak_rank);
                    }
                }
                SymbolTier::Exact | SymbolTier::ExactFolded => {
                    let rank = exact_order.len() + 1;
                    if c.signals.get("exact").is_none() {
                        c.signals.set(
                            "exact",
                            rank as u32,
                            if m.tier == SymbolTier::Exact {
                                1.0
                            } else {
                                0.9
                            },
                        );
                        c.fused += p.rrf(p.w_symbol, rank);
                        exact_order.push((m.chunk_id, m.tier, strong));
                        c.definition = Some(m);
                    }
                }
                tier => {
                    partial_rank += 1;
                    if c.signals.get(tier.name()).is_none() {
                        c.signals.set(tier.name(), partial_rank as u32, 0.5);
                        c.fused += p.rrf(p.w_partial, partial_rank);
                    }
                }
            }
        }
    }

    Ok(exact_order)
}

/// The indexed files (those a path filter allows) an issue points at.
pub(super) fn mentioned_files(
    store: &dyn IndexStore,
    q: &issue::IssueQuery,
    allowed: Option<&HashSet<&str>>,
) -> Result<issue::Mentions> {
    if q.frames.is_empty() && q.paths.is_empty() && q.modules.is_empty() {
        return Ok(issue::Mentions::default());
    }
    let files = store.files()?;
    let finder = issue::FileFinder::new(
        files
            .iter()
            .filter(|f| f.skip.is_none() && allowed.is_none_or(|a| a.contains(f.path.as_str())))
            .map(|f| f.path.as_str()),
    );
    Ok(issue::resolve(q, &finder))
}
