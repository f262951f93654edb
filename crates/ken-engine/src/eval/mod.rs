//! Retrieval metrics over JSONL query sets (docs/eval.md).
//!
//! Each query is run twice: once for files (`--files`, top 10 distinct files:
//! recall, accuracy, precision, MRR) and once for chunks (top 10: symbol
//! hit@1 and symbol MRR where gold symbols are given).

mod across;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use ken_core::{Filters, Hit};
use ken_embed::Embedder;
use ken_source::GitRepo;
use ken_store::{LexicalQuery, Store, StoreProvider};
use serde::{Deserialize, Serialize};

use crate::index::{IndexRequest, NoProgress};
use crate::issue_template::IssueTemplate;
use crate::question::Question;
use crate::search::{Mode, SearchEnv, SearchRequest, search_store};
use crate::semantic;
use crate::{EngineError, Result, Settings, index};

#[derive(Debug, Clone, Deserialize)]
pub struct EvalQuery {
    pub id: String,
    pub repo: String,
    pub base_sha: Option<String>,
    pub parent_sha: Option<String>,
    pub query: String,
    #[serde(default)]
    pub gold_files: Vec<String>,
    #[serde(default)]
    pub gold_symbols: Vec<GoldSymbol>,
    pub mentions_path: Option<bool>,
    pub mentions_stem: Option<bool>,
    pub mentions_symbol: Option<bool>,
    /// Who made the change (commit sets): the truth for "who should fix this".
    pub author_name: Option<String>,
    pub author_email: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GoldSymbol {
    pub path: String,
    #[serde(default)]
    pub qualname: String,
    pub start: Option<u32>,
    pub end: Option<u32>,
    pub start_at_base: Option<u32>,
    pub end_at_base: Option<u32>,
}

/// How queries are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalMode {
    /// `ken search` with these signals.
    Search(Mode),
    /// Plain whole-file BM25 on file text only: the reference baseline.
    Baseline,
}

impl Default for EvalMode {
    fn default() -> Self {
        EvalMode::Search(Mode::Hybrid)
    }
}

#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    pub file: PathBuf,
    /// Repository name → local path (working tree or git directory).
    pub repos: HashMap<String, PathBuf>,
    pub at_parent: bool,
    pub mode: EvalMode,
    pub per_query: Option<PathBuf>,
    /// Only the first N queries of each repository (quick checks).
    pub max_queries: Option<usize>,
    /// Also evaluate `ken who` against each query's commit author.
    pub who: bool,
    /// Expand each query with the repository's vocabulary (as offline `ken ask` does).
    pub expand: bool,
    /// Ranking parameters for this run, `KEY=VALUE` each, in place of the
    /// engine's.
    pub params: Vec<String>,
    /// Ask every question of every repository at once, without naming its
    /// repository (across.rs); every `repos` entry is indexed, those
    /// without questions too.
    pub across_repos: bool,
}

/// Metrics of a set of queries.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Metrics {
    pub queries: usize,
    #[serde(rename = "mrr@10")]
    pub mrr10: f64,
    #[serde(rename = "recall@1")]
    pub recall1: f64,
    #[serde(rename = "recall@5")]
    pub recall5: f64,
    #[serde(rename = "recall@10")]
    pub recall10: f64,
    #[serde(rename = "acc@5")]
    pub acc5: f64,
    #[serde(rename = "p@5")]
    pub p5: f64,
    #[serde(rename = "symbol_hit@1", skip_serializing_if = "Option::is_none")]
    pub symbol_hit1: Option<f64>,
    #[serde(rename = "symbol_mrr@10", skip_serializing_if = "Option::is_none")]
    pub symbol_mrr10: Option<f64>,
    /// With `--across-repos`: the first hit is in the question's repository.
    #[serde(rename = "right_repo@1", skip_serializing_if = "Option::is_none")]
    pub right_repo1: Option<f64>,
    /// Share of questions whose `ken ask` context (the code step's chunks
    /// at the default `-n`, packed within `context_tokens`) holds a gold
    /// region: a gold symbol's lines, or any line of a gold file that names
    /// no symbol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_recall: Option<f64>,
    /// Distinct files in that context, on average.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_files: Option<f64>,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub overall: Metrics,
    pub repos: BTreeMap<String, Metrics>,
    /// Queries that name none of their gold files, stems or symbols.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_hints: Option<Metrics>,
    pub mode: String,
    /// "Who should fix this" (with `--who`): `ken who` and two baselines.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub who: BTreeMap<String, WhoMetrics>,
    /// Index steps that failed; their queries count as misses above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedStep>,
    /// With `--across-repos`: the same questions asked of their own
    /// repository by name, on the same indexes in the same run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named: Option<NamedFigures>,
}

/// The per-repository figures of an `--across-repos` run.
#[derive(Debug, Clone, Serialize)]
pub struct NamedFigures {
    pub overall: Metrics,
    pub repos: BTreeMap<String, Metrics>,
    /// The across-repository MRR@10 over the named one (overall).
    #[serde(rename = "mrr@10_ratio")]
    pub mrr10_ratio: f64,
}

/// An index step that failed, and the queries it left unanswered.
#[derive(Debug, Clone, Serialize)]
pub struct FailedStep {
    pub repo: String,
    pub commit: Option<String>,
    pub queries: usize,
    pub error: String,
}

/// Rank of the true author in a ranking of people, per method.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WhoScores {
    #[serde(rename = "hit@1")]
    pub hit1: f64,
    #[serde(rename = "hit@3")]
    pub hit3: f64,
    pub mrr: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct WhoMetrics {
    pub queries: usize,
    /// `ken who <query>`.
    pub ken_who: WhoScores,
    /// The repository's most active authors (by commits).
    pub repo_top_authors: WhoScores,
    /// The most active authors of the gold files (an oracle that knows the files).
    pub gold_file_authors: WhoScores,
    /// Queries whose author has a commit at or before the indexed commit:
    /// the only ones any method could answer.
    pub answerable: usize,
    /// The three methods on those queries only.
    pub on_answerable: Option<Box<WhoMetrics>>,
}

fn who_scores(ranks: &[Option<usize>]) -> WhoScores {
    let n = ranks.len().max(1) as f64;
    WhoScores {
        hit1: round(ranks.iter().filter(|r| **r == Some(1)).count() as f64 / n),
        hit3: round(ranks.iter().filter(|r| r.is_some_and(|r| r <= 3)).count() as f64 / n),
        mrr: round(
            ranks
                .iter()
                .map(|r| r.map(|r| 1.0 / r as f64).unwrap_or(0.0))
                .sum::<f64>()
                / n,
        ),
    }
}

/// One query's outcome (for `--per-query`).
#[derive(Debug, Clone, Serialize)]
pub struct QueryOutcome {
    pub id: String,
    pub repo: String,
    pub query: String,
    pub files: Vec<String>,
    pub gold_files: Vec<String>,
    pub rr: f64,
    pub symbol_rank: Option<usize>,
    pub ms: f64,
    /// Why the query could not be run (its index step failed); it counts
    /// as a miss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    hinted: bool,
    #[serde(skip)]
    recall: [f64; 3],
    #[serde(skip)]
    acc5: bool,
    #[serde(skip)]
    p5: f64,
    #[serde(skip)]
    has_symbols: bool,
    /// With `--across-repos`: the first hit's repository is the question's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_repo: Option<bool>,
    /// The context `ken ask` would give its model holds a gold region
    /// (context.rs; see `Metrics::context_recall`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_hit: Option<bool>,
    /// Distinct files in that context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_files: Option<usize>,
    /// With `--who`: where the query's author is in each list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub who: Option<WhoRanks>,
}

pub fn read_queries(path: &Path) -> Result<Vec<EvalQuery>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EngineError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: EvalQuery = serde_json::from_str(line).map_err(|e| {
            EngineError::bad_input(format!(
                "{}:{}: not an eval query: {e}",
                path.display(),
                i + 1
            ))
        })?;
        out.push(q);
    }
    Ok(out)
}

/// Run the evaluation. `log` receives one line per indexing step.
pub fn eval(
    settings: &Settings,
    opts: &EvalOptions,
    log: &dyn Fn(&str),
    embedder: Option<&dyn Embedder>,
) -> Result<EvalReport> {
    let queries = read_queries(&opts.file)?;
    let embedder = match opts.mode {
        EvalMode::Search(Mode::Lexical) | EvalMode::Baseline => None,
        EvalMode::Search(_) => embedder,
    };
    if embedder.is_none() && opts.mode == EvalMode::Search(Mode::Semantic) {
        return Err(EngineError::bad_input(
            "--mode semantic needs an embedding model (see `ken model install`)",
        ));
    }
    let mut run = EvalRun {
        settings,
        opts,
        log,
        embedder,
        stores: settings.stores()?,
        outcomes: Vec::new(),
        named: Vec::new(),
        failed: Vec::new(),
        who_ranks: BTreeMap::new(),
        docs_fits: HashMap::new(),
    };
    // Group by repository, then by the commit to index, in commit order.
    let mut by_repo: BTreeMap<String, Vec<EvalQuery>> = BTreeMap::new();
    for q in queries {
        by_repo.entry(q.repo.clone()).or_default().push(q);
    }
    if opts.across_repos {
        across::run(&mut run, by_repo)?;
        return run.report();
    }
    for (repo, mut qs) in by_repo {
        if let Some(n) = opts.max_queries {
            qs.truncate(n);
        }
        let path = opts.repos.get(&repo).cloned();
        for (sha, qs) in commits_in_order(path.as_deref(), qs, opts.at_parent) {
            if run.index_at(&repo, path.as_deref(), sha.as_deref(), &qs)? {
                run.ask(&repo, &qs)?;
            }
        }
    }
    run.report()
}

/// The queries of one repository grouped by the commit each is asked at,
/// oldest commit first (an unknown commit first: its index step reports
/// the error).
fn commits_in_order(
    path: Option<&Path>,
    qs: Vec<EvalQuery>,
    at_parent: bool,
) -> Vec<(Option<String>, Vec<EvalQuery>)> {
    let mut groups: BTreeMap<Option<String>, Vec<EvalQuery>> = BTreeMap::new();
    for q in qs {
        let sha = if at_parent {
            q.parent_sha.clone().or(q.base_sha.clone())
        } else {
            q.base_sha.clone()
        };
        groups.entry(sha).or_default().push(q);
    }
    let mut ordered: Vec<(Option<String>, Vec<EvalQuery>, i64)> = groups
        .into_iter()
        .map(|(sha, qs)| {
            let time = match (path, &sha) {
                (Some(p), Some(s)) => GitRepo::open(p)
                    .and_then(|r| r.resolve(s))
                    .map_or(0, |c| c.time),
                _ => 0,
            };
            (sha, qs, time)
        })
        .collect();
    ordered.sort_by_key(|(_, _, t)| *t);
    ordered.into_iter().map(|(sha, qs, _)| (sha, qs)).collect()
}

/// One evaluation under way: what it was asked, and what it found so far.
pub(crate) struct EvalRun<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) opts: &'a EvalOptions,
    pub(crate) log: &'a dyn Fn(&str),
    pub(crate) embedder: Option<&'a dyn Embedder>,
    pub(crate) stores: Arc<dyn StoreProvider>,
    pub(crate) outcomes: Vec<QueryOutcome>,
    /// With `--across-repos`: the outcomes of the questions asked of their
    /// repository by name.
    pub(crate) named: Vec<QueryOutcome>,
    pub(crate) failed: Vec<FailedStep>,
    who_ranks: BTreeMap<String, Vec<WhoRanks>>,
    /// Per repository, question id → what the documentation taught without
    /// that question's page (index::cross_fit_questions).
    pub(crate) docs_fits: HashMap<String, HashMap<String, Option<ken_store::DocsRanking>>>,
}

impl EvalRun<'_> {
    /// The index of `repo` at `sha`: indexed from `path` when given (false
    /// when that fails: its queries are counted as misses), else the one
    /// already there, which must be at `sha`.
    pub(crate) fn index_at(
        &mut self,
        repo: &str,
        path: Option<&Path>,
        sha: Option<&str>,
        qs: &[EvalQuery],
    ) -> Result<bool> {
        let Some(p) = path else {
            let state = self.stores.open(repo)?.state()?;
            if sha.is_some() && state.commit.as_deref() != sha {
                return Err(EngineError::bad_input(format!(
                    "{repo}: the index is not at {}; give its path with --repo {repo}=PATH",
                    sha.unwrap_or_default()
                )));
            }
            // an index the run did not make: used, never written
            self.docs_cross_fit(repo, qs, false)?;
            return Ok(true);
        };
        let started = Instant::now();
        let indexed = index::index(
            self.settings,
            &IndexRequest {
                source: p.display().to_string(),
                rev: sha.map(str::to_string),
                name: Some(repo.to_string()),
                branch: None,
                no_embed: self.embedder.is_none(),
                limits: Default::default(),
                scip: None,
            },
            &NoProgress,
            self.embedder,
        );
        let r = match indexed {
            Ok(r) => r,
            // another writer on the index: the run cannot go on
            Err(e) if e.kind() == crate::ErrorKind::Busy => return Err(e),
            Err(e) => {
                let error = e.to_string();
                (self.log)(&format!(
                    "{repo} @ {}: index step failed, {} queries counted as misses: {error}",
                    sha.unwrap_or("HEAD"),
                    qs.len()
                ));
                self.failed.push(FailedStep {
                    repo: repo.to_string(),
                    commit: sha.map(str::to_string),
                    queries: qs.len(),
                    error: error.clone(),
                });
                self.outcomes
                    .extend(qs.iter().map(|q| failed_query(repo, q, &error)));
                return Ok(false);
            }
        };
        self.docs_cross_fit(repo, qs, true)?;
        (self.log)(&format!(
            "{repo} @ {}: {} files, {} processed in {:.1}s",
            sha.map(|s| &s[..s.len().min(10)]).unwrap_or("HEAD"),
            r.files,
            r.processed,
            started.elapsed().as_secs_f64()
        ));
        Ok(true)
    }

    /// With `learned_docs` on: what the documentation taught, never from
    /// `qs` (index::cross_fit_questions), per question; stored in the
    /// index too when `store` (an index this run made), for the searches
    /// across repositories.
    fn docs_cross_fit(&mut self, repo: &str, qs: &[EvalQuery], store: bool) -> Result<()> {
        let rank = &self.settings.rank;
        if qs.is_empty() || !rank.learned || !rank.learned_docs {
            return Ok(());
        }
        let questions: Vec<String> = qs.iter().map(|q| q.query.clone()).collect();
        let mut s = if store {
            self.stores.open_for_writing(repo)?
        } else {
            self.stores.open(repo)?
        };
        let fit =
            index::cross_fit_questions(self.settings, &mut *s, self.embedder, &questions, store)?;
        let per_question = self.docs_fits.entry(repo.to_string()).or_default();
        per_question.clear();
        if let Some(fit) = fit {
            for (i, q) in qs.iter().enumerate() {
                per_question.insert(q.id.clone(), fit.for_question(i).cloned());
            }
        }
        Ok(())
    }

    /// Asks `qs` of the index of `repo` as it stands (and, with `who`, who
    /// should know each).
    pub(crate) fn ask(&mut self, repo: &str, qs: &[EvalQuery]) -> Result<()> {
        let settings = self.settings;
        let opts = self.opts;
        let store = self.stores.open(repo)?;
        let store: &dyn Store = &*store;
        let state = store.state()?;
        let vectors = match self.embedder {
            Some(e) => semantic::load_vectors(store, e.id(), &state)?,
            None => None,
        };
        let rank = settings.rank.for_repo(&state);
        // the constants themselves serve questions what was learned
        // does not fit (RankParams::for_question)
        let churn = if rank.uses_history() || settings.rank.uses_history() {
            Some(crate::repo::load_churn(store)?)
        } else {
            None
        };
        let template = IssueTemplate::load(store)?;
        let env = SearchEnv {
            churn: churn.as_ref(),
            rank: &rank,
            embedder: self.embedder,
            vectors: vectors.as_ref(),
            identities: None,
            template: Some(&template),
        };
        let mut who_of: HashMap<&str, WhoRanks> = HashMap::new();
        if opts.who {
            let entry = self.who_ranks.entry(repo.to_string()).or_default();
            // every commit author observed: read once per indexed commit
            let ids = crate::people::observed_identities(&settings.home, store, state.commit_time)?;
            for q in qs {
                if let Some(r) = who_query(store, &ids, q, env)? {
                    entry.push(r);
                    who_of.insert(q.id.as_str(), r);
                }
            }
        }
        // what was learned, with each question's own documentation part
        // (docs_cross_fit); `for_question` reads nothing else of the state
        let mut fold = ken_store::IndexState {
            ranking: state.ranking.clone(),
            ..Default::default()
        };
        for q in qs {
            let question = Question::read(&q.query, settings.rank.issue_words);
            let rank = match self.docs_fits.get(repo).and_then(|m| m.get(&q.id)) {
                Some(docs) => {
                    if let Some(r) = fold.ranking.as_mut() {
                        r.docs = docs.clone();
                    }
                    settings.rank.for_question(&fold, &question)
                }
                None => settings.rank.for_question(&state, &question),
            };
            let env = SearchEnv { rank: &rank, ..env };
            let asked = Asked {
                q,
                question: &question,
            };
            let mut outcome = run_query(
                opts.expand,
                env,
                store,
                repo,
                asked,
                opts.mode,
                opts.at_parent,
            )?;
            if let EvalMode::Search(mode) = opts.mode {
                let (hit, files) =
                    context_outcome(settings, env, store, repo, asked, mode, opts.at_parent)?;
                outcome.context_hit = Some(hit);
                outcome.context_files = Some(files);
            }
            outcome.who = who_of.get(q.id.as_str()).copied();
            self.outcomes.push(outcome);
        }
        Ok(())
    }

    /// The metrics over every query, per repository and overall (and the
    /// per-query lines, when asked for).
    fn report(self) -> Result<EvalReport> {
        let outcomes = &self.outcomes;
        if let Some(path) = &self.opts.per_query {
            let mut text = String::new();
            for o in outcomes {
                text.push_str(&serde_json::to_string(o).unwrap_or_default());
                text.push('\n');
            }
            std::fs::write(path, text).map_err(|e| {
                EngineError::bad_input(format!("cannot write {}: {e}", path.display()))
            })?;
        }
        let repos = per_repo(outcomes);
        let all: Vec<&QueryOutcome> = outcomes.iter().collect();
        let overall = metrics(&all);
        let named = (!self.named.is_empty()).then(|| {
            let every: Vec<&QueryOutcome> = self.named.iter().collect();
            let m = metrics(&every);
            NamedFigures {
                mrr10_ratio: if m.mrr10 > 0.0 {
                    round(overall.mrr10 / m.mrr10)
                } else {
                    0.0
                },
                overall: m,
                repos: per_repo(&self.named),
            }
        });
        let unhinted: Vec<&QueryOutcome> = outcomes.iter().filter(|o| !o.hinted).collect();
        let has_hint_fields = unhinted.len() < outcomes.len();
        let mut who = BTreeMap::new();
        let mut every: Vec<WhoRanks> = Vec::new();
        for (repo, ranks) in &self.who_ranks {
            every.extend(ranks.iter().copied());
            who.insert(repo.clone(), who_metrics(ranks));
        }
        if !who.is_empty() {
            who.insert("overall".to_string(), who_metrics(&every));
        }
        Ok(EvalReport {
            who,
            failed: self.failed,
            overall,
            named,
            repos,
            no_hints: has_hint_fields.then(|| metrics(&unhinted)),
            mode: match self.opts.mode {
                EvalMode::Search(Mode::Hybrid) => "hybrid".into(),
                EvalMode::Search(Mode::Lexical) => "lexical".into(),
                EvalMode::Search(Mode::Semantic) => "semantic".into(),
                EvalMode::Baseline => "baseline".into(),
            },
        })
    }
}

/// Metrics per repository, by name.
fn per_repo(outcomes: &[QueryOutcome]) -> BTreeMap<String, Metrics> {
    let mut names: Vec<&str> = outcomes.iter().map(|o| o.repo.as_str()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let subset: Vec<&QueryOutcome> = outcomes.iter().filter(|o| o.repo == name).collect();
            (name.to_string(), metrics(&subset))
        })
        .collect()
}

/// A query that could not be run: a miss on every measure.
fn failed_query(repo: &str, q: &EvalQuery, error: &str) -> QueryOutcome {
    QueryOutcome {
        id: q.id.clone(),
        repo: repo.to_string(),
        query: q.query.clone(),
        files: Vec::new(),
        gold_files: q.gold_files.clone(),
        rr: 0.0,
        symbol_rank: None,
        ms: 0.0,
        error: Some(error.to_string()),
        hinted: q.mentions_path.unwrap_or(false)
            || q.mentions_stem.unwrap_or(false)
            || q.mentions_symbol.unwrap_or(false),
        recall: [0.0; 3],
        acc5: false,
        p5: 0.0,
        has_symbols: !q.gold_symbols.is_empty(),
        right_repo: None,
        context_hit: None,
        context_files: None,
        who: None,
    }
}

/// A query of the set and the question read from it.
#[derive(Clone, Copy)]
struct Asked<'a> {
    q: &'a EvalQuery,
    question: &'a Question,
}

fn run_query(
    expand: bool,
    env: SearchEnv<'_>,
    store: &dyn Store,
    repo: &str,
    Asked { q, question }: Asked<'_>,
    mode: EvalMode,
    at_parent: bool,
) -> Result<QueryOutcome> {
    let started = Instant::now();
    let files: Vec<String> = match mode {
        EvalMode::Baseline => {
            // Like the reference baseline: source files only, file text only.
            let lq = LexicalQuery {
                text: q.query.clone(),
                limit: 10,
                languages: ken_core::Language::ALL
                    .into_iter()
                    .filter(|l| l.is_code())
                    .collect(),
                weights: ken_store::FieldWeights {
                    body: 1.0,
                    symbol: 0.0,
                    path: 0.0,
                    doc: 0.0,
                    qtf: 0.0,
                },
                ..Default::default()
            };
            store
                .search_files(&lq)?
                .into_iter()
                .map(|h| h.path)
                .collect()
        }
        EvalMode::Search(m) => {
            let mut questions = vec![question.clone()];
            if expand {
                let extra = crate::expand::vocabulary_expansion(
                    std::iter::once(store as &dyn Store),
                    &q.query,
                    8,
                );
                if !extra.is_empty() {
                    let expanded = format!("{} {}", q.query, extra.join(" "));
                    questions.push(Question::read(&expanded, env.rank.issue_words));
                }
            }
            // several queries: files fused by reciprocal rank
            let mut lists = Vec::new();
            for question in &questions {
                let req = SearchRequest {
                    query: question.text.clone(),
                    limit: 10,
                    filters: Filters::default(),
                    files: true,
                    mode: m,
                };
                let hits = search_store(store, repo, None, &req, question, env)?.hits;
                lists.push(hits.into_iter().map(|h| (h.path, (), h.pinned)).collect());
            }
            crate::fusion::fuse_lists(lists, env.rank.k)
                .into_iter()
                .map(|(p, ())| p)
                .take(10)
                .collect()
        }
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let symbol_rank = if q.gold_symbols.is_empty() || mode == EvalMode::Baseline {
        None
    } else {
        let req = SearchRequest {
            query: q.query.clone(),
            limit: 10,
            filters: Filters::default(),
            files: false,
            mode: match mode {
                EvalMode::Search(m) => m,
                EvalMode::Baseline => Mode::Lexical,
            },
        };
        let hits = search_store(store, repo, None, &req, question, env)?.hits;
        hits.iter()
            .position(|h| {
                q.gold_symbols
                    .iter()
                    .any(|g| symbol_matches(h, g, at_parent))
            })
            .map(|p| p + 1)
    };
    Ok(outcome(
        q,
        repo,
        files,
        symbol_rank,
        ms,
        mode != EvalMode::Baseline,
    ))
}

/// Whether the context `ken ask`'s code step would build for the question
/// holds a gold region, and how many files it holds.
fn context_outcome(
    settings: &Settings,
    env: SearchEnv<'_>,
    store: &dyn Store,
    repo: &str,
    Asked { q, question }: Asked<'_>,
    mode: Mode,
    at_parent: bool,
) -> Result<(bool, usize)> {
    let share = settings.context_file_share;
    let req = SearchRequest {
        query: q.query.clone(),
        limit: if share < 1.0 {
            crate::context::ASK_LIMIT * crate::context::POOL_FACTOR
        } else {
            crate::context::ASK_LIMIT
        },
        filters: Filters::default(),
        files: false,
        mode,
    };
    let hits = search_store(store, repo, None, &req, question, env)?.hits;
    let context = crate::context::build(store, hits, &q.query, share, settings.context_tokens)?;
    let files: std::collections::HashSet<&str> =
        context.blocks.iter().map(|b| b.path.as_str()).collect();
    Ok((holds_gold(&context, q, at_parent), files.len()))
}

/// A block of `context` overlaps a gold region: a gold symbol's lines (at
/// the parent's or the base's lines), or any line of a gold file no gold
/// symbol is in.
fn holds_gold(context: &ken_llm::Context, q: &EvalQuery, at_parent: bool) -> bool {
    q.gold_files.iter().any(|g| {
        let regions: Vec<(u32, u32)> = q
            .gold_symbols
            .iter()
            .filter(|s| &s.path == g)
            .filter_map(|s| {
                if at_parent {
                    Some((s.start?, s.end?))
                } else {
                    Some((s.start_at_base.or(s.start)?, s.end_at_base.or(s.end)?))
                }
            })
            .collect();
        context.blocks.iter().filter(|b| &b.path == g).any(|b| {
            regions.is_empty()
                || regions
                    .iter()
                    .any(|&(start, end)| b.start_line <= end && b.end_line >= start)
        })
    })
}

/// A query's measures from the files it ranked (the first ten count) and
/// the rank of its first gold symbol.
pub(crate) fn outcome(
    q: &EvalQuery,
    repo: &str,
    files: Vec<String>,
    symbol_rank: Option<usize>,
    ms: f64,
    symbols_ranked: bool,
) -> QueryOutcome {
    outcome_against(
        q,
        repo,
        files,
        &q.gold_files,
        symbol_rank,
        ms,
        symbols_ranked,
    )
}

/// [`outcome`] against gold files named as `files` are.
pub(crate) fn outcome_against(
    q: &EvalQuery,
    repo: &str,
    files: Vec<String>,
    gold: &[String],
    symbol_rank: Option<usize>,
    ms: f64,
    symbols_ranked: bool,
) -> QueryOutcome {
    let found_in = |k: usize| {
        gold.iter()
            .filter(|g| files.iter().take(k).any(|f| f == *g))
            .count()
    };
    let recall = |k: usize| {
        if gold.is_empty() {
            0.0
        } else {
            found_in(k) as f64 / gold.len() as f64
        }
    };
    let rr = files
        .iter()
        .take(10)
        .position(|f| gold.contains(f))
        .map(|p| 1.0 / (p + 1) as f64)
        .unwrap_or(0.0);
    let (recall, acc5, p5) = (
        [recall(1), recall(5), recall(10)],
        !gold.is_empty() && found_in(5) == gold.len(),
        found_in(5) as f64 / 5.0,
    );
    QueryOutcome {
        id: q.id.clone(),
        repo: repo.to_string(),
        query: q.query.clone(),
        files,
        gold_files: q.gold_files.clone(),
        rr,
        symbol_rank,
        ms,
        error: None,
        hinted: q.mentions_path.unwrap_or(false)
            || q.mentions_stem.unwrap_or(false)
            || q.mentions_symbol.unwrap_or(false),
        recall,
        acc5,
        p5,
        has_symbols: !q.gold_symbols.is_empty() && symbols_ranked,
        right_repo: None,
        context_hit: None,
        context_files: None,
        who: None,
    }
}

/// A chunk hit names a gold symbol: same path, and the same qualified name
/// or a range holding the symbol's lines (at the indexed commit: the base
/// commit's lines, or the parent's with `--at-parent`) that is not the
/// module chunk.
pub fn symbol_matches(h: &Hit, g: &GoldSymbol, at_parent: bool) -> bool {
    if h.path != g.path {
        return false;
    }
    if !g.qualname.is_empty() && h.symbol.as_deref() == Some(g.qualname.as_str()) {
        return true;
    }
    let (start, end) = if at_parent {
        (g.start, g.end)
    } else {
        (g.start_at_base.or(g.start), g.end_at_base.or(g.end))
    };
    let (Some(start), Some(end)) = (start, end) else {
        return false;
    };
    h.kind != ken_core::ChunkKind::Module && h.start_line <= start && h.end_line >= end
}

fn metrics(outcomes: &[&QueryOutcome]) -> Metrics {
    let n = outcomes.len();
    if n == 0 {
        return Metrics::default();
    }
    let mean =
        |f: &dyn Fn(&QueryOutcome) -> f64| outcomes.iter().map(|o| f(o)).sum::<f64>() / n as f64;
    let with_symbols: Vec<&&QueryOutcome> = outcomes.iter().filter(|o| o.has_symbols).collect();
    let (hit1, smrr) = if with_symbols.is_empty() {
        (None, None)
    } else {
        let m = with_symbols.len() as f64;
        let hit1 = with_symbols
            .iter()
            .filter(|o| o.symbol_rank == Some(1))
            .count() as f64
            / m;
        let mrr = with_symbols
            .iter()
            .map(|o| o.symbol_rank.map(|r| 1.0 / r as f64).unwrap_or(0.0))
            .sum::<f64>()
            / m;
        (Some(round(hit1)), Some(round(mrr)))
    };
    // latency of the queries that ran
    let mut ms: Vec<f64> = outcomes
        .iter()
        .filter(|o| o.error.is_none())
        .map(|o| o.ms)
        .collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        if ms.is_empty() {
            0.0
        } else {
            ms[((ms.len() - 1) as f64 * p).round() as usize]
        }
    };
    Metrics {
        queries: n,
        mrr10: round(mean(&|o| o.rr)),
        recall1: round(mean(&|o| o.recall[0])),
        recall5: round(mean(&|o| o.recall[1])),
        recall10: round(mean(&|o| o.recall[2])),
        acc5: round(mean(&|o| if o.acc5 { 1.0 } else { 0.0 })),
        p5: round(mean(&|o| o.p5)),
        symbol_hit1: hit1,
        symbol_mrr10: smrr,
        right_repo1: {
            let judged: Vec<bool> = outcomes.iter().filter_map(|o| o.right_repo).collect();
            (!judged.is_empty())
                .then(|| round(judged.iter().filter(|r| **r).count() as f64 / judged.len() as f64))
        },
        context_recall: {
            let judged: Vec<bool> = outcomes.iter().filter_map(|o| o.context_hit).collect();
            (!judged.is_empty())
                .then(|| round(judged.iter().filter(|r| **r).count() as f64 / judged.len() as f64))
        },
        context_files: {
            let files: Vec<usize> = outcomes.iter().filter_map(|o| o.context_files).collect();
            (!files.is_empty())
                .then(|| round(files.iter().sum::<usize>() as f64 / files.len() as f64))
        },
        p50_ms: round(pct(0.5)),
        p95_ms: round(pct(0.95)),
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn who_metrics(ranks: &[WhoRanks]) -> WhoMetrics {
    let col = |rs: &[&WhoRanks], i: usize| rs.iter().map(|r| r.ranks[i]).collect::<Vec<_>>();
    let all: Vec<&WhoRanks> = ranks.iter().collect();
    let answerable: Vec<&WhoRanks> = ranks.iter().filter(|r| r.answerable).collect();
    let of = |rs: &[&WhoRanks]| WhoMetrics {
        queries: rs.len(),
        ken_who: who_scores(&col(rs, 0)),
        repo_top_authors: who_scores(&col(rs, 1)),
        gold_file_authors: who_scores(&col(rs, 2)),
        answerable: rs.iter().filter(|r| r.answerable).count(),
        on_answerable: None,
    };
    WhoMetrics {
        on_answerable: Some(Box::new(of(&answerable))),
        ..of(&all)
    }
}

/// The true author's rank by each method (`ken who`, the repository's
/// most active authors, the gold files' most active authors), and whether
/// they could be found (a commit of theirs at or before the indexed one).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WhoRanks {
    ranks: [Option<usize>; 3],
    answerable: bool,
}

/// The true author's rank in `ken who`, among the repository's most active
/// authors, and among the gold files' most active authors.
fn who_query(
    store: &dyn Store,
    ids: &ken_source::Identities,
    q: &EvalQuery,
    env: SearchEnv<'_>,
) -> Result<Option<WhoRanks>> {
    let (Some(name), Some(email)) = (&q.author_name, &q.author_email) else {
        return Ok(None);
    };
    let truth = ids.resolve(name, email).id;
    let state = store.state()?;
    let now = state.commit_time.unwrap_or(i64::MAX);
    let rank_of = |list: &[String]| list.iter().position(|id| *id == truth).map(|p| p + 1);

    let question = Question::read(&q.query, env.rank.issue_words);
    let who = crate::who::who_store(store, ids, &question, now, 10, env)?;
    let ken: Vec<String> = who.people.into_iter().map(|p| p.id).collect();

    let by_count = |commits: Vec<ken_store::CommitRecord>| -> Vec<String> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for c in commits {
            if c.committer_time > now {
                continue;
            }
            let p = ids.resolve(&c.author_name, &c.author_email);
            if !p.is_bot {
                *counts.entry(p.id).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.into_iter().take(10).map(|(id, _)| id).collect()
    };
    let history = store.all_commits()?;
    let answerable = history.iter().any(|c| {
        c.committer_time <= now && ids.resolve(&c.author_name, &c.author_email).id == truth
    });
    let repo_top = by_count(history);
    let touching: Vec<String> = store
        .commits_touching(&q.gold_files)?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let gold_top = by_count(store.commits(&touching, false)?.into_values().collect());
    Ok(Some(WhoRanks {
        ranks: [rank_of(&ken), rank_of(&repo_top), rank_of(&gold_top)],
        answerable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(blocks: &[(&str, u32, u32)]) -> ken_llm::Context {
        let chunks: Vec<ken_llm::ContextChunk> = blocks
            .iter()
            .map(|&(path, start, end)| ken_llm::ContextChunk {
                repo: "r".into(),
                path: path.into(),
                start_line: start,
                end_line: end,
                symbol: None,
                language: ken_core::Language::Python,
                authors: Vec::new(),
                text: (start..=end).map(|n| format!("line {n}\n")).collect(),
            })
            .collect();
        ken_llm::Context::build(&chunks, &ken_llm::ContextOptions::default())
    }

    fn query(gold: serde_json::Value) -> EvalQuery {
        serde_json::from_value(serde_json::json!({
            "id": "q", "repo": "r", "query": "q",
            "gold_files": ["app.py", "ctx.py"],
            "gold_symbols": gold,
        }))
        .unwrap()
    }

    #[test]
    fn the_context_holds_gold_where_a_block_meets_a_gold_symbol() {
        let q = query(serde_json::json!([
            {"path": "app.py", "start": 100, "end": 120, "start_at_base": 10, "end_at_base": 30},
        ]));
        // app.py names a symbol: only its lines count
        assert!(holds_gold(&context(&[("app.py", 110, 130)]), &q, true));
        assert!(!holds_gold(&context(&[("app.py", 1, 50)]), &q, true));
        assert!(holds_gold(&context(&[("app.py", 1, 50)]), &q, false));
        // ctx.py names none: any of its lines count
        assert!(holds_gold(&context(&[("ctx.py", 500, 510)]), &q, true));
        assert!(!holds_gold(&context(&[("other.py", 100, 120)]), &q, true));
        assert!(!holds_gold(&context(&[]), &q, true));
    }
}
