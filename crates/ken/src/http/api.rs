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
use ken_engine::Walk;
use ken_engine::{AskObserver, AskRequest, StepOutcome};
use ken_engine::{Mode, ReportRequest};
use ken_engine::{Principal, Scope};
use serde::Deserialize;
use tokio::sync::mpsc;
use utoipa::{IntoParams, ToSchema};

use super::App;
use super::error::{ApiError, ApiResult, J, P, Q, RawBody, call};
use crate::calls::{self, comma_list as list};
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

impl From<ModeParam> for Mode {
    fn from(m: ModeParam) -> Mode {
        match m {
            ModeParam::Hybrid => Mode::Hybrid,
            ModeParam::Lexical => Mode::Lexical,
            ModeParam::Semantic => Mode::Semantic,
        }
    }
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

impl TryFrom<SearchParams> for calls::Search {
    type Error = ApiError;

    fn try_from(p: SearchParams) -> ApiResult<calls::Search> {
        let filters = FilterSpec {
            repos: list(&p.repo),
            branches: list(&p.branch),
            langs: list(&p.lang),
            paths: glob(&p.path)?,
            author: p.author,
            since: p.since,
            until: p.until,
        };
        Ok(calls::Search {
            mode: p.mode.unwrap_or(ModeParam::Hybrid).into(),
            n: count("n", p.n, 10, 1000)?,
            query: p.q,
            filters,
            files: p.files.unwrap_or(false),
            highlight: p.highlight.unwrap_or(false),
        })
    }
}

/// Ranked code for a query, as `ken search --json`.
#[utoipa::path(get, path = "/api/v1/search", tag = "code", params(SearchParams),
    responses((status = 200, description = "ranked results", body = wire::Search)))]
pub async fn search(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<SearchParams>,
) -> ApiResult<Json<wire::Search>> {
    call(&app, who, calls::Search::try_from(p)?).await
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

impl TryFrom<AskBody> for calls::Ask {
    type Error = ApiError;

    fn try_from(body: AskBody) -> ApiResult<calls::Ask> {
        if body.question.trim().is_empty() {
            return Err(ApiError::bad_request("no question given"));
        }
        Ok(calls::Ask {
            req: AskRequest {
                question: body.question,
                repos: list(&body.repo),
                limit: count("n", body.n, ken_engine::ASK_LIMIT, 50)?,
                expand: true,
                model: None,
                offline: body.offline.unwrap_or(false),
                rerank: body.rerank,
            },
        })
    }
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
    let ask = calls::Ask::try_from(body)?;
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let json_only = accept.contains("application/json") && !accept.contains("text/event-stream");
    if json_only {
        return Ok(call(&app, who, ask).await?.into_response());
    }
    let engine = app.engine.clone();
    let (tx, rx) = mpsc::channel::<Event>(256);
    tokio::task::spawn_blocking(move || {
        let mut s = Streamer { tx };
        match ask.observed(&engine, &who, &mut s) {
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
    let repos = list(&p.repo);
    call(
        &app,
        who,
        calls::Who {
            query: p.q,
            repos,
            n,
        },
    )
    .await
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
    let people = calls::People {
        repos: list(&p.repo),
        bots: p.bots.unwrap_or(false),
    };
    call(&app, who, people).await
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
    let log = calls::LogSearch {
        n: count("n", p.n, 10, 1000)?,
        query: p.q.unwrap_or_default(),
        repos: list(&p.repo),
        author: p.author,
        since: p.since,
        until: p.until,
    };
    call(&app, who, log).await
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
    let target = calls::Structure {
        symbol: p.symbol,
        repo: p.repo,
        walk,
    };
    call(&app, who, target).await
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

/// Every place a symbol is referred to (calls, reads, imports, inheritance,
/// type uses): one result per place, the step giving its line and kind.
#[utoipa::path(get, path = "/api/v1/references", tag = "structure", params(SymbolParams),
    responses((status = 200, description = "references", body = wire::Structure)))]
pub async fn references(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Q(p): Q<SymbolParams>,
) -> ApiResult<Json<wire::Structure>> {
    structure(app, who, p, Walk::References).await
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
    let find = calls::FindSymbols {
        n: count("n", p.n, 20, 200)?,
        name: p.q,
        repos: list(&p.repo),
    };
    call(&app, who, find).await
}

/// Indexed repositories and their status.
#[utoipa::path(get, path = "/api/v1/repos", tag = "repos",
    responses((status = 200, description = "repositories", body = wire::Repos)))]
pub async fn repos(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<wire::Repos>> {
    call(&app, who, calls::Status { repos: Vec::new() }).await
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
    let Json(all) = call(&app, who, calls::Status { repos: vec![name] }).await?;
    all.repos
        .into_iter()
        .next()
        .map(Json)
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
    let read = calls::ReadRange {
        repo: name,
        path: p.path,
        start: p.start,
        end: p.end,
        highlight: p.highlight.unwrap_or(false),
    };
    call(&app, who, read).await
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
    let job = IndexJob {
        repo: name,
        source: body.source,
        rev: body.rev,
        origin: "api".into(),
        dedupe: None,
    };
    let queued = call(&app, who, calls::Enqueue { job }).await?;
    Ok((StatusCode::ACCEPTED, queued).into_response())
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
    call(&app, who, calls::Job { id }).await
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
    call(&app, who, calls::Jobs { n }).await
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
    let blame = calls::Blame {
        repo: name,
        path: p.path,
    };
    call(&app, who, blame).await
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
    call(&app, who, calls::Person { id, repo: p.repo }).await
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
    let req = ReportRequest {
        repo: Some(name),
        since: blank(p.since),
        until: blank(p.until),
        top: Some(top),
        narrative: p.summary.unwrap_or(false),
    };
    let Json(report) = call(&app, who, calls::Report { req }).await?;
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
