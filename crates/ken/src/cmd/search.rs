use anyhow::{Result, bail};
use ken_core::{Filters, Language};
use ken_engine::Settings;
use ken_engine::search::{SearchRequest, search};
use serde_json::json;

use crate::cli::SearchArgs;
use crate::output::{Output, hit_json};

pub fn run(settings: Settings, a: SearchArgs, out: &Output) -> Result<i32> {
    let query = a.query.join(" ");
    if query.trim().is_empty() {
        bail!(ken_engine::EngineError::Usage(
            "give something to search for, e.g. `ken search parse_config`".into()
        ));
    }
    let mut languages = Vec::new();
    for l in &a.langs {
        match Language::parse(l) {
            Some(lang) => languages.push(lang),
            None => {
                let known: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
                bail!(ken_engine::EngineError::Usage(format!(
                    "unknown language `{l}` (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    let req = SearchRequest {
        query: query.clone(),
        limit: a.limit.max(1),
        filters: Filters {
            author: a.author.clone(),
            since: a
                .since
                .as_deref()
                .map(|t| ken_engine::time::parse_time(t, now()))
                .transpose()?,
            until: a
                .until
                .as_deref()
                .map(|t| ken_engine::time::parse_time(t, now()))
                .transpose()?,
            repos: a.repos,
            languages,
            path_globs: a.paths,
        },
        files: a.files,
        mode: match a.mode {
            crate::cli::SearchMode::Hybrid => ken_engine::search::Mode::Hybrid,
            crate::cli::SearchMode::Lexical => ken_engine::search::Mode::Lexical,
            crate::cli::SearchMode::Semantic => ken_engine::search::Mode::Semantic,
        },
    };
    let resp = search(&settings, &req)?;
    if out.json {
        let results: Vec<_> = resp
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| hit_json(i + 1, h))
            .collect();
        out.print_json(&json!({"query": resp.query, "took_ms": resp.took_ms, "results": results, "notes": resp.notes}));
        return Ok(0);
    }
    for n in &resp.notes {
        eprintln!("{} {n}", out.yellow("note:"));
    }
    if resp.hits.is_empty() {
        outln!("no results for {query:?}");
        return Ok(0);
    }
    let multi_repo = resp.hits.iter().any(|h| h.repo != resp.hits[0].repo);
    for h in &resp.hits {
        let loc = format!("{}:{}-{}", h.path, h.start_line, h.end_line);
        let repo = if multi_repo {
            format!("{} ", out.dim(&format!("[{}]", h.repo)))
        } else {
            String::new()
        };
        let symbol = h.symbol.as_deref().unwrap_or("");
        let pin = if h.pinned {
            out.green(" ★")
        } else {
            String::new()
        };
        outln!(
            "{repo}{}  {}  {}{pin}",
            out.cyan(&loc),
            out.bold(symbol),
            out.dim(&format!("({})", h.kind))
        );
        if !a.files {
            for line in h.snippet.lines().take(4) {
                outln!("    {}", out.dim(line));
            }
        }
    }
    outln!(
        "{}",
        out.dim(&format!(
            "{} results in {} ms",
            resp.hits.len(),
            resp.took_ms
        ))
    );
    Ok(0)
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
