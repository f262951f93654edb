//! [`Engine`]: one long-lived handle that the command line, the HTTP API,
//! the MCP server and webhook jobs all share.
//!
//! Built once from [`Settings`]; `Send + Sync`. It holds the open
//! repositories (opened on first use, reopened when an indexer commits),
//! the embedding model and the chat model (loaded on first use), and the
//! home's token and job store. One method per capability; each takes an
//! [`Access`] that says which repositories the caller may see — a
//! repository outside it answers exactly as a missing one does.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use ken_embed::Embedder;
use ken_llm::{ChatClient, ChatModel};
use ken_store::{Home, HomeStore, StoreProvider, SymbolTier};
use serde::Serialize;

use crate::access::Access;
use crate::ask::{AskObserver, AskRequest, AskResponse};
use crate::graph::{StructureResult, Walk};
use crate::index::{IndexReport, IndexRequest, Progress};
use crate::people::PersonSummary;
use crate::repo::OpenRepo;
use crate::search::{SearchRequest, SearchResponse};
use crate::status::RepoStatus;
use crate::who::{LogHit, LogSearchRequest, WhoResponse};
use crate::{EngineError, RerankerSpec, Result, Settings};

/// A definition found by name.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolHit {
    pub repo: String,
    pub path: String,
    pub symbol: String,
    pub name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `exact` (case and all) or `folded` (ignoring case and separators).
    pub matched: String,
    pub commit: Option<String>,
}

/// Callers, callees or impact, with the repository they were found in.
#[derive(Debug, Clone)]
pub struct StructureAnswer {
    /// The repository ("" when no repository defines the symbol).
    pub repo: String,
    /// Its indexed commit.
    pub commit: Option<String>,
    pub result: StructureResult,
}

/// Lines of a file at the indexed commit.
#[derive(Debug, Clone, Serialize)]
pub struct FileRange {
    pub repo: String,
    pub path: String,
    pub commit: Option<String>,
    pub language: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    pub text: String,
    /// The lines highlighted as HTML, when asked for.
    pub lines_html: Option<Vec<String>>,
}

/// Who last changed each range of a file.
#[derive(Debug, Clone, Serialize)]
pub struct FileBlame {
    pub repo: String,
    pub path: String,
    pub commit: Option<String>,
    pub ranges: Vec<BlameRange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlameRange {
    pub start_line: u32,
    pub end_line: u32,
    pub sha: String,
    /// The author as the identities resolve them.
    pub author: String,
    pub person: String,
    pub when: i64,
    pub summary: String,
}

/// A person in a repository: aliases, what they own, what they did lately.
#[derive(Debug, Clone, Serialize)]
pub struct PersonView {
    pub repo: String,
    pub person: PersonSummary,
    /// Directories by the lines this person last changed, most first.
    pub areas: Vec<Area>,
    pub commits: Vec<LogHit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Area {
    pub path: String,
    /// Lines of the directory's indexed files this person last changed.
    pub lines: u64,
    /// Their share of the directory's blamed lines.
    pub share: f32,
}

/// `text` highlighted for display, one HTML string per line (the language
/// from `path`).
pub fn highlight(path: &str, text: &str) -> Vec<String> {
    ken_syntax::highlight::highlight_lines(ken_core::Language::from_path(path), text)
}

/// Most lines one read returns.
pub const MAX_READ_LINES: u32 = 2000;

pub struct Engine {
    settings: Settings,
    /// Where the indexes are, connected on first use.
    stores: OnceLock<Result<Arc<dyn StoreProvider>>>,
    /// Open repositories by key, with when each was last used (at most
    /// `settings.open_repos`; the least recently used closes first).
    repos: Mutex<HashMap<String, (Arc<OpenRepo>, u64)>>,
    /// Counts uses of open repositories (their recency).
    uses: std::sync::atomic::AtomicU64,
    /// Churns of repositories closed since (reopened ones start with theirs).
    shelf: Mutex<crate::churn::Shelf>,
    /// The collection index, opened once (None: the provider has none).
    fleet: OnceLock<Result<Option<Arc<dyn ken_store::Fleet>>>>,
    embedder: OnceLock<Result<Option<Arc<dyn Embedder>>>>,
    chat: OnceLock<Result<Option<Arc<ChatClient>>>>,
    reranker: OnceLock<Result<Option<Arc<dyn ken_embed::Reranker>>>>,
    home: OnceLock<Result<Arc<dyn Home>>>,
    /// Wakes the job runner when a job is queued.
    pub(crate) wake: (Mutex<u64>, Condvar),
}

impl Engine {
    /// An engine over `settings.home`. Nothing is opened or loaded yet.
    pub fn new(settings: Settings) -> Engine {
        if !settings.embed_avx512 {
            ken_embed::forbid_avx512();
        }
        Engine {
            stores: OnceLock::new(),
            settings,
            repos: Mutex::new(HashMap::new()),
            uses: std::sync::atomic::AtomicU64::new(0),
            shelf: Mutex::new(crate::churn::Shelf::default()),
            fleet: OnceLock::new(),
            embedder: OnceLock::new(),
            chat: OnceLock::new(),
            reranker: OnceLock::new(),
            home: OnceLock::new(),
            wake: (Mutex::new(0), Condvar::new()),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Load what the first request would otherwise wait for: the embedding
    /// model, every repository and its vectors.
    pub fn warm(&self) -> Result<()> {
        let embedder = self.embedder()?;
        for r in self.repos(&Access::All)? {
            if let Some(e) = &embedder {
                r.vectors(e.id())?;
            }
        }
        Ok(())
    }

    /// The embedding model (None when embeddings are off), loaded once.
    pub fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>> {
        self.embedder
            .get_or_init(|| {
                let capacity = self.settings.query_cache;
                crate::semantic::open_embedder(&self.settings.embedder).map(|e| {
                    e.map(|e| {
                        Arc::new(crate::query_cache::CachedQueries::new(e, capacity))
                            as Arc<dyn Embedder>
                    })
                })
            })
            .clone()
    }

    /// The configured chat model (None: answers are extractive), built once.
    pub fn chat(&self) -> Result<Option<Arc<ChatClient>>> {
        self.chat
            .get_or_init(|| match &self.settings.llm {
                None => Ok(None),
                Some(cfg) => ChatClient::new(cfg.clone())
                    .map(|c| Some(Arc::new(c)))
                    .map_err(|e| EngineError::bad_input(e.to_string())),
            })
            .clone()
    }

    /// Where the repositories' indexes are (connected once).
    pub fn stores(&self) -> Result<Arc<dyn StoreProvider>> {
        self.stores.get_or_init(|| self.settings.stores()).clone()
    }

    /// The home's token and job store, opened once.
    pub fn home_store(&self) -> Result<Arc<dyn Home>> {
        self.home
            .get_or_init(|| match &self.settings.store {
                // a database is shared by every server and worker on it
                Some(url) => crate::home::database_home(url),
                None => HomeStore::open(&self.settings.home)
                    .map(|h| Arc::new(h) as Arc<dyn Home>)
                    .map_err(EngineError::from),
            })
            .clone()
    }

    // --- repositories ---

    /// Every repository the caller may see, open and current.
    pub fn repos(&self, access: &Access) -> Result<Vec<Arc<OpenRepo>>> {
        let stores = self.stores()?;
        let keys = stores.list()?;
        self.repos
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|key, _| keys.contains(key));
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let repo = self.open_key(&*stores, &key)?;
            if access.allows(&repo.name) {
                out.push(repo);
            }
        }
        Ok(out)
    }

    /// One repository's index by key, open and current: the open one when
    /// a writer has not committed since, else opened again. At most
    /// `settings.open_repos` stay open.
    fn open_key(&self, stores: &dyn StoreProvider, key: &str) -> Result<Arc<OpenRepo>> {
        use std::sync::atomic::Ordering;
        let tick = self.uses.fetch_add(1, Ordering::Relaxed);
        let known = {
            let mut open = self.repos.lock().unwrap_or_else(|e| e.into_inner());
            open.get_mut(key).map(|(r, used)| {
                *used = tick;
                r.clone()
            })
        };
        if let Some(r) = known.filter(|r| r.is_current()) {
            return Ok(r);
        }
        // opened outside the lock: other repositories stay served meanwhile
        // (two requests may both open it; one copy stays)
        let r = Arc::new(OpenRepo::open(&self.settings.home, stores, key)?);
        self.unshelve(key, &r);
        let mut closed = Vec::new();
        {
            let mut open = self.repos.lock().unwrap_or_else(|e| e.into_inner());
            open.insert(key.to_string(), (r.clone(), tick));
            let bound = self.settings.open_repos.max(1);
            if open.len() > bound {
                let mut by_use: Vec<(u64, String)> = open
                    .iter()
                    .map(|(k, (_, used))| (*used, k.clone()))
                    .collect();
                by_use.sort();
                for (_, k) in by_use.into_iter().take(open.len() - bound) {
                    if let Some((old, _)) = open.remove(&k) {
                        closed.push((k, old));
                    }
                }
            }
        }
        for (k, old) in closed {
            self.shelve(&k, &old);
        }
        Ok(r)
    }

    /// Keep what a closing repository read that is dear to read again.
    fn shelve(&self, key: &str, repo: &OpenRepo) {
        if let Some((stamp, churn)) = repo.stamped_churn() {
            let mut shelf = self.shelf.lock().unwrap_or_else(|e| e.into_inner());
            shelf.put(key, stamp, churn);
        }
    }

    /// Give an opening repository what an earlier opening of the same
    /// index read (nothing when the index changed since).
    fn unshelve(&self, key: &str, repo: &OpenRepo) {
        let held = self
            .shelf
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .holds(key);
        if !held {
            return;
        }
        let Ok(Some(stamp)) = repo.stamp() else {
            return;
        };
        let kept = self
            .shelf
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(key, &stamp);
        if let Some(churn) = kept {
            repo.seed_churn(stamp, churn);
        }
    }

    /// The collection index (None: the provider keeps none), opened once.
    pub(crate) fn fleet(&self) -> Result<Option<Arc<dyn ken_store::Fleet>>> {
        self.fleet
            .get_or_init(|| self.stores()?.fleet().map_err(EngineError::from))
            .clone()
    }

    /// The named repositories (each must exist and be visible), or every
    /// visible one when `names` is empty.
    pub fn select(&self, names: &[String], access: &Access) -> Result<Vec<Arc<OpenRepo>>> {
        if !names.is_empty()
            && let Some(named) = self.open_named(names, access)?
        {
            return Ok(named);
        }
        let all = self.repos(access)?;
        if all.is_empty() && names.is_empty() {
            return Err(EngineError::not_found(format!(
                "nothing is indexed under {} yet",
                self.settings.home.display()
            ))
            .with_hint("run {ken:index} first"));
        }
        if names.is_empty() {
            // a branch's index is reached by a `branch:` filter or by name
            let keep = crate::branch::without_branches(all.iter().map(|r| r.name.clone()));
            return Ok(all.into_iter().filter(|r| keep.contains(&r.name)).collect());
        }
        let mut out = Vec::new();
        for n in names {
            match all.iter().find(|r| r.name == *n) {
                Some(r) => out.push(r.clone()),
                None => {
                    let known: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
                    return Err(EngineError::not_found(format!(
                        "no repository named `{n}` is indexed"
                    ))
                    .with_hint(if known.is_empty() {
                        "index it with {ken:index}".to_string()
                    } else {
                        format!("indexed: {}", known.join(", "))
                    }));
                }
            }
        }
        Ok(out)
    }

    /// The named repositories, each opened alone (None: one of them is not
    /// there or not visible; [`Engine::select`] then says which, and what is).
    fn open_named(&self, names: &[String], access: &Access) -> Result<Option<Vec<Arc<OpenRepo>>>> {
        let stores = self.stores()?;
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            let key = stores.key_of(n);
            if !access.allows(n) || !stores.exists(&key)? {
                return Ok(None);
            }
            let repo = self.open_key(&*stores, &key)?;
            // names compare as written, never through the storage key
            if repo.name != *n {
                return Ok(None);
            }
            out.push(repo);
        }
        Ok(Some(out))
    }

    /// One repository: the named one, or the only visible one.
    pub fn one_repo(&self, name: Option<&str>, access: &Access) -> Result<Arc<OpenRepo>> {
        let names: Vec<String> = name.iter().map(|n| n.to_string()).collect();
        let mut repos = self.select(&names, access)?;
        if repos.len() > 1 {
            let list: Vec<&str> = repos.iter().map(|r| r.name.as_str()).collect();
            return Err(
                EngineError::bad_input("several repositories are indexed; this needs one")
                    .with_hint(format!("pick one with {{--repo}} ({})", list.join(", "))),
            );
        }
        Ok(repos.remove(0))
    }

    /// Forget one open repository so the next request reopens it.
    pub fn forget(&self, name: &str) {
        let key = match self.stores() {
            Ok(s) => s.key_of(name),
            Err(_) => return,
        };
        self.repos
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    }

    /// Forget open repositories so the next request reopens them.
    pub fn refresh(&self) {
        self.repos.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    // --- capabilities ---

    pub fn search(&self, req: &SearchRequest, access: &Access) -> Result<SearchResponse> {
        let embedder = match req.mode {
            crate::search::Mode::Lexical => None,
            _ => self.embedder()?,
        };
        let Some(reranker) = self.reranker()? else {
            return self.search_unranked(req, access, embedder.as_deref());
        };
        // The reranker reads the best `rerank_top` hits even when fewer are
        // asked for, so it can lift one from below the limit.
        let top = self.settings.rerank_top;
        let wide = SearchRequest {
            limit: req.limit.max(top),
            ..req.clone()
        };
        let mut resp = self.search_unranked(&wide, access, embedder.as_deref())?;
        crate::search::rerank_hits(&*reranker, &mut resp, top);
        resp.hits.truncate(req.limit);
        resp.recount();
        Ok(resp)
    }

    /// A search before reranking: of the named repositories, or, without
    /// names and with a collection index, of every visible repository
    /// through routing (route.rs).
    fn search_unranked(
        &self,
        req: &SearchRequest,
        access: &Access,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse> {
        let rank = &self.settings.rank;
        if !req.filters.branches.is_empty() {
            let repos = self.on_branches(&req.filters, access)?;
            return crate::search::search_repos(&repos, req, rank, embedder);
        }
        if req.filters.repos.is_empty()
            && let Some(fleet) = self.fleet()?
        {
            let stores = self.stores()?;
            let keys = stores.list()?;
            if keys.len() > 1 {
                let open = |key: &str| self.open_key(&*stores, key);
                let allows = |name: &str| access.allows(name);
                let repos = crate::route::Repos {
                    stores: &*stores,
                    fleet: &*fleet,
                    open: &open,
                    allows: &allows,
                };
                return crate::route::search_all(&repos, req, rank, embedder);
            }
        }
        let repos = self.select(&req.filters.repos, access)?;
        crate::search::search_repos(&repos, req, rank, embedder)
    }

    /// The configured reranker (None: off), built once.
    pub fn reranker(&self) -> Result<Option<Arc<dyn ken_embed::Reranker>>> {
        self.reranker
            .get_or_init(|| {
                let made: ken_embed::Result<Arc<dyn ken_embed::Reranker>> =
                    match &self.settings.reranker {
                        None => return Ok(None),
                        Some(RerankerSpec::Http(cfg)) => ken_embed::HttpReranker::new(cfg.clone())
                            .map(|r| Arc::new(r) as Arc<dyn ken_embed::Reranker>),
                        Some(RerankerSpec::Local { dir, max_tokens }) => {
                            let opts = ken_embed::CrossOptions {
                                max_tokens: *max_tokens,
                                ..ken_embed::CrossOptions::default()
                            };
                            ken_embed::LocalCrossEncoder::load(dir, opts)
                                .map(|r| Arc::new(r) as Arc<dyn ken_embed::Reranker>)
                        }
                    };
                made.map(Some).map_err(|e| {
                    EngineError::bad_input(format!("the reranker: {e}")).with_hint(
                        "fix rerank_base_url or rerank_model_dir in config.toml, or remove them",
                    )
                })
            })
            .clone()
    }

    /// Answer a question; `observer` sees the steps and the streamed text.
    pub fn ask(
        &self,
        req: &AskRequest,
        access: &Access,
        observer: &mut dyn AskObserver,
    ) -> Result<AskResponse> {
        if req.question.trim().is_empty() {
            return Err(EngineError::bad_input("no question given")
                .with_hint("ask something, e.g. \"how are sessions refreshed?\""));
        }
        let repos = self.select(&req.repos, access)?;
        let embedder = self.embedder()?;
        let chat: Option<Arc<ChatClient>> = match (&req.model, req.offline) {
            (_, true) => None,
            (Some(model), false) => {
                let Some(cfg) = &self.settings.llm else {
                    return Err(EngineError::bad_input(format!(
                        "no chat endpoint is configured to run `{model}` on"
                    ))
                    .with_hint("set KEN_LLM_BASE_URL"));
                };
                let mut cfg = cfg.clone();
                cfg.model = model.clone();
                Some(Arc::new(
                    ChatClient::new(cfg).map_err(|e| EngineError::bad_input(e.to_string()))?,
                ))
            }
            (None, false) => self.chat()?,
        };
        let llm = chat.as_deref().map(|c| c as &dyn ChatModel);
        let tickets = self.ticket_evidence(&repos, &req.question)?;
        crate::ask::ask_repos(
            &self.settings,
            &repos,
            req,
            &tickets,
            llm,
            embedder.as_deref(),
            observer,
        )
    }

    /// Imported tickets of `repos` that a question is about (none unless it
    /// speaks of bugs, issues, tickets or fixes, or names a ticket).
    fn ticket_evidence(
        &self,
        repos: &[Arc<OpenRepo>],
        question: &str,
    ) -> Result<Vec<crate::tickets::TicketEvidence>> {
        if !crate::tickets::asks_about_tickets(question) {
            return Ok(Vec::new());
        }
        let (stores, home) = (self.stores()?, self.home_store()?);
        let mut out = Vec::new();
        for r in repos {
            let tickets = home.tickets(&stores.key_of(&r.name))?;
            if !tickets.is_empty() {
                out.extend(crate::tickets::ticket_evidence(r, tickets, question, 3)?);
            }
        }
        Ok(out)
    }

    /// Who knows a topic, path or symbol.
    pub fn who(
        &self,
        query: &str,
        repos: &[String],
        limit: usize,
        access: &Access,
    ) -> Result<WhoResponse> {
        if query.trim().is_empty() {
            return Err(EngineError::bad_input("nothing to look for")
                .with_hint("give a topic, path or symbol, e.g. \"payment retries\""));
        }
        let repos = self.select(repos, access)?;
        let embedder = self.embedder()?;
        let mut answer = crate::who::who_repos(
            &repos,
            query,
            limit.clamp(1, 100),
            &self.settings.rank,
            embedder.as_deref(),
        )?;
        answer.tickets = self.ticket_evidence(&repos, query)?;
        Ok(answer)
    }

    /// People seen in the history of each repository.
    pub fn people(
        &self,
        repos: &[String],
        bots: bool,
        access: &Access,
    ) -> Result<Vec<(String, PersonSummary)>> {
        let mut all = Vec::new();
        for r in self.select(repos, access)? {
            for p in crate::people::people(&*r.store, r.ids.clone(), bots)? {
                all.push((r.name.clone(), p));
            }
        }
        Ok(all)
    }

    /// Commits by words in their messages and paths.
    pub fn log_search(&self, req: &LogSearchRequest, access: &Access) -> Result<Vec<LogHit>> {
        let repos = self.select(&req.repos, access)?;
        let req = LogSearchRequest {
            limit: req.limit.clamp(1, 1000),
            ..req.clone()
        };
        crate::who::log_search_repos(&repos, &req)
    }

    /// Callers, callees or impact of a symbol in one repository.
    pub fn structure(
        &self,
        symbol: &str,
        repo: Option<&str>,
        walk: Walk,
        access: &Access,
    ) -> Result<StructureAnswer> {
        if symbol.trim().is_empty() {
            return Err(EngineError::bad_input("no symbol given")
                .with_hint("name one: `name`, `Class.method` or `path:name`"));
        }
        let walk = match walk {
            Walk::Impact { max_depth } => Walk::Impact {
                max_depth: max_depth.clamp(1, 50),
            },
            w => w,
        };
        let answer = |r: &OpenRepo, result| StructureAnswer {
            repo: r.name.clone(),
            commit: r.state.commit.clone(),
            result,
        };
        if repo.is_some() {
            let r = self.one_repo(repo, access)?;
            let result = r.graph()?.structure(symbol.trim(), walk);
            return Ok(answer(&r, result));
        }
        // no repository named: the one that defines the symbol
        let mut found: Vec<StructureAnswer> = Vec::new();
        for r in self.select(&[], access)? {
            let result = r.graph()?.structure(symbol.trim(), walk);
            if !result.candidates.is_empty() {
                found.push(answer(&r, result));
            }
        }
        match found.len() {
            0 => Ok(StructureAnswer {
                repo: String::new(),
                commit: None,
                result: StructureResult {
                    symbol: symbol.trim().to_string(),
                    candidates: Vec::new(),
                    results: Vec::new(),
                },
            }),
            1 => Ok(found.remove(0)),
            _ => {
                let names: Vec<&str> = found.iter().map(|a| a.repo.as_str()).collect();
                Err(EngineError::bad_input(format!(
                    "`{}` is defined in several repositories",
                    symbol.trim()
                ))
                .with_hint(format!("pick one with {{--repo}} ({})", names.join(", "))))
            }
        }
    }

    /// Definitions named `name` (case-exact first, then ignoring case and
    /// separators), in every selected repository.
    pub fn find_symbol(
        &self,
        name: &str,
        repos: &[String],
        limit: usize,
        access: &Access,
    ) -> Result<Vec<SymbolHit>> {
        let name = name.trim();
        if name.is_empty() {
            return Err(EngineError::bad_input("no symbol name given"));
        }
        let mut out = Vec::new();
        for r in self.select(repos, access)? {
            for m in r.store.lookup_symbols(name, limit.clamp(1, 200), false)? {
                let matched = match m.tier {
                    SymbolTier::Exact => "exact",
                    SymbolTier::ExactFolded => "folded",
                    _ => continue,
                };
                out.push(SymbolHit {
                    repo: r.name.clone(),
                    path: m.path,
                    symbol: m.qualname,
                    name: m.name,
                    kind: m.kind.name().to_string(),
                    start_line: m.start_line,
                    end_line: m.end_line,
                    matched: matched.to_string(),
                    commit: r.state.commit.clone(),
                });
            }
        }
        out.sort_by_key(|h| (h.matched != "exact", ken_core::is_test_path(&h.path)));
        out.truncate(limit.clamp(1, 200));
        Ok(out)
    }

    /// A report over a period of one repository (`ken report`).
    pub fn report(
        &self,
        req: &crate::report::ReportRequest,
        access: &Access,
    ) -> Result<ken_report::Report> {
        let r = self.one_repo(req.repo.as_deref(), access)?;
        let key = self.stores()?.key_of(&r.name);
        let tickets = self.home_store()?.tickets(&key)?;
        let mut report =
            crate::report::report(&self.settings, &r, tickets, req, crate::time::now())?;
        if req.narrative {
            match self.chat()? {
                Some(chat) => crate::report::narrate(&*chat, &mut report)?,
                None => report
                    .notes
                    .push("no chat model is configured: the report has no written summary".into()),
            }
        }
        Ok(report)
    }

    /// Read an issue-tracker export into a repository's tickets (`ken tickets import`).
    pub fn import_tickets(
        &self,
        repo: Option<&str>,
        bytes: &[u8],
        format: ken_report::tickets::TicketFormat,
        access: &Access,
    ) -> Result<crate::tickets::TicketImport> {
        let r = self.one_repo(repo, access)?;
        let key = self.stores()?.key_of(&r.name);
        crate::tickets::import_tickets(&*self.home_store()?, &r, &key, bytes, format)
    }

    /// A repository's imported tickets with the commits linked to each.
    pub fn tickets(
        &self,
        repo: Option<&str>,
        access: &Access,
    ) -> Result<(String, Vec<crate::tickets::LinkedTicket>)> {
        let r = self.one_repo(repo, access)?;
        let key = self.stores()?.key_of(&r.name);
        let tickets = self.home_store()?.tickets(&key)?;
        Ok((r.name.clone(), crate::tickets::linked_tickets(&r, tickets)?))
    }

    /// What is indexed, at which commit, and how much is embedded.
    pub fn status(&self, names: &[String], access: &Access) -> Result<Vec<RepoStatus>> {
        let repos = if names.is_empty() {
            self.repos(access)?
        } else {
            self.select(names, access)?
        };
        let mut out = crate::status::status_repos(&repos, self.settings.embed_text)?;
        // what polling saw; a home that cannot be read leaves it out
        let heads = self.remote_heads().unwrap_or_default();
        for s in &mut out {
            s.remote = heads.iter().find(|h| h.repo == s.name).cloned();
        }
        Ok(out)
    }

    /// Lines `start..=end` (1-based; None: from the first / to the last) of
    /// a file at the indexed commit, at most [`MAX_READ_LINES`].
    pub fn read_range(
        &self,
        repo: &str,
        path: &str,
        start: Option<u32>,
        end: Option<u32>,
        highlighted: bool,
        access: &Access,
    ) -> Result<FileRange> {
        let r = self.one_repo(Some(repo), access)?;
        let path = path.trim().trim_start_matches("./");
        let Some(text_of_file) = r.store.file_text(path)? else {
            return Err(EngineError::not_found(format!(
                "{path} is not indexed in {}",
                r.name
            ))
            .with_hint("paths are relative to the repository root; skipped files (binary, too large) have no text"));
        };
        let lines: Vec<&str> = text_of_file.lines().collect();
        let total = lines.len() as u32;
        let start = start.unwrap_or(1).max(1);
        if start > total.max(1) {
            return Err(EngineError::not_found(format!(
                "{path} has {total} lines; line {start} is past its end"
            )));
        }
        // an end before the start reads the start line alone
        let end = end
            .unwrap_or(total)
            .max(start)
            .min(total)
            .min(start.saturating_add(MAX_READ_LINES - 1));
        let text = if total == 0 {
            String::new()
        } else {
            lines[(start - 1) as usize..end as usize].join("\n")
        };
        // the whole file is highlighted (a range alone may start inside a
        // string or comment), then cut
        let lines_html = highlighted.then(|| {
            let all = highlight(path, &text_of_file);
            all.into_iter()
                .skip((start.max(1) - 1) as usize)
                .take((end + 1).saturating_sub(start) as usize)
                .collect()
        });
        let language = ken_core::Language::from_path(path).name().to_string();
        Ok(FileRange {
            repo: r.name.clone(),
            path: path.to_string(),
            commit: r.state.commit.clone(),
            language,
            start_line: start,
            end_line: end.max(start.min(total)),
            total_lines: total,
            text,
            lines_html,
        })
    }

    /// Who last changed each range of a file at the indexed commit.
    pub fn blame(&self, repo: &str, path: &str, access: &Access) -> Result<FileBlame> {
        let r = self.one_repo(Some(repo), access)?;
        let path = path.trim().trim_start_matches("./");
        if r.store.file_text(path)?.is_none() {
            return Err(EngineError::not_found(format!(
                "{path} is not indexed in {}",
                r.name
            )));
        }
        let lines = r.store.blame_of(path)?;
        let mut shas: Vec<String> = lines.iter().map(|b| b.sha.clone()).collect();
        shas.sort();
        shas.dedup();
        let commits = r.store.commits(&shas, false)?;
        let ranges = lines
            .into_iter()
            .map(|b| {
                let c = commits.get(&b.sha);
                let person = c.map(|c| r.ids.resolve(&c.author_name, &c.author_email));
                BlameRange {
                    start_line: b.start_line,
                    end_line: b.end_line,
                    author: person
                        .as_ref()
                        .map(|p| p.display_name.clone())
                        .unwrap_or_default(),
                    person: person.map(|p| p.id).unwrap_or_default(),
                    when: c.map(|c| c.author_time).unwrap_or(0),
                    summary: c.map(|c| c.summary.clone()).unwrap_or_default(),
                    sha: b.sha,
                }
            })
            .collect();
        Ok(FileBlame {
            repo: r.name.clone(),
            path: path.to_string(),
            commit: r.state.commit.clone(),
            ranges,
        })
    }

    /// A person (by id or any alias) in one repository: their aliases, the
    /// directories whose lines they last changed most, their recent commits.
    pub fn person(&self, who: &str, repo: Option<&str>, access: &Access) -> Result<PersonView> {
        let r = self.one_repo(repo, access)?;
        let who = who.trim();
        let people = crate::people::people(&*r.store, r.ids.clone(), true)?;
        let lower = who.to_lowercase();
        let Some(person) = people.into_iter().find(|p| {
            p.id == who
                || p.name.to_lowercase() == lower
                || p.emails.iter().any(|e| e.to_lowercase() == lower)
                || p.names.iter().any(|n| n.to_lowercase() == lower)
                || p.handles.iter().any(|h| h.to_lowercase() == lower)
        }) else {
            return Err(
                EngineError::not_found(format!("nobody called `{who}` in {}", r.name))
                    .with_hint("see {ken:people} for names and ids"),
            );
        };
        // lines last changed, per directory, from the blame of every file
        let authors: HashMap<String, String> = r
            .store
            .all_commits()?
            .into_iter()
            .map(|c| {
                (
                    c.sha.clone(),
                    r.ids.resolve(&c.author_name, &c.author_email).id,
                )
            })
            .collect();
        let mut per_dir: HashMap<String, (u64, u64)> = HashMap::new();
        for f in r.store.files()?.into_iter().filter(|f| f.skip.is_none()) {
            let dir = match f.path.rsplit_once('/') {
                Some((d, _)) => d.to_string(),
                None => ".".to_string(),
            };
            for b in r.store.blame_of(&f.path)? {
                let n = (b.end_line + 1 - b.start_line) as u64;
                let e = per_dir.entry(dir.clone()).or_default();
                e.1 += n;
                if authors.get(&b.sha) == Some(&person.id) {
                    e.0 += n;
                }
            }
        }
        let mut areas: Vec<Area> = per_dir
            .into_iter()
            .filter(|(_, (mine, _))| *mine > 0)
            .map(|(path, (mine, all))| Area {
                path,
                lines: mine,
                share: mine as f32 / all.max(1) as f32,
            })
            .collect();
        areas.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.path.cmp(&b.path)));
        areas.truncate(20);
        let commits = crate::who::log_search_repos(
            std::slice::from_ref(&r),
            &LogSearchRequest {
                query: String::new(),
                repos: Vec::new(),
                limit: 20,
                author: Some(person.id.clone()),
                since: None,
                until: None,
            },
        )?;
        Ok(PersonView {
            repo: r.name.clone(),
            person,
            areas,
            commits,
        })
    }

    /// Index (or bring up to date) a repository, in this thread.
    pub fn index(&self, req: &IndexRequest, progress: &dyn Progress) -> Result<IndexReport> {
        let embedder = if req.no_embed { None } else { self.embedder()? };
        let settings = req.limits.apply(&self.settings);
        let report = crate::index::index(&settings, req, progress, embedder.as_deref());
        // what this engine wrote is seen by its next request, not 200 ms later
        match &report {
            Ok(r) => self.forget(&r.name),
            Err(_) => self.refresh(),
        }
        if let Some(Ok(Some(fleet))) = self.fleet.get() {
            fleet.refresh()?;
        }
        report
    }

    /// Embeddings of texts, as documents or as queries.
    pub fn embed(&self, texts: &[&str], as_query: bool) -> Result<(String, usize, Vec<Vec<f32>>)> {
        let Some(e) = self.embedder()? else {
            return Err(EngineError::unavailable("no embedding model").with_hint(
                "run `ken model install`, or set KEN_EMBED_MODEL_DIR or KEN_EMBED_BASE_URL",
            ));
        };
        let vectors = if as_query {
            texts
                .iter()
                .map(|t| e.embed_query(t))
                .collect::<std::result::Result<Vec<_>, _>>()
        } else {
            e.embed_documents(texts)
        }
        .map_err(EngineError::from_embed)?;
        Ok((e.id().to_string(), e.dim(), vectors))
    }

    /// Retrieval metrics on a query set (see [`crate::eval`]).
    pub fn eval(
        &self,
        opts: &crate::eval::EvalOptions,
        log: &dyn Fn(&str),
    ) -> Result<crate::eval::EvalReport> {
        let embedder = match opts.mode {
            crate::eval::EvalMode::Search(crate::search::Mode::Lexical)
            | crate::eval::EvalMode::Baseline => None,
            _ => self.embedder()?,
        };
        let mut settings = self.settings.clone();
        for p in &opts.params {
            settings.rank.set_pair(p)?;
        }
        crate::eval::eval(&settings, opts, log, embedder.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_engine_can_be_shared_between_threads() {
        assert_send_sync::<Engine>();
        assert_send_sync::<OpenRepo>();
    }

    #[test]
    fn access_matches_names_as_directories_do() {
        let a = Access::Only(vec!["pallets/flask".into()]);
        assert!(a.allows("pallets/flask"));
        assert!(!a.allows("flask"));
        assert!(!a.allows("cobra"));
        assert!(Access::All.allows("anything"));
    }

    #[test]
    fn open_repositories_are_bounded_by_the_setting() {
        let home = tempfile::tempdir().unwrap();
        let mut settings = Settings::new(home.path().to_path_buf());
        settings.open_repos = 1;
        let e = Engine::new(settings);
        let _dirs = crate::testing::web_and_math(&e);
        let open = || e.repos.lock().unwrap().len();
        let ask = |q: &str, repos: &[&str]| {
            let req = SearchRequest {
                query: q.into(),
                limit: 5,
                filters: ken_core::Filters {
                    repos: repos.iter().map(|r| r.to_string()).collect(),
                    ..Default::default()
                },
                files: true,
                mode: crate::search::Mode::Lexical,
            };
            e.search(&req, &Access::All).unwrap().hits
        };
        assert_eq!(ask("serve request", &["web"])[0].repo, "web");
        assert_eq!(ask("determinant", &["math"])[0].repo, "math");
        assert_eq!(open(), 1);
        // routed over both, one open at a time
        assert_eq!(ask("determinant", &[])[0].repo, "math");
        assert_eq!(ask("serve request", &[])[0].repo, "web");
        assert_eq!(open(), 1);
    }

    #[test]
    fn a_reopened_repository_keeps_its_churn_until_its_index_changes() {
        use crate::testing::{git, index};
        let home = tempfile::tempdir().unwrap();
        let mut settings = Settings::new(home.path().to_path_buf());
        settings.open_repos = 1;
        let e = Engine::new(settings);
        let web = tempfile::tempdir().unwrap();
        let day = "2024-01-01T10:00:00";
        git(web.path(), &["init", "-q"], day);
        std::fs::write(
            web.path().join("app.py"),
            "def serve(req):\n    return req\n",
        )
        .unwrap();
        git(web.path(), &["add", "."], day);
        git(web.path(), &["commit", "-q", "-m", "Fix serving"], day);
        index(&e, web.path(), "web");
        let math = tempfile::tempdir().unwrap();
        std::fs::write(math.path().join("m.py"), "def det(m):\n    return 1\n").unwrap();
        index(&e, math.path(), "math");

        let stores = e.stores().unwrap();
        let rank = crate::params::RankParams {
            w_churn: 1.0,
            ..Default::default()
        };
        let held = |key: &str| e.shelf.lock().unwrap().holds(key);
        let first = e
            .open_key(&*stores, "web")
            .unwrap()
            .churn(&rank)
            .unwrap()
            .unwrap();
        assert_eq!(first.counts("app.py", None).fixes, 1);
        e.open_key(&*stores, "math").unwrap();
        assert!(held("web"), "web closed: its churn is kept");
        let again = e.open_key(&*stores, "web").unwrap();
        assert!(Arc::ptr_eq(&again.stamped_churn().unwrap().1, &first));
        assert!(!held("web"), "taken by the open repository");
        drop(again);

        // a new commit indexed: what was kept is not given again
        e.open_key(&*stores, "math").unwrap();
        assert!(held("web"));
        std::fs::write(
            web.path().join("app.py"),
            "def serve(req):\n    return req.body\n",
        )
        .unwrap();
        git(
            web.path(),
            &["commit", "-q", "-am", "Fix the body"],
            "2024-01-02T10:00:00",
        );
        index(&e, web.path(), "web");
        let moved = e.open_key(&*stores, "web").unwrap();
        assert!(moved.stamped_churn().is_none());
        assert_eq!(
            moved
                .churn(&rank)
                .unwrap()
                .unwrap()
                .counts("app.py", None)
                .fixes,
            2
        );
    }

    #[test]
    fn an_empty_home_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::new(Settings::new(dir.path().to_path_buf()));
        let err = e.select(&[], &Access::All).err().unwrap();
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
        assert!(
            err.hint_for(crate::Edge::Cli)
                .unwrap()
                .contains("ken index")
        );
        let http = err.hint_for(crate::Edge::Http).unwrap();
        assert!(http.contains("POST /api/v1/repos/{name}/index"), "{http}");
        assert!(e.status(&[], &Access::All).unwrap().is_empty());
    }
}
