use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;
use ken_engine::{Engine, EngineError, EvalMode, EvalOptions, Mode};

use crate::args::{EvalArgs, EvalModeArg};
use crate::output::Output;

pub fn run(engine: &Engine, a: EvalArgs, out: &Output, quiet: bool) -> Result<i32> {
    let mut repos = HashMap::new();
    for r in &a.repos {
        let Some((name, path)) = r.split_once('=') else {
            return Err(
                EngineError::bad_input(format!("--repo takes NAME=PATH, got `{r}`")).into(),
            );
        };
        repos.insert(name.to_string(), PathBuf::from(path));
    }
    let opts = EvalOptions {
        file: a.file,
        repos,
        at_parent: a.at_parent,
        mode: match a.mode {
            EvalModeArg::Hybrid => EvalMode::Search(Mode::Hybrid),
            EvalModeArg::Lexical => EvalMode::Search(Mode::Lexical),
            EvalModeArg::Semantic => EvalMode::Search(Mode::Semantic),
            EvalModeArg::Baseline => EvalMode::Baseline,
        },
        per_query: a.per_query,
        max_queries: a.max_queries,
        who: a.who,
        expand: a.expand,
        params: a.params,
        across_repos: a.across_repos,
    };
    let log = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let report = engine.eval(&opts, &log)?;
    let _ = out;
    outln!("{}", serde_json::to_string_pretty(&report)?);
    Ok(0)
}
