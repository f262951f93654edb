//! Learning the fusion from the repository's own history.
//!
//! Each past commit (before the indexed one, never after it) is a question
//! with a known answer: its message asks, the source files it changed
//! answer. The learner runs retrieval once per such commit, keeps each
//! candidate file's ranks in every list ([`fusion::FileRow`]), and fits the
//! weights of file fusion to them by coordinate ascent on MRR@10. The fit
//! is shrunk toward the defaults by how many questions it saw, checked on
//! questions it did not see (two folds), and kept only when it does at
//! least as well there as the defaults. Deterministic: the same history
//! gives the same weights.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use ken_core::Language;
use ken_store::{CommitRecord, HistoryStore, Store, TunedRanking};

use crate::Result;
use crate::churn::FileChurn;
use crate::fusion::{self, FileRow, FileWeights};
use crate::params::RankParams;
use crate::question::Question;
use crate::search::{self, Mode, SearchEnv, SearchRequest};
use ken_core::is_test_path;

/// How much history the learner reads.
#[derive(Debug, Clone, Copy)]
pub struct TuneOptions {
    /// Most questions (commits) to learn from.
    pub max_queries: usize,
    /// Fewer usable questions than this: nothing is learned.
    pub min_queries: usize,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            max_queries: 150,
            min_queries: 20,
        }
    }
}

/// Weights of the defaults tried, in questions: with `n` questions a fit
/// moves `n / (n + prior)` of the way from the defaults. The one that does
/// best on held-out questions is used (ties: the most cautious).
pub(crate) const PRIORS: &[f64] = &[0.0, 10.0, 25.0, 50.0, 100.0];

/// One question from history and what retrieval made of it.
pub(crate) struct Example {
    pub(crate) rows: Vec<FileRow>,
    pub(crate) gold: HashSet<usize>,
}

/// The constants the learner may move, and the values it tries.
const WEIGHT_GRID: &[f32] = &[0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0];
const PRIOR_GRID: &[f32] = &[0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
const HISTORY_GRID: &[f32] = &[0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5];

pub(crate) fn knobs(with_dense: bool) -> Vec<(&'static str, &'static [f32])> {
    let mut k: Vec<(&str, &[f32])> = vec![
        (
            if with_dense { "w_file_dense" } else { "w_file" },
            WEIGHT_GRID,
        ),
        ("w_bm25_file", WEIGHT_GRID),
        ("w_symbol", WEIGHT_GRID),
        ("prose_prior", PRIOR_GRID),
        ("test_prior", PRIOR_GRID),
    ];
    if with_dense {
        k.insert(2, ("w_dense_file", WEIGHT_GRID));
    }
    k.push(("w_churn", HISTORY_GRID));
    k.push(("w_fixes", HISTORY_GRID));
    k.push(("w_recent", HISTORY_GRID));
    k
}

/// A past commit read as a question.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitQuestion {
    pub sha: String,
    pub message: String,
    /// The indexed source files it changed (tests, docs and deleted files left out).
    pub gold: Vec<String>,
    /// Its committer time: the file history it may see ends before it.
    pub time: i64,
}

/// The questions history (`commits`, as the store holds them) asks, newest
/// first, from commits no newer than `until`; answers are `indexed` files.
pub fn history_questions(
    store: &dyn HistoryStore,
    commits: &[CommitRecord],
    indexed: &HashSet<String>,
    until: Option<i64>,
    max: usize,
) -> Result<Vec<CommitQuestion>> {
    let mut commits: Vec<&CommitRecord> = commits.iter().collect();
    // newest first; commits of the same second in a fixed order, so the
    // same history always asks the same questions
    commits.sort_by(|a, b| {
        b.committer_time
            .cmp(&a.committer_time)
            .then_with(|| a.sha.cmp(&b.sha))
    });
    let eligible: Vec<String> = commits
        .into_iter()
        .filter(|c| until.is_none_or(|t| c.committer_time <= t))
        .filter(|c| c.parents.len() <= 1)
        .filter(|c| {
            let title = c.message.lines().next().unwrap_or("").trim();
            title.split_whitespace().count() >= 3
                && !title.starts_with("Merge ")
                && !title.starts_with("Revert ")
        })
        .map(|c| c.sha.clone())
        .take(max * 6)
        .collect();
    // spread over the recent past: every n-th, newest first
    let step = eligible.len().div_ceil((max * 2).max(1)).max(1);
    let picked: Vec<String> = eligible.into_iter().step_by(step).collect();
    let commits = store.commits(&picked, true)?;
    let mut out = Vec::new();
    for sha in &picked {
        let Some(c) = commits.get(sha) else { continue };
        if c.files.len() > 20 {
            continue; // a sweeping change says little about any one file
        }
        let gold: Vec<String> = c
            .files
            .iter()
            .filter(|(path, status, _)| {
                !status.starts_with('D')
                    && indexed.contains(path)
                    && Language::from_path(path).is_code()
                    && !is_test_path(path)
            })
            .map(|(path, _, _)| path.clone())
            .collect();
        if gold.is_empty() || gold.len() > 5 {
            continue;
        }
        out.push(CommitQuestion {
            sha: sha.clone(),
            message: c.message.trim().to_string(),
            gold,
            time: c.committer_time,
        });
        if out.len() >= max {
            break;
        }
    }
    Ok(out)
}

/// What the learner reads once: the indexed files, the questions history
/// asks, the file history, and the mode the questions are asked in.
pub(crate) struct History {
    pub(crate) paths: Vec<String>,
    pub(crate) questions: Vec<CommitQuestion>,
    pub(crate) churn: FileChurn,
    pub(crate) mode: Mode,
}

impl History {
    pub(crate) fn read(
        store: &dyn Store,
        env: SearchEnv<'_>,
        until: Option<i64>,
        opts: &TuneOptions,
    ) -> Result<History> {
        let paths = crate::repo::indexed_paths(store)?;
        let indexed: HashSet<String> = paths.iter().cloned().collect();
        let commits = store.all_commits()?;
        let questions = history_questions(store, &commits, &indexed, until, opts.max_queries)?;
        let mode = if env.vectors.is_some() && env.embedder.is_some() {
            Mode::Hybrid
        } else {
            Mode::Lexical
        };
        let churn = FileChurn::from_history(&commits, store.commits_touching(&paths)?, until);
        Ok(History {
            paths,
            questions,
            churn,
            mode,
        })
    }
}

/// Learn the fusion of one repository from what `history` read. `None`
/// when history is too short to say anything.
pub fn tune(
    store: &dyn Store,
    base: &RankParams,
    env: SearchEnv<'_>,
    opts: &TuneOptions,
    history: &History,
) -> Result<Option<TunedRanking>> {
    let started = Instant::now();
    let History {
        questions,
        churn,
        mode,
        ..
    } = history;
    let mode = *mode;
    let mut examples = Vec::new();
    let mut with_dense = false;
    for q in questions {
        let e = example(store, env, mode, churn, &q.message, &q.gold, Some(q.time))?;
        with_dense |= e.rows.iter().any(|r| r.ranks[2].is_some());
        examples.push(e);
    }
    let usable = examples.iter().filter(|e| !e.gold.is_empty()).count();
    if usable < opts.min_queries {
        return Ok(None);
    }
    let knobs = knobs(with_dense);
    let defaults: BTreeMap<String, f32> = knobs
        .iter()
        .map(|(name, _)| (name.to_string(), get(base, name)))
        .collect();
    // held out: fit on one half, measure on the other, both ways
    let (even, odd): (Vec<&Example>, Vec<&Example>) = {
        let (a, b): (Vec<_>, Vec<_>) = examples.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        (
            a.into_iter().map(|(_, e)| e).collect(),
            b.into_iter().map(|(_, e)| e).collect(),
        )
    };
    let mut held_default = 0.0;
    let mut held = vec![0.0; PRIORS.len()];
    for (train, test) in [(&even, &odd), (&odd, &even)] {
        let fit = fit(train, base, &knobs, with_dense);
        let size = test.len() as f64;
        held_default += mrr(test, &weights(base, &defaults, with_dense)) * size;
        for (j, prior) in PRIORS.iter().enumerate() {
            let shrunk = shrink(&fit, &defaults, train, *prior);
            held[j] += mrr(test, &weights(base, &shrunk, with_dense)) * size;
        }
    }
    let j = best_prior(&held);
    let n = examples.len() as f64;
    let all: Vec<&Example> = examples.iter().collect();
    let fitted = fit(&all, base, &knobs, with_dense);
    let learned = shrink(&fitted, &defaults, &all, PRIORS[j]);
    let (held_default, held_learned) = (held_default / n, held[j] / n);
    let adopted = held_learned >= held_default;
    let params = if adopted {
        learned.clone()
    } else {
        BTreeMap::new()
    };
    Ok(Some(TunedRanking {
        questions: examples.len(),
        answerable: usable,
        mode: if with_dense { "hybrid" } else { "lexical" }.into(),
        mrr_default: round(mrr(&all, &weights(base, &defaults, with_dense))),
        mrr_learned: round(mrr(&all, &weights(base, &learned, with_dense))),
        heldout_default: round(held_default),
        heldout_learned: round(held_learned),
        adopted,
        prior: PRIORS[j],
        params,
        took_ms: started.elapsed().as_millis() as u64,
        code_questions: questions
            .iter()
            .filter(|q| crate::issue::has_code(&q.message, base.issue_words))
            .count(),
        ..Default::default()
    }))
}

/// One question asked as search asks it: each candidate file's ranks in
/// every list, with the file history as it stood before `time` (its own
/// change and every later one are not known to the question).
pub(crate) fn example(
    store: &dyn Store,
    env: SearchEnv<'_>,
    mode: Mode,
    churn: &FileChurn,
    query: &str,
    gold: &[String],
    time: Option<i64>,
) -> Result<Example> {
    let req = SearchRequest {
        query: query.to_string(),
        limit: 10,
        files: true,
        mode,
        ..Default::default()
    };
    let question = Question::read(query, env.rank.issue_words);
    let ranked = search::rank_candidates(store, &req, &question, env)?;
    let mut rows = search::file_rows(&ranked);
    for r in rows.iter_mut() {
        let n = churn.counts(&r.path, time);
        (r.changes, r.fixes, r.recent) = (n.changes, n.fixes, n.recent);
    }
    let gold: HashSet<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| gold.contains(&r.path))
        .map(|(i, _)| i)
        .collect();
    Ok(Example { rows, gold })
}

/// The index of the best held-out score in `held` (one per [`PRIORS`]);
/// among equals the strongest shrinkage.
pub(crate) fn best_prior(held: &[f64]) -> usize {
    let mut j = 0;
    for (i, h) in held.iter().enumerate() {
        if *h >= held[j] - 1e-9 {
            j = i;
        }
    }
    j
}

/// Coordinate ascent over the knobs' grids, from the defaults; a move must
/// gain, ties keep the current value.
pub(crate) fn fit(
    data: &[&Example],
    base: &RankParams,
    knobs: &[(&str, &[f32])],
    with_dense: bool,
) -> BTreeMap<String, f32> {
    let mut cur: BTreeMap<String, f32> = knobs
        .iter()
        .map(|(name, _)| (name.to_string(), get(base, name)))
        .collect();
    let mut best = mrr(data, &weights(base, &cur, with_dense));
    for _round in 0..3 {
        let mut moved = false;
        for (name, grid) in knobs {
            for &v in *grid {
                let mut trial = cur.clone();
                trial.insert(name.to_string(), v);
                let m = mrr(data, &weights(base, &trial, with_dense));
                if m > best + 1e-9 {
                    best = m;
                    cur = trial;
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    cur
}

/// Move `n / (n + prior)` of the way from the defaults to the fit.
pub(crate) fn shrink(
    fit: &BTreeMap<String, f32>,
    defaults: &BTreeMap<String, f32>,
    data: &[&Example],
    prior: f64,
) -> BTreeMap<String, f32> {
    let n = data.iter().filter(|e| !e.gold.is_empty()).count() as f64;
    let t = if n + prior > 0.0 {
        (n / (n + prior)) as f32
    } else {
        1.0
    };
    fit.iter()
        .map(|(k, v)| {
            let d = defaults.get(k).copied().unwrap_or(*v);
            (k.clone(), round4(d + t * (v - d)))
        })
        .collect()
}

pub(crate) fn weights(
    base: &RankParams,
    set: &BTreeMap<String, f32>,
    with_dense: bool,
) -> FileWeights {
    let mut p = base.clone();
    for (k, v) in set {
        let _ = p.set(k, *v);
    }
    FileWeights::new(&p, with_dense)
}

/// Mean reciprocal rank of the first gold file in the top 10.
pub(crate) fn mrr(data: &[&Example], w: &FileWeights) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let total: f64 = data
        .iter()
        .map(|e| {
            fusion::order(&e.rows, w)
                .into_iter()
                .take(10)
                .position(|i| e.gold.contains(&i))
                .map_or(0.0, |p| 1.0 / (p + 1) as f64)
        })
        .sum();
    total / data.len() as f64
}

pub(crate) fn get(p: &RankParams, name: &str) -> f32 {
    match name {
        "w_file" => p.w_file,
        "w_file_dense" => p.w_file_dense,
        "w_bm25_file" => p.w_bm25_file,
        "w_dense_file" => p.w_dense_file,
        "w_symbol" => p.w_symbol,
        "w_mention" => p.w_mention,
        "prose_prior" => p.prose_prior,
        "test_prior" => p.test_prior,
        "w_churn" => p.w_churn,
        "w_fixes" => p.w_fixes,
        "w_recent" => p.w_recent,
        _ => 0.0,
    }
}

/// For offline study of the learner (`examples/tune_dump.rs`): the
/// questions history asks (up to `max`) and `extra` questions asked of the
/// index as it stands, each with every candidate file's ranks and history
/// counts, as JSON lines.
pub fn dump_examples(
    store: &dyn Store,
    env: SearchEnv<'_>,
    until: Option<i64>,
    max: usize,
    extra: &[(String, String, Vec<String>)],
) -> Result<Vec<serde_json::Value>> {
    let opts = TuneOptions {
        max_queries: max,
        ..TuneOptions::default()
    };
    let history = History::read(store, env, until, &opts)?;
    let mut out = Vec::new();
    let asked = history
        .questions
        .iter()
        .map(|q| {
            (
                "history",
                q.sha.clone(),
                q.message.clone(),
                q.gold.clone(),
                Some(q.time),
            )
        })
        .chain(
            extra
                .iter()
                .map(|(id, q, g)| ("eval", id.clone(), q.clone(), g.clone(), None)),
        );
    for (kind, id, query, gold, time) in asked {
        let e = example(
            store,
            env,
            history.mode,
            &history.churn,
            &query,
            &gold,
            time,
        )?;
        let rows: Vec<serde_json::Value> = e
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "path": r.path, "ranks": r.ranks, "prose": r.prose, "test": r.test,
                    "pinned": r.pinned, "changes": r.changes, "fixes": r.fixes,
                    "recent": r.recent, "pagerank": r.pagerank, "framed": r.framed,
                })
            })
            .collect();
        out.push(serde_json::json!({
            "kind": kind, "id": id, "query": query, "gold": gold, "time": time,
            "code": crate::issue::has_code(&query, env.rank.issue_words),
            "rows": rows,
        }));
    }
    Ok(out)
}

pub(crate) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn round4(x: f32) -> f32 {
    (x * 10000.0).round() / 10000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, file: Option<u32>, bm25: Option<u32>) -> FileRow {
        FileRow {
            ranks: [file, bm25, None, None, None, None],
            ..FileRow::new(path)
        }
    }

    /// Questions whose answer the chunk list ranks first and the whole-file
    /// list ranks third: the fit must learn to trust the chunk list.
    fn chunk_list_knows() -> Vec<Example> {
        (0..40)
            .map(|i| Example {
                rows: vec![
                    row(&format!("a{i}"), Some(1), Some(3)),
                    row(&format!("b{i}"), Some(2), Some(2)),
                    row(&format!("gold{i}"), Some(3), Some(1)),
                ],
                gold: HashSet::from([2]),
            })
            .collect()
    }

    #[test]
    fn the_fit_learns_which_list_knows_and_shrinks_toward_the_defaults() {
        let data = chunk_list_knows();
        let refs: Vec<&Example> = data.iter().collect();
        let base = RankParams::default();
        let knobs = knobs(false);
        let defaults: BTreeMap<String, f32> = knobs
            .iter()
            .map(|(n, _)| (n.to_string(), get(&base, n)))
            .collect();
        assert!(mrr(&refs, &weights(&base, &defaults, false)) < 0.5);
        let fit = fit(&refs, &base, &knobs, false);
        assert!((mrr(&refs, &weights(&base, &fit, false)) - 1.0).abs() < 1e-9);
        assert!(fit["w_bm25_file"] > fit["w_file"]);
        // 40 questions against a prior of 50: a little less than half way
        let shrunk = shrink(&fit, &defaults, &refs, 50.0);
        let t = 40.0 / 90.0;
        let expect = base.w_file + t * (fit["w_file"] - base.w_file);
        assert!((shrunk["w_file"] - expect).abs() < 1e-3);
        // the fit is deterministic
        assert_eq!(fit, super::fit(&refs, &base, &knobs, false));
    }

    /// Asked for no questions, history asks none (it used to divide by
    /// zero); asked for some, it asks the commits that changed code.
    #[test]
    fn history_asks_no_more_questions_than_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ken_store::EmbeddedStore::open_for_writing(dir.path()).unwrap();
        let commits: Vec<CommitRecord> = (0..4)
            .map(|i| CommitRecord {
                sha: format!("{i:040x}"),
                author_name: "Ada".into(),
                author_email: "ada@example.com".into(),
                author_time: 100 + i,
                committer_time: 100 + i,
                summary: format!("fix the parser case {i}"),
                message: format!("fix the parser case {i}"),
                parents: vec![],
                files: vec![("src/parse.py".into(), "M".into(), None)],
            })
            .collect();
        store.add_commits(&commits).unwrap();
        let indexed = HashSet::from(["src/parse.py".to_string()]);
        let ask = |max| history_questions(&store, &commits, &indexed, None, max).unwrap();
        assert!(ask(0).is_empty());
        let two = ask(2);
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].gold, ["src/parse.py"]);
        assert_eq!(two[0].message, "fix the parser case 3", "newest first");
    }

    #[test]
    fn a_fit_without_signal_keeps_the_defaults() {
        // every file in every list at the same ranks: nothing can gain
        let data: Vec<Example> = (0..30)
            .map(|i| Example {
                rows: vec![
                    row(&format!("g{i}"), Some(1), Some(1)),
                    row("x", Some(2), Some(2)),
                ],
                gold: HashSet::from([0]),
            })
            .collect();
        let refs: Vec<&Example> = data.iter().collect();
        let base = RankParams::default();
        let fit = fit(&refs, &base, &knobs(false), false);
        assert_eq!(fit["w_file"], base.w_file);
        assert_eq!(fit["w_bm25_file"], base.w_bm25_file);
    }
}
