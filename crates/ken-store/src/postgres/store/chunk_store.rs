//! The ChunkStore of PostgreSQL: chunks, symbols, lexical search.

use std::collections::HashMap;

use ken_core::ChunkKind;
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use super::super::lexical::{self};
use super::*;
use crate::{
    ChunkStore, FileHit, LexicalHit, LexicalQuery, Result, StoredChunk, SymbolMatch, SymbolTier,
};

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
