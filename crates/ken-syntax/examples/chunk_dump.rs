//! Print how files are chunked, for eyeballing:
//! `cargo run --release -p ken-syntax --example chunk_dump -- [-q] PATH...`
//!
//! A directory is walked (hidden entries skipped). For each file: its chunks
//! (kind, lines, symbol, flags) and definitions; `-t` also prints each
//! chunk's text; `-q` prints only diagnostics and the totals: files,
//! chunks, definitions, references, time and chunks per second. `-r N`
//! parses everything N times and reports the fastest pass (timing on a busy
//! machine); `-T MS` sets the parse time limit (raise it under valgrind).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ken_syntax::{ChunkOptions, parse_file};

fn main() {
    let mut quiet = false;
    let mut texts = false;
    let mut files = Vec::new();
    let mut repeat = 1usize;
    let mut timeout: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-r" {
            repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
        } else if arg == "-T" {
            timeout = args.next().and_then(|n| n.parse().ok());
        } else if arg == "-q" {
            quiet = true;
        } else if arg == "-t" {
            texts = true;
        } else {
            collect(Path::new(&arg), &mut files);
        }
    }
    if files.is_empty() {
        eprintln!("usage: chunk_dump [-q] [-t] [-r N] [-T MS] PATH...");
        std::process::exit(2);
    }
    let mut opts = ChunkOptions::default();
    if let Some(ms) = timeout {
        opts.parse_timeout_ms = ms;
    }
    let texts_read: Vec<(String, String)> = files
        .iter()
        .filter_map(|p| {
            let raw = std::fs::read(p).ok()?;
            Some((
                p.to_string_lossy().into_owned(),
                String::from_utf8_lossy(&raw).into_owned(),
            ))
        })
        .collect();
    let mut best = Duration::MAX;
    for _ in 1..repeat {
        let t0 = Instant::now();
        for (rel, text) in &texts_read {
            std::hint::black_box(parse_file(rel, text, &opts));
        }
        best = best.min(t0.elapsed());
    }
    let (mut n_chunks, mut n_defs, mut n_diag, mut bytes) = (0usize, 0usize, 0usize, 0usize);
    let mut n_refs = 0usize;
    let mut total = Duration::ZERO;
    let mut slowest = (Duration::ZERO, String::new());
    for (rel, text) in &texts_read {
        let t0 = Instant::now();
        let fs = parse_file(rel, text, &opts);
        let took = t0.elapsed();
        total += took;
        if took > slowest.0 {
            slowest = (took, rel.to_string());
        }
        bytes += text.len();
        n_chunks += fs.chunks.len();
        n_defs += fs.definitions.len();
        n_refs += fs.references.len();
        n_diag += fs.diagnostics.len();
        if quiet {
            for d in &fs.diagnostics {
                println!("{rel}: {d}");
            }
            continue;
        }
        println!(
            "== {rel} ({} bytes, {:.2} ms)",
            text.len(),
            took.as_secs_f64() * 1e3
        );
        for c in &fs.chunks {
            let flags = [(c.synthetic, "synthetic"), (c.trivial, "trivial")]
                .iter()
                .filter(|f| f.0)
                .map(|f| f.1)
                .collect::<Vec<_>>()
                .join(",");
            let cell = c.cell.map(|n| format!(" cell {n}")).unwrap_or_default();
            println!(
                "  chunk {:<9} {:>5}-{:<5} {:>6} chars  {}{cell} {flags}",
                c.kind.name(),
                c.start_line,
                c.end_line,
                c.text.chars().count(),
                c.qualname.as_deref().or(c.symbol.as_deref()).unwrap_or("-"),
            );
            if texts {
                for line in c.text.lines() {
                    println!("    | {line}");
                }
            }
        }
        for d in &fs.definitions {
            println!(
                "  def   {:<9} {:>5}-{:<5} {}  | {}",
                d.kind.name(),
                d.start_line,
                d.end_line,
                d.qualname,
                d.signature.as_deref().unwrap_or("")
            );
        }
        for r in &fs.references {
            println!(
                "  ref   {:<7} {:>5} {}{}  <- {}",
                r.kind.name(),
                r.line,
                r.qualifier
                    .as_deref()
                    .map(|q| format!("{q} :: "))
                    .unwrap_or_default(),
                r.name,
                r.from.as_deref().unwrap_or("-")
            );
        }
        for d in &fs.diagnostics {
            println!("  diagnostic: {d}");
        }
    }
    let secs = total.min(best).as_secs_f64().max(1e-9);
    println!(
        "{} files, {:.1} MB, {n_chunks} chunks, {n_defs} definitions, {n_refs} references, \
         {n_diag} diagnostics \
         in {:.3} s: {:.0} chunks/s, {:.1} MB/s; slowest {:.1} ms ({})",
        files.len(),
        bytes as f64 / 1e6,
        secs,
        n_chunks as f64 / secs,
        bytes as f64 / 1e6 / secs,
        slowest.0.as_secs_f64() * 1e3,
        slowest.1
    );
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if !hidden {
            collect(&p, out);
        }
    }
}
