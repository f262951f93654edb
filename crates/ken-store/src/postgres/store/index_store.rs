//! The IndexStore of PostgreSQL: batches written in one transaction each
//! (chunk ids reserved from the repository's counter, old rows of every
//! path replaced), state, files and the lexical indexes.

use std::collections::{HashMap, HashSet};

use ken_core::Language;
use sqlx::{PgPool, Postgres, Row, Transaction};

use super::super::bump;
use super::super::lexical::Postings;
use super::*;
use crate::symbols::fold;
use crate::{Batch, FileContent, FileRecord, IndexState, IndexStore, Result, Stats};

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
        // each term's document frequency loses the documents that go; a
        // term no document holds any more goes too
        let counted = sqlx::query(
            "WITH gone AS (DELETE FROM lex_terms WHERE repo = $1 AND files = $2 AND doc = ANY($3)
                           RETURNING term, field),
                  g AS (SELECT term, field, count(*)::int AS n FROM gone GROUP BY term, field)
             UPDATE lex_df d SET df = d.df - g.n FROM g
             WHERE d.repo = $1 AND d.files = $2 AND d.term = g.term AND d.field = g.field
             RETURNING d.term, d.field, d.df",
        )
        .bind(repo)
        .bind(files)
        .bind(docs)
        .fetch_all(&mut **tx)
        .await?;
        let (terms, fields): (Vec<String>, Vec<i16>) = counted
            .iter()
            .filter(|r| r.get::<i32, _>(2) <= 0)
            .map(|r| (r.get::<String, _>(0), r.get::<i16, _>(1)))
            .unzip();
        if !terms.is_empty() {
            sqlx::query(
                "DELETE FROM lex_df d USING unnest($3::text[], $4::smallint[]) AS e(term, field)
                 WHERE d.repo = $1 AND d.files = $2 AND d.term = e.term AND d.field = e.field",
            )
            .bind(repo)
            .bind(files)
            .bind(&terms)
            .bind(&fields)
            .execute(&mut **tx)
            .await?;
        }
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
    if !file_docs.is_empty() {
        // the whole files go, and those no other repository holds any
        // more go from the database's one copy of each
        super::super::lexical::lock_shared(tx, true).await?;
        sqlx::query(
            "WITH mine AS (DELETE FROM lex_files WHERE repo = $1 AND path = ANY($2)
                           RETURNING path, blob),
                  gone AS (DELETE FROM shared_files s USING mine
                           WHERE s.path = mine.path AND s.blob = mine.blob
                             AND NOT EXISTS (SELECT 1 FROM lex_files o
                                             WHERE o.path = mine.path AND o.blob = mine.blob
                                               AND o.repo <> $1)
                           RETURNING s.doc)
             DELETE FROM file_terms t USING gone WHERE t.doc = gone.doc",
        )
        .bind(repo)
        .bind(paths)
        .execute(&mut **tx)
        .await?;
    }
    for sql in [
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
        self.written += batch.chunk_count();
        self.write(move |pool, repo| async move { write_batch(&pool, repo, batch).await })
    }

    fn finish(&mut self) -> Result<()> {
        let written = self.written;
        self.write(move |pool, repo| async move {
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
            // into a database that held little is otherwise planned as if
            // the tables were empty until autovacuum comes by (a first eval
            // ran 2.3× slower). Among many repositories one more changes
            // the statistics by little, and ANALYZE reads a sample of every
            // table (a second or more), so it runs only when this writer's
            // chunks are more than a tenth of what the last one counted,
            // autovacuum's own rule. Best effort: it needs the tables' owner.
            if needs_analyze(&pool, written).await {
                let _ = sqlx::query(
                    "ANALYZE lex_terms, lex_df, lex_lens, lex_files, chunks, symbols, files",
                )
                .execute(&pool)
                .await;
            }
            Ok(())
        })
    }
}

/// Are `written` chunks enough to change the planner's statistics: more
/// than a tenth of the rows the last ANALYZE of `chunks` counted, or has
/// it never run?
async fn needs_analyze(pool: &PgPool, written: u64) -> bool {
    let counted: Option<f32> =
        sqlx::query_scalar("SELECT reltuples FROM pg_class WHERE oid = 'chunks'::regclass")
            .fetch_optional(pool)
            .await
            .ok()
            .flatten();
    match counted {
        Some(n) if n >= 0.0 => written as f64 * 10.0 > n as f64,
        _ => true,
    }
}

/// One batch, in one transaction: chunk ids reserved from the repository's
/// counter, old rows of every path replaced.
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
    /// Whole files for the file index: path, language, blob id, text,
    /// definitions.
    lex_files: Vec<(String, String, String, String, String)>,
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
                let f = ken_core::FileFacts::new(
                    u.path.clone(),
                    u.language,
                    syntax.definitions.clone(),
                    syntax.references.clone(),
                )
                .with_values(syntax.values.clone());
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
                u.id.clone(),
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
        if self.lex_files.is_empty() {
            return Ok(());
        }
        // every file's document number in one statement
        let column = |f: fn(&(String, String, String, String, String)) -> &str| {
            self.lex_files.iter().map(f).collect::<Vec<_>>()
        };
        let docs: HashMap<String, i64> = sqlx::query(
            "INSERT INTO lex_files(repo, path, language, blob)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[]) RETURNING path, doc",
        )
        .bind(repo)
        .bind(column(|f| &f.0))
        .bind(column(|f| &f.1))
        .bind(column(|f| &f.2))
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
        let mut file_postings = Postings::default();
        for (path, _, _, text, names) in &self.lex_files {
            file_postings.add(docs[path], [text, names, path, ""]);
        }
        // a file no repository held yet (this blob at this path) becomes
        // the database's one copy of it, in the order of (path, blob) so
        // that two writers of the same files never wait in a cycle
        let mut shared: Vec<(&str, &str, &str, i64)> = self
            .lex_files
            .iter()
            .map(|f| (f.0.as_str(), f.2.as_str(), f.1.as_str(), docs[&f.0]))
            .collect();
        shared.sort_unstable();
        super::super::lexical::lock_shared(tx, false).await?;
        let fresh: HashSet<i64> = sqlx::query_scalar(
            "INSERT INTO shared_files(path, blob, language, doc)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
             ON CONFLICT (path, blob) DO NOTHING RETURNING doc",
        )
        .bind(shared.iter().map(|f| f.0).collect::<Vec<_>>())
        .bind(shared.iter().map(|f| f.1).collect::<Vec<_>>())
        .bind(shared.iter().map(|f| f.2).collect::<Vec<_>>())
        .bind(shared.iter().map(|f| f.3).collect::<Vec<_>>())
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .collect();
        file_postings.insert_shared(tx, &fresh).await?;
        file_postings.insert(tx, repo, true).await?;
        Ok(())
    }
}
