use anyhow::Result;
use ken_engine::Engine;
use ken_engine::{IndexLimits, IndexReport, IndexRequest};

use crate::args::IndexArgs;
use crate::output::Output;
use crate::progress::Bar;
use crate::wire;

pub fn run(engine: &Engine, a: IndexArgs, out: &Output, quiet: bool) -> Result<i32> {
    let req = IndexRequest {
        source: a.source,
        rev: a.rev,
        name: a.name,
        branch: a.branch,
        no_embed: a.no_embed,
        limits: IndexLimits {
            max_file_bytes: a.max_file_size,
            threads: a.threads,
            embed_budget: a.embed_budget.map(std::time::Duration::from_secs),
        },
        scip: a.scip,
    };
    let bar = Bar::new(!quiet && !out.json).watch_interrupts();
    let report = engine.index(&req, &bar)?;
    if out.json {
        out.print(&wire::IndexRun::from(&report));
    } else if !quiet {
        print_summary(&report, out, engine.settings().rank.learned_docs);
    }
    Ok(0)
}

/// What reading a SCIP index did, on one line (and the documents it left out).
fn print_scip(r: &IndexReport, out: &Output) {
    let Some(s) = &r.scip else {
        return;
    };
    if s.unchanged {
        outln!("  SCIP index {}: read before, unchanged", s.path);
        return;
    }
    let tool = if s.stats.tool.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.stats.tool)
    };
    outln!(
        "  SCIP index {}{tool}: {} of {} documents read · {} of {} symbols they define tied to definitions here · {} of {} graph edges from it · {:.1}s",
        s.path,
        s.stats.files,
        s.stats.documents,
        s.stats.symbols_matched,
        s.stats.symbols,
        s.edges_from_scip,
        s.edges,
        s.seconds
    );
    if s.stats.stale > 0 {
        outln!(
            "  {} {} of its documents describe another version of their file and were left out (e.g. {}): build the SCIP index from the indexed snapshot",
            out.yellow("note:"),
            s.stats.stale,
            s.stats.stale_examples.join(", ")
        );
    }
    if s.stats.not_indexed > 0 {
        outln!(
            "  {} of its documents are of files this index does not hold (paths are read relative to the repository root)",
            s.stats.not_indexed
        );
    }
}

fn print_summary(r: &IndexReport, out: &Output, docs_in_use: bool) {
    let at = match (&r.commit, r.worktree) {
        (Some(c), true) => format!("working tree at {}", &c[..c.len().min(12)]),
        (None, true) if r.plain_folder => "a folder outside git (no history)".to_string(),
        (None, true) => "working tree (no commits)".to_string(),
        (Some(c), false) => c[..c.len().min(12)].to_string(),
        (None, false) => "?".to_string(),
    };
    if r.up_to_date {
        outln!(
            "{} {}: up to date at {at} ({} files)",
            out.green("✓"),
            out.bold(&r.name),
            r.files
        );
        print_scip(r, out);
        return;
    }
    let secs = r.elapsed_ms as f64 / 1000.0;
    outln!(
        "{} {} at {at}: {} files indexed · {} processed ({} added, {} modified, {} renamed, {} deleted) · {} chunks · {:.1} MB · {:.1}s",
        out.green("✓"),
        out.bold(&r.name),
        r.files,
        r.processed,
        r.added,
        r.modified,
        r.renamed,
        r.deleted,
        r.chunks,
        r.bytes as f64 / 1e6,
        secs
    );
    if !r.skipped.is_empty() {
        let parts: Vec<String> = r
            .skipped
            .iter()
            .map(|(reason, n)| {
                let ex = r
                    .skipped_examples
                    .get(reason)
                    .and_then(|v| v.first())
                    .map(String::as_str)
                    .unwrap_or("");
                format!("{n} {reason} (e.g. {ex})")
            })
            .collect();
        outln!("  skipped: {}", parts.join(", "));
    }
    match &r.embed {
        Some(e) if e.left > 0 => outln!(
            "  embedded {} texts with {} in {:.1}s ({} cached) · {} vectors in the index · {} left for the next `ken index`, or `ken serve`/`ken worker` when it starts ({})",
            e.embedded,
            e.model,
            e.seconds,
            e.cached,
            e.indexed,
            e.left,
            if e.stopped {
                "stopped"
            } else {
                "the time budget ran out"
            }
        ),
        Some(e) if e.embedded > 0 => outln!(
            "  embedded {} texts with {} in {:.1}s ({} cached) · {} vectors in the index",
            e.embedded,
            e.model,
            e.seconds,
            e.cached,
            e.indexed
        ),
        Some(e) => outln!(
            "  embeddings up to date ({} vectors for {} chunks, {})",
            e.indexed,
            e.chunks,
            e.model
        ),
        None => {}
    }
    if let Some(a) = &r.adapter {
        outln!("  {}", super::status::adapter_line(a));
    }
    if let Some(t) = &r.ranking {
        outln!("  {}", super::status::ranking_line(t, docs_in_use));
    }
    print_scip(r, out);
    for w in &r.warnings {
        outln!("  {} {w}", out.yellow("note:"));
    }
}
