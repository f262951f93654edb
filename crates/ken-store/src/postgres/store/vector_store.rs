//! The VectorStore of PostgreSQL: vector spaces per model (vectors.rs).

use std::collections::{HashMap, HashSet};

use pgvector::Vector;
use sqlx::Row;

use super::super::bump;
use super::super::vectors;
use super::*;
use crate::{ChunkFilter, Result, VectorMeta, VectorStore};

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
