use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Result, bail};
use ken_engine::EngineError;
use ken_engine::Settings;
use ken_engine::eval::{EvalMode, EvalOptions, eval};
use ken_engine::search::Mode;
use serde_json::json;

use crate::cli::{EvalArgs, EvalModeArg};
use crate::output::Output;

pub fn run(mut settings: Settings, a: EvalArgs, out: &Output, quiet: bool) -> Result<i32> {
    let mut repos = HashMap::new();
    for r in &a.repos {
        let Some((name, path)) = r.split_once('=') else {
            bail!(EngineError::Usage(format!(
                "--repo takes NAME=PATH, got `{r}`"
            )));
        };
        repos.insert(name.to_string(), PathBuf::from(path));
    }
    for p in &a.params {
        apply_param(&mut settings, p)?;
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
    };
    let log = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let report = eval(&settings, &opts, &log)?;
    let _ = out;
    outln!("{}", serde_json::to_string_pretty(&json!(report))?);
    Ok(0)
}

/// `key=value` over the ranking constants.
fn apply_param(settings: &mut Settings, kv: &str) -> Result<()> {
    let Some((k, v)) = kv.split_once('=') else {
        bail!(EngineError::Usage(format!(
            "--param takes KEY=VALUE, got `{kv}`"
        )));
    };
    let v: f32 = v
        .parse()
        .map_err(|_| EngineError::Usage(format!("--param {k}: `{v}` is not a number")))?;
    let r = &mut settings.rank;
    match k {
        "k" => r.k = v,
        "w_bm25" => r.w_bm25 = v,
        "w_file" => r.w_file = v,
        "w_file_dense" => r.w_file_dense = v,
        "w_symbol" => r.w_symbol = v,
        "w_partial" => r.w_partial = v,
        "w_dense" => r.w_dense = v,
        "file_fusion" => r.file_fusion = v != 0.0,
        "w_bm25_file" => r.w_bm25_file = v,
        "w_dense_file" => r.w_dense_file = v,
        "w_pagerank" => r.w_pagerank = v,
        "w_ppr" => r.w_ppr = v,
        "ppr_seeds" => r.ppr_seeds = v as usize,
        "w_weak" => r.w_weak = v,
        "candidates" => r.candidates = v as usize,
        "max_pinned" => r.max_pinned = v as usize,
        "trivial_prior" => r.trivial_prior = v,
        "prose_prior" => r.prose_prior = v,
        "test_prior" => r.test_prior = v,
        "f_body" => r.fields.body = v,
        "f_symbol" => r.fields.symbol = v,
        "f_path" => r.fields.path = v,
        "f_doc" => r.fields.doc = v,
        _ => bail!(EngineError::Usage(format!("unknown --param `{k}`"))),
    }
    Ok(())
}
