use anyhow::{Result, bail};
use ken_engine::graph::{Walk, structure};
use ken_engine::{EngineError, Settings, home};
use ken_store::EmbeddedStore;
use serde_json::json;

use crate::cli::StructureArgs;
use crate::output::Output;

pub fn run(settings: Settings, a: StructureArgs, walk: Walk, out: &Output) -> Result<i32> {
    let names: Vec<String> = a.repo.iter().cloned().collect();
    let repos = home::select_repos(&settings.home, &names)?;
    if repos.len() > 1 {
        let list: Vec<&str> = repos.iter().map(|(n, _)| n.as_str()).collect();
        bail!(EngineError::Usage(format!(
            "several repositories are indexed; pick one with --repo ({})",
            list.join(", ")
        )));
    }
    let (repo, dir) = &repos[0];
    let store = EmbeddedStore::open(dir)?;
    let r = structure(&store, &a.symbol, walk)?;
    if out.json {
        out.print_json(&json!(r));
        return Ok(0);
    }
    if r.candidates.is_empty() {
        outln!("no definition named `{}` in {repo}", a.symbol);
        return Ok(0);
    }
    if r.candidates.len() > 1 {
        outln!(
            "{} definitions match `{}` (narrow with PATH:NAME):",
            r.candidates.len(),
            a.symbol
        );
        for c in &r.candidates {
            outln!(
                "  {}  {} {}",
                out.cyan(&format!("{}:{}-{}", c.path, c.start_line, c.end_line)),
                c.symbol,
                out.dim(&format!("({})", c.kind))
            );
        }
    }
    let what = match walk {
        Walk::Callers => "callers",
        Walk::Callees => "callees",
        Walk::Impact { .. } => "dependents",
    };
    if r.results.is_empty() {
        outln!("no {what} found (references the graph could not resolve are not shown)");
        return Ok(0);
    }
    for x in &r.results {
        let depth = if matches!(walk, Walk::Impact { .. }) {
            format!("  depth {}", x.depth)
        } else {
            String::new()
        };
        outln!(
            "{}  {}{}",
            out.cyan(&format!("{}:{}-{}", x.path, x.start_line, x.end_line)),
            out.bold(&x.symbol),
            out.dim(&depth)
        );
        if matches!(walk, Walk::Impact { .. }) && x.depth > 1 {
            let chain: Vec<String> = x
                .via
                .iter()
                .map(|s| format!("{} ({}, {}:{})", s.to, s.kind, s.path, s.line))
                .collect();
            outln!("    {}", out.dim(&format!("via {}", chain.join(" ← "))));
        }
    }
    outln!("{}", out.dim(&format!("{} {what}", r.results.len())));
    Ok(0)
}
