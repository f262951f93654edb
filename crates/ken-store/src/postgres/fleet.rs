//! The collection index of a database: its own tables read across every
//! repository. Every repository's files, symbols and commits are already
//! rows of one database, so a question over all of them is one SQL query
//! each (BM25 with the statistics of the whole collection), and there is
//! nothing to keep in step: an update is the stores' own write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sqlx::Row;

use super::Pg;
use super::lexical;
use super::maxscore::{self, COMMIT_MESSAGES, ONE_PASS, WHOLE_FILES};
use super::store::pg_text;
use crate::fleet::{Fleet, FleetCommit, FleetDoc, FleetHit, FleetUpdate, Reflected};
use crate::{LexicalQuery, Result};

pub(crate) struct PgFleet {
    pub pg: Arc<Pg>,
}

/// Each repository id's name (its state's, or its key until it has one).
async fn names(pool: &sqlx::PgPool) -> Result<HashMap<i64, String>> {
    let rows = sqlx::query("SELECT id, coalesce(state->>'name', key) FROM repos")
        .fetch_all(pool)
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Rows of (repository id, path or commit id, score) as hits, named.
async fn hits(pool: &sqlx::PgPool, rows: &[sqlx::postgres::PgRow]) -> Result<Vec<FleetHit>> {
    let names = names(pool).await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let repo: i64 = r.get(0);
            Some(FleetHit {
                repo: names.get(&repo)?.clone(),
                path: r.get(1),
                score: r.get(2),
            })
        })
        .collect())
}

/// The best (document, score)s as hits: `sql` joins `$1` documents and
/// `$2` scores to their (repository id, path or commit id, score).
async fn named(
    pool: &sqlx::PgPool,
    best: Vec<(i64, f32)>,
    sql: &'static str,
) -> Result<Vec<FleetHit>> {
    let (docs, scores): (Vec<i64>, Vec<f32>) = best.into_iter().unzip();
    let rows = sqlx::query(sql)
        .bind(&docs)
        .bind(&scores)
        .fetch_all(pool)
        .await?;
    hits(pool, &rows).await
}

impl Fleet for PgFleet {
    fn reflected(&self) -> Result<BTreeMap<String, Reflected>> {
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let rows = sqlx::query("SELECT coalesce(state->>'name', key), batch_seq FROM repos")
                .fetch_all(&pool)
                .await?;
            Ok(rows
                .iter()
                .map(|r| {
                    let seq: i64 = r.get(1);
                    (
                        r.get::<String, _>(0),
                        Reflected {
                            seq: seq as u64,
                            ..Default::default()
                        },
                    )
                })
                .collect())
        })
    }

    /// Nothing to do: the rows are the repository's own.
    fn update(&self, _: FleetUpdate<'_>, _: &[FleetDoc<'_>], _: &[FleetCommit<'_>]) -> Result<()> {
        Ok(())
    }

    fn remove(&self, _: &str) -> Result<()> {
        Ok(())
    }

    fn search(&self, q: &LexicalQuery) -> Result<Vec<FleetHit>> {
        let languages: Vec<String> = q.languages.iter().map(|l| l.name().to_string()).collect();
        let limit = q.limit.max(1) as i64;
        let q = q.clone();
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let Some((k, df)) = WHOLE_FILES.weigh(&pool, &q).await? else {
                return Ok(Vec::new());
            };
            if languages.is_empty() {
                // the common words' postings skipped where they cannot
                // change the best `limit` (maxscore.rs)
                let (best, _) = maxscore::best(&pool, &WHOLE_FILES, &k, &df, limit, ONE_PASS).await?;
                return named(
                    &pool,
                    best,
                    "SELECT f.repo, f.path, b.score
                     FROM unnest($1::bigint[], $2::float4[]) AS b(doc, score)
                     JOIN lex_files f ON f.doc = b.doc
                     ORDER BY b.score DESC, f.repo, f.path",
                )
                .await;
            }
            let rows = sqlx::query(
                "WITH s AS (
                     SELECT t.repo, t.doc,
                            sum((CASE t.field WHEN 0 THEN k.w0 WHEN 1 THEN k.w1 WHEN 2 THEN k.w2 ELSE k.w3 END)
                                * t.tf / (t.tf + $6 + ($7::float8[])[t.field + 1] * t.len))::float4 AS score
                     FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[])
                          AS k(term, w0, w1, w2, w3)
                     JOIN lex_terms t ON t.term = k.term
                     WHERE t.files AND t.field = ANY($8::smallint[])
                     GROUP BY t.repo, t.doc)
                 SELECT s.repo, f.path, s.score FROM s
                 JOIN lex_files f ON f.repo = s.repo AND f.doc = s.doc
                 WHERE f.language = ANY($9)
                 ORDER BY s.score DESC, s.repo, f.path LIMIT $10",
            )
            .bind(&k.terms)
            .bind(&k.w[0])
            .bind(&k.w[1])
            .bind(&k.w[2])
            .bind(&k.w[3])
            .bind(lexical::K1_FLAT)
            .bind(&k.per_len)
            .bind(&k.live)
            .bind(&languages)
            .bind(limit)
            .fetch_all(&pool)
            .await?;
            hits(&pool, &rows).await
        })
    }

    /// BM25 over every repository's commit messages, with the statistics
    /// of all of them (`commit_terms`, `commit_stats`).
    fn search_commits(&self, q: &LexicalQuery) -> Result<Vec<FleetHit>> {
        let q = q.clone();
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let Some((k, df)) = COMMIT_MESSAGES.weigh(&pool, &q).await? else {
                return Ok(Vec::new());
            };
            let limit = q.limit.max(1) as i64;
            let (best, _) =
                maxscore::best(&pool, &COMMIT_MESSAGES, &k, &df, limit, ONE_PASS).await?;
            named(
                &pool,
                best,
                "SELECT c.repo, c.sha, b.score
                 FROM unnest($1::bigint[], $2::float4[]) AS b(doc, score)
                 JOIN commits c ON c.doc = b.doc
                 ORDER BY b.score DESC, c.repo, c.sha",
            )
            .await
        })
    }

    fn defining(&self, name: &str, limit: usize) -> Result<Vec<FleetHit>> {
        let name = pg_text(name);
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let rows = sqlx::query(
                "SELECT DISTINCT repo, path, 1.0::float4 FROM symbols WHERE name = $1 OR qualname = $1
                 ORDER BY repo, path LIMIT $2",
            )
            .bind(&name)
            .bind(limit.max(1) as i64)
            .fetch_all(&pool)
            .await?;
            hits(&pool, &rows).await
        })
    }
}
