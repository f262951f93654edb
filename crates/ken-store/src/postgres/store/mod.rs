//! One repository's index in PostgreSQL: the handle and its writer lease
//! here, each store trait in a file of its own (index_store.rs,
//! chunk_store.rs, graph_store.rs, history_store.rs, vector_store.rs).

mod chunk_store;
mod graph_store;
mod history_store;
mod index_store;
mod vector_store;

use std::future::Future;
use std::sync::Arc;

use ken_core::{ChunkKind, Language};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row};

use super::Pg;
use super::vectors;
use crate::{Result, StoreError, StoredChunk};

/// The advisory-lock class of writer leases (the object is the repository id).
const LEASE_CLASS: i32 = 0x6b65;

pub struct PgStore {
    pg: Arc<Pg>,
    key: String,
    /// None: a reader of a repository that has no index yet (reads are empty).
    repo: Option<i64>,
    /// The writer lease: the connection holding the advisory lock.
    lease: Option<PgConnection>,
    /// Chunks this writer wrote: whether the planner's statistics need a
    /// fresh look when it finishes.
    written: u64,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        if let (Some(mut conn), Some(id)) = (self.lease.take(), self.repo) {
            // release the lease now: a closing session lets it go only when
            // its backend has exited, which a next writer could race
            let _ = self.pg.run(async move {
                let _ = sqlx::query("SELECT pg_advisory_unlock($1, $2::int)")
                    .bind(LEASE_CLASS)
                    .bind(id as i32)
                    .execute(&mut conn)
                    .await;
                sqlx::Connection::close(conn).await?;
                Ok(())
            });
        }
    }
}

fn other(e: impl std::fmt::Display) -> StoreError {
    StoreError::Other(e.to_string())
}

impl PgStore {
    pub(crate) fn reader(pg: Arc<Pg>, key: String, repo: Option<i64>) -> PgStore {
        PgStore {
            pg,
            key,
            repo,
            lease: None,
            written: 0,
        }
    }

    /// Take the writer lease of `key`, creating the repository if needed.
    pub(crate) fn writer(pg: Arc<Pg>, key: String) -> Result<PgStore> {
        let pool = pg.pool.clone();
        let k = key.clone();
        let (id, conn) = pg.run(async move {
            sqlx::query("INSERT INTO repos(key) VALUES ($1) ON CONFLICT (key) DO NOTHING")
                .bind(&k)
                .execute(&pool)
                .await?;
            let id: i64 = sqlx::query("SELECT id FROM repos WHERE key = $1")
                .bind(&k)
                .fetch_one(&pool)
                .await?
                .get(0);
            let mut conn = pool.acquire().await?.detach();
            let got: bool = sqlx::query("SELECT pg_try_advisory_lock($1, $2::int)")
                .bind(LEASE_CLASS)
                .bind(id as i32)
                .fetch_one(&mut conn)
                .await?
                .get(0);
            if !got {
                let _ = sqlx::Connection::close(conn).await;
                return Err(StoreError::Locked(format!(
                    "repository `{k}` in PostgreSQL"
                )));
            }
            Ok((id, conn))
        })?;
        Ok(PgStore {
            pg,
            key,
            repo: Some(id),
            lease: Some(conn),
            written: 0,
        })
    }

    /// Delete the repository and everything of it (the lease is held).
    pub(crate) fn delete_repo(&self) -> Result<()> {
        let repo = self.writing()?;
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let mut tx = pool.begin().await?;
            vectors::drop_spaces(&mut tx, repo).await?;
            // the messages of commits and the files no other repository
            // holds go with it
            super::lexical::lock_shared(&mut tx, true).await?;
            sqlx::query(
                "WITH gone AS (
                     DELETE FROM shared_files s USING lex_files f
                     WHERE f.repo = $1 AND s.path = f.path AND s.blob = f.blob
                       AND NOT EXISTS (SELECT 1 FROM lex_files o
                                       WHERE o.path = f.path AND o.blob = f.blob AND o.repo <> $1)
                     RETURNING s.doc)
                 DELETE FROM file_terms t USING gone WHERE t.doc = gone.doc",
            )
            .bind(repo)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "WITH gone AS (
                     DELETE FROM messages m USING commits c
                     WHERE c.repo = $1 AND m.sha = c.sha
                       AND NOT EXISTS (SELECT 1 FROM commits o WHERE o.sha = c.sha AND o.repo <> $1)
                     RETURNING m.doc)
                 DELETE FROM message_terms t USING gone WHERE t.doc = gone.doc",
            )
            .bind(repo)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM repos WHERE id = $1")
                .bind(repo)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn writing(&self) -> Result<i64> {
        match (self.lease.is_some(), self.repo) {
            (true, Some(id)) => Ok(id),
            _ => Err(StoreError::Other(
                "this index was opened for reading; writes need the writer lease".into(),
            )),
        }
    }

    /// Run a read against the repository; a repository with no index yet reads as empty.
    fn read<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Default + Send + 'static,
        F: FnOnce(PgPool, i64) -> Fut,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        match self.repo {
            None => Ok(T::default()),
            Some(id) => self.pg.run(f(self.pg.pool.clone(), id)),
        }
    }

    /// Run a write (the closure opens its transaction and bumps the version).
    fn write<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(PgPool, i64) -> Fut,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let id = self.writing()?;
        self.pg.run(f(self.pg.pool.clone(), id))
    }
}

const CHUNK_COLUMNS: &str = "id, path, language, kind, symbol, qualname, signature, doc,
    start_line, end_line, start_byte, end_byte, trivial, cell, content_hash, synthetic";

fn chunk_from_row(r: &PgRow, with_text: bool) -> StoredChunk {
    let lang: String = r.get("language");
    let kind: String = r.get("kind");
    StoredChunk {
        id: r.get::<i64, _>("id") as u64,
        path: r.get("path"),
        language: Language::parse(&lang).unwrap_or(Language::Text),
        kind: ChunkKind::parse(&kind).unwrap_or(ChunkKind::Window),
        symbol: r.get("symbol"),
        qualname: r.get("qualname"),
        signature: r.get("signature"),
        doc: r.get("doc"),
        start_line: r.get::<i32, _>("start_line") as u32,
        end_line: r.get::<i32, _>("end_line") as u32,
        start_byte: r.get::<i32, _>("start_byte") as u32,
        end_byte: r.get::<i32, _>("end_byte") as u32,
        trivial: r.get("trivial"),
        cell: r.get::<Option<i32>, _>("cell").map(|c| c as u32),
        content_hash: r.get("content_hash"),
        synthetic: r.get("synthetic"),
        text: if with_text {
            r.get("text")
        } else {
            String::new()
        },
    }
}

fn ids_i64(ids: &[u64]) -> Vec<i64> {
    ids.iter().map(|&i| i as i64).collect()
}

/// Chunks by id, in the order asked.
async fn chunks_by_id(
    pool: &PgPool,
    repo: i64,
    ids: Vec<i64>,
    text: bool,
) -> Result<Vec<StoredChunk>> {
    let cols = if text {
        format!("{CHUNK_COLUMNS}, text")
    } else {
        CHUNK_COLUMNS.to_string()
    };
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {cols} FROM unnest($2::bigint[]) WITH ORDINALITY AS a(id, n)
         JOIN chunks c USING (id) WHERE c.repo = $1 ORDER BY a.n"
    )))
    .bind(repo)
    .bind(&ids)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(|r| chunk_from_row(r, text)).collect())
}

/// A text parameter of a read as stored (NUL as U+001A, see
/// [`without_nul`]): a NUL in a request finds nothing instead of failing.
pub(crate) fn pg_text(s: &str) -> String {
    s.replace('\0', "\u{1a}")
}

fn pg_texts(v: &[String]) -> Vec<String> {
    v.iter().map(|s| pg_text(s)).collect()
}

/// PostgreSQL's `text` cannot hold NUL: each one is kept as U+001A
/// (SUBSTITUTE), one byte for one byte, so byte offsets and line numbers
/// hold. (The embedded store keeps NUL; a file with many is binary and
/// skipped before it gets here.)
fn without_nul(s: &mut String) {
    if s.contains('\0') {
        *s = pg_text(s);
    }
}

fn without_nul_opt(s: &mut Option<String>) {
    if let Some(s) = s {
        without_nul(s);
    }
}
