//! A BERT encoder forward pass tuned for CPU sentence embedding.
//!
//! Weights are read with candle from `model.safetensors` (any float dtype,
//! converted to f32) and laid out once for the pass: Q, K and V fused into
//! one `hidden × 3·hidden` matrix with the `1/sqrt(head_dim)` scale folded
//! into Q; every matrix stored input-major so each product is one `gemm`
//! call (the kernel candle's CPU backend uses) over all tokens of a batch.
//!
//! Sequences are *packed*, not padded: the tokens of every sequence in a
//! batch are stacked into one `tokens × hidden` matrix, so the dense layers
//! never compute on padding and no attention mask is needed; attention runs
//! per (sequence, head) in parallel. Bias, activation, residual and layer
//! norm are fused into single passes (see `kernels`).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use gemm::Parallelism;
use rayon::prelude::*;
use serde::Deserialize;

use super::int8::{self, QMatrix};
use super::kernels::{self, Act};
use crate::error::{EmbedError, Result};

/// The fields of a Hugging Face `config.json` this encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub pad_token_id: Option<usize>,
    #[serde(default)]
    pub model_type: Option<String>,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn default_act() -> String {
    "gelu".into()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

impl BertConfig {
    pub fn from_file(path: &Path) -> Result<BertConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| EmbedError::io(path, e))?;
        let cfg: BertConfig = serde_json::from_str(&text)
            .map_err(|e| EmbedError::BadConfig(format!("{}: {e}", path.display())))?;
        cfg.check(path)?;
        Ok(cfg)
    }

    fn check(&self, path: &Path) -> Result<()> {
        let bad = |m: String| Err(EmbedError::BadConfig(format!("{}: {m}", path.display())));
        match self.model_type.as_deref() {
            None | Some("bert") | Some("roberta") | Some("xlm-roberta") | Some("camembert") => {}
            Some(other) => {
                return bad(format!(
                    "model_type {other:?} is not a BERT-family encoder this crate runs \
                     (bert, roberta, xlm-roberta)"
                ));
            }
        }
        if let Some(p) = &self.position_embedding_type
            && p != "absolute"
        {
            return bad(format!(
                "position_embedding_type {p:?} is not supported (absolute only)"
            ));
        }
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return bad("hidden_size is not a multiple of num_attention_heads".into());
        }
        if self.hidden_size / self.num_attention_heads > 256 {
            return bad("attention heads wider than 256 are not supported".into());
        }
        self.act().map(|_| ()).or_else(bad)
    }

    pub(crate) fn act(&self) -> std::result::Result<Act, String> {
        match self.hidden_act.as_str() {
            "gelu" => Ok(Act::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Act::GeluTanh),
            "relu" => Ok(Act::Relu),
            a => Err(format!("hidden_act {a:?} is not supported")),
        }
    }

    /// RoBERTa-style models number positions from `pad_token_id + 1`.
    pub fn position_offset(&self) -> usize {
        match self.model_type.as_deref() {
            Some("roberta") | Some("xlm-roberta") | Some("camembert") => {
                self.pad_token_id.unwrap_or(1) + 1
            }
            _ => 0,
        }
    }

    /// Longest sequence (special tokens included) the position table allows.
    pub fn max_sequence(&self) -> usize {
        self.max_position_embeddings
            .saturating_sub(self.position_offset())
    }
}

struct Layer {
    w_qkv: Vec<f32>, // hidden × 3·hidden, Q part pre-scaled
    b_qkv: Vec<f32>,
    w_o: Vec<f32>, // hidden × hidden
    b_o: Vec<f32>,
    ln1_g: Vec<f32>,
    ln1_b: Vec<f32>,
    w_i: Vec<f32>, // hidden × intermediate
    b_i: Vec<f32>,
    w_o2: Vec<f32>, // intermediate × hidden
    b_o2: Vec<f32>,
    ln2_g: Vec<f32>,
    ln2_b: Vec<f32>,
    /// The four matrices quantized to int8, when asked for.
    q: Option<[QMatrix; 4]>,
}

/// A loaded encoder.
pub struct Bert {
    pub cfg: BertConfig,
    act: Act,
    word: Vec<f32>,
    pos: Vec<f32>,
    /// `type_vocab_size × hidden`: row 0 for a single text, row 1 for the
    /// second text of a pair (cross-encoders).
    types: Vec<f32>,
    emb_ln_g: Vec<f32>,
    emb_ln_b: Vec<f32>,
    layers: Vec<Layer>,
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Mean of all token vectors ([CLS] and [SEP] included, as sentence-transformers does).
    Mean,
    /// The first ([CLS]) token's vector.
    Cls,
}

/// The tensors of a `model.safetensors`, and the prefix its encoder's
/// names carry (`bert.`, `roberta.`, ... or none).
pub(crate) struct Weights {
    map: HashMap<String, Tensor>,
    prefix: String,
}

impl Weights {
    pub(crate) fn open(weights: &Path) -> Result<Weights> {
        let map = candle_core::safetensors::load(weights, &Device::Cpu)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", weights.display())))?;
        let prefix = ["", "bert.", "model.", "roberta.", "encoder_model."]
            .into_iter()
            .find(|p| map.contains_key(&format!("{p}embeddings.word_embeddings.weight")))
            .ok_or_else(|| {
                EmbedError::Model(format!(
                    "{}: no embeddings.word_embeddings.weight tensor: not a BERT checkpoint",
                    weights.display()
                ))
            })?
            .to_string();
        Ok(Weights { map, prefix })
    }

    /// The encoder's tensor `name` (under the prefix), of this shape.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        self.get_exact(&format!("{}{name}", self.prefix), shape)
    }

    /// The dims of tensor `full` (no prefix added), if present.
    pub(crate) fn dims(&self, full: &str) -> Option<Vec<usize>> {
        self.map.get(full).map(|t| t.dims().to_vec())
    }

    /// The prefix the encoder's tensors carry.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Tensor `full` (no prefix added), of this shape, as f32.
    pub(crate) fn get_exact(&self, full: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let t = self.map.get(full).ok_or_else(|| {
            EmbedError::Model(format!("tensor {full} missing from model.safetensors"))
        })?;
        if t.dims() != shape {
            return Err(EmbedError::Model(format!(
                "tensor {full} has shape {:?}, config.json implies {shape:?}",
                t.dims()
            )));
        }
        Ok(t.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?)
    }

    /// A Linear weight (stored `out × in`) transposed to `in × out`.
    fn linear_t(&self, name: &str, out: usize, inp: usize) -> Result<Vec<f32>> {
        let w = self.get(name, &[out, inp])?;
        Ok(transpose(&w, out, inp))
    }
}

/// `w` (`rows × cols`, row-major) transposed.
pub(crate) fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; w.len()];
    for o in 0..rows {
        for i in 0..cols {
            t[i * rows + o] = w[o * cols + i];
        }
    }
    t
}

impl Bert {
    /// `int8`: also keep the dense layers' weights quantized, and use them.
    pub fn load(weights: &Path, cfg: BertConfig, int8: bool) -> Result<Bert> {
        Bert::from_weights(&Weights::open(weights)?, cfg, int8)
    }

    /// The encoder from an opened weight file (whose other tensors, a
    /// classification head, the caller may read too).
    pub(crate) fn from_weights(w: &Weights, cfg: BertConfig, int8: bool) -> Result<Bert> {
        let h = cfg.hidden_size;
        let inter = cfg.intermediate_size;
        let scale = 1.0 / ((h / cfg.num_attention_heads) as f32).sqrt();
        let act = cfg.act().map_err(EmbedError::BadConfig)?;

        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = format!("encoder.layer.{l}.");
            let lin = |n: &str, o, i| w.linear_t(&format!("{p}{n}.weight"), o, i);
            let vec = |n: &str, len| w.get(&format!("{p}{n}"), &[len]);
            let (wq, wk, wv) = (
                lin("attention.self.query", h, h)?,
                lin("attention.self.key", h, h)?,
                lin("attention.self.value", h, h)?,
            );
            let mut w_qkv = vec![0f32; h * 3 * h];
            for i in 0..h {
                for o in 0..h {
                    w_qkv[i * 3 * h + o] = wq[i * h + o] * scale;
                    w_qkv[i * 3 * h + h + o] = wk[i * h + o];
                    w_qkv[i * 3 * h + 2 * h + o] = wv[i * h + o];
                }
            }
            let mut b_qkv: Vec<f32> = vec("attention.self.query.bias", h)?
                .into_iter()
                .map(|b| b * scale)
                .collect();
            b_qkv.extend(vec("attention.self.key.bias", h)?);
            b_qkv.extend(vec("attention.self.value.bias", h)?);
            let mut layer = Layer {
                w_qkv,
                b_qkv,
                w_o: lin("attention.output.dense", h, h)?,
                b_o: vec("attention.output.dense.bias", h)?,
                ln1_g: vec("attention.output.LayerNorm.weight", h)?,
                ln1_b: vec("attention.output.LayerNorm.bias", h)?,
                w_i: lin("intermediate.dense", inter, h)?,
                b_i: vec("intermediate.dense.bias", inter)?,
                w_o2: lin("output.dense", h, inter)?,
                b_o2: vec("output.dense.bias", h)?,
                ln2_g: vec("output.LayerNorm.weight", h)?,
                ln2_b: vec("output.LayerNorm.bias", h)?,
                q: None,
            };
            if int8 {
                let quant = |w: &[f32], k, n| {
                    QMatrix::quantize(w, k, n).ok_or_else(|| {
                        EmbedError::Model(format!(
                            "int8: a {k}×{n} layer does not fit the kernel (multiples of 4 × 16)"
                        ))
                    })
                };
                layer.q = Some([
                    quant(&layer.w_qkv, h, 3 * h)?,
                    quant(&layer.w_o, h, h)?,
                    quant(&layer.w_i, h, inter)?,
                    quant(&layer.w_o2, inter, h)?,
                ]);
            }
            layers.push(layer);
        }
        let types = w.get(
            "embeddings.token_type_embeddings.weight",
            &[cfg.type_vocab_size, h],
        )?;
        Ok(Bert {
            act,
            word: w.get("embeddings.word_embeddings.weight", &[cfg.vocab_size, h])?,
            pos: w.get(
                "embeddings.position_embeddings.weight",
                &[cfg.max_position_embeddings, h],
            )?,
            types,
            emb_ln_g: w.get("embeddings.LayerNorm.weight", &[h])?,
            emb_ln_b: w.get("embeddings.LayerNorm.bias", &[h])?,
            layers,
            cfg,
        })
    }

    /// Runs the encoder on a batch of token-id sequences and pools each one.
    /// Vectors are not normalised. Every sequence must be non-empty and at most
    /// [`BertConfig::max_sequence`] long.
    /// `int8`: use the quantized dense layers, if loaded.
    pub fn embed(&self, seqs: &[&[u32]], pooling: Pooling, int8: bool) -> Vec<Vec<f32>> {
        let h = self.cfg.hidden_size;
        let x = self.encode(seqs, None, int8);
        let mut out = Vec::with_capacity(seqs.len());
        let mut start = 0;
        for s in seqs {
            let rows = &x[start * h..(start + s.len()) * h];
            let v = match pooling {
                Pooling::Cls => rows[..h].to_vec(),
                Pooling::Mean => {
                    let mut acc = vec![0f32; h];
                    for r in rows.chunks_exact(h) {
                        kernels::add_assign(&mut acc, r);
                    }
                    let inv = 1.0 / s.len() as f32;
                    acc.iter_mut().for_each(|a| *a *= inv);
                    acc
                }
            };
            out.push(v);
            start += s.len();
        }
        out
    }

    /// Whether int8 dense layers were loaded.
    pub fn has_int8(&self) -> bool {
        self.layers.iter().all(|l| l.q.is_some()) && !self.layers.is_empty()
    }

    /// The last hidden states of all tokens, packed: `sum(len) × hidden`.
    /// `types`: each token's type id (segment), parallel to `seqs`; none: all 0.
    /// Ids past the type table are clamped to its last row.
    pub fn encode(&self, seqs: &[&[u32]], types: Option<&[&[u32]]>, int8: bool) -> Vec<f32> {
        let cfg = &self.cfg;
        let h = cfg.hidden_size;
        let inter = cfg.intermediate_size;
        let eps = cfg.layer_norm_eps as f32;
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        let offsets: Vec<usize> = seqs
            .iter()
            .scan(0, |acc, s| {
                let o = *acc;
                *acc += s.len();
                Some(o)
            })
            .collect();

        // Embeddings: word + position + token type, then layer norm.
        let mut x = vec![0f32; total * h];
        let pos_off = cfg.position_offset();
        let vocab = cfg.vocab_size;
        let type_rows = (self.types.len() / h).max(1);
        {
            let mut rows: Vec<(&mut [f32], u32, usize, usize)> = Vec::with_capacity(total);
            let mut rest = x.as_mut_slice();
            for (n, s) in seqs.iter().enumerate() {
                let ty = types.and_then(|t| t.get(n));
                for (i, &id) in s.iter().enumerate() {
                    let (row, tail) = rest.split_at_mut(h);
                    let t = ty.and_then(|t| t.get(i)).map_or(0, |&t| t as usize);
                    rows.push((row, id, i, t.min(type_rows - 1)));
                    rest = tail;
                }
            }
            rows.par_chunks_mut(64).for_each(|chunk| {
                for (row, id, i, t) in chunk.iter_mut() {
                    let id = (*id as usize).min(vocab - 1);
                    row.copy_from_slice(&self.word[id * h..(id + 1) * h]);
                    let p = pos_off + *i;
                    kernels::add_assign(row, &self.pos[p * h..(p + 1) * h]);
                    kernels::add_assign(row, &self.types[*t * h..(*t + 1) * h]);
                    kernels::layer_norm(row, &self.emb_ln_g, &self.emb_ln_b, eps);
                }
            });
        }

        let mut qkv = vec![0f32; total * 3 * h];
        let mut ctx = vec![0f32; total * h];
        let mut tmp = vec![0f32; total * h];
        let mut mid = vec![0f32; total * inter];
        let rows_per_task = 32;
        for layer in &self.layers {
            let q = layer.q.as_ref().filter(|_| int8);
            dense(
                &x,
                &layer.w_qkv,
                q.map(|q| &q[0]),
                &mut qkv,
                total,
                h,
                3 * h,
            );
            qkv.par_chunks_mut(rows_per_task * 3 * h)
                .for_each(|c| kernels::add_bias(c, &layer.b_qkv));
            self.attention(&qkv, &mut ctx, seqs, &offsets);
            dense(&ctx, &layer.w_o, q.map(|q| &q[1]), &mut tmp, total, h, h);
            x.par_chunks_mut(rows_per_task * h)
                .zip(tmp.par_chunks(rows_per_task * h))
                .for_each(|(xc, tc)| {
                    kernels::residual_layer_norm(
                        xc,
                        tc,
                        &layer.b_o,
                        &layer.ln1_g,
                        &layer.ln1_b,
                        eps,
                    )
                });
            dense(&x, &layer.w_i, q.map(|q| &q[2]), &mut mid, total, h, inter);
            let act = self.act;
            mid.par_chunks_mut(rows_per_task * inter)
                .for_each(|c| kernels::bias_act(c, &layer.b_i, act));
            dense(
                &mid,
                &layer.w_o2,
                q.map(|q| &q[3]),
                &mut tmp,
                total,
                inter,
                h,
            );
            x.par_chunks_mut(rows_per_task * h)
                .zip(tmp.par_chunks(rows_per_task * h))
                .for_each(|(xc, tc)| {
                    kernels::residual_layer_norm(
                        xc,
                        tc,
                        &layer.b_o2,
                        &layer.ln2_g,
                        &layer.ln2_b,
                        eps,
                    )
                });
        }
        x
    }

    /// Self-attention of every (sequence, head) pair, in parallel; writes the
    /// per-head contexts side by side into `ctx` (`tokens × hidden`).
    fn attention(&self, qkv: &[f32], ctx: &mut [f32], seqs: &[&[u32]], offsets: &[usize]) {
        let h = self.cfg.hidden_size;
        let heads = self.cfg.num_attention_heads;
        let d = h / heads;
        let ld = 3 * h;
        let ctx_ptr = SendPtr(ctx.as_mut_ptr());
        let tasks: Vec<(usize, usize)> = (0..seqs.len())
            .flat_map(|s| (0..heads).map(move |hd| (s, hd)))
            .collect();
        tasks
            .par_iter()
            .for_each_init(Vec::new, |scores: &mut Vec<f32>, &(s, hd)| {
                let n = seqs[s].len();
                let base = offsets[s] * ld;
                let q = &qkv[base + hd * d..];
                let k = &qkv[base + h + hd * d..];
                let v = &qkv[base + 2 * h + hd * d..];
                scores.clear();
                scores.resize(n * n, 0.0);
                let out = ctx_ptr.get().wrapping_add(offsets[s] * h + hd * d);
                if n <= SMALL_SEQ {
                    // Tiny sequences (distillation feeds 3 tokens): plain loops beat two gemm calls.
                    for i in 0..n {
                        for j in 0..n {
                            let (qi, kj) = (&q[i * ld..i * ld + d], &k[j * ld..j * ld + d]);
                            scores[i * n + j] = qi.iter().zip(kj).map(|(a, b)| a * b).sum();
                        }
                    }
                    kernels::softmax_rows(scores, n);
                    for i in 0..n {
                        let mut acc = [0f32; 256];
                        let acc = &mut acc[..d];
                        for j in 0..n {
                            let p = scores[i * n + j];
                            for (a, &x) in acc.iter_mut().zip(&v[j * ld..j * ld + d]) {
                                *a += p * x;
                            }
                        }
                        // SAFETY: row i of this (sequence, head) block of ctx; disjoint per task.
                        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), out.add(i * h), d) };
                    }
                    return;
                }
                // SAFETY: every slice covers rows offsets[s]..offsets[s]+n of a
                // matrix with row stride `ld` (or `h` for ctx); the strides and
                // dimensions below stay inside them, and each task writes its own
                // disjoint (rows, head columns) block of ctx.
                unsafe {
                    gemm::gemm(
                        n,
                        n,
                        d,
                        scores.as_mut_ptr(),
                        1,
                        n as isize,
                        false,
                        q.as_ptr(),
                        1,
                        ld as isize,
                        k.as_ptr(),
                        ld as isize,
                        1,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        Parallelism::None,
                    );
                }
                kernels::softmax_rows(scores, n);
                unsafe {
                    gemm::gemm(
                        n,
                        d,
                        n,
                        out,
                        1,
                        h as isize,
                        false,
                        scores.as_ptr(),
                        1,
                        n as isize,
                        v.as_ptr(),
                        1,
                        ld as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        Parallelism::None,
                    );
                }
            });
    }
}

/// Sequences up to this length take the loop path in attention.
const SMALL_SEQ: usize = 8;

#[derive(Clone, Copy)]
struct SendPtr(*mut f32);
// SAFETY: used only to hand disjoint blocks of one buffer to parallel tasks.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}
impl SendPtr {
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// A dense layer's product: int8 when the layer was quantized, else f32.
fn dense(a: &[f32], b: &[f32], q: Option<&QMatrix>, c: &mut [f32], m: usize, k: usize, n: usize) {
    match q {
        Some(q) => int8::matmul(a, q, c, m),
        None => matmul(a, b, c, m, k, n),
    }
}

/// `c (m×n) = a (m×k) · b (k×n)`, all row-major, on every core.
pub(crate) fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if m == 0 {
        return;
    }
    let threads = rayon::current_num_threads();
    let par = if threads > 1 && m * n * k >= 32 * 1024 {
        Parallelism::Rayon(threads)
    } else {
        Parallelism::None
    };
    // SAFETY: the asserts above bound every access of the row-major strides.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            par,
        );
    }
}
