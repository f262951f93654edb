//! What a home holds beside the indexes (`$KEN_HOME/server.sqlite`): API
//! tokens (hashes only), the queue of index jobs, and the webhook
//! deliveries already seen. Shared by every process using the home: the
//! CLI creates tokens, a server checks them and runs the jobs.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::embedded::pool::Pool;
use crate::{Result, StoreError};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    repos TEXT NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    last_used_at INTEGER
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    repo TEXT NOT NULL,
    source TEXT,
    rev TEXT,
    dedupe TEXT,
    origin TEXT NOT NULL,
    state TEXT NOT NULL,
    progress TEXT,
    result TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    heartbeat_at INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, seq);
CREATE INDEX IF NOT EXISTS jobs_dedupe ON jobs(dedupe);
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    job TEXT,
    received_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tickets (
    repo TEXT NOT NULL,
    id TEXT NOT NULL,
    data TEXT NOT NULL,
    imported_at INTEGER NOT NULL,
    PRIMARY KEY (repo, id)
);
CREATE TABLE IF NOT EXISTS remote_heads (
    repo TEXT PRIMARY KEY,
    branch TEXT,
    head TEXT,
    polled_at INTEGER NOT NULL,
    error TEXT
);
";

/// What the last poll saw of a repository's remote: the head of the branch
/// it follows, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteHead {
    pub repo: String,
    /// The branch followed (None: the remote's default branch).
    pub branch: Option<String>,
    /// The commit the branch pointed at.
    pub head: Option<String>,
    /// When (seconds since the epoch).
    pub polled_at: i64,
    /// Why the head could not be read.
    pub error: Option<String>,
}

/// An API token as stored: its hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: String,
    /// Hex SHA-256 of the token.
    pub hash: String,
    /// `read`, `index` or `admin`.
    pub scope: String,
    /// Repository names it may see; `*` for all.
    pub repos: Vec<String>,
    pub label: Option<String>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub last_used_at: Option<i64>,
}

/// The state of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
}

impl JobState {
    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> JobState {
        match s {
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            _ => JobState::Queued,
        }
    }
}

/// A job to queue.
#[derive(Debug, Clone, Default)]
pub struct NewJob {
    pub id: String,
    /// `index`.
    pub kind: String,
    pub repo: String,
    /// Where to index from (None: where the repository was indexed from).
    pub source: Option<String>,
    pub rev: Option<String>,
    /// Jobs with the same key that are queued, running or done are not
    /// queued again (a webhook redelivered, the same commit pushed twice).
    pub dedupe: Option<String>,
    /// `cli`, `api`, `mcp` or `webhook`.
    pub origin: String,
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: String,
    pub kind: String,
    pub repo: String,
    pub source: Option<String>,
    pub rev: Option<String>,
    pub dedupe: Option<String>,
    pub origin: String,
    pub state: JobState,
    /// JSON written by the runner as it goes.
    pub progress: Option<String>,
    /// JSON of what the job did.
    pub result: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub heartbeat_at: Option<i64>,
}

const JOB_COLUMNS: &str = "id, kind, repo, source, rev, dedupe, origin, state, progress, result, \
     error, attempts, created_at, started_at, finished_at, heartbeat_at";

fn job_row(r: &Row) -> rusqlite::Result<JobRecord> {
    Ok(JobRecord {
        id: r.get(0)?,
        kind: r.get(1)?,
        repo: r.get(2)?,
        source: r.get(3)?,
        rev: r.get(4)?,
        dedupe: r.get(5)?,
        origin: r.get(6)?,
        state: JobState::parse(&r.get::<_, String>(7)?),
        progress: r.get(8)?,
        result: r.get(9)?,
        error: r.get(10)?,
        attempts: r.get(11)?,
        created_at: r.get(12)?,
        started_at: r.get(13)?,
        finished_at: r.get(14)?,
        heartbeat_at: r.get(15)?,
    })
}

fn token_row(r: &Row) -> rusqlite::Result<TokenRecord> {
    let repos: String = r.get(3)?;
    Ok(TokenRecord {
        id: r.get(0)?,
        hash: r.get(1)?,
        scope: r.get(2)?,
        repos: serde_json::from_str(&repos).unwrap_or_default(),
        label: r.get(4)?,
        created_at: r.get(5)?,
        revoked_at: r.get(6)?,
        last_used_at: r.get(7)?,
    })
}

const TOKEN_COLUMNS: &str = "id, hash, scope, repos, label, created_at, revoked_at, last_used_at";

/// What a home (or a database shared by several servers) holds beside the
/// indexes: API tokens, the job queue, webhook deliveries.
/// [`HomeStore`] keeps them in SQLite under a home; `PgHome` in PostgreSQL.
pub trait Home: Send + Sync {
    fn add_token(&self, t: &TokenRecord) -> Result<()>;
    /// The token with this hash, revoked or not.
    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>>;
    fn tokens(&self) -> Result<Vec<TokenRecord>>;
    /// Revoke a token; false when there is no such (unrevoked) token.
    fn revoke_token(&self, id: &str, at: i64) -> Result<bool>;
    /// Tokens not revoked.
    fn active_tokens(&self) -> Result<u64>;
    /// Note a token's use (at most once a minute per token).
    fn touch_token(&self, id: &str, at: i64) -> Result<()>;
    /// Queue a job, unless one with the same dedupe key is queued or
    /// running: then that one is returned. The bool says whether it is new.
    fn enqueue(&self, job: &NewJob, now: i64) -> Result<(JobRecord, bool)>;
    /// The newest job with a dedupe key, in any state.
    fn last_job_with_key(&self, key: &str) -> Result<Option<JobRecord>>;
    fn job(&self, id: &str) -> Result<Option<JobRecord>>;
    /// The newest jobs, newest first.
    fn jobs(&self, limit: usize) -> Result<Vec<JobRecord>>;
    /// Take the oldest queued job whose repository has no running job, and
    /// mark it running; concurrent claimers never take the same job.
    fn claim(&self, now: i64) -> Result<Option<JobRecord>>;
    /// Record a running job's progress (also its heartbeat).
    fn set_progress(&self, id: &str, progress: &str, now: i64) -> Result<()>;
    /// End a job: done with a result, or failed with an error.
    fn finish(
        &self,
        id: &str,
        state: JobState,
        result: Option<&str>,
        error: Option<&str>,
        now: i64,
    ) -> Result<()>;
    /// Put a running job back in the queue (its runner stopped).
    fn requeue(&self, id: &str) -> Result<()>;
    /// Put back in the queue the running jobs whose runner has not been
    /// heard of since `before` (it died); returns how many.
    fn requeue_stale(&self, before: i64) -> Result<usize>;
    /// Record a delivery id; returns the job of an earlier delivery with
    /// the same id (`Some(None)` when it queued nothing), or None if new.
    fn seen_delivery(&self, id: &str, now: i64) -> Result<Option<Option<String>>>;
    /// Link a delivery to the job it queued.
    fn set_delivery_job(&self, id: &str, job: &str) -> Result<()>;
    /// A number that changes when anything is written.
    fn data_version(&self) -> Result<u64>;

    // --- tickets of an issue tracker, per repository key ---

    /// Add tickets, replacing those with the same id, in one transaction;
    /// returns (added, replaced).
    fn put_tickets(
        &self,
        repo: &str,
        tickets: &[ken_core::Ticket],
        now: i64,
    ) -> Result<(usize, usize)>;
    /// A repository's tickets, by id.
    fn tickets(&self, repo: &str) -> Result<Vec<ken_core::Ticket>>;
    /// Forget a repository's tickets; returns how many there were.
    fn remove_tickets(&self, repo: &str) -> Result<usize>;

    // --- what polling saw of each repository's remote ---

    /// Record a poll, replacing the repository's previous one.
    fn put_remote_head(&self, head: &RemoteHead) -> Result<()>;
    /// Every repository's last poll, by name.
    fn remote_heads(&self) -> Result<Vec<RemoteHead>>;
}

pub(crate) fn ticket_json(t: &ken_core::Ticket) -> Result<String> {
    serde_json::to_string(t).map_err(|e| StoreError::Other(e.to_string()))
}

pub(crate) fn ticket_of(data: &str) -> Result<ken_core::Ticket> {
    serde_json::from_str(data).map_err(|e| StoreError::Other(format!("a stored ticket: {e}")))
}

pub struct HomeStore {
    conns: Pool,
}

impl HomeStore {
    /// Open (creating) `server.sqlite` in `home`.
    pub fn open(home: &Path) -> Result<HomeStore> {
        crate::private::create_dir(home)?;
        let path = home.join("server.sqlite");
        crate::private::own_file(&path)?;
        let conn = Connection::open(&path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(HomeStore {
            conns: Pool::with_first(&path, conn),
        })
    }
}

impl Home for HomeStore {
    // --- tokens ---

    fn add_token(&self, t: &TokenRecord) -> Result<()> {
        let repos =
            serde_json::to_string(&t.repos).map_err(|e| StoreError::Other(e.to_string()))?;
        self.conns.get()?.execute(
            "INSERT INTO tokens(id, hash, scope, repos, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![t.id, t.hash, t.scope, repos, t.label, t.created_at],
        )?;
        Ok(())
    }

    /// The token with this hash, revoked or not.
    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>> {
        Ok(self
            .conns
            .get()?
            .query_row(
                &format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = ?1"),
                [hash],
                token_row,
            )
            .optional()?)
    }

    fn tokens(&self) -> Result<Vec<TokenRecord>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([], token_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Revoke a token; false when there is no such (unrevoked) token.
    fn revoke_token(&self, id: &str, at: i64) -> Result<bool> {
        let n = self.conns.get()?.execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id, at],
        )?;
        Ok(n > 0)
    }

    /// Tokens not revoked.
    fn active_tokens(&self) -> Result<u64> {
        let n: i64 = self.conns.get()?.query_row(
            "SELECT COUNT(*) FROM tokens WHERE revoked_at IS NULL",
            [],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Note a token's use (at most once a minute per token, to spare writes).
    fn touch_token(&self, id: &str, at: i64) -> Result<()> {
        self.conns.get()?.execute(
            "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60)",
            params![id, at],
        )?;
        Ok(())
    }

    // --- jobs ---

    /// Queue a job, unless one with the same dedupe key is queued or
    /// running: then that one is returned. The bool says whether it is new.
    fn enqueue(&self, job: &NewJob, now: i64) -> Result<(JobRecord, bool)> {
        let mut conn = self.conns.get()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(key) = &job.dedupe {
            let existing = tx
                .query_row(
                    &format!(
                        "SELECT {JOB_COLUMNS} FROM jobs WHERE dedupe = ?1 AND state IN ('queued', 'running') ORDER BY seq DESC LIMIT 1"
                    ),
                    [key],
                    job_row,
                )
                .optional()?;
            if let Some(j) = existing {
                tx.commit()?;
                return Ok((j, false));
            }
        }
        tx.execute(
            "INSERT INTO jobs(id, kind, repo, source, rev, dedupe, origin, state, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8)",
            params![
                job.id, job.kind, job.repo, job.source, job.rev, job.dedupe, job.origin, now
            ],
        )?;
        let j = tx.query_row(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
            [&job.id],
            job_row,
        )?;
        tx.commit()?;
        Ok((j, true))
    }

    /// The newest job with a dedupe key, in any state.
    fn last_job_with_key(&self, key: &str) -> Result<Option<JobRecord>> {
        Ok(self
            .conns
            .get()?
            .query_row(
                &format!(
                    "SELECT {JOB_COLUMNS} FROM jobs WHERE dedupe = ?1 ORDER BY seq DESC LIMIT 1"
                ),
                [key],
                job_row,
            )
            .optional()?)
    }

    fn job(&self, id: &str) -> Result<Option<JobRecord>> {
        Ok(self
            .conns
            .get()?
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
                [id],
                job_row,
            )
            .optional()?)
    }

    /// The newest jobs, newest first.
    fn jobs(&self, limit: usize) -> Result<Vec<JobRecord>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs ORDER BY seq DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([limit as i64], job_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Take the oldest queued job whose repository has no running job, and
    /// mark it running.
    fn claim(&self, now: i64) -> Result<Option<JobRecord>> {
        let mut conn = self.conns.get()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id: Option<String> = tx
            .query_row(
                "SELECT id FROM jobs q WHERE state = 'queued' AND NOT EXISTS \
                 (SELECT 1 FROM jobs r WHERE r.state = 'running' AND r.repo = q.repo) \
                 ORDER BY seq LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = id else {
            tx.commit()?;
            return Ok(None);
        };
        tx.execute(
            "UPDATE jobs SET state = 'running', started_at = ?2, heartbeat_at = ?2, \
             attempts = attempts + 1, error = NULL WHERE id = ?1",
            params![id, now],
        )?;
        let j = tx.query_row(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
            [&id],
            job_row,
        )?;
        tx.commit()?;
        Ok(Some(j))
    }

    /// Record a running job's progress (also its heartbeat).
    fn set_progress(&self, id: &str, progress: &str, now: i64) -> Result<()> {
        self.conns.get()?.execute(
            "UPDATE jobs SET progress = ?2, heartbeat_at = ?3 WHERE id = ?1 AND state = 'running'",
            params![id, progress, now],
        )?;
        Ok(())
    }

    /// End a job: done with a result, or failed with an error.
    fn finish(
        &self,
        id: &str,
        state: JobState,
        result: Option<&str>,
        error: Option<&str>,
        now: i64,
    ) -> Result<()> {
        self.conns.get()?.execute(
            "UPDATE jobs SET state = ?2, result = ?3, error = ?4, finished_at = ?5 WHERE id = ?1",
            params![id, state.name(), result, error, now],
        )?;
        Ok(())
    }

    /// Put a running job back in the queue (its runner stopped).
    fn requeue(&self, id: &str) -> Result<()> {
        self.conns.get()?.execute(
            "UPDATE jobs SET state = 'queued' WHERE id = ?1 AND state = 'running'",
            [id],
        )?;
        Ok(())
    }

    /// Put back in the queue the running jobs whose runner has not been
    /// heard of since `before` (it died); returns how many.
    fn requeue_stale(&self, before: i64) -> Result<usize> {
        Ok(self.conns.get()?.execute(
            "UPDATE jobs SET state = 'queued' WHERE state = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < ?1)",
            [before],
        )?)
    }

    // --- webhook deliveries ---

    /// Record a delivery id; returns the job of an earlier delivery with
    /// the same id (`Some(None)` when it queued nothing), or None if new.
    fn seen_delivery(&self, id: &str, now: i64) -> Result<Option<Option<String>>> {
        let conn = self.conns.get()?;
        let job: Option<Option<String>> = conn
            .query_row("SELECT job FROM deliveries WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        if job.is_none() {
            conn.execute(
                "INSERT OR IGNORE INTO deliveries(id, received_at) VALUES (?1, ?2)",
                params![id, now],
            )?;
        }
        Ok(job)
    }

    /// Link a delivery to the job it queued.
    fn set_delivery_job(&self, id: &str, job: &str) -> Result<()> {
        self.conns.get()?.execute(
            "UPDATE deliveries SET job = ?2 WHERE id = ?1",
            params![id, job],
        )?;
        Ok(())
    }

    /// The data version of the database (see `EmbeddedStore::data_version`).
    fn data_version(&self) -> Result<u64> {
        self.conns.data_version()
    }

    // --- tickets ---

    fn put_tickets(
        &self,
        repo: &str,
        tickets: &[ken_core::Ticket],
        now: i64,
    ) -> Result<(usize, usize)> {
        let mut conn = self.conns.get()?;
        let tx = conn.transaction()?;
        let (mut added, mut replaced) = (0, 0);
        {
            let mut exists = tx.prepare("SELECT 1 FROM tickets WHERE repo = ?1 AND id = ?2")?;
            let mut put = tx.prepare(
                "INSERT OR REPLACE INTO tickets(repo, id, data, imported_at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for t in tickets {
                if exists.exists(params![repo, t.id])? {
                    replaced += 1;
                } else {
                    added += 1;
                }
                put.execute(params![repo, t.id, ticket_json(t)?, now])?;
            }
        }
        tx.commit()?;
        Ok((added, replaced))
    }

    fn tickets(&self, repo: &str) -> Result<Vec<ken_core::Ticket>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare("SELECT data FROM tickets WHERE repo = ?1 ORDER BY id")?;
        let rows = stmt.query_map([repo], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for data in rows {
            out.push(ticket_of(&data?)?);
        }
        Ok(out)
    }

    fn remove_tickets(&self, repo: &str) -> Result<usize> {
        Ok(self
            .conns
            .get()?
            .execute("DELETE FROM tickets WHERE repo = ?1", [repo])?)
    }

    fn put_remote_head(&self, h: &RemoteHead) -> Result<()> {
        self.conns.get()?.execute(
            "INSERT OR REPLACE INTO remote_heads(repo, branch, head, polled_at, error) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![h.repo, h.branch, h.head, h.polled_at, h.error],
        )?;
        Ok(())
    }

    fn remote_heads(&self) -> Result<Vec<RemoteHead>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare(
            "SELECT repo, branch, head, polled_at, error FROM remote_heads ORDER BY repo",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RemoteHead {
                repo: r.get(0)?,
                branch: r.get(1)?,
                head: r.get(2)?,
                polled_at: r.get(3)?,
                error: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

// The queue, tokens and deliveries are tested by the conformance suite
// (tests/conformance: `home_queue_tokens_deliveries`), on SQLite and PostgreSQL.
