//! Int8 dense layers against f32: agreement of the vectors on real code and
//! throughput, measured in the same run (runs alternate so machine noise hits
//! both alike), with the f32 matrix-product roofline for scale.
//!
//! ```text
//! cargo run --release -p ken-embed --example int8 -- [--model DIR] [--flask GIT_DIR] [--reps N]
//! ```

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

use std::time::Instant;

use ken_embed::{Embedder, LocalEmbedder, LocalOptions, cosine};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = support::model_dir(&args);
    let flask = support::flask_git_dir(&args);
    let reps: usize = support::arg(&args, "--reps")
        .map(|r| r.parse().unwrap())
        .unwrap_or(5);
    let load = |int8| {
        LocalEmbedder::load(
            &dir,
            LocalOptions {
                int8,
                batch_size: 32,
                ..LocalOptions::default()
            },
        )
        .unwrap()
    };
    let f32m = load(false);
    let i8m = load(true);
    println!(
        "model: {} · threads: {}",
        dir.display(),
        rayon::current_num_threads()
    );

    // Agreement on real chunks and on queries.
    let chunks = support::python_chunks(&flask);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let a = f32m.embed_documents(&texts).unwrap();
    let b = i8m.embed_documents(&texts).unwrap();
    let mut cos: Vec<f32> = a.iter().zip(&b).map(|(x, y)| cosine(x, y)).collect();
    cos.sort_by(f32::total_cmp);
    let mean = cos.iter().sum::<f32>() / cos.len() as f32;
    println!(
        "\n{} flask chunks, cosine(int8, f32): min {:.4} · p1 {:.4} · median {:.4} · mean {:.4}",
        cos.len(),
        cos[0],
        cos[cos.len() / 100],
        cos[cos.len() / 2],
        mean
    );
    // Do the neighbours agree? Top-10 overlap for chunk-vs-chunk retrieval.
    let queries = [
        "where is the retry logic for failed requests?",
        "how does flask load configuration from environment variables?",
        "register a blueprint with url prefix",
        "session cookie signing secret key",
        "render a template with context",
        "teardown of the application context",
        "json response serialization",
        "command line interface run server",
    ];
    let mut overlap = 0usize;
    for q in queries {
        let top = |m: &LocalEmbedder, docs: &[Vec<f32>]| {
            let qv = m.embed_query(q).unwrap();
            let mut s: Vec<(f32, usize)> = docs
                .iter()
                .enumerate()
                .map(|(i, d)| (cosine(&qv, d), i))
                .collect();
            s.sort_by(|x, y| y.0.total_cmp(&x.0));
            s.into_iter().take(10).map(|x| x.1).collect::<Vec<_>>()
        };
        let ta = top(&f32m, &a);
        let tb = top(&i8m, &b);
        overlap += ta.iter().filter(|i| tb.contains(i)).count();
    }
    println!(
        "top-10 neighbours of {} queries shared by int8 and f32: {:.1}%",
        queries.len(),
        100.0 * overlap as f64 / (10 * queries.len()) as f64
    );

    // Throughput on 256-token windows of real code, runs alternating.
    let windows = support::token_windows(&f32m, &texts, 256, 64);
    let _ = f32m.embed_ids(&windows[..4]).unwrap();
    let _ = i8m.embed_ids(&windows[..4]).unwrap();
    let (mut tf, mut ti) = (f64::MAX, f64::MAX);
    for _ in 0..reps {
        let t = Instant::now();
        let _ = f32m.embed_ids(&windows).unwrap();
        tf = tf.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let _ = i8m.embed_ids(&windows).unwrap();
        ti = ti.min(t.elapsed().as_secs_f64());
    }
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let (l, h, inter) = (
        cfg["num_hidden_layers"].as_u64().unwrap() as usize,
        cfg["hidden_size"].as_u64().unwrap() as usize,
        cfg["intermediate_size"].as_u64().unwrap() as usize,
    );
    let f256 = support::flops(256, l, h, inter);
    let roof = support::candle_gflops(8192, h, inter, 3);
    let n = windows.len() as f64;
    println!(
        "\n{} windows of 256 tokens, best of {reps} alternating runs:",
        windows.len()
    );
    println!(
        "| weights | s | chunks/s | model GFLOP/s | of the f32 roofline ({roof:.1} GFLOP/s) |"
    );
    println!("|---|---|---|---|---|");
    for (name, t) in [("f32", tf), ("int8", ti)] {
        let gf = f256 * n / t / 1e9;
        println!(
            "| {name} | {t:.2} | {:.2} | {gf:.1} | {:.0}% |",
            n / t,
            100.0 * gf / roof
        );
    }
    println!("int8 / f32 speed: {:.2}x", tf / ti);
}
