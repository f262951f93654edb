use anyhow::Result;
use ken_engine::Engine;
use ken_engine::Walk;

use crate::args::StructureArgs;
use crate::calls;
use crate::output::Output;

pub fn run(engine: &Engine, a: StructureArgs, walk: Walk, out: &Output) -> Result<i32> {
    let target = calls::Structure {
        symbol: a.symbol,
        repo: a.repo,
        walk,
    };
    let Some(answer) = super::call(engine, &target, out)? else {
        return Ok(0);
    };
    let a = target;
    let (repo, r) = (&answer.repo, &answer.result);
    if r.candidates.is_empty() {
        if repo.is_empty() {
            outln!("no definition named `{}` in any repository", a.symbol);
        } else {
            outln!("no definition named `{}` in {repo}", a.symbol);
        }
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
        Walk::References => "references",
    };
    if r.results.is_empty() {
        outln!("no {what} found (references the graph could not resolve are not shown)");
        return Ok(0);
    }
    for x in &r.results {
        if let (Walk::References, Some(s)) = (walk, x.via.first()) {
            let guess = match s.rule.as_str() {
                "same_file" | "unique_global" => ", guessed by name",
                "scip" => ", from the SCIP index",
                _ => "",
            };
            outln!(
                "{}  in {}  {}",
                out.cyan(&format!("{}:{}", s.path, s.line)),
                out.bold(&x.symbol),
                out.dim(&format!("({}{guess})", s.kind))
            );
            continue;
        }
        let mut depth = if matches!(walk, Walk::Impact { .. }) {
            format!("  depth {}", x.depth)
        } else {
            String::new()
        };
        // the step next to the symbol, tied by a guess rather than by scope,
        // imports or types
        let near = match walk {
            Walk::Callees => x.via.last(),
            _ => x.via.first(),
        };
        if let Some(s) = near.filter(|s| matches!(s.rule.as_str(), "same_file" | "unique_global")) {
            depth.push_str(&format!("  (guessed: {} by name)", s.kind));
        }
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
