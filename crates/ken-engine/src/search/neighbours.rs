//! The graph stage: files near the best ones in the code graph
//! (personalized PageRank over the file graph, seeded by the other lists).

use std::collections::{HashMap, HashSet};

use ken_store::{ChunkStore, GraphStore, StoredChunk};

use super::Candidate;
use crate::Result;
use crate::params::RankParams;

/// Files near the best ones in the code graph (personalized PageRank over
/// the file graph, seeded by the other lists), ranked; the first chunk of
/// the nearest files the other lists missed joins the candidates.
pub(super) fn graph_neighbours(
    store: &(impl ChunkStore + GraphStore + ?Sized),
    cands: &mut HashMap<u64, Candidate>,
    chunks: &mut HashMap<u64, StoredChunk>,
    (file_rank, covered_files): (&HashMap<&str, (usize, f32)>, &HashSet<String>),
    allowed_set: Option<&HashSet<&str>>,
    p: &RankParams,
) -> Result<HashMap<String, (usize, f32)>> {
    let seeds = seed_files(cands, chunks, file_rank, p);
    let ranked = graph_neighbourhood(store, &seeds)?;
    let near: Vec<String> = ranked
        .iter()
        .take(20)
        .map(|(path, _)| path)
        .filter(|path| {
            !covered_files.contains(*path)
                && allowed_set
                    .as_ref()
                    .is_none_or(|a| a.contains(path.as_str()))
        })
        .cloned()
        .collect();
    for first in store.first_chunk_heads(&near)? {
        cands.entry(first.id).or_default();
        chunks.insert(first.id, first);
    }
    Ok(ranked
        .into_iter()
        .take(p.candidates)
        .enumerate()
        .map(|(i, (path, score))| (path, (i + 1, score)))
        .collect())
}

/// The seed files of the personalized PageRank: the best files of the
/// whole-file BM25, chunk BM25, dense and exact-symbol lists, fused by RRF.
fn seed_files(
    cands: &HashMap<u64, Candidate>,
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<&str, (usize, f32)>,
    p: &RankParams,
) -> Vec<(String, f64)> {
    let items: Vec<(&str, &Candidate)> = cands
        .iter()
        .filter_map(|(id, c)| Some((chunks.get(id)?.path.as_str(), c)))
        .collect();
    let score = file_rrf(
        &items,
        (file_rank, p.w_file),
        &[
            ("bm25", p.w_bm25_file),
            ("dense", p.w_dense_file),
            ("exact", p.w_symbol),
        ],
        p,
    );
    let mut seeds: Vec<(String, f64)> = score
        .into_iter()
        .map(|(path, s)| (path.to_string(), s as f64))
        .collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    seeds.truncate(p.ppr_seeds);
    seeds
}

/// File-level RRF: the whole-file BM25 list, and each chunk signal as a
/// list of files in the order of their best chunk.
fn file_rrf<'a>(
    items: &[(&'a str, &Candidate)],
    (file_rank, w_file): (&HashMap<&'a str, (usize, f32)>, f32),
    signals: &[(&str, f32)],
    p: &RankParams,
) -> HashMap<&'a str, f32> {
    let mut score: HashMap<&str, f32> = HashMap::new();
    for (path, (rank, _)) in file_rank {
        *score.entry(path).or_default() += w_file / (p.k + *rank as f32);
    }
    for &(signal, w) in signals {
        if w <= 0.0 {
            continue;
        }
        let mut order: Vec<(u32, &str)> = items
            .iter()
            .filter_map(|(path, c)| c.signals.get(signal).map(|s| (s.rank, *path)))
            .collect();
        order.sort();
        let mut seen = HashSet::new();
        for (_, path) in order {
            if seen.insert(path) {
                *score.entry(path).or_default() += w / (p.k + seen.len() as f32);
            }
        }
    }
    score
}

/// Files ranked by personalized PageRank over the undirected file graph,
/// jumping back to `seeds`; files the walk never reaches are left out.
fn graph_neighbourhood(
    store: &(impl GraphStore + ?Sized),
    seeds: &[(String, f64)],
) -> Result<Vec<(String, f32)>> {
    if seeds.is_empty() {
        return Ok(Vec::new());
    }
    let edges = store.edges()?;
    if edges.is_empty() {
        return Ok(Vec::new());
    }
    let graph = ken_graph::FileGraph::build(std::iter::empty(), &edges).undirected();
    let nodes: Vec<(ken_graph::NodeId, f64)> = seeds
        .iter()
        .filter_map(|(path, w)| graph.node(path).map(|n| (n, *w)))
        .collect();
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let ranks = graph.personalized_pagerank(&nodes, &ken_graph::RankOptions::default());
    let mut out: Vec<(String, f32)> = ranks
        .scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, s)| (graph.files[i].clone(), *s as f32))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}
