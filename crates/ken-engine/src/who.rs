//! `ken who` (who knows this code) and `ken log-search` (commits by words).

use std::collections::HashSet;

use ken_core::Filters;
use ken_embed::Embedder;
use ken_source::Identities;
use std::sync::Arc;

use ken_store::{HistoryStore, Store, SymbolTier};
use serde::Serialize;

use crate::params::RankParams;
use crate::people::{self, Target, WhoPerson};
use crate::question::Question;
use crate::repo::OpenRepo;
use crate::search::{Mode, SearchEnv, SearchRequest, search_store};
use crate::{EngineError, Result};

#[derive(Debug, Clone, Serialize)]
pub struct WhoResponse {
    pub query: String,
    /// How the query was read: `path`, `symbol` or `topic`.
    pub read_as: String,
    pub people: Vec<WhoPerson>,
    /// What the answer could not use (e.g. a repository with no history).
    pub notes: Vec<String>,
    /// Imported tickets the query is about, with the commits (and so the
    /// people) that addressed them.
    pub tickets: Vec<crate::tickets::TicketEvidence>,
}

/// Search results used as the code a topic is about.
const TOPIC_CHUNKS: usize = 20;

/// Who knows `query` — a path (file or folder), a symbol, or a topic — in one repository.
pub fn who_store(
    store: &dyn Store,
    ids: &Identities,
    question: &Question,
    now: i64,
    limit: usize,
    env: SearchEnv<'_>,
) -> Result<WhoResponse> {
    let query = question.text.as_str();
    let q = topic(query);
    let files: Vec<(String, u64)> = store
        .files()?
        .into_iter()
        .filter(|f| f.skip.is_none())
        .map(|f| (f.path, f.size))
        .collect();
    let under: Vec<&(String, u64)> = files
        .iter()
        .filter(|(p, _)| p == q || p.starts_with(&format!("{q}/")))
        .collect();
    let mut similar: Vec<(String, f32)> = Vec::new();
    let mut active = Vec::new();
    let (read_as, targets): (&str, Vec<Target>) = if !q.is_empty() && !under.is_empty() {
        let targets = under
            .iter()
            .map(|(p, _)| Target {
                path: p.clone(),
                symbol: None,
                start_line: 1,
                end_line: u32::MAX,
                weight: 1.0,
            })
            .collect();
        ("path", targets)
    } else {
        let exact: Vec<_> = store
            .lookup_symbols(q, 20, false)?
            .into_iter()
            .filter(|m| matches!(m.tier, SymbolTier::Exact | SymbolTier::ExactFolded))
            .collect();
        if !exact.is_empty() && !q.contains(' ') {
            let targets = exact
                .into_iter()
                .map(|m| Target {
                    path: m.path,
                    symbol: Some(m.qualname),
                    start_line: m.start_line,
                    end_line: m.end_line,
                    weight: 1.0,
                })
                .collect();
            ("symbol", targets)
        } else {
            let req = SearchRequest {
                query: q.to_string(),
                limit: TOPIC_CHUNKS,
                filters: Filters::default(),
                files: false,
                mode: Mode::Hybrid,
            };
            // the question read again only when its topic differs from it
            let read;
            let topic_question = if q == query {
                question
            } else {
                read = Question::read(q, env.rank.issue_words);
                &read
            };
            let hits = search_store(
                store,
                "",
                None,
                &req,
                topic_question,
                SearchEnv {
                    identities: None,
                    ..env
                },
            )?
            .hits;
            let targets = hits
                .into_iter()
                .enumerate()
                .map(|(i, h)| Target {
                    path: h.path,
                    symbol: h.symbol,
                    start_line: h.start_line,
                    end_line: h.end_line,
                    // the best matches count most
                    weight: 1.0 / (1.0 + i as f32 * 0.25),
                })
                .collect();
            similar = similar_commits(store, q, env.rank.w_who_similar)?;
            active = people::active_authors(store, ids, now, env.rank.w_who_active)?;
            ("topic", targets)
        }
    };
    Ok(WhoResponse {
        query: query.to_string(),
        read_as: read_as.to_string(),
        people: people::rank_people(store, ids, &targets, &similar, &active, now, limit)?,
        notes: Vec::new(),
        tickets: Vec::new(),
    })
}

/// Past commits read for a question.
const SIMILAR_COMMITS: usize = 10;

/// Past commits whose messages (and changed paths) match a question best,
/// each weighted by `w` times its match relative to the best.
fn similar_commits(store: &dyn HistoryStore, question: &str, w: f32) -> Result<Vec<(String, f32)>> {
    if w <= 0.0 {
        return Ok(Vec::new());
    }
    let found = store.search_commits(question, SIMILAR_COMMITS)?;
    let best = found.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
    if best <= 0.0 {
        return Ok(Vec::new());
    }
    Ok(found
        .into_iter()
        .map(|(sha, s)| (sha, w * s / best))
        .collect())
}

/// What `ken who` asks about: a path (a trailing `/` dropped), a symbol or
/// a topic.
fn topic(query: &str) -> &str {
    query.trim().trim_end_matches('/')
}

/// `ken who` over the given repositories (one is expected; several are merged by score).
pub(crate) fn who_repos(
    repos: &[Arc<OpenRepo>],
    query: &str,
    limit: usize,
    rank: &RankParams,
    embedder: Option<&dyn Embedder>,
) -> Result<WhoResponse> {
    let mut all: Option<WhoResponse> = None;
    let mut notes = Vec::new();
    let question = Question::read(query, rank.issue_words);
    for repo in repos {
        let progress = repo.people_progress()?;
        if progress.commits == 0 {
            notes.push(format!(
                "{} has no history in its index (a folder outside git, or a repository \
                 with no commits): nobody can be named from it",
                repo.name
            ));
        } else if progress.partial() {
            notes.push(format!(
                "{}: blame covers {} of {} files so far (`ken index` finishes it): the people named may change",
                repo.name, progress.files_blamed, progress.files
            ));
        }
        let vectors = match embedder {
            Some(e) => repo.vectors(e.id())?,
            None => None,
        };
        let template = repo.template_for(&question, rank)?;
        let env = SearchEnv {
            rank,
            embedder,
            vectors: vectors.as_deref(),
            identities: None,
            churn: None,
            template: template.as_deref(),
        };
        let r = who_store(&*repo.store, &repo.ids, &question, repo.now(), limit, env)?;
        all = Some(match all {
            None => r,
            Some(mut acc) => {
                acc.people.extend(r.people);
                acc
            }
        });
    }
    let mut out = all.ok_or_else(|| EngineError::not_found("no repository to look in"))?;
    out.people.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.people.truncate(limit);
    for (i, p) in out.people.iter_mut().enumerate() {
        p.rank = i + 1;
    }
    out.notes = notes;
    Ok(out)
}

/// A commit found by `ken log-search`.
#[derive(Debug, Clone, Serialize)]
pub struct LogHit {
    pub rank: usize,
    pub repo: String,
    pub sha: String,
    pub summary: String,
    pub author: String,
    pub person: String,
    pub when: i64,
    pub score: f32,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct LogSearchRequest {
    pub query: String,
    pub repos: Vec<String>,
    pub limit: usize,
    pub author: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// Commits whose message or changed paths match the query (full-text BM25),
/// filtered by person and time; with no query, the newest matching commits.
pub(crate) fn log_search_repos(
    repos: &[Arc<OpenRepo>],
    req: &LogSearchRequest,
) -> Result<Vec<LogHit>> {
    let mut out = Vec::new();
    for repo in repos {
        let (name, store, state, ids) = (&repo.name, &*repo.store, &repo.state, &repo.ids);
        let allowed: Option<HashSet<String>> =
            if req.author.is_some() || req.since.is_some() || req.until.is_some() {
                Some(
                    people::commits_by(store, ids, req.author.as_deref(), req.since, req.until)?
                        .into_iter()
                        .collect(),
                )
            } else {
                None
            };
        let scored: Vec<(String, f32)> = if req.query.trim().is_empty() {
            let mut v: Vec<(String, f32)> = match &allowed {
                Some(a) => a.iter().map(|s| (s.clone(), 0.0)).collect(),
                None => store
                    .all_commits()?
                    .into_iter()
                    .take(req.limit * 4)
                    .map(|c| (c.sha, 0.0))
                    .collect(),
            };
            v.truncate(req.limit * 50);
            v
        } else {
            store.search_commits(&req.query, req.limit * 20)?
        };
        let shas: Vec<String> = scored
            .iter()
            .filter(|(s, _)| allowed.as_ref().is_none_or(|a| a.contains(s)))
            .map(|(s, _)| s.clone())
            .collect();
        let commits = store.commits(&shas, true)?;
        for (sha, score) in scored {
            let Some(c) = commits.get(&sha) else { continue };
            if state.commit_time.is_some_and(|t| c.committer_time > t) {
                continue; // newer than the indexed commit
            }
            let p = ids.resolve(&c.author_name, &c.author_email);
            out.push(LogHit {
                rank: 0,
                repo: name.clone(),
                sha: c.sha.clone(),
                summary: c.summary.clone(),
                author: c.author_name.clone(),
                person: p.id,
                when: c.author_time,
                score,
                files: c.files.iter().map(|(p, _, _)| p.clone()).collect(),
            });
        }
    }
    if req.query.trim().is_empty() {
        out.sort_by_key(|h| std::cmp::Reverse(h.when));
    } else {
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.when.cmp(&a.when)));
    }
    out.truncate(req.limit);
    for (i, h) in out.iter_mut().enumerate() {
        h.rank = i + 1;
    }
    Ok(out)
}
