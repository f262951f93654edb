//! Static embeddings distilled from a transformer (the model2vec recipe).
//!
//! [`distill`] runs every vocabulary token through the model as its own
//! sequence (`[CLS] token [SEP]`, pooled like a sentence), centres the
//! vectors, reduces them with PCA to `dims` components (eigen-decomposition
//! of the `hidden × hidden` covariance by cyclic Jacobi rotations, in f64),
//! and weights each token by SIF over a Zipf prior on its rank:
//! `w = a / (a + p(rank))`, `p(rank) ∝ 1 / (rank + 2)`, `a = 1e-4`, rank =
//! token id — model2vec's default. WordPiece vocabularies list words by
//! corpus frequency (after the special, unused and single-character
//! entries), so frequent, uninformative tokens are damped and rare ones kept.
//!
//! [`StaticEmbedder`] embeds a text as the L2-normalised mean of its tokens'
//! rows: a tokeniser pass and a few hundred additions, with no transformer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gemm::Parallelism;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tokenizers::Tokenizer;

use crate::error::{EmbedError, Result};
use crate::local::{LocalEmbedder, kernels, load_tokenizer};
use crate::{Embedder, l2_normalize};

/// The SIF coefficient of the Zipf token weighting.
const SIF_A: f64 = 1e-4;
/// Name of the table inside the safetensors file.
const TENSOR: &str = "embeddings";
/// Inputs longer than this many tokens are truncated.
const STATIC_MAX_TOKENS: usize = 8192;

/// Sidecar metadata written next to the table (`<out>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StaticMeta {
    pub format: String,
    /// [`Embedder::id`] of the model it was distilled from.
    pub source_id: String,
    pub vocab_size: usize,
    pub dims: usize,
    pub weighting: String,
    /// Share of the variance of the token vectors kept by the PCA.
    pub pca_explained_variance: f64,
    pub seconds: f64,
}

/// What [`distill`] did.
#[derive(Debug, Clone)]
pub struct DistillReport {
    pub table: PathBuf,
    pub metadata: PathBuf,
    pub meta: StaticMeta,
}

/// Distils `local` into a static table of `dims` dimensions written to `out`
/// (safetensors, one `vocab × dims` f32 tensor named `embeddings`) and its
/// metadata to `out` with the extension `json`.
pub fn distill(local: &LocalEmbedder, out: &Path, dims: usize) -> Result<DistillReport> {
    let started = Instant::now();
    let hidden = local.dim();
    if dims == 0 || dims > hidden {
        return Err(EmbedError::BadConfig(format!(
            "static dimensions must be in 1..={hidden}, not {dims}"
        )));
    }
    let vocab = local.vocab_size();
    // The model's special tokens around one token: "[CLS] t [SEP]" for BERT.
    let frame = local.tokenize(&[""])?.pop().unwrap_or_default();
    let (pre, post) = frame.split_at(frame.len().min(1));

    // 1. One forward pass per token, packed 512 at a time.
    let mut table = vec![0f32; vocab * hidden];
    let ids: Vec<u32> = (0..vocab as u32).collect();
    for (chunk_no, chunk) in ids.chunks(512).enumerate() {
        let seqs: Vec<Vec<u32>> = chunk
            .iter()
            .map(|&t| {
                pre.iter()
                    .copied()
                    .chain([t])
                    .chain(post.iter().copied())
                    .collect()
            })
            .collect();
        let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
        let vecs = local.run_raw(&refs)?;
        for (i, v) in vecs.into_iter().enumerate() {
            let row = chunk_no * 512 + i;
            table[row * hidden..(row + 1) * hidden].copy_from_slice(&v);
        }
    }

    // 2. PCA: centre, covariance, eigenvectors, projection.
    let mut mean = vec![0f64; hidden];
    for row in table.chunks_exact(hidden) {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += x as f64;
        }
    }
    mean.iter_mut().for_each(|m| *m /= vocab as f64);
    let mean32: Vec<f32> = mean.iter().map(|&m| m as f32).collect();
    table.par_chunks_mut(hidden).for_each(|row| {
        for (x, m) in row.iter_mut().zip(&mean32) {
            *x -= m;
        }
    });
    let mut cov = vec![0f32; hidden * hidden];
    // SAFETY: cov is hidden×hidden, table is vocab×hidden, strides match.
    unsafe {
        gemm::gemm(
            hidden,
            hidden,
            vocab,
            cov.as_mut_ptr(),
            1,
            hidden as isize,
            false,
            table.as_ptr(),
            hidden as isize,
            1,
            table.as_ptr(),
            1,
            hidden as isize,
            0.0,
            1.0 / vocab as f32,
            false,
            false,
            false,
            Parallelism::Rayon(rayon::current_num_threads()),
        );
    }
    let mut a: Vec<f64> = cov.iter().map(|&x| x as f64).collect();
    let (values, vectors) = jacobi_eigen(&mut a, hidden);
    let mut order: Vec<usize> = (0..hidden).collect();
    order.sort_by(|&i, &j| values[j].total_cmp(&values[i]));
    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
    let kept: f64 = order[..dims].iter().map(|&i| values[i].max(0.0)).sum();
    let mut proj = vec![0f32; hidden * dims];
    for (c, &k) in order[..dims].iter().enumerate() {
        for r in 0..hidden {
            proj[r * dims + c] = vectors[r * hidden + k] as f32;
        }
    }
    let mut reduced = vec![0f32; vocab * dims];
    crate::local::bert::matmul(&table, &proj, &mut reduced, vocab, hidden, dims);
    drop(table);

    // 3. SIF weights over a Zipf prior on token rank.
    let norm: f64 = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    reduced
        .par_chunks_mut(dims)
        .enumerate()
        .for_each(|(r, row)| {
            let p = 1.0 / (r as f64 + 2.0) / norm;
            let w = (SIF_A / (SIF_A + p)) as f32;
            row.iter_mut().for_each(|x| *x *= w);
        });

    // 4. Write the table and its metadata.
    let meta = StaticMeta {
        format: "ken-static-v1".into(),
        source_id: local.id().to_string(),
        vocab_size: vocab,
        dims,
        weighting: format!("sif a={SIF_A} over zipf p(rank)=1/(rank+2), rank = token id"),
        pca_explained_variance: if total > 0.0 { kept / total } else { 0.0 },
        seconds: started.elapsed().as_secs_f64(),
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| EmbedError::io(parent, e))?;
    }
    let bytes: Vec<u8> = reduced.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![vocab, dims], &bytes)
            .map_err(EmbedError::model)?;
    let info: HashMap<String, String> = [
        ("source_id".to_string(), meta.source_id.clone()),
        ("format".to_string(), meta.format.clone()),
    ]
    .into();
    safetensors::serialize_to_file([(TENSOR, view)], Some(info), out)
        .map_err(|e| EmbedError::Model(format!("{}: {e}", out.display())))?;
    let meta_path = out.with_extension("json");
    let json = serde_json::to_string_pretty(&meta).map_err(EmbedError::model)?;
    std::fs::write(&meta_path, json).map_err(|e| EmbedError::io(&meta_path, e))?;
    Ok(DistillReport {
        table: out.to_path_buf(),
        metadata: meta_path,
        meta,
    })
}

/// Eigen-decomposition of a symmetric `n × n` matrix (row-major, destroyed)
/// by cyclic Jacobi rotations. Returns the eigenvalues and the eigenvectors
/// as columns (`vectors[row * n + k]` is row `row` of eigenvector `k`).
pub(crate) fn jacobi_eigen(a: &mut [f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let scale: f64 = a.iter().map(|x| x * x).sum::<f64>().max(f64::MIN_POSITIVE);
    for _sweep in 0..60 {
        let mut off = 0.0;
        for p in 0..n {
            for q in p + 1..n {
                off += a[p * n + q] * a[p * n + q];
            }
        }
        if off <= 1e-24 * scale {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() <= 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

/// An [`Embedder`] over a distilled static table.
pub struct StaticEmbedder {
    id: String,
    table: Vec<f32>,
    vocab: usize,
    dims: usize,
    tokenizer: Tokenizer,
    /// Special tokens ([CLS], [SEP], [PAD]...) the tokenizer may add; skipped.
    special: Vec<bool>,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("id", &self.id)
            .field("vocab", &self.vocab)
            .field("dims", &self.dims)
            .finish()
    }
}

impl StaticEmbedder {
    /// Loads a table written by [`distill`] and the source model's `tokenizer.json`.
    pub fn load(path: &Path, tokenizer: &Path) -> Result<StaticEmbedder> {
        let bytes = std::fs::read(path).map_err(|e| EmbedError::io(path, e))?;
        let st = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        let t = st
            .tensor(TENSOR)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        if t.dtype() != safetensors::Dtype::F32 || t.shape().len() != 2 {
            return Err(EmbedError::Model(format!(
                "{}: `{TENSOR}` must be a 2-d f32 tensor",
                path.display()
            )));
        }
        let (vocab, dims) = (t.shape()[0], t.shape()[1]);
        let table: Vec<f32> = t
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let meta: Option<StaticMeta> = std::fs::read_to_string(path.with_extension("json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok());
        let id = match meta {
            Some(m) => format!("static:{}:pca{}", m.source_id, m.dims),
            None => format!("static:{}", &crate::sha256_hex(&bytes)[..12]),
        };
        let tokenizer = load_tokenizer(tokenizer, Some(STATIC_MAX_TOKENS))?;
        let mut special = vec![false; vocab];
        for (id, tok) in tokenizer.get_added_tokens_decoder() {
            if tok.special && (id as usize) < vocab && tok.content != "[UNK]" {
                special[id as usize] = true;
            }
        }
        Ok(StaticEmbedder {
            id,
            table,
            vocab,
            dims,
            tokenizer,
            special,
        })
    }

    fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        let mut acc = vec![0f32; self.dims];
        for &id in ids {
            let id = id as usize;
            if id < self.vocab && !self.special[id] {
                kernels::add_assign(&mut acc, &self.table[id * self.dims..(id + 1) * self.dims]);
            }
        }
        l2_normalize(&mut acc);
        acc
    }
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dims
    }

    fn max_tokens(&self) -> usize {
        STATIC_MAX_TOKENS
    }

    /// An empty text (no tokens) gives the zero vector.
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts
            .par_iter()
            .map(|t| {
                let enc = self
                    .tokenizer
                    .encode_fast(*t, false)
                    .map_err(EmbedError::model)?;
                Ok(self.embed_ids(enc.get_ids()))
            })
            .collect()
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed_documents(&[text])?.pop().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_diagonalises() {
        let n = 6;
        let mut m = vec![0f64; n * n];
        let mut seed = 7u64;
        for i in 0..n {
            for j in 0..=i {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = (seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5;
                m[i * n + j] = x;
                m[j * n + i] = x;
            }
        }
        let orig = m.clone();
        let (vals, vecs) = jacobi_eigen(&mut m, n);
        for k in 0..n {
            for i in 0..n {
                let av: f64 = (0..n).map(|j| orig[i * n + j] * vecs[j * n + k]).sum();
                assert!((av - vals[k] * vecs[i * n + k]).abs() < 1e-9);
            }
        }
    }
}
