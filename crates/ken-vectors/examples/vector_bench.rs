//! Vector index scaling: exact (int8 scan, candidates re-scored with the f32
//! query against their int8 rows) and IVF, at 10k,
//! 100k and 1M synthetic 384-dimension vectors, against brute-force f32.
//!
//! `cargo run --release -p ken-vectors --example vector_bench [-- SIZES...]`

use std::time::Instant;

use ken_vectors::{FlatIndex, IvfIndex, IvfParams, VectorSet, exact_f32, synthetic};

fn pct(mut xs: Vec<f64>, p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let sizes: Vec<usize> = {
        let a: Vec<usize> = std::env::args()
            .skip(1)
            .filter_map(|s| s.parse().ok())
            .collect();
        if a.is_empty() {
            vec![10_000, 100_000, 1_000_000]
        } else {
            a
        }
    };
    let (dim, nq, k) = (384, 100, 10);
    println!("| vectors | method | build s | p50 ms | p95 ms | recall@10 |");
    println!("|---|---|---|---|---|---|");
    for n in sizes {
        let clusters = (n / 100).max(10);
        let spread: f32 = std::env::var("SPREAD")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1.5);
        let all = synthetic(n + nq, dim, clusters, spread, 1234);
        let mut set = VectorSet::new(dim);
        let mut queries = VectorSet::new(dim);
        for i in 0..n + nq {
            if i < n {
                set.push(all.ids[i], all.row(i))
            } else {
                queries.push(all.ids[i], all.row(i))
            }
        }
        drop(all);
        // brute force f32: the reference for both latency and recall
        let mut truth = Vec::new();
        let mut ms = Vec::new();
        for q in 0..nq {
            let t = Instant::now();
            truth.push(
                exact_f32(&set, queries.row(q), k)
                    .into_iter()
                    .map(|x| x.id)
                    .collect::<Vec<_>>(),
            );
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "| {n} | brute-force f32 (1 thread) | - | {:.2} | {:.2} | 1.000 |",
            pct(ms.clone(), 0.5),
            pct(ms, 0.95)
        );
        let recall = |res: &Vec<Vec<u64>>| {
            let hit: usize = res
                .iter()
                .zip(&truth)
                .map(|(r, t)| t.iter().filter(|x| r.contains(x)).count())
                .sum();
            hit as f64 / (nq * k) as f64
        };
        let t = Instant::now();
        let flat = FlatIndex::build(&set);
        let build = t.elapsed().as_secs_f64();
        let (mut res, mut ms) = (Vec::new(), Vec::new());
        for q in 0..nq {
            let t = Instant::now();
            res.push(
                flat.search(queries.row(q), k)
                    .unwrap()
                    .into_iter()
                    .map(|x| x.id)
                    .collect::<Vec<_>>(),
            );
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "| {n} | exact: int8 scan + int8-row re-score | {build:.2} | {:.2} | {:.2} | {:.3} |",
            pct(ms.clone(), 0.5),
            pct(ms, 0.95),
            recall(&res)
        );
        drop(flat);
        let t = Instant::now();
        let ivf = IvfIndex::build(&set, IvfParams::default());
        let build = t.elapsed().as_secs_f64();
        let lists = ivf.lists();
        let mut probes = vec![
            ivf.default_nprobe() / 2,
            ivf.default_nprobe(),
            ivf.default_nprobe() * 2,
        ];
        probes.retain(|p| *p >= 1 && *p <= lists);
        probes.dedup();
        for nprobe in probes {
            let nprobe = nprobe.max(1);
            let (mut res, mut ms) = (Vec::new(), Vec::new());
            for q in 0..nq {
                let t = Instant::now();
                res.push(
                    ivf.search(queries.row(q), k, nprobe)
                        .unwrap()
                        .into_iter()
                        .map(|x| x.id)
                        .collect::<Vec<_>>(),
                );
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let default = if nprobe == ivf.default_nprobe() {
                " (default)"
            } else {
                ""
            };
            println!(
                "| {n} | IVF {lists} lists, nprobe {nprobe}{default} | {build:.2} | {:.2} | {:.2} | {:.3} |",
                pct(ms.clone(), 0.5),
                pct(ms, 0.95),
                recall(&res)
            );
        }
    }
}
