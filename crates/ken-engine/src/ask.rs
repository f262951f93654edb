//! `ken ask`: route the question, run its steps (search, who, history,
//! impact, status), build a context within a token budget, and answer —
//! with an LLM whose every citation is checked against that context, or,
//! offline, extractively from the best chunks.

use std::collections::{HashMap, HashSet};

use ken_core::{Filters, Hit};
use ken_embed::Embedder;
use ken_llm::{
    ChatModel, Claim, Context, ContextChunk, ContextOptions, Route, Router, Step, StepKind,
};
use std::sync::Arc;

use ken_store::Store;
use serde::Serialize;

use crate::graph::Walk;
use crate::question::Question;
use crate::repo::OpenRepo;
use crate::search::{Mode, RerankCost, SearchEnv, SearchRequest, search_store};
use crate::time::format_date;
use crate::who::{LogSearchRequest, log_search_repos, who_store};
use crate::{EngineError, Result, Settings, status};

#[derive(Debug, Clone, Default)]
pub struct AskRequest {
    pub question: String,
    pub repos: Vec<String>,
    /// Chunks retrieved per code step.
    pub limit: usize,
    /// Expand the query (LLM rewrite + HyDE when a model is configured,
    /// the repository's vocabulary otherwise).
    pub expand: bool,
    /// Another model on the configured endpoint for this question.
    pub model: Option<String>,
    /// Answer without a model even if one is configured.
    pub offline: bool,
    /// Have the chat model order the retrieved code before it answers
    /// (None: as configured, `llm_rerank`). Needs a model.
    pub rerank: Option<bool>,
}

/// One executed step, as `--json` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct StepOutcome {
    #[serde(flatten)]
    pub step: Step,
    /// How many results it produced.
    pub results: usize,
    /// Queries actually searched (expansions included).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AskResponse {
    pub question: String,
    pub route: Route,
    pub steps: Vec<StepOutcome>,
    pub answer: String,
    /// The model that wrote the answer (None: extractive, no model used).
    pub model: Option<String>,
    pub claims: Vec<Claim>,
    pub sources: Vec<Hit>,
    /// The answer was asked for again because it cited outside the context.
    pub retried: bool,
    /// The streamed first attempt was replaced by `answer`.
    pub replaced_stream: bool,
    /// What the chat model's reranking of the code cost (None: not used).
    pub rerank: Option<RerankCost>,
}

/// Notified as an answer is made: each step when it is done, each piece of
/// the answer's text as the model writes it.
pub trait AskObserver {
    fn step(&mut self, _step: &StepOutcome) {}
    /// Pieces of the answer; only called when [`AskObserver::streams`] is true.
    fn delta(&mut self, _text: &str) {}
    fn streams(&self) -> bool {
        false
    }
}

/// An observer that wants nothing.
pub struct Quiet;
impl AskObserver for Quiet {}

/// Answer a question over `repos`. `llm` None: extractive.
pub(crate) fn ask_repos(
    settings: &Settings,
    repos: &[Arc<OpenRepo>],
    req: &AskRequest,
    tickets: &[crate::tickets::TicketEvidence],
    llm: Option<&dyn ChatModel>,
    embedder: Option<&dyn Embedder>,
    observer: &mut dyn AskObserver,
) -> Result<AskResponse> {
    let known: Vec<String> = repos
        .iter()
        .flat_map(|r| r.ids.people().iter().map(|p| p.name.clone()))
        .collect();
    let mut routing = Router::new()
        .with_people(known)
        .route(&req.question, crate::time::now());
    if let Some(m) = llm
        && routing.needs_confirmation()
        && let Ok(c) = m.complete(&ken_llm::route_messages(&req.question))
        && let Some(r) = ken_llm::parse_route(&c.text)
    {
        routing.confirm(&req.question, r);
    }

    let mut g = Gathering {
        settings,
        repos,
        req,
        llm,
        embedder,
        limit: req.limit.max(1),
        reranker: llm.filter(|_| req.rerank.unwrap_or(settings.llm_rerank)),
        rerank_cost: None,
        chunks: Vec::new(),
        sources: Vec::new(),
        notes: Vec::new(),
        commit_files: HashSet::new(),
        found_paths: Vec::new(),
    };
    g.tickets(tickets)?;
    let mut outcomes: Vec<StepOutcome> = Vec::new();
    for step in &routing.steps {
        let mut out = StepOutcome {
            step: step.clone(),
            results: 0,
            queries: Vec::new(),
        };
        let topic = if step.query.trim().is_empty() {
            req.question.clone()
        } else {
            step.query.clone()
        };
        match step.kind {
            StepKind::Code | StepKind::CommitCode => g.code(step, &topic, &mut out)?,
            StepKind::People | StepKind::PeopleOf => g.people(step, &topic, &mut out)?,
            StepKind::History => g.history(step, &topic, &mut out)?,
            StepKind::Impact => g.impact(step, &topic, &mut out)?,
            StepKind::Status => g.status(&mut out)?,
            StepKind::Synthesize => {}
        }
        observer.step(&out);
        outcomes.push(out);
    }
    g.answer(routing.route, outcomes, observer)
}

/// What the steps of one question gather: the context chunks for the
/// answer, the hits they came from, the text of the steps that are not
/// code (for the extractive answer), and what later steps build on.
struct Gathering<'a> {
    settings: &'a Settings,
    repos: &'a [Arc<OpenRepo>],
    req: &'a AskRequest,
    llm: Option<&'a dyn ChatModel>,
    embedder: Option<&'a dyn Embedder>,
    limit: usize,
    /// The chat model ordering code candidates (`llm_rerank`).
    reranker: Option<&'a dyn ChatModel>,
    rerank_cost: Option<RerankCost>,
    chunks: Vec<ContextChunk>,
    sources: Vec<Hit>,
    notes: Vec<String>,
    /// Files of the commits a history step found (for a `CommitCode` step).
    commit_files: HashSet<String>,
    /// Paths of the code found so far (for a `PeopleOf` step).
    found_paths: Vec<String>,
}

impl Gathering<'_> {
    /// Hits as context, each remembered as a source (and, with `found`, as
    /// a path later steps may ask about).
    fn keep(&mut self, hits: Vec<Hit>, found: bool) -> Result<()> {
        for h in hits {
            if let Some(c) = context_chunk(self.repos, &h)? {
                if found {
                    self.found_paths.push(h.path.clone());
                }
                self.chunks.push(c);
                self.sources.push(h);
            }
        }
        Ok(())
    }

    fn text(&mut self, name: &str, lines: Vec<String>) {
        push_text(&mut self.chunks, &mut self.notes, name, lines);
    }

    /// The tickets first, then the code their commits changed.
    fn tickets(&mut self, tickets: &[crate::tickets::TicketEvidence]) -> Result<()> {
        if tickets.is_empty() {
            return Ok(());
        }
        self.text("ken-tickets.txt", crate::tickets::ticket_lines(tickets));
        let files: Vec<String> = tickets
            .iter()
            .flat_map(|t| t.commits.iter().flat_map(|c| c.files.iter().cloned()))
            .collect();
        if !files.is_empty() {
            let queries = [self.req.question.clone()];
            let hits = retrieve(
                self.settings,
                self.repos,
                &queries,
                &files,
                3,
                self.embedder,
            )?;
            self.keep(hits, true)?;
        }
        Ok(())
    }

    fn code(&mut self, step: &Step, topic: &str, out: &mut StepOutcome) -> Result<()> {
        let only: Vec<String> = if step.kind == StepKind::CommitCode {
            self.commit_files.iter().cloned().collect()
        } else {
            // a file named without its folder (`sizes.py`) is found in any
            step.paths
                .iter()
                .flat_map(|p| {
                    let anywhere =
                        (!p.contains('/') && !p.contains('*')).then(|| format!("**/{p}"));
                    std::iter::once(p.clone()).chain(anywhere)
                })
                .collect()
        };
        if step.kind == StepKind::CommitCode && only.is_empty() {
            return Ok(());
        }
        let queries = expand(self.repos, topic, self.req.expand, self.llm);
        out.queries = queries.clone();
        let limit = self.limit;
        let share = self.settings.context_file_share;
        // With a reranker, twice as many candidates, of which it keeps the
        // best; with a cap per file, enough for other files to fill it.
        let pool = if self.reranker.is_some() {
            (limit * 2).max(limit + 4).min(limit.max(30))
        } else if share < 1.0 {
            limit * crate::context::POOL_FACTOR
        } else {
            limit
        };
        let mut hits = retrieve(
            self.settings,
            self.repos,
            &queries,
            &only,
            pool,
            self.embedder,
        )?;
        if let Some(m) = self.reranker {
            llm_rerank(m, topic, &mut hits, &mut self.rerank_cost);
        }
        let per_file = crate::context::per_file(limit, share);
        let mut hits = crate::context::diversify(hits, limit, per_file, &self.req.question);
        hits.truncate(limit);
        out.results = hits.len();
        self.keep(hits, true)
    }

    fn people(&mut self, step: &Step, topic: &str, out: &mut StepOutcome) -> Result<()> {
        let what = match self.found_paths.first() {
            Some(p) if step.kind == StepKind::PeopleOf => p.clone(),
            _ => topic.to_string(),
        };
        let settings = self.settings;
        let mut lines = vec![format!("People who know {what}:")];
        let question = Question::read(&what, settings.rank.issue_words);
        for r in self.repos {
            let vectors = match self.embedder {
                Some(e) => r.vectors(e.id())?,
                None => None,
            };
            let template = r.template_for(&question, &settings.rank)?;
            let env = SearchEnv {
                rank: &settings.rank,
                embedder: self.embedder,
                vectors: vectors.as_deref(),
                identities: None,
                churn: None,
                template: template.as_deref(),
            };
            let w = who_store(&*r.store, &r.ids, &question, r.now(), 5, env)?;
            out.results += w.people.len();
            for p in w.people {
                let ev: Vec<String> = p
                    .evidence
                    .iter()
                    .take(3)
                    .map(|e| {
                        format!(
                            "{} ({:.0}% of lines, last {})",
                            e.symbol.as_deref().unwrap_or(&e.path),
                            e.share * 100.0,
                            e.when.map(format_date).unwrap_or_default()
                        )
                    })
                    .collect();
                lines.push(format!("{}. {} — {}", p.rank, p.name, ev.join("; ")));
            }
        }
        self.text("ken-who.txt", lines);
        Ok(())
    }

    fn history(&mut self, step: &Step, topic: &str, out: &mut StepOutcome) -> Result<()> {
        let lr = LogSearchRequest {
            query: if step.people.is_empty() && step.time.is_none() {
                topic.to_string()
            } else {
                String::new()
            },
            repos: self.req.repos.clone(),
            limit: 10,
            author: step.people.first().cloned(),
            since: step.time.as_ref().map(|t| t.since),
            until: step.time.as_ref().map(|t| t.until),
        };
        let hits = log_search_repos(self.repos, &lr)?;
        out.results = hits.len();
        let mut lines = vec![format!(
            "Commits{}:",
            step.time
                .as_ref()
                .map(|t| format!(" {} to {}", t.from_date, t.to_date))
                .unwrap_or_default()
        )];
        for h in hits {
            self.commit_files.extend(h.files.iter().cloned());
            lines.push(format!(
                "{} {} {} — {} ({})",
                &h.sha[..h.sha.len().min(10)],
                format_date(h.when),
                h.author,
                h.summary,
                h.files.join(", ")
            ));
        }
        self.text("ken-history.txt", lines);
        Ok(())
    }

    fn impact(&mut self, step: &Step, topic: &str, out: &mut StepOutcome) -> Result<()> {
        let symbols: Vec<String> = if step.symbols.is_empty() {
            crate::question::identifiers(topic)
                .into_iter()
                .filter(|i| i.strong)
                .map(|i| i.text)
                .collect()
        } else {
            step.symbols.clone()
        };
        let mut lines = Vec::new();
        for r in self.repos {
            let graph = r.graph()?;
            for s in &symbols {
                let res = graph.structure(s, Walk::Impact { max_depth: 3 });
                out.results += res.results.len();
                lines.push(format!(
                    "What depends on {s} ({} definitions):",
                    res.candidates.len()
                ));
                for x in res.results.iter().take(25) {
                    lines.push(format!(
                        "- {} in {}:{}-{} (depth {})",
                        x.symbol, x.path, x.start_line, x.end_line, x.depth
                    ));
                }
            }
        }
        if lines.is_empty() {
            lines.push("No symbol named in the question to follow through the graph.".into());
        }
        self.text("ken-impact.txt", lines);
        // and the code of the symbols themselves
        let limit = self.limit.min(4);
        let hits = retrieve(
            self.settings,
            self.repos,
            &symbols,
            &[],
            limit,
            self.embedder,
        )?;
        self.keep(hits, false)
    }

    fn status(&mut self, out: &mut StepOutcome) -> Result<()> {
        let st = status::status_repos(self.repos, self.settings.embed_text)?;
        out.results = st.len();
        let lines: Vec<String> = st
            .iter()
            .map(|r| {
                format!(
                    "{}: {} at {} ({} files, {} chunks{}){}",
                    r.name,
                    if r.state.worktree {
                        "working tree"
                    } else {
                        "commit"
                    },
                    r.state.commit.as_deref().unwrap_or("?"),
                    r.stats.files,
                    r.stats.chunks,
                    r.embeddings
                        .first()
                        .map(|e| format!(", {}/{} embedded", e.embedded, e.chunks))
                        .unwrap_or_default(),
                    r.state
                        .indexed_at
                        .map(|t| format!(", indexed {}", format_date(t)))
                        .unwrap_or_default()
                )
            })
            .collect();
        self.text("ken-status.txt", lines);
        Ok(())
    }

    /// The answer from what was gathered: the chat model's (streamed to
    /// `observer` when it takes a stream) or, without one, extractive;
    /// every claim checked against the context either way.
    fn answer(
        self,
        route: Route,
        steps: Vec<StepOutcome>,
        observer: &mut dyn AskObserver,
    ) -> Result<AskResponse> {
        let context = Context::build(
            &self.chunks,
            &ContextOptions {
                budget_tokens: self.settings.context_tokens,
                ..ContextOptions::default()
            },
        );
        let (answer, model, claims, retried, replaced) = match self.llm {
            Some(m) => {
                let streams = observer.streams();
                let mut forward = |text: &str| observer.delta(text);
                let on_delta: Option<&mut dyn FnMut(&str)> =
                    if streams { Some(&mut forward) } else { None };
                let a = ken_llm::ask(m, &self.req.question, &context, on_delta).map_err(|e| {
                    if e.is_configuration() {
                        EngineError::bad_input(e.to_string())
                    } else {
                        EngineError::unavailable(e.to_string())
                    }
                })?;
                (a.text, Some(a.model), a.claims, a.retried, a.used_retry)
            }
            None => {
                let text = extractive(&self.req.question, &self.sources, &self.notes);
                let checked = ken_llm::validate(&text, &context.sources());
                (text, None, checked.claims, false, false)
            }
        };
        let mut claims = claims;
        number_cells(self.repos, &self.sources, &mut claims)?;
        Ok(AskResponse {
            question: self.req.question.clone(),
            route,
            steps,
            answer,
            model,
            claims,
            sources: self.sources,
            retried,
            replaced_stream: replaced,
            rerank: self.rerank_cost,
        })
    }
}

/// Orders `hits` by the chat model's listwise ranking of their code, and
/// adds what it cost to `cost`. A failed call or an answer naming no hit
/// leaves the order as it was (a failed call adds no cost).
fn llm_rerank(
    model: &dyn ChatModel,
    question: &str,
    hits: &mut Vec<Hit>,
    cost: &mut Option<RerankCost>,
) {
    if hits.len() < 2 {
        return;
    }
    let started = std::time::Instant::now();
    let passages: Vec<ken_llm::Passage> = hits
        .iter()
        .map(|h| ken_llm::Passage {
            label: format!("{}:{}-{}", h.path, h.start_line, h.end_line),
            text: h.snippet.clone(),
        })
        .collect();
    // A failed call reranks nothing and is not reported as a reranking
    // (no `rerank` in `--json` means the retrieval order was kept).
    let Ok(answer) = model.complete(&ken_llm::rerank_messages(question, &passages)) else {
        return;
    };
    let c = cost.get_or_insert_with(|| RerankCost {
        model: model.model_name().to_string(),
        documents: 0,
        ms: 0,
        tokens: None,
    });
    c.documents += hits.len();
    if let Some(u) = &answer.usage {
        *c.tokens.get_or_insert(0) += u64::from(u.total_tokens);
    }
    if let Some(order) = ken_llm::parse_ranking(&answer.text, hits.len()) {
        let mut taken: Vec<Option<Hit>> = hits.drain(..).map(Some).collect();
        hits.extend(order.into_iter().filter_map(|i| taken[i].take()));
    }
    c.ms += started.elapsed().as_millis() as u64;
}

/// A text block of step results, given to the model as a citable source.
fn push_text(
    chunks: &mut Vec<ContextChunk>,
    notes: &mut Vec<String>,
    name: &str,
    lines: Vec<String>,
) {
    let text = lines.join("\n");
    notes.push(text.clone());
    chunks.push(ContextChunk {
        repo: "ken".into(),
        path: name.into(),
        start_line: 1,
        end_line: lines.len().max(1) as u32,
        symbol: None,
        language: ken_core::Language::Text,
        authors: Vec::new(),
        text,
    });
}

/// The queries to search: the question, and its expansions.
fn expand(
    repos: &[Arc<OpenRepo>],
    question: &str,
    enabled: bool,
    llm: Option<&dyn ChatModel>,
) -> Vec<String> {
    let mut out = vec![question.to_string()];
    // Offline expansion from the repository's vocabulary lowered file
    // MRR@10 on commits_dev from 0.717 to 0.632 (lexical, BENCHMARKS.md §1):
    // it is measured (`ken eval --expand`), not used. With a
    // model, the question is rewritten into the repository's terms and a
    // hypothetical snippet (HyDE) is searched too.
    let Some(m) = llm.filter(|_| enabled) else {
        return out;
    };
    let vocab = vocabulary(repos, question);
    if let Ok(c) = m.complete(&ken_llm::rewrite_messages(question, &vocab))
        && let Some(q) = ken_llm::parse_rewrite(&c.text)
    {
        out.push(q);
    }
    if let Ok(c) = m.complete(&ken_llm::hyde_messages(question, None, &vocab))
        && let Some(code) = ken_llm::parse_hyde(&c.text)
    {
        out.push(code);
    }
    out
}

/// Names from the repositories' symbol tables that share words with the question.
fn vocabulary(repos: &[Arc<OpenRepo>], question: &str) -> Vec<String> {
    crate::expand::vocabulary_expansion(repos.iter().map(|r| &*r.store as &dyn Store), question, 40)
}

/// Search every repository with every query; fuse the lists by RRF.
fn retrieve(
    settings: &Settings,
    repos: &[Arc<OpenRepo>],
    queries: &[String],
    only_paths: &[String],
    limit: usize,
    embedder: Option<&dyn Embedder>,
) -> Result<Vec<Hit>> {
    let mut lists = Vec::new();
    let questions: Vec<Question> = queries
        .iter()
        .map(|q| Question::read(q, settings.rank.issue_words))
        .collect();
    for r in repos {
        let vectors = match embedder {
            Some(e) => r.vectors(e.id())?,
            None => None,
        };
        for q in &questions {
            let rank = settings.rank.for_question(&r.state, q);
            let churn = r.churn(&rank)?;
            let template = r.template_for(q, &rank)?;
            let env = SearchEnv {
                rank: &rank,
                embedder,
                vectors: vectors.as_deref(),
                identities: Some(&r.ids),
                churn: churn.as_deref(),
                template: template.as_deref(),
            };
            let filters = Filters {
                path_globs: only_paths.to_vec(),
                ..Filters::default()
            };
            let req = SearchRequest {
                query: q.text.clone(),
                limit,
                filters,
                files: false,
                mode: Mode::Hybrid,
            };
            let commit = r.state.commit.as_deref();
            let hits = search_store(&*r.store, &r.name, commit, &req, q, env)?.hits;
            lists.push(
                hits.into_iter()
                    .map(|h| {
                        let pinned = h.pinned;
                        ((r.name.clone(), h.chunk_id), h, pinned)
                    })
                    .collect::<Vec<_>>(),
            );
        }
    }
    Ok(crate::fusion::fuse_lists(lists, settings.rank.k)
        .into_iter()
        .take(limit)
        .map(|(_, h)| h)
        .collect())
}

/// Give each citation into a notebook the cell its first line is in: a
/// line number of the code view means little to a reader of the `.ipynb`.
fn number_cells(repos: &[Arc<OpenRepo>], sources: &[Hit], claims: &mut [Claim]) -> Result<()> {
    let mut cells: HashMap<String, Vec<(u32, u32, u32)>> = HashMap::new();
    for citation in claims.iter_mut().flat_map(|c| c.citations.iter_mut()) {
        let Some(hit) = sources
            .iter()
            .find(|h| h.path == citation.path && h.cell.is_some())
        else {
            continue;
        };
        if !cells.contains_key(&citation.path) {
            let Some(r) = repos.iter().find(|r| r.name == hit.repo) else {
                continue;
            };
            let ranges = r
                .store
                .chunks_of_file(&citation.path)?
                .into_iter()
                .filter_map(|c| c.cell.map(|n| (c.start_line, c.end_line, n)))
                .collect();
            cells.insert(citation.path.clone(), ranges);
        }
        citation.cell = cells[&citation.path]
            .iter()
            .find(|(start, end, _)| (*start..=*end).contains(&citation.start_line))
            .map(|(_, _, n)| *n);
    }
    Ok(())
}

/// The text of a hit's lines, for the model.
fn context_chunk(repos: &[Arc<OpenRepo>], h: &Hit) -> Result<Option<ContextChunk>> {
    match repos.iter().find(|r| r.name == h.repo) {
        Some(r) => crate::context::chunk_of(&*r.store, h),
        None => Ok(None),
    }
}

/// The offline answer: what retrieval found, each item with its location.
fn extractive(question: &str, sources: &[Hit], notes: &[String]) -> String {
    let mut out = String::new();
    for n in notes {
        out.push_str(n);
        out.push_str("\n\n");
    }
    if !sources.is_empty() {
        out.push_str(&format!(
            "The code most relevant to \"{}\":\n",
            question.trim()
        ));
        for h in sources.iter().take(6) {
            let name = h.symbol.as_deref().unwrap_or(&h.path);
            let mut line = format!("- `{name}` ({}) in {}", h.kind, h.path);
            if let Some(sig) = &h.signature
                && !sig.is_empty()
            {
                line.push_str(&format!(": `{}`", sig.trim()));
            }
            if let Some(doc) = h
                .doc
                .as_deref()
                .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
            {
                line.push_str(&format!(" — {}", doc.trim()));
            }
            if let Some(a) = h.authors.first() {
                line.push_str(&format!(" (mostly by {})", a.name));
            }
            line.push_str(&format!(" [{}:{}-{}]\n", h.path, h.start_line, h.end_line));
            out.push_str(&line);
        }
    }
    out.push_str("\n(No language model is configured — set KEN_LLM_BASE_URL and KEN_LLM_MODEL for a written answer. This answer lists what retrieval found.)");
    out
}
