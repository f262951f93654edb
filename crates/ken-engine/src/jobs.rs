//! Index jobs: queued by the API, MCP or a push webhook, persisted in the
//! home's store (a restart resumes queued and interrupted jobs), run one
//! at a time by [`Engine::run_jobs`] with their progress recorded.
//!
//! A job indexes a repository from the source it was indexed from (its
//! path or URL, set by the operator); a push only says which commit.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ken_store::{Home, JobRecord, JobState, NewJob};
use serde::Serialize;

use crate::access::Access;
use crate::access::{Principal, Scope, random_hex};
use crate::index::{IndexReport, IndexRequest, Progress};
use crate::repo::OpenRepo;
use crate::semantic::EmbedProgress;
use crate::{Edge, Engine, EngineError, ErrorKind, Result};

/// How often a running job beats, at most (a third of `job_stale_secs` when that is shorter).
const HEARTBEAT: Duration = Duration::from_secs(5);
/// A job that found its index busy this many times fails.
const MAX_ATTEMPTS: u32 = 20;

/// A job as callers see it.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub id: String,
    pub kind: String,
    pub repo: String,
    pub rev: Option<String>,
    /// `cli`, `api`, `mcp` or `webhook`.
    pub origin: String,
    pub state: JobState,
    pub progress: Option<serde_json::Value>,
    /// What the run did (the index report) once done.
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

impl From<JobRecord> for Job {
    fn from(j: JobRecord) -> Job {
        let json = |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok());
        Job {
            id: j.id,
            kind: j.kind,
            repo: j.repo,
            rev: j.rev,
            origin: j.origin,
            state: j.state,
            progress: json(j.progress),
            result: json(j.result),
            error: j.error,
            attempts: j.attempts,
            created_at: j.created_at,
            started_at: j.started_at,
            finished_at: j.finished_at,
        }
    }
}

/// An index job to queue.
#[derive(Debug, Clone, Default)]
pub struct IndexJob {
    pub repo: String,
    /// A clone URL for a repository not indexed yet (None: the source the
    /// repository was indexed from).
    pub source: Option<String>,
    pub rev: Option<String>,
    pub origin: String,
    pub dedupe: Option<String>,
}

/// A push as a webhook reports it.
#[derive(Debug, Clone, Default)]
pub struct Push {
    /// `owner/name`.
    pub full_name: Option<String>,
    pub name: Option<String>,
    /// `refs/heads/main`.
    pub git_ref: String,
    /// The pushed commit.
    pub after: String,
    pub default_branch: Option<String>,
    /// What the delivery is known by (its body's digest), for redeliveries and replays.
    pub delivery: Option<String>,
}

/// What a push led to.
#[derive(Debug, Clone)]
pub enum PushOutcome {
    /// A job (new, or the one an earlier delivery of the same push or
    /// commit queued).
    Queued { job: Box<Job>, new: bool },
    /// Nothing to do, and why.
    Ignored(String),
}

impl Engine {
    /// Queue an index job (scope `index`).
    pub fn enqueue_index(&self, job: IndexJob, who: &Principal) -> Result<(Job, bool)> {
        who.require(Scope::Index)?;
        let name = job.repo.trim();
        if name.is_empty() {
            return Err(EngineError::bad_input(
                "an index job needs a repository name",
            ));
        }
        ken_core::repo_name::check(name)
            .map_err(|why| EngineError::bad_input(format!("cannot name a repository so: {why}")))?;
        if !who.access.allows(name) {
            return Err(self.missing_repo(name));
        }
        let existing = self
            .repos(&Access::All)?
            .into_iter()
            .find(|r| r.name == name);
        if let Some(src) = &job.source {
            if !ken_source::is_url(src) && who.token.is_some() {
                return Err(EngineError::bad_input(
                    "a source given remotely must be a clone URL (https:// or ssh://)",
                )
                .with_hint("local paths can be indexed from the command line: `ken index PATH`"));
            }
            // pointing a repository at another source is an admin's act
            let recorded = existing.as_ref().and_then(|r| r.state.source.as_deref());
            if let Some(recorded) = recorded
                && !same_source(recorded, src)
            {
                who.require(Scope::Admin)?;
            }
            if ken_source::is_url(src) {
                ken_source::check_remote(
                    src,
                    ken_source::RemotePolicy {
                        allow_private: self.settings().allow_private_urls,
                    },
                )?;
            }
        } else if existing.is_none() {
            // re-indexing: the repository must exist (and be visible)
            return Err(self.missing_repo(name));
        }
        let home = self.home_store()?;
        let (record, new) = home.enqueue(
            &NewJob {
                id: format!("job_{}", random_hex(8)?),
                kind: "index".into(),
                repo: name.to_string(),
                source: job.source,
                rev: job.rev.filter(|r| !r.trim().is_empty()),
                dedupe: job.dedupe,
                origin: job.origin,
            },
            crate::time::now(),
        )?;
        if new {
            self.notify_jobs();
        }
        Ok((record.into(), new))
    }

    /// A job by id (one of a repository the caller cannot see is not found).
    pub fn job(&self, id: &str, access: &Access) -> Result<Job> {
        match self.home_store()?.job(id)? {
            Some(j) if access.allows(&j.repo) => Ok(j.into()),
            _ => Err(EngineError::not_found(format!("no job `{id}`"))),
        }
    }

    /// The newest jobs the caller may see.
    pub fn jobs(&self, limit: usize, access: &Access) -> Result<Vec<Job>> {
        Ok(self
            .home_store()?
            .jobs(limit.clamp(1, 1000))?
            .into_iter()
            .filter(|j| access.allows(&j.repo))
            .map(Job::from)
            .collect())
    }

    /// Run queued jobs until `stop` is set. Jobs interrupted by a stop go
    /// back to the queue; the next runner (after a restart) resumes them.
    pub fn run_jobs(&self, stop: &AtomicBool) -> Result<()> {
        let home = self.home_store()?;
        // best effort: a repository that cannot be opened now is not a
        // reason to stop taking jobs
        let _ = self.queue_unfinished();
        // best effort too: what is not written now is searched directly
        let _ = self.reflect_missing(stop);
        while !stop.load(Ordering::Relaxed) {
            home.requeue_stale(crate::time::now() - self.settings().job_stale_secs)?;
            match home.claim(crate::time::now())? {
                Some(job) => self.execute(&*home, job, stop)?,
                None => self.wait_for_jobs(Duration::from_millis(500)),
            }
        }
        Ok(())
    }

    /// Queue a job for every repository whose last run did not finish: an
    /// index run stopped before its snapshot was complete, or an embedding
    /// cut short (a time budget, Ctrl-C, a kill) while an embedder is
    /// configured. `ken serve` and `ken worker` call it when their job
    /// runner starts, so the embedding a quick `ken index` left completes
    /// without anyone asking. Returns the jobs queued (or found queued).
    pub fn queue_unfinished(&self) -> Result<Vec<Job>> {
        let mut jobs = Vec::new();
        for r in self.repos(&Access::All)? {
            // the model is loaded only when an embedding waits for it
            let resume = r.state.pending.is_some()
                || (r.state.embedding_unfinished && self.embedder().ok().flatten().is_some());
            if resume {
                jobs.push(self.queue_resume(&r)?);
            }
        }
        Ok(jobs)
    }

    /// Write to the collection index every repository it does not hold,
    /// files and commits whole, from the repository's own index: a
    /// collection lost, unreadable or left by another version is rebuilt,
    /// so that a question over every repository is routed again instead of
    /// searching each one. A repository whose run is pending is left to
    /// that run. `ken serve` and `ken worker` call it when their job runner
    /// starts. Returns the names written.
    pub fn reflect_missing(&self, stop: &AtomicBool) -> Result<Vec<String>> {
        let Some(fleet) = self.fleet()? else {
            return Ok(Vec::new());
        };
        let stores = self.stores()?;
        let held: std::collections::HashSet<String> = fleet
            .reflected()?
            .keys()
            .map(|name| stores.key_of(name))
            .collect();
        let mut written = Vec::new();
        for key in stores.list()? {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if held.contains(&key) {
                continue;
            }
            let store = stores.open(&key)?;
            let state = store.state()?;
            if state.pending.is_some() {
                continue;
            }
            let name = state.name.unwrap_or(key);
            crate::fleet::update(&*fleet, &name, &*store, &[], &[], store.batch_seq()?)?;
            written.push(name);
        }
        Ok(written)
    }

    /// One job that takes a repository's unfinished run up again: towards
    /// the commit it was on its way to, else the commit it holds (a
    /// working tree is read again, as `ken index` would).
    fn queue_resume(&self, r: &OpenRepo) -> Result<Job> {
        let toward = r.state.pending.as_deref().or(r.state.commit.as_deref());
        let rev = toward
            .filter(|c| {
                !r.state.worktree && c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit())
            })
            .map(str::to_string);
        let (job, _) = self.enqueue_index(
            IndexJob {
                repo: r.name.clone(),
                source: None,
                rev,
                origin: "resume".into(),
                dedupe: Some(format!("resume:{}", r.name)),
            },
            &Principal::local(),
        )?;
        Ok(job)
    }

    /// Run the queued jobs there are now, then return (for tests and `ken jobs run`).
    pub fn run_queued_jobs(&self) -> Result<usize> {
        let home = self.home_store()?;
        let stop = AtomicBool::new(false);
        let mut n = 0;
        while let Some(job) = home.claim(crate::time::now())? {
            self.execute(&*home, job, &stop)?;
            n += 1;
        }
        Ok(n)
    }

    /// What to do with a push: match it to an indexed repository, check
    /// the branch, and queue one job per commit.
    pub fn push(&self, push: &Push) -> Result<PushOutcome> {
        let home = self.home_store()?;
        if let Some(d) = &push.delivery
            && let Some(earlier) = home.seen_delivery(d, crate::time::now())?
        {
            return Ok(match earlier.and_then(|id| home.job(&id).ok().flatten()) {
                Some(j) => PushOutcome::Queued {
                    job: Box::new(j.into()),
                    new: false,
                },
                None => PushOutcome::Ignored("this delivery was already handled".to_string()),
            });
        }
        let repos = self.repos(&Access::All)?;
        let repo = push
            .full_name
            .as_deref()
            .and_then(|f| repos.iter().find(|r| r.name == f))
            .or_else(|| {
                push.name
                    .as_deref()
                    .and_then(|n| repos.iter().find(|r| r.name == n))
            });
        let Some(repo) = repo else {
            return Ok(PushOutcome::Ignored(format!(
                "no indexed repository is named {}",
                push.full_name
                    .as_deref()
                    .or(push.name.as_deref())
                    .unwrap_or("(unnamed)")
            )));
        };
        let Some(branch) = push.git_ref.strip_prefix("refs/heads/") else {
            return Ok(PushOutcome::Ignored(format!(
                "{} is not a branch",
                push.git_ref
            )));
        };
        let allowed = self.branches_for(&repo.name, push.default_branch.as_deref());
        if !allowed.iter().any(|b| b == branch) {
            return Ok(PushOutcome::Ignored(format!(
                "branch {branch} is not indexed for {} (indexed: {})",
                repo.name,
                allowed.join(", ")
            )));
        }
        let after = push.after.trim();
        if after.chars().all(|c| c == '0') {
            return Ok(PushOutcome::Ignored(format!("branch {branch} was deleted")));
        }
        if !(after.len() == 40 || after.len() == 64)
            || !after.chars().all(|c| c.is_ascii_hexdigit())
        {
            return Err(EngineError::bad_input(format!(
                "`after` is not a commit id: {after:?}"
            )));
        }
        let after = after.to_ascii_lowercase();
        // a branch other than the default has an index of its own
        let own = self.own_branch(&repo.name, push.default_branch.as_deref());
        let on_branch = match own {
            Some(o) if o != branch && repo.state.branch.is_none() => {
                Some(format!("{}@{branch}", repo.name))
            }
            _ => None,
        };
        let entry = on_branch
            .as_ref()
            .and_then(|n| repos.iter().find(|r| r.name == *n));
        let (target, source) = match (&on_branch, entry) {
            (Some(name), None) => (name.clone(), repo.state.source.clone()),
            (_, Some(e)) => (e.name.clone(), None),
            (None, None) => (repo.name.clone(), None),
        };
        let key = format!("{target}@{after}");
        // the same commit again: nothing to do while the index is there (or
        // on its way there); once it has moved on, a push indexes it again
        // (the live state, not the one the repository was opened with)
        let indexed_here = match (entry, &on_branch) {
            (None, Some(_)) => false,
            (e, _) => {
                let state = ken_store::IndexStore::state(&*e.unwrap_or(repo).store)?;
                state.pending.is_none() && state.commit.as_deref() == Some(after.as_str())
            }
        };
        if indexed_here {
            let outcome = match home.last_job_with_key(&key)? {
                Some(j) => PushOutcome::Queued {
                    job: Box::new(j.into()),
                    new: false,
                },
                None => PushOutcome::Ignored(format!("{target} is already indexed at {after}")),
            };
            return Ok(outcome);
        }
        let (job, new) = self.enqueue_index(
            IndexJob {
                repo: target,
                source,
                rev: Some(after.clone()),
                origin: "webhook".into(),
                dedupe: Some(key),
            },
            &Principal::local(),
        )?;
        if let Some(d) = &push.delivery {
            home.set_delivery_job(d, &job.id)?;
        }
        Ok(PushOutcome::Queued {
            job: Box::new(job),
            new,
        })
    }

    /// The branch a repository's own index follows: the source's default
    /// when its configured branches name it (or none are configured), else
    /// the first configured; None when the default is not known. Every
    /// other configured branch has an index named `NAME@BRANCH`.
    pub(crate) fn own_branch(&self, repo: &str, default_branch: Option<&str>) -> Option<String> {
        let default = default_branch.filter(|d| !d.is_empty());
        match self.settings().repo_branches.get(repo) {
            Some(list)
                if !list.is_empty() && default.is_none_or(|d| !list.iter().any(|b| b == d)) =>
            {
                Some(list[0].clone())
            }
            _ => default.map(str::to_string),
        }
    }

    /// The branches whose pushes are indexed for a repository: its own
    /// setting, else the global one, else the repository's default branch.
    fn branches_for(&self, repo: &str, default_branch: Option<&str>) -> Vec<String> {
        let s = self.settings();
        if let Some(b) = s.repo_branches.get(repo) {
            return b.clone();
        }
        if !s.webhook_branches.is_empty() {
            return s.webhook_branches.clone();
        }
        match default_branch {
            Some(b) if !b.is_empty() => vec![b.to_string()],
            _ => vec!["main".into(), "master".into()],
        }
    }

    fn missing_repo(&self, name: &str) -> EngineError {
        EngineError::not_found(format!("no repository named `{name}` is indexed"))
    }

    fn notify_jobs(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        cv.notify_all();
    }

    fn wait_for_jobs(&self, at_most: Duration) {
        let (lock, cv) = &self.wake;
        let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let seen = *guard;
        let _ = cv.wait_timeout_while(guard, at_most, |n| *n == seen);
    }

    /// Run one claimed job to its end (or back to the queue on a stop).
    fn execute(&self, home: &dyn Home, job: JobRecord, stop: &AtomicBool) -> Result<()> {
        let done = AtomicBool::new(false);
        let progress = JobProgress::new(home, &job.id, stop);
        let beat = HEARTBEAT.min(Duration::from_millis(
            (self.settings().job_stale_secs.max(1) as u64) * 1000 / 3,
        ));
        let outcome = std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut last = Instant::now();
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if last.elapsed() >= beat {
                        progress.write(true);
                        last = Instant::now();
                    }
                }
            });
            let r = self.run_index_job(&job, &progress);
            done.store(true, Ordering::Relaxed);
            r
        });
        let now = crate::time::now();
        match outcome {
            Ok(report) => {
                // the last progress shows the end, not the last throttled step
                progress.finish();
                let result = serde_json::to_string(&report).ok();
                home.finish(&job.id, JobState::Done, result.as_deref(), None, now)?;
                // an embedding cut by the time budget goes on in the next
                // job, behind the jobs queued meanwhile
                if report.embed.as_ref().is_some_and(|e| e.left > 0)
                    && let Ok(repo) = self.one_repo(Some(&job.repo), &Access::All)
                {
                    self.queue_resume(&repo)?;
                }
            }
            Err(_) if stop.load(Ordering::Relaxed) => home.requeue(&job.id)?,
            Err(e) if e.kind() == ErrorKind::Busy && job.attempts < MAX_ATTEMPTS => {
                home.requeue(&job.id)?;
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(e) => {
                // a job's error is read through the server (`/api/v1/jobs`)
                let m = e.message_for(Edge::Http);
                let msg = match e.hint_for(Edge::Http) {
                    Some(h) => format!("{m} ({h})"),
                    None => m,
                };
                home.finish(&job.id, JobState::Failed, None, Some(&msg), now)?;
            }
        }
        Ok(())
    }

    fn run_index_job(&self, job: &JobRecord, progress: &JobProgress) -> Result<IndexReport> {
        let (source, branch) = match &job.source {
            Some(s) => (s.clone(), self.branch_of_new(&job.repo, s)?),
            None => {
                let repo = self.one_repo(Some(&job.repo), &Access::All)?;
                let source = repo.state.source.clone().ok_or_else(|| {
                    EngineError::unavailable(format!(
                        "{} has no recorded source to index from",
                        job.repo
                    ))
                    .with_hint("index it once from the command line: `ken index PATH|URL`")
                })?;
                (source, repo.state.branch.clone())
            }
        };
        self.index(
            &IndexRequest {
                source,
                rev: job.rev.clone(),
                name: Some(job.repo.clone()),
                branch,
                no_embed: false,
                limits: Default::default(),
                scip: None,
            },
            progress,
        )
    }

    /// The branch a job for `name` from `source` follows: already indexed,
    /// its own; new and named `BASE@BRANCH` after an indexed repository of
    /// the same source, that branch (how polling and pushes add branches);
    /// else none (the source's default).
    fn branch_of_new(&self, name: &str, source: &str) -> Result<Option<String>> {
        if self.is_indexed(name)? {
            return Ok(self
                .one_repo(Some(name), &Access::All)?
                .state
                .branch
                .clone());
        }
        for (at, _) in name.match_indices('@') {
            let (base, branch) = (&name[..at], &name[at + 1..]);
            if branch.is_empty() || base.is_empty() || !self.is_indexed(base)? {
                continue;
            }
            let repo = self.one_repo(Some(base), &Access::All)?;
            if repo
                .state
                .source
                .as_deref()
                .is_some_and(|s| same_source(s, source))
            {
                return Ok(Some(branch.to_string()));
            }
        }
        Ok(None)
    }
}

/// Do two sources name the same repository? The recorded one is shown
/// without credentials (`https://***@host/...`), so those are left out of both.
fn same_source(recorded: &str, given: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim().trim_end_matches('/');
        let s = s.strip_suffix(".git").unwrap_or(s);
        match s.split_once("://") {
            Some((scheme, rest)) => {
                let host_on = match rest.split_once('/') {
                    Some((authority, _)) => authority.rfind('@').map_or(0, |at| at + 1),
                    None => rest.rfind('@').map_or(0, |at| at + 1),
                };
                format!("{}://{}", scheme.to_ascii_lowercase(), &rest[host_on..])
            }
            None => s.to_string(),
        }
    };
    norm(recorded) == norm(given)
}

/// Progress of a running job, written to the store at most twice a second.
struct JobProgress<'a> {
    home: &'a dyn Home,
    id: &'a str,
    stop: &'a AtomicBool,
    state: Mutex<ProgressState>,
}

struct ProgressState {
    phase: &'static str,
    done: u64,
    total: u64,
    written: Option<Instant>,
}

impl<'a> JobProgress<'a> {
    fn new(home: &'a dyn Home, id: &'a str, stop: &'a AtomicBool) -> JobProgress<'a> {
        JobProgress {
            home,
            id,
            stop,
            state: Mutex::new(ProgressState {
                phase: "starting",
                done: 0,
                total: 0,
                written: None,
            }),
        }
    }

    fn update(&self, f: impl FnOnce(&mut ProgressState)) {
        {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut s);
        }
        self.write(false);
    }

    /// Record that the job got to its end.
    fn finish(&self) {
        {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            s.phase = "done";
            s.done = s.total;
        }
        self.write(true);
    }

    /// Write the progress (also a heartbeat); unless `force`, at most
    /// every 500 ms.
    fn write(&self, force: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !force
            && s.written
                .is_some_and(|t| t.elapsed() < Duration::from_millis(500))
        {
            return;
        }
        s.written = Some(Instant::now());
        let mut v = BTreeMap::new();
        v.insert("phase", serde_json::json!(s.phase));
        v.insert("done", serde_json::json!(s.done));
        v.insert("total", serde_json::json!(s.total));
        let text = serde_json::to_string(&v).unwrap_or_default();
        let _ = self.home.set_progress(self.id, &text, crate::time::now());
    }
}

impl Progress for JobProgress<'_> {
    fn begin(&self, files: u64, _bytes: u64) {
        self.update(|s| {
            s.phase = "files";
            s.total = files;
            s.done = 0;
        });
    }
    fn advance(&self, files: u64, _bytes: u64, _chunks: u64) {
        self.update(|s| s.done = files);
    }
}

impl EmbedProgress for JobProgress<'_> {
    fn embed_begin(&self, todo: u64, _cached: u64) {
        self.update(|s| {
            s.phase = "embedding";
            s.total = todo;
            s.done = 0;
        });
    }
    fn embed_advance(&self, done: u64) {
        self.update(|s| s.done = done);
    }
    fn cancelled(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::same_source;

    #[test]
    fn sources_compare_without_credentials_or_dressing() {
        assert!(same_source(
            "https://***@github.com/o/r",
            "https://x:tok@github.com/o/r.git/"
        ));
        assert!(same_source(
            "https://github.com/o/r",
            "HTTPS://github.com/o/r"
        ));
        assert!(!same_source(
            "https://github.com/o/r",
            "https://github.com/evil/r"
        ));
        assert!(!same_source(
            "https://github.com/o/r",
            "https://elsewhere.org/o/r"
        ));
        assert!(same_source("/src/shop", "/src/shop/"));
    }

    #[test]
    fn a_lost_collection_is_rebuilt_from_the_repositories() {
        use crate::search::{Mode, SearchRequest};
        use crate::{Access, Engine, Settings};
        use std::sync::atomic::AtomicBool;

        let home = tempfile::tempdir().unwrap();
        let settings = || Settings::new(home.path().to_path_buf());
        let _sources;
        {
            let e = Engine::new(settings());
            _sources = crate::testing::web_and_math(&e);
            let names: Vec<String> = e
                .fleet()
                .unwrap()
                .unwrap()
                .reflected()
                .unwrap()
                .into_keys()
                .collect();
            assert_eq!(names, ["math", "web"]);
        }
        std::fs::remove_dir_all(home.path().join(ken_store::FLEET_DIR)).unwrap();

        let e = Engine::new(settings());
        let fleet = e.fleet().unwrap().unwrap();
        assert!(
            fleet.reflected().unwrap().is_empty(),
            "the collection is gone"
        );
        let mut written = e.reflect_missing(&AtomicBool::new(false)).unwrap();
        written.sort();
        assert_eq!(written, ["math", "web"]);
        let names: Vec<String> = fleet.reflected().unwrap().into_keys().collect();
        assert_eq!(names, ["math", "web"]);
        assert!(
            e.reflect_missing(&AtomicBool::new(false))
                .unwrap()
                .is_empty(),
            "nothing missing"
        );
        // routed by the rebuilt collection
        let ask = |q: &str| {
            let req = SearchRequest {
                query: q.into(),
                limit: 5,
                filters: ken_core::Filters::default(),
                files: true,
                mode: Mode::Lexical,
            };
            e.search(&req, &Access::All).unwrap().hits[0].repo.clone()
        };
        assert_eq!(ask("determinant"), "math");
        assert_eq!(ask("serve request"), "web");
        // a stop asked for before it starts writes nothing
        std::fs::remove_dir_all(home.path().join(ken_store::FLEET_DIR)).unwrap();
        let e = Engine::new(settings());
        assert!(
            e.reflect_missing(&AtomicBool::new(true))
                .unwrap()
                .is_empty()
        );
    }
}
