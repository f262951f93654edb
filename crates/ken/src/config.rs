//! Settings in layers: `$KEN_HOME/config.toml` < environment < flags,
//! resolved once into an immutable [`Settings`].

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ken_engine::EmbedderSpec;
use ken_engine::Settings;

use crate::args::EmbedderChoice;
use serde::Deserialize;

/// The config file. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Skip files larger than this many bytes.
    pub max_file_size: Option<u64>,
    /// Worker threads for indexing.
    pub threads: Option<usize>,
    /// Where indexes live: `postgres://…` for PostgreSQL (default: under the home).
    pub store: Option<String>,
    /// A running index job whose runner has not beaten for this many
    /// seconds goes back to the queue (default 60).
    pub job_stale_secs: Option<i64>,
    /// Chunking: files up to this many characters are one chunk.
    pub whole_file_chars: Option<usize>,
    /// `local`, `static`, `http` or `off`.
    pub embedder: Option<String>,
    /// A local model directory (config.json, tokenizer.json, model.safetensors).
    pub embed_model_dir: Option<PathBuf>,
    /// OpenAI-compatible embeddings endpoint, e.g. `http://127.0.0.1:11434/v1`.
    pub embed_base_url: Option<String>,
    pub embed_model: Option<String>,
    pub embed_api_key: Option<String>,
    /// What is embedded for a chunk: `meta` (path, qualified name and doc
    /// comment before the code; the default) or `body` (the code alone).
    pub embed_text: Option<String>,
    /// Most vectors per long chunk: its whole text, then windows over the
    /// lines past what the model reads (1: the first lines only; default 4).
    pub embed_windows: Option<usize>,
    /// What a run embeds first: `priority` (chunks outside tests, then
    /// tests, then the extra windows of long chunks, shortest first within
    /// each; the default) or `length` (shortest text first).
    pub embed_order: Option<String>,
    /// Most seconds one `ken index` spends embedding; what is left is
    /// embedded by the next run (default: no limit).
    pub embed_budget_secs: Option<u64>,
    /// The local model's dense layers in int8: twice the speed, vectors within
    /// cosine 0.996 of f32 (BENCHMARKS.md §4). Default: on where the CPU has
    /// AVX-512 VNNI.
    pub embed_int8: Option<bool>,
    /// OpenAI-compatible chat endpoint for `ken ask`, e.g. `http://127.0.0.1:11434/v1`.
    pub llm_base_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_api_key: Option<String>,
    /// Seconds before a model request times out.
    pub llm_timeout: Option<u64>,
    /// Tokens of code context given to the model.
    pub context_tokens: Option<usize>,
    /// The most of a `ken ask` code step's chunks one file may give the
    /// model, as a share (0–1] of them, unless the question names the file.
    pub context_file_share: Option<f64>,
    /// A `/rerank` endpoint (Cohere, Jina, Voyage, vLLM, Infinity, or
    /// text-embeddings-inference with `rerank_api = "tei"`) that scores the
    /// best hits of every search again. Off unless set.
    pub rerank_base_url: Option<String>,
    pub rerank_model: Option<String>,
    pub rerank_api_key: Option<String>,
    /// `cohere` (documents in, results out; the default) or `tei`.
    pub rerank_api: Option<String>,
    /// A cross-encoder model directory (config.json, tokenizer.json,
    /// model.safetensors with a sequence-classification head, e.g.
    /// ms-marco-MiniLM-L-6-v2 or bge-reranker-base) run in-process to
    /// score the best hits of every search again. Off unless set; not
    /// together with `rerank_base_url`.
    pub rerank_model_dir: Option<PathBuf>,
    /// Tokens of query and hit the local cross-encoder reads (default 512,
    /// capped by the model).
    pub rerank_max_tokens: Option<usize>,
    /// Hits the reranker reads per search (default 20).
    pub rerank_top: Option<usize>,
    /// `ken ask`: the chat model orders the retrieved code by relevance
    /// before answering (one more model call per code step; default false).
    pub llm_rerank: Option<bool>,
    /// Query vectors a long-lived engine (`ken serve`, `ken mcp`) remembers (0: none).
    pub query_cache: Option<usize>,
    /// Repositories a long-lived engine keeps open at once (default 64; the
    /// least recently used closes first).
    pub open_repos: Option<usize>,
    /// Learn the ranking from each repository's history at `ken index` and
    /// search with it (default true; false: the built-in constants).
    pub learned_ranking: Option<bool>,
    /// Questions that read like the repository's documentation get the
    /// constants learned from its section headings (default true; false:
    /// every question gets what the commits taught).
    pub learned_docs: Option<bool>,
    /// Learn a query map for dense retrieval from each repository's
    /// history at `ken index` and search with it (default false: plain
    /// queries).
    pub dense_adapter: Option<bool>,
    /// Clone and fetch any URL: file://, http://, loopback and private
    /// hosts (default false: https/ssh on public addresses only).
    pub allow_private_urls: Option<bool>,
    /// Secret of the GitHub push webhook (`X-Hub-Signature-256`).
    pub webhook_secret: Option<String>,
    /// Branches whose pushes are indexed (default: each repository's default branch).
    pub webhook_branches: Option<Vec<String>>,
    /// `ken serve` / `ken worker`: check every repository's source for a
    /// new head this many seconds apart and index what moved (default 0: off).
    pub poll_interval: Option<u64>,
    /// Per repository: `[repos."pallets/flask"] branches = ["main", "2.3.x"]`:
    /// pushes to these branches are indexed, and each branch other than the
    /// default is indexed as `pallets/flask@2.3.x` (searched with `branch:`).
    pub repos: Option<std::collections::BTreeMap<String, RepoConfig>>,
    /// `ken serve`: browser origins allowed to call the API (CORS; default none).
    pub cors_origins: Option<Vec<String>>,
    /// `ken serve`: seconds a request may take (default 60; streamed answers excepted).
    pub request_timeout: Option<u64>,
    /// `ken serve`: largest request body in bytes (default 1 MiB).
    pub max_body_bytes: Option<usize>,
    /// `ken serve`: seconds a client may take to send a request's headers,
    /// or its first byte on a new connection (default 10).
    pub header_timeout: Option<u64>,
    /// `ken serve`: connections served at once; more wait to be accepted
    /// (default 512, and never more than the open-file limit allows).
    pub max_connections: Option<usize>,
}

/// Settings of one repository.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    pub branches: Option<Vec<String>>,
}

/// What only `ken serve` needs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub webhook_secret: Option<String>,
    pub cors_origins: Vec<String>,
    pub request_timeout: std::time::Duration,
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's headers (or its first byte).
    pub header_timeout: std::time::Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            webhook_secret: None,
            cors_origins: Vec::new(),
            request_timeout: std::time::Duration::from_secs(60),
            max_body_bytes: 1 << 20,
            header_timeout: std::time::Duration::from_secs(10),
            max_connections: 512,
        }
    }
}

/// The server's settings: config file < environment.
pub fn server_config(home: &Path, env: &Env) -> Result<ServerConfig> {
    let file = load_file(home)?;
    let mut c = ServerConfig {
        webhook_secret: env.webhook_secret.clone().or(file.webhook_secret),
        cors_origins: file.cors_origins.unwrap_or_default(),
        ..ServerConfig::default()
    };
    if let Some(t) = file.request_timeout {
        c.request_timeout = std::time::Duration::from_secs(t.max(1));
    }
    if let Some(b) = file.max_body_bytes {
        c.max_body_bytes = b.max(1024);
    }
    if let Some(t) = file.header_timeout {
        c.header_timeout = std::time::Duration::from_secs(t.max(1));
    }
    if let Some(n) = file.max_connections {
        c.max_connections = n.max(1);
    }
    Ok(c)
}

/// The environment, read once here and nowhere else.
#[derive(Debug, Default, Clone)]
pub struct Env {
    pub ken_home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
    pub git_token: Option<String>,
    /// `ken repos sync --github`: $GITHUB_TOKEN, else $GH_TOKEN.
    pub github_token: Option<String>,
    /// `ken repos sync --gitlab`: $GITLAB_TOKEN.
    pub gitlab_token: Option<String>,
    pub embed_model_dir: Option<PathBuf>,
    pub embed_base_url: Option<String>,
    pub embed_model: Option<String>,
    pub embed_api_key: Option<String>,
    pub llm_base_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_api_key: Option<String>,
    pub allow_private_urls: Option<bool>,
    pub webhook_secret: Option<String>,
    pub job_stale_secs: Option<i64>,
    /// `KEN_EMBED_NO_AVX512` set: the embedder's kernels stay off AVX-512.
    pub embed_no_avx512: bool,
}

impl Env {
    pub fn read() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Env {
            ken_home: var("KEN_HOME").map(PathBuf::from),
            xdg_data_home: var("XDG_DATA_HOME").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
            git_token: var("KEN_GIT_TOKEN").or_else(|| var("GITHUB_TOKEN")),
            github_token: var("GITHUB_TOKEN").or_else(|| var("GH_TOKEN")),
            gitlab_token: var("GITLAB_TOKEN"),
            embed_model_dir: var("KEN_EMBED_MODEL_DIR").map(PathBuf::from),
            embed_base_url: var("KEN_EMBED_BASE_URL"),
            embed_model: var("KEN_EMBED_MODEL"),
            embed_api_key: var("KEN_EMBED_API_KEY"),
            llm_base_url: var("KEN_LLM_BASE_URL"),
            llm_model: var("KEN_LLM_MODEL"),
            llm_api_key: var("KEN_LLM_API_KEY"),
            allow_private_urls: var("KEN_ALLOW_PRIVATE_URLS")
                .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")),
            webhook_secret: var("KEN_WEBHOOK_SECRET"),
            job_stale_secs: var("KEN_JOB_STALE_SECS").and_then(|v| v.parse().ok()),
            embed_no_avx512: var("KEN_EMBED_NO_AVX512").is_some(),
        }
    }
}

/// `--home` < `$KEN_HOME` < `$XDG_DATA_HOME/ken` < `~/.local/share/ken`.
pub fn home_dir(flag: Option<&Path>, env: &Env) -> PathBuf {
    if let Some(h) = flag {
        return h.to_path_buf();
    }
    if let Some(h) = &env.ken_home {
        return h.clone();
    }
    if let Some(x) = &env.xdg_data_home {
        return x.join("ken");
    }
    match &env.home {
        Some(h) => h.join(".local/share/ken"),
        None => PathBuf::from(".ken"),
    }
}

pub fn load_file(home: &Path) -> Result<FileConfig> {
    let path = home.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Where a local model may be, in order.
pub fn model_dirs(home: &Path, file: &FileConfig, env: &Env) -> Vec<PathBuf> {
    let name = ken_engine::models::DEFAULT_MODEL_NAME;
    let mut dirs = Vec::new();
    dirs.extend(env.embed_model_dir.clone());
    dirs.extend(file.embed_model_dir.clone());
    dirs.push(home.join("models").join(name));
    if let Some(h) = &env.home {
        dirs.push(h.join(".cache/ken-models").join(name));
    }
    dirs
}

/// The static table distilled from a model directory.
pub fn static_table(home: &Path, model_dir: &Path) -> PathBuf {
    let name = model_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    home.join("models")
        .join(format!("{name}.static.safetensors"))
}

/// Which embedder: flag < (config file < environment) as documented in `ken --help`.
fn embedder(
    home: &Path,
    choice: Option<EmbedderChoice>,
    file: &FileConfig,
    env: &Env,
) -> Result<EmbedderSpec> {
    let base_url = env
        .embed_base_url
        .clone()
        .or_else(|| file.embed_base_url.clone());
    let choice = match choice {
        Some(c) => c,
        None => match file.embedder.as_deref() {
            Some("off") => EmbedderChoice::Off,
            Some("local") => EmbedderChoice::Local,
            Some("static") => EmbedderChoice::Static,
            Some("http") => EmbedderChoice::Http,
            Some(other) => {
                bail!("config: embedder must be local, static, http or off, not `{other}`")
            }
            None if base_url.is_some() => EmbedderChoice::Http,
            None => {
                // the local model when one is installed, else none
                return Ok(
                    match ken_engine::models::find(&model_dirs(home, file, env)) {
                        Ok(dir) => EmbedderSpec::Local {
                            dir,
                            int8: file
                                .embed_int8
                                .unwrap_or_else(ken_engine::models::int8_available),
                        },
                        Err(_) => EmbedderSpec::Off,
                    },
                );
            }
        },
    };
    let find = || -> Result<PathBuf> {
        ken_engine::models::find(&model_dirs(home, file, env)).map_err(Into::into)
    };
    Ok(match choice {
        EmbedderChoice::Off => EmbedderSpec::Off,
        EmbedderChoice::Local => EmbedderSpec::Local {
            dir: find()?,
            int8: file
                .embed_int8
                .unwrap_or_else(ken_engine::models::int8_available),
        },
        EmbedderChoice::Static => {
            let dir = find()?;
            let table = static_table(home, &dir);
            if !table.is_file() {
                bail!(ken_engine::EngineError::bad_input(format!(
                    "no static table at {}: run `ken model distill` first",
                    table.display()
                )));
            }
            EmbedderSpec::Static {
                table,
                tokenizer: dir.join("tokenizer.json"),
            }
        }
        EmbedderChoice::Http => {
            let Some(url) = base_url else {
                bail!(ken_engine::EngineError::bad_input(
                    "--embedder http needs KEN_EMBED_BASE_URL (e.g. http://127.0.0.1:11434/v1)"
                ));
            };
            let Some(model) = env.embed_model.clone().or_else(|| file.embed_model.clone()) else {
                bail!(ken_engine::EngineError::bad_input(
                    "--embedder http needs KEN_EMBED_MODEL (the endpoint's model name)"
                ));
            };
            let mut cfg = ken_engine::HttpConfig::new(url, model);
            cfg.api_key = env
                .embed_api_key
                .clone()
                .or_else(|| file.embed_api_key.clone());
            EmbedderSpec::Http(cfg)
        }
    })
}

/// Resolve settings for a command.
pub fn settings(
    home_flag: Option<&Path>,
    env: &Env,
    choice: Option<EmbedderChoice>,
) -> Result<Settings> {
    let home = home_dir(home_flag, env);
    let file = load_file(&home)?;
    let mut s = Settings::new(home);
    if let Some(v) = file.max_file_size {
        s.max_file_bytes = v;
    }
    if let Some(v) = file.threads {
        s.threads = v.max(1);
    }
    if let Some(v) = file.whole_file_chars {
        s.chunk.whole_file_chars = v;
    }
    s.git_token = env.git_token.clone();
    s.store = file.store.clone();
    if let Some(v) = env.job_stale_secs.or(file.job_stale_secs) {
        s.job_stale_secs = v.max(1);
    }
    s.embedder = embedder(&s.home, choice, &file, env)?;
    match file.embed_text.as_deref() {
        None | Some("meta") => {}
        Some("body") => s.embed_text = ken_engine::EmbedText::Body,
        Some(other) => bail!(ken_engine::EngineError::bad_input(format!(
            "config.toml: embed_text = {other:?}: use \"meta\" or \"body\""
        ))),
    }
    if let Some(w) = file.embed_windows {
        s.embed_windows = w.max(1);
    }
    match file.embed_order.as_deref() {
        None | Some("priority") => {}
        Some("length") => s.embed_order = ken_engine::EmbedOrder::Length,
        Some(other) => bail!(ken_engine::EngineError::bad_input(format!(
            "config.toml: embed_order = {other:?}: use \"priority\" or \"length\""
        ))),
    }
    if let Some(b) = file.embed_budget_secs {
        s.embed_budget = Some(std::time::Duration::from_secs(b));
    }
    s.embed_avx512 = !env.embed_no_avx512;
    if let Some(t) = file.context_tokens {
        s.context_tokens = t;
    }
    if let Some(share) = file.context_file_share {
        if !(share > 0.0 && share <= 1.0) {
            bail!(ken_engine::EngineError::bad_input(format!(
                "config.toml: context_file_share = {share}: give a share above 0 and at most 1 (1: no cap)"
            )));
        }
        s.context_file_share = share;
    }
    if let Some(n) = file.open_repos {
        s.open_repos = n.max(1);
    }
    if let Some(q) = file.query_cache {
        s.query_cache = q;
    }
    if let Some(l) = file.learned_ranking {
        s.rank.learned = l;
    }
    if let Some(l) = file.learned_docs {
        s.rank.learned_docs = l;
    }
    if let Some(a) = file.dense_adapter {
        s.rank.adapter = a;
    }
    if let Some(url) = &file.rerank_base_url {
        let mut cfg = ken_engine::RerankConfig::new(
            url.clone(),
            file.rerank_model.clone().unwrap_or_default(),
        );
        cfg.api_key = file.rerank_api_key.clone();
        cfg.api = match file.rerank_api.as_deref() {
            None | Some("cohere") => ken_engine::RerankApi::Cohere,
            Some("tei") => ken_engine::RerankApi::Tei,
            Some(other) => bail!(ken_engine::EngineError::bad_input(format!(
                "config.toml: rerank_api = {other:?}: use \"cohere\" or \"tei\""
            ))),
        };
        s.reranker = Some(ken_engine::RerankerSpec::Http(cfg));
    }
    if let Some(dir) = &file.rerank_model_dir {
        if file.rerank_base_url.is_some() {
            bail!(ken_engine::EngineError::bad_input(
                "config.toml sets both rerank_base_url and rerank_model_dir: keep one reranker"
            ));
        }
        s.reranker = Some(ken_engine::RerankerSpec::Local {
            dir: dir.clone(),
            max_tokens: file.rerank_max_tokens,
        });
    }
    if let Some(b) = file.llm_rerank {
        s.llm_rerank = b;
    }
    if let Some(n) = file.rerank_top {
        s.rerank_top = n.max(1);
    }
    s.allow_private_urls = env
        .allow_private_urls
        .or(file.allow_private_urls)
        .unwrap_or(false);
    s.webhook_branches = file.webhook_branches.clone().unwrap_or_default();
    s.poll_interval = file
        .poll_interval
        .filter(|n| *n > 0)
        .map(std::time::Duration::from_secs);
    for (name, r) in file.repos.iter().flatten() {
        if let Some(b) = &r.branches {
            s.repo_branches.insert(name.clone(), b.clone());
        }
    }
    if let Some(url) = env
        .llm_base_url
        .clone()
        .or_else(|| file.llm_base_url.clone())
    {
        let Some(model) = env.llm_model.clone().or_else(|| file.llm_model.clone()) else {
            bail!(ken_engine::EngineError::bad_input(
                "KEN_LLM_BASE_URL is set but no model: set KEN_LLM_MODEL (the endpoint's model name)"
            ));
        };
        let mut cfg = ken_engine::ChatConfig::new(url, model);
        cfg.api_key = env.llm_api_key.clone().or_else(|| file.llm_api_key.clone());
        if let Some(t) = file.llm_timeout {
            cfg.timeout = std::time::Duration::from_secs(t);
        }
        s.llm = Some(cfg);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_layers() {
        let env = Env {
            ken_home: Some("/k".into()),
            xdg_data_home: Some("/x".into()),
            home: Some("/h".into()),
            ..Env::default()
        };
        assert_eq!(home_dir(Some(Path::new("/f")), &env), PathBuf::from("/f"));
        assert_eq!(home_dir(None, &env), PathBuf::from("/k"));
        let env = Env {
            ken_home: None,
            ..env
        };
        assert_eq!(home_dir(None, &env), PathBuf::from("/x/ken"));
        let env = Env {
            xdg_data_home: None,
            ..env
        };
        assert_eq!(home_dir(None, &env), PathBuf::from("/h/.local/share/ken"));
    }

    #[test]
    fn config_file_layer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "max_file_size = 10\nthreads = 3\n",
        )
        .unwrap();
        let s = settings(Some(dir.path()), &Env::default(), None).unwrap();
        assert_eq!(s.max_file_bytes, 10);
        assert_eq!(s.threads, 3);
        std::fs::write(dir.path().join("config.toml"), "bogus = 1\n").unwrap();
        let err = settings(Some(dir.path()), &Env::default(), None).unwrap_err();
        assert!(format!("{err:#}").contains("invalid config file"));
        std::fs::write(dir.path().join("config.toml"), "embed_text = \"body\"\n").unwrap();
        let s = settings(Some(dir.path()), &Env::default(), None).unwrap();
        assert_eq!(s.embed_text, ken_engine::EmbedText::Body);
        std::fs::write(dir.path().join("config.toml"), "embed_text = \"all\"\n").unwrap();
        let err = settings(Some(dir.path()), &Env::default(), None).unwrap_err();
        assert!(
            format!("{err:#}").contains("\"meta\" or \"body\""),
            "{err:#}"
        );
    }
}
