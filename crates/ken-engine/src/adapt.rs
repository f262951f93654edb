//! Dense retrieval adapted to one repository from its own history.
//!
//! The embedding model is a general sentence model: it puts a commit
//! message near prose that shares its words, not necessarily near the code
//! the message is about. A repository's past commits are pairs of a
//! message and the files it changed. From them this module learns a
//! query-side map of low rank, `q ↦ normalize(q + U·Vᵀ·(q − μ))`, with μ
//! the mean of the past questions (so the map cannot add one direction to
//! every query and pull them all toward the files changed most often),
//! contrastively:
//! each past message's changed files against the other files its plain
//! query ranked near the top (hard negatives), a file scored by its best
//! vector, as search scores it. Only queries move, so nothing is embedded
//! again and the vector index stays as it is.
//!
//! Leakage-safe: only commits at or before the indexed one are read, and
//! the questions the fusion learner asks (tune.rs) are left out, so its
//! held-out check of the dense list is not flattered. The fit is checked
//! on the newest quarter of the questions, which it does not see, with the
//! store's own vector search (top files by their best chunk): it is
//! adopted only when it does better there than the plain query.
//! Deterministic: the same history gives the same map.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use ken_embed::Embedder;
use ken_store::{ChunkFilter, DenseAdapter, Store, StoredChunk};

use crate::query_map::{Adapter, SplitMix};

use crate::semantic::{self, EmbedPlan};
use crate::tune::{self, CommitQuestion};
use crate::{EngineError, Result};

/// How much history the adapter learns from, and how.
#[derive(Debug, Clone, Copy)]
pub struct AdaptOptions {
    /// Most past commits asked.
    pub max_questions: usize,
    /// Fewer usable questions than this: nothing is learned.
    pub min_questions: usize,
    /// The rank of the map.
    pub rank: usize,
    /// Chunks of the plain query's nearest read as candidates (negatives).
    pub negatives: usize,
    /// Passes over the questions tried (the best on held-out questions is kept).
    pub epochs: &'static [usize],
    pub learning_rate: f32,
    /// Softmax temperature over the candidates' cosine similarities.
    pub temperature: f32,
    /// L2 pull of the map's factors toward zero.
    pub l2: f32,
    /// Weight of the squared distance each query is moved (`|U·a|²`) in
    /// the loss: the map may turn a query, not replace it.
    pub shift: f32,
}

impl Default for AdaptOptions {
    fn default() -> Self {
        AdaptOptions {
            max_questions: 800,
            min_questions: 40,
            rank: 8,
            negatives: 100,
            epochs: &[1, 2, 4, 8, 16],
            learning_rate: 0.001,
            temperature: 0.05,
            l2: 1e-4,
            shift: 4.0,
        }
    }
}

/// One past question: its plain query, and its candidate files, each
/// with the vectors of its candidate chunks.
struct Example {
    query: Vec<f32>,
    /// The candidate vectors (shared with the reader's cache: many
    /// questions hold the same chunks).
    vectors: Vec<Arc<[f32]>>,
    /// The candidate file of each vector.
    file_of: Vec<u32>,
    /// Per candidate file: it was changed by the commit.
    gold: Vec<bool>,
    /// The gold paths, for the held-out check by search.
    gold_paths: HashSet<String>,
}

/// Learn the query map of one repository. `None` when history is too
/// short or the vectors too few to say anything.
pub fn learn(
    store: &dyn Store,
    embedder: &dyn Embedder,
    plan: EmbedPlan,
    until: Option<i64>,
    opts: &AdaptOptions,
) -> Result<Option<DenseAdapter>> {
    let started = Instant::now();
    let model = embedder.id().to_string();
    if store.vector_meta(&model)?.is_none_or(|m| m.rows == 0) {
        return Ok(None);
    }
    let paths = crate::repo::indexed_paths(store)?;
    let indexed: HashSet<String> = paths.into_iter().collect();
    let commits = store.all_commits()?;
    // the fusion learner's questions stay unseen (see the module's notes)
    // and a change made twice (a backport, a cherry-pick) is asked once:
    // its copies would let the held-out check see what the fit saw
    let mut seen: HashSet<String> = tune::history_questions(
        store,
        &commits,
        &indexed,
        until,
        tune::TuneOptions::default().max_queries,
    )?
    .iter()
    .map(title)
    .collect();
    let questions: Vec<CommitQuestion> =
        tune::history_questions(store, &commits, &indexed, until, opts.max_questions * 2)?
            .into_iter()
            .filter(|q| seen.insert(title(q)))
            .take(opts.max_questions)
            .collect();
    if questions.len() < opts.min_questions {
        return Ok(None);
    }
    let mut reader = VectorReader::new(store, embedder, plan);
    let mut examples = Vec::new();
    for q in &questions {
        let query = embedder
            .embed_query(&q.message)
            .map_err(EngineError::from_embed)?;
        if let Some(e) = reader.example(query, &q.gold, opts.negatives)? {
            examples.push(e);
        }
    }
    if examples.len() < opts.min_questions {
        return Ok(None);
    }
    let dim = examples[0].query.len();
    // newest first: the newest quarter is held out
    let held = examples.len() / 4;
    let (test, train) = examples.split_at(held);
    let plain = search_mrr(store, &model, test, None)?;
    let train = weighed(train);
    let mut adapter = Adapter::new(dim, opts.rank, mean_query(&train), SEED);
    let mut adam = Adam::new(adapter.u.len());
    // the best map held out, after how many passes
    let mut best: Option<(f64, usize, Adapter)> = None;
    let mut done = 0;
    for &epochs in opts.epochs {
        for epoch in done..epochs {
            train_epoch(&mut adapter, &mut adam, &train, opts, epoch as u64);
        }
        done = epochs;
        let m = search_mrr(store, &model, test, Some(&adapter))?;
        if best.as_ref().is_none_or(|(b, _, _)| m > b + 1e-9) {
            best = Some((m, epochs, adapter.clone()));
        }
    }
    let Some((adapted, epochs, adapter)) = best else {
        return Ok(None);
    };
    let adopted = adapted > plain;
    let weights = if adopted {
        adapter.encode()
    } else {
        String::new()
    };
    Ok(Some(DenseAdapter {
        model,
        questions: examples.len(),
        heldout: test.len(),
        heldout_plain: round(plain),
        heldout_adapted: round(adapted),
        adopted,
        dim,
        rank: opts.rank,
        epochs,
        took_ms: started.elapsed().as_millis() as u64,
        weights,
        ..Default::default()
    }))
}

const SEED: u64 = 0x6b656e;

/// A question's first line, in lower case with spaces collapsed.
fn title(q: &CommitQuestion) -> String {
    let first = q.message.lines().next().unwrap_or("");
    first
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Questions with the weight each counts with: a file that many past
/// commits changed would otherwise teach the map to point every query at
/// it; each question counts by the mean of `1/√n` over its files, `n` the
/// questions that changed the file (scaled to a mean of 1).
fn weighed(data: &[Example]) -> Vec<(&Example, f32)> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for e in data {
        for p in &e.gold_paths {
            *counts.entry(p.as_str()).or_default() += 1;
        }
    }
    let raw: Vec<f32> = data
        .iter()
        .map(|e| {
            let n = e.gold_paths.len().max(1) as f32;
            e.gold_paths
                .iter()
                .map(|p| 1.0 / (counts[p.as_str()] as f32).sqrt())
                .sum::<f32>()
                / n
        })
        .collect();
    let mean = raw.iter().sum::<f32>() / raw.len().max(1) as f32;
    data.iter()
        .zip(raw)
        .map(|(e, w)| (e, if mean > 0.0 { w / mean } else { 1.0 }))
        .collect()
}

/// The mean of the questions' plain queries.
fn mean_query(data: &[(&Example, f32)]) -> Vec<f32> {
    let dim = data.first().map_or(0, |(e, _)| e.query.len());
    let mut mean = vec![0.0f32; dim];
    for (e, _) in data {
        for (m, x) in mean.iter_mut().zip(&e.query) {
            *m += x;
        }
    }
    let n = data.len().max(1) as f32;
    mean.iter_mut().for_each(|m| *m /= n);
    mean
}

/// A chunk's path and its vectors.
type ReadChunk = (String, Vec<Arc<[f32]>>);

/// Reads chunks and their vectors once each.
struct VectorReader<'a> {
    store: &'a dyn Store,
    model: String,
    plan: EmbedPlan,
    window: usize,
    /// Chunk id → (path, its vectors).
    chunks: HashMap<u64, ReadChunk>,
    /// Path → its chunk ids.
    files: HashMap<String, Vec<u64>>,
}

impl<'a> VectorReader<'a> {
    fn new(store: &'a dyn Store, embedder: &dyn Embedder, plan: EmbedPlan) -> Self {
        VectorReader {
            store,
            model: embedder.id().to_string(),
            plan,
            window: semantic::window_chars(embedder.max_tokens()),
            chunks: HashMap::new(),
            files: HashMap::new(),
        }
    }

    /// Read the vectors of chunks not read yet.
    fn load(&mut self, chunks: Vec<StoredChunk>) -> Result<()> {
        let chunks: Vec<StoredChunk> = chunks
            .into_iter()
            .filter(|c| !self.chunks.contains_key(&c.id))
            .collect();
        let keyed: Vec<(u64, String, Vec<String>)> = chunks
            .into_iter()
            .map(|c| {
                let keys = semantic::embed_texts(&c, self.plan, self.window)
                    .iter()
                    .map(|t| semantic::key(t, self.plan.text))
                    .collect();
                (c.id, c.path, keys)
            })
            .collect();
        let all: Vec<String> = keyed.iter().flat_map(|k| k.2.iter().cloned()).collect();
        let mut vectors = self.store.get_vectors(&self.model, &all)?;
        for (id, path, keys) in keyed {
            let vs: Vec<Arc<[f32]>> = keys
                .iter()
                .filter_map(|k| vectors.remove(k))
                .map(Arc::from)
                .collect();
            self.chunks.insert(id, (path, vs));
        }
        Ok(())
    }

    fn file(&mut self, path: &str) -> Result<Vec<u64>> {
        if let Some(ids) = self.files.get(path) {
            return Ok(ids.clone());
        }
        let chunks = self.store.chunks_of_file(path)?;
        let ids: Vec<u64> = chunks.iter().map(|c| c.id).collect();
        self.load(chunks)?;
        self.files.insert(path.to_string(), ids.clone());
        Ok(ids)
    }

    /// A question's candidates: every chunk of its gold files and the
    /// plain query's `k` nearest chunks (None: no gold vector, or no
    /// other file to tell it from).
    fn example(&mut self, query: Vec<f32>, gold: &[String], k: usize) -> Result<Option<Example>> {
        let near = self
            .store
            .search_vectors(&self.model, &query, k, &ChunkFilter::default())?;
        let ids: Vec<u64> = near
            .iter()
            .map(|h| h.0)
            .filter(|id| !self.chunks.contains_key(id))
            .collect();
        if !ids.is_empty() {
            let chunks = self.store.chunks(&ids)?;
            self.load(chunks)?;
        }
        let mut ids: Vec<u64> = near.iter().map(|h| h.0).collect();
        for path in gold {
            ids.extend(self.file(path)?);
        }
        let mut seen = HashSet::new();
        let mut file_index: HashMap<&str, u32> = HashMap::new();
        let mut gold_flags = Vec::new();
        let (mut vectors, mut file_of) = (Vec::new(), Vec::new());
        for id in ids {
            if !seen.insert(id) {
                continue;
            }
            let Some((path, vs)) = self.chunks.get(&id) else {
                continue;
            };
            if vs.is_empty() {
                continue;
            }
            let next = file_index.len() as u32;
            let f = *file_index.entry(path.as_str()).or_insert_with(|| {
                gold_flags.push(gold.iter().any(|g| g == path));
                next
            });
            for v in vs {
                vectors.push(v.clone());
                file_of.push(f);
            }
        }
        let golds = gold_flags.iter().filter(|g| **g).count();
        if golds == 0 || golds == gold_flags.len() {
            return Ok(None);
        }
        Ok(Some(Example {
            query,
            vectors,
            file_of,
            gold: gold_flags,
            gold_paths: gold.iter().cloned().collect(),
        }))
    }
}

/// MRR@10 of the gold files among the files the store's vector search
/// ranks (each by its best chunk), with the query as it is or adapted.
fn search_mrr(
    store: &dyn Store,
    model: &str,
    data: &[Example],
    adapter: Option<&Adapter>,
) -> Result<f64> {
    if data.is_empty() {
        return Ok(0.0);
    }
    let mut total = 0.0;
    for e in data {
        let q = match adapter {
            Some(a) => a.apply(&e.query),
            None => e.query.clone(),
        };
        let hits = store.search_vectors(model, &q, 100, &ChunkFilter::default())?;
        let ids: Vec<u64> = hits.iter().map(|h| h.0).collect();
        let heads = store.chunk_heads(&ids)?;
        let mut files: Vec<&str> = Vec::new();
        for c in &heads {
            if !files.contains(&c.path.as_str()) {
                files.push(&c.path);
            }
        }
        if let Some(p) = files
            .iter()
            .take(10)
            .position(|f| e.gold_paths.contains(*f))
        {
            total += 1.0 / (p + 1) as f64;
        }
    }
    Ok(total / data.len() as f64)
}

/// One pass of Adam over `data`, one question at a time, in an order
/// drawn from `seed`.
fn train_epoch(
    adapter: &mut Adapter,
    adam: &mut Adam,
    data: &[(&Example, f32)],
    opts: &AdaptOptions,
    seed: u64,
) {
    let mut order: Vec<usize> = (0..data.len()).collect();
    let mut rng = SplitMix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
    for i in (1..order.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let n = adapter.u.len();
    let mut gu = vec![0.0f32; n];
    let mut gv = vec![0.0f32; n];
    for &i in &order {
        gu.iter_mut().for_each(|g| *g = 0.0);
        gv.iter_mut().for_each(|g| *g = 0.0);
        let (e, weight) = data[i];
        gradient(adapter, e, opts.temperature, opts.shift, &mut gu, &mut gv);
        if weight != 1.0 {
            gu.iter_mut()
                .chain(gv.iter_mut())
                .for_each(|g| *g *= weight);
        }
        adam.step(adapter, &gu, &gv, opts);
    }
}

/// The gradient of one question's loss, −log of the softmax mass of its
/// gold files plus `shift` times the squared distance the query moved,
/// added to `gu` and `gv`.
fn gradient(
    adapter: &Adapter,
    e: &Example,
    temperature: f32,
    shift: f32,
    gu: &mut [f32],
    gv: &mut [f32],
) {
    let (dim, rank) = (adapter.dim, adapter.rank);
    let a = adapter.project(&e.query);
    let z = adapter.lift(&e.query, &a);
    let norm = z.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    let zh: Vec<f32> = z.iter().map(|x| x / norm).collect();
    // each file's best vector and its similarity
    let files = e.gold.len();
    let mut best = vec![(f32::NEG_INFINITY, 0usize); files];
    for (r, f) in e.file_of.iter().enumerate() {
        let v = &e.vectors[r];
        let s = zh.iter().zip(v.iter()).map(|(x, y)| x * y).sum::<f32>();
        let b = &mut best[*f as usize];
        if s > b.0 {
            *b = (s, r);
        }
    }
    let logits: Vec<f32> = best.iter().map(|b| b.0 / temperature).collect();
    let max = logits.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
    let total: f32 = exp.iter().sum();
    let gold_mass: f32 = exp
        .iter()
        .zip(&e.gold)
        .filter(|(_, g)| **g)
        .map(|(x, _)| x)
        .sum();
    // d loss / d z
    let mut gz = vec![0.0f32; dim];
    for (f, &(s, r)) in best.iter().enumerate() {
        let p = exp[f] / total;
        let target = if e.gold[f] { exp[f] / gold_mass } else { 0.0 };
        let dl = (p - target) / temperature;
        if dl == 0.0 {
            continue;
        }
        let v = &e.vectors[r];
        for i in 0..dim {
            gz[i] += dl * (v[i] - s * zh[i]) / norm;
        }
    }
    // the shift: d(shift·|z − q|²)/dz
    for i in 0..dim {
        gz[i] += 2.0 * shift * (z[i] - e.query[i]);
    }
    // z = q + U·a, a = Vᵀ·(q − μ)
    let mut ug = vec![0.0f32; rank]; // Uᵀ·gz
    for i in 0..dim {
        let row = &adapter.u[i * rank..(i + 1) * rank];
        for j in 0..rank {
            gu[i * rank + j] += gz[i] * a[j];
            ug[j] += row[j] * gz[i];
        }
    }
    for i in 0..dim {
        for j in 0..rank {
            gv[i * rank + j] += (e.query[i] - adapter.mean[i]) * ug[j];
        }
    }
}

/// Adam's moments for both factors.
struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
}

impl Adam {
    fn new(n: usize) -> Adam {
        Adam {
            m: vec![0.0; 2 * n],
            v: vec![0.0; 2 * n],
            t: 0,
        }
    }

    fn step(&mut self, adapter: &mut Adapter, gu: &[f32], gv: &[f32], opts: &AdaptOptions) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        self.t += 1;
        let (c1, c2) = (1.0 - B1.powi(self.t), 1.0 - B2.powi(self.t));
        let n = gu.len();
        let params = adapter.u.iter_mut().chain(adapter.v.iter_mut());
        for (k, (p, g)) in params.zip(gu.iter().chain(gv)).enumerate() {
            let g = g + opts.l2 * *p;
            self.m[k] = B1 * self.m[k] + (1.0 - B1) * g;
            self.v[k] = B2 * self.v[k] + (1.0 - B2) * g * g;
            *p -= opts.learning_rate * (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + 1e-8);
        }
        debug_assert_eq!(self.m.len(), 2 * n);
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(mut v: Vec<f32>) -> Vec<f32> {
        ken_embed::l2_normalize(&mut v);
        v
    }

    /// Questions whose plain query points at a decoy file, while their
    /// answer lies along another axis that the query's first coordinate
    /// predicts: the map must learn to turn the query toward the answer.
    fn turned_questions(n: usize) -> Vec<Example> {
        (0..n)
            .map(|i| {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                let query = unit(vec![
                    sign,
                    1.0,
                    0.1 * (i % 3) as f32,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                ]);
                let gold = unit(vec![0.0, 0.3, 0.0, sign, 0.0, 0.0, 0.0, 0.0]);
                let decoy = unit(vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2]);
                let other = unit(vec![0.0, 0.3, 0.0, -sign, 0.0, 0.0, 0.0, 0.0]);
                let vectors: Vec<Arc<[f32]>> =
                    [gold, decoy, other].into_iter().map(Arc::from).collect();
                Example {
                    query,
                    vectors,
                    file_of: vec![0, 1, 2],
                    gold: vec![true, false, false],
                    gold_paths: HashSet::new(),
                }
            })
            .collect()
    }

    fn gold_first(adapter: &Adapter, data: &[Example]) -> usize {
        data.iter()
            .filter(|e| {
                let q = adapter.apply(&e.query);
                let s: Vec<f32> = (0..3)
                    .map(|r| q.iter().zip(e.vectors[r].iter()).map(|(a, b)| a * b).sum())
                    .collect();
                s[0] > s[1] && s[0] > s[2]
            })
            .count()
    }

    #[test]
    fn the_map_learns_to_turn_queries_toward_their_answers() {
        let data = turned_questions(40);
        let opts = AdaptOptions {
            rank: 2,
            learning_rate: 0.05,
            ..AdaptOptions::default()
        };
        let weighed: Vec<(&Example, f32)> = data.iter().map(|e| (e, 1.0)).collect();
        let mut adapter = Adapter::new(8, 2, vec![0.0; 8], 1);
        // untrained, U is zero: the plain query, which finds the decoy
        assert_eq!(adapter.apply(&data[0].query), data[0].query);
        assert_eq!(gold_first(&adapter, &data), 0);
        let mut adam = Adam::new(adapter.u.len());
        for epoch in 0..30 {
            train_epoch(&mut adapter, &mut adam, &weighed, &opts, epoch);
        }
        assert_eq!(gold_first(&adapter, &data), data.len());
        // deterministic
        let mut again = Adapter::new(8, 2, vec![0.0; 8], 1);
        let mut adam = Adam::new(again.u.len());
        for epoch in 0..30 {
            train_epoch(&mut again, &mut adam, &weighed, &opts, epoch);
        }
        assert_eq!(again, adapter);
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let data = turned_questions(3);
        let mean = (0..8).map(|i| 0.01 * i as f32).collect();
        let mut adapter = Adapter::new(8, 2, mean, 7);
        adapter
            .u
            .iter_mut()
            .enumerate()
            .for_each(|(i, u)| *u = 0.05 * (i as f32).sin());
        let loss = |a: &Adapter, e: &Example| -> f64 {
            let q = a.apply(&e.query);
            let mut best = [f64::NEG_INFINITY; 3];
            for (r, f) in e.file_of.iter().enumerate() {
                let s: f32 = q.iter().zip(e.vectors[r].iter()).map(|(x, y)| x * y).sum();
                best[*f as usize] = best[*f as usize].max(s as f64 / 0.05);
            }
            let total: f64 = best.iter().map(|l| l.exp()).sum();
            let a1 = a.project(&e.query);
            let moved: f64 = a
                .lift(&e.query, &a1)
                .iter()
                .zip(&e.query)
                .map(|(z, q)| ((z - q) as f64).powi(2))
                .sum();
            -(best[0].exp() / total).ln() + 0.5 * moved
        };
        let e = &data[1];
        let (mut gu, mut gv) = (vec![0.0; 16], vec![0.0; 16]);
        gradient(&adapter, e, 0.05, 0.5, &mut gu, &mut gv);
        for k in [0usize, 3, 9, 14] {
            for (which, analytic) in [(0, gu[k]), (1, gv[k])] {
                let h = 1e-3f32;
                let mut plus = adapter.clone();
                let mut minus = adapter.clone();
                if which == 0 {
                    plus.u[k] += h;
                    minus.u[k] -= h;
                } else {
                    plus.v[k] += h;
                    minus.v[k] -= h;
                }
                let numeric = (loss(&plus, e) - loss(&minus, e)) / (2.0 * h as f64);
                assert!(
                    (numeric - analytic as f64).abs() < 2e-2 * (1.0 + numeric.abs()),
                    "factor {which} entry {k}: numeric {numeric}, analytic {analytic}"
                );
            }
        }
    }

    #[test]
    fn a_file_many_questions_changed_counts_less_per_question() {
        let q = |paths: &[&str]| Example {
            query: vec![1.0],
            vectors: Vec::new(),
            file_of: Vec::new(),
            gold: Vec::new(),
            gold_paths: paths.iter().map(|p| p.to_string()).collect(),
        };
        // four questions changed hub.py, one changed rare.py
        let data = vec![
            q(&["hub.py"]),
            q(&["hub.py"]),
            q(&["hub.py"]),
            q(&["hub.py"]),
            q(&["rare.py"]),
        ];
        let w: Vec<f32> = weighed(&data).iter().map(|(_, w)| *w).collect();
        // 1/√4 against 1/√1, scaled to a mean of 1
        let mean = (4.0 * 0.5 + 1.0) / 5.0;
        for hub in &w[..4] {
            assert!((hub - 0.5 / mean).abs() < 1e-6, "{w:?}");
        }
        assert!((w[4] - 1.0 / mean).abs() < 1e-6, "{w:?}");
        // together the hub's questions weigh twice the rare one, not four times
        assert!((w[..4].iter().sum::<f32>() / w[4] - 2.0).abs() < 1e-5);
    }

    #[test]
    fn a_change_made_twice_has_one_title() {
        let q = |m: &str| CommitQuestion {
            sha: String::new(),
            message: m.into(),
            gold: Vec::new(),
            time: 0,
        };
        assert_eq!(
            title(&q(
                "Fix  the Session cookie\n\n(cherry picked from commit abc)"
            )),
            title(&q("fix the session cookie\n\nbackport of #12"))
        );
        assert_ne!(
            title(&q("fix the session cookie")),
            title(&q("fix the session"))
        );
    }
}
