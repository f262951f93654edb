//! Throughput of the local, candle and static embedders against this machine's
//! matrix-product roofline, measured in the same run.
//!
//! ```text
//! cargo build --release -p ken-embed --examples
//! target/release/examples/bench [--model DIR] [--flask GIT_DIR] [--static FILE] [--reps N]
//! ```

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use ken_embed::{Backend, Embedder, LocalEmbedder, LocalOptions, StaticEmbedder};

struct Model {
    layers: usize,
    hidden: usize,
    inter: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = support::model_dir(&args);
    let flask = support::flask_git_dir(&args);
    let reps: usize = support::arg(&args, "--reps")
        .map(|r| r.parse().unwrap())
        .unwrap_or(3);
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let m = Model {
        layers: cfg["num_hidden_layers"].as_u64().unwrap() as usize,
        hidden: cfg["hidden_size"].as_u64().unwrap() as usize,
        inter: cfg["intermediate_size"].as_u64().unwrap() as usize,
    };
    println!("model: {}", dir.display());
    println!("threads: {} (rayon)", rayon::current_num_threads());

    // (a) Roofline.
    let square = support::candle_gflops(2048, 2048, 2048, reps.max(3));
    let ffn = support::candle_gflops(8192, m.hidden, m.inter, reps.max(3));
    let roof = square.max(ffn);
    println!("\n## (a) roofline: f32 matrix product with candle (gemm crate)");
    println!("2048x2048 · 2048x2048: {square:.1} GFLOP/s");
    println!(
        "8192x{} · {}x{} (the FFN shape of a 32x256 batch): {ffn:.1} GFLOP/s",
        m.hidden, m.hidden, m.inter
    );
    println!("roofline used below: {roof:.1} GFLOP/s");

    // (b) FLOPs per chunk.
    let f256 = support::flops(256, m.layers, m.hidden, m.inter);
    println!("\n## (b) FLOPs per 256-token chunk");
    println!(
        "{:.2} GFLOP per chunk = {:.1} MFLOP/token ({:.1} dense + {:.1} attention); ceiling {:.1} chunks/s",
        f256 / 1e9,
        f256 / 256.0 / 1e6,
        support::flops(256, m.layers, m.hidden, m.inter) / 256.0 / 1e6
            - 4.0 * 256.0 * m.hidden as f64 * m.layers as f64 / 1e6,
        4.0 * 256.0 * m.hidden as f64 * m.layers as f64 / 1e6,
        roof * 1e9 / f256
    );

    // Inputs: 256-token windows of real code, and definition-sized chunks.
    let chunks = support::python_chunks(&flask);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();

    let load = |backend, batch_size| {
        LocalEmbedder::load(
            &dir,
            LocalOptions {
                backend,
                batch_size,
                ..LocalOptions::default()
            },
        )
        .unwrap()
    };
    let probe = load(Backend::Fused, 8);
    let mut raw_tok = probe.tokenizer().clone();
    raw_tok.with_truncation(None).unwrap();
    let windows = support::token_windows(&probe, &texts, 256, 64);
    let chunk_ids = probe.tokenize(&texts).unwrap();
    let chunk_tokens: usize = chunk_ids.iter().map(Vec::len).sum();
    let chunk_flops: f64 = chunk_ids
        .iter()
        .map(|s| support::flops(s.len(), m.layers, m.hidden, m.inter))
        .sum();

    println!("\n## (c) full model, fixed 256-token chunks (token ids given, no tokenisation)");
    println!("| backend | batch | chunks | best s | chunks/s | tokens/s | GFLOP/s | of roofline |");
    println!("|---|---|---|---|---|---|---|---|");
    for (backend, name, n) in [
        (Backend::Fused, "fused", 64usize),
        (Backend::Candle, "candle BertModel", 16),
    ] {
        for bs in [1usize, 8, 32] {
            let e = load(backend, bs);
            let seqs = &windows[..n.min(windows.len())];
            let _ = e.embed_ids(&seqs[..bs.min(seqs.len())]).unwrap(); // warm-up
            let (best, _) = support::time(reps, || {
                let _ = e.embed_ids(seqs).unwrap();
            });
            let cps = seqs.len() as f64 / best;
            let gf = f256 * cps / 1e9;
            println!(
                "| {name} | {bs} | {} | {best:.2} | {cps:.2} | {:.0} | {gf:.1} | {:.0}% |",
                seqs.len(),
                cps * 256.0,
                100.0 * gf / roof
            );
        }
    }

    println!(
        "\n## (c) full model, {} flask chunks of mixed length (mean {:.0} tokens after truncation; tokenisation included)",
        texts.len(),
        chunk_tokens as f64 / texts.len() as f64
    );
    println!("| backend | batch | best s | chunks/s | tokens/s | GFLOP/s | of roofline |");
    println!("|---|---|---|---|---|---|---|");
    for bs in [1usize, 8, 32] {
        let e = load(Backend::Fused, bs);
        let (best, _) = support::time(reps, || {
            let _ = e.embed_documents(&texts).unwrap();
        });
        let gf = chunk_flops / best / 1e9;
        println!(
            "| fused | {bs} | {best:.2} | {:.1} | {:.0} | {gf:.1} | {:.0}% |",
            texts.len() as f64 / best,
            chunk_tokens as f64 / best,
            100.0 * gf / roof
        );
    }
    let e = load(Backend::Fused, 1);
    let (best, med) = support::time(20, || {
        let _ = e
            .embed_query("where is the retry logic for failed requests?")
            .unwrap();
    });
    println!(
        "single query latency (fused, 12 tokens): best {:.1} ms, median {:.1} ms",
        best * 1e3,
        med * 1e3
    );

    // (d) Static.
    println!("\n## (d) static (distilled) embedder");
    let table = support::arg(&args, "--static")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir()
                .join("ken-bench-static")
                .join("minilm-256.safetensors")
        });
    if !table.is_file() {
        let t = Instant::now();
        let r = ken_embed::distill(&load(Backend::Fused, 16), &table, 256).unwrap();
        println!(
            "distilled {} tokens to 256 dims in {:.1} s (PCA keeps {:.1}% of the variance)",
            r.meta.vocab_size,
            t.elapsed().as_secs_f64(),
            100.0 * r.meta.pca_explained_variance
        );
    }
    let st = StaticEmbedder::load(&table, &dir.join("tokenizer.json")).unwrap();
    let (best, _) = support::time(reps.max(5), || {
        let _ = st.embed_documents(&texts).unwrap();
    });
    let static_tokens: usize = texts
        .iter()
        .map(|t| {
            raw_tok
                .encode(*t, false)
                .map(|x| x.get_ids().len())
                .unwrap_or(0)
        })
        .sum();
    println!(
        "{} chunks: {best:.3} s, {:.0} chunks/s, {:.0} tokens/s (no truncation: {} tokens)",
        texts.len(),
        texts.len() as f64 / best,
        static_tokens as f64 / best,
        static_tokens
    );
    let (best, med) = support::time(50, || {
        let _ = st
            .embed_query("where is the retry logic for failed requests?")
            .unwrap();
    });
    println!(
        "single query latency (static): best {:.3} ms, median {:.3} ms",
        best * 1e3,
        med * 1e3
    );
    write_inputs(&table, &windows);
}

/// Saves the 256-token windows so that other implementations can run the
/// very same inputs (`benches/ort_bert.py --ids FILE`).
fn write_inputs(table: &Path, windows: &[Vec<u32>]) {
    let path = table.with_file_name("windows-256.json");
    std::fs::write(&path, serde_json::to_string(windows).unwrap()).unwrap();
    println!("\n256-token inputs written to {}", path.display());
}
