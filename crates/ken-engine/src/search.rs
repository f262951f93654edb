//! Retrieval and fusion.
//!
//! Per repository, four lists are made: exact symbol hits (from identifiers
//! found anywhere in the query), prefix/substring symbol hits, BM25 over
//! chunks and BM25 over whole files. True exact hits are pinned above the
//! rest; everything else is merged with weighted Reciprocal Rank Fusion
//! (k = 60) and multiplied by priors (trivial bodies, non-code files, tests).
//! Overlapping results (a class and its own method) are collapsed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use globset::{Glob, GlobSetBuilder};
use ken_core::{ChunkKind, Filters, Hit, Language, Signals, is_test_path};
use ken_store::{ChunkFilter, LexicalQuery, Store, StoredChunk, SymbolMatch, SymbolTier};
use serde::Serialize;

use ken_embed::Embedder;

use crate::query::{QueryIdent, identifiers};
use ken_source::Identities;

use crate::issue_template::IssueTemplate;
use crate::repo::OpenRepo;
use crate::semantic::VectorView;
use crate::{EngineError, Result, fusion, issue, people, semantic};

use crate::params::RankParams;

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

/// The reranking stage of one search.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RerankCost {
    pub model: String,
    /// Hits the model read (the best ones; the rest keep their order).
    pub documents: usize,
    pub ms: u64,
    /// Tokens the model's server counted (a chat model's; None: not reported).
    pub tokens: Option<u64>,
}

/// Reorder the best `top` hits by the reranker's scores of their text. A
/// failing reranker leaves the order as it was and says so in the notes.
pub fn rerank_hits(reranker: &dyn ken_embed::Reranker, resp: &mut SearchResponse, top: usize) {
    let n = resp.hits.len().min(top);
    if n < 2 {
        return;
    }
    let mut head: Vec<Hit> = resp.hits.drain(..n).collect();
    let text = |h: &Hit| {
        let mut t = h.path.clone();
        for part in [&h.symbol, &h.signature, &h.doc].into_iter().flatten() {
            t.push('\n');
            t.push_str(part);
        }
        t.push('\n');
        t.push_str(&h.snippet);
        t
    };
    match ken_embed::rerank_in_place(reranker, &resp.query, &mut head, text) {
        Ok(took) => {
            resp.rerank = Some(RerankCost {
                model: reranker.id().to_string(),
                documents: n,
                ms: took.as_millis() as u64,
                tokens: None,
            });
        }
        Err(e) => resp
            .notes
            .push(format!("reranker failed, results are not reranked: {e}")),
    }
    head.append(&mut resp.hits);
    resp.hits = head;
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
    for repo in repos {
        let out = search_one(repo, req, rank, embedder)?;
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
    let rank = rank.for_question(&repo.state, &req.query);
    let churn = repo.churn(&rank)?;
    let template = repo.template_for(&req.query, &rank)?;
    let env = SearchEnv {
        rank: &rank,
        embedder,
        vectors: vectors.as_deref(),
        identities: Some(&repo.ids),
        churn: churn.as_deref(),
        template: template.as_deref(),
    };
    let out = search_store(&*repo.store, name, repo.state.commit.as_deref(), req, env)?;
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

/// The candidate stages of a search (see [`search_store`]).
pub(crate) fn rank_candidates(
    store: &dyn Store,
    req: &SearchRequest,
    env: SearchEnv<'_>,
) -> Result<Ranked> {
    let p = env.rank;
    let mut notes = Vec::new();
    let lexical = req.mode != Mode::Semantic;
    let (allowed, people_filter) = scope(store, req, env, &mut notes)?;
    let allowed_set: Option<HashSet<&str>> = allowed
        .as_ref()
        .map(|v| v.iter().map(String::as_str).collect());
    let (issue, lex_text) = read_question(&req.query, lexical, env.template, p);
    let lex = LexicalQuery {
        text: lex_text,
        limit: p.candidates,
        languages: req.filters.languages.clone(),
        paths: allowed.clone(),
        weights: p.fields,
    };
    let mut cands: HashMap<u64, Candidate> = HashMap::new();

    add_dense(store, req, env, allowed.as_ref(), &mut cands, &mut notes)?;

    // BM25 over chunks.
    let chunk_hits = if lexical {
        store.search_chunks(&lex)?
    } else {
        Vec::new()
    };
    for (i, h) in chunk_hits.iter().enumerate() {
        let c = cands.entry(h.chunk_id).or_default();
        c.fused += p.rrf(p.w_bm25, i + 1);
        c.signals.set("bm25", i as u32 + 1, h.score);
    }

    let exact_order = add_symbols(
        store,
        &req.query,
        lexical,
        allowed_set.as_ref(),
        &mut cands,
        p,
    )?;

    // BM25 over whole files: lifts every candidate of a well-ranked file,
    // and brings in files no chunk list found.
    let file_hits = if lexical {
        store.search_files(&LexicalQuery {
            limit: p.candidates / 2,
            ..lex.clone()
        })?
    } else {
        Vec::new()
    };
    let file_rank: HashMap<&str, (usize, f32)> = file_hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.path.as_str(), (i + 1, h.score)))
        .collect();

    // Load candidates, without their text (languages are filtered here for
    // symbol hits); only the hits returned are read whole, at the end.
    let ids: Vec<u64> = cands.keys().copied().collect();
    let mut chunks: HashMap<u64, StoredChunk> = store
        .chunk_heads(&ids)?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let covered_files: HashSet<String> = chunks.values().map(|c| c.path.clone()).collect();
    let uncovered: Vec<String> = file_hits
        .iter()
        .take(50)
        .filter(|h| !covered_files.contains(&h.path))
        .map(|h| h.path.clone())
        .collect();
    let mentioned = match &issue {
        Some(q) if p.w_mention > 0.0 => mentioned_files(store, q, allowed_set.as_ref())?,
        _ => issue::Mentions::default(),
    };
    let mention_rank: HashMap<&str, usize> = mentioned
        .files
        .iter()
        .enumerate()
        .map(|(i, path)| (path.as_str(), i + 1))
        .collect();
    let uncovered: Vec<String> = uncovered
        .into_iter()
        .chain(
            mentioned
                .files
                .iter()
                .take(20)
                .filter(|path| !covered_files.contains(*path))
                .cloned(),
        )
        .collect();
    for first in store.first_chunk_heads(&uncovered)? {
        cands.entry(first.id).or_default();
        chunks.insert(first.id, first);
    }
    // Files near the best files in the code graph (personalized PageRank).
    let ppr_rank = if p.w_ppr > 0.0 {
        graph_neighbours(
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
    let by_file = FileSignals {
        file_rank: &file_rank,
        mention_rank: &mention_rank,
        framed: mentioned.framed,
        ppr_rank: &ppr_rank,
        file_pr: &file_pr,
    };
    let keep = Keep {
        languages: &req.filters.languages,
        paths: allowed_set.as_ref(),
        shas: people_filter.as_ref(),
    };
    let mut scored = score_candidates(store, cands, &chunks, &by_file, &keep, p)?;

    let may_pin = issue.is_none() || p.pin_issues;
    if may_pin {
        pin_exact(store, &req.query, &exact_order, &mut scored, &chunks, p)?;
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

/// A question as the lexical search reads it. A bug report (judged by
/// `p.issue_words`, and only when the lexical signals run) loses its
/// repository's issue-template lines and its environment dump when `p` says
/// so, and is parsed for its title, frames, paths and modules; its title
/// weighs more (`p.issue_title` copies of it before the text).
fn read_question(
    query: &str,
    lexical: bool,
    template: Option<&IssueTemplate>,
    p: &RankParams,
) -> (Option<issue::IssueQuery>, String) {
    use std::borrow::Cow;
    let is_issue = lexical && issue::is_issue(query, p.issue_words);
    let text = match template {
        Some(t) if is_issue && p.issue_template_out => t.strip(query),
        _ => Cow::Borrowed(query),
    };
    let text = if is_issue && p.issue_env_out {
        let stripped = match issue::strip_environment(&text) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        stripped.map_or(text, Cow::Owned)
    } else {
        text
    };
    let issue = is_issue.then(|| issue::parse(&text));
    let lex_text = match &issue {
        Some(q) if p.issue_title > 0 => format!(
            "{}\n{}",
            vec![q.title.as_str(); p.issue_title].join("\n"),
            text
        ),
        _ => text.into_owned(),
    };
    (issue, lex_text)
}

/// What whole files say of their chunks: whole-file BM25, the files a bug
/// report mentions (the first `framed` from its traceback), graph
/// neighbours of the best files, and each file's PageRank.
struct FileSignals<'a> {
    file_rank: &'a HashMap<&'a str, (usize, f32)>,
    mention_rank: &'a HashMap<&'a str, usize>,
    framed: usize,
    ppr_rank: &'a HashMap<String, (usize, f32)>,
    file_pr: &'a HashMap<String, f32>,
}

/// What a hit must satisfy whichever signal found it (dense hits come from
/// an index that knows nothing of paths or languages).
struct Keep<'a> {
    languages: &'a [Language],
    paths: Option<&'a HashSet<&'a str>>,
    /// Commits one of which must have written a line of the chunk.
    shas: Option<&'a HashSet<String>>,
}

/// The candidates that pass `keep`, each scored: its lists' fused score,
/// plus what its file's signals add, times its priors.
fn score_candidates(
    store: &dyn Store,
    cands: HashMap<u64, Candidate>,
    chunks: &HashMap<u64, StoredChunk>,
    by_file: &FileSignals<'_>,
    keep: &Keep<'_>,
    p: &RankParams,
) -> Result<Vec<(u64, Candidate)>> {
    let mut scored: Vec<(u64, Candidate)> = Vec::new();
    for (id, mut c) in cands {
        let Some(chunk) = chunks.get(&id) else {
            continue;
        };
        if !keep.languages.is_empty() && !keep.languages.contains(&chunk.language) {
            continue;
        }
        if let Some(set) = keep.paths
            && !set.contains(chunk.path.as_str())
        {
            continue;
        }
        if let Some(shas) = keep.shas
            && !store.blame_of(&chunk.path)?.iter().any(|b| {
                b.end_line >= chunk.start_line
                    && b.start_line <= chunk.end_line
                    && shas.contains(&b.sha)
            })
        {
            continue;
        }
        if let Some((rank, score)) = by_file.file_rank.get(chunk.path.as_str()) {
            c.fused += p.rrf(p.w_file, *rank);
            c.signals.set("file", *rank as u32, *score);
        }
        if let Some(&rank) = by_file.mention_rank.get(chunk.path.as_str()) {
            // the signal's score: 1 for a traceback frame, else 0
            let framed = rank <= by_file.framed;
            c.fused += p.mention_rrf(rank, framed);
            c.signals
                .set("mention", rank as u32, if framed { 1.0 } else { 0.0 });
        }
        if let Some((rank, score)) = by_file.ppr_rank.get(&chunk.path) {
            c.fused += p.rrf(p.w_ppr, *rank);
            c.signals.set("ppr", *rank as u32, *score);
        }
        c.fused *= prior(chunk, p);
        if let Some(r) = by_file.file_pr.get(&chunk.path) {
            c.fused *= r.max(0.05).powf(p.w_pagerank);
            c.signals.set("pagerank", 0, *r);
        }
        scored.push((id, c));
    }
    Ok(scored)
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
    env: SearchEnv<'_>,
) -> Result<StoreResults> {
    let p = env.rank;
    let Ranked {
        mut scored,
        chunks,
        file_rank,
        notes,
    } = rank_candidates(store, req, env)?;
    if req.files && p.file_fusion {
        fuse_files(&mut scored, &chunks, &file_rank, p, env.churn);
    }
    scored.sort_by(|a, b| {
        let key = |c: &Candidate| c.pinned.map(|(_, pos)| pos);
        match (key(&a.1), key(&b.1)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.1.fused.total_cmp(&a.1.fused).then(a.0.cmp(&b.0)),
        }
    });

    // Collapse: drop a chunk that contains, or is contained in, a better one of the same file.
    let mut kept: Vec<(u64, Candidate)> = Vec::new();
    let mut seen_files: HashSet<&str> = HashSet::new();
    for (id, c) in scored {
        let chunk = &chunks[&id];
        if req.files {
            if !seen_files.insert(chunk.path.as_str()) {
                continue;
            }
        } else if kept.iter().any(|(kid, _)| overlaps(&chunks[kid], chunk)) {
            continue;
        }
        kept.push((id, c));
        if kept.len() >= req.limit {
            break;
        }
    }

    let kept_ids: Vec<u64> = kept.iter().map(|(id, _)| *id).collect();
    let whole: HashMap<u64, StoredChunk> = store
        .chunks(&kept_ids)?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let mut authorship = env
        .identities
        .map(|ids| people::Authorship::new(store, ids));
    if let Some(a) = authorship.as_mut() {
        let ranges: Vec<(String, u32, u32)> = kept
            .iter()
            .filter_map(|(id, _)| whole.get(id))
            .map(|c| (c.path.clone(), c.start_line, c.end_line))
            .collect();
        a.prefetch(&ranges)?;
    }
    let mut hits = Vec::with_capacity(kept.len());
    for (id, c) in kept {
        let Some(chunk) = whole.get(&id) else {
            continue; // deleted by a writer since the ranking: left out
        };
        let mut hit = to_hit(repo, commit, chunk, &c);
        if let Some(a) = authorship.as_mut() {
            hit.authors = a.shares(&hit.path, hit.start_line, hit.end_line)?;
        }
        hits.push(hit);
    }
    Ok(StoreResults { hits, notes })
}

/// What a search may return: the paths the path globs allow, narrowed to
/// code whose lines come from commits matching the people and time
/// filters (whose shas are returned too); None: no limit.
#[allow(clippy::type_complexity)]
fn scope(
    store: &dyn Store,
    req: &SearchRequest,
    env: SearchEnv<'_>,
    notes: &mut Vec<String>,
) -> Result<(Option<Vec<String>>, Option<HashSet<String>>)> {
    let mut allowed = allowed_paths(store, &req.filters)?;
    // people and time filters: only code whose lines come from matching commits
    let people_filter = match (&req.filters.author, req.filters.since, req.filters.until) {
        (None, None, None) => None,
        (author, since, until) => {
            let Some(ids) = env.identities else {
                return Err(EngineError::internal("author filters need identities"));
            };
            let shas: HashSet<String> =
                people::commits_by(store, ids, author.as_deref(), since, until)?
                    .into_iter()
                    .collect();
            let list: Vec<String> = shas.iter().cloned().collect();
            let paths = store.paths_blamed_on(&list)?;
            allowed = Some(match allowed {
                Some(a) => a.into_iter().filter(|p| paths.contains(p)).collect(),
                None => paths.into_iter().collect(),
            });
            if shas.is_empty() {
                notes.push("no commits match the author/time filters".into());
            }
            Some(shas)
        }
    };
    Ok((allowed, people_filter))
}

/// Dense retrieval as one RRF list (when the mode and the index allow).
fn add_dense(
    store: &dyn Store,
    req: &SearchRequest,
    env: SearchEnv<'_>,
    allowed: Option<&Vec<String>>,
    cands: &mut HashMap<u64, Candidate>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let p = env.rank;
    if let Some(e) = env.embedder.filter(|_| req.mode != Mode::Lexical) {
        match env.vectors {
            Some(view) => {
                let semantic::Dense { hits, held, chunks } = semantic::dense_search_in(
                    store,
                    view,
                    e,
                    &req.query,
                    p.candidates,
                    &ChunkFilter {
                        languages: req.filters.languages.clone(),
                        paths: allowed.cloned(),
                    },
                )?;
                for (i, (id, score)) in hits.iter().enumerate() {
                    let c = cands.entry(*id).or_default();
                    c.fused += p.rrf(p.w_dense, i + 1);
                    c.signals.set("dense", i as u32 + 1, *score);
                }
                if held < chunks {
                    notes.push(format!(
                        "semantic coverage {:.0}% ({held} of {chunks} chunks embedded): run `ken index` to finish",
                        100.0 * held as f64 / chunks.max(1) as f64
                    ));
                }
            }
            None => notes.push(
                "no vectors for this model yet: lexical results only (run `ken index`)".into(),
            ),
        }
    }

    Ok(())
}

/// Symbol look-ups of the query's identifiers as RRF lists: exact hits of
/// strong identifiers (returned in order, the pin candidates), exact hits
/// of plain words, prefix and substring hits.
fn add_symbols(
    store: &dyn Store,
    query: &str,
    lexical: bool,
    allowed: Option<&HashSet<&str>>,
    cands: &mut HashMap<u64, Candidate>,
    p: &RankParams,
) -> Result<Vec<(u64, SymbolTier, bool)>> {
    let idents = identifiers(query);
    let mut exact_order: Vec<(u64, SymbolTier, bool)> = Vec::new();
    let mut partial_rank = 0usize;
    let mut weak_rank = 0usize;
    let asked: Vec<(String, bool)> = idents
        .iter()
        .filter(|_| lexical)
        .map(|QueryIdent { text, strong }| (text.clone(), *strong))
        .collect();
    let found = store.lookup_symbols_many(&asked, 50)?;
    for ((_, strong), matches) in asked.iter().zip(found) {
        let strong = *strong;
        for m in matches {
            if let Some(set) = allowed
                && !set.contains(m.path.as_str())
            {
                continue;
            }
            let c = cands.entry(m.chunk_id).or_default();
            match m.tier {
                SymbolTier::Exact | SymbolTier::ExactFolded if !strong => {
                    // a plain word of a longer query that happens to name a symbol
                    weak_rank += 1;
                    if c.signals.get("word_symbol").is_none() {
                        c.signals.set("word_symbol", weak_rank as u32, 0.5);
                        c.fused += p.rrf(p.w_weak, weak_rank);
                    }
                }
                SymbolTier::Exact | SymbolTier::ExactFolded => {
                    let rank = exact_order.len() + 1;
                    if c.signals.get("exact").is_none() {
                        c.signals.set(
                            "exact",
                            rank as u32,
                            if m.tier == SymbolTier::Exact {
                                1.0
                            } else {
                                0.9
                            },
                        );
                        c.fused += p.rrf(p.w_symbol, rank);
                        exact_order.push((m.chunk_id, m.tier, strong));
                        c.definition = Some(m);
                    }
                }
                tier => {
                    partial_rank += 1;
                    if c.signals.get(tier.name()).is_none() {
                        c.signals.set(tier.name(), partial_rank as u32, 0.5);
                        c.fused += p.rrf(p.w_partial, partial_rank);
                    }
                }
            }
        }
    }

    Ok(exact_order)
}

/// Pin true exact hits: a strong identifier's exact matches, ordered by
/// tier then by how well the rest of the query agrees.
fn pin_exact(
    store: &dyn Store,
    query: &str,
    exact_order: &[(u64, SymbolTier, bool)],
    scored: &mut [(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    p: &RankParams,
) -> Result<()> {
    let mut pinned: Vec<(u64, SymbolTier, f32)> = Vec::new();
    for (id, tier, strong) in exact_order {
        if *strong && let Some((_, c)) = scored.iter().find(|(i, _)| i == id) {
            pinned.push((*id, *tier, c.fused));
        }
    }
    // Case-exact matches win; folded ones (`app_context` for `AppContext`)
    // are pinned only when nothing matches exactly.
    if pinned.iter().any(|(_, t, _)| *t == SymbolTier::Exact) {
        pinned.retain(|(_, t, _)| *t == SymbolTier::Exact);
    }
    // ties: the definition the code graph ranks highest (PageRank of its
    // definition), and code before tests
    let mut graph_rank: HashMap<u64, f32> = HashMap::new();
    if pinned.len() > 1 {
        let mut by_path: HashMap<String, Vec<(String, u32, f32)>> = HashMap::new();
        for (id, _, _) in &pinned {
            let Some((_, c)) = scored.iter().find(|(i, _)| i == id) else {
                continue;
            };
            let Some(d) = &c.definition else { continue };
            if !by_path.contains_key(&d.path) {
                by_path.insert(d.path.clone(), store.def_ranks(&d.path)?);
            }
            let rank = by_path[&d.path]
                .iter()
                .filter(|(q, _, _)| *q == d.qualname)
                .map(|(_, _, r)| *r)
                .fold(0.0f32, f32::max);
            graph_rank.insert(*id, rank);
        }
    }
    order_pins(&mut pinned, is_lookup(query), |id| Pin {
        module: chunks.get(&id).is_some_and(|c| c.kind == ChunkKind::Module),
        test: chunks.get(&id).is_some_and(|c| is_test_path(&c.path)),
        graph: graph_rank.get(&id).copied().unwrap_or(0.0),
    });
    pinned.truncate(p.max_pinned);
    for (pos, (id, tier, _)) in pinned.iter().enumerate() {
        if let Some((_, c)) = scored.iter_mut().find(|(i, _)| i == id) {
            c.pinned = Some((*tier, pos));
        }
    }
    Ok(())
}

/// Files near the best ones in the code graph (personalized PageRank over
/// the file graph, seeded by the other lists), ranked; the first chunk of
/// the nearest files the other lists missed joins the candidates.
fn graph_neighbours(
    store: &dyn Store,
    cands: &mut HashMap<u64, Candidate>,
    chunks: &mut HashMap<u64, StoredChunk>,
    (file_rank, covered_files): (&HashMap<&str, (usize, f32)>, &HashSet<String>),
    allowed_set: Option<&HashSet<&str>>,
    p: &RankParams,
) -> Result<HashMap<String, (usize, f32)>> {
    let seeds = seed_files(cands, chunks, file_rank, p);
    let ranked = graph_neighbourhood(store, &seeds)?;
    let near: Vec<String> = ranked
        .iter()
        .take(20)
        .map(|(path, _)| path)
        .filter(|path| {
            !covered_files.contains(*path)
                && allowed_set
                    .as_ref()
                    .is_none_or(|a| a.contains(path.as_str()))
        })
        .cloned()
        .collect();
    for first in store.first_chunk_heads(&near)? {
        cands.entry(first.id).or_default();
        chunks.insert(first.id, first);
    }
    Ok(ranked
        .into_iter()
        .take(p.candidates)
        .enumerate()
        .map(|(i, (path, score))| (path, (i + 1, score)))
        .collect())
}

/// What orders pinned hits of the same tier.
struct Pin {
    /// A module chunk (it only holds a definition too small to be a chunk
    /// of its own, such as a one-line struct).
    module: bool,
    /// In a test file.
    test: bool,
    /// PageRank of the definition in the code graph.
    graph: f32,
}

/// Pinned exact hits: by tier; then definition chunks before module chunks.
/// For a bare name (a look-up: the name is all the evidence there is) code
/// comes before tests and the definition the graph ranks highest first; in
/// a sentence the other words decide, through the fused score.
fn order_pins(pinned: &mut [(u64, SymbolTier, f32)], lookup: bool, pin: impl Fn(u64) -> Pin) {
    pinned.sort_by(|a, b| {
        let (pa, pb) = (pin(a.0), pin(b.0));
        let by_name = a.1.cmp(&b.1).then(pa.module.cmp(&pb.module));
        if lookup {
            by_name
                .then(pa.test.cmp(&pb.test))
                .then(pb.graph.total_cmp(&pa.graph))
                .then(b.2.total_cmp(&a.2))
        } else {
            by_name.then(b.2.total_cmp(&a.2))
        }
    });
}

/// A query that is one name (`Handler`, `Flask.run`, `` `parse_config` ``).
fn is_lookup(query: &str) -> bool {
    let q = query.trim().trim_matches('`');
    !q.is_empty() && !q.contains(char::is_whitespace)
}

/// Files mode: rank files by file-level fusion ([`fusion::file_score`] of
/// each file's [`file_rows`]) and give that score to each file's best
/// chunk; a file's other chunks fall behind it.
fn fuse_files(
    scored: &mut [(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<String, (usize, f32)>,
    p: &RankParams,
    churn: Option<&crate::churn::FileChurn>,
) {
    let (rows, with_dense) = rows_of(scored, chunks, file_rank, churn);
    let w = fusion::FileWeights::new(p, with_dense);
    let file_score: HashMap<&str, f32> = rows
        .iter()
        .map(|r| (r.path.as_str(), fusion::file_score(r, &w)))
        .collect();
    let mut best: HashMap<&str, (u64, f32)> = HashMap::new();
    for (id, c) in scored.iter() {
        let path = chunks[id].path.as_str();
        let e = best.entry(path).or_insert((*id, c.fused));
        if c.fused > e.1 {
            *e = (*id, c.fused);
        }
    }
    for (id, c) in scored.iter_mut() {
        let path = chunks[id].path.as_str();
        let is_best = best.get(path).is_some_and(|(b, _)| b == id);
        let f = file_score.get(path).copied().unwrap_or(0.0);
        c.fused = if is_best { f } else { f * 0.5 };
    }
}

/// What file fusion knows of each candidate file (the learner's features).
pub(crate) fn file_rows(ranked: &Ranked) -> Vec<fusion::FileRow> {
    rows_of(&ranked.scored, &ranked.chunks, &ranked.file_rank, None).0
}

/// Each candidate file's rank in every list — whole-file BM25, and each
/// chunk signal as a list of files in the order of their best chunk — its
/// priors and its pin; and whether a dense list took part.
fn rows_of(
    scored: &[(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<String, (usize, f32)>,
    churn: Option<&crate::churn::FileChurn>,
) -> (Vec<fusion::FileRow>, bool) {
    let mut rows: Vec<fusion::FileRow> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (id, c) in scored {
        let chunk = &chunks[id];
        let path = chunk.path.as_str();
        let i = *at.entry(path).or_insert_with(|| {
            rows.push(fusion::FileRow {
                prose: !chunk.language.is_code(),
                test: is_test_path(path),
                ..fusion::FileRow::new(path)
            });
            rows.len() - 1
        });
        let row = &mut rows[i];
        if let Some((_, pos)) = c.pinned {
            row.pinned = Some(row.pinned.map_or(pos, |q| q.min(pos)));
        }
        if let Some(s) = c.signals.get("pagerank") {
            row.pagerank = Some(s.score);
        }
        if c.signals.get("mention").is_some_and(|s| s.score > 0.0) {
            row.framed = true;
        }
    }
    let with_dense = scored.iter().any(|(_, c)| c.signals.get("dense").is_some());
    for row in rows.iter_mut() {
        row.ranks[0] = file_rank.get(&row.path).map(|(r, _)| *r as u32);
        if let Some(c) = churn {
            let n = c.counts(&row.path, None);
            (row.changes, row.fixes, row.recent) = (n.changes, n.fixes, n.recent);
        }
    }
    for (slot, signal) in fusion::SIGNALS.iter().enumerate().skip(1) {
        let mut order: Vec<(u32, &str)> = scored
            .iter()
            .filter_map(|(id, c)| {
                c.signals
                    .get(signal)
                    .map(|s| (s.rank, chunks[id].path.as_str()))
            })
            .collect();
        order.sort();
        let mut seen: HashSet<&str> = HashSet::new();
        for (_, path) in order {
            if seen.insert(path) {
                rows[at[path]].ranks[slot] = Some(seen.len() as u32);
            }
        }
    }
    (rows, with_dense)
}

/// File-level RRF: the whole-file BM25 list, and each chunk signal as a
/// list of files in the order of their best chunk.
fn file_rrf<'a>(
    items: &[(&'a str, &Candidate)],
    (file_rank, w_file): (&HashMap<&'a str, (usize, f32)>, f32),
    signals: &[(&str, f32)],
    p: &RankParams,
) -> HashMap<&'a str, f32> {
    let mut score: HashMap<&str, f32> = HashMap::new();
    for (path, (rank, _)) in file_rank {
        *score.entry(path).or_default() += w_file / (p.k + *rank as f32);
    }
    for &(signal, w) in signals {
        if w <= 0.0 {
            continue;
        }
        let mut order: Vec<(u32, &str)> = items
            .iter()
            .filter_map(|(path, c)| c.signals.get(signal).map(|s| (s.rank, *path)))
            .collect();
        order.sort();
        let mut seen = HashSet::new();
        for (_, path) in order {
            if seen.insert(path) {
                *score.entry(path).or_default() += w / (p.k + seen.len() as f32);
            }
        }
    }
    score
}

/// The seed files of the personalized PageRank: the best files of the
/// whole-file BM25, chunk BM25, dense and exact-symbol lists, fused by RRF.
fn seed_files(
    cands: &HashMap<u64, Candidate>,
    chunks: &HashMap<u64, StoredChunk>,
    file_rank: &HashMap<&str, (usize, f32)>,
    p: &RankParams,
) -> Vec<(String, f64)> {
    let items: Vec<(&str, &Candidate)> = cands
        .iter()
        .filter_map(|(id, c)| Some((chunks.get(id)?.path.as_str(), c)))
        .collect();
    let score = file_rrf(
        &items,
        (file_rank, p.w_file),
        &[
            ("bm25", p.w_bm25_file),
            ("dense", p.w_dense_file),
            ("exact", p.w_symbol),
        ],
        p,
    );
    let mut seeds: Vec<(String, f64)> = score
        .into_iter()
        .map(|(path, s)| (path.to_string(), s as f64))
        .collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    seeds.truncate(p.ppr_seeds);
    seeds
}

/// Files ranked by personalized PageRank over the undirected file graph,
/// jumping back to `seeds`; files the walk never reaches are left out.
fn graph_neighbourhood(store: &dyn Store, seeds: &[(String, f64)]) -> Result<Vec<(String, f32)>> {
    if seeds.is_empty() {
        return Ok(Vec::new());
    }
    let edges = store.edges()?;
    if edges.is_empty() {
        return Ok(Vec::new());
    }
    let graph = ken_graph::FileGraph::build(std::iter::empty(), &edges).undirected();
    let nodes: Vec<(ken_graph::NodeId, f64)> = seeds
        .iter()
        .filter_map(|(path, w)| graph.node(path).map(|n| (n, *w)))
        .collect();
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let ranks = graph.personalized_pagerank(&nodes, &ken_graph::RankOptions::default());
    let mut out: Vec<(String, f32)> = ranks
        .scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, s)| (graph.files[i].clone(), *s as f32))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// The indexed files (those a path filter allows) an issue points at.
fn mentioned_files(
    store: &dyn Store,
    q: &issue::IssueQuery,
    allowed: Option<&HashSet<&str>>,
) -> Result<issue::Mentions> {
    if q.frames.is_empty() && q.paths.is_empty() && q.modules.is_empty() {
        return Ok(issue::Mentions::default());
    }
    let files = store.files()?;
    let finder = issue::FileFinder::new(
        files
            .iter()
            .filter(|f| f.skip.is_none() && allowed.is_none_or(|a| a.contains(f.path.as_str())))
            .map(|f| f.path.as_str()),
    );
    Ok(issue::resolve(q, &finder))
}

/// Priors that apply to a whole file (prose, tests).
pub fn file_prior(path: &str, language: Language, p: &RankParams) -> f32 {
    let mut f = 1.0;
    if !language.is_code() {
        f *= p.prose_prior;
    }
    if is_test_path(path) {
        f *= p.test_prior;
    }
    f
}

fn overlaps(a: &StoredChunk, b: &StoredChunk) -> bool {
    a.path == b.path
        && ((a.start_line <= b.start_line && a.end_line >= b.end_line)
            || (b.start_line <= a.start_line && b.end_line >= a.end_line))
}

/// Static priors: trivial bodies, prose and tests rank lower.
fn prior(c: &StoredChunk, p: &RankParams) -> f32 {
    let trivial = if c.trivial { p.trivial_prior } else { 1.0 };
    trivial * file_prior(&c.path, c.language, p)
}

/// Resolve path globs to the set of indexed paths they allow.
fn allowed_paths(store: &dyn Store, filters: &Filters) -> Result<Option<Vec<String>>> {
    if filters.path_globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in &filters.path_globs {
        let glob = Glob::new(g)
            .map_err(|e| EngineError::bad_input(format!("bad glob `{g}` in {{--path}}: {e}")))?;
        b.add(glob);
        // `src/` or `src` means everything under it too
        if !g.contains('*') {
            let dir = format!("{}/**", g.trim_end_matches('/'));
            if let Ok(glob) = Glob::new(&dir) {
                b.add(glob);
            }
        }
    }
    let set = b
        .build()
        .map_err(|e| EngineError::bad_input(e.to_string()))?;
    Ok(Some(
        store
            .files()?
            .into_iter()
            .filter(|f| f.skip.is_none() && set.is_match(&f.path))
            .map(|f| f.path)
            .collect(),
    ))
}

const SNIPPET_LINES: usize = 8;

fn to_hit(repo: &str, commit: Option<&str>, chunk: &StoredChunk, c: &Candidate) -> Hit {
    // An exact hit inside a larger chunk (a small file kept whole) is shown
    // as the definition itself: its lines, its name.
    let narrowed = c.definition.as_ref().filter(|d| {
        !chunk.synthetic
            && d.start_line >= chunk.start_line
            && d.end_line <= chunk.end_line
            && (d.start_line, d.end_line) != (chunk.start_line, chunk.end_line)
    });
    let (start_line, end_line, symbol, kind, body): (u32, u32, Option<String>, ChunkKind, String) =
        match narrowed {
            Some(d) => {
                let skip = (d.start_line - chunk.start_line) as usize;
                let take = (d.end_line - d.start_line + 1) as usize;
                let body: Vec<&str> = chunk.text.lines().skip(skip).take(take).collect();
                (
                    d.start_line,
                    d.end_line,
                    Some(d.qualname.clone()),
                    d.kind,
                    body.join("\n"),
                )
            }
            None => (
                chunk.start_line,
                chunk.end_line,
                chunk.qualname.clone().or_else(|| chunk.symbol.clone()),
                chunk.kind,
                chunk.text.clone(),
            ),
        };
    let snippet: String = body
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take(SNIPPET_LINES)
        .map(|l| {
            if l.len() > 200 {
                &l[..l.floor_char_boundary(200)]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Hit {
        chunk_id: chunk.id,
        repo: repo.to_string(),
        path: chunk.path.clone(),
        start_line,
        end_line,
        language: chunk.language,
        kind,
        symbol,
        signature: if narrowed.is_some() {
            None
        } else {
            chunk.signature.clone()
        },
        doc: if narrowed.is_some() {
            None
        } else {
            chunk.doc.clone()
        },
        score: c.fused + if c.pinned.is_some() { 1.0 } else { 0.0 },
        pinned: c.pinned.is_some(),
        signals: c.signals.clone(),
        commit: commit.map(str::to_string),
        authors: Vec::new(),
        snippet,
        cell: chunk.cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_go_by_tier_then_definitions_before_modules_then_score() {
        let mut pins = vec![
            (1, SymbolTier::Exact, 0.9), // module chunk, best score
            (2, SymbolTier::Exact, 0.1), // the impl
            (3, SymbolTier::ExactFolded, 1.0),
            (4, SymbolTier::Exact, 0.5),
        ];
        order_pins(&mut pins, true, |id| Pin {
            module: id == 1,
            test: false,
            graph: 0.0,
        });
        let ids: Vec<u64> = pins.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![4, 2, 1, 3]);
    }

    #[test]
    fn among_equal_pins_code_beats_tests_and_the_graph_decides() {
        let mut pins = vec![
            (1, SymbolTier::Exact, 0.9), // a test, best score
            (2, SymbolTier::Exact, 0.1), // code, central in the graph
            (3, SymbolTier::Exact, 0.5), // code, peripheral
        ];
        let pin = |id| Pin {
            module: false,
            test: id == 1,
            graph: if id == 2 { 3.0 } else { 0.5 },
        };
        let mut lookup = pins.clone();
        order_pins(&mut lookup, true, pin);
        let ids: Vec<u64> = lookup.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![2, 3, 1]);
        // in a sentence the fused score (the other words) decides
        order_pins(&mut pins, false, pin);
        let ids: Vec<u64> = pins.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![1, 3, 2]);
    }

    #[test]
    fn a_lookup_is_one_name() {
        assert!(is_lookup("Handler"));
        assert!(is_lookup(" `Flask.run` "));
        assert!(!is_lookup("fix has_match for the summary printer"));
        assert!(!is_lookup("  "));
    }
}
