use anyhow::Result;
use ken_engine::Engine;
use ken_engine::FilterSpec;
use ken_engine::Mode;

use crate::args::{SearchArgs, SearchMode};
use crate::calls;
use crate::output::Output;

impl From<SearchArgs> for calls::Search {
    fn from(a: SearchArgs) -> calls::Search {
        let filters = FilterSpec {
            repos: a.repos,
            branches: a.branches,
            langs: a.langs,
            paths: a.paths,
            author: a.author,
            since: a.since,
            until: a.until,
        };
        let mode = match a.mode {
            SearchMode::Hybrid => Mode::Hybrid,
            SearchMode::Lexical => Mode::Lexical,
            SearchMode::Semantic => Mode::Semantic,
        };
        calls::Search {
            query: a.query.join(" "),
            n: a.limit,
            filters,
            files: a.files,
            mode,
            highlight: false,
        }
    }
}

pub fn run(engine: &Engine, a: SearchArgs, out: &Output) -> Result<i32> {
    let search = calls::Search::from(a);
    let Some(resp) = super::call(engine, &search, out)? else {
        return Ok(0);
    };
    let query = &search.query;
    for n in &resp.notes {
        eprintln!("{} {n}", out.yellow("note:"));
    }
    if resp.hits.is_empty() {
        outln!("no results for {query:?}");
        return Ok(0);
    }
    let multi_repo = resp.hits.iter().any(|h| h.repo != resp.hits[0].repo);
    for h in &resp.hits {
        let mut loc = format!("{}:{}-{}", h.path, h.start_line, h.end_line);
        if let Some(cell) = h.cell {
            loc.push_str(&format!(" (cell {cell})"));
        }
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
        if !search.files {
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
    if !resp.repos.is_empty() {
        let counts: Vec<String> = resp
            .repos
            .iter()
            .map(|f| format!("{} {}", f.repo, f.hits))
            .collect();
        outln!(
            "{}",
            out.dim(&format!(
                "searched {}: {}",
                resp.repos.len(),
                counts.join(" · ")
            ))
        );
    }
    Ok(0)
}
