//! The indexing pipeline: resolve the source, list its files, compare with
//! what the index holds, and re-process only what changed.
//!
//! Readers and parsers run on worker threads; one writer thread applies batches to
//! the store. Every batch is atomic, so a killed run leaves the last
//! committed index searchable and the next run picks up where it stopped
//! (files whose stored id already matches are not redone).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use ken_core::Language;
use ken_source::{Entry, GitRepo, ListOptions, Listing, SkipReason};
use ken_store::{
    Batch, ChunkStore, FileContent, FileUpdate, HistoryStore, IndexState, IndexStore, Store,
};
use ken_store::{GraphStore, VectorStore};
use serde::Serialize;

use crate::graph::{self, GraphReport};
use crate::people::{self, PeopleReport};
use crate::search::SearchEnv;
use crate::semantic::{self, EmbedProgress, EmbedReport};
use crate::{EngineError, Result, Settings, home, tune};
use ken_embed::Embedder;

/// What to index.
#[derive(Debug, Clone, Default)]
pub struct IndexRequest {
    /// A path (working tree or git directory) or a clone URL; `.` when empty.
    pub source: String,
    /// A commit to index instead of the working tree.
    pub rev: Option<String>,
    /// The index's name (default: the folder or URL's last component,
    /// then `@BRANCH` when a branch is given).
    pub name: Option<String>,
    /// Follow this branch instead of the source's default (or working
    /// tree): its head is indexed unless `rev` says which commit.
    pub branch: Option<String>,
    /// Skip embedding (lexical index only).
    pub no_embed: bool,
    /// This run's limits, each in place of the engine's setting when given.
    pub limits: IndexLimits,
    /// A SCIP index of the snapshot to read into the code graph (without
    /// one, the snapshot's own `index.scip`, in the working tree or the
    /// commit, is read when it changed).
    pub scip: Option<PathBuf>,
}

/// Limits of one index run that override the engine's settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct IndexLimits {
    /// Files larger than this many bytes are left out.
    pub max_file_bytes: Option<u64>,
    /// Worker threads that read and chunk files (at least 1).
    pub threads: Option<usize>,
    /// Time the embedding step may take before it stops for the next run.
    pub embed_budget: Option<std::time::Duration>,
}

impl IndexLimits {
    /// `settings` with these limits in place.
    pub fn apply(&self, settings: &Settings) -> Settings {
        let mut s = settings.clone();
        if let Some(m) = self.max_file_bytes {
            s.max_file_bytes = m;
        }
        if let Some(t) = self.threads {
            s.threads = t.max(1);
        }
        if self.embed_budget.is_some() {
            s.embed_budget = self.embed_budget;
        }
        s
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IndexReport {
    pub name: String,
    pub commit: Option<String>,
    pub worktree: bool,
    /// The source is a folder outside any git repository (no history).
    pub plain_folder: bool,
    pub up_to_date: bool,
    /// Files of the snapshot that are indexed (after the run).
    pub files: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub renamed: u64,
    /// Files read and parsed by this run.
    pub processed: u64,
    pub chunks: u64,
    pub bytes: u64,
    /// Files of the snapshot left out, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// A few examples per skip reason.
    pub skipped_examples: BTreeMap<String, Vec<String>>,
    pub warnings: Vec<String>,
    /// What the embedding step did (None when embeddings are off or skipped).
    pub embed: Option<EmbedReport>,
    /// What the graph update did.
    pub graph: Option<GraphReport>,
    /// What reading a SCIP index into the graph did (none: no index read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scip: Option<graph::ScipReport>,
    /// What the history and blame update did.
    pub people: Option<PeopleReport>,
    /// What the collection index (searches over every repository) took
    /// from this run (none: it already held it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::fleet::FleetReport>,
    /// The fusion learned from history this run (none: not learned again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranking: Option<ken_store::TunedRanking>,
    /// The query map dense retrieval learned this run (weights left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<ken_store::DenseAdapter>,
    /// When the snapshot's lexical search, symbols and graph answered
    /// (milliseconds from the start): history, blame and embeddings come
    /// after. None when nothing was indexed (up to date).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searchable_ms: Option<u64>,
    pub elapsed_ms: u64,
}

/// Progress of a run, for a bar or a log. Called from the thread that
/// gathers the parsed files into batches.
pub trait Progress: EmbedProgress {
    fn begin(&self, _files: u64, _bytes: u64) {}
    fn advance(&self, _files: u64, _bytes: u64, _chunks: u64) {}
    fn note(&self, _message: &str) {}
    fn end(&self) {}
    /// The snapshot answers searches (lexical, symbols, graph) from now
    /// on; `elapsed` since the run started. History, blame and embedding
    /// follow.
    fn searchable(&self, _elapsed: std::time::Duration) {}
}

pub struct NoProgress;
impl Progress for NoProgress {}
impl EmbedProgress for NoProgress {}

/// Where file contents are read from.
#[derive(Clone)]
enum Reader {
    Git(Box<GitRepo>),
    Worktree(PathBuf),
}

impl Reader {
    fn read(&self, e: &Entry) -> std::result::Result<Vec<u8>, String> {
        match self {
            Reader::Git(repo) => repo.read_blob(&e.id).map_err(|err| err.to_string()),
            Reader::Worktree(root) => {
                ken_source::read_worktree_file(root, &e.path).map_err(|err| err.to_string())
            }
        }
    }
}

/// The resolved snapshot to index.
struct Target {
    name: String,
    source_label: String,
    reader: Reader,
    commit: Option<ken_source::CommitInfo>,
    worktree: bool,
    /// The repository (for history and blame); `None` for a plain folder.
    repo: Option<GitRepo>,
    /// The branch followed (`IndexRequest::branch`).
    branch: Option<String>,
}

fn resolve(settings: &Settings, req: &IndexRequest) -> Result<Target> {
    if let Some(name) = &req.name {
        ken_core::repo_name::check(name)
            .map_err(|why| EngineError::bad_input(format!("cannot name a repository so: {why}")))?;
    }
    let branch = req
        .branch
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty());
    if let Some(b) = branch {
        check_branch(b)?;
    }
    let source = if req.source.is_empty() {
        "."
    } else {
        req.source.as_str()
    };
    let named = |default: String| {
        req.name.clone().unwrap_or_else(|| match branch {
            Some(b) => format!("{default}@{b}"),
            None => default,
        })
    };
    let mut target = if ken_source::is_url(source) {
        let base = ken_core::repo_name::from_path_part(&ken_source::repo_name_from_url(source));
        let name = named(base);
        let remote = ken_source::check_remote(
            source,
            ken_source::RemotePolicy {
                allow_private: settings.allow_private_urls,
            },
        )?;
        // the branches of one repository share its clone
        let dest = home::clone_dir(&settings.home, crate::branch::branch_base(&name, branch));
        let default_rev =
            ken_source::clone_or_fetch(&remote, &dest, settings.git_token.as_deref())?;
        let repo = GitRepo::open(&dest)?;
        let rev = match (&req.rev, branch) {
            (Some(r), _) => r.clone(),
            (None, Some(b)) => format!("refs/remotes/origin/{b}"),
            (None, None) => default_rev,
        };
        let commit = repo.resolve(&rev)?;
        Target {
            name,
            source_label: ken_source::redact(source),
            reader: Reader::Git(Box::new(repo.clone())),
            commit: Some(commit),
            worktree: false,
            repo: Some(repo),
            branch: None,
        }
    } else {
        local_target(req, source, branch, &named)?
    };
    target.branch = branch.map(str::to_string);
    Ok(target)
}

/// A repository (or plain folder) on this machine.
fn local_target(
    req: &IndexRequest,
    source: &str,
    branch: Option<&str>,
    named: &dyn Fn(String) -> String,
) -> Result<Target> {
    let path = Path::new(source);
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let repo = match GitRepo::open(path) {
        Ok(repo) => repo,
        Err(ken_source::SourceError::NotARepository(_)) if path.is_dir() && branch.is_none() => {
            return plain_folder(req, &abs);
        }
        Err(e) => return Err(e.into()),
    };
    let name = named(default_name(&abs, repo.workdir().is_some()));
    let label = abs.display().to_string();
    let rev = req.rev.clone().or_else(|| branch.map(str::to_string));
    let (reader, commit, worktree) = match (rev, repo.workdir().map(Path::to_path_buf)) {
        (Some(rev), _) => (
            Reader::Git(Box::new(repo.clone())),
            Some(repo.resolve(&rev)?),
            false,
        ),
        (None, Some(workdir)) => (Reader::Worktree(workdir), repo.head()?, true),
        (None, None) => (
            Reader::Git(Box::new(repo.clone())),
            Some(repo.resolve("HEAD")?),
            false,
        ),
    };
    Ok(Target {
        name,
        source_label: label,
        reader,
        commit,
        worktree,
        repo: Some(repo),
        branch: None,
    })
}

/// A branch name as git allows it, roughly: no spaces, control characters,
/// `..`, any of `~^:?*[\`, a leading `-` or `/`.
fn check_branch(b: &str) -> Result<()> {
    let bad = b.starts_with('-')
        || b.starts_with('/')
        || b.ends_with('/')
        || b.ends_with(".lock")
        || b.contains("..")
        || b.contains("//")
        || b.chars().any(|c| {
            c.is_control()
                || c.is_whitespace()
                || matches!(c, '~' | '^' | ':' | '?' | '*' | '[' | '\\')
        });
    if bad {
        return Err(EngineError::bad_input(format!(
            "`{}` is not a branch name",
            b.escape_debug()
        )));
    }
    Ok(())
}

/// A folder outside any git repository: its files as they are on disk,
/// with no commit, so no history and no people.
fn plain_folder(req: &IndexRequest, abs: &Path) -> Result<Target> {
    if req.rev.is_some() {
        return Err(EngineError::bad_input(format!(
            "{} is not a git repository, so it has no revisions: index it without {{--rev}}",
            abs.display()
        )));
    }
    Ok(Target {
        name: req.name.clone().unwrap_or_else(|| default_name(abs, true)),
        source_label: abs.display().to_string(),
        reader: Reader::Worktree(abs.to_path_buf()),
        commit: None,
        worktree: true,
        repo: None,
        branch: None,
    })
}

/// `/src/flask` → `flask`; a bare `/srv/flask.git` → `flask`; `/x/flask/.git` → `flask`.
fn default_name(abs: &Path, has_workdir: bool) -> String {
    let file = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut name = file(abs).unwrap_or_else(|| "repo".into());
    if (name == ".git" || (!has_workdir && name == "repo"))
        && let Some(parent) = abs.parent().and_then(file)
    {
        name = parent;
    }
    let name = name.strip_suffix(".git").unwrap_or(&name);
    ken_core::repo_name::from_path_part(name)
}

/// What scip-python, scip-typescript and most SCIP indexers write by default.
pub const SCIP_FILE: &str = "index.scip";

/// Read the run's SCIP index into the graph saved as of batch `seq`: the
/// one asked for (an error when it cannot be read), else the snapshot's
/// own `index.scip`, in the working tree or the commit (a warning when it
/// cannot be read). An index read before is not read again.
fn scip_step(
    req: &IndexRequest,
    target: &Target,
    store: &mut (dyn Store + Send + Sync),
    seq: u64,
    warnings: &mut Vec<String>,
) -> Result<Option<graph::ScipReport>> {
    let read_file = |p: &Path| {
        std::fs::read(p)
            .map(|b| Some((b, p.display().to_string())))
            .map_err(|e| {
                EngineError::bad_input(format!("cannot read the SCIP index {}: {e}", p.display()))
            })
    };
    let found: Result<Option<(Vec<u8>, String)>> = match (&req.scip, &target.reader) {
        (Some(p), _) => read_file(p),
        (None, Reader::Worktree(root)) => {
            let p = root.join(SCIP_FILE);
            if p.is_file() { read_file(&p) } else { Ok(None) }
        }
        (None, Reader::Git(repo)) => match &target.commit {
            Some(c) => repo
                .file_at(&c.sha, SCIP_FILE)
                .map(|b| {
                    b.map(|b| {
                        (
                            b,
                            format!("{SCIP_FILE} at {}", &c.sha[..c.sha.len().min(12)]),
                        )
                    })
                })
                .map_err(|e| {
                    EngineError::bad_input(format!("cannot read {SCIP_FILE} of the commit: {e}"))
                }),
            None => Ok(None),
        },
    };
    let asked = req.scip.is_some();
    let read = || -> Result<Option<graph::ScipReport>> {
        let Some((bytes, shown)) = found? else {
            return Ok(None);
        };
        if graph::scip_digest(store)?.as_deref() == Some(ken_core::content_hash(&bytes).as_str()) {
            return Ok(Some(graph::ScipReport {
                path: shown,
                unchanged: true,
                ..Default::default()
            }));
        }
        let mut r = graph::read_scip(store, &bytes, seq).map_err(|e| {
            EngineError::bad_input(format!(
                "the SCIP index {shown} was not read (the rest of the index is written): {e}"
            ))
        })?;
        let mut state = store.state()?;
        state.scip = Some(ken_store::ScipState {
            source: shown.clone(),
            tool: r.stats.tool.clone(),
            files: r.stats.files,
            read_at: crate::time::now(),
        });
        store.set_state(&state)?;
        r.path = shown;
        Ok(Some(r))
    };
    match read() {
        Err(e) if !asked => {
            warnings.push(format!("{e}"));
            Ok(None)
        }
        other => other,
    }
}

/// A graph rebuilt from scratch has forgotten the SCIP index it held:
/// so does the state.
fn forget_scip_if_rebuilt(
    store: &mut (dyn Store + Send + Sync),
    graph: Option<&graph::GraphReport>,
) -> Result<()> {
    if graph.is_some_and(|g| g.full) {
        let mut state = store.state()?;
        if state.scip.take().is_some() {
            store.set_state(&state)?;
        }
    }
    Ok(())
}

/// Index (or update the index of) a repository.
pub fn index(
    settings: &Settings,
    req: &IndexRequest,
    progress: &dyn Progress,
    embedder: Option<&dyn Embedder>,
) -> Result<IndexReport> {
    let started = Instant::now();
    let target = resolve(settings, req)?;
    let stores = settings.stores()?;
    let mut store = stores.open_for_writing(&target.name)?;
    let store: &mut (dyn Store + Send + Sync) = &mut *store;
    let mut report = IndexReport {
        name: target.name.clone(),
        commit: target.commit.as_ref().map(|c| c.sha.clone()),
        worktree: target.worktree,
        plain_folder: target.repo.is_none(),
        ..Default::default()
    };
    let previous = store.state()?;
    same_name(&previous, &target.name)?;
    let seq_before = store.batch_seq()?;
    let opts = ListOptions {
        max_file_bytes: settings.max_file_bytes,
    };
    if !target.worktree
        && previous.commit == report.commit
        && !previous.worktree
        && previous.pending.is_none()
    {
        report.up_to_date = true;
        fill_counts(store, &mut report)?;
        report.graph = Some(graph::update_graph(
            store,
            &[],
            &[],
            seq_before,
            seq_before,
        )?);
        forget_scip_if_rebuilt(store, report.graph.as_ref())?;
        report.scip = scip_step(req, &target, store, seq_before, &mut report.warnings)?;
        report.people = people_step(&target, store, &opts)?;
        fleet_step(
            &*stores,
            &target.name,
            store,
            (&[], &[]),
            seq_before,
            &mut report,
        );
        report.embed = embed(settings, req, store, progress, embedder)?;
        report.adapter = adapt_step(settings, store, embedder, report.embed.as_ref())?;
        report.ranking = tune_step(settings, store, embedder, report.embed.as_ref())?;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }

    let listing = match (&target.reader, &target.commit) {
        (Reader::Worktree(root), _) => ken_source::list_worktree(root, &opts)?,
        (Reader::Git(repo), Some(c)) => repo.list_commit(&c.sha, &opts)?,
        (Reader::Git(_), None) => {
            return Err(EngineError::internal("a git snapshot without a commit"));
        }
    };

    let (changed, deletes) = write_snapshot(
        settings,
        &target,
        &previous,
        &listing,
        store,
        progress,
        &mut report,
    )?;
    let seq_after = store.batch_seq()?;
    report.graph = Some(graph::update_graph(
        store, &changed, &deletes, seq_before, seq_after,
    )?);
    forget_scip_if_rebuilt(store, report.graph.as_ref())?;
    report.scip = scip_step(req, &target, store, seq_after, &mut report.warnings)?;
    store.finish()?;
    fill_counts(store, &mut report)?;
    // Lexical search, symbols and the graph answer from here on; history,
    // blame, the collection index (it holds commit messages) and the
    // embeddings follow.
    let searchable = started.elapsed();
    report.searchable_ms = Some(searchable.as_millis() as u64);
    progress.searchable(searchable);
    report.people = people_step(&target, store, &opts)?;
    if target.repo.is_none() {
        report.warnings.push(
            "not a git repository: no history, so no authors and no people \
             (run `git init` and commit to get them)"
                .into(),
        );
    }
    fleet_step(
        &*stores,
        &target.name,
        store,
        (&changed, &deletes),
        seq_before,
        &mut report,
    );
    if listing.entries.is_empty() && listing.skipped.is_empty() {
        report
            .warnings
            .push("nothing to index: the snapshot has no files".into());
    }
    if progress.cancelled() {
        return Err(EngineError::stopped());
    }
    report.embed = embed(settings, req, store, progress, embedder)?;
    if progress.cancelled() {
        return Err(EngineError::stopped());
    }
    report.adapter = adapt_step(settings, store, embedder, report.embed.as_ref())?;
    if progress.cancelled() {
        return Err(EngineError::stopped());
    }
    report.ranking = tune_step(settings, store, embedder, report.embed.as_ref())?;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The snapshot's files against the store: the changed ones read and
/// written, the gone ones deleted, then the state names the snapshot. The
/// state names the run as pending meanwhile, so a stopped or killed run is
/// resumed. Returns the paths changed and deleted.
fn write_snapshot(
    settings: &Settings,
    target: &Target,
    previous: &IndexState,
    listing: &Listing,
    store: &mut (dyn Store + Send + Sync),
    progress: &dyn Progress,
    report: &mut IndexReport,
) -> Result<(Vec<String>, Vec<String>)> {
    let pending_label = report
        .commit
        .clone()
        .unwrap_or_else(|| "working tree".into());
    store.set_state(&IndexState {
        pending: Some(pending_label),
        ..previous.clone()
    })?;

    // Compare with what is stored.
    let (deletes, todo) = compare(store, listing, report)?;

    let total_bytes: u64 = todo.iter().map(|e| e.size).sum();
    progress.begin(todo.len() as u64, total_bytes);
    let changed: Vec<String> = todo.iter().map(|e| e.path.clone()).collect();
    if !deletes.is_empty() {
        store.write_batch(Batch {
            upserts: Vec::new(),
            deletes: deletes.clone(),
        })?;
    }
    process(settings, &target.reader, &todo, store, progress, report)?;
    progress.end();
    if progress.cancelled() {
        // the batches written stay; the state still names the pending run
        return Err(EngineError::stopped());
    }

    store.set_state(&IndexState {
        name: Some(target.name.clone()),
        commit: report.commit.clone(),
        commit_time: target.commit.as_ref().map(|c| c.time),
        worktree: target.worktree,
        source: Some(target.source_label.clone()),
        branch: target.branch.clone(),
        indexed_at: Some(crate::time::now()),
        pending: None,
        left_out: left_out(listing),
        ranking: previous.ranking.clone(),
        blamed_at: previous.blamed_at.clone(),
        embedding_unfinished: previous.embedding_unfinished,
        scip: previous.scip.clone(),
        adapter: previous.adapter.clone(),
    })?;
    Ok((changed, deletes))
}

/// Two names, one storage key (`a/b` and `a__b`): never one index for both.
fn same_name(previous: &IndexState, name: &str) -> Result<()> {
    match previous.name.as_deref().filter(|n| *n != name) {
        Some(held) => Err(EngineError::bad_input(format!(
            "the index `{name}` would use is the index of `{held}`"
        ))
        .with_hint("give this repository another name with {--name}")),
        None => Ok(()),
    }
}

/// The collection index brought to this run's batch. A failure is a
/// warning: the repository's own index is whole, and a search over every
/// repository searches it directly until the collection holds it.
fn fleet_step(
    stores: &dyn ken_store::StoreProvider,
    name: &str,
    store: &(impl ChunkStore + GraphStore + HistoryStore + IndexStore + ?Sized),
    (changed, deletes): (&[String], &[String]),
    seq_before: u64,
    report: &mut IndexReport,
) {
    let done = stores
        .fleet()
        .map_err(EngineError::from)
        .and_then(|fleet| match fleet {
            Some(f) => crate::fleet::update(&*f, name, store, changed, deletes, seq_before),
            None => Ok(None),
        });
    match done {
        Ok(r) => report.fleet = r,
        Err(e) => report.warnings.push(format!(
            "the collection index was not updated ({e}); searches over every repository \
             search this one on its own until `ken index` succeeds again"
        )),
    }
}

/// The listing against what the store holds: the paths to delete and the
/// entries to read (new or of another blob), counted in `report` as added,
/// modified, renamed (a deleted path's blob under a new path) or deleted.
fn compare<'l>(
    store: &(impl IndexStore + ?Sized),
    listing: &'l Listing,
    report: &mut IndexReport,
) -> Result<(Vec<String>, Vec<&'l Entry>)> {
    let stored: HashMap<String, (String, bool)> = store
        .files()?
        .into_iter()
        .map(|f| (f.path, (f.id, f.skip.is_none())))
        .collect();
    let listed: HashSet<&str> = listing.entries.iter().map(|e| e.path.as_str()).collect();
    let deletes: Vec<String> = stored
        .keys()
        .filter(|p| !listed.contains(p.as_str()))
        .cloned()
        .collect();
    let todo: Vec<&Entry> = listing
        .entries
        .iter()
        .filter(|e| stored.get(&e.path).is_none_or(|(id, _)| *id != e.id))
        .collect();
    let deleted_ids: HashSet<&str> = deletes
        .iter()
        .filter_map(|p| stored.get(p))
        .map(|(id, _)| id.as_str())
        .collect();
    for e in &todo {
        if stored.contains_key(&e.path) {
            report.modified += 1;
        } else if deleted_ids.contains(e.id.as_str()) {
            report.renamed += 1;
        } else {
            report.added += 1;
        }
    }
    report.deleted = (deletes.len() as u64).saturating_sub(report.renamed);
    Ok((deletes, todo))
}

/// History and blame, after the lexical index is committed: blame at the
/// indexed commit; for a working tree, at HEAD for the files it leaves
/// unchanged (edited files get no authors until they are committed).
fn people_step(
    target: &Target,
    store: &mut (impl HistoryStore + IndexStore + ?Sized),
    opts: &ListOptions,
) -> Result<Option<PeopleReport>> {
    let (Some(commit), Some(repo)) = (&target.commit, &target.repo) else {
        return Ok(None);
    };
    let indexed: Vec<(String, String)> = store
        .files()?
        .into_iter()
        .filter(|f| f.skip.is_none())
        .map(|f| (f.path, f.id))
        .collect();
    let files = if target.worktree {
        let head: HashMap<String, String> = repo
            .list_commit(&commit.sha, opts)?
            .entries
            .into_iter()
            .map(|e| (e.path, e.id))
            .collect();
        let (clean, dirty): (Vec<_>, Vec<_>) = indexed
            .into_iter()
            .partition(|(p, id)| head.get(p) == Some(id));
        let uncommitted: Vec<String> = store.blame_needed(&dirty)?;
        let records: Vec<ken_store::FileBlameRecord> = dirty
            .iter()
            .filter(|(p, _)| uncommitted.contains(p))
            .map(|(p, id)| ken_store::FileBlameRecord {
                path: p.clone(),
                blob_id: id.clone(),
                method: "uncommitted".into(),
                ranges: Vec::new(),
            })
            .collect();
        store.put_blame(&records)?;
        clean
    } else {
        indexed
    };
    people::update_people(store, repo, &commit.sha, &files).map(Some)
}

/// Learn the fusion from history (tune.rs), last: only when it was never
/// learned, the history has grown by a tenth (at least 200 commits) since,
/// the index moved back before what it learned from, or dense retrieval
/// joined. While embedding is unfinished (a time budget, a stop) the fusion
/// is learned lexical if it never was, and otherwise left until the
/// embedding completes. Returns what was learned this run.
fn tune_step(
    settings: &Settings,
    store: &mut dyn Store,
    embedder: Option<&dyn Embedder>,
    embedded: Option<&EmbedReport>,
) -> Result<Option<ken_store::TunedRanking>> {
    if !settings.rank.learned {
        return Ok(None);
    }
    let (commits, _) = store.commit_stats()?;
    if commits == 0 {
        return Ok(None);
    }
    let mut state = store.state()?;
    let unfinished = embedded.is_some_and(|e| e.left > 0);
    if unfinished && state.ranking.is_some() {
        return Ok(None);
    }
    let embedder = embedder.filter(|_| !unfinished);
    let vectors = match embedder {
        Some(e) => semantic::load_vectors(store, e.id(), &state)?,
        None => None,
    };
    let mode = if vectors.is_some() {
        "hybrid"
    } else {
        "lexical"
    };
    // switching `learned_docs` on reads the documentation once
    if let Some(prev) = &state.ranking
        && prev.mode == mode
        && still_current(prev.commits, prev.until, commits, &state)
        && (prev.docs_read || !settings.rank.learned_docs)
    {
        return Ok(None);
    }
    let env = SearchEnv {
        rank: &settings.rank,
        embedder,
        vectors: vectors.as_ref(),
        identities: None,
        churn: None,
        template: None,
    };
    let started = Instant::now();
    let opts = tune::TuneOptions::default();
    let history = tune::History::read(&*store, env, state.commit_time, &opts)?;
    let learned = tune::tune(&*store, &settings.rank, env, &opts, &history)?;
    let Some(mut learned) = learned else {
        return Ok(None);
    };
    learned.took_ms = started.elapsed().as_millis() as u64;
    // the documentation's sections, with what the commits taught: read
    // only when they are used (a large manual costs seconds)
    if settings.rank.learned_docs {
        learned.docs = crate::tune_docs::learn_all(
            &*store,
            &settings.rank,
            env,
            state.commit_time,
            &history,
            &learned.params,
            &opts,
        )?;
        learned.docs_read = true;
    }
    learned.commit = state.commit.clone();
    learned.commits = commits;
    learned.until = state.commit_time;
    state.ranking = Some(learned.clone());
    store.set_state(&state)?;
    Ok(Some(learned))
}

/// What the documentation teaches when an evaluation asks `questions`
/// ([`crate::tune_docs::cross_fit`]): an evaluation never learns from its
/// own questions, and a docs question is a section heading of the
/// repository's own pages. With `write`, what was learned without any
/// page a question names is stored (searches across repositories read
/// it); `None` when no question is a section.
pub(crate) fn cross_fit_questions(
    settings: &Settings,
    store: &mut dyn Store,
    embedder: Option<&dyn Embedder>,
    questions: &[String],
    write: bool,
) -> Result<Option<crate::tune_docs::CrossFit>> {
    let mut state = store.state()?;
    let Some(ranking) = state.ranking.as_ref().filter(|t| t.docs.is_some()) else {
        return Ok(None);
    };
    let vectors = match embedder.filter(|_| ranking.mode == "hybrid") {
        Some(e) => semantic::load_vectors(store, e.id(), &state)?,
        None => None,
    };
    let env = SearchEnv {
        rank: &settings.rank,
        embedder: embedder.filter(|_| vectors.is_some()),
        vectors: vectors.as_ref(),
        identities: None,
        churn: None,
        template: None,
    };
    let fit = crate::tune_docs::cross_fit(
        &*store,
        &settings.rank,
        env,
        ranking.until,
        &ranking.params,
        questions,
    )?;
    if !fit.applies() {
        return Ok(None);
    }
    if write {
        if let Some(r) = state.ranking.as_mut() {
            r.docs = fit.without_all.clone();
        }
        store.set_state(&state)?;
    }
    Ok(Some(fit))
}

/// What was learned from `learned_commits` commits up to `until` still
/// holds: the history has not grown by a tenth (at least 200 commits)
/// since, and the index has not moved back before what it learned from.
fn still_current(
    learned_commits: u64,
    until: Option<i64>,
    commits: u64,
    state: &IndexState,
) -> bool {
    commits < learned_commits + (learned_commits / 10).max(200) && state.commit_time >= until
}

/// Learn the query map of dense retrieval from history (adapt.rs) when it
/// is switched on (`dense_adapter`, off by default), once the embedding is
/// complete: when none was learned for this model, the history has grown
/// by a tenth (at least 200 commits) since, or the index moved back before
/// what it learned from. A new map that is used makes the fusion be
/// learned again, with it; switched off, a stored map is dropped the same
/// way. Returns what was learned this run.
fn adapt_step(
    settings: &Settings,
    store: &mut dyn Store,
    embedder: Option<&dyn Embedder>,
    embedded: Option<&EmbedReport>,
) -> Result<Option<ken_store::DenseAdapter>> {
    let Some(embedder) = embedder else {
        return Ok(None);
    };
    let mut state = store.state()?;
    if !settings.rank.adapter {
        // switched off: the map is forgotten, and a fusion learned with it
        if let Some(old) = state.adapter.take() {
            if old.adopted {
                state.ranking = None;
            }
            store.set_state(&state)?;
        }
        return Ok(None);
    }
    if embedded.is_none_or(|e| e.left > 0) {
        return Ok(None);
    }
    let (commits, _) = store.commit_stats()?;
    if commits == 0 {
        return Ok(None);
    }
    if let Some(prev) = &state.adapter
        && prev.model == embedder.id()
        && still_current(prev.commits, prev.until, commits, &state)
    {
        return Ok(None);
    }
    let plan = semantic::EmbedPlan {
        text: settings.embed_text,
        windows: settings.embed_windows,
        ..Default::default()
    };
    let learned = crate::adapt::learn(
        &*store,
        embedder,
        plan,
        state.commit_time,
        &crate::adapt::AdaptOptions::default(),
    )?;
    let Some(mut learned) = learned else {
        return Ok(None);
    };
    learned.commit = state.commit.clone();
    learned.commits = commits;
    learned.until = state.commit_time;
    let was_used = state.adapter.as_ref().is_some_and(|a| a.adopted);
    if learned.adopted || was_used {
        // the dense list the fusion was learned with has changed
        state.ranking = None;
    }
    state.adapter = Some(learned.clone());
    store.set_state(&state)?;
    learned.weights.clear();
    Ok(Some(learned))
}

/// The embedding step, after the lexical index is committed.
fn embed(
    settings: &Settings,
    req: &IndexRequest,
    store: &mut (impl ChunkStore + IndexStore + VectorStore + ?Sized),
    progress: &dyn Progress,
    embedder: Option<&dyn Embedder>,
) -> Result<Option<EmbedReport>> {
    let Some(embedder) = embedder.filter(|_| !req.no_embed) else {
        return Ok(None);
    };
    let seq = store.batch_seq()?;
    semantic::embed_pending(
        store,
        seq,
        embedder,
        semantic::EmbedPlan {
            text: settings.embed_text,
            windows: settings.embed_windows,
            order: settings.embed_order,
            budget: settings.embed_budget,
        },
        progress,
    )
    .map(Some)
}

/// The files a listing left out, by reason, with a few examples each.
fn left_out(listing: &Listing) -> BTreeMap<String, ken_store::LeftOut> {
    let mut out: BTreeMap<String, ken_store::LeftOut> = BTreeMap::new();
    for (path, reason) in &listing.skipped {
        let l = out.entry(reason.name().to_string()).or_default();
        l.count += 1;
        if l.examples.len() < 3 {
            l.examples.push(path.clone());
        }
    }
    out
}

/// Skip counts over the whole snapshot, the same the store reports to
/// `ken status`: what the listing left out (kept in the index state) plus
/// the files the store holds as skipped (by content).
fn fill_counts(store: &dyn IndexStore, report: &mut IndexReport) -> Result<()> {
    let stats = store.stats()?;
    report.files = stats.files;
    report.skipped = stats.skipped;
    report.skipped_examples = store
        .state()?
        .left_out
        .into_iter()
        .map(|(reason, l)| (reason, l.examples))
        .collect();
    for f in store.files()? {
        if let Some(reason) = f.skip {
            let ex = report.skipped_examples.entry(reason).or_default();
            if ex.len() < 3 {
                ex.push(f.path);
            }
        }
    }
    if let Some(n) = report.skipped.get(SkipReason::MissingObject.name()) {
        report.warnings.push(format!(
            "{n} files are missing from the git object database (a partial clone or a \
             damaged mirror) and were left out: clone the repository again without `--filter` (or repair the \
             mirror) and index again"
        ));
    }
    Ok(())
}

const BATCH_FILES: usize = 1000;
const BATCH_BYTES: usize = 16 << 20;

/// The items of `rx`, numbered 0, 1, 2, … by their senders, in that order
/// whatever order they arrive in: files are stored in the order of the
/// work list, so chunk ids, and with them the order of equal scores, are
/// the same on every run. Items that arrive early wait here (at most what
/// the other workers parse while one parses a slow file).
fn in_order<T>(rx: mpsc::Receiver<(usize, T)>) -> impl Iterator<Item = T> {
    let mut waiting = std::collections::BTreeMap::new();
    let mut next = 0usize;
    let mut rx = rx.into_iter();
    std::iter::from_fn(move || {
        loop {
            if let Some(item) = waiting.remove(&next) {
                next += 1;
                return Some(item);
            }
            match rx.next() {
                Some((i, item)) => {
                    waiting.insert(i, item);
                }
                // senders gone: whatever waits (after a gap left by a
                // worker that stopped) follows in order
                None => {
                    let (&i, _) = waiting.iter().next()?;
                    next = i;
                }
            }
        }
    })
}

/// Read, filter and parse `todo` on worker threads; gather batches here;
/// write them on a thread of their own, so that parsing goes on while a
/// batch is written (one batch waits at most; batches are written in order).
fn process(
    settings: &Settings,
    reader: &Reader,
    todo: &[&Entry],
    store: &mut (impl IndexStore + Send + ?Sized),
    progress: &dyn Progress,
    report: &mut IndexReport,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = settings.threads.clamp(1, 16);
    let (tx, rx) = mpsc::sync_channel::<(usize, (FileUpdate, Vec<String>))>(256);
    let (batch_tx, batch_rx) = mpsc::sync_channel::<Batch>(1);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            let failed = &failed;
            let reader = reader.clone();
            scope.spawn(move || {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(entry) = todo.get(i) else { break };
                    let out = prepare(settings, &reader, entry);
                    if tx.send((i, out)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let writer = {
            let failed = &failed;
            scope.spawn(move || -> Result<()> {
                for batch in batch_rx {
                    if let Err(e) = store.write_batch(batch) {
                        failed.store(true, Ordering::Relaxed);
                        return Err(e.into());
                    }
                }
                Ok(())
            })
        };
        let mut batch = Batch::default();
        let mut batch_bytes = 0usize;
        let (mut files, mut bytes, mut chunks) = (0u64, 0u64, 0u64);
        let mut diagnostics = 0u64;
        let mut stopped = false;
        for (update, warnings) in in_order(rx) {
            if stopped || failed.load(Ordering::Relaxed) {
                continue; // drain so workers finish
            }
            files += 1;
            bytes += update.size;
            if let FileContent::Indexed { syntax, .. } = &update.content {
                chunks += syntax.chunks.len() as u64;
                diagnostics += syntax.diagnostics.len() as u64;
            }
            for w in warnings {
                if report.warnings.len() < 20 {
                    report.warnings.push(w);
                }
            }
            batch_bytes += update.size as usize;
            batch.upserts.push(update);
            if progress.cancelled() {
                stopped = true;
                failed.store(true, Ordering::Relaxed);
                continue;
            }
            if batch.upserts.len() >= BATCH_FILES || batch_bytes >= BATCH_BYTES {
                // a closed channel means the writer failed; its error is below
                let _ = batch_tx.send(std::mem::take(&mut batch));
                batch_bytes = 0;
            }
            progress.advance(files, bytes, chunks);
        }
        if !batch.is_empty() && !stopped && !failed.load(Ordering::Relaxed) && !progress.cancelled()
        {
            let _ = batch_tx.send(batch);
        }
        drop(batch_tx);
        writer
            .join()
            .map_err(|_| EngineError::internal("the index writer panicked"))??;
        if stopped {
            return Err(EngineError::stopped());
        }
        report.processed = files;
        report.bytes = bytes;
        report.chunks = chunks;
        if diagnostics > 0 {
            report
                .warnings
                .push(format!("{diagnostics} parse notes (files fell back to line windows or were cut); see `ken status`"));
        }
        Ok(())
    })
}

/// Read one file and turn it into an update; never fails (a failure is a skip).
fn prepare(settings: &Settings, reader: &Reader, entry: &Entry) -> (FileUpdate, Vec<String>) {
    let language = Language::from_path(&entry.path);
    let skipped = |reason: SkipReason| FileUpdate {
        path: entry.path.clone(),
        id: entry.id.clone(),
        language,
        size: entry.size,
        content: FileContent::Skipped {
            reason: reason.name().to_string(),
        },
    };
    let bytes = match reader.read(entry) {
        Ok(b) => b,
        Err(e) => {
            return (
                skipped(SkipReason::Unreadable),
                vec![format!("{}: {e}", entry.path)],
            );
        }
    };
    let notebook = language == Language::Notebook;
    // a notebook is judged by its code cells (below), not by its outputs
    let reason = if notebook {
        ken_source::skip_by_content(&bytes).filter(|r| *r == SkipReason::Binary)
    } else {
        ken_source::skip_by_content(&bytes)
    };
    if let Some(reason) = reason {
        return (skipped(reason), Vec::new());
    }
    let mut warnings = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            warnings.push(format!(
                "{}: not valid UTF-8 (byte {}); indexed with replacement characters",
                entry.path,
                e.utf8_error().valid_up_to()
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let syntax = ken_syntax::parse_file(&entry.path, &text, &settings.chunk);
    let text = if notebook {
        match notebook_text(&text, settings.max_file_bytes) {
            Ok(code) => code,
            Err(reason) => return (skipped(reason), warnings),
        }
    } else {
        text
    };
    let update = FileUpdate {
        path: entry.path.clone(),
        id: entry.id.clone(),
        language,
        size: text.len() as u64,
        content: FileContent::Indexed { text, syntax },
    };
    (update, warnings)
}

/// What is stored of a notebook: its code view, whose lines are the ones
/// chunks, citations and the file view count; or why it is skipped, judged
/// on that code (too large, generated, minified), never on its outputs. A
/// notebook that is not valid JSON is judged and kept as plain text.
fn notebook_text(raw: &str, max_bytes: u64) -> std::result::Result<String, SkipReason> {
    let text = match ken_syntax::notebook_code(raw) {
        Ok(code) => code,
        Err(_) => raw.to_string(),
    };
    if text.len() as u64 > max_bytes {
        return Err(SkipReason::TooLarge);
    }
    match ken_source::skip_by_content(text.as_bytes()) {
        Some(reason) => Err(reason),
        None => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn items_come_out_in_the_senders_order() {
        let (tx, rx) = std::sync::mpsc::channel();
        for i in [3usize, 0, 2, 5, 1, 4] {
            tx.send((i, i * 10)).unwrap();
        }
        drop(tx);
        let got: Vec<usize> = super::in_order(rx).collect();
        assert_eq!(got, [0, 10, 20, 30, 40, 50]);
        // a gap (a worker that stopped early) does not lose what follows
        let (tx, rx) = std::sync::mpsc::channel();
        for i in [0usize, 2, 3] {
            tx.send((i, i)).unwrap();
        }
        drop(tx);
        assert_eq!(super::in_order(rx).collect::<Vec<_>>(), [0, 2, 3]);
    }

    use super::*;

    #[test]
    fn branch_names_git_would_refuse_are_refused() {
        for ok in ["main", "2.3.x", "release/1.0", "feature_x-y"] {
            assert!(check_branch(ok).is_ok(), "{ok}");
        }
        for bad in [
            "-x", "a..b", "a b", "a:b", "a~1", "/a", "a/", "x.lock", "a\\b", "a\u{0}",
        ] {
            assert!(check_branch(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn default_names() {
        assert_eq!(default_name(Path::new("/src/flask"), true), "flask");
        assert_eq!(default_name(Path::new("/srv/flask.git"), false), "flask");
        assert_eq!(default_name(Path::new("/x/flask/.git"), false), "flask");
        assert_eq!(
            default_name(Path::new("/m/pallets+flask/repo"), false),
            "pallets+flask"
        );
        assert_eq!(
            default_name(Path::new("/home/me/.dotfiles"), true),
            "dotfiles"
        );
    }
}
