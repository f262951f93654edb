//! Tokens, the job queue and webhook deliveries in PostgreSQL, so that
//! every server and worker on one database shares them. A job is claimed
//! with `FOR UPDATE SKIP LOCKED` under a transaction lock that serialises
//! claims (one running job per repository); a runner's heartbeat is its
//! lease: a job whose runner stopped beating goes back to the queue.

use std::sync::Arc;

use sqlx::postgres::PgRow;
use sqlx::{PgPool, Postgres, Row, Transaction};

use super::Pg;
use super::store::pg_text;
use crate::{Home, JobRecord, JobState, NewJob, RemoteHead, Result, StoreError, TokenRecord};

/// The advisory lock that serialises claims.
const CLAIM_LOCK: i64 = 0x6b65_6e5f_6a6f_6273;

pub struct PgHome {
    pg: Arc<Pg>,
}

impl PgHome {
    pub(crate) fn new(pg: Arc<Pg>) -> PgHome {
        PgHome { pg }
    }

    fn run<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(PgPool) -> Fut,
        Fut: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        self.pg.run(f(self.pg.pool.clone()))
    }
}

const JOB_COLUMNS: &str = "id, kind, repo, source, rev, dedupe, origin, state, progress, result, \
     error, attempts, created_at, started_at, finished_at, heartbeat_at";
const TOKEN_COLUMNS: &str = "id, hash, scope, repos, label, created_at, revoked_at, last_used_at";

fn job_row(r: &PgRow) -> JobRecord {
    JobRecord {
        id: r.get(0),
        kind: r.get(1),
        repo: r.get(2),
        source: r.get(3),
        rev: r.get(4),
        dedupe: r.get(5),
        origin: r.get(6),
        state: JobState::parse(&r.get::<String, _>(7)),
        progress: r.get(8),
        result: r.get(9),
        error: r.get(10),
        attempts: r.get::<i32, _>(11) as u32,
        created_at: r.get(12),
        started_at: r.get(13),
        finished_at: r.get(14),
        heartbeat_at: r.get(15),
    }
}

fn token_row(r: &PgRow) -> TokenRecord {
    TokenRecord {
        id: r.get(0),
        hash: r.get(1),
        scope: r.get(2),
        repos: serde_json::from_str(&r.get::<String, _>(3)).unwrap_or_default(),
        label: r.get(4),
        created_at: r.get(5),
        revoked_at: r.get(6),
        last_used_at: r.get(7),
    }
}

async fn bump(tx: &mut Transaction<'_, Postgres>) -> Result<()> {
    sqlx::query("UPDATE home_version SET version = version + 1")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Run one statement and bump the version, in a transaction; rows affected.
async fn write(pool: &PgPool, sql: &'static str, bind: impl FnOnce(Q) -> Q) -> Result<u64> {
    let mut tx = pool.begin().await?;
    let n = bind(sqlx::query(sql))
        .execute(&mut *tx)
        .await?
        .rows_affected();
    bump(&mut tx).await?;
    tx.commit().await?;
    Ok(n)
}

type Q = sqlx::query::Query<'static, Postgres, sqlx::postgres::PgArguments>;

impl Home for PgHome {
    fn add_token(&self, t: &TokenRecord) -> Result<()> {
        let t = t.clone();
        let repos =
            serde_json::to_string(&t.repos).map_err(|e| StoreError::Other(e.to_string()))?;
        self.run(|pool| async move {
            write(
                &pool,
                "INSERT INTO tokens(id, hash, scope, repos, label, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
                |q| q.bind(t.id).bind(t.hash).bind(t.scope).bind(repos).bind(t.label).bind(t.created_at),
            )
            .await?;
            Ok(())
        })
    }

    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>> {
        let hash = hash.to_string();
        self.run(|pool| async move {
            Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = $1"
            )))
            .bind(hash)
            .fetch_optional(&pool)
            .await?
            .map(|r| token_row(&r)))
        })
    }

    fn tokens(&self) -> Result<Vec<TokenRecord>> {
        self.run(|pool| async move {
            Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id"
            )))
            .fetch_all(&pool)
            .await?
            .iter()
            .map(token_row)
            .collect())
        })
    }

    fn revoke_token(&self, id: &str, at: i64) -> Result<bool> {
        let id = id.to_string();
        self.run(|pool| async move {
            let n = write(
                &pool,
                "UPDATE tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                |q| q.bind(id).bind(at),
            )
            .await?;
            Ok(n > 0)
        })
    }

    fn active_tokens(&self) -> Result<u64> {
        self.run(|pool| async move {
            let n: i64 = sqlx::query("SELECT count(*) FROM tokens WHERE revoked_at IS NULL")
                .fetch_one(&pool)
                .await?
                .get(0);
            Ok(n as u64)
        })
    }

    fn touch_token(&self, id: &str, at: i64) -> Result<()> {
        let id = id.to_string();
        self.run(|pool| async move {
            // not a change anyone waits for: no version bump
            sqlx::query(
                "UPDATE tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2 - 60)",
            )
            .bind(id)
            .bind(at)
            .execute(&pool)
            .await?;
            Ok(())
        })
    }

    fn enqueue(&self, job: &NewJob, now: i64) -> Result<(JobRecord, bool)> {
        let job = job.clone();
        self.run(|pool| async move {
            let mut tx = pool.begin().await?;
            // one enqueuer at a time per key, so a key is never queued twice
            if let Some(key) = &job.dedupe {
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
                    .bind(key)
                    .execute(&mut *tx)
                    .await?;
                let existing = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "SELECT {JOB_COLUMNS} FROM jobs WHERE dedupe = $1 AND state IN ('queued', 'running') ORDER BY seq DESC LIMIT 1"
                )))
                .bind(key)
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(r) = existing {
                    tx.commit().await?;
                    return Ok((job_row(&r), false));
                }
            }
            let r = sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO jobs(id, kind, repo, source, rev, dedupe, origin, state, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8) RETURNING {JOB_COLUMNS}"
            )))
            .bind(&job.id)
            .bind(&job.kind)
            .bind(&job.repo)
            .bind(&job.source)
            .bind(&job.rev)
            .bind(&job.dedupe)
            .bind(&job.origin)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            bump(&mut tx).await?;
            tx.commit().await?;
            Ok((job_row(&r), true))
        })
    }

    fn last_job_with_key(&self, key: &str) -> Result<Option<JobRecord>> {
        let key = key.to_string();
        self.run(|pool| async move {
            Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {JOB_COLUMNS} FROM jobs WHERE dedupe = $1 ORDER BY seq DESC LIMIT 1"
            )))
            .bind(key)
            .fetch_optional(&pool)
            .await?
            .map(|r| job_row(&r)))
        })
    }

    fn job(&self, id: &str) -> Result<Option<JobRecord>> {
        let id = id.to_string();
        self.run(|pool| async move {
            Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"
            )))
            .bind(id)
            .fetch_optional(&pool)
            .await?
            .map(|r| job_row(&r)))
        })
    }

    fn jobs(&self, limit: usize) -> Result<Vec<JobRecord>> {
        self.run(|pool| async move {
            Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {JOB_COLUMNS} FROM jobs ORDER BY seq DESC LIMIT $1"
            )))
            .bind(limit as i64)
            .fetch_all(&pool)
            .await?
            .iter()
            .map(job_row)
            .collect())
        })
    }

    fn claim(&self, now: i64) -> Result<Option<JobRecord>> {
        self.run(|pool| async move {
            let mut tx = pool.begin().await?;
            // claims one at a time: "no running job of the repository" holds
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(CLAIM_LOCK)
                .execute(&mut *tx)
                .await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE jobs SET state = 'running', started_at = $1, heartbeat_at = $1,
                        attempts = attempts + 1, error = NULL
                 WHERE id = (SELECT id FROM jobs q WHERE state = 'queued' AND NOT EXISTS
                               (SELECT 1 FROM jobs r WHERE r.state = 'running' AND r.repo = q.repo)
                             ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
                 RETURNING {JOB_COLUMNS}"
            )))
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            if row.is_some() {
                bump(&mut tx).await?;
            }
            tx.commit().await?;
            Ok(row.map(|r| job_row(&r)))
        })
    }

    fn set_progress(&self, id: &str, progress: &str, now: i64) -> Result<()> {
        let (id, progress) = (id.to_string(), progress.to_string());
        self.run(|pool| async move {
            write(
                &pool,
                "UPDATE jobs SET progress = $2, heartbeat_at = $3 WHERE id = $1 AND state = 'running'",
                |q| q.bind(id).bind(progress).bind(now),
            )
            .await?;
            Ok(())
        })
    }

    fn finish(
        &self,
        id: &str,
        state: JobState,
        result: Option<&str>,
        error: Option<&str>,
        now: i64,
    ) -> Result<()> {
        let (id, result, error) = (
            id.to_string(),
            result.map(str::to_string),
            error.map(str::to_string),
        );
        self.run(|pool| async move {
            write(
                &pool,
                "UPDATE jobs SET state = $2, result = $3, error = $4, finished_at = $5 WHERE id = $1",
                |q| q.bind(id).bind(state.name()).bind(result).bind(error).bind(now),
            )
            .await?;
            Ok(())
        })
    }

    fn requeue(&self, id: &str) -> Result<()> {
        let id = id.to_string();
        self.run(|pool| async move {
            write(
                &pool,
                "UPDATE jobs SET state = 'queued' WHERE id = $1 AND state = 'running'",
                |q| q.bind(id),
            )
            .await?;
            Ok(())
        })
    }

    fn requeue_stale(&self, before: i64) -> Result<usize> {
        self.run(|pool| async move {
            let n = write(
                &pool,
                "UPDATE jobs SET state = 'queued' WHERE state = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < $1)",
                |q| q.bind(before),
            )
            .await?;
            Ok(n as usize)
        })
    }

    fn seen_delivery(&self, id: &str, now: i64) -> Result<Option<Option<String>>> {
        let id = id.to_string();
        self.run(|pool| async move {
            let mut tx = pool.begin().await?;
            let inserted = sqlx::query(
                "INSERT INTO deliveries(id, received_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            )
            .bind(&id)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            let out = if inserted == 1 {
                None
            } else {
                let job: Option<String> = sqlx::query("SELECT job FROM deliveries WHERE id = $1")
                    .bind(&id)
                    .fetch_one(&mut *tx)
                    .await?
                    .get(0);
                Some(job)
            };
            tx.commit().await?;
            Ok(out)
        })
    }

    fn set_delivery_job(&self, id: &str, job: &str) -> Result<()> {
        let (id, job) = (id.to_string(), job.to_string());
        self.run(|pool| async move {
            write(&pool, "UPDATE deliveries SET job = $2 WHERE id = $1", |q| {
                q.bind(id).bind(job)
            })
            .await?;
            Ok(())
        })
    }

    fn data_version(&self) -> Result<u64> {
        self.run(|pool| async move {
            let v: i64 = sqlx::query("SELECT version FROM home_version")
                .fetch_one(&pool)
                .await?
                .get(0);
            Ok(v as u64)
        })
    }

    fn put_tickets(
        &self,
        repo: &str,
        tickets: &[ken_core::Ticket],
        now: i64,
    ) -> Result<(usize, usize)> {
        let repo = repo.to_string();
        let rows: Vec<(String, String)> = tickets
            .iter()
            .map(|t| Ok((pg_text(&t.id), pg_text(&crate::home::ticket_json(t)?))))
            .collect::<Result<_>>()?;
        self.run(|pool| async move {
            let mut tx = pool.begin().await?;
            let (mut added, mut replaced) = (0, 0);
            for (id, data) in rows {
                let inserted: bool = sqlx::query(
                    "INSERT INTO tickets(repo, id, data, imported_at) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (repo, id) DO UPDATE SET data = EXCLUDED.data, imported_at = EXCLUDED.imported_at
                     RETURNING (xmax = 0)",
                )
                .bind(&repo)
                .bind(&id)
                .bind(&data)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?
                .get(0);
                if inserted {
                    added += 1;
                } else {
                    replaced += 1;
                }
            }
            bump(&mut tx).await?;
            tx.commit().await?;
            Ok((added, replaced))
        })
    }

    fn tickets(&self, repo: &str) -> Result<Vec<ken_core::Ticket>> {
        let repo = repo.to_string();
        let rows: Vec<String> = self.run(|pool| async move {
            Ok(
                sqlx::query("SELECT data FROM tickets WHERE repo = $1 ORDER BY id")
                    .bind(&repo)
                    .fetch_all(&pool)
                    .await?
                    .iter()
                    .map(|r| r.get::<String, _>(0))
                    .collect(),
            )
        })?;
        rows.iter().map(|d| crate::home::ticket_of(d)).collect()
    }

    fn remove_tickets(&self, repo: &str) -> Result<usize> {
        let repo = repo.to_string();
        self.run(|pool| async move {
            Ok(write(&pool, "DELETE FROM tickets WHERE repo = $1", |q| {
                q.bind(repo)
            })
            .await? as usize)
        })
    }

    fn put_remote_head(&self, h: &RemoteHead) -> Result<()> {
        let h = h.clone();
        self.run(|pool| async move {
            write(
                &pool,
                "INSERT INTO remote_heads(repo, branch, head, polled_at, error) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (repo) DO UPDATE SET branch = EXCLUDED.branch, head = EXCLUDED.head,
                 polled_at = EXCLUDED.polled_at, error = EXCLUDED.error",
                |q| {
                    q.bind(h.repo)
                        .bind(h.branch)
                        .bind(h.head)
                        .bind(h.polled_at)
                        .bind(h.error.map(|e| pg_text(&e)))
                },
            )
            .await?;
            Ok(())
        })
    }

    fn remote_heads(&self) -> Result<Vec<RemoteHead>> {
        self.run(|pool| async move {
            Ok(sqlx::query(
                "SELECT repo, branch, head, polled_at, error FROM remote_heads ORDER BY repo",
            )
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|r| RemoteHead {
                repo: r.get(0),
                branch: r.get(1),
                head: r.get(2),
                polled_at: r.get(3),
                error: r.get(4),
            })
            .collect())
        })
    }
}
