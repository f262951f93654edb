//! The `/api/v1` routes: each parses its request, checks the caller's
//! scope, runs the engine off the async threads and answers a wire shape.
//! The OpenAPI document is generated from these handlers' annotations.

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use ken_engine::FilterSpec;
use ken_engine::IndexJob;
use ken_engine::LogSearchRequest;
use ken_engine::Walk;
use ken_engine::{AskObserver, AskRequest, StepOutcome};
use ken_engine::{Mode, SearchRequest};
use ken_engine::{Principal, Scope};
use serde::Deserialize;
use tokio::sync::mpsc;
use utoipa::{IntoParams, ToSchema};

use super::App;
use super::error::{ApiError, ApiResult, J, P, Q, RawBody, blocking, waiting};
use crate::wire;

/// A count from the query: `default` when absent, else within 1..=`max`.
fn count(name: &str, v: Option<usize>, default: usize, max: usize) -> ApiResult<usize> {
    match v {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::bad_request(format!(
            "{name} must be between 1 and {max}, not {n}"
        ))),
    }
}

/// A JSON number that is a whole number (`8` or `8.0`, as JSON Schema's `integer`).
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let v: Option<serde_json::Number> = Deserialize::deserialize(d)?;
    let Some(n) = v else { return Ok(None) };
    if let Some(u) = n.as_u64() {
        return Ok(Some(u as usize));
    }
    match n.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e15 => Ok(Some(f as usize)),
        _ => Err(serde::de::Error::custom(format!("{n} is not a count"))),
    }
}

/// Path globs over the API take `*`, `**` and `?` (no classes or braces).
fn glob(v: &Option<String>) -> ApiResult<Vec<String>> {
    match v.as_deref().map(str::trim).filter(|g| !g.is_empty()) {
        None => Ok(Vec::new()),
        Some(g) if g.contains(['[', ']', '{', '}', '\\']) => Err(ApiError::bad_request(format!(
            "path `{g}`: globs here take *, ** and ? only"
        ))),
        Some(g) => Ok(vec![g.to_string()]),
    }
}

/// `hybrid`, `lexical` or `semantic`.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeParam {
    Hybrid,
    Lexical,
    Semantic,
}

/// `a,b` → `[a, b]`.
fn list(v: &Option<String>) -> Vec<String> {
    v.iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// What to look for: words, an identifier or a question.
    #[param(min_length = 1, pattern = r"\S")]
    q: String,
    /// Number of results (1–1000; default 10).
    #[param(minimum = 1, maximum = 1000)]
    n: Option<usize>,
    /// Only these repositories (comma-separated names).
    repo: Option<String>,
    /// Only the indexes following these branches (comma-separated; a
    /// repository's `branches`; `branch:NAME` in `q` does the same).
    branch: Option<String>,
    /// Only these languages (comma-separated: `python`, `rust`, `ts`...).
    lang: Option<String>,
    /// Only paths matching this glob (`src/**/*.py`, `crates/core`): `*`,
    /// `**` and `?`.
    #[param(pattern = r"^[^\[\]{}\\]*$")]
    path: Option<String>,
    /// Only code last changed by this person (any alias).
    author: Option<String>,
    /// Only code changed since a date (2024-05-01), an age (2w: h, d, w, m, y),
    /// `now`, `today`, `yesterday` or seconds since the epoch.
    #[param(
        pattern = r"^(|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18})$"
    )]
    since: Option<String>,
    /// Only code changed until a date or age (as `since`).
    #[param(
        pattern = r"^(|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18})$"
    )]
    until: Option<String>,
    /// One result per file.
    files: Option<bool>,
    /// `hybrid` (default), `lexical` or `semantic`.
    mode: Option<ModeParam>,
    /// Add each snippet highlighted as HTML (`snippet_html`).
    highlight: Option<bool>,
}

/// Ranked code for a query, as `ken search --json`.
#[utoipa::path(get, path = "/api/v1/search", tag = "code", params(SearchParams),
    responses((status = 200, description = "ranked results", body = wire::Search)))]
pub async fn search(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<SearchParams>,
) -> ApiResult<Json<wire::Search>> {
    let filters = FilterSpec {
        repos: list(&p.repo),
        branches: list(&p.branch),
        langs: list(&p.lang),
        paths: glob(&p.path)?,
        author: p.author,
        since: p.since,
        until: p.until,
    };
    let mode = match p.mode.unwrap_or(ModeParam::Hybrid) {
        ModeParam::Hybrid => Mode::Hybrid,
        ModeParam::Lexical => Mode::Lexical,
        ModeParam::Semantic => Mode::Semantic,
    };
    let n = count("n", p.n, 10, 1000)?;
    let highlight = p.highlight.unwrap_or(false);
    let engine = app.engine.clone();
    let resp = blocking(&app, move || {
        let req = SearchRequest::parse(
            &p.q,
            n,
            &filters,
            p.files.unwrap_or(false),
            mode,
            ken_engine::now(),
        )?;
        engine.search(&req, &who.access)
    })
    .await?;
    let mut out = wire::Search::from(&resp);
    if highlight {
        out.results = out
            .results
            .into_iter()
            .map(wire::SearchResult::highlighted)
            .collect();
    }
    Ok(Json(out))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    /// The question.
    #[schema(min_length = 1, pattern = r"\S")]
    question: String,
    /// Only this repository (or comma-separated names).
    repo: Option<String>,
    /// Chunks retrieved per search step (1–50; default 8).
    #[schema(minimum = 1, maximum = 50, value_type = Option<u32>)]
    #[serde(default, deserialize_with = "whole_number")]
    n: Option<usize>,
    /// Answer without the model even if one is configured.
    offline: Option<bool>,
    /// Have the chat model order the retrieved code before it answers
    /// (default: the server's `llm_rerank`).
    rerank: Option<bool>,
}

/// Streams an answer's steps and text to the SSE response.
struct Streamer {
    tx: mpsc::Sender<Event>,
}

impl Streamer {
    fn send(&self, name: &str, data: &impl serde::Serialize) {
        let json = serde_json::to_string(data).unwrap_or_default();
        // a client that went away stops nothing: the answer is finished anyway
        let _ = self
            .tx
            .blocking_send(Event::default().event(name).data(json));
    }
}

impl AskObserver for Streamer {
    fn step(&mut self, step: &StepOutcome) {
        self.send("step", &wire::AskStep::from(step));
    }
    fn delta(&mut self, text: &str) {
        self.send("token", &serde_json::json!({ "text": text }));
    }
    fn streams(&self) -> bool {
        true
    }
}

/// An answer with checked citations: Server-Sent Events (`step`, `token`,
/// `claim`, `done` with the whole answer, or `error`), or the `ken ask
/// --json` object when the client accepts only `application/json`.
#[utoipa::path(post, path = "/api/v1/ask", tag = "code", request_body = AskBody,
    responses(
        (status = 200, description = "the answer", content(
            (wire::Ask = "application/json"),
            (String = "text/event-stream"),
        )),
    ))]
pub async fn ask(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    headers: HeaderMap,
    J(body): J<AskBody>,
) -> ApiResult<Response> {
    if body.question.trim().is_empty() {
        return Err(ApiError::bad_request("no question given"));
    }
    let req = AskRequest {
        question: body.question,
        repos: list(&body.repo),
        limit: count("n", body.n, ken_engine::ASK_LIMIT, 50)?,
        expand: true,
        model: None,
        offline: body.offline.unwrap_or(false),
        rerank: body.rerank,
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let json_only = accept.contains("application/json") && !accept.contains("text/event-stream");
    let engine = app.engine.clone();
    if json_only {
        let r = waiting(move || engine.ask(&req, &who.access, &mut ken_engine::Quiet)).await?;
        return Ok(Json(wire::Ask::from(&r)).into_response());
    }
    let (tx, rx) = mpsc::channel::<Event>(256);
    tokio::task::spawn_blocking(move || {
        let mut s = Streamer { tx };
        match engine.ask(&req, &who.access, &mut s) {
            Ok(r) => {
                let w = wire::Ask::from(&r);
                for c in &w.claims {
                    s.send("claim", c);
                }
                s.send("done", &w);
            }
            Err(e) => s.send(
                "error",
                &wire::ErrorBody::from_engine(&e, ken_engine::Edge::Http),
            ),
        }
    });
    let stream = tokio_stream::StreamExt::map(
        tokio_stream::wrappers::ReceiverStream::new(rx),
        Ok::<Event, Infallible>,
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WhoParams {
    /// A topic ("payment retries"), a path or a symbol.
    #[param(min_length = 1, pattern = r"\S")]
    q: String,
    /// Only these repositories (comma-separated).
    repo: Option<String>,
    /// Number of people (1–100; default 5).
    #[param(minimum = 1, maximum = 100)]
    n: Option<usize>,
}

/// People who know the code a topic, path or symbol names, with evidence.
#[utoipa::path(get, path = "/api/v1/who", tag = "people", params(WhoParams),
    responses((status = 200, description = "people, best first", body = wire::Who)))]
pub async fn who(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<WhoParams>,
) -> ApiResult<Json<wire::Who>> {
    let n = count("n", p.n, 5, 100)?;
    let engine = app.engine.clone();
    let r = blocking(&app, move || {
        engine.who(&p.q, &list(&p.repo), n, &who.access)
    })
    .await?;
    Ok(Json(wire::Who::from(&r)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PeopleParams {
    /// Only these repositories (comma-separated).
    repo: Option<String>,
    /// Include bots.
    bots: Option<bool>,
}

/// People seen in the history, with every alias.
#[utoipa::path(get, path = "/api/v1/people", tag = "people", params(PeopleParams),
    responses((status = 200, description = "people per repository", body = wire::People)))]
pub async fn people(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<PeopleParams>,
) -> ApiResult<Json<wire::People>> {
    let engine = app.engine.clone();
    let all = blocking(&app, move || {
        engine.people(&list(&p.repo), p.bots.unwrap_or(false), &who.access)
    })
    .await?;
    Ok(Json(wire::People::from_engine(&all)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogParams {
    /// Words to look for in messages and changed paths (empty: newest first).
    q: Option<String>,
    /// Only these repositories (comma-separated).
    repo: Option<String>,
    /// Only commits by this person (any alias).
    author: Option<String>,
    /// Since a date or an age (as `since` of search).
    #[param(
        pattern = r"^(|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18})$"
    )]
    since: Option<String>,
    /// Until a date or an age.
    #[param(
        pattern = r"^(|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18})$"
    )]
    until: Option<String>,
    /// Number of commits (1–1000; default 10).
    #[param(minimum = 1, maximum = 1000)]
    n: Option<usize>,
}

/// Commits by words in their messages and changed paths.
#[utoipa::path(get, path = "/api/v1/log", tag = "people", params(LogParams),
    responses((status = 200, description = "commits", body = wire::LogSearch)))]
pub async fn log(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<LogParams>,
) -> ApiResult<Json<wire::LogSearch>> {
    let n = count("n", p.n, 10, 1000)?;
    let engine = app.engine.clone();
    let query = p.q.clone().unwrap_or_default();
    let q2 = query.clone();
    let hits = blocking(&app, move || {
        let req = LogSearchRequest::parse(
            &q2,
            list(&p.repo),
            n,
            p.author,
            p.since.as_deref(),
            p.until.as_deref(),
            ken_engine::now(),
        )?;
        engine.log_search(&req, &who.access)
    })
    .await?;
    Ok(Json(wire::LogSearch::from_engine(&query, &hits)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SymbolParams {
    /// `name`, `Class.method`, or `path:name` to pick one of several.
    #[param(min_length = 1, pattern = r"\S")]
    symbol: String,
    /// The repository (needed when several are indexed).
    repo: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImpactParams {
    /// `name`, `Class.method`, or `path:name` to pick one of several.
    #[param(min_length = 1, pattern = r"\S")]
    symbol: String,
    /// The repository (needed when several are indexed).
    repo: Option<String>,
    /// How many references away to follow (1–50, default 5).
    #[param(minimum = 1, maximum = 50)]
    depth: Option<u32>,
}

async fn structure(
    app: App,
    who: Principal,
    p: SymbolParams,
    walk: Walk,
) -> ApiResult<Json<wire::Structure>> {
    let engine = app.engine.clone();
    let a = blocking(&app, move || {
        engine.structure(&p.symbol, p.repo.as_deref(), walk, &who.access)
    })
    .await?;
    Ok(Json(wire::Structure::from_engine(&a)))
}

/// Who calls a symbol (direct callers).
#[utoipa::path(get, path = "/api/v1/callers", tag = "structure", params(SymbolParams),
    responses((status = 200, description = "callers", body = wire::Structure)))]
pub async fn callers(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<SymbolParams>,
) -> ApiResult<Json<wire::Structure>> {
    structure(app, who, p, Walk::Callers).await
}

/// What a symbol calls.
#[utoipa::path(get, path = "/api/v1/callees", tag = "structure", params(SymbolParams),
    responses((status = 200, description = "callees", body = wire::Structure)))]
pub async fn callees(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<SymbolParams>,
) -> ApiResult<Json<wire::Structure>> {
    structure(app, who, p, Walk::Callees).await
}

/// What depends on a symbol, transitively, with the chain of references.
#[utoipa::path(get, path = "/api/v1/impact", tag = "structure", params(ImpactParams),
    responses((status = 200, description = "dependents", body = wire::Structure)))]
pub async fn impact(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<ImpactParams>,
) -> ApiResult<Json<wire::Structure>> {
    let depth = count("depth", p.depth.map(|d| d as usize), 5, 50)? as u32;
    let p = SymbolParams {
        symbol: p.symbol,
        repo: p.repo,
    };
    structure(app, who, p, Walk::Impact { max_depth: depth }).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindParams {
    /// A definition's name or qualified name.
    #[param(min_length = 1, pattern = r"\S")]
    q: String,
    /// Only these repositories (comma-separated).
    repo: Option<String>,
    /// Most definitions (1–200; default 20).
    #[param(minimum = 1, maximum = 200)]
    n: Option<usize>,
}

/// Definitions by name: case-exact matches first.
#[utoipa::path(get, path = "/api/v1/symbols", tag = "code", params(FindParams),
    responses((status = 200, description = "definitions", body = wire::Symbols)))]
pub async fn symbols(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<FindParams>,
) -> ApiResult<Json<wire::Symbols>> {
    let n = count("n", p.n, 20, 200)?;
    let engine = app.engine.clone();
    let q = p.q.clone();
    let hits = blocking(&app, move || {
        engine.find_symbol(&p.q, &list(&p.repo), n, &who.access)
    })
    .await?;
    Ok(Json(wire::Symbols::from_engine(&q, &hits)))
}

/// Indexed repositories and their status.
#[utoipa::path(get, path = "/api/v1/repos", tag = "repos",
    responses((status = 200, description = "repositories", body = wire::Repos)))]
pub async fn repos(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<wire::Repos>> {
    let engine = app.engine.clone();
    let access = who.access.clone();
    let st = blocking(&app, move || engine.status(&[], &access)).await?;
    Ok(Json(wire::Repos {
        repos: st.iter().map(|r| wire::Repo::for_caller(r, &who)).collect(),
    }))
}

/// One repository's status.
#[utoipa::path(get, path = "/api/v1/repos/{name}", tag = "repos",
    params(("name" = String, Path, description = "the repository's name (`pallets%2Fflask` for `pallets/flask`)")),
    responses((status = 200, description = "the repository", body = wire::Repo)))]
pub async fn repo(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(name): P<String>,
) -> ApiResult<Json<wire::Repo>> {
    let engine = app.engine.clone();
    let access = who.access.clone();
    let st = blocking(&app, move || engine.status(&[name], &access)).await?;
    st.first()
        .map(|r| Json(wire::Repo::for_caller(r, &who)))
        .ok_or_else(|| ApiError::not_found("no such repository"))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FileParams {
    /// The file's path in the repository.
    #[param(min_length = 1)]
    path: String,
    /// First line (1-based; default 1).
    #[param(minimum = 1)]
    start: Option<u32>,
    /// Last line (inclusive; default the end, at most 2000 lines from the start).
    #[param(minimum = 1)]
    end: Option<u32>,
    /// Add the lines highlighted as HTML (`lines_html`).
    highlight: Option<bool>,
}

/// Lines of a file at the indexed commit.
#[utoipa::path(get, path = "/api/v1/repos/{name}/file", tag = "repos",
    params(("name" = String, Path, description = "the repository's name"), FileParams),
    responses((status = 200, description = "the lines", body = wire::FileRange)))]
pub async fn file(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(name): P<String>,
    Q(p): Q<FileParams>,
) -> ApiResult<Json<wire::FileRange>> {
    let engine = app.engine.clone();
    let r = blocking(&app, move || {
        engine.read_range(
            &name,
            &p.path,
            p.start,
            p.end,
            p.highlight.unwrap_or(false),
            &who.access,
        )
    })
    .await?;
    Ok(Json(wire::FileRange::from(&r)))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexBody {
    /// A commit, branch or tag (default: what the source has checked out or its HEAD).
    rev: Option<String>,
    /// A clone URL, for a repository not indexed yet (https or ssh).
    source: Option<String>,
}

/// Queue an index job (scope `index`): 202 with `{"job"}`; follow it at `/api/v1/jobs/{id}`.
#[utoipa::path(post, path = "/api/v1/repos/{name}/index", tag = "repos",
    params(("name" = String, Path, description = "the repository's name")),
    request_body(content = Option<IndexBody>, content_type = "application/json"),
    responses((status = 202, description = "queued (or already queued for this commit)", body = wire::Queued)))]
pub async fn index(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(name): P<String>,
    RawBody(raw): RawBody,
) -> ApiResult<Response> {
    let bad = |e: serde_json::Error| ApiError::bad_request(format!("invalid JSON body: {e}"));
    let body: IndexBody = if raw.iter().all(u8::is_ascii_whitespace) {
        IndexBody::default()
    } else {
        match serde_json::from_slice::<serde_json::Value>(&raw).map_err(bad)? {
            serde_json::Value::Null => IndexBody::default(),
            v @ serde_json::Value::Object(_) => serde_json::from_value(v).map_err(bad)?,
            _ => return Err(ApiError::bad_request("the body must be a JSON object")),
        }
    };
    who.require(Scope::Index)?;
    let engine = app.engine.clone();
    let (job, new) = blocking(&app, move || {
        engine.enqueue_index(
            IndexJob {
                repo: name,
                source: body.source,
                rev: body.rev,
                origin: "api".into(),
                dedupe: None,
            },
            &who,
        )
    })
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(wire::Queued {
            job: job.id.clone(),
            new,
            status: wire::Job::from(&job),
        }),
    )
        .into_response())
}

/// An index job's state and progress.
#[utoipa::path(get, path = "/api/v1/jobs/{id}", tag = "repos",
    params(("id" = String, Path, description = "the job's id")),
    responses((status = 200, description = "the job", body = wire::Job)))]
pub async fn job(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(id): P<String>,
) -> ApiResult<Json<wire::Job>> {
    let engine = app.engine.clone();
    let j = blocking(&app, move || engine.job(&id, &who.access)).await?;
    Ok(Json(wire::Job::from(&j)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobsParams {
    /// Most jobs (1–1000; default 20).
    #[param(minimum = 1, maximum = 1000)]
    n: Option<usize>,
}

/// The newest index jobs.
#[utoipa::path(get, path = "/api/v1/jobs", tag = "repos", params(JobsParams),
    responses((status = 200, description = "jobs, newest first", body = wire::Jobs)))]
pub async fn jobs(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<JobsParams>,
) -> ApiResult<Json<wire::Jobs>> {
    let n = count("n", p.n, 20, 1000)?;
    let engine = app.engine.clone();
    let list = blocking(&app, move || engine.jobs(n, &who.access)).await?;
    Ok(Json(wire::Jobs {
        jobs: list.iter().map(wire::Job::from).collect(),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BlameParams {
    /// The file's path in the repository.
    #[param(min_length = 1)]
    path: String,
}

/// Who last changed each range of a file at the indexed commit.
#[utoipa::path(get, path = "/api/v1/repos/{name}/blame", tag = "people",
    params(("name" = String, Path, description = "the repository's name"), BlameParams),
    responses((status = 200, description = "ranges with their commits", body = wire::Blame)))]
pub async fn blame(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(name): P<String>,
    Q(p): Q<BlameParams>,
) -> ApiResult<Json<wire::Blame>> {
    let engine = app.engine.clone();
    let b = blocking(&app, move || engine.blame(&name, &p.path, &who.access)).await?;
    Ok(Json(wire::Blame::from(&b)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PersonParams {
    /// The repository (needed when several are indexed).
    repo: Option<String>,
}

/// A person: aliases, the directories whose lines they last changed most,
/// recent commits.
#[utoipa::path(get, path = "/api/v1/people/{id}", tag = "people",
    params(("id" = String, Path, description = "a person's id, name, email or handle"), PersonParams),
    responses((status = 200, description = "the person", body = wire::PersonPage)))]
pub async fn person(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(id): P<String>,
    Q(p): Q<PersonParams>,
) -> ApiResult<Json<wire::PersonPage>> {
    let engine = app.engine.clone();
    let v = blocking(&app, move || {
        engine.person(&id, p.repo.as_deref(), &who.access)
    })
    .await?;
    Ok(Json(wire::PersonPage::from(&v)))
}

/// Liveness; needs no token.
#[utoipa::path(get, path = "/healthz", tag = "server",
    responses((status = 200, description = "alive", body = wire::Health)))]
pub async fn healthz() -> Json<wire::Health> {
    Json(wire::Health {
        ok: true,
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportParams {
    /// Start: a date, an age counted back from the indexed commit, `all`,
    /// or a commit (the period starts after it). Default: 30 days before the end.
    #[param(
        pattern = r"^(|all|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18}|[0-9a-f]{7,40})$"
    )]
    since: Option<String>,
    /// End: a date, an age or a commit (the period ends with it). Default: the indexed commit.
    #[param(
        pattern = r"^(|all|now|today|yesterday|[0-9]{1,6}[hdwmy]|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]).*|[0-9]{9,18}|[0-9a-f]{7,40})$"
    )]
    until: Option<String>,
    /// `json` (default), `md` or `html` (one self-contained page).
    #[param(pattern = "^(json|md|html)$")]
    format: Option<String>,
    /// Items per ranked list (1-100, default 10).
    #[param(minimum = 1, maximum = 100)]
    top: Option<usize>,
    /// Add a written summary by the configured chat model, every statement checked.
    summary: Option<bool>,
}

/// A report over a period: summary, hot files, god objects, ownership and
/// bus factor, hardcoded secrets (redacted), people, tickets. The JSON
/// schema is documented in docs/report.md.
#[utoipa::path(get, path = "/api/v1/repos/{name}/report", tag = "people",
    params(("name" = String, Path, description = "the repository's name"), ReportParams),
    responses((status = 200, description = "the report", content(
        (wire::ReportDoc = "application/json"),
        (String = "text/markdown"),
        (String = "text/html"),
    ))))]
pub async fn report(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    P(name): P<String>,
    Q(p): Q<ReportParams>,
) -> ApiResult<Response> {
    let top = count("top", p.top, 10, 100)?;
    let blank = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
    let format = p.format.unwrap_or_else(|| "json".to_string());
    if !matches!(format.as_str(), "json" | "md" | "html") {
        return Err(ApiError::bad_request("format must be json, md or html"));
    }
    let req = ken_engine::ReportRequest {
        repo: Some(name),
        since: blank(p.since),
        until: blank(p.until),
        top: Some(top),
        narrative: p.summary.unwrap_or(false),
    };
    let engine = app.engine.clone();
    let report = blocking(&app, move || engine.report(&req, &who.access)).await?;
    let (body, content_type) = match format.as_str() {
        "md" => (
            ken_engine::render::markdown(&report),
            "text/markdown; charset=utf-8",
        ),
        "html" => (
            ken_engine::render::html(&report),
            "text/html; charset=utf-8",
        ),
        _ => return Ok(Json(report).into_response()),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    // The page is inert: inline style, no script, nothing fetched.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_params(query: &str) -> Result<ReportParams, String> {
        let uri: axum::http::Uri = format!("/api/v1/repos/x/report?{query}").parse().unwrap();
        axum::extract::Query::<ReportParams>::try_from_uri(&uri)
            .map(|q| q.0)
            .map_err(|e| e.body_text())
    }

    #[test]
    fn counts_in_a_query_string_are_text() {
        assert_eq!(report_params("top=5").unwrap().top, Some(5));
        assert_eq!(report_params("").unwrap().top, None);
        assert!(report_params("top=five").is_err());
        assert!(report_params("top=-1").is_err());
        assert!(report_params("top=2.5").is_err());
    }

    #[test]
    fn counts_in_a_json_body_are_numbers() {
        #[derive(Deserialize)]
        struct Body {
            #[serde(default, deserialize_with = "whole_number")]
            n: Option<usize>,
        }
        let n = |v: serde_json::Value| serde_json::from_value::<Body>(v).map(|b| b.n);
        assert_eq!(n(serde_json::json!({"n": 8})).unwrap(), Some(8));
        assert_eq!(n(serde_json::json!({"n": 8.0})).unwrap(), Some(8));
        assert_eq!(n(serde_json::json!({})).unwrap(), None);
        assert!(n(serde_json::json!({"n": 8.5})).is_err());
        assert!(n(serde_json::json!({"n": "8"})).is_err());
    }
}
