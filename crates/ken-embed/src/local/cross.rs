//! A cross-encoder run in-process: a BERT-family model directory with a
//! sequence-classification head (`BertForSequenceClassification`, as the
//! ms-marco MiniLM rerankers; `XLMRobertaForSequenceClassification`, as
//! bge-reranker) reads the query and one document together, as a pair, and
//! scores how well they match. The encoder is the one sentence embedding
//! uses (`bert`), given each token's segment (type id).

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokenizers::{EncodeInput, Tokenizer};

use super::bert::{Bert, BertConfig, Weights, transpose};
use super::{check_model_dir, load_tokenizer};
use crate::error::{EmbedError, Result};
use crate::rerank::Reranker;
use crate::sha256_file;

/// Settings of a [`LocalCrossEncoder`].
#[derive(Debug, Clone)]
pub struct CrossOptions {
    /// Tokens of query and document together (special tokens included);
    /// the longer of the two is cut first. Default: 512, capped by the
    /// model's position table.
    pub max_tokens: Option<usize>,
    /// Pairs per forward pass (after sorting by length). Default 8.
    pub batch_size: usize,
}

impl Default for CrossOptions {
    fn default() -> Self {
        CrossOptions {
            max_tokens: None,
            batch_size: 8,
        }
    }
}

/// The classification head over the first token: `tanh(dense)`, then one
/// logit per label. BERT calls the first layer its pooler; RoBERTa puts
/// both layers under `classifier.`.
struct Head {
    dense_w: Vec<f32>, // hidden × hidden, input-major
    dense_b: Vec<f32>,
    out_w: Vec<f32>, // hidden × labels, input-major
    out_b: Vec<f32>,
    labels: usize,
}

impl Head {
    fn load(w: &Weights, h: usize, path: &Path) -> Result<Head> {
        let pooler = format!("{}pooler.dense.weight", w.prefix());
        let (dense, out) = if w.dims("classifier.weight").is_some() && w.dims(&pooler).is_some() {
            (
                format!("{}pooler.dense", w.prefix()),
                "classifier".to_string(),
            )
        } else if w.dims("classifier.dense.weight").is_some()
            && w.dims("classifier.out_proj.weight").is_some()
        {
            (
                "classifier.dense".to_string(),
                "classifier.out_proj".to_string(),
            )
        } else {
            return Err(EmbedError::BadConfig(format!(
                "{}: no sequence-classification head (a pooler with classifier.weight, or \
                 classifier.dense with classifier.out_proj): this is not a cross-encoder; \
                 a reranker model is one trained for sequence classification",
                path.display()
            )));
        };
        let labels = match w.dims(&format!("{out}.weight")).as_deref() {
            Some([n, cols]) if *cols == h && (*n == 1 || *n == 2) => *n,
            other => {
                return Err(EmbedError::BadConfig(format!(
                    "{}: {out}.weight has shape {other:?}; a reranker has 1 or 2 labels over \
                     {h} hidden units",
                    path.display()
                )));
            }
        };
        Ok(Head {
            dense_w: transpose(&w.get_exact(&format!("{dense}.weight"), &[h, h])?, h, h),
            dense_b: w.get_exact(&format!("{dense}.bias"), &[h])?,
            out_w: transpose(
                &w.get_exact(&format!("{out}.weight"), &[labels, h])?,
                labels,
                h,
            ),
            out_b: w.get_exact(&format!("{out}.bias"), &[labels])?,
            labels,
        })
    }

    /// The score of one pair from its first token's hidden state: the
    /// logit of a one-label head, the log-odds of label 1 for two labels.
    fn score(&self, first: &[f32]) -> f32 {
        let h = first.len();
        let mut pooled = self.dense_b.clone();
        for (i, &x) in first.iter().enumerate() {
            for (p, &w) in pooled.iter_mut().zip(&self.dense_w[i * h..(i + 1) * h]) {
                *p += x * w;
            }
        }
        pooled.iter_mut().for_each(|p| *p = p.tanh());
        let mut logits = self.out_b.clone();
        for (i, &x) in pooled.iter().enumerate() {
            for (l, &w) in logits
                .iter_mut()
                .zip(&self.out_w[i * self.labels..(i + 1) * self.labels])
            {
                *l += x * w;
            }
        }
        match self.labels {
            1 => logits[0],
            _ => logits[1] - logits[0],
        }
    }
}

/// A reranking model run in-process on the CPU.
pub struct LocalCrossEncoder {
    id: String,
    dir: PathBuf,
    tokenizer: Tokenizer,
    bert: Bert,
    head: Head,
    max_tokens: usize,
    batch_size: usize,
}

impl std::fmt::Debug for LocalCrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCrossEncoder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .field("labels", &self.head.labels)
            .field("max_tokens", &self.max_tokens)
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

impl LocalCrossEncoder {
    /// Loads a cross-encoder directory: `config.json`, `tokenizer.json` and
    /// `model.safetensors` with a sequence-classification head of one or
    /// two labels.
    pub fn load(dir: &Path, opts: CrossOptions) -> Result<LocalCrossEncoder> {
        check_model_dir(dir)?;
        if opts.batch_size == 0 {
            return Err(EmbedError::BadConfig(
                "batch_size must be at least 1".into(),
            ));
        }
        let cfg = BertConfig::from_file(&dir.join("config.json"))?;
        let max_tokens = opts
            .max_tokens
            .unwrap_or(512)
            .min(cfg.max_sequence())
            .max(4);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), Some(max_tokens))?;
        let path = dir.join("model.safetensors");
        let weights = Weights::open(&path)?;
        let head = Head::load(&weights, cfg.hidden_size, &path)?;
        let bert = Bert::from_weights(&weights, cfg, false)?;
        drop(weights);
        let sha = sha256_file(&path)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(LocalCrossEncoder {
            id: format!("local:{name}:{}", &sha[..12]),
            dir: dir.to_path_buf(),
            tokenizer,
            bert,
            head,
            max_tokens,
            batch_size: opts.batch_size,
        })
    }

    /// The model directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Tokens a pair is cut to.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Token ids and type ids of `(query, document)` pairs, special tokens
    /// included, cut to [`LocalCrossEncoder::max_tokens`].
    pub fn tokenize_pairs(
        &self,
        query: &str,
        documents: &[String],
    ) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        // A token is rarely under two bytes: what lies past this many bytes
        // would be cut anyway, and tokenizing a whole long file is not free.
        let keep = self.max_tokens * 8;
        let inputs: Vec<EncodeInput> = documents
            .iter()
            .map(|d| {
                (
                    &query[..query.floor_char_boundary(keep)],
                    &d[..d.floor_char_boundary(keep)],
                )
                    .into()
            })
            .collect();
        let enc = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(EmbedError::model)?;
        Ok(enc
            .into_iter()
            .map(|e| (e.get_ids().to_vec(), e.get_type_ids().to_vec()))
            .collect())
    }
}

impl Reranker for LocalCrossEncoder {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, query: &str, documents: &[String]) -> Result<Vec<f32>> {
        let started = Instant::now();
        let pairs = self.tokenize_pairs(query, documents)?;
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(pairs[i].0.len()));
        let h = self.bert.cfg.hidden_size;
        let mut out = vec![0f32; pairs.len()];
        for batch in order.chunks(self.batch_size) {
            let ids: Vec<&[u32]> = batch.iter().map(|&i| pairs[i].0.as_slice()).collect();
            let types: Vec<&[u32]> = batch.iter().map(|&i| pairs[i].1.as_slice()).collect();
            if ids.iter().any(|s| s.is_empty()) {
                return Err(EmbedError::Model("a pair tokenized to nothing".into()));
            }
            let x = self.bert.encode(&ids, Some(&types), false);
            let mut start = 0;
            for (&i, s) in batch.iter().zip(&ids) {
                out[i] = self.head.score(&x[start * h..(start + 1) * h]);
                start += s.len();
            }
        }
        tracing::debug!(
            documents = documents.len(),
            ms = started.elapsed().as_millis() as u64,
            "cross-encoder scored"
        );
        Ok(out)
    }
}
