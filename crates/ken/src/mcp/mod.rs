//! The MCP server (official `rmcp` SDK): `ken mcp` over stdio, and
//! streamable HTTP at `/mcp` under `ken serve` (with the same tokens).
//!
//! Each tool is a thin adapter over the shared [`Engine`]: arguments named
//! as the command line's flags, results in the wire shapes of `--json`
//! (as structured content and as JSON text), engine errors as tool errors
//! carrying `{"error": {"code", "message", "hint"}}`.

use std::sync::Arc;

use anyhow::{Context, Result};
use ken_engine::IndexJob;
use ken_engine::Principal;
use ken_engine::Walk;
use ken_engine::{AskRequest, Edge, Engine, EngineError};
use ken_engine::{FilterSpec, parse_mode};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;
use serde::Serialize;

use crate::calls::{self, Call, comma_list as repos};
use crate::wire;
use crate::work::{Failed, Workers};

#[derive(Clone)]
pub struct KenMcp {
    engine: Arc<Engine>,
    work: Workers,
    /// Over stdio the caller is the local user; over HTTP, the token's principal.
    local: bool,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchCode {
    /// What to look for: words, an identifier (`parse_config`,
    /// `Config.from_envvar`) or a question ("how are sessions refreshed?").
    pub query: String,
    /// Only this repository (see repo_status for names).
    pub repo: Option<String>,
    /// Only the indexes following this branch (a repository's `branches`;
    /// `branch:NAME` in the query does the same).
    pub branch: Option<String>,
    /// Number of results (default 10, at most 100).
    pub n: Option<usize>,
    /// Only this language (`python`, `rust`, `go`, `ts`...).
    pub lang: Option<String>,
    /// Only paths matching this glob (`src/**/*.py`, `crates/core`).
    pub path: Option<String>,
    /// `hybrid` (default: symbols, words and meaning), `lexical` or `semantic`.
    pub mode: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct FindSymbol {
    /// A definition's name (`Router`) or qualified name (`Router.route`).
    pub name: String,
    pub repo: Option<String>,
    /// Most definitions (default 20).
    pub n: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadRange {
    /// The repository's name.
    pub repo: String,
    /// The file's path in the repository, as search results give it.
    pub path: String,
    /// First line, 1-based (default 1).
    pub start_line: Option<u32>,
    /// Last line, inclusive (default: the end; at most 2000 lines per call).
    pub end_line: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SymbolArgs {
    /// `name`, `Class.method`, or `path:name` to pick one of several definitions.
    pub symbol: String,
    /// The repository (needed when several are indexed).
    pub repo: Option<String>,
    /// How many references away to follow (impact only; default 5).
    pub depth: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WhoKnows {
    /// A topic ("payment retries"), a path (`src/auth/`) or a symbol.
    pub query: String,
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AskArgs {
    /// A question about the code.
    pub question: String,
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RepoStatusArgs {
    /// One repository (default: all).
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct IndexRepository {
    /// The repository's name.
    pub repo: String,
    /// A commit, branch or tag (default: the source's current state).
    pub rev: Option<String>,
    /// A clone URL (https or ssh) for a repository not indexed yet.
    pub source: Option<String>,
}

fn ok<T: Serialize>(v: &T) -> Result<CallToolResult, ErrorData> {
    Ok(CallToolResult::structured(
        serde_json::to_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
    ))
}

fn tool_error(e: &EngineError) -> CallToolResult {
    CallToolResult::structured_error(
        serde_json::to_value(wire::ErrorBody::from_engine(e, Edge::Mcp)).unwrap_or_default(),
    )
}

/// The outcome of engine work as a tool result: engine errors become tool errors.
fn answer<T: Serialize>(r: Result<T, Failed>) -> Result<CallToolResult, ErrorData> {
    match r {
        Ok(v) => ok(&v),
        Err(Failed::Engine(e)) => Ok(tool_error(&e)),
        Err(Failed::Crashed) => Err(ErrorData::internal_error(
            "the tool failed inside the engine",
            None,
        )),
    }
}

impl TryFrom<SearchCode> for calls::Search {
    type Error = EngineError;

    fn try_from(a: SearchCode) -> Result<calls::Search, EngineError> {
        let filters = FilterSpec {
            repos: repos(&a.repo),
            branches: a.branch.into_iter().collect(),
            langs: a.lang.into_iter().collect(),
            paths: a.path.into_iter().collect(),
            ..FilterSpec::default()
        };
        Ok(calls::Search {
            mode: parse_mode(a.mode.as_deref().unwrap_or("hybrid"))?,
            query: a.query,
            n: a.n.unwrap_or(10).min(100),
            filters,
            files: false,
            highlight: false,
        })
    }
}

impl From<FindSymbol> for calls::FindSymbols {
    fn from(a: FindSymbol) -> calls::FindSymbols {
        calls::FindSymbols {
            repos: repos(&a.repo),
            name: a.name,
            n: a.n.unwrap_or(20),
        }
    }
}

impl From<ReadRange> for calls::ReadRange {
    fn from(a: ReadRange) -> calls::ReadRange {
        calls::ReadRange {
            repo: a.repo,
            path: a.path,
            start: a.start_line,
            end: a.end_line,
            highlight: false,
        }
    }
}

impl SymbolArgs {
    fn walk(self, walk: Walk) -> calls::Structure {
        calls::Structure {
            symbol: self.symbol,
            repo: self.repo,
            walk,
        }
    }
}

impl From<WhoKnows> for calls::Who {
    fn from(a: WhoKnows) -> calls::Who {
        calls::Who {
            repos: repos(&a.repo),
            query: a.query,
            n: 5,
        }
    }
}

impl From<AskArgs> for calls::Ask {
    fn from(a: AskArgs) -> calls::Ask {
        calls::Ask {
            req: AskRequest {
                repos: repos(&a.repo),
                question: a.question,
                limit: ken_engine::ASK_LIMIT,
                expand: true,
                model: None,
                offline: false,
                rerank: None,
            },
        }
    }
}

impl From<IndexRepository> for calls::Enqueue {
    fn from(a: IndexRepository) -> calls::Enqueue {
        calls::Enqueue {
            job: IndexJob {
                repo: a.repo,
                source: a.source,
                rev: a.rev,
                origin: "mcp".into(),
                dedupe: None,
            },
        }
    }
}

impl KenMcp {
    pub fn new(engine: Arc<Engine>, work: Workers, local: bool) -> KenMcp {
        KenMcp {
            engine,
            work,
            local,
            tool_router: Self::tool_router(),
        }
    }

    /// Who is calling: the local user over stdio, the token's principal over HTTP.
    fn principal(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        if self.local {
            return Ok(Principal::local());
        }
        ctx.extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<Principal>())
            .cloned()
            .ok_or_else(|| ErrorData::invalid_request("this needs an API token", None))
    }
}

#[tool_router]
impl KenMcp {
    #[tool(
        description = "Search indexed code. Exact symbol matches come first, then chunks ranked by words, meaning and structure. Each result has repo, path, start_line-end_line, the symbol, its authors and the indexed commit; follow up with read_range for more lines."
    )]
    async fn search_code(
        &self,
        Parameters(a): Parameters<SearchCode>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, calls::Search::try_from(a)).await
    }

    #[tool(
        description = "Find where a symbol (function, class, method, type, constant) is defined, by name or qualified name. Case-exact matches first."
    )]
    async fn find_symbol(
        &self,
        Parameters(a): Parameters<FindSymbol>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(calls::FindSymbols::from(a))).await
    }

    #[tool(
        description = "Read lines of a file at the indexed commit (1-based, inclusive; at most 2000 lines per call)."
    )]
    async fn read_range(
        &self,
        Parameters(a): Parameters<ReadRange>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(calls::ReadRange::from(a))).await
    }

    #[tool(
        description = "Who calls a symbol: the direct callers found in the code graph, with their locations."
    )]
    async fn callers(
        &self,
        Parameters(a): Parameters<SymbolArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(a.walk(Walk::Callers))).await
    }

    #[tool(
        description = "Every place a symbol is referred to: calls, reads (a method passed as a value, a property), imports, inheritance and type uses. One result per place: the definition it is written in (symbol, path, lines) and a via step with its line, its kind and the rule that tied it to the symbol (scip: a SCIP index said so; same_file and unique_global are guesses by name)."
    )]
    async fn find_references(
        &self,
        Parameters(a): Parameters<SymbolArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(a.walk(Walk::References))).await
    }

    #[tool(
        description = "What breaks if a symbol changes or is deleted: everything that depends on it, transitively, each with its depth and the chain of references (via) that links it."
    )]
    async fn impact(
        &self,
        Parameters(a): Parameters<SymbolArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let max_depth = a.depth.unwrap_or(5);
        self.call(&ctx, Ok(a.walk(Walk::Impact { max_depth })))
            .await
    }

    #[tool(
        description = "Who knows this code: people ranked by recent ownership (blame) of the code a topic, path or symbol names, with the evidence."
    )]
    async fn who_knows(
        &self,
        Parameters(a): Parameters<WhoKnows>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(calls::Who::from(a))).await
    }

    #[tool(
        description = "Answer a question about the code. With a language model configured, every claim is marked verified, unverified or invalid against its citations; without one, the best code is listed with locations."
    )]
    async fn ask(
        &self,
        Parameters(a): Parameters<AskArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(calls::Ask::from(a))).await
    }

    #[tool(
        description = "What is indexed: repositories, their commit, file and chunk counts, and embedding coverage."
    )]
    async fn repo_status(
        &self,
        Parameters(a): Parameters<RepoStatusArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let status = calls::Status {
            repos: repos(&a.repo),
        };
        self.call(&ctx, Ok(status)).await
    }

    #[tool(
        description = "Queue a job that indexes a repository (again) or a new one from a clone URL; needs the `index` scope. Returns the job; its progress is at repo_status or GET /api/v1/jobs/{id}."
    )]
    async fn index_repository(
        &self,
        Parameters(a): Parameters<IndexRepository>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(&ctx, Ok(calls::Enqueue::from(a))).await
    }
}

impl KenMcp {
    /// Answer a capability's request for the caller; an engine error
    /// (a bad argument included) is a tool error.
    async fn call<C: Call>(
        &self,
        ctx: &RequestContext<RoleServer>,
        request: Result<C, EngineError>,
    ) -> Result<CallToolResult, ErrorData> {
        let who = self.principal(ctx)?;
        match request {
            Ok(c) => answer(self.work.call(self.engine.clone(), who, c).await),
            Err(e) => Ok(tool_error(&e)),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for KenMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("kenning", env!("CARGO_PKG_VERSION"))
                    .with_title("Kenning"),
            )
            .with_instructions(
                "Kenning answers questions about indexed codebases. Start with search_code (or find_symbol for a name), read more with read_range, follow structure with callers, find_references and impact, find people with who_knows. repo_status lists the repositories.",
            )
    }
}

/// The MCP service mounted at `/mcp` (the auth middleware runs first).
/// `allowed_hosts`: None keeps rmcp's loopback-only Host check; an empty
/// list turns it off (the bearer token guards a public server).
pub fn http_service(
    engine: Arc<Engine>,
    work: Workers,
    allowed_hosts: Option<Vec<String>>,
) -> StreamableHttpService<KenMcp, LocalSessionManager> {
    let mut config = StreamableHttpServerConfig::default();
    if let Some(hosts) = allowed_hosts {
        config = if hosts.is_empty() {
            config.disable_allowed_hosts()
        } else {
            config.with_allowed_hosts(hosts)
        };
    }
    StreamableHttpService::new(
        move || Ok(KenMcp::new(engine.clone(), work.clone(), false)),
        Default::default(),
        config,
    )
}

/// `ken mcp`: serve over stdin/stdout until the client closes it.
pub fn serve_stdio(engine: Engine) -> Result<i32> {
    let engine = Arc::new(engine);
    // load the model now, not during the client's first call
    engine.warm()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // jobs queued by index_repository run here, one at a time
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runner = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::Builder::new()
            .name("ken-jobs".into())
            .spawn(move || engine.run_jobs(&stop))
            .context("cannot start the job runner")?
    };
    let server = KenMcp::new(engine.clone(), Workers::for_machine(), true);
    let r: Result<()> = rt.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP initialization failed")?;
        running.waiting().await.context("MCP server stopped")?;
        Ok(())
    });
    drop(rt);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = runner.join();
    r.map(|_| 0)
}
