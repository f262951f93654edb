//! BM25 in SQL. At write time each document's fields are analyzed with the
//! same identifier-aware analyzer the embedded store gives tantivy, and the
//! term frequencies and field lengths are stored; a query sums, per
//! document, weight × idf × tf-saturation over its terms and fields, as
//! tantivy's boosted BooleanQuery does (k1 = 1.2, b = 0.75).

use std::collections::HashMap;

use sqlx::{Postgres, Row, Transaction};

use crate::embedded::lexical::query_terms;
use crate::tokenizer;
use crate::{FieldWeights, LexicalQuery, Result};

/// A text's terms as the analyzer gives them, each with its count, and
/// their number (the field's length for BM25).
fn term_counts(text: &str) -> (HashMap<String, i32>, i32) {
    let mut counts: HashMap<String, i32> = HashMap::new();
    let mut len = 0;
    for t in tokenizer::query_terms(text) {
        *counts.entry(t).or_default() += 1;
        len += 1;
    }
    (counts, len)
}

/// Postings and lengths of a batch's documents, as columns for `unnest`.
#[derive(Default)]
pub(crate) struct Postings {
    docs: Vec<i64>,
    fields: Vec<i16>,
    terms: Vec<String>,
    tfs: Vec<i32>,
    /// The length of each posting's field.
    term_lens: Vec<i32>,
    len_docs: Vec<i64>,
    len_fields: Vec<i16>,
    lens: Vec<i32>,
}

impl Postings {
    /// Add one document: body, symbol, path, doc.
    pub fn add(&mut self, doc: i64, fields: [&str; 4]) {
        for (field, text) in fields.iter().enumerate() {
            let (counts, len) = term_counts(text);
            for (term, tf) in counts {
                self.docs.push(doc);
                self.fields.push(field as i16);
                self.terms.push(term);
                self.tfs.push(tf);
                self.term_lens.push(len);
            }
            self.len_docs.push(doc);
            self.len_fields.push(field as i16);
            self.lens.push(len);
        }
    }

    pub async fn insert(
        self,
        tx: &mut Transaction<'_, Postgres>,
        repo: i64,
        files: bool,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO lex_terms(repo, files, doc, field, term, tf, len)
             SELECT $1, $2, * FROM unnest($3::bigint[], $4::smallint[], $5::text[], $6::int[], $7::int[])",
        )
        .bind(repo)
        .bind(files)
        .bind(&self.docs)
        .bind(&self.fields)
        .bind(&self.terms)
        .bind(&self.tfs)
        .bind(&self.term_lens)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "INSERT INTO lex_lens(repo, files, doc, field, len)
             SELECT $1, $2, * FROM unnest($3::bigint[], $4::smallint[], $5::int[])",
        )
        .bind(repo)
        .bind(files)
        .bind(&self.len_docs)
        .bind(&self.len_fields)
        .bind(&self.lens)
        .execute(&mut **tx)
        .await?;
        // the BM25 statistics gain what comes (what goes was taken off
        // when it was deleted): no batch recounts the repository
        let mut per_field: std::collections::BTreeMap<i16, (i64, i64)> = Default::default();
        for (field, len) in self.len_fields.iter().zip(&self.lens) {
            let e = per_field.entry(*field).or_default();
            e.0 += 1;
            e.1 += *len as i64;
        }
        let fields: Vec<i16> = per_field.keys().copied().collect();
        let ns: Vec<i64> = per_field.values().map(|v| v.0).collect();
        let totals: Vec<i64> = per_field.values().map(|v| v.1).collect();
        sqlx::query(
            "INSERT INTO lex_stats(repo, files, field, n, total)
             SELECT $1, $2, * FROM unnest($3::smallint[], $4::bigint[], $5::bigint[])
             ON CONFLICT (repo, files, field)
             DO UPDATE SET n = lex_stats.n + excluded.n, total = lex_stats.total + excluded.total",
        )
        .bind(repo)
        .bind(files)
        .bind(&fields)
        .bind(&ns)
        .bind(&totals)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

/// What a commit message is searched by: its full text, or its summary
/// when it has no more (as the embedded collection indexes it).
pub(crate) fn commit_text<'a>(summary: &'a str, message: &'a str) -> &'a str {
    if message.is_empty() { summary } else { message }
}

/// The postings of commits (`commit_terms`): field 0 their messages'
/// terms, so the commits of every repository are scored with BM25 over
/// the statistics of all of them, as the files are; field 1 the words of
/// the paths each changed, once per commit.
#[derive(Default)]
pub(crate) struct CommitPostings {
    repos: Vec<i64>,
    docs: Vec<i64>,
    fields: Vec<i16>,
    terms: Vec<String>,
    tfs: Vec<i32>,
    lens: Vec<i32>,
    /// Per repository: (messages, their total length).
    stats: std::collections::BTreeMap<i64, (i64, i64)>,
}

/// The words of a path as commit search matches them: split at every
/// character that is not a letter or digit, lowercased (`src/flask/app.py`:
/// src, flask, app, py).
pub(crate) fn path_words(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl CommitPostings {
    pub fn add<'a>(
        &mut self,
        repo: i64,
        doc: i64,
        message: &str,
        paths: impl IntoIterator<Item = &'a str>,
    ) {
        let (counts, len) = term_counts(message);
        let mut push = |field: i16, term: String, tf: i32, len: i32| {
            self.repos.push(repo);
            self.docs.push(doc);
            self.fields.push(field);
            self.terms.push(term);
            self.tfs.push(tf);
            self.lens.push(len);
        };
        for (term, tf) in counts {
            push(0, term, tf, len);
        }
        let words: std::collections::BTreeSet<String> =
            paths.into_iter().flat_map(path_words).collect();
        for w in words {
            push(1, w, 1, 0);
        }
        let s = self.stats.entry(repo).or_default();
        s.0 += 1;
        s.1 += len as i64;
    }

    pub async fn insert(self, conn: &mut sqlx::PgConnection) -> Result<()> {
        sqlx::query(
            "INSERT INTO commit_terms(repo, doc, field, term, tf, len)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::text[], $5::int[], $6::int[])",
        )
        .bind(&self.repos)
        .bind(&self.docs)
        .bind(&self.fields)
        .bind(&self.terms)
        .bind(&self.tfs)
        .bind(&self.lens)
        .execute(&mut *conn)
        .await?;
        let repos: Vec<i64> = self.stats.keys().copied().collect();
        let ns: Vec<i64> = self.stats.values().map(|v| v.0).collect();
        let totals: Vec<i64> = self.stats.values().map(|v| v.1).collect();
        sqlx::query(
            "INSERT INTO commit_stats(repo, n, total)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])
             ON CONFLICT (repo)
             DO UPDATE SET n = commit_stats.n + excluded.n, total = commit_stats.total + excluded.total",
        )
        .bind(&repos)
        .bind(&ns)
        .bind(&totals)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}

/// The fields' numbers and weights, as the postings number them.
pub(crate) fn weights(w: FieldWeights) -> (Vec<i16>, Vec<f32>) {
    (vec![0, 1, 2, 3], vec![w.body, w.symbol, w.path, w.doc])
}

/// The best documents for `q`: (doc, score). For chunks `doc` is the chunk
/// id; for files, the row of `lex_files` (the caller maps it to a path).
pub(crate) async fn search(
    pool: &sqlx::PgPool,
    repo: i64,
    files: bool,
    q: &LexicalQuery,
) -> Result<Vec<(i64, f32)>> {
    let (terms, term_weights): (Vec<String>, Vec<f32>) = query_terms(&q.text)
        .into_iter()
        .map(|(t, n)| (t, q.weights.term_weight(n)))
        .unzip();
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let (fields, ws) = weights(q.weights);
    let languages: Vec<String> = q.languages.iter().map(|l| l.name().to_string()).collect();
    let (table, id) = if files {
        ("lex_files", "doc")
    } else {
        ("chunks", "id")
    };
    let filter = format!(
        " AND (cardinality($7::text[]) = 0
               OR p.doc IN (SELECT {id} FROM {table} WHERE repo = $1 AND language = ANY($7)))
          AND (NOT $9 OR p.doc IN (SELECT {id} FROM {table} WHERE repo = $1 AND path = ANY($8)))"
    );
    // the query terms' postings, read once from the covering index; the
    // document frequencies count all of them, the filters apply to scoring
    let sql = format!(
        "WITH p AS MATERIALIZED (
             SELECT t.doc, t.field, t.term, t.tf, t.len FROM lex_terms t
             WHERE t.repo = $1 AND t.files = $2 AND t.term = ANY($3::text[])),
         w AS (SELECT * FROM unnest($4::smallint[], $5::real[]) AS w(field, weight) WHERE weight > 0),
         n AS (SELECT field, n::float8 AS n, greatest(total::float8 / greatest(n, 1), 1e-9) AS avglen
               FROM lex_stats WHERE repo = $1 AND files = $2),
         df AS (SELECT field, term, count(*)::float8 AS df FROM p GROUP BY field, term),
         qt AS (SELECT * FROM unnest($3::text[], $10::real[]) AS qt(term, weight))
         SELECT p.doc, sum(w.weight * qt.weight * ln(1 + (n.n - df.df + 0.5) / (df.df + 0.5))
                   * (p.tf * 2.2) / (p.tf + 1.2 * (0.25 + 0.75 * p.len / n.avglen)))::float4 AS score
         FROM p
         JOIN w ON w.field = p.field
         JOIN df ON df.field = p.field AND df.term = p.term
         JOIN n ON n.field = p.field
         JOIN qt ON qt.term = p.term
         WHERE true {filter}
         GROUP BY p.doc ORDER BY score DESC, p.doc LIMIT $6"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(repo)
        .bind(files)
        .bind(&terms)
        .bind(&fields)
        .bind(&ws)
        .bind(q.limit.max(1) as i64)
        .bind(&languages)
        .bind(q.paths.clone().unwrap_or_default())
        .bind(q.paths.is_some())
        .bind(&term_weights)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}
