//! Approximate search: an inverted file of k-means lists (spherical k-means).

use crate::file::Storage;
use crate::flat::{Prepared, check_dim, quantize_rows, rerank, scan_ranges, split};
use crate::kernels::dot_f32;
use crate::{Neighbor, RERANK_FACTOR, Result, VectorSet};

#[derive(Debug, Clone, Copy)]
pub struct IvfParams {
    /// Number of lists (default: about √n).
    pub lists: Option<usize>,
    /// k-means iterations over the training sample.
    pub iterations: usize,
    /// Training sample size per list.
    pub sample_per_list: usize,
    pub seed: u64,
}

impl Default for IvfParams {
    fn default() -> Self {
        IvfParams {
            lists: None,
            iterations: 8,
            sample_per_list: 48,
            seed: 42,
        }
    }
}

pub struct IvfIndex {
    dim: usize,
    pub(crate) storage: Storage,
    /// Probes calibrated at build time to reach the target recall.
    pub(crate) nprobe: usize,
    /// For an index just built: the row of the set each row came from (rows
    /// are stored list by list). Empty for an index read from a file.
    pub(crate) source: Vec<u32>,
}

/// Recall@10 against exact search that [`IvfIndex::build`] calibrates for.
pub const TARGET_RECALL: f64 = 0.95;
/// Sampled rows used to calibrate the probes.
const CALIBRATION_QUERIES: usize = 200;
/// Calibration aims this far above [`TARGET_RECALL`]: the fewest probes that
/// just pass on a sample fall short on other queries (64 samples and no
/// margin gave 0.91 on held-out queries at 100k vectors).
const CALIBRATION_MARGIN: f64 = 0.02;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn nearest(centroids: &[f32], dim: usize, v: &[f32]) -> usize {
    let mut best = (f32::MIN, 0);
    for c in 0..centroids.len() / dim {
        let d = dot_f32(v, &centroids[c * dim..(c + 1) * dim]);
        if d > best.0 {
            best = (d, c);
        }
    }
    best.1
}

/// Assign every row of `data` to its nearest centroid, on all cores.
fn assign(centroids: &[f32], dim: usize, data: &[f32]) -> Vec<u32> {
    let rows = data.len() / dim;
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(8);
    let mut out = vec![0u32; rows];
    let per = rows.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (j, slot) in chunk.iter_mut().enumerate() {
                    let r = i * per + j;
                    *slot = nearest(centroids, dim, &data[r * dim..(r + 1) * dim]) as u32;
                }
            });
        }
    });
    out
}

impl IvfIndex {
    pub fn build(set: &VectorSet, params: IvfParams) -> IvfIndex {
        let (dim, n) = (set.dim, set.len());
        let lists = params
            .lists
            .unwrap_or(((n as f64).sqrt() as usize).max(1))
            .clamp(1, n.max(1));
        let mut rng = Rng(params.seed.max(1));
        // Training sample.
        let sample_n = (lists * params.sample_per_list).min(n);
        let mut sample_rows: Vec<usize> = (0..n).collect();
        for i in 0..sample_n {
            let j = i + (rng.next() as usize) % (n - i);
            sample_rows.swap(i, j);
        }
        sample_rows.truncate(sample_n);
        let sample: Vec<f32> = sample_rows
            .iter()
            .flat_map(|&r| set.row(r).iter().copied())
            .collect();
        // Initial centroids: the first `lists` sampled rows.
        let mut centroids: Vec<f32> = sample[..lists * dim].to_vec();
        for _ in 0..params.iterations {
            let a = assign(&centroids, dim, &sample);
            let mut sums = vec![0f32; lists * dim];
            let mut counts = vec![0usize; lists];
            for (r, &c) in a.iter().enumerate() {
                counts[c as usize] += 1;
                for d in 0..dim {
                    sums[c as usize * dim + d] += sample[r * dim + d];
                }
            }
            for c in 0..lists {
                let cen = &mut sums[c * dim..(c + 1) * dim];
                if counts[c] == 0 {
                    // an empty list takes a random sample row
                    let r = (rng.next() as usize) % sample_n;
                    cen.copy_from_slice(&sample[r * dim..(r + 1) * dim]);
                }
                let norm = cen.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                cen.iter_mut().for_each(|x| *x /= norm);
            }
            centroids = sums;
        }
        // Assign all rows and store them list by list.
        let a = assign(&centroids, dim, &set.data);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&r| (a[r], r));
        let mut offsets = vec![0u64; lists + 1];
        for &c in &a {
            offsets[c as usize + 1] += 1;
        }
        for c in 0..lists {
            offsets[c + 1] += offsets[c];
        }
        let ids: Vec<u64> = order.iter().map(|&r| set.ids[r]).collect();
        let f: Vec<f32> = order
            .iter()
            .flat_map(|&r| set.row(r).iter().copied())
            .collect();
        let (scales, q) = quantize_rows(dim, &f);
        let mut index = IvfIndex {
            dim,
            storage: Storage::Owned {
                ids,
                scales,
                q,
                f: Vec::new(),
                centroids,
                offsets,
            },
            nprobe: 1,
            source: order.iter().map(|&r| r as u32).collect(),
        };
        index.nprobe = index.calibrate(set, params.seed);
        index
    }

    /// The fewest probes whose recall@10 against exact search reaches
    /// [`TARGET_RECALL`] on rows of the set used as queries (each excluded
    /// from its own answers): doubling from 1, then bisecting.
    fn calibrate(&self, set: &VectorSet, seed: u64) -> usize {
        let n = set.len();
        let lists = self.lists().max(1);
        if n <= 11 {
            return lists;
        }
        let mut rng = Rng(seed.wrapping_mul(31).max(1));
        let queries: Vec<usize> = (0..CALIBRATION_QUERIES.min(n))
            .map(|_| (rng.next() as usize) % n)
            .collect();
        let truth: Vec<Vec<u64>> = queries
            .iter()
            .map(|&r| {
                crate::exact_f32(set, set.row(r), 11)
                    .into_iter()
                    .map(|x| x.id)
                    .filter(|id| *id != set.ids[r])
                    .take(10)
                    .collect()
            })
            .collect();
        let good = |nprobe: usize| {
            let mut hit = 0usize;
            let mut total = 0usize;
            for (&r, t) in queries.iter().zip(&truth) {
                let got: Vec<u64> = self
                    .search(set.row(r), 11, nprobe)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|x| x.id)
                    .collect();
                hit += t.iter().filter(|id| got.contains(id)).count();
                total += t.len();
            }
            hit as f64 >= (TARGET_RECALL + CALIBRATION_MARGIN) * total.max(1) as f64
        };
        // Double until good, then bisect between the last bad and first good.
        let mut lo = 0; // largest count known to fall short (0: none tried)
        let mut hi = 1;
        while hi < lists && !good(hi) {
            lo = hi;
            hi = (hi * 2).min(lists);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if good(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi.max(1)
    }

    pub(crate) fn from_storage(dim: usize, storage: Storage, nprobe: usize) -> IvfIndex {
        IvfIndex {
            dim,
            storage,
            nprobe: nprobe.max(1),
            source: Vec::new(),
        }
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

    pub fn lists(&self) -> usize {
        self.storage.offsets().len().saturating_sub(1)
    }

    /// Probes calibrated at build time to reach recall@10 ≥ [`TARGET_RECALL`].
    pub fn default_nprobe(&self) -> usize {
        self.nprobe
    }

    /// The `k` nearest rows among the `nprobe` nearest lists.
    pub fn search(&self, query: &[f32], k: usize, nprobe: usize) -> Result<Vec<Neighbor>> {
        check_dim(self.dim, query)?;
        let (cent, offs) = (self.storage.centroids(), self.storage.offsets());
        let lists = self.lists();
        let mut order: Vec<(f32, usize)> = (0..lists)
            .map(|c| (dot_f32(query, &cent[c * self.dim..(c + 1) * self.dim]), c))
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut ranges: Vec<std::ops::Range<usize>> = order
            .iter()
            .take(nprobe.max(1))
            .map(|&(_, c)| offs[c] as usize..offs[c + 1] as usize)
            .collect();
        ranges.retain(|r| !r.is_empty());
        let rows: usize = ranges.iter().map(|r| r.len()).sum();
        // one thread per group of lists when there is enough work
        let threads = if rows >= 65_536 {
            std::thread::available_parallelism()
                .map(|t| t.get())
                .unwrap_or(1)
                .min(8)
        } else {
            1
        };
        let groups: Vec<Vec<std::ops::Range<usize>>> = if threads > 1 {
            let idx = split(0..ranges.len(), threads);
            idx.into_iter().map(|g| ranges[g].to_vec()).collect()
        } else {
            vec![ranges]
        };
        let prepared = Prepared::new(query);
        let keep = k * RERANK_FACTOR;
        let cand = if groups.len() == 1 {
            scan_ranges(&self.storage, self.dim, &prepared, &groups[0], keep, false)
        } else {
            let parts: Vec<Vec<(f32, u32)>> = std::thread::scope(|s| {
                let hs: Vec<_> = groups
                    .iter()
                    .map(|g| {
                        let p = &prepared;
                        s.spawn(move || scan_ranges(&self.storage, self.dim, p, g, keep, false))
                    })
                    .collect();
                hs.into_iter().filter_map(|h| h.join().ok()).collect()
            });
            let mut all: Vec<(f32, u32)> = parts.into_iter().flatten().collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            all.truncate(keep);
            all
        };
        Ok(rerank(&self.storage, self.dim, query, cand, k))
    }
}
