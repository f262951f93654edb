//! The collection index of a database: its own tables read across every
//! repository. Every repository's files, symbols and commits are already
//! rows of one database, so a question over all of them is one SQL query
//! each (BM25 with the statistics of the whole collection), and there is
//! nothing to keep in step: an update is the stores' own write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sqlx::Row;

use super::Pg;
use super::store::pg_text;
use crate::embedded::lexical::query_terms;
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
        let (terms, term_weights): (Vec<String>, Vec<f32>) = query_terms(&q.text)
            .into_iter()
            .map(|(t, n)| (t, q.weights.term_weight(n)))
            .unzip();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let (fields, ws) = super::lexical::weights(q.weights);
        let languages: Vec<String> = q.languages.iter().map(|l| l.name().to_string()).collect();
        let limit = q.limit.max(1) as i64;
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            // the files' postings of every repository, with the statistics
            // of all of them: one scale
            let rows = sqlx::query(
                "WITH p AS MATERIALIZED (
                     SELECT t.repo, t.doc, t.field, t.term, t.tf, t.len FROM lex_terms t
                     WHERE t.files AND t.term = ANY($1::text[])),
                 w AS (SELECT * FROM unnest($2::smallint[], $3::real[]) AS w(field, weight) WHERE weight > 0),
                 n AS (SELECT field, sum(n)::float8 AS n,
                              greatest(sum(total)::float8 / greatest(sum(n), 1), 1e-9) AS avglen
                       FROM lex_stats WHERE files GROUP BY field),
                 df AS (SELECT field, term, count(*)::float8 AS df FROM p GROUP BY field, term),
                 qt AS (SELECT * FROM unnest($1::text[], $4::real[]) AS qt(term, weight)),
                 s AS (
                     SELECT p.repo, p.doc, sum(w.weight * qt.weight * ln(1 + (n.n - df.df + 0.5) / (df.df + 0.5))
                               * (p.tf * 2.2) / (p.tf + 1.2 * (0.25 + 0.75 * p.len / n.avglen)))::float4 AS score
                     FROM p
                     JOIN w ON w.field = p.field
                     JOIN df ON df.field = p.field AND df.term = p.term
                     JOIN n ON n.field = p.field
                     JOIN qt ON qt.term = p.term
                     GROUP BY p.repo, p.doc)
                 SELECT s.repo, f.path, s.score FROM s
                 JOIN lex_files f ON f.repo = s.repo AND f.doc = s.doc
                 WHERE cardinality($5::text[]) = 0 OR f.language = ANY($5)
                 ORDER BY s.score DESC, s.repo, f.path LIMIT $6",
            )
            .bind(&terms)
            .bind(&fields)
            .bind(&ws)
            .bind(&term_weights)
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
        let (terms, term_weights): (Vec<String>, Vec<f32>) = query_terms(&q.text)
            .into_iter()
            .map(|(t, n)| (t, q.weights.term_weight(n)))
            .unzip();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let limit = q.limit.max(1) as i64;
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let rows = sqlx::query(
                "WITH p AS MATERIALIZED (
                     SELECT t.doc, t.term, t.tf, t.len FROM commit_terms t
                     WHERE t.field = 0 AND t.term = ANY($1::text[])),
                 n AS (SELECT sum(n)::float8 AS n,
                              greatest(sum(total)::float8 / greatest(sum(n), 1), 1e-9) AS avglen
                       FROM commit_stats),
                 df AS (SELECT term, count(*)::float8 AS df FROM p GROUP BY term),
                 qt AS (SELECT * FROM unnest($1::text[], $2::real[]) AS qt(term, weight)),
                 s AS (
                     SELECT p.doc, sum(qt.weight * ln(1 + (n.n - df.df + 0.5) / (df.df + 0.5))
                               * (p.tf * 2.2) / (p.tf + 1.2 * (0.25 + 0.75 * p.len / n.avglen)))::float4 AS score
                     FROM p
                     JOIN df ON df.term = p.term
                     JOIN qt ON qt.term = p.term
                     CROSS JOIN n
                     GROUP BY p.doc ORDER BY score DESC, p.doc LIMIT $3)
                 SELECT c.repo, c.sha, s.score FROM s JOIN commits c ON c.doc = s.doc
                 ORDER BY s.score DESC, c.repo, c.sha",
            )
            .bind(&terms)
            .bind(&term_weights)
            .bind(limit)
            .fetch_all(&pool)
            .await?;
            hits(&pool, &rows).await
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
