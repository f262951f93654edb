use anyhow::Result;
use ken_engine::Settings;
use ken_engine::index::{IndexReport, IndexRequest, index};
use serde_json::json;

use crate::cli::IndexArgs;
use crate::output::Output;
use crate::progress::Bar;

pub fn run(mut settings: Settings, a: IndexArgs, out: &Output, quiet: bool) -> Result<i32> {
    if let Some(m) = a.max_file_size {
        settings.max_file_bytes = m;
    }
    if let Some(t) = a.threads {
        settings.threads = t.max(1);
    }
    let req = IndexRequest {
        source: a.source,
        rev: a.rev,
        name: a.name,
        no_embed: a.no_embed,
    };
    let bar = Bar::new(!quiet && !out.json);
    let report = index(&settings, &req, &bar)?;
    if out.json {
        out.print_json(&json!(report));
    } else if !quiet {
        print_summary(&report, out);
    }
    Ok(0)
}

fn print_summary(r: &IndexReport, out: &Output) {
    let at = match (&r.commit, r.worktree) {
        (Some(c), true) => format!("working tree at {}", &c[..c.len().min(12)]),
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
    for w in &r.warnings {
        outln!("  {} {w}", out.yellow("note:"));
    }
}
