//! The semantic layer: embedding chunks (cached by content and model),
//! keeping a vector index per model, and dense retrieval.
//!
//! Embedding runs after the lexical index is committed, in batches; each
//! batch is committed to the store's vector cache, so a killed run resumes
//! without redoing finished batches, and an unchanged chunk is never embedded
//! twice — also across commits and branches. The search index (a matrix of
//! the current chunks' vectors) is rebuilt from the cache at the end of a run
//! and every few minutes during one, so search works before embedding is done.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ken_embed::{Embedder, HttpConfig, HttpEmbedder, LocalEmbedder, LocalOptions, StaticEmbedder};
use ken_store::{Store, StoredChunk, VectorMeta};
use ken_vectors::{AnyIndex, FlatIndex, IvfIndex, IvfParams, VectorSet};
use serde::Serialize;

use crate::{EngineError, Result};

/// Which embedder to use.
#[derive(Debug, Clone, Default)]
pub enum EmbedderSpec {
    /// No embeddings: lexical search only.
    #[default]
    Off,
    /// A local model directory (config.json, tokenizer.json, model.safetensors).
    Local(PathBuf),
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
    let map = |e: ken_embed::EmbedError| {
        if e.is_user_error() {
            EngineError::Usage(e.to_string())
        } else {
            EngineError::Internal(e.to_string())
        }
    };
    Ok(match spec {
        EmbedderSpec::Off => None,
        EmbedderSpec::Local(dir) => Some(Box::new(
            LocalEmbedder::load(dir, LocalOptions::default()).map_err(map)?,
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

/// The cache key of an embedded text: its hash and how it was built.
fn key(text: &str, variant: EmbedText) -> String {
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
}

pub struct NoEmbedProgress;
impl EmbedProgress for NoEmbedProgress {}

#[derive(Debug, Clone, Default, Serialize)]
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
}

const BATCH: usize = 32;
const REBUILD_EVERY: Duration = Duration::from_secs(300);

/// Embed every chunk that has no cached vector, then rebuild the vector index.
pub fn embed_pending(
    store: &mut dyn Store,
    batch_seq: u64,
    embedder: &dyn Embedder,
    variant: EmbedText,
    progress: &dyn EmbedProgress,
) -> Result<EmbedReport> {
    let started = Instant::now();
    let model = embedder.id().to_string();
    let chunks = store.all_chunks()?;
    let texts: Vec<String> = chunks.iter().map(|c| embed_text(c, variant)).collect();
    let keys: Vec<String> = texts.iter().map(|t| key(t, variant)).collect();
    let present = store.vector_keys_present(&model, &keys)?;
    // unique missing texts, shortest first (batches of similar length pad less)
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<usize> = (0..chunks.len())
        .filter(|&i| !present.contains(&keys[i]) && seen.insert(&keys[i]))
        .collect();
    todo.sort_by_key(|&i| texts[i].len());
    let cached = chunks.len() - todo.len();
    progress.embed_begin(todo.len() as u64, cached as u64);
    let mut pending: Vec<(String, Vec<f32>)> = Vec::new();
    let mut done = 0u64;
    let mut last_rebuild = Instant::now();
    for batch in todo.chunks(BATCH) {
        let inputs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
        let vectors = embedder.embed_documents(&inputs).map_err(|e| {
            if e.is_user_error() {
                EngineError::Usage(e.to_string())
            } else {
                EngineError::Internal(e.to_string())
            }
        })?;
        for (&i, v) in batch.iter().zip(vectors) {
            pending.push((keys[i].clone(), v));
        }
        done += batch.len() as u64;
        // every batch is committed: a kill loses at most one batch
        store.put_vectors(&model, &std::mem::take(&mut pending))?;
        if last_rebuild.elapsed() > REBUILD_EVERY {
            rebuild_index(store, &model, &chunks, &keys, batch_seq)?;
            last_rebuild = Instant::now();
        }
        progress.embed_advance(done);
    }
    if !pending.is_empty() {
        store.put_vectors(&model, &pending)?;
    }
    progress.embed_end();
    let meta = rebuild_index(store, &model, &chunks, &keys, batch_seq)?;
    Ok(EmbedReport {
        model,
        chunks: chunks.len() as u64,
        cached: cached as u64,
        embedded: done,
        seconds: started.elapsed().as_secs_f64(),
        indexed: meta.rows as u64,
    })
}

/// Above this many vectors the approximate index is used.
pub const EXACT_LIMIT: usize = 1_000_000;

/// Rebuild `model`'s vector index from the cache for the current chunks.
fn rebuild_index(
    store: &mut dyn Store,
    model: &str,
    chunks: &[StoredChunk],
    keys: &[String],
    batch_seq: u64,
) -> Result<VectorMeta> {
    let vectors = store.get_vectors(model, keys)?;
    let dim = vectors.values().next().map(Vec::len).unwrap_or(0);
    let mut set = VectorSet::new(dim.max(1));
    for (c, k) in chunks.iter().zip(keys) {
        if let Some(v) = vectors.get(k)
            && v.len() == dim
        {
            set.push(c.id, v);
        }
    }
    let index = if set.len() > EXACT_LIMIT {
        AnyIndex::Ivf(IvfIndex::build(&set, IvfParams::default()))
    } else {
        AnyIndex::Flat(FlatIndex::build(&set))
    };
    let meta = VectorMeta {
        model: model.to_string(),
        dim,
        rows: set.len(),
        chunks: chunks.len(),
        batch_seq,
        built_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    store.write_vector_index(model, &index, &meta)?;
    Ok(meta)
}

/// Dense retrieval: the chunks nearest to the query, with cosines.
/// Share of the current chunks that the vector index holds: (held, chunks).
pub fn index_coverage(store: &dyn Store, index: &AnyIndex) -> Result<(usize, usize)> {
    let ids = store.chunk_ids()?;
    let held: std::collections::HashSet<u64> = index.ids().iter().copied().collect();
    Ok((ids.iter().filter(|i| held.contains(i)).count(), ids.len()))
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
/// for this embedder yet).
pub fn dense_search(
    store: &dyn Store,
    embedder: &dyn Embedder,
    query: &str,
    k: usize,
) -> Result<Option<Dense>> {
    let Some((index, _meta)) = store.vector_index(embedder.id())? else {
        return Ok(None);
    };
    let (held, chunks) = index_coverage(store, &index)?;
    if index.is_empty() {
        return Ok(Some(Dense {
            hits: Vec::new(),
            held,
            chunks,
        }));
    }
    let q = embedder.embed_query(query).map_err(|e| {
        if e.is_user_error() {
            EngineError::Usage(e.to_string())
        } else {
            EngineError::Internal(e.to_string())
        }
    })?;
    let hits = index
        .search(&q, k)
        .map_err(|e| EngineError::Internal(e.to_string()))?;
    Ok(Some(Dense {
        hits: hits.into_iter().map(|n| (n.id, n.score)).collect(),
        held,
        chunks,
    }))
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
pub fn coverage(store: &dyn Store, variant: EmbedText) -> Result<Vec<Coverage>> {
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
        let indexed = store
            .vector_index(&model)?
            .map(|(_, m)| m.rows)
            .unwrap_or(0);
        out.push(Coverage {
            model,
            embedded,
            chunks: chunks.len(),
            indexed,
        });
    }
    Ok(out)
}
