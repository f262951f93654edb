//! The GraphStore of PostgreSQL: facts, edges and ranks.

use std::collections::HashMap;

use sqlx::Row;

use super::super::bump;
use super::*;
use crate::{GraphStore, Result};

/// Columns of the edge rows of a file set, for one `unnest` insert.
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

impl GraphStore for PgStore {
    fn graph_facts(&self, paths: Option<&[String]>) -> Result<Vec<ken_core::FileFacts>> {
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
            let mut by_path: Vec<ken_core::FileFacts> = Vec::with_capacity(rows.len());
            for r in rows {
                by_path.push(serde_json::from_str(&r.get::<String, _>(0)).map_err(other)?);
            }
            // in the order asked, as the embedded store answers
            if let Some(paths) = paths {
                let mut map: HashMap<String, ken_core::FileFacts> =
                    by_path.into_iter().map(|f| (f.path.clone(), f)).collect();
                return Ok(paths.iter().filter_map(|p| map.remove(p)).collect());
            }
            Ok(by_path)
        })
    }

    fn replace_edges(&mut self, paths: Option<&[String]>, edges: &[ken_core::Edge]) -> Result<()> {
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

    fn edges(&self) -> Result<Vec<ken_core::Edge>> {
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
                    ken_core::Edge {
                        from: ken_core::DefKey::new(src.clone(), r.get::<String, _>(1), r.get::<i32, _>(2) as u32),
                        to: ken_core::DefKey::new(r.get::<String, _>(3), r.get::<String, _>(4), r.get::<i32, _>(5) as u32),
                        kind: ken_core::RefKind::parse(&r.get::<String, _>(6))
                            .unwrap_or(ken_core::RefKind::Call),
                        path: src,
                        line: r.get::<i32, _>(7) as u32,
                        rule: ken_core::Rule::parse(&r.get::<String, _>(8))
                            .unwrap_or(ken_core::Rule::UniqueGlobal),
                        confidence: r.get(9),
                    }
                })
                .collect())
        })
    }

    fn set_ranks(
        &mut self,
        defs: &[(ken_core::DefKey, f32)],
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

    fn graph_index(&self) -> Result<Option<(u64, String)>> {
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
            Ok(Some((seq as u64, json)))
        })
    }

    fn save_graph_index(&mut self, seq: u64, index_json: &str) -> Result<()> {
        let json = index_json.to_string();
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
