//! Speed of the identifier-aware analyzer over real source:
//! `cargo run --release -p ken-store --example tokenize_bench -- [-r N] PATH...`
//!
//! Every UTF-8 file under the paths (hidden entries skipped) is read once,
//! then analyzed `N` times (default 3); the fastest pass is reported as
//! MB/s and tokens, the figure to compare between two builds run one
//! after the other on the same machine.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ken_store::tokenizer::analyzer;
use tantivy::tokenizer::TokenStream;

fn main() {
    let mut repeat = 3usize;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-r" {
            repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(3).max(1);
        } else {
            collect(Path::new(&arg), &mut files);
        }
    }
    if files.is_empty() {
        eprintln!("usage: tokenize_bench [-r N] PATH...");
        std::process::exit(2);
    }
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .filter_map(|b| String::from_utf8(b).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut best = Duration::MAX;
    let mut tokens = 0usize;
    let mut sum = 0u64;
    for _ in 0..repeat {
        let mut a = analyzer();
        let started = Instant::now();
        let mut n = 0usize;
        // FNV-1a over every token's text, position and offsets: two builds
        // that analyze alike print the same sum
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |bytes: &[u8]| {
            for &b in bytes {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        };
        for t in &texts {
            let mut stream = a.token_stream(t);
            while stream.advance() {
                let tok = stream.token();
                mix(tok.text.as_bytes());
                mix(&(tok.position as u64).to_le_bytes());
                mix(&(tok.offset_from as u64).to_le_bytes());
                mix(&(tok.offset_to as u64).to_le_bytes());
                n += 1;
            }
        }
        best = best.min(started.elapsed());
        tokens = n;
        sum = h;
    }
    println!(
        "{} files, {:.1} MB, {tokens} tokens (sum {sum:016x}), fastest of {repeat}: {:.3} s, {:.1} MB/s",
        texts.len(),
        bytes as f64 / 1e6,
        best.as_secs_f64(),
        bytes as f64 / 1e6 / best.as_secs_f64()
    );
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    let hidden = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.len() > 1);
    if hidden {
        return;
    }
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        children.sort();
        for c in children {
            collect(&c, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}
