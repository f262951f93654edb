//! The ChunkStore of PostgreSQL: chunks, symbols, lexical search.

use std::collections::HashMap;

use ken_core::ChunkKind;
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use super::super::lexical::{self};
use super::*;
use crate::symbols::SymbolLookup;
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
        let looks: Vec<Option<SymbolLookup>> = idents
            .iter()
            .map(|(i, partial)| SymbolLookup::new(&pg_text(i), limit, *partial))
            .collect();
        self.read(move |pool, repo| async move {
            let mut looks = looks;
            // the exact tier of every identifier in one statement per
            // column; then the partial tiers of those still short, each on
            // its own connection
            exact_tiers(&pool, repo, &mut looks).await?;
            let mut set = tokio::task::JoinSet::new();
            let n = looks.len();
            let mut out = vec![Vec::new(); n];
            for (i, look) in looks.into_iter().enumerate() {
                let Some(look) = look else { continue };
                if look.partial_tiers().is_empty() {
                    out[i] = look.finish();
                    continue;
                }
                let pool = pool.clone();
                set.spawn(async move { (i, partial_tiers(&pool, repo, look).await) });
            }
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

const SYMBOL_COLUMNS: &str = "name, qualname, kind, path, start_line, end_line, chunk_id";

/// A row of [`SYMBOL_COLUMNS`] as a match (its tier is set by the lookup).
fn symbol_row(r: &PgRow, at: usize) -> SymbolMatch {
    SymbolMatch {
        tier: SymbolTier::Substring,
        name: r.get(at),
        qualname: r.get(at + 1),
        kind: ChunkKind::parse(&r.get::<String, _>(at + 2)).unwrap_or(ChunkKind::Function),
        path: r.get(at + 3),
        start_line: r.get::<i32, _>(at + 4) as u32,
        end_line: r.get::<i32, _>(at + 5) as u32,
        chunk_id: r.get::<i64, _>(at + 6) as u64,
    }
}

async fn lookup_symbols(
    pool: &PgPool,
    repo: i64,
    ident: &str,
    limit: usize,
    partial: bool,
) -> Result<Vec<SymbolMatch>> {
    let mut looks = vec![SymbolLookup::new(ident, limit, partial)];
    exact_tiers(pool, repo, &mut looks).await?;
    match looks.pop().flatten() {
        Some(look) => partial_tiers(pool, repo, look).await,
        None => Ok(Vec::new()),
    }
}

/// The exact tier of every lookup: one statement for the plain names and
/// one for the qualified ones, each lookup's best `limit` rows (case-exact
/// first, so that a crowd of folded matches cannot push the one exact
/// match past the limit).
async fn exact_tiers(pool: &PgPool, repo: i64, looks: &mut [Option<SymbolLookup>]) -> Result<()> {
    for qualified in [false, true] {
        let (mut asked, mut keys, mut texts, mut limits) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut column, mut case) = ("", "");
        for (i, look) in looks.iter().enumerate() {
            let Some(l) = look.as_ref().filter(|l| l.qualified() == qualified) else {
                continue;
            };
            (column, case) = (l.exact_column(), l.case_column());
            asked.push(i);
            keys.push(l.exact_key());
            texts.push(l.exact_text().to_string());
            limits.push(l.limit() as i64);
        }
        if asked.is_empty() {
            continue;
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT a.n, s.* FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY
                 AS a(key, exact, lim, n)
             JOIN LATERAL (SELECT {SYMBOL_COLUMNS} FROM symbols WHERE repo = $1 AND {column} = a.key
                           ORDER BY ({case} = a.exact) DESC, path, start_line LIMIT a.lim) s ON true
             ORDER BY a.n, (s.{case} = a.exact) DESC, s.path, s.start_line"
        )))
        .bind(repo)
        .bind(&keys)
        .bind(&texts)
        .bind(&limits)
        .fetch_all(pool)
        .await?;
        let mut found: Vec<Vec<SymbolMatch>> = vec![Vec::new(); asked.len()];
        for r in &rows {
            let n: i64 = r.get(0);
            found[n as usize - 1].push(symbol_row(r, 1));
        }
        for (&i, rows) in asked.iter().zip(found) {
            if let Some(look) = looks[i].as_mut() {
                look.exact(rows);
            }
        }
    }
    Ok(())
}

/// The prefix and substring tiers a lookup still needs, in order, until
/// it has its limit.
async fn partial_tiers(
    pool: &PgPool,
    repo: i64,
    mut look: SymbolLookup,
) -> Result<Vec<SymbolMatch>> {
    for (tier, pattern) in look.partial_tiers() {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {SYMBOL_COLUMNS} FROM symbols WHERE repo = $1 AND folded LIKE $2
             ORDER BY length(folded), path, start_line LIMIT $3"
        )))
        .bind(repo)
        .bind(&pattern)
        .bind(look.limit() as i64)
        .fetch_all(pool)
        .await?;
        if !look.partial(tier, rows.iter().map(|r| symbol_row(r, 0)).collect()) {
            break;
        }
    }
    Ok(look.finish())
}
