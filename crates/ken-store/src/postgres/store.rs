//! One repository's index in PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;

use ken_core::{ChunkKind, Language};
use pgvector::Vector;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Postgres, Row, Transaction};

use super::Pg;
use super::lexical::{self, Postings};
use super::vectors;
use crate::embedded::fold;
use crate::{
    Batch, BlameLines, ChunkFilter, ChunkStore, CommitRecord, FileBlameRecord, FileContent,
    FileHit, FileRecord, GraphStore, HistoryStore, IndexState, IndexStore, LexicalHit,
    LexicalQuery, Result, Stats, StoreError, StoredChunk, SymbolMatch, SymbolTier, VectorMeta,
    VectorStore,
};

/// The advisory-lock class of writer leases (the object is the repository id).
const LEASE_CLASS: i32 = 0x6b65;

pub struct PgStore {
    pg: Arc<Pg>,
    key: String,
    /// None: a reader of a repository that has no index yet (reads are empty).
    repo: Option<i64>,
    /// The writer lease: the connection holding the advisory lock.
    lease: Option<PgConnection>,
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

pub(crate) async fn bump(tx: &mut Transaction<'_, Postgres>, repo: i64) -> Result<()> {
    sqlx::query("UPDATE repos SET version = version + 1 WHERE id = $1")
        .bind(repo)
        .execute(&mut **tx)
        .await?;
    Ok(())
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
        })
    }

    /// Delete the repository and everything of it (the lease is held).
    pub(crate) fn delete_repo(&self) -> Result<()> {
        let repo = self.writing()?;
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let mut tx = pool.begin().await?;
            vectors::drop_spaces(&mut tx, repo).await?;
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

/// Delete everything of `paths` that a batch replaces.
async fn delete_paths(
    tx: &mut Transaction<'_, Postgres>,
    repo: i64,
    paths: &[String],
    deleted: &[String],
) -> Result<()> {
    // the documents first, then their postings by document id: a join in
    // one statement is planned as a nested loop over every posting while
    // the planner's statistics predate the repository (found indexing
    // sympy into a database holding other repositories: quadratic)
    let chunk_docs: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM chunks WHERE repo = $1 AND path = ANY($2)")
            .bind(repo)
            .bind(paths)
            .fetch_all(&mut **tx)
            .await?;
    let file_docs: Vec<i64> =
        sqlx::query_scalar("SELECT doc FROM lex_files WHERE repo = $1 AND path = ANY($2)")
            .bind(repo)
            .bind(paths)
            .fetch_all(&mut **tx)
            .await?;
    for (files, docs) in [(false, &chunk_docs), (true, &file_docs)] {
        if docs.is_empty() {
            continue;
        }
        sqlx::query("DELETE FROM lex_terms WHERE repo = $1 AND files = $2 AND doc = ANY($3)")
            .bind(repo)
            .bind(files)
            .bind(docs)
            .execute(&mut **tx)
            .await?;
        // the BM25 statistics lose what goes
        sqlx::query(
            "WITH gone AS (DELETE FROM lex_lens WHERE repo = $1 AND files = $2 AND doc = ANY($3)
                           RETURNING field, len)
             UPDATE lex_stats s SET n = s.n - g.n, total = s.total - g.total
             FROM (SELECT field, count(*) AS n, sum(len) AS total FROM gone GROUP BY field) g
             WHERE s.repo = $1 AND s.files = $2 AND s.field = g.field",
        )
        .bind(repo)
        .bind(files)
        .bind(docs)
        .execute(&mut **tx)
        .await?;
    }
    for sql in [
        "DELETE FROM lex_files WHERE repo = $1 AND path = ANY($2)",
        "DELETE FROM chunks WHERE repo = $1 AND path = ANY($2)",
        "DELETE FROM symbols WHERE repo = $1 AND path = ANY($2)",
        "DELETE FROM facts WHERE repo = $1 AND path = ANY($2)",
        "DELETE FROM files WHERE repo = $1 AND path = ANY($2)",
    ] {
        sqlx::query(sql)
            .bind(repo)
            .bind(paths)
            .execute(&mut **tx)
            .await?;
    }
    for sql in [
        "DELETE FROM blame WHERE repo = $1 AND path = ANY($2)",
        "DELETE FROM blame_done WHERE repo = $1 AND path = ANY($2)",
    ] {
        sqlx::query(sql)
            .bind(repo)
            .bind(deleted)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Columns of the chunk rows of a batch, for one `unnest` insert.
#[derive(Default)]
struct ChunkRows {
    id: Vec<i64>,
    path: Vec<String>,
    kind: Vec<String>,
    language: Vec<String>,
    symbol: Vec<Option<String>>,
    qualname: Vec<Option<String>>,
    signature: Vec<Option<String>>,
    doc: Vec<Option<String>>,
    start_line: Vec<i32>,
    end_line: Vec<i32>,
    start_byte: Vec<i32>,
    end_byte: Vec<i32>,
    trivial: Vec<bool>,
    cell: Vec<Option<i32>>,
    content_hash: Vec<String>,
    synthetic: Vec<bool>,
    text: Vec<String>,
}

#[derive(Default)]
struct FileRows {
    path: Vec<String>,
    blob: Vec<String>,
    language: Vec<String>,
    size: Vec<i64>,
    skip: Vec<Option<String>>,
}

#[derive(Default)]
struct EdgeRows {
    src_path: Vec<String>,
    src_q: Vec<String>,
    src_nth: Vec<i32>,
    dst_path: Vec<String>,
    dst_q: Vec<String>,
    dst_nth: Vec<i32>,
    kind: Vec<String>,
    line: Vec<i32>,
    rule: Vec<String>,
    confidence: Vec<f32>,
}

#[derive(Default)]
struct SymbolRows {
    name: Vec<String>,
    folded: Vec<String>,
    qualname: Vec<String>,
    qual_folded: Vec<String>,
    kind: Vec<String>,
    path: Vec<String>,
    start_line: Vec<i32>,
    end_line: Vec<i32>,
    chunk_id: Vec<i64>,
}

impl IndexStore for PgStore {
    fn data_version(&self) -> Result<u64> {
        self.read(|pool, repo| async move {
            let v: i64 = sqlx::query("SELECT version FROM repos WHERE id = $1")
                .bind(repo)
                .fetch_optional(&pool)
                .await?
                .map(|r| r.get(0))
                // a deleted repository reads as a change
                .unwrap_or(-1);
            Ok(v as u64)
        })
    }

    fn batch_seq(&self) -> Result<u64> {
        self.read(|pool, repo| async move {
            let v: i64 = sqlx::query("SELECT batch_seq FROM repos WHERE id = $1")
                .bind(repo)
                .fetch_one(&pool)
                .await?
                .get(0);
            Ok(v as u64)
        })
    }

    fn stats(&self) -> Result<Stats> {
        let state = self.state()?;
        self.read(move |pool, repo| async move {
            let r = sqlx::query(
                "SELECT (SELECT count(*) FROM files WHERE repo = $1 AND skip IS NULL),
                        (SELECT count(*) FROM chunks WHERE repo = $1),
                        (SELECT count(*) FROM symbols WHERE repo = $1),
                        (SELECT coalesce(sum(size), 0)::bigint FROM files WHERE repo = $1 AND skip IS NULL)",
            )
            .bind(repo)
            .fetch_one(&pool)
            .await?;
            let mut skipped: std::collections::BTreeMap<String, u64> = state
                .left_out
                .into_iter()
                .map(|(reason, l)| (reason, l.count))
                .collect();
            let rows = sqlx::query(
                "SELECT skip, count(*) FROM files WHERE repo = $1 AND skip IS NOT NULL GROUP BY skip",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            for row in rows {
                *skipped.entry(row.get(0)).or_default() += row.get::<i64, _>(1) as u64;
            }
            Ok(Stats {
                files: r.get::<i64, _>(0) as u64,
                skipped_files: skipped.values().sum(),
                skipped,
                chunks: r.get::<i64, _>(1) as u64,
                symbols: r.get::<i64, _>(2) as u64,
                bytes: r.get::<i64, _>(3) as u64,
            })
        })
    }

    fn location(&self) -> String {
        format!("{} (repository `{}`)", self.pg.shown, self.key)
    }

    fn size_bytes(&self) -> Result<u64> {
        // the repository's share of the rows: their text and terms
        self.read(|pool, repo| async move {
            let v: i64 = sqlx::query(
                "SELECT (SELECT coalesce(sum(octet_length(text)), 0) FROM chunks WHERE repo = $1)
                      + (SELECT coalesce(sum(octet_length(text)), 0) FROM blobs WHERE repo = $1)
                      + (SELECT count(*) * 40 FROM lex_terms WHERE repo = $1)
                      + (SELECT coalesce(sum(octet_length(v::text)), 0) FROM vector_cache WHERE repo = $1)
                      + (SELECT coalesce(sum(pg_total_relation_size(('vectors_' || id)::regclass)), 0)::bigint
                           FROM vector_spaces WHERE repo = $1 AND dim > 0)",
            )
            .bind(repo)
            .fetch_one(&pool)
            .await?
            .get::<Option<i64>, _>(0)
            .unwrap_or(0);
            Ok(v as u64)
        })
    }

    fn state(&self) -> Result<IndexState> {
        self.read(|pool, repo| async move {
            let json: String = sqlx::query("SELECT state::text FROM repos WHERE id = $1")
                .bind(repo)
                .fetch_one(&pool)
                .await?
                .get(0);
            Ok(serde_json::from_str(&json).unwrap_or_default())
        })
    }

    fn set_state(&mut self, state: &IndexState) -> Result<()> {
        let json = serde_json::to_string(state).map_err(other)?;
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            sqlx::query("UPDATE repos SET state = $2::jsonb WHERE id = $1")
                .bind(repo)
                .bind(json)
                .execute(&mut *tx)
                .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn files(&self) -> Result<Vec<FileRecord>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT path, blob_id, language, size, skip FROM files WHERE repo = $1 ORDER BY path",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| FileRecord {
                    path: r.get(0),
                    id: r.get(1),
                    language: Language::parse(&r.get::<String, _>(2)).unwrap_or(Language::Text),
                    size: r.get::<i64, _>(3) as u64,
                    skip: r.get(4),
                })
                .collect())
        })
    }

    fn write_batch(&mut self, batch: Batch) -> Result<()> {
        if batch.is_empty() {
            self.writing()?;
            return Ok(());
        }
        self.write(move |pool, repo| async move { write_batch(&pool, repo, batch).await })
    }

    fn finish(&mut self) -> Result<()> {
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "DELETE FROM blobs b WHERE b.repo = $1
                 AND NOT EXISTS (SELECT 1 FROM files f WHERE f.repo = $1 AND f.blob_id = b.id)",
            )
            .bind(repo)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            // fresh statistics for the planner: a repository just indexed
            // is otherwise planned as if empty until autovacuum comes by
            // (a first eval ran 2.3× slower). Best effort: it needs the
            // tables' owner.
            let _ = sqlx::query("ANALYZE lex_terms, lex_lens, lex_files, chunks, symbols, files")
                .execute(&pool)
                .await;
            Ok(())
        })
    }
}

impl ChunkStore for PgStore {
    fn search_chunks(&self, query: &LexicalQuery) -> Result<Vec<LexicalHit>> {
        let q = query.clone();
        self.read(move |pool, repo| async move {
            let hits = lexical::search(&pool, repo, false, &q).await?;
            Ok(hits
                .into_iter()
                .map(|(id, score)| LexicalHit {
                    chunk_id: id as u64,
                    score,
                })
                .collect())
        })
    }

    fn search_files(&self, query: &LexicalQuery) -> Result<Vec<FileHit>> {
        let q = query.clone();
        self.read(move |pool, repo| async move {
            let hits = lexical::search(&pool, repo, true, &q).await?;
            let docs: Vec<i64> = hits.iter().map(|h| h.0).collect();
            let rows =
                sqlx::query("SELECT doc, path FROM lex_files WHERE repo = $1 AND doc = ANY($2)")
                    .bind(repo)
                    .bind(&docs)
                    .fetch_all(&pool)
                    .await?;
            let paths: HashMap<i64, String> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            Ok(hits
                .into_iter()
                .filter_map(|(doc, score)| {
                    paths.get(&doc).map(|p| FileHit {
                        path: p.clone(),
                        score,
                    })
                })
                .collect())
        })
    }

    fn lookup_symbols(&self, ident: &str, limit: usize, partial: bool) -> Result<Vec<SymbolMatch>> {
        let ident = pg_text(ident);
        self.read(move |pool, repo| async move {
            lookup_symbols(&pool, repo, &ident, limit, partial).await
        })
    }

    fn lookup_symbols_many(
        &self,
        idents: &[(String, bool)],
        limit: usize,
    ) -> Result<Vec<Vec<SymbolMatch>>> {
        let idents: Vec<(String, bool)> = idents.iter().map(|(i, p)| (pg_text(i), *p)).collect();
        self.read(move |pool, repo| async move {
            // one hop for all of them, each on its own connection
            let mut set = tokio::task::JoinSet::new();
            let n = idents.len();
            for (i, (ident, partial)) in idents.into_iter().enumerate() {
                let pool = pool.clone();
                set.spawn(
                    async move { (i, lookup_symbols(&pool, repo, &ident, limit, partial).await) },
                );
            }
            let mut out = vec![Vec::new(); n];
            while let Some(done) = set.join_next().await {
                let (i, found) = done.map_err(other)?;
                out[i] = found?;
            }
            Ok(out)
        })
    }

    fn chunks(&self, ids: &[u64]) -> Result<Vec<StoredChunk>> {
        let ids = ids_i64(ids);
        self.read(|pool, repo| async move { chunks_by_id(&pool, repo, ids, true).await })
    }

    fn chunk_heads(&self, ids: &[u64]) -> Result<Vec<StoredChunk>> {
        let ids = ids_i64(ids);
        self.read(|pool, repo| async move { chunks_by_id(&pool, repo, ids, false).await })
    }

    fn first_chunk_heads(&self, paths: &[String]) -> Result<Vec<StoredChunk>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {CHUNK_COLUMNS} FROM unnest($2::text[]) WITH ORDINALITY AS a(wanted, n)
                 JOIN LATERAL (SELECT * FROM chunks c WHERE c.repo = $1 AND c.path = a.wanted
                               ORDER BY c.start_byte, c.end_byte DESC LIMIT 1) c ON true
                 ORDER BY a.n"
            )))
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| chunk_from_row(r, false)).collect())
        })
    }

    fn chunks_of_file(&self, path: &str) -> Result<Vec<StoredChunk>> {
        let path = pg_text(path);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {CHUNK_COLUMNS}, text FROM chunks WHERE repo = $1 AND path = $2
                 ORDER BY start_byte, end_byte DESC, id"
            )))
            .bind(repo)
            .bind(&path)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| chunk_from_row(r, true)).collect())
        })
    }

    fn file_text(&self, path: &str) -> Result<Option<String>> {
        let path = pg_text(path);
        self.read(|pool, repo| async move {
            Ok(sqlx::query(
                "SELECT b.text FROM files f JOIN blobs b ON b.repo = f.repo AND b.id = f.blob_id
                 WHERE f.repo = $1 AND f.path = $2 AND f.skip IS NULL",
            )
            .bind(repo)
            .bind(&path)
            .fetch_optional(&pool)
            .await?
            .map(|r| r.get(0)))
        })
    }

    fn chunk_ids(&self) -> Result<Vec<u64>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query("SELECT id FROM chunks WHERE repo = $1 ORDER BY id")
                .bind(repo)
                .fetch_all(&pool)
                .await?;
            Ok(rows.iter().map(|r| r.get::<i64, _>(0) as u64).collect())
        })
    }

    fn all_chunks(&self) -> Result<Vec<StoredChunk>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {CHUNK_COLUMNS}, text FROM chunks WHERE repo = $1 ORDER BY id"
            )))
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| chunk_from_row(r, true)).collect())
        })
    }
}

impl GraphStore for PgStore {
    fn graph_facts(&self, paths: Option<&[String]>) -> Result<Vec<ken_graph::FileFacts>> {
        let paths = paths.map(<[String]>::to_vec);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT json FROM facts WHERE repo = $1 AND ($2 OR path = ANY($3)) ORDER BY path",
            )
            .bind(repo)
            .bind(paths.is_none())
            .bind(paths.clone().unwrap_or_default())
            .fetch_all(&pool)
            .await?;
            let mut by_path: Vec<ken_graph::FileFacts> = Vec::with_capacity(rows.len());
            for r in rows {
                by_path.push(serde_json::from_str(&r.get::<String, _>(0)).map_err(other)?);
            }
            // in the order asked, as the embedded store answers
            if let Some(paths) = paths {
                let mut map: HashMap<String, ken_graph::FileFacts> =
                    by_path.into_iter().map(|f| (f.path.clone(), f)).collect();
                return Ok(paths.iter().filter_map(|p| map.remove(p)).collect());
            }
            Ok(by_path)
        })
    }

    fn replace_edges(&mut self, paths: Option<&[String]>, edges: &[ken_graph::Edge]) -> Result<()> {
        let paths = paths.map(<[String]>::to_vec);
        let edges = edges.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            sqlx::query("DELETE FROM edges WHERE repo = $1 AND ($2 OR src_path = ANY($3))")
                .bind(repo)
                .bind(paths.is_none())
                .bind(paths.unwrap_or_default())
                .execute(&mut *tx)
                .await?;
            let mut c = EdgeRows::default();
            for e in &edges {
                c.src_path.push(e.from.path.clone());
                c.src_q.push(e.from.qualname.clone());
                c.src_nth.push(e.from.nth as i32);
                c.dst_path.push(e.to.path.clone());
                c.dst_q.push(e.to.qualname.clone());
                c.dst_nth.push(e.to.nth as i32);
                c.kind.push(e.kind.name().to_string());
                c.line.push(e.line as i32);
                c.rule.push(e.rule.name().to_string());
                c.confidence.push(e.confidence);
            }
            sqlx::query(
                "INSERT INTO edges(repo, src_path, src_q, src_nth, dst_path, dst_q, dst_nth, kind, line, rule, confidence)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::int[],
                                          $8::text[], $9::int[], $10::text[], $11::real[])",
            )
            .bind(repo)
            .bind(&c.src_path)
            .bind(&c.src_q)
            .bind(&c.src_nth)
            .bind(&c.dst_path)
            .bind(&c.dst_q)
            .bind(&c.dst_nth)
            .bind(&c.kind)
            .bind(&c.line)
            .bind(&c.rule)
            .bind(&c.confidence)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn edges(&self) -> Result<Vec<ken_graph::Edge>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT src_path, src_q, src_nth, dst_path, dst_q, dst_nth, kind, line, rule, confidence
                 FROM edges WHERE repo = $1",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| {
                    let src: String = r.get(0);
                    ken_graph::Edge {
                        from: ken_graph::DefKey::new(src.clone(), r.get::<String, _>(1), r.get::<i32, _>(2) as u32),
                        to: ken_graph::DefKey::new(r.get::<String, _>(3), r.get::<String, _>(4), r.get::<i32, _>(5) as u32),
                        kind: ken_core::RefKind::parse(&r.get::<String, _>(6))
                            .unwrap_or(ken_core::RefKind::Call),
                        path: src,
                        line: r.get::<i32, _>(7) as u32,
                        rule: ken_graph::Rule::parse(&r.get::<String, _>(8))
                            .unwrap_or(ken_graph::Rule::UniqueGlobal),
                        confidence: r.get(9),
                    }
                })
                .collect())
        })
    }

    fn set_ranks(
        &mut self,
        defs: &[(ken_graph::DefKey, f32)],
        files: &[(String, f32)],
    ) -> Result<()> {
        let defs = defs.to_vec();
        let files = files.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            for sql in ["DELETE FROM def_rank WHERE repo = $1", "DELETE FROM file_rank WHERE repo = $1"] {
                sqlx::query(sql).bind(repo).execute(&mut *tx).await?;
            }
            let (p, q, n, r): (Vec<String>, Vec<String>, Vec<i32>, Vec<f32>) = (
                defs.iter().map(|d| d.0.path.clone()).collect(),
                defs.iter().map(|d| d.0.qualname.clone()).collect(),
                defs.iter().map(|d| d.0.nth as i32).collect(),
                defs.iter().map(|d| d.1).collect(),
            );
            sqlx::query(
                "INSERT INTO def_rank(repo, path, qualname, nth, rank)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[], $5::real[])
                 ON CONFLICT (repo, path, qualname, nth) DO UPDATE SET rank = excluded.rank",
            )
            .bind(repo)
            .bind(&p)
            .bind(&q)
            .bind(&n)
            .bind(&r)
            .execute(&mut *tx)
            .await?;
            let (fp, fr): (Vec<String>, Vec<f32>) = files.into_iter().unzip();
            sqlx::query(
                "INSERT INTO file_rank(repo, path, rank) SELECT $1, * FROM unnest($2::text[], $3::real[])
                 ON CONFLICT (repo, path) DO UPDATE SET rank = excluded.rank",
            )
            .bind(repo)
            .bind(&fp)
            .bind(&fr)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn file_ranks(&self) -> Result<HashMap<String, f32>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query("SELECT path, rank FROM file_rank WHERE repo = $1")
                .bind(repo)
                .fetch_all(&pool)
                .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn def_ranks(&self, path: &str) -> Result<Vec<(String, u32, f32)>> {
        let path = pg_text(path);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT qualname, nth, rank FROM def_rank WHERE repo = $1 AND path = $2",
            )
            .bind(repo)
            .bind(&path)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get::<i32, _>(1) as u32, r.get(2)))
                .collect())
        })
    }

    fn graph_index(&self) -> Result<Option<(u64, ken_graph::SymbolIndex)>> {
        self.read(|pool, repo| async move {
            let row = sqlx::query("SELECT graph_seq, graph_index FROM repos WHERE id = $1")
                .bind(repo)
                .fetch_one(&pool)
                .await?;
            let (Some(seq), Some(json)) = (
                row.get::<Option<i64>, _>(0),
                row.get::<Option<String>, _>(1),
            ) else {
                return Ok(None);
            };
            // an unreadable index is as good as none: the graph is rebuilt
            Ok(serde_json::from_str(&json).ok().map(|i| (seq as u64, i)))
        })
    }

    fn save_graph_index(&mut self, seq: u64, index: &ken_graph::SymbolIndex) -> Result<()> {
        let json = serde_json::to_string(index).map_err(other)?;
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            sqlx::query("UPDATE repos SET graph_seq = $2, graph_index = $3 WHERE id = $1")
                .bind(repo)
                .bind(seq as i64)
                .bind(json)
                .execute(&mut *tx)
                .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }
}

impl HistoryStore for PgStore {
    fn commit_stats(&self) -> Result<(u64, Option<i64>)> {
        self.read(|pool, repo| async move {
            let r =
                sqlx::query("SELECT count(*), max(committer_time) FROM commits WHERE repo = $1")
                    .bind(repo)
                    .fetch_one(&pool)
                    .await?;
            Ok((r.get::<i64, _>(0) as u64, r.get(1)))
        })
    }

    fn add_commits(&mut self, commits: &[CommitRecord]) -> Result<usize> {
        let commits = commits.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            let shas: Vec<String> = commits.iter().map(|c| c.sha.clone()).collect();
            let known: HashSet<String> =
                sqlx::query("SELECT sha FROM commits WHERE repo = $1 AND sha = ANY($2)")
                    .bind(repo)
                    .bind(&shas)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
            let mut seen = HashSet::new();
            let new: Vec<&CommitRecord> = commits
                .iter()
                .filter(|c| !known.contains(&c.sha) && seen.insert(c.sha.clone()))
                .collect();
            for c in &new {
                let paths: String = c.files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>().join(" ");
                sqlx::query(
                    "INSERT INTO commits(repo, sha, author_name, author_email, author_time, committer_time,
                                         summary, message, parents, search)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
                             setweight(to_tsvector('english', $8), 'A') || setweight(to_tsvector('simple', $10), 'B'))",
                )
                .bind(repo)
                .bind(&c.sha)
                .bind(&c.author_name)
                .bind(&c.author_email)
                .bind(c.author_time)
                .bind(c.committer_time)
                .bind(&c.summary)
                .bind(&c.message)
                .bind(c.parents.join(" "))
                .bind(paths.replace(['/', '.', '_', '-'], " "))
                .execute(&mut *tx)
                .await?;
                let (p, s, o): (Vec<String>, Vec<String>, Vec<Option<String>>) = (
                    c.files.iter().map(|f| f.0.clone()).collect(),
                    c.files.iter().map(|f| f.1.clone()).collect(),
                    c.files.iter().map(|f| f.2.clone()).collect(),
                );
                sqlx::query(
                    "INSERT INTO commit_files(repo, sha, path, status, old_path)
                     SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::text[])",
                )
                .bind(repo)
                .bind(&c.sha)
                .bind(&p)
                .bind(&s)
                .bind(&o)
                .execute(&mut *tx)
                .await?;
            }
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(new.len())
        })
    }

    fn commits(&self, shas: &[String], with_files: bool) -> Result<HashMap<String, CommitRecord>> {
        let shas = pg_texts(shas);
        self.read(move |pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COMMIT_COLUMNS} FROM commits WHERE repo = $1 AND sha = ANY($2)"
            )))
            .bind(repo)
            .bind(&shas)
            .fetch_all(&pool)
            .await?;
            let mut out: HashMap<String, CommitRecord> =
                rows.iter().map(commit_from_row).map(|c| (c.sha.clone(), c)).collect();
            if with_files {
                let rows = sqlx::query(
                    "SELECT sha, path, status, old_path FROM commit_files WHERE repo = $1 AND sha = ANY($2)",
                )
                .bind(repo)
                .bind(&shas)
                .fetch_all(&pool)
                .await?;
                for r in rows {
                    if let Some(c) = out.get_mut(&r.get::<String, _>(0)) {
                        c.files.push((r.get(1), r.get(2), r.get(3)));
                    }
                }
            }
            Ok(out)
        })
    }

    fn all_commits(&self) -> Result<Vec<CommitRecord>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COMMIT_COLUMNS} FROM commits WHERE repo = $1 ORDER BY committer_time DESC"
            )))
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(commit_from_row).collect())
        })
    }

    fn commit_authors(&self) -> Result<Vec<(String, String)>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT author_name, author_email FROM commits WHERE repo = $1
                 GROUP BY author_name, author_email
                 ORDER BY max(committer_time) DESC, author_name, author_email",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn search_commits(&self, query: &str, limit: usize) -> Result<Vec<(String, f32)>> {
        let words = commit_query_words(query);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        self.read(move |pool, repo| async move {
            let q = words.join(" | ");
            let rows = sqlx::query(
                "SELECT sha, ts_rank(search, query)::float4 AS score
                 FROM commits, (SELECT to_tsquery('english', $2) || to_tsquery('simple', $2) AS query) q
                 WHERE repo = $1 AND search @@ query ORDER BY score DESC, sha LIMIT $3",
            )
            .bind(repo)
            .bind(&q)
            .bind(limit as i64)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn commits_touching(&self, paths: &[String]) -> Result<Vec<(String, String)>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT sha, path FROM commit_files WHERE repo = $1 AND path = ANY($2)",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn blame_needed(&self, files: &[(String, String)]) -> Result<Vec<String>> {
        let files = files.to_vec();
        if self.repo.is_none() {
            return Ok(files.into_iter().map(|f| f.0).collect());
        }
        self.read(|pool, repo| async move {
            let (paths, blobs): (Vec<String>, Vec<String>) = files.into_iter().unzip();
            let rows = sqlx::query(
                "SELECT a.path FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS a(path, blob, n)
                 LEFT JOIN blame_done d ON d.repo = $1 AND d.path = a.path
                 WHERE d.blob_id IS DISTINCT FROM a.blob ORDER BY a.n",
            )
            .bind(repo)
            .bind(&paths)
            .bind(&blobs)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn put_blame(&mut self, items: &[FileBlameRecord]) -> Result<()> {
        let items = items.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            let paths: Vec<String> = items.iter().map(|f| f.path.clone()).collect();
            sqlx::query("DELETE FROM blame WHERE repo = $1 AND path = ANY($2)")
                .bind(repo)
                .bind(&paths)
                .execute(&mut *tx)
                .await?;
            let mut cols: (Vec<String>, Vec<i32>, Vec<i32>, Vec<String>) = Default::default();
            for f in &items {
                for r in &f.ranges {
                    cols.0.push(f.path.clone());
                    cols.1.push(r.start_line as i32);
                    cols.2.push(r.end_line as i32);
                    cols.3.push(r.sha.clone());
                }
            }
            sqlx::query(
                "INSERT INTO blame(repo, path, start_line, end_line, sha)
                 SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::text[])",
            )
            .bind(repo)
            .bind(&cols.0)
            .bind(&cols.1)
            .bind(&cols.2)
            .bind(&cols.3)
            .execute(&mut *tx)
            .await?;
            let blobs: Vec<String> = items.iter().map(|f| f.blob_id.clone()).collect();
            let methods: Vec<String> = items.iter().map(|f| f.method.clone()).collect();
            sqlx::query(
                "INSERT INTO blame_done(repo, path, blob_id, method)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])
                 ON CONFLICT (repo, path) DO UPDATE SET blob_id = excluded.blob_id, method = excluded.method",
            )
            .bind(repo)
            .bind(&paths)
            .bind(&blobs)
            .bind(&methods)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn blame_of(&self, path: &str) -> Result<Vec<BlameLines>> {
        let path = pg_text(path);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT start_line, end_line, sha FROM blame WHERE repo = $1 AND path = $2 ORDER BY start_line",
            )
            .bind(repo)
            .bind(&path)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| BlameLines {
                    start_line: r.get::<i32, _>(0) as u32,
                    end_line: r.get::<i32, _>(1) as u32,
                    sha: r.get(2),
                })
                .collect())
        })
    }

    fn blame_done_of(&self, paths: &[String]) -> Result<HashMap<String, (String, String)>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT path, blob_id, method FROM blame_done WHERE repo = $1 AND path = ANY($2)",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect())
        })
    }

    fn blame_of_paths(&self, paths: &[String]) -> Result<HashMap<String, Vec<BlameLines>>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT path, start_line, end_line, sha FROM blame
                 WHERE repo = $1 AND path = ANY($2) ORDER BY path, start_line",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            let mut out: HashMap<String, Vec<BlameLines>> =
                paths.iter().map(|p| (p.clone(), Vec::new())).collect();
            for r in rows {
                out.entry(r.get(0)).or_default().push(BlameLines {
                    start_line: r.get::<i32, _>(1) as u32,
                    end_line: r.get::<i32, _>(2) as u32,
                    sha: r.get(3),
                });
            }
            Ok(out)
        })
    }

    fn paths_blamed_on(&self, shas: &[String]) -> Result<HashSet<String>> {
        let shas = pg_texts(shas);
        self.read(|pool, repo| async move {
            let rows =
                sqlx::query("SELECT DISTINCT path FROM blame WHERE repo = $1 AND sha = ANY($2)")
                    .bind(repo)
                    .bind(&shas)
                    .fetch_all(&pool)
                    .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }
}

impl VectorStore for PgStore {
    fn vector_keys_present(&self, model: &str, keys: &[String]) -> Result<HashSet<String>> {
        let (model, keys) = (model.to_string(), keys.to_vec());
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT key FROM vector_cache WHERE repo = $1 AND model = $2 AND key = ANY($3)",
            )
            .bind(repo)
            .bind(&model)
            .bind(&keys)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn vector_models(&self) -> Result<Vec<String>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT DISTINCT model FROM vector_cache WHERE repo = $1 ORDER BY model",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn put_vectors(&mut self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        let model = model.to_string();
        let items = items.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            let (keys, vs): (Vec<String>, Vec<Vector>) =
                items.into_iter().map(|(k, v)| (k, Vector::from(v))).unzip();
            sqlx::query(
                "INSERT INTO vector_cache(repo, model, key, v)
                 SELECT $1, $2, * FROM unnest($3::text[], $4::vector[])
                 ON CONFLICT (repo, model, key) DO UPDATE SET v = excluded.v",
            )
            .bind(repo)
            .bind(&model)
            .bind(&keys)
            .bind(&vs)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn get_vectors(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>> {
        let (model, keys) = (model.to_string(), keys.to_vec());
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT key, v FROM vector_cache WHERE repo = $1 AND model = $2 AND key = ANY($3)",
            )
            .bind(repo)
            .bind(&model)
            .bind(&keys)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get::<Vector, _>(1).to_vec()))
                .collect())
        })
    }

    fn index_vectors(
        &mut self,
        model: &str,
        rows: &[(u64, String)],
        chunks: usize,
        batch_seq: u64,
    ) -> Result<VectorMeta> {
        let (model, rows) = (model.to_string(), rows.to_vec());
        self.write(|pool, repo| vectors::index(pool, repo, model, rows, chunks, batch_seq))
    }

    fn vector_meta(&self, model: &str) -> Result<Option<VectorMeta>> {
        let model = model.to_string();
        self.read(|pool, repo| vectors::meta(pool, repo, model))
    }

    fn vector_chunk_ids(&self, model: &str) -> Result<Vec<u64>> {
        let model = model.to_string();
        self.read(|pool, repo| vectors::chunk_ids(pool, repo, model))
    }

    fn search_vectors(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(u64, f32)>> {
        let (model, query, filter) = (model.to_string(), query.to_vec(), filter.clone());
        self.read(|pool, repo| vectors::search(pool, repo, model, query, k, filter))
    }
}

const COMMIT_COLUMNS: &str =
    "sha, author_name, author_email, author_time, committer_time, summary, message, parents";

fn commit_from_row(r: &PgRow) -> CommitRecord {
    CommitRecord {
        sha: r.get(0),
        author_name: r.get(1),
        author_email: r.get(2),
        author_time: r.get(3),
        committer_time: r.get(4),
        summary: r.get(5),
        message: r.get(6),
        parents: r
            .get::<String, _>(7)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        files: Vec::new(),
    }
}

/// One batch, in one transaction: chunk ids reserved from the repository's
/// counter, old rows of every path replaced.
/// A text parameter of a read as stored (NUL as U+001A, see
/// [`without_nul`]): a NUL in a request finds nothing instead of failing.
/// The words of a question the commits' full text is searched for
/// (lowercase, stop words and words with punctuation left out).
pub(super) fn commit_query_words(query: &str) -> Vec<String> {
    ken_core::ident::words(query)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| !ken_core::ident::is_stop_word(w))
        .filter(|w| w.chars().all(|c| c.is_alphanumeric()))
        .collect()
}

pub(super) fn pg_text(s: &str) -> String {
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

async fn write_batch(pool: &PgPool, repo: i64, mut batch: Batch) -> Result<()> {
    without_nul_in(&mut batch);
    let paths: Vec<String> = batch.paths().map(str::to_string).collect();
    let needed = batch.chunk_count() as i64;
    let mut tx = pool.begin().await?;
    // the repository row is locked by this update until commit
    let first: i64 = sqlx::query(
        "UPDATE repos SET next_chunk = next_chunk + $2, batch_seq = batch_seq + 1
         WHERE id = $1 RETURNING next_chunk - $2",
    )
    .bind(repo)
    .bind(needed)
    .fetch_one(&mut *tx)
    .await?
    .get(0);
    delete_paths(&mut tx, repo, &paths, &batch.deletes).await?;
    let rows = BatchRows::of(&batch, first)?;
    rows.insert(&mut tx, repo).await?;
    bump(&mut tx, repo).await?;
    tx.commit().await?;
    Ok(())
}

/// PostgreSQL text holds no NUL: the batch's texts without them.
fn without_nul_in(batch: &mut Batch) {
    for u in &mut batch.upserts {
        if let FileContent::Indexed { text, syntax } = &mut u.content {
            without_nul(text);
            for c in &mut syntax.chunks {
                without_nul(&mut c.text);
                without_nul_opt(&mut c.doc);
                without_nul_opt(&mut c.signature);
            }
            for d in &mut syntax.definitions {
                without_nul_opt(&mut d.signature);
            }
        }
    }
}

/// A batch as the columns its inserts bind (one array per column), with
/// chunk ids from the first one reserved for it on.
#[derive(Default)]
struct BatchRows {
    files: FileRows,
    blobs: (Vec<String>, Vec<String>),
    chunks: ChunkRows,
    symbols: SymbolRows,
    facts: (Vec<String>, Vec<String>),
    postings: Postings,
    /// Whole files for the file index: path, language, text, definitions.
    lex_files: Vec<(String, String, String, String)>,
}

impl BatchRows {
    fn of(batch: &Batch, first: i64) -> Result<BatchRows> {
        let mut rows = BatchRows::default();
        let BatchRows {
            files,
            blobs,
            chunks,
            symbols,
            facts,
            postings,
            lex_files,
        } = &mut rows;
        let mut next = first;
        for u in &batch.upserts {
            files.path.push(u.path.clone());
            files.blob.push(u.id.clone());
            files.language.push(u.language.name().to_string());
            files.size.push(u.size as i64);
            let FileContent::Indexed { text, syntax } = &u.content else {
                if let FileContent::Skipped { reason } = &u.content {
                    files.skip.push(Some(reason.clone()));
                }
                continue;
            };
            files.skip.push(None);
            if !blobs.0.contains(&u.id) {
                blobs.0.push(u.id.clone());
                blobs.1.push(text.clone());
            }
            let ids: Vec<i64> = (next..next + syntax.chunks.len() as i64).collect();
            next += syntax.chunks.len() as i64;
            for (c, id) in syntax.chunks.iter().zip(&ids) {
                chunks.id.push(*id);
                chunks.path.push(u.path.clone());
                chunks.kind.push(c.kind.name().to_string());
                chunks.language.push(c.language.name().to_string());
                chunks.symbol.push(c.symbol.clone());
                chunks.qualname.push(c.qualname.clone());
                chunks.signature.push(c.signature.clone());
                chunks.doc.push(c.doc.clone());
                chunks.start_line.push(c.start_line as i32);
                chunks.end_line.push(c.end_line as i32);
                chunks.start_byte.push(c.start_byte as i32);
                chunks.end_byte.push(c.end_byte as i32);
                chunks.trivial.push(c.trivial);
                chunks.cell.push(c.cell.map(|n| n as i32));
                chunks
                    .content_hash
                    .push(ken_core::content_hash(c.text.as_bytes()));
                chunks.synthetic.push(c.synthetic);
                chunks.text.push(c.text.clone());
                postings.add(
                    *id,
                    [
                        &c.text,
                        c.qualname.as_deref().unwrap_or(""),
                        &u.path,
                        c.doc.as_deref().unwrap_or(""),
                    ],
                );
            }
            if !syntax.definitions.is_empty() || !syntax.references.is_empty() {
                let f = ken_graph::FileFacts::new(
                    u.path.clone(),
                    u.language,
                    syntax.definitions.clone(),
                    syntax.references.clone(),
                );
                facts.0.push(u.path.clone());
                facts.1.push(serde_json::to_string(&f).map_err(other)?);
            }
            let mut seen = HashSet::new();
            for d in &syntax.definitions {
                let Some(home) = crate::embedded::home_chunk(d, &syntax.chunks) else {
                    continue;
                };
                if !seen.insert((d.qualname.as_str(), d.start_line)) {
                    continue;
                }
                symbols.name.push(d.name.clone());
                symbols.folded.push(fold(&d.name));
                symbols.qualname.push(d.qualname.clone());
                symbols.qual_folded.push(fold(&d.qualname));
                symbols.kind.push(d.kind.name().to_string());
                symbols.path.push(u.path.clone());
                symbols.start_line.push(d.start_line as i32);
                symbols.end_line.push(d.end_line as i32);
                symbols.chunk_id.push(ids[home]);
            }
            let names: Vec<&str> = syntax
                .definitions
                .iter()
                .map(|d| d.qualname.as_str())
                .collect();
            lex_files.push((
                u.path.clone(),
                u.language.name().to_string(),
                text.clone(),
                names.join(" "),
            ));
        }
        Ok(rows)
    }

    /// Every row in one statement per table, then the lexical postings.
    async fn insert(self, tx: &mut Transaction<'_, Postgres>, repo: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO files(repo, path, blob_id, language, size, skip)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])",
        )
        .bind(repo)
        .bind(&self.files.path)
        .bind(&self.files.blob)
        .bind(&self.files.language)
        .bind(&self.files.size)
        .bind(&self.files.skip)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "INSERT INTO blobs(repo, id, text) SELECT $1, * FROM unnest($2::text[], $3::text[])
             ON CONFLICT (repo, id) DO NOTHING",
        )
        .bind(repo)
        .bind(&self.blobs.0)
        .bind(&self.blobs.1)
        .execute(&mut **tx)
        .await?;
        let c = &self.chunks;
        sqlx::query(
            "INSERT INTO chunks(repo, id, path, kind, language, symbol, qualname, signature, doc,
                                start_line, end_line, start_byte, end_byte, trivial, cell, content_hash, synthetic, text)
             SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                      $8::text[], $9::text[], $10::int[], $11::int[], $12::int[], $13::int[],
                                      $14::bool[], $15::int[], $16::text[], $17::bool[], $18::text[])",
        )
        .bind(repo)
        .bind(&c.id)
        .bind(&c.path)
        .bind(&c.kind)
        .bind(&c.language)
        .bind(&c.symbol)
        .bind(&c.qualname)
        .bind(&c.signature)
        .bind(&c.doc)
        .bind(&c.start_line)
        .bind(&c.end_line)
        .bind(&c.start_byte)
        .bind(&c.end_byte)
        .bind(&c.trivial)
        .bind(&c.cell)
        .bind(&c.content_hash)
        .bind(&c.synthetic)
        .bind(&c.text)
        .execute(&mut **tx)
        .await?;
        let s = &self.symbols;
        sqlx::query(
            "INSERT INTO symbols(repo, name, folded, qualname, qual_folded, kind, path, start_line, end_line, chunk_id)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                      $8::int[], $9::int[], $10::bigint[])",
        )
        .bind(repo)
        .bind(&s.name)
        .bind(&s.folded)
        .bind(&s.qualname)
        .bind(&s.qual_folded)
        .bind(&s.kind)
        .bind(&s.path)
        .bind(&s.start_line)
        .bind(&s.end_line)
        .bind(&s.chunk_id)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "INSERT INTO facts(repo, path, json) SELECT $1, * FROM unnest($2::text[], $3::text[])",
        )
        .bind(repo)
        .bind(&self.facts.0)
        .bind(&self.facts.1)
        .execute(&mut **tx)
        .await?;
        self.postings.insert(tx, repo, false).await?;
        let mut file_postings = Postings::default();
        for (path, language, text, names) in &self.lex_files {
            let doc: i64 = sqlx::query(
                "INSERT INTO lex_files(repo, path, language) VALUES ($1, $2, $3) RETURNING doc",
            )
            .bind(repo)
            .bind(path)
            .bind(language)
            .fetch_one(&mut **tx)
            .await?
            .get(0);
            file_postings.add(doc, [text, names, path, ""]);
        }
        file_postings.insert(tx, repo, true).await?;
        Ok(())
    }
}

async fn lookup_symbols(
    pool: &PgPool,
    repo: i64,
    ident: &str,
    limit: usize,
    partial: bool,
) -> Result<Vec<SymbolMatch>> {
    let Some(mut look) = crate::symbols::SymbolLookup::new(ident, limit, partial) else {
        return Ok(Vec::new());
    };
    let row = |r: &PgRow| SymbolMatch {
        tier: SymbolTier::Substring,
        name: r.get(0),
        qualname: r.get(1),
        kind: ChunkKind::parse(&r.get::<String, _>(2)).unwrap_or(ChunkKind::Function),
        path: r.get(3),
        start_line: r.get::<i32, _>(4) as u32,
        end_line: r.get::<i32, _>(5) as u32,
        chunk_id: r.get::<i64, _>(6) as u64,
    };
    const COLS: &str = "name, qualname, kind, path, start_line, end_line, chunk_id";
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLS} FROM symbols WHERE repo = $1 AND {} = $2
         ORDER BY ({} = $4) DESC, path, start_line LIMIT $3",
        look.exact_column(),
        look.case_column()
    )))
    .bind(repo)
    .bind(look.exact_key())
    .bind(limit as i64)
    .bind(look.exact_text())
    .fetch_all(pool)
    .await?;
    look.exact(rows.iter().map(row).collect());
    for (tier, pattern) in look.partial_tiers() {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLS} FROM symbols WHERE repo = $1 AND folded LIKE $2
             ORDER BY length(folded), path, start_line LIMIT $3"
        )))
        .bind(repo)
        .bind(&pattern)
        .bind(look.limit() as i64)
        .fetch_all(pool)
        .await?;
        if !look.partial(tier, rows.iter().map(row).collect()) {
            break;
        }
    }
    Ok(look.finish())
}
