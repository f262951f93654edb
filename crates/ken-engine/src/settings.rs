//! Settings, resolved once by the caller (config file < environment < flags)
//! and passed in: nothing in the engine reads the environment.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ken_syntax::ChunkOptions;

use crate::params::RankParams;
use crate::semantic::{EmbedOrder, EmbedText, EmbedderSpec};

#[derive(Debug, Clone)]
pub struct Settings {
    /// Where indexes, clones and models live.
    pub home: PathBuf,
    /// A PostgreSQL URL to keep indexes in (None: the embedded store under
    /// `home/repos`).
    pub store: Option<String>,
    /// Files larger than this are skipped (and reported).
    pub max_file_bytes: u64,
    pub chunk: ChunkOptions,
    /// Worker threads for reading and parsing.
    pub threads: usize,
    /// Token for cloning private repositories (never printed or stored).
    pub git_token: Option<String>,
    pub rank: RankParams,
    /// The embedder used for indexing and for the query side of search.
    pub embedder: EmbedderSpec,
    pub embed_text: EmbedText,
    /// Most vectors per long chunk (1: its first lines only).
    pub embed_windows: usize,
    /// In what order missing vectors are made.
    pub embed_order: EmbedOrder,
    /// Most time one run spends embedding (None: until done); the rest
    /// waits for the next run.
    pub embed_budget: Option<std::time::Duration>,
    /// Let the local embedder's kernels use AVX-512 where the CPU has it
    /// (false: AVX2 at most, for machines that slow down under it).
    pub embed_avx512: bool,
    /// A reranker scoring the best hits of every search again (None: off).
    pub reranker: Option<RerankerSpec>,
    /// Hits the reranker reads per search.
    pub rerank_top: usize,
    /// `ken ask`: the chat model orders the retrieved code by relevance
    /// (listwise) before it answers (needs `llm`).
    pub llm_rerank: bool,
    /// The chat model for `ken ask` (None: extractive answers).
    pub llm: Option<ken_llm::ChatConfig>,
    /// Tokens of context given to the model.
    pub context_tokens: usize,
    /// The most of a code step's chunks one file may give the model, as a
    /// share of them, unless the question names the file (1: no cap).
    /// 0.375 (3 of 8) raised commits_dev's `context_recall` from 0.645 to
    /// 0.722 (BENCHMARKS.md §31).
    pub context_file_share: f64,
    /// Clone and fetch any URL (file://, http://, private and loopback
    /// hosts); by default only https/ssh remotes on public addresses.
    pub allow_private_urls: bool,
    /// Query vectors an engine remembers (0: none).
    pub query_cache: usize,
    /// Repositories an engine keeps open at once (the least recently used
    /// closes first): what bounds its open files and memory, whatever the
    /// number of repositories.
    pub open_repos: usize,
    /// A running job whose runner has not beaten for this many seconds is
    /// taken to be dead and goes back to the queue.
    pub job_stale_secs: i64,
    /// Branches whose pushes are indexed, per repository name.
    pub repo_branches: BTreeMap<String, Vec<String>>,
    /// Branches whose pushes are indexed for repositories not in
    /// `repo_branches` (empty: each repository's default branch).
    pub webhook_branches: Vec<String>,
    /// `ken serve` and `ken worker` poll every repository's source this
    /// often (None: never; webhooks or `ken repos poll` keep them fresh).
    pub poll_interval: Option<std::time::Duration>,
}

impl Settings {
    /// Where the repositories' indexes are: the PostgreSQL database of
    /// `store`, or the embedded provider under `home/repos`. A database is
    /// connected (and migrated) once per process.
    pub fn stores(&self) -> crate::Result<std::sync::Arc<dyn ken_store::StoreProvider>> {
        match &self.store {
            None => Ok(crate::home::provider(&self.home)),
            Some(url) => crate::home::database(url),
        }
    }

    pub fn new(home: PathBuf) -> Settings {
        Settings {
            home,
            store: None,
            max_file_bytes: ken_source::DEFAULT_MAX_FILE_BYTES,
            chunk: ChunkOptions::default(),
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            git_token: None,
            rank: RankParams::default(),
            embedder: EmbedderSpec::Off,
            embed_text: EmbedText::default(),
            embed_windows: crate::semantic::DEFAULT_WINDOWS,
            embed_order: EmbedOrder::default(),
            embed_budget: None,
            embed_avx512: true,
            reranker: None,
            llm_rerank: false,
            rerank_top: 20,
            llm: None,
            context_tokens: 6000,
            context_file_share: 0.375,
            allow_private_urls: false,
            query_cache: 4096,
            open_repos: 64,
            job_stale_secs: 60,
            repo_branches: BTreeMap::new(),
            webhook_branches: Vec::new(),
            poll_interval: None,
        }
    }
}

/// Where the reranking stage's model is.
#[derive(Debug, Clone)]
pub enum RerankerSpec {
    /// A `/rerank` endpoint.
    Http(ken_embed::RerankConfig),
    /// A cross-encoder model directory run in-process.
    Local {
        dir: std::path::PathBuf,
        /// Tokens of query and document together (None: 512, capped by the model).
        max_tokens: Option<usize>,
    },
}
