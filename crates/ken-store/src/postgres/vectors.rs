//! Vector search in pgvector: per (repository, model) a *space* (a row of
//! `vector_spaces`) and its own table `vectors_<space id>` of (chunk id,
//! cache key, vector) rows with an HNSW index (cosine). A table per space
//! gives the column its dimension (HNSW needs one) and gives each
//! repository its own graph, so a search never filters another
//! repository's rows out of its candidates.
//!
//! A rebuild is incremental and one transaction: rows no longer wanted are
//! deleted, new ones copied from the vector cache; searches see the old
//! rows or the new ones. A new space's table is filled before its HNSW
//! index is built (much faster than inserting into the graph row by row).

use std::collections::HashSet;

use pgvector::Vector;
use sqlx::{PgPool, Row};

use crate::{ChunkFilter, Result, StoreError, VectorMeta};

/// HNSW candidates per search when a search wants no more rows than this
/// (set on every connection; see `PgProvider::connect`).
pub(crate) const EF_SEARCH: usize = 400;
/// pgvector's ceiling on `hnsw.ef_search`.
const EF_SEARCH_MAX: usize = 1000;

fn table(space: i64) -> String {
    format!("vectors_{space}")
}

/// `(space id, dim)` of `model` in `repo`.
async fn space(pool: &PgPool, repo: i64, model: &str) -> Result<Option<(i64, usize)>> {
    Ok(
        sqlx::query("SELECT id, dim FROM vector_spaces WHERE repo = $1 AND model = $2")
            .bind(repo)
            .bind(model)
            .fetch_optional(pool)
            .await?
            .map(|r| (r.get(0), r.get::<i32, _>(1) as usize)),
    )
}

/// Drop the tables of every space of `repo` (its rows go with the repository).
pub(crate) async fn drop_spaces(conn: &mut sqlx::PgConnection, repo: i64) -> Result<()> {
    let ids: Vec<i64> = sqlx::query("SELECT id FROM vector_spaces WHERE repo = $1")
        .bind(repo)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for id in ids {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP TABLE IF EXISTS {}",
            table(id)
        )))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

pub(crate) async fn index(
    pool: PgPool,
    repo: i64,
    model: String,
    rows: Vec<(u64, String)>,
    chunks: usize,
    batch_seq: u64,
) -> Result<VectorMeta> {
    let mut tx = pool.begin().await?;
    let dim: Option<i32> = sqlx::query(
        "SELECT vector_dims(v) FROM vector_cache WHERE repo = $1 AND model = $2 LIMIT 1",
    )
    .bind(repo)
    .bind(&model)
    .fetch_optional(&mut *tx)
    .await?
    .map(|r| r.get(0));
    let dim = dim.unwrap_or(0).max(0) as usize;
    let mut meta = VectorMeta::built_now(&model, dim, 0, chunks, batch_seq);
    // the space, created with its table when new (or when the model's
    // dimension changed: a new table of the new dimension)
    let found: Option<(i64, i32)> =
        sqlx::query("SELECT id, dim FROM vector_spaces WHERE repo = $1 AND model = $2 FOR UPDATE")
            .bind(repo)
            .bind(&model)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| (r.get(0), r.get(1)));
    let (space, fresh) = match found {
        Some((id, d)) if d as usize == dim => (id, false),
        stale => {
            if let Some((id, _)) = stale {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP TABLE IF EXISTS {}",
                    table(id)
                )))
                .execute(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM vector_spaces WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            let id: i64 = sqlx::query(
                "INSERT INTO vector_spaces(repo, model, dim, meta) VALUES ($1, $2, $3, '{}') RETURNING id",
            )
            .bind(repo)
            .bind(&model)
            .bind(dim as i32)
            .fetch_one(&mut *tx)
            .await?
            .get(0);
            if dim > 0 {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "CREATE TABLE {} (chunk bigint NOT NULL, key text NOT NULL, v vector({dim}) NOT NULL, PRIMARY KEY (chunk, key))",
                    table(id)
                )))
                .execute(&mut *tx)
                .await?;
            }
            (id, true)
        }
    };
    if dim > 0 {
        let t = table(space);
        let (ids, keys): (Vec<i64>, Vec<String>) =
            rows.into_iter().map(|(c, k)| (c as i64, k)).unzip();
        sqlx::query("CREATE TEMP TABLE ken_want (chunk bigint, key text) ON COMMIT DROP")
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO ken_want SELECT * FROM unnest($1::bigint[], $2::text[])")
            .bind(&ids)
            .bind(&keys)
            .execute(&mut *tx)
            .await?;
        if !fresh {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DELETE FROM {t} t WHERE NOT EXISTS
                   (SELECT 1 FROM ken_want w WHERE w.chunk = t.chunk AND w.key = t.key)"
            )))
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO {t}(chunk, key, v)
             SELECT w.chunk, w.key, c.v FROM ken_want w
             JOIN vector_cache c ON c.repo = $1 AND c.model = $2 AND c.key = w.key
             WHERE vector_dims(c.v) = $3
             ON CONFLICT (chunk, key) DO NOTHING"
        )))
        .bind(repo)
        .bind(&model)
        .bind(dim as i32)
        .execute(&mut *tx)
        .await?;
        if fresh {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "CREATE INDEX ON {t} USING hnsw (v vector_cosine_ops)"
            )))
            .execute(&mut *tx)
            .await?;
        }
        let held: i64 = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {t}")))
            .fetch_one(&mut *tx)
            .await?
            .get(0);
        meta.rows = held as usize;
    }
    let json = serde_json::to_string(&meta).map_err(|e| StoreError::Other(e.to_string()))?;
    sqlx::query("UPDATE vector_spaces SET meta = $2 WHERE id = $1")
        .bind(space)
        .bind(&json)
        .execute(&mut *tx)
        .await?;
    super::bump(&mut tx, repo).await?;
    tx.commit().await?;
    Ok(meta)
}

pub(crate) async fn meta(pool: PgPool, repo: i64, model: String) -> Result<Option<VectorMeta>> {
    let json: Option<String> =
        sqlx::query("SELECT meta FROM vector_spaces WHERE repo = $1 AND model = $2")
            .bind(repo)
            .bind(&model)
            .fetch_optional(&pool)
            .await?
            .map(|r| r.get(0));
    json.map(|j| serde_json::from_str(&j).map_err(|e| StoreError::Other(e.to_string())))
        .transpose()
}

pub(crate) async fn chunk_ids(pool: PgPool, repo: i64, model: String) -> Result<Vec<u64>> {
    let Some((space, dim)) = space(&pool, repo, &model).await? else {
        return Ok(Vec::new());
    };
    if dim == 0 {
        return Ok(Vec::new());
    }
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT DISTINCT chunk FROM {} ORDER BY chunk",
        table(space)
    )))
    .fetch_all(&pool)
    .await?;
    Ok(rows.iter().map(|r| r.get::<i64, _>(0) as u64).collect())
}

/// Unfiltered: a walk of the HNSW graph. Filtered: an exact scan of the
/// rows the filter lets through (pgvector 0.6 filters after the graph walk,
/// which leaves a narrow filter with few or no hits).
pub(crate) async fn search(
    pool: PgPool,
    repo: i64,
    model: String,
    query: Vec<f32>,
    k: usize,
    filter: ChunkFilter,
) -> Result<Vec<(u64, f32)>> {
    let Some((space, dim)) = space(&pool, repo, &model).await? else {
        return Ok(Vec::new());
    };
    if dim == 0 || k == 0 {
        return Ok(Vec::new());
    }
    if query.len() != dim {
        return Err(StoreError::Other(format!(
            "a query vector of {} dimensions for an index of {dim} ({model})",
            query.len()
        )));
    }
    // a long chunk has several rows: ask for more, keep each chunk's best
    let want = k.saturating_mul(2).min(EF_SEARCH_MAX);
    let sql = format!(
        "SELECT chunk, (1 - (v <=> $1))::real FROM {} ORDER BY v <=> $1 LIMIT $2",
        table(space)
    );
    let q = Vector::from(query);
    let rows = if !filter.is_all() {
        let languages: Vec<String> = filter
            .languages
            .iter()
            .map(|l| l.name().to_string())
            .collect();
        // exact, and each chunk by its best row
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT v.chunk, max(1 - (v.v <=> $1))::real AS s FROM {} v
             WHERE v.chunk IN (SELECT id FROM chunks WHERE repo = $3
                               AND (cardinality($4::text[]) = 0 OR language = ANY($4))
                               AND (NOT $6 OR path = ANY($5)))
             GROUP BY v.chunk ORDER BY s DESC, v.chunk LIMIT $2",
            table(space)
        )))
        .bind(&q)
        .bind(k as i64)
        .bind(repo)
        .bind(&languages)
        .bind(filter.paths.clone().unwrap_or_default())
        .bind(filter.paths.is_some())
        .fetch_all(&pool)
        .await?
    } else if want <= EF_SEARCH {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&q)
            .bind(want as i64)
            .fetch_all(&pool)
            .await?
    } else {
        // HNSW returns at most ef_search rows
        let mut tx = pool.begin().await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SET LOCAL hnsw.ef_search = {want}"
        )))
        .execute(&mut *tx)
        .await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&q)
            .bind(want as i64)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        rows
    };
    let mut seen = HashSet::new();
    Ok(rows
        .iter()
        .map(|r| (r.get::<i64, _>(0) as u64, r.get::<f32, _>(1)))
        .filter(|(id, _)| seen.insert(*id))
        .take(k)
        .collect())
}
