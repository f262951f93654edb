//! The semantic layer: embedding chunks (cached by content and model),
//! keeping a vector index per model, and dense retrieval.
//!
//! Embedding runs after the lexical index is committed, in batches; each
//! batch is committed to the store's vector cache, so a killed run resumes
//! without redoing finished batches, and an unchanged chunk is never embedded
//! twice — also across commits and branches. The search index (a matrix of
//! the current chunks' vectors) is rebuilt from the cache at the end of a run,
//! every few minutes during one and when a tier of [`embed_tier`] is done,
//! so search works before embedding is done; a time budget ends a run early
//! with the rest left for the next.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ken_embed::{Embedder, HttpConfig, HttpEmbedder, LocalEmbedder, LocalOptions, StaticEmbedder};
use ken_store::{ChunkFilter, ChunkStore, IndexStore, StoredChunk, VectorMeta, VectorStore};
use serde::Serialize;

use crate::{EngineError, Result};

/// Which embedder to use.
#[derive(Debug, Clone, Default)]
pub enum EmbedderSpec {
    /// No embeddings: lexical search only.
    #[default]
    Off,
    /// A local model directory (config.json, tokenizer.json, model.safetensors);
    /// `int8`: dense layers in int8 (AVX-512 VNNI CPUs).
    Local { dir: PathBuf, int8: bool },
    /// A distilled static table and the tokenizer of its source model.
    Static { table: PathBuf, tokenizer: PathBuf },
    /// An OpenAI-compatible embeddings endpoint.
    Http(HttpConfig),
}

/// What goes into the embedded text of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum EmbedText {
    /// The chunk's text only.
    Body,
    /// Path, qualified name, signature and doc comment, then the text.
    #[default]
    Meta,
}

impl EmbedText {
    fn tag(self) -> &'static str {
        match self {
            EmbedText::Body => "b",
            EmbedText::Meta => "m",
        }
    }
}

/// Open the configured embedder (None when embeddings are off).
pub fn open_embedder(spec: &EmbedderSpec) -> Result<Option<Box<dyn Embedder>>> {
    let map = EngineError::from_embed;
    Ok(match spec {
        EmbedderSpec::Off => None,
        EmbedderSpec::Local { dir, int8 } => Some(Box::new(
            LocalEmbedder::load(
                dir,
                LocalOptions {
                    int8: *int8,
                    ..LocalOptions::default()
                },
            )
            .map_err(map)?,
        )),
        EmbedderSpec::Static { table, tokenizer } => Some(Box::new(
            StaticEmbedder::load(table, tokenizer).map_err(map)?,
        )),
        EmbedderSpec::Http(cfg) => Some(Box::new(HttpEmbedder::new(cfg.clone()).map_err(map)?)),
    })
}

/// The text embedded for a chunk.
pub fn embed_text(c: &StoredChunk, variant: EmbedText) -> String {
    match variant {
        EmbedText::Body => c.text.clone(),
        EmbedText::Meta => {
            let mut s = String::with_capacity(c.text.len() + 200);
            s.push_str(&c.path);
            s.push('\n');
            if let Some(q) = c.qualname.as_deref().or(c.symbol.as_deref()) {
                s.push_str(q);
                s.push('\n');
            }
            if let Some(d) = &c.doc {
                s.push_str(d);
                s.push('\n');
            }
            s.push_str(&c.text);
            s
        }
    }
}

/// In what order a run embeds what is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum EmbedOrder {
    /// Chunks outside tests first, then tests, then the extra windows of
    /// long chunks, shortest first within each (see [`embed_tier`]).
    #[default]
    Priority,
    /// Shortest text first, whatever it is (the order before tiers; kept
    /// to measure the tiers against).
    Length,
}

/// What is embedded per chunk, and how a run goes about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedPlan {
    pub text: EmbedText,
    /// Most vectors per chunk: its whole text (which the model truncates to
    /// its length), then windows over the lines the model did not read.
    pub windows: usize,
    pub order: EmbedOrder,
    /// Stop embedding after this long: what was embedded is made
    /// searchable and the next run goes on from there (None: no limit).
    pub budget: Option<Duration>,
}

impl Default for EmbedPlan {
    fn default() -> Self {
        EmbedPlan {
            text: EmbedText::default(),
            windows: DEFAULT_WINDOWS,
            order: EmbedOrder::default(),
            budget: None,
        }
    }
}

/// Chosen on the dev sets (BENCHMARKS.md, "long chunks").
pub const DEFAULT_WINDOWS: usize = 4;

/// Characters of code a model reads in `max_tokens` tokens, about (code
/// runs 2.5–4 characters per word piece; the low end keeps windows inside
/// the model's length).
pub fn window_chars(max_tokens: usize) -> usize {
    (max_tokens * 5 / 2).max(64)
}

/// The texts embedded for a chunk: [`embed_text`] first, then, for a chunk
/// longer than the model reads (`window_chars`), windows of its later lines
/// under the chunk's path and name, overlapping by a fifth, at most
/// `plan.windows` texts in all. A long function or a big table is then
/// found by what its end says, not only by its first lines.
pub fn embed_texts(c: &StoredChunk, plan: EmbedPlan, window_chars: usize) -> Vec<String> {
    let mut out = vec![embed_text(c, plan.text)];
    if plan.windows <= 1 || c.text.len() <= window_chars {
        return out;
    }
    let header = match plan.text {
        EmbedText::Body => String::new(),
        EmbedText::Meta => {
            let mut h = format!("{}\n", c.path);
            if let Some(q) = c.qualname.as_deref().or(c.symbol.as_deref()) {
                h.push_str(q);
                h.push('\n');
            }
            h
        }
    };
    // line starts, as byte offsets
    let starts: Vec<usize> = std::iter::once(0)
        .chain(c.text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < c.text.len())
        .collect();
    let stride = window_chars * 4 / 5;
    let mut from = stride;
    while out.len() < plan.windows && from < c.text.len() {
        // the window starts at the first line starting in the stride after
        // `from`, or mid-line when lines are that long
        let start = match starts.iter().find(|&&s| s >= from) {
            Some(&s) if s < from + stride => s,
            _ => {
                let mut s = from;
                while !c.text.is_char_boundary(s) {
                    s -= 1;
                }
                s
            }
        };
        let mut end = (start + window_chars).min(c.text.len());
        while !c.text.is_char_boundary(end) {
            end -= 1;
        }
        out.push(format!("{header}{}", &c.text[start..end]));
        if end >= c.text.len() {
            break;
        }
        from = start + stride;
    }
    out
}

/// The cache key of an embedded text: its hash and how it was built.
pub(crate) fn key(text: &str, variant: EmbedText) -> String {
    format!(
        "{}{}",
        variant.tag(),
        ken_core::content_hash(text.as_bytes())
    )
}

/// Progress of an embedding run.
pub trait EmbedProgress {
    fn embed_begin(&self, _todo: u64, _cached: u64) {}
    fn embed_advance(&self, _done: u64) {}
    fn embed_end(&self) {}
    /// True when the run should stop at the next batch boundary (a server
    /// shutting down); what is committed stays, the next run resumes.
    fn cancelled(&self) -> bool {
        false
    }
    /// True when the user asked to stop embedding (Ctrl-C at a terminal):
    /// the run stops at the next batch boundary like a spent time budget,
    /// makes what is embedded searchable and reports the rest as left.
    fn stop_embedding(&self) -> bool {
        false
    }
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct EmbedReport {
    pub model: String,
    pub chunks: u64,
    /// Chunks whose vector was already cached.
    pub cached: u64,
    /// Texts embedded by this run.
    pub embedded: u64,
    pub seconds: f64,
    /// Rows of the vector index after the run.
    pub indexed: u64,
    /// Texts left for the next run (the time budget ran out, or the user
    /// stopped the embedding).
    pub left: u64,
    /// The user stopped the embedding before it was done.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

const BATCH: usize = 32;
const REBUILD_EVERY: Duration = Duration::from_secs(300);
/// A tier that took longer than this is made searchable when it ends.
const REBUILD_TIER: Duration = Duration::from_secs(20);

/// How soon a chunk's vectors are made, lowest first: a run that stops
/// early (a time budget, a kill, a server shutting down) then leaves the
/// vectors most searches need. The first text of every chunk outside tests
/// comes first, then those of tests, then the extra windows of long chunks;
/// within a tier the shortest go first, which covers the most chunks per
/// second (BENCHMARKS.md §16 measures this against tiers by kind).
fn embed_tier(c: &StoredChunk, window: usize) -> u8 {
    if window > 0 {
        2
    } else if ken_core::is_test_path(&c.path) {
        1
    } else {
        0
    }
}

/// The texts still to embed, as (tier, index into `wanted`): each key
/// once, at the best tier any of its chunks gives it; by tier, then
/// shortest first within a tier (batches of similar length pad less).
fn embed_order(
    chunks: &[StoredChunk],
    wanted: &[(u64, String, String)],
    present: &std::collections::HashSet<String>,
) -> Vec<(u8, usize)> {
    let by_id: HashMap<u64, &StoredChunk> = chunks.iter().map(|c| (c.id, c)).collect();
    let mut best: HashMap<&str, (u8, usize)> = HashMap::new();
    let mut window = 0usize;
    for (i, (id, _, key)) in wanted.iter().enumerate() {
        window = if i > 0 && wanted[i - 1].0 == *id {
            window + 1
        } else {
            0
        };
        if present.contains(key) {
            continue;
        }
        let tier = by_id.get(id).map_or(1, |c| embed_tier(c, window));
        let slot = best.entry(key.as_str()).or_insert((tier, i));
        slot.0 = slot.0.min(tier);
    }
    let mut todo: Vec<(u8, usize)> = best.into_values().collect();
    todo.sort_by_key(|&(tier, i)| (tier, wanted[i].1.len(), i));
    todo
}

/// Embed every chunk that has no cached vector, then rebuild the vector index.
pub fn embed_pending(
    store: &mut (impl ChunkStore + IndexStore + VectorStore + ?Sized),
    batch_seq: u64,
    embedder: &dyn Embedder,
    plan: EmbedPlan,
    progress: &dyn EmbedProgress,
) -> Result<EmbedReport> {
    let started = Instant::now();
    let model = embedder.id().to_string();
    let chunks = store.all_chunks()?;
    let window_chars = window_chars(embedder.max_tokens());
    // (chunk id, text, key) of every vector wanted, the chunk's whole text first
    let mut wanted: Vec<(u64, String, String)> = Vec::new();
    for c in &chunks {
        for t in embed_texts(c, plan, window_chars) {
            let k = key(&t, plan.text);
            wanted.push((c.id, t, k));
        }
    }
    let keys: Vec<String> = wanted.iter().map(|w| w.2.clone()).collect();
    let present = store.vector_keys_present(&model, &keys)?;
    let mut todo = embed_order(&chunks, &wanted, &present);
    if plan.order == EmbedOrder::Length {
        // one tier: no rebuilds at tier boundaries
        todo = todo.into_iter().map(|(_, i)| (0, i)).collect();
        todo.sort_by_key(|&(_, i)| (wanted[i].1.len(), i));
    }
    let cached = wanted.len() - todo.len();
    // marked before the first batch: a run killed while embedding leaves
    // the mark, and a server or worker queues what is left
    mark_unfinished(store, !todo.is_empty())?;
    progress.embed_begin(todo.len() as u64, cached as u64);
    // what the vector search holds: a row per (chunk, text) whose vector is cached
    let rows: Vec<(u64, String)> = wanted.iter().map(|w| (w.0, w.2.clone())).collect();
    let mut done = 0u64;
    let mut last_rebuild = Instant::now();
    let mut tier = todo.first().map(|t| t.0);
    let mut left = 0u64;
    let mut stopped = false;
    for (n, batch) in todo.chunks(BATCH).enumerate() {
        if progress.cancelled() {
            return Err(EngineError::stopped());
        }
        // one batch at least, so that every run makes progress
        if n > 0 && plan.budget.is_some_and(|b| started.elapsed() > b) {
            left = (todo.len() - n * BATCH) as u64;
            break;
        }
        if progress.stop_embedding() {
            left = (todo.len() - n * BATCH) as u64;
            stopped = true;
            break;
        }
        // a finished tier is searchable before the next one starts
        if tier != Some(batch[0].0) {
            tier = Some(batch[0].0);
            if last_rebuild.elapsed() > REBUILD_TIER {
                store.index_vectors(&model, &rows, chunks.len(), batch_seq)?;
                last_rebuild = Instant::now();
            }
        }
        let batch: Vec<usize> = batch.iter().map(|t| t.1).collect();
        let inputs: Vec<&str> = batch.iter().map(|&i| wanted[i].1.as_str()).collect();
        let vectors = embedder
            .embed_documents(&inputs)
            .map_err(EngineError::from_embed)?;
        let pending: Vec<(String, Vec<f32>)> = batch
            .iter()
            .zip(vectors)
            .map(|(&i, v)| (keys[i].clone(), v))
            .collect();
        done += batch.len() as u64;
        // every batch is committed: a kill loses at most one batch
        store.put_vectors(&model, &pending)?;
        if last_rebuild.elapsed() > REBUILD_EVERY {
            store.index_vectors(&model, &rows, chunks.len(), batch_seq)?;
            last_rebuild = Instant::now();
        }
        progress.embed_advance(done);
    }
    progress.embed_end();
    // nothing embedded and the index built for these very rows: it stays
    // as it is (built again, it is built from the vectors its file holds,
    // not the ones first embedded, and comes out with other bytes)
    let meta = match store.vector_meta(&model)? {
        Some(m)
            if done == 0
                && todo.is_empty()
                && m.batch_seq == batch_seq
                && m.chunks == chunks.len()
                && m.rows == rows.len() =>
        {
            m
        }
        _ => store.index_vectors(&model, &rows, chunks.len(), batch_seq)?,
    };
    if left == 0 {
        mark_unfinished(store, false)?;
    }
    Ok(EmbedReport {
        model,
        chunks: chunks.len() as u64,
        cached: cached as u64,
        embedded: done,
        seconds: started.elapsed().as_secs_f64(),
        indexed: meta.rows as u64,
        left,
        stopped,
    })
}

/// Record in the index state whether an embedding run is under way or
/// was cut short (written only when it changes).
fn mark_unfinished(store: &mut (impl IndexStore + ?Sized), unfinished: bool) -> Result<()> {
    let mut state = store.state()?;
    if state.embedding_unfinished != unfinished {
        state.embedding_unfinished = unfinished;
        store.set_state(&state)?;
    }
    Ok(())
}

/// Share of the current chunks that `model`'s vector search holds: (held, chunks).
pub fn index_coverage(
    store: &(impl ChunkStore + VectorStore + ?Sized),
    model: &str,
) -> Result<(usize, usize)> {
    let ids = store.chunk_ids()?;
    let held: std::collections::HashSet<u64> = store.vector_chunk_ids(model)?.into_iter().collect();
    Ok((ids.iter().filter(|i| held.contains(i)).count(), ids.len()))
}

/// What a model's vector search holds, with its coverage of the current
/// chunks: read once per open store and used by every query.
#[derive(Debug, Clone)]
pub struct VectorView {
    pub meta: VectorMeta,
    /// The query map learned for this model (adapt.rs), when one is used.
    pub adapter: Option<std::sync::Arc<crate::query_map::Adapter>>,
    /// Current chunks the index holds, and all current chunks.
    pub held: usize,
    pub chunks: usize,
}

/// `model`'s vector search in `store` (None: nothing embedded with it yet),
/// with the query map `state` holds for it.
pub fn load_vectors(
    store: &(impl ChunkStore + VectorStore + ?Sized),
    model: &str,
    state: &ken_store::IndexState,
) -> Result<Option<VectorView>> {
    let Some(meta) = store.vector_meta(model)? else {
        return Ok(None);
    };
    let (held, chunks) = index_coverage(store, model)?;
    let adapter = state
        .adapter
        .as_ref()
        .and_then(|a| crate::query_map::Adapter::from_record(a, model))
        .map(std::sync::Arc::new);
    Ok(Some(VectorView {
        meta,
        adapter,
        held,
        chunks,
    }))
}

/// What dense retrieval found.
#[derive(Debug, Clone, Default)]
pub struct Dense {
    /// Chunk ids with their cosine similarity, best first.
    pub hits: Vec<(u64, f32)>,
    /// Current chunks the vector index holds, and all current chunks.
    pub held: usize,
    pub chunks: usize,
}

/// Dense retrieval: the chunks nearest to the query (None: no vector index
/// for this embedder yet). Loads the index; see [`dense_search_in`].
pub fn dense_search(
    store: &(impl ChunkStore + VectorStore + IndexStore + ?Sized),
    embedder: &dyn Embedder,
    query: &str,
    k: usize,
) -> Result<Option<Dense>> {
    match load_vectors(store, embedder.id(), &store.state()?)? {
        Some(view) => dense_search_in(
            store,
            &view,
            embedder,
            query,
            k,
            &ChunkFilter::default(),
            true,
        )
        .map(Some),
        None => Ok(None),
    }
}

/// Dense retrieval in `store`'s vector search of the embedder's model,
/// among the chunks `filter` lets through; the query goes through the
/// view's learned map when `adapt` (and there is one).
pub fn dense_search_in(
    store: &(impl VectorStore + ?Sized),
    view: &VectorView,
    embedder: &dyn Embedder,
    query: &str,
    k: usize,
    filter: &ChunkFilter,
    adapt: bool,
) -> Result<Dense> {
    let (held, chunks) = (view.held, view.chunks);
    if view.meta.rows == 0 {
        return Ok(Dense {
            hits: Vec::new(),
            held,
            chunks,
        });
    }
    let mut q = embedder
        .embed_query(query)
        .map_err(EngineError::from_embed)?;
    if let Some(a) = view.adapter.as_ref().filter(|_| adapt) {
        q = a.apply(&q);
    }
    let hits = store.search_vectors(&view.meta.model, &q, k, filter)?;
    Ok(Dense { hits, held, chunks })
}

/// How much of the current chunks a model has vectors for.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub model: String,
    /// Current chunks with a cached vector.
    pub embedded: usize,
    pub chunks: usize,
    /// Rows of the vector index searches use.
    pub indexed: usize,
}

/// Embedding coverage of every model the store has vectors of.
pub fn coverage(
    store: &(impl ChunkStore + VectorStore + ?Sized),
    variant: EmbedText,
) -> Result<Vec<Coverage>> {
    let models = store.vector_models()?;
    if models.is_empty() {
        return Ok(Vec::new());
    }
    let chunks = store.all_chunks()?;
    let keys: Vec<String> = chunks
        .iter()
        .map(|c| key(&embed_text(c, variant), variant))
        .collect();
    let mut out = Vec::new();
    for model in models {
        let present = store.vector_keys_present(&model, &keys)?;
        let embedded = keys.iter().filter(|k| present.contains(*k)).count();
        let indexed = store.vector_meta(&model)?.map(|m| m.rows).unwrap_or(0);
        out.push(Coverage {
            model,
            embedded,
            chunks: chunks.len(),
            indexed,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ken_core::{ChunkKind, Language};

    fn chunk(text: String) -> StoredChunk {
        StoredChunk {
            id: 7,
            path: "src/types.rs".into(),
            language: Language::Rust,
            kind: ChunkKind::Function,
            symbol: Some("defaults".into()),
            qualname: Some("types::defaults".into()),
            signature: None,
            doc: Some("The default file types.".into()),
            start_line: 1,
            end_line: 200,
            start_byte: 0,
            end_byte: text.len() as u32,
            trivial: false,
            cell: None,
            content_hash: String::new(),
            synthetic: false,
            text,
        }
    }

    fn long_chunk() -> StoredChunk {
        let lines: Vec<String> = (0..200)
            .map(|i| format!("    (\"lang{i}\", &[\"*.ext{i}\"]),"))
            .collect();
        chunk(lines.join("\n"))
    }

    #[test]
    fn source_is_embedded_before_tests_and_windows() {
        let mk = |id: u64, path: &str, kind: ChunkKind, text: &str| StoredChunk {
            id,
            path: path.into(),
            kind,
            ..chunk(text.into())
        };
        let chunks = vec![
            mk(1, "tests/test_types.rs", ChunkKind::Function, "fn t() {}"),
            mk(2, "src/types.rs", ChunkKind::Module, "use x;"),
            mk(
                3,
                "src/types.rs",
                ChunkKind::Function,
                "fn longer_definition() {}",
            ),
            mk(4, "src/lib.rs", ChunkKind::Struct, "struct S;"),
            mk(5, "src/copy.rs", ChunkKind::Module, "struct S;"),
            mk(6, "src/cached.rs", ChunkKind::Function, "fn cached() {}"),
        ];
        let mut wanted: Vec<(u64, String, String)> = chunks
            .iter()
            .map(|c| (c.id, c.text.clone(), format!("k-{}", c.text)))
            .collect();
        // a second window of chunk 3, and chunk 6 already cached
        wanted.insert(3, (3, "window".into(), "k-window".into()));
        let present = ["k-fn cached() {}".to_string()].into_iter().collect();
        let order: Vec<(u8, u64)> = embed_order(&chunks, &wanted, &present)
            .into_iter()
            .map(|(tier, i)| (tier, wanted[i].0))
            .collect();
        // chunk 5 shares its text with chunk 4 and is not embedded twice
        assert_eq!(order, vec![(0, 2), (0, 4), (0, 3), (1, 1), (2, 3)]);
    }

    #[test]
    fn a_short_chunk_is_one_text() {
        let c = chunk("fn f() {}".into());
        let texts = embed_texts(&c, EmbedPlan::default(), 640);
        assert_eq!(texts, vec![embed_text(&c, EmbedText::Meta)]);
    }

    #[test]
    fn a_long_chunk_gets_windows_over_its_later_lines() {
        let c = long_chunk();
        let plan = EmbedPlan {
            text: EmbedText::Meta,
            windows: 100,
            ..EmbedPlan::default()
        };
        let texts = embed_texts(&c, plan, 640);
        // the first text is the whole chunk, as before windows existed (cache keys hold)
        assert_eq!(texts[0], embed_text(&c, EmbedText::Meta));
        assert!(texts.len() > 5, "{}", texts.len());
        for w in &texts[1..] {
            assert!(
                w.starts_with("src/types.rs\ntypes::defaults\n    (\"lang"),
                "{w}"
            );
            assert!(w.len() <= 640 + 40);
        }
        // every line is in some window, the last one included
        for i in [0, 57, 123, 199] {
            let line = format!("(\"lang{i}\", &[\"*.ext{i}\"])");
            assert!(
                texts.iter().any(|t| t.contains(&line)),
                "line {i} not embedded"
            );
        }
        // windows overlap a little, and do not repeat whole
        assert!(texts[1..].windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn windows_are_capped_and_respect_the_plan() {
        let c = long_chunk();
        let capped = EmbedPlan {
            text: EmbedText::Meta,
            windows: 3,
            ..EmbedPlan::default()
        };
        assert_eq!(embed_texts(&c, capped, 640).len(), 3);
        let one = EmbedPlan {
            text: EmbedText::Meta,
            windows: 1,
            ..EmbedPlan::default()
        };
        assert_eq!(embed_texts(&c, one, 640).len(), 1);
        let body = EmbedPlan {
            text: EmbedText::Body,
            windows: 3,
            ..EmbedPlan::default()
        };
        assert!(embed_texts(&c, body, 640)[1].starts_with("    (\"lang"));
        // a model that reads far more: no windows
        assert_eq!(
            embed_texts(&c, EmbedPlan::default(), window_chars(8192)).len(),
            1
        );
    }

    #[test]
    fn windows_split_only_on_char_boundaries() {
        let c = chunk("é".repeat(2000));
        let texts = embed_texts(&c, EmbedPlan::default(), 641);
        assert!(texts.len() > 1);
    }
}
