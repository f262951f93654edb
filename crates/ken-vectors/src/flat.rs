//! Exact search: scan every row.

use std::ops::Range;

use crate::file::Storage;
use crate::kernels::{dot_f32, dot_f32_i8, dot_i8, quantize};
use crate::topk::TopK;
use crate::{Neighbor, RERANK_FACTOR, Result, VectorError, VectorSet};

pub struct FlatIndex {
    dim: usize,
    pub(crate) storage: Storage,
}

/// Rows scanned per thread before a second thread is worth starting.
const PARALLEL_ROWS: usize = 32_768;

impl FlatIndex {
    pub fn build(set: &VectorSet) -> FlatIndex {
        let (scales, q) = quantize_rows(set.dim, &set.data);
        FlatIndex {
            dim: set.dim,
            storage: Storage::Owned {
                ids: set.ids.clone(),
                scales,
                q,
                f: Vec::new(),
                centroids: Vec::new(),
                offsets: Vec::new(),
            },
        }
    }

    pub(crate) fn from_storage(dim: usize, storage: Storage) -> FlatIndex {
        FlatIndex { dim, storage }
    }

    pub fn len(&self) -> usize {
        self.storage.ids().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The `k` nearest rows: an int8 scan, the best candidates re-scored
    /// with the f32 query against their int8 rows.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<Neighbor>> {
        check_dim(self.dim, query)?;
        let prepared = Prepared::new(query);
        let n = self.len();
        let ranges = if n >= PARALLEL_ROWS {
            let threads = std::thread::available_parallelism()
                .map(|t| t.get())
                .unwrap_or(1)
                .min(8);
            split(0..n, threads)
        } else {
            std::iter::once(0..n).collect()
        };
        let cand = scan_ranges(
            &self.storage,
            self.dim,
            &prepared,
            &ranges,
            k * RERANK_FACTOR,
            true,
        );
        Ok(rerank(&self.storage, self.dim, query, cand, k))
    }
}

pub(crate) fn check_dim(dim: usize, query: &[f32]) -> Result<()> {
    if query.len() != dim {
        return Err(VectorError::Dimension {
            index: dim,
            query: query.len(),
        });
    }
    Ok(())
}

pub(crate) fn quantize_rows(dim: usize, data: &[f32]) -> (Vec<f32>, Vec<i8>) {
    let rows = data.len() / dim.max(1);
    let mut q = vec![0i8; data.len()];
    let mut scales = Vec::with_capacity(rows);
    for r in 0..rows {
        scales.push(quantize(
            &data[r * dim..(r + 1) * dim],
            &mut q[r * dim..(r + 1) * dim],
        ));
    }
    (scales, q)
}

/// A query in both precisions.
pub(crate) struct Prepared {
    q: Vec<i8>,
    scale: f32,
}

impl Prepared {
    pub fn new(query: &[f32]) -> Prepared {
        let mut q = vec![0i8; query.len()];
        let scale = quantize(query, &mut q);
        Prepared { q, scale }
    }
}

pub(crate) fn split(r: Range<usize>, parts: usize) -> Vec<Range<usize>> {
    let n = r.len();
    let per = n.div_ceil(parts.max(1)).max(1);
    (0..parts)
        .map(|i| (r.start + i * per).min(r.end)..(r.start + (i + 1) * per).min(r.end))
        .filter(|r| !r.is_empty())
        .collect()
}

/// Scan row ranges in int8 (one thread per range when `parallel`), keeping
/// `keep` candidates.
pub(crate) fn scan_ranges(
    s: &Storage,
    dim: usize,
    p: &Prepared,
    ranges: &[Range<usize>],
    keep: usize,
    parallel: bool,
) -> Vec<(f32, u32)> {
    let scan = |r: Range<usize>| {
        let (q, scales) = (s.q(), s.scales());
        let mut top = TopK::new(keep);
        for row in r {
            let d = dot_i8(&p.q, &q[row * dim..(row + 1) * dim]) as f32 * scales[row] * p.scale;
            top.push(d, row as u32);
        }
        top
    };
    let mut all = TopK::new(keep);
    if !parallel || ranges.len() <= 1 {
        for r in ranges {
            all.merge(scan(r.clone()));
        }
    } else {
        std::thread::scope(|sc| {
            let handles: Vec<_> = ranges
                .iter()
                .map(|r| sc.spawn(move || scan(r.clone())))
                .collect();
            for h in handles {
                if let Ok(t) = h.join() {
                    all.merge(t);
                }
            }
        });
    }
    all.into_sorted()
}

/// Re-score candidates with the f32 query and keep the best `k`: against
/// the int8 row times its scale (the query is not quantized, so the error
/// is the row's rounding alone), or against the row in f32 where a file of
/// the earlier format keeps one.
pub(crate) fn rerank(
    s: &Storage,
    dim: usize,
    query: &[f32],
    cand: Vec<(f32, u32)>,
    k: usize,
) -> Vec<Neighbor> {
    let (f, q, scales, ids) = (s.f(), s.q(), s.scales(), s.ids());
    let mut scored: Vec<(f32, u32)> = cand
        .into_iter()
        .map(|(_, row)| {
            let r = row as usize;
            let score = if f.is_empty() {
                dot_f32_i8(query, &q[r * dim..(r + 1) * dim]) * scales[r]
            } else {
                dot_f32(query, &f[r * dim..(r + 1) * dim])
            };
            (score, row)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(k);
    scored
        .into_iter()
        .map(|(score, row)| Neighbor {
            id: ids[row as usize],
            score,
        })
        .collect()
}

/// Brute force in f32 (the reference for recall measurements).
pub fn exact_f32(set: &VectorSet, query: &[f32], k: usize) -> Vec<Neighbor> {
    let mut top = TopK::new(k);
    for r in 0..set.len() {
        top.push(dot_f32(query, set.row(r)), r as u32);
    }
    top.into_sorted()
        .into_iter()
        .map(|(score, r)| Neighbor {
            id: set.ids[r as usize],
            score,
        })
        .collect()
}
