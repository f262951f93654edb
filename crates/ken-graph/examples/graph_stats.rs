//! Chunk every file of a directory with ken-syntax, resolve the references
//! and print what the graph looks like:
//! `cargo run --release -p ken-graph --example graph_stats -- DIR [-v] [-n TOP]`.
//!
//! Prints references per file and their extraction cost, the resolution
//! rate per kind (resolved / ambiguous / unresolved, by rule and reason),
//! index build / serialise / update times, graph build and PageRank times,
//! and the top definitions by PageRank. `-v` also lists some unresolved
//! and ambiguous references; `--edges-to QUALNAME` the edges into a definition.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ken_core::Language;
use ken_graph::{
    CodeGraph, FileFacts, FileGraph, KINDS, Outcome, RankOptions, Stats, SymbolIndex, resolve_all,
    resolve_file_with_outcomes,
};
use ken_syntax::{ChunkOptions, parse_file};

fn main() {
    let mut dir = None;
    let mut verbose = false;
    let mut top = 10usize;
    let mut edges_to: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-v" => verbose = true,
            "-n" => top = args.next().and_then(|n| n.parse().ok()).unwrap_or(10),
            "--edges-to" => edges_to = args.next(),
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: graph_stats DIR [-v] [-n TOP] [--edges-to QUALNAME]");
        std::process::exit(2);
    };
    let mut paths = Vec::new();
    collect(&dir, &mut paths);

    // chunk
    let opts = ChunkOptions::default();
    let t = Instant::now();
    let mut files = Vec::new();
    let mut bytes = 0usize;
    for p in &paths {
        let rel = p
            .strip_prefix(&dir)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        let lang = Language::from_path(&rel);
        if !lang.is_code() {
            continue;
        }
        let Ok(raw) = std::fs::read(p) else { continue };
        let text = String::from_utf8_lossy(&raw);
        bytes += text.len();
        let syntax = parse_file(&rel, &text, &opts);
        files.push(FileFacts::from_syntax(rel, syntax));
    }
    let chunk_time = t.elapsed();
    let n_defs: usize = files.iter().map(|f| f.definitions.len()).sum();
    let n_refs: usize = files.iter().map(|f| f.references.len()).sum();
    println!(
        "{}: {} code files, {:.1} MB, {n_defs} definitions, {n_refs} references ({:.1} per file); \
         chunking with references {:.0} ms",
        dir.display(),
        files.len(),
        bytes as f64 / 1e6,
        n_refs as f64 / files.len().max(1) as f64,
        chunk_time.as_secs_f64() * 1e3
    );

    // index
    let t = Instant::now();
    let index = SymbolIndex::build(&files);
    let build = t.elapsed();
    let t = Instant::now();
    let json = serde_json::to_string(&index).expect("serialise");
    let ser = t.elapsed();
    let t = Instant::now();
    let back: SymbolIndex = serde_json::from_str(&json).expect("deserialise");
    let de = t.elapsed();
    assert_eq!(back.def_count(), index.def_count());
    println!(
        "index: build {:.1} ms; JSON {:.1} MB, write {:.1} ms, read + rebuild {:.1} ms",
        build.as_secs_f64() * 1e3,
        json.len() as f64 / 1e6,
        ser.as_secs_f64() * 1e3,
        de.as_secs_f64() * 1e3
    );

    // resolve
    let t = Instant::now();
    let resolution = resolve_all(&files, &index);
    let resolve = t.elapsed();
    println!(
        "resolution: {:.1} ms, {} edges",
        resolve.as_secs_f64() * 1e3,
        resolution.edges.len()
    );
    print_stats(&resolution.stats);

    // incremental: the largest file changes (one definition renamed)
    if let Some(big) = files.iter().max_by_key(|f| f.definitions.len()) {
        let mut changed = big.clone();
        if let Some(d) = changed.definitions.first_mut() {
            d.name.push_str("_renamed");
            d.qualname.push_str("_renamed");
        }
        let mut idx = index.clone();
        let t = Instant::now();
        let update = idx.update(std::slice::from_ref(&changed), &[]);
        let upd = t.elapsed();
        let t = Instant::now();
        for path in &update.reresolve {
            if let Some(f) = files.iter().find(|f| &f.path == path) {
                let f = if f.path == changed.path { &changed } else { f };
                std::hint::black_box(resolve_file_with_outcomes(f, &idx));
            }
        }
        println!(
            "update of {} (first definition renamed): index {:.1} ms, {} file(s) to re-resolve ({:.1} ms)",
            big.path,
            upd.as_secs_f64() * 1e3,
            update.reresolve.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
    }

    // graph
    let t = Instant::now();
    let graph = CodeGraph::from_index(&index, &resolution.edges);
    let gb = t.elapsed();
    let t = Instant::now();
    let ranks = graph.pagerank(&RankOptions::default());
    let pr = t.elapsed();
    let fg = FileGraph::build(files.iter().map(|f| f.path.as_str()), &resolution.edges);
    println!(
        "graph: {} nodes, {} edges, build {:.1} ms; PageRank {:.1} ms ({} iterations, converged {}); \
         file graph {} files, {} edges",
        graph.node_count(),
        graph.edge_count(),
        gb.as_secs_f64() * 1e3,
        pr.as_secs_f64() * 1e3,
        ranks.iterations,
        ranks.converged,
        fg.files.len(),
        fg.edges.len()
    );
    println!("top {top} definitions by PageRank:");
    let mut shown = 0;
    for (node, score) in ranks.top(graph.node_count()) {
        let key = graph.key(node);
        if key.is_module() {
            continue;
        }
        let callers = graph.in_edges(node).len();
        println!("  {score:.5}  {key}  ({callers} in-edges)");
        shown += 1;
        if shown == top {
            break;
        }
    }
    let file_ranks = fg.pagerank(&RankOptions::default());
    println!("top 5 files by PageRank:");
    for (i, score) in file_ranks.top(5) {
        println!("  {score:.5}  {}", fg.files[i as usize]);
    }

    if let Some(target) = &edges_to {
        for e in resolution
            .edges
            .iter()
            .filter(|e| &e.to.qualname == target)
            .take(40)
        {
            println!(
                "  {} {}:{} -> {} ({})",
                e.kind.name(),
                e.path,
                e.line,
                e.to,
                e.rule.name()
            );
        }
    }

    if verbose {
        let mut shown = [0usize; 4];
        for f in &files {
            let r = resolve_file_with_outcomes(f, &index);
            for (reference, outcome) in f.references.iter().zip(&r.outcomes) {
                let k = KINDS.iter().position(|k| *k == reference.kind).unwrap();
                if matches!(outcome, Outcome::Resolved(_)) || shown[k] >= 25 {
                    continue;
                }
                shown[k] += 1;
                println!(
                    "  {:?} {} {}:{} {}{} (from {})",
                    outcome,
                    reference.kind.name(),
                    f.path,
                    reference.line,
                    reference
                        .qualifier
                        .as_deref()
                        .map(|q| format!("{q} :: "))
                        .unwrap_or_default(),
                    reference.name,
                    reference.from.as_deref().unwrap_or("-")
                );
            }
        }
    }
}

fn print_stats(stats: &Stats) {
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    for kind in KINDS {
        let s = stats.get(kind);
        let rules: Vec<String> = s
            .by_rule
            .iter()
            .map(|(r, n)| format!("{} {n}", r.name()))
            .collect();
        let reasons: Vec<String> = s
            .by_reason
            .iter()
            .map(|(r, n)| format!("{} {n}", r.name()))
            .collect();
        println!(
            "  {:<8} {:>6}: resolved {:>5.1}%  ambiguous {:>5.1}% ({} many)  unresolved {:>5.1}%  | {} | {}",
            kind.name(),
            s.total,
            pct(s.resolved, s.total),
            pct(s.ambiguous, s.total),
            s.ambiguous_many,
            pct(s.unresolved, s.total),
            rules.join(", "),
            reasons.join(", ")
        );
    }
    let t = stats.total();
    println!(
        "  {:<8} {:>6}: resolved {:>5.1}%  ambiguous {:>5.1}%  unresolved {:>5.1}%",
        "all",
        t.total,
        pct(t.resolved, t.total),
        pct(t.ambiguous, t.total),
        pct(t.unresolved, t.total)
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
