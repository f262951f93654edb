//! `ken eval --across-repos`: every repository indexed into one home (a
//! repository with questions at the first commit they name, one without at
//! its head), then every question asked without naming its repository, as
//! a user of a fleet asks. A file counts only in the question's repository;
//! the first hit's repository is `right_repo@1`.
//!
//! A repository whose questions name several commits (SWE-bench's, one
//! commit per issue) is moved through them oldest first, as a push moves
//! it, while the others stay where they are. Each question is also asked
//! of its own repository by name on the same index: the per-repository
//! figure of the same run (`named`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ken_core::Filters;

use super::{EvalQuery, EvalRun, commits_in_order, outcome_against, symbol_matches};
use crate::repo::OpenRepo;
use crate::route::{Repos, search_all};
use crate::search::SearchRequest;
use crate::{EngineError, EvalMode, Mode, Result};

const NO_COLLECTION: &str =
    "--across-repos needs a collection index, which this store does not keep";

/// Questions asked at one commit of their repository (None: its head).
type AtCommit = (Option<String>, Vec<EvalQuery>);

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
            "--across-repos asks each question at its base commit; --at-parent is not supported with it",
        ));
    }
    if run.stores.fleet()?.is_none() {
        return Err(EngineError::bad_input(NO_COLLECTION));
    }
    // each repository's questions by commit, oldest first
    let mut plan: Vec<(String, Vec<AtCommit>)> = Vec::new();
    for (repo, mut qs) in by_repo {
        if let Some(n) = run.opts.max_queries {
            qs.truncate(n);
        }
        let path = run.opts.repos.get(&repo).cloned();
        plan.push((repo, commits_in_order(path.as_deref(), qs, false)));
    }
    // every repository in the home before the first question: those with
    // questions at their first commit, the others (distractors) at their head
    let mut usable: HashMap<String, bool> = HashMap::new();
    for (repo, groups) in &plan {
        let Some((sha, qs)) = groups.first() else {
            continue;
        };
        usable.insert(repo.clone(), index_at(run, repo, sha.as_deref(), qs)?);
    }
    let mut distractors: Vec<String> = run
        .opts
        .repos
        .keys()
        .filter(|r| !plan.iter().any(|(q, _)| q == *r))
        .cloned()
        .collect();
    distractors.sort();
    for r in &distractors {
        let path = run.opts.repos.get(r).cloned();
        run.index_at(r, path.as_deref(), None, &[])?;
    }

    let mut asker = Asker::new(run, mode)?;
    for (repo, groups) in &plan {
        for (i, (sha, qs)) in groups.iter().enumerate() {
            if i > 0 {
                let ok = index_at(asker.run, repo, sha.as_deref(), qs)?;
                usable.insert(repo.clone(), ok);
                asker.moved(repo)?;
            }
            if !usable.get(repo).copied().unwrap_or(false) {
                continue; // counted as misses by the failed index step
            }
            asker.ask(repo, qs)?;
        }
    }
    Ok(())
}

/// [`EvalRun::index_at`] from the path `--repo` gave; the questions of a
/// failed step count as misses on both figures.
fn index_at(
    run: &mut EvalRun<'_>,
    repo: &str,
    sha: Option<&str>,
    qs: &[EvalQuery],
) -> Result<bool> {
    let path = run.opts.repos.get(repo).cloned();
    let before = run.outcomes.len();
    let ok = run.index_at(repo, path.as_deref(), sha, qs)?;
    let failed: Vec<_> = run.outcomes[before..].to_vec();
    run.named.extend(failed);
    Ok(ok)
}

/// Asks questions of the whole home, and of their own repository by name.
struct Asker<'r, 'a> {
    run: &'r mut EvalRun<'a>,
    mode: Mode,
    fleet: Arc<dyn ken_store::Fleet>,
    open: Mutex<HashMap<String, Arc<OpenRepo>>>,
}

impl<'r, 'a> Asker<'r, 'a> {
    fn new(run: &'r mut EvalRun<'a>, mode: Mode) -> Result<Self> {
        // opened after the first index steps, which wrote to it
        let fleet = run
            .stores
            .fleet()?
            .ok_or_else(|| EngineError::bad_input(NO_COLLECTION))?;
        Ok(Asker {
            run,
            mode,
            fleet,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// `repo` was indexed at another commit: its open index and the
    /// collection's view are read again.
    fn moved(&mut self, repo: &str) -> Result<()> {
        let key = self.run.stores.key_of(repo);
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        if let Some(f) = self.run.stores.fleet()? {
            self.fleet = f;
        }
        Ok(())
    }

    fn ask(&mut self, repo: &str, qs: &[EvalQuery]) -> Result<()> {
        let run = &*self.run;
        let stores = run.stores.clone();
        let home = run.settings.home.clone();
        let open = |key: &str| -> Result<Arc<OpenRepo>> {
            let mut cache = self.open.lock().unwrap_or_else(|e| e.into_inner());
            // (as the engine does: reopened once a writer has committed)
            if let Some(r) = cache.get(key).filter(|r| r.is_current()) {
                return Ok(r.clone());
            }
            let r = Arc::new(OpenRepo::open(&home, &*stores, key)?);
            cache.insert(key.to_string(), r.clone());
            Ok(r)
        };
        let allows = |_: &str| true;
        let repos = Repos {
            stores: &*stores,
            fleet: &*self.fleet,
            open: &open,
            allows: &allows,
        };
        let rank = &run.settings.rank;
        let mut outcomes = Vec::with_capacity(qs.len());
        for q in qs {
            let ask = |files: bool| {
                search_all(
                    &repos,
                    &SearchRequest {
                        query: q.query.clone(),
                        limit: 10,
                        filters: Filters::default(),
                        files,
                        mode: self.mode,
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
            outcomes.push(o);
        }
        // the same questions of their repository by name, on the same index
        let run = &mut *self.run;
        let before = run.outcomes.len();
        run.ask(repo, qs)?;
        let named: Vec<_> = run.outcomes.drain(before..).collect();
        run.named.extend(named);
        run.outcomes.extend(outcomes);
        Ok(())
    }
}
