//! `ken eval --across-repos`: every repository indexed into one home (each
//! at the one commit its questions name, or its head when it has none),
//! then every question asked without naming its repository, as a user of a
//! fleet asks. A file counts only in the question's repository; the first
//! hit's repository is `right_repo@1`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ken_core::Filters;

use super::{EvalQuery, EvalRun, outcome_against, symbol_matches};
use crate::repo::OpenRepo;
use crate::route::{Repos, search_all};
use crate::search::SearchRequest;
use crate::{EngineError, EvalMode, Result};

pub(crate) fn run(run: &mut EvalRun<'_>, by_repo: BTreeMap<String, Vec<EvalQuery>>) -> Result<()> {
    let mode = match run.opts.mode {
        EvalMode::Search(m) => m,
        EvalMode::Baseline => {
            return Err(EngineError::bad_input(
                "--across-repos measures Kenning's search; --mode baseline has no routing",
            ));
        }
    };
    if run.opts.at_parent {
        return Err(EngineError::bad_input(
            "--across-repos asks every question of one index per repository; --at-parent needs one per commit",
        ));
    }
    // one commit per repository
    let mut at: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (repo, qs) in &by_repo {
        let mut shas: Vec<Option<String>> = qs.iter().map(|q| q.base_sha.clone()).collect();
        shas.sort();
        shas.dedup();
        if shas.len() > 1 {
            return Err(EngineError::bad_input(format!(
                "--across-repos indexes each repository once, and {repo}'s questions name {} commits",
                shas.len()
            )));
        }
        at.insert(repo.clone(), shas.pop().flatten());
    }
    let mut distractors: Vec<&String> = run
        .opts
        .repos
        .keys()
        .filter(|r| !by_repo.contains_key(*r))
        .collect();
    distractors.sort();
    for r in distractors {
        at.insert(r.clone(), None);
    }
    let mut usable: BTreeMap<String, bool> = BTreeMap::new();
    for (repo, sha) in &at {
        let path = run.opts.repos.get(repo).cloned();
        let qs = by_repo.get(repo).map(Vec::as_slice).unwrap_or_default();
        usable.insert(
            repo.clone(),
            run.index_at(repo, path.as_deref(), sha.as_deref(), qs)?,
        );
    }

    let stores = run.stores.clone();
    let Some(fleet) = stores.fleet()? else {
        return Err(EngineError::bad_input(
            "--across-repos needs a collection index, which this store does not keep",
        ));
    };
    let cache: Mutex<HashMap<String, Arc<OpenRepo>>> = Mutex::new(HashMap::new());
    let home = run.settings.home.clone();
    let open = |key: &str| -> Result<Arc<OpenRepo>> {
        if let Some(r) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
            return Ok(r.clone());
        }
        let r = Arc::new(OpenRepo::open(&home, &*stores, key)?);
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), r.clone());
        Ok(r)
    };
    let allows = |_: &str| true;
    let repos = Repos {
        stores: &*stores,
        fleet: &*fleet,
        open: &open,
        allows: &allows,
    };
    let rank = &run.settings.rank;
    for (repo, qs) in &by_repo {
        if !usable.get(repo).copied().unwrap_or(false) {
            continue; // counted as misses by the failed index step
        }
        for q in qs {
            let ask = |files: bool| {
                search_all(
                    &repos,
                    &SearchRequest {
                        query: q.query.clone(),
                        limit: 10,
                        filters: Filters::default(),
                        files,
                        mode,
                    },
                    rank,
                    run.embedder,
                )
            };
            let started = Instant::now();
            let hits = ask(true)?.hits;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let right = hits.first().map(|h| h.repo == *repo);
            let files: Vec<String> = hits
                .iter()
                .map(|h| format!("{}:{}", h.repo, h.path))
                .collect();
            let gold: Vec<String> = q.gold_files.iter().map(|g| format!("{repo}:{g}")).collect();
            let symbol_rank = if q.gold_symbols.is_empty() {
                None
            } else {
                ask(false)?
                    .hits
                    .iter()
                    .position(|h| {
                        h.repo == *repo
                            && q.gold_symbols.iter().any(|g| symbol_matches(h, g, false))
                    })
                    .map(|p| p + 1)
            };
            let mut o = outcome_against(q, repo, files, &gold, symbol_rank, ms, true);
            o.right_repo = right.or(Some(false));
            run.outcomes.push(o);
        }
    }
    Ok(())
}
