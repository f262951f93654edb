//! Retrieval and fusion, as stages over one read question.
//!
//! The [`Question`] is read once by the caller. Per repository, in order:
//! - reading.rs: the question as that repository reads it (a bug report
//!   without its template lines and environment dump);
//! - scope.rs: what the filters allow;
//! - lists.rs: each signal's list (dense, BM25 over chunks, symbol look-ups
//!   of the question's identifiers, BM25 over whole files, the files a bug
//!   report mentions), fused per chunk with weighted Reciprocal Rank Fusion;
//! - neighbours.rs: files near the best ones in the code graph;
//! - score.rs: file signals and priors, the filters applied;
//! - pin.rs: a strong identifier's exact definitions pinned above the rest;
//! - files.rs: file fusion, in files mode;
//! - collapse.rs: final order, overlapping chunks dropped, the limit;
//! - hits.rs: the kept chunks read whole and annotated with their authors.
//!
//! The engine then merges repositories (or routes, route.rs) and reranks
//! (rerank.rs).

mod collapse;
mod files;
mod hits;
mod lists;
mod neighbours;
mod pin;
mod reading;
mod rerank;
mod scope;
mod score;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use ken_core::{Filters, Hit, Signals};
use ken_embed::Embedder;
use ken_source::Identities;
use ken_store::{LexicalQuery, Store, StoredChunk, SymbolMatch, SymbolTier};
use serde::Serialize;

use crate::issue_template::IssueTemplate;
use crate::params::RankParams;
use crate::question::Question;
use crate::repo::OpenRepo;
use crate::semantic::VectorView;
use crate::{EngineError, Result};

pub(crate) use files::file_rows;
pub use rerank::{RerankCost, rerank_hits};
pub use score::file_prior;

/// Which retrieval signals to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Exact symbols, BM25 over chunks and files.
    Lexical,
    /// Dense retrieval only.
    Semantic,
    /// Everything, fused (the default; dense joins when vectors exist).
    #[default]
    Hybrid,
}

#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: usize,
    pub filters: Filters,
    /// One result per file (its best chunk).
    pub files: bool,
    pub mode: Mode,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub query: String,
    pub took_ms: u64,
    pub hits: Vec<Hit>,
    /// Things the user should know (partial coverage...).
    pub notes: Vec<String>,
    /// What reranking cost, when a reranker is configured.
    pub rerank: Option<RerankCost>,
    /// When several repositories were searched: each, with its hits among
    /// those returned (and its routing weight, when routed). Empty for one.
    pub repos: Vec<RepoFacet>,
}

/// One repository of a search over several.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RepoFacet {
    pub repo: String,
    /// Hits of this repository among those returned.
    pub hits: usize,
    /// How likely routing judged it to hold the answer (None: searched
    /// because it was named, or without routing).
    pub weight: Option<f32>,
}

impl SearchResponse {
    /// Count each facet's hits again (after the hits were cut or reordered).
    pub fn recount(&mut self) {
        for f in &mut self.repos {
            f.hits = self.hits.iter().filter(|h| h.repo == f.repo).count();
        }
    }
}

/// Search the given repositories and merge their results.
pub(crate) fn search_repos(
    repos: &[Arc<OpenRepo>],
    req: &SearchRequest,
    rank: &RankParams,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse> {
    let started = Instant::now();
    let mut all: Vec<Hit> = Vec::new();
    let mut notes = Vec::new();
    let embedder = embedder.filter(|_| req.mode != Mode::Lexical);
    if embedder.is_none() && req.mode == Mode::Semantic {
        return Err(
            EngineError::unavailable("semantic search needs an embedding model").with_hint(
                "run `ken model install`, or set KEN_EMBED_MODEL_DIR or KEN_EMBED_BASE_URL",
            ),
        );
    }
    let question = Question::read(&req.query, rank.issue_words);
    for repo in repos {
        let out = search_one(repo, req, &question, rank, embedder)?;
        notes.extend(out.notes);
        all.extend(out.hits);
    }
    all.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(b.score.total_cmp(&a.score)));
    all.truncate(req.limit);
    let facets = if repos.len() > 1 {
        repos
            .iter()
            .map(|r| RepoFacet {
                repo: r.name.clone(),
                hits: 0,
                weight: None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut resp = SearchResponse {
        query: req.query.clone(),
        took_ms: started.elapsed().as_millis() as u64,
        hits: all,
        notes,
        rerank: None,
        repos: facets,
    };
    resp.recount();
    Ok(resp)
}

/// Search one open repository; its notes name it.
pub(crate) fn search_one(
    repo: &OpenRepo,
    req: &SearchRequest,
    question: &Question,
    rank: &RankParams,
    embedder: Option<&dyn Embedder>,
) -> Result<StoreResults> {
    let name = &repo.name;
    let mut notes = Vec::new();
    if let Some(p) = &repo.state.pending {
        notes.push(format!("{name}: an index run towards {p} did not finish; results may mix versions (run `ken index` again)"));
    }
    let vectors = match embedder {
        Some(e) => repo.vectors(e.id())?,
        None => None,
    };
    let rank = rank.for_question(&repo.state, question);
    let churn = repo.churn(&rank)?;
    let template = repo.template_for(question, &rank)?;
    let env = SearchEnv {
        rank: &rank,
        embedder,
        vectors: vectors.as_deref(),
        identities: Some(&repo.ids),
        churn: churn.as_deref(),
        template: template.as_deref(),
    };
    let commit = repo.state.commit.as_deref();
    let out = search_store(&*repo.store, name, commit, req, question, env)?;
    notes.extend(out.notes.into_iter().map(|n| format!("{name}: {n}")));
    Ok(StoreResults {
        hits: out.hits,
        notes,
    })
}

/// A candidate during fusion.
#[derive(Debug, Default, Clone)]
struct Candidate {
    fused: f32,
    /// The definition an exact symbol match found in this chunk.
    definition: Option<SymbolMatch>,
    pinned: Option<(SymbolTier, usize)>,
    signals: Signals,
}

/// One repository's results.
#[derive(Debug, Clone, Default)]
pub struct StoreResults {
    pub hits: Vec<Hit>,
    pub notes: Vec<String>,
}

/// What a search needs besides the store and the request.
#[derive(Clone, Copy)]
pub struct SearchEnv<'a> {
    pub rank: &'a RankParams,
    pub embedder: Option<&'a dyn Embedder>,
    /// What the store's vector search of the embedder's model holds (None: nothing embedded).
    pub vectors: Option<&'a VectorView>,
    /// Resolves authors (search results, `--author`); None: no authors shown.
    pub identities: Option<&'a Identities>,
    /// File history for the churn and fix priors (None: those priors are off).
    pub churn: Option<&'a crate::churn::FileChurn>,
    /// The repository's issue templates, whose lines a bug report repeats
    /// (None: reports are read whole).
    pub template: Option<&'a IssueTemplate>,
}

/// The candidate stages of a search (see [`search_store`]): scope, the
/// question as this repository reads it, every signal's list, the graph's
/// neighbours, scores with priors, pins.
pub(crate) fn rank_candidates(
    store: &dyn Store,
    req: &SearchRequest,
    question: &Question,
    env: SearchEnv<'_>,
) -> Result<Ranked> {
    let p = env.rank;
    let mut notes = Vec::new();
    let lexical = req.mode != Mode::Semantic;
    let (allowed, people_filter) = scope::scope(store, req, env, &mut notes)?;
    let allowed_set: Option<HashSet<&str>> = allowed
        .as_ref()
        .map(|v| v.iter().map(String::as_str).collect());
    let reading = reading::read(question, lexical, env.template, p);
    let lex = LexicalQuery {
        text: reading.text,
        limit: p.candidates,
        languages: req.filters.languages.clone(),
        paths: allowed.clone(),
        weights: p.fields,
    };
    let mut cands: HashMap<u64, Candidate> = HashMap::new();
    lists::add_dense(store, req, env, allowed.as_ref(), &mut cands, &mut notes)?;
    if lexical {
        lists::add_bm25(store, &lex, &mut cands, p)?;
    }
    let exact_order = lists::add_symbols(
        store,
        question,
        lexical,
        allowed_set.as_ref(),
        &mut cands,
        p,
    )?;
    let file_hits = if lexical {
        lists::whole_files(store, &lex, p)?
    } else {
        Vec::new()
    };
    let file_rank: HashMap<&str, (usize, f32)> = file_hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.path.as_str(), (i + 1, h.score)))
        .collect();
    let mentioned = match &reading.issue {
        Some(q) if p.w_mention > 0.0 => lists::mentioned_files(store, q, allowed_set.as_ref())?,
        _ => crate::issue::Mentions::default(),
    };
    // Load candidates, without their text (languages are filtered later
    // for symbol hits); only the hits returned are read whole, at the end.
    let (mut chunks, covered_files) =
        lists::load_heads(store, &mut cands, &file_hits, &mentioned.files)?;
    let mention_rank: HashMap<&str, usize> = mentioned
        .files
        .iter()
        .enumerate()
        .map(|(i, path)| (path.as_str(), i + 1))
        .collect();
    // Files near the best files in the code graph (personalized PageRank).
    let ppr_rank = if p.w_ppr > 0.0 {
        neighbours::graph_neighbours(
            store,
            &mut cands,
            &mut chunks,
            (&file_rank, &covered_files),
            allowed_set.as_ref(),
            p,
        )?
    } else {
        HashMap::new()
    };
    let file_pr: HashMap<String, f32> = if p.w_pagerank > 0.0 {
        store.file_ranks()?
    } else {
        HashMap::new()
    };
    let by_file = score::FileSignals {
        file_rank: &file_rank,
        mention_rank: &mention_rank,
        framed: mentioned.framed,
        ppr_rank: &ppr_rank,
        file_pr: &file_pr,
    };
    let keep = score::Keep {
        languages: &req.filters.languages,
        paths: allowed_set.as_ref(),
        shas: people_filter.as_ref(),
    };
    let mut scored = score::score_candidates(store, cands, &chunks, &by_file, &keep, p)?;
    if reading.issue.is_none() || p.pin_issues {
        pin::pin_exact(store, question, &exact_order, &mut scored, &chunks, p)?;
    }
    let file_rank: HashMap<String, (usize, f32)> = file_rank
        .into_iter()
        .map(|(path, r)| (path.to_string(), r))
        .collect();
    Ok(Ranked {
        scored,
        chunks,
        file_rank,
        notes,
    })
}

/// Candidates after the first stages: every signal's list gathered,
/// filtered, fused per chunk with the priors applied, exact hits pinned.
pub(crate) struct Ranked {
    scored: Vec<(u64, Candidate)>,
    chunks: HashMap<u64, StoredChunk>,
    /// Whole-file BM25: path → (rank, score).
    file_rank: HashMap<String, (usize, f32)>,
    notes: Vec<String>,
}

/// Search one repository's store: rank the candidates, fuse them by file
/// in files mode, collapse overlaps, then read and annotate the hits.
pub fn search_store(
    store: &dyn Store,
    repo: &str,
    commit: Option<&str>,
    req: &SearchRequest,
    question: &Question,
    env: SearchEnv<'_>,
) -> Result<StoreResults> {
    let p = env.rank;
    let Ranked {
        mut scored,
        chunks,
        file_rank,
        notes,
    } = rank_candidates(store, req, question, env)?;
    if req.files && p.file_fusion {
        files::fuse_files(&mut scored, &chunks, &file_rank, p, env.churn);
    }
    let kept = collapse::collapse(scored, &chunks, req.files, req.limit);
    let hits = hits::annotate(store, repo, commit, kept, env.identities)?;
    Ok(StoreResults { hits, notes })
}
