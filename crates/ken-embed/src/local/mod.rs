//! In-process sentence embeddings with a BERT-family model directory.

pub(crate) mod bert;
mod candle_ref;
mod cross;
pub(crate) mod int8;
pub(crate) mod kernels;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

pub use bert::Pooling;
use bert::{Bert, BertConfig};
use candle_ref::CandleBert;
pub use cross::{CrossOptions, LocalCrossEncoder};
pub use kernels::forbid_avx512;

use crate::error::{EmbedError, Result};
use crate::{Embedder, l2_normalize, sha256_file};

/// Files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Batches with a shorter sequence run in f32 even when `int8` is on.
pub const INT8_MIN_TOKENS: usize = 32;

/// Which implementation runs the transformer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The fused, packed encoder of this crate (default, fastest).
    #[default]
    Fused,
    /// `candle_transformers`' `BertModel` on padded batches (reference, slower).
    Candle,
}

/// Settings of a [`LocalEmbedder`]; every field has a sensible default.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Texts per forward pass (after sorting by length). Default 16.
    pub batch_size: usize,
    /// Override the input length cap in tokens (default: `sentence_bert_config.json`'s
    /// `max_seq_length`, else 256; always capped by the position table).
    pub max_tokens: Option<usize>,
    /// Override the pooling read from `1_Pooling/config.json` (default mean).
    pub pooling: Option<Pooling>,
    /// Prepended to queries (e5: `"query: "`, bge: its instruction). Default: the
    /// `prompts.query` of `config_sentence_transformers.json`, else none.
    pub query_prefix: Option<String>,
    /// Prepended to documents (e5: `"passage: "`). Default: `prompts.document`
    /// / `prompts.passage` of `config_sentence_transformers.json`, else none.
    pub document_prefix: Option<String>,
    pub backend: Backend,
    /// Run the dense layers with int8 weights and activations (AVX-512 VNNI
    /// CPUs only; vectors differ slightly, so the embedder id changes).
    pub int8: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            batch_size: 16,
            max_tokens: None,
            pooling: None,
            query_prefix: None,
            document_prefix: None,
            backend: Backend::Fused,
            int8: false,
        }
    }
}

enum Engine {
    Fused(Box<Bert>),
    Candle(Box<CandleBert>),
}

/// A sentence-embedding model run in-process on the CPU.
pub struct LocalEmbedder {
    id: String,
    dir: PathBuf,
    tokenizer: Tokenizer,
    engine: Engine,
    cfg: BertConfig,
    dim: usize,
    max_tokens: usize,
    pooling: Pooling,
    batch_size: usize,
    query_prefix: String,
    document_prefix: String,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .field("pooling", &self.pooling)
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

/// `1_Pooling/config.json` of sentence-transformers.
#[derive(Debug, Deserialize, Default)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

/// Reads the pooling mode of a sentence-transformers model directory: CLS or
/// mean (the default when the file is absent).
pub fn read_pooling(dir: &Path) -> Result<Pooling> {
    let path = dir.join("1_Pooling").join("config.json");
    if !path.is_file() {
        return Ok(Pooling::Mean);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| EmbedError::io(&path, e))?;
    let cfg: PoolingConfig = serde_json::from_str(&text)
        .map_err(|e| EmbedError::BadConfig(format!("{}: {e}", path.display())))?;
    match (
        cfg.pooling_mode_cls_token,
        cfg.pooling_mode_mean_tokens,
        cfg.pooling_mode_max_tokens || cfg.pooling_mode_mean_sqrt_len_tokens,
    ) {
        (_, _, true) => Err(EmbedError::BadConfig(format!(
            "{}: max and mean-sqrt-len pooling are not supported (mean or CLS only)",
            path.display()
        ))),
        (true, false, _) => Ok(Pooling::Cls),
        (false, _, _) => Ok(Pooling::Mean),
        (true, true, _) => Err(EmbedError::BadConfig(format!(
            "{}: both CLS and mean pooling are set; set pooling explicitly",
            path.display()
        ))),
    }
}

/// `max_seq_length` of `sentence_bert_config.json`, if any.
fn read_max_seq_length(dir: &Path) -> Result<Option<usize>> {
    #[derive(Deserialize)]
    struct Sbert {
        max_seq_length: Option<usize>,
    }
    let path = dir.join("sentence_bert_config.json");
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| EmbedError::io(&path, e))?;
    let s: Sbert = serde_json::from_str(&text)
        .map_err(|e| EmbedError::BadConfig(format!("{}: {e}", path.display())))?;
    Ok(s.max_seq_length)
}

/// `prompts` of `config_sentence_transformers.json`: (query, document).
fn read_prompts(dir: &Path) -> (Option<String>, Option<String>) {
    let path = dir.join("config_sentence_transformers.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (None, None);
    };
    let p = &v["prompts"];
    let get = |k: &str| p.get(k).and_then(|s| s.as_str()).map(str::to_string);
    (get("query"), get("document").or_else(|| get("passage")))
}

/// Checks that `dir` holds the files of a model; names the missing ones.
pub fn check_model_dir(dir: &Path) -> Result<()> {
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(EmbedError::BadConfig(format!(
            "{} is not a model directory: missing {}",
            dir.display(),
            missing.join(", ")
        )))
    }
}

pub(crate) fn load_tokenizer(path: &Path, max_tokens: Option<usize>) -> Result<Tokenizer> {
    let mut tok = Tokenizer::from_file(path)
        .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
    // The file's own settings (the default model's pads and truncates to 128)
    // are replaced: no padding (batches are packed), truncation to the model's length.
    tok.with_padding(None);
    tok.with_truncation(max_tokens.map(|max_length| TruncationParams {
        max_length,
        strategy: TruncationStrategy::LongestFirst,
        stride: 0,
        direction: TruncationDirection::Right,
    }))
    .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
    Ok(tok)
}

impl LocalEmbedder {
    /// Loads a BERT-family sentence-embedding model directory (`config.json`,
    /// `tokenizer.json`, `model.safetensors`, optionally sentence-transformers'
    /// `1_Pooling/config.json`, `sentence_bert_config.json`,
    /// `config_sentence_transformers.json`).
    pub fn load(dir: &Path, opts: LocalOptions) -> Result<LocalEmbedder> {
        check_model_dir(dir)?;
        if opts.batch_size == 0 {
            return Err(EmbedError::BadConfig(
                "batch_size must be at least 1".into(),
            ));
        }
        let cfg = BertConfig::from_file(&dir.join("config.json"))?;
        let pooling = match opts.pooling {
            Some(p) => p,
            None => read_pooling(dir)?,
        };
        let wanted = match opts.max_tokens {
            Some(m) => m,
            None => read_max_seq_length(dir)?.unwrap_or(256),
        };
        let max_tokens = wanted.min(cfg.max_sequence()).max(2);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), Some(max_tokens))?;
        let weights = dir.join("model.safetensors");
        let sha = sha256_file(&weights)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        if opts.int8 && (opts.backend != Backend::Fused || !int8::available()) {
            return Err(EmbedError::BadConfig(
                "int8 embedding needs a CPU with AVX-512 VNNI (and the fused backend); \
                 turn embed_int8 off"
                    .into(),
            ));
        }
        let engine = match opts.backend {
            Backend::Fused => {
                Engine::Fused(Box::new(Bert::load(&weights, cfg.clone(), opts.int8)?))
            }
            Backend::Candle => Engine::Candle(Box::new(CandleBert::load(dir)?)),
        };
        let (q, d) = read_prompts(dir);
        let query_prefix = opts.query_prefix.or(q).unwrap_or_default();
        let document_prefix = opts.document_prefix.or(d).unwrap_or_default();
        // Whatever changes a document's vector is in the id (it keys caches).
        let mut id = format!("local:{name}:{}", &sha[..12]);
        if max_tokens != 256 {
            id.push_str(&format!(":t{max_tokens}"));
        }
        if pooling != read_pooling(dir).unwrap_or(Pooling::Mean) {
            id.push_str(&format!(":{pooling:?}").to_lowercase());
        }
        if opts.int8 {
            id.push_str(":int8");
        }
        if !document_prefix.is_empty() {
            id.push_str(&format!(
                ":p{}",
                &crate::sha256_hex(document_prefix.as_bytes())[..8]
            ));
        }
        Ok(LocalEmbedder {
            id,
            dir: dir.to_path_buf(),
            tokenizer,
            engine,
            dim: cfg.hidden_size,
            cfg,
            max_tokens,
            pooling,
            batch_size: opts.batch_size,
            query_prefix,
            document_prefix,
        })
    }

    /// The model directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.cfg.vocab_size
    }

    /// Token ids of each text, special tokens included, truncated to [`Embedder::max_tokens`].
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let inputs: Vec<&str> = texts.to_vec();
        let enc = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(EmbedError::model)?;
        Ok(enc.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }

    /// Embeds already tokenised sequences: sorted by length, run in batches of
    /// `batch_size`, returned in input order, pooled and L2-normalised.
    pub fn embed_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); seqs.len()];
        for batch in order.chunks(self.batch_size) {
            let refs: Vec<&[u32]> = batch.iter().map(|&i| seqs[i].as_slice()).collect();
            let vecs = self.run_raw(&refs)?;
            for (&i, mut v) in batch.iter().zip(vecs) {
                l2_normalize(&mut v);
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Pooled, unnormalised vectors of one batch.
    pub(crate) fn run_raw(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let max = self.cfg.max_sequence();
        if let Some(bad) = seqs.iter().find(|s| s.is_empty() || s.len() > max) {
            return Err(EmbedError::Model(format!(
                "sequence of {} tokens (must be 1..={max})",
                bad.len()
            )));
        }
        match &self.engine {
            Engine::Fused(b) => {
                // Short inputs (queries, one-liners) average fewer tokens, so
                // int8 error shows more (cosine 0.986 for an empty text) and
                // they cost little: they run in f32.
                if !b.has_int8() {
                    return Ok(b.embed(seqs, self.pooling, false));
                }
                let (long, short): (Vec<usize>, Vec<usize>) =
                    (0..seqs.len()).partition(|&i| seqs[i].len() >= INT8_MIN_TOKENS);
                let mut out = vec![Vec::new(); seqs.len()];
                for (group, int8) in [(long, true), (short, false)] {
                    if group.is_empty() {
                        continue;
                    }
                    let part: Vec<&[u32]> = group.iter().map(|&i| seqs[i]).collect();
                    for (i, v) in group.into_iter().zip(b.embed(&part, self.pooling, int8)) {
                        out[i] = v;
                    }
                }
                Ok(out)
            }
            Engine::Candle(c) => c.embed(seqs, self.pooling),
        }
    }

    fn embed_prefixed(&self, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let seqs = if prefix.is_empty() {
            self.tokenize(texts)?
        } else {
            let owned: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
            let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
            self.tokenize(&refs)?
        };
        self.embed_ids(&seqs)
    }
}

impl Embedder for LocalEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_prefixed(&self.document_prefix, texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self.embed_prefixed(&self.query_prefix, &[text])?;
        Ok(v.pop().unwrap_or_default())
    }
}
