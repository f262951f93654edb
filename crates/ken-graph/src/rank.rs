//! PageRank by power iteration, global and personalized.

use serde::{Deserialize, Serialize};

use crate::graph::{CodeGraph, FileGraph, Kinds, NodeId, Weighted};

/// How PageRank is run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankOptions {
    pub damping: f64,
    /// Stop when the L1 change of one iteration is below this.
    pub tolerance: f64,
    pub max_iterations: u32,
    /// Edges followed (a definition passes rank to what it uses).
    pub kinds: Kinds,
    /// Weight of the implicit edge from a definition to the one it is
    /// written in (a method passes rank to its class); 0 for none.
    pub containment: f64,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            damping: 0.85,
            tolerance: 1e-6,
            max_iterations: 100,
            kinds: Kinds::ALL,
            containment: 1.0,
        }
    }
}

/// PageRank scores (summing to 1) and how the iteration went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranks {
    /// One score per node id.
    pub scores: Vec<f64>,
    pub iterations: u32,
    pub converged: bool,
}

impl Ranks {
    /// Node ids by descending score (ties: ascending id).
    pub fn top(&self, n: usize) -> Vec<(NodeId, f64)> {
        let mut order: Vec<(NodeId, f64)> = self
            .scores
            .iter()
            .enumerate()
            .map(|(i, &s)| (i as NodeId, s))
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        order.truncate(n);
        order
    }
}

impl CodeGraph {
    /// Global PageRank: random jumps and dangling nodes' rank spread evenly.
    pub fn pagerank(&self, opts: &RankOptions) -> Ranks {
        let w = self.weighted(opts.kinds, opts.containment);
        let n = w.len();
        power_iteration(&w, &vec![1.0 / n.max(1) as f64; n], opts)
    }

    /// PageRank that jumps back to `seeds` (node, weight), e.g. the best
    /// search hits: it ranks what is near them. Seeds with no weight, or
    /// none at all, give the global PageRank.
    pub fn personalized_pagerank(&self, seeds: &[(NodeId, f64)], opts: &RankOptions) -> Ranks {
        let w = self.weighted(opts.kinds, opts.containment);
        power_iteration(&w, &teleport(w.len(), seeds), opts)
    }
}

impl FileGraph {
    pub fn pagerank(&self, opts: &RankOptions) -> Ranks {
        let w = self.weighted();
        let n = w.len();
        power_iteration(&w, &vec![1.0 / n.max(1) as f64; n], opts)
    }

    /// PageRank that jumps back to the `seeds` files (node, weight).
    pub fn personalized_pagerank(&self, seeds: &[(NodeId, f64)], opts: &RankOptions) -> Ranks {
        let w = self.weighted();
        power_iteration(&w, &teleport(w.len(), seeds), opts)
    }
}

/// The teleport distribution of a seed list (uniform when it is empty).
fn teleport(n: usize, seeds: &[(NodeId, f64)]) -> Vec<f64> {
    let mut p = vec![0.0; n];
    for &(node, weight) in seeds {
        if (node as usize) < n && weight > 0.0 && weight.is_finite() {
            p[node as usize] += weight;
        }
    }
    let total: f64 = p.iter().sum();
    if total > 0.0 {
        p.iter_mut().for_each(|x| *x /= total);
    } else {
        p.iter_mut().for_each(|x| *x = 1.0 / n.max(1) as f64);
    }
    p
}

/// r' = d·(Σ r(u)·w(u,v)/W(u) + dangling·p) + (1−d)·p, until the L1 change
/// is below the tolerance. Deterministic: fixed iteration order.
fn power_iteration(w: &Weighted, p: &[f64], opts: &RankOptions) -> Ranks {
    let n = w.len();
    if n == 0 {
        return Ranks {
            scores: Vec::new(),
            iterations: 0,
            converged: true,
        };
    }
    let d = opts.damping.clamp(0.0, 1.0);
    let out: Vec<f64> = (0..n)
        .map(|u| {
            w.weight[w.start[u] as usize..w.start[u + 1] as usize]
                .iter()
                .sum()
        })
        .collect();
    let mut r = p.to_vec();
    let mut next = vec![0.0; n];
    let mut iterations = 0;
    let mut converged = false;
    while iterations < opts.max_iterations {
        iterations += 1;
        let dangling: f64 = (0..n).filter(|&u| out[u] <= 0.0).map(|u| r[u]).sum();
        for v in 0..n {
            next[v] = (1.0 - d) * p[v] + d * dangling * p[v];
        }
        for u in 0..n {
            if out[u] <= 0.0 {
                continue;
            }
            let share = d * r[u] / out[u];
            for i in w.start[u] as usize..w.start[u + 1] as usize {
                next[w.to[i] as usize] += share * w.weight[i];
            }
        }
        let change: f64 = r.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut r, &mut next);
        if change < opts.tolerance {
            converged = true;
            break;
        }
    }
    Ranks {
        scores: r,
        iterations,
        converged,
    }
}
