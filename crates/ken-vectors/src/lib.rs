//! Vector indexes for unit-length embeddings (cosine = dot product).
//!
//! - [`FlatIndex`]: exact search. Every vector is scanned in int8 (4× less
//!   memory traffic than f32, SIMD dot products), the best candidates are
//!   re-scored in f32. Memory-mapped from one file.
//! - [`IvfIndex`]: approximate search for large sets. k-means lists; a query
//!   scans the `nprobe` nearest lists the same way.
//!
//! Both are built from a [`VectorSet`] and written with [`write`]; [`open`]
//! maps a file back and returns whichever index it holds.

mod file;
mod flat;
mod ivf;
pub mod kernels;
mod topk;

pub use file::{AnyIndex, open, write};
pub use flat::{FlatIndex, exact_f32};
pub use ivf::{IvfIndex, IvfParams, TARGET_RECALL};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("vector file {0}: {1}")]
    Format(String, String),
    #[error("dimension mismatch: index has {index}, query has {query}")]
    Dimension { index: usize, query: usize },
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, VectorError>;

/// Vectors with their ids, row-major, before indexing.
#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    pub dim: usize,
    pub ids: Vec<u64>,
    pub data: Vec<f32>,
}

impl VectorSet {
    pub fn new(dim: usize) -> VectorSet {
        VectorSet {
            dim,
            ids: Vec::new(),
            data: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Add a vector (normalised here if it is not unit length).
    pub fn push(&mut self, id: u64, v: &[f32]) {
        assert_eq!(v.len(), self.dim, "vector of the wrong dimension");
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        self.ids.push(id);
        self.data.extend(v.iter().map(|x| x * inv));
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// A search result: id and cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbor {
    pub id: u64,
    pub score: f32,
}

/// Synthetic unit vectors drawn around `clusters` random centres (a stand-in
/// for real embeddings, which cluster by topic), for tests and benchmarks.
pub fn synthetic(n: usize, dim: usize, clusters: usize, spread: f32, seed: u64) -> VectorSet {
    let mut s = seed.max(1);
    let mut gauss = move || {
        // Box-Muller from xorshift
        let mut u = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (u(), u());
        ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
    };
    let centres: Vec<f32> = (0..clusters.max(1) * dim).map(|_| gauss()).collect();
    let mut set = VectorSet::new(dim);
    let mut v = vec![0f32; dim];
    for i in 0..n {
        let c = (i * 7919) % clusters.max(1);
        for d in 0..dim {
            v[d] = centres[c * dim + d] + spread * gauss();
        }
        set.push(i as u64, &v);
    }
    set
}

/// How many candidates the int8 scan keeps for re-scoring with the f32 query, per result.
const RERANK_FACTOR: usize = 4;
