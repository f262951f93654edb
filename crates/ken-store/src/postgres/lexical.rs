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

    /// The postings of the documents `fresh` as the database's one copy
    /// of each (`file_terms`, migration 15).
    pub async fn insert_shared(
        &self,
        tx: &mut Transaction<'_, Postgres>,
        fresh: &std::collections::HashSet<i64>,
    ) -> Result<()> {
        let rows: Vec<usize> = (0..self.docs.len())
            .filter(|&i| fresh.contains(&self.docs[i]))
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO file_terms(term, doc, field, tf, len)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::smallint[], $4::int[], $5::int[])",
        )
        .bind(
            rows.iter()
                .map(|&i| self.terms[i].as_str())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|&i| self.docs[i]).collect::<Vec<_>>())
        .bind(rows.iter().map(|&i| self.fields[i]).collect::<Vec<_>>())
        .bind(rows.iter().map(|&i| self.tfs[i]).collect::<Vec<_>>())
        .bind(rows.iter().map(|&i| self.term_lens[i]).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
        Ok(())
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
        // each term's document frequency gains the batch's documents
        // (every posting is one document's, field and term once)
        let (keys, counts) = counted(
            self.terms
                .iter()
                .map(String::as_str)
                .zip(self.fields.iter().copied()),
        );
        let (df_terms, df_fields): (Vec<&str>, Vec<i16>) = keys.into_iter().unzip();
        sqlx::query(
            "INSERT INTO lex_df(repo, files, term, field, df)
             SELECT $1, $2, * FROM unnest($3::text[], $4::smallint[], $5::int[])
             ON CONFLICT (repo, files, term, field) DO UPDATE SET df = lex_df.df + excluded.df",
        )
        .bind(repo)
        .bind(files)
        .bind(&df_terms)
        .bind(&df_fields)
        .bind(&counts)
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
/// the paths each changed, once per commit. A commit's message is also
/// written once per database (`messages`, `message_terms`, migration 14)
/// when no other repository holds that commit yet: the collection scores
/// each message once, however many repositories (copies, forks, followed
/// branches) hold it.
#[derive(Default)]
pub(crate) struct CommitPostings {
    /// Each commit's (document, id), in the order added.
    commits: Vec<(i64, String)>,
    repos: Vec<i64>,
    docs: Vec<i64>,
    fields: Vec<i16>,
    terms: Vec<String>,
    tfs: Vec<i32>,
    lens: Vec<i32>,
    /// Per repository: (messages, their total length).
    stats: std::collections::BTreeMap<i64, (i64, i64)>,
    /// Leave `commit_df` and `messages` alone: migration 9 writes
    /// postings before those tables exist (migrations 11 and 14 fill them
    /// from the postings).
    pub backfill: bool,
}

/// The advisory lock under which writers add documents shared across
/// repositories (commit messages, whole files: shared) and deletions drop
/// the ones no other repository holds (exclusive), so that a shared
/// document is never dropped while a copy of it is being written.
pub(crate) const SHARED_LOCK: i64 = 0x6b65_6e5f_6d73_6773;

/// Take [`SHARED_LOCK`] until the transaction ends.
pub(crate) async fn lock_shared(conn: &mut sqlx::PgConnection, exclusive: bool) -> Result<()> {
    let sql = if exclusive {
        "SELECT pg_advisory_xact_lock($1)"
    } else {
        "SELECT pg_advisory_xact_lock_shared($1)"
    };
    sqlx::query(sql).bind(SHARED_LOCK).execute(conn).await?;
    Ok(())
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
        (doc, sha): (i64, &str),
        message: &str,
        paths: impl IntoIterator<Item = &'a str>,
    ) {
        self.commits.push((doc, sha.to_string()));
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
        if self.backfill {
            return Ok(());
        }
        self.insert_messages(conn).await?;
        // each term's document frequency gains the batch's commits (a
        // commit is never stored twice, nor deleted but with its repository)
        let (keys, counts) = counted(
            (self.repos.iter().copied())
                .zip(self.terms.iter().map(String::as_str))
                .zip(self.fields.iter().copied())
                .map(|((repo, term), field)| (repo, term, field)),
        );
        let df_repos: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let df_terms: Vec<&str> = keys.iter().map(|k| k.1).collect();
        let df_fields: Vec<i16> = keys.iter().map(|k| k.2).collect();
        sqlx::query(
            "INSERT INTO commit_df(repo, term, field, df)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::smallint[], $4::int[])
             ON CONFLICT (repo, term, field) DO UPDATE SET df = commit_df.df + excluded.df",
        )
        .bind(&df_repos)
        .bind(&df_terms)
        .bind(&df_fields)
        .bind(&counts)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    /// The messages of the commits no repository held before, each once
    /// (`messages`: the commit's id and the document number of its first
    /// copy; `message_terms`: field 0's postings under that number).
    async fn insert_messages(&self, conn: &mut sqlx::PgConnection) -> Result<()> {
        if self.commits.is_empty() {
            return Ok(());
        }
        lock_shared(conn, false).await?;
        // in the order of their ids, so that two writers adding the same
        // commits never wait on each other in a cycle
        let mut commits: Vec<&(i64, String)> = self.commits.iter().collect();
        commits.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        let fresh: std::collections::HashSet<i64> = sqlx::query_scalar(
            "INSERT INTO messages(doc, sha)
             SELECT * FROM unnest($1::bigint[], $2::text[])
             ON CONFLICT (sha) DO NOTHING RETURNING doc",
        )
        .bind(commits.iter().map(|c| c.0).collect::<Vec<_>>())
        .bind(commits.iter().map(|c| c.1.as_str()).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .collect();
        let rows: Vec<usize> = (0..self.docs.len())
            .filter(|&i| self.fields[i] == 0 && fresh.contains(&self.docs[i]))
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO message_terms(term, doc, tf, len)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::int[])",
        )
        .bind(
            rows.iter()
                .map(|&i| self.terms[i].as_str())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|&i| self.docs[i]).collect::<Vec<_>>())
        .bind(rows.iter().map(|&i| self.tfs[i]).collect::<Vec<_>>())
        .bind(rows.iter().map(|&i| self.lens[i]).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}

/// How many times each key occurs, keys in order (the order rows are
/// upserted in, so that two writers never wait on each other in a cycle).
fn counted<K: Ord + std::hash::Hash>(keys: impl Iterator<Item = K>) -> (Vec<K>, Vec<i32>) {
    let mut counts: HashMap<K, i32> = HashMap::new();
    for k in keys {
        *counts.entry(k).or_default() += 1;
    }
    let mut counts: Vec<(K, i32)> = counts.into_iter().collect();
    counts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    counts.into_iter().unzip()
}

/// The fields' weights, by the numbers the postings give the fields.
pub(crate) fn weights(w: FieldWeights) -> [f32; 4] {
    [w.body, w.symbol, w.path, w.doc]
}

/// BM25's k1 and b, as tantivy has them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The part of BM25's saturation that does not depend on the length:
/// a posting scores `w · tf / (tf + K1_FLAT + per_len · len)`.
pub(crate) const K1_FLAT: f64 = K1 * (1.0 - B);

/// A question's terms weighed for one collection, field by field, from
/// the document frequencies and field statistics read before scoring.
///
/// Scoring is then one pass over the postings joined to a table as small
/// as the question (see [`search`]). Computing the idf in the same SQL
/// statement as the scores left the planner joining the postings to the
/// question's terms by a nested loop over both (its estimates of the
/// aggregated frequencies are far off): 1.4–2 s for a 2,000-character
/// issue on pytest, against 43–45 ms for the scoring statement this way
/// (its frequencies read beforehand), with the same ranking.
#[derive(Debug)]
pub(crate) struct Weighed {
    /// The terms with a posting in a field that counts.
    pub terms: Vec<String>,
    /// `w[field][i]`: term i's weight in the field: the field's weight ×
    /// the term's weight in the question × its idf × (k1 + 1); 0 where the
    /// field is off or holds no such term.
    pub w: Vec<Vec<f64>>,
    /// Per field: k1 · b / the field's average length.
    pub per_len: Vec<f64>,
    /// The fields whose weight is above 0.
    pub live: Vec<i16>,
}

/// Weigh `terms` (each with its weight in the question) over fields
/// weighted `field_weights` (by number), given each (field, term)'s
/// document frequency and each field's (documents, total length).
pub(crate) fn weigh(
    terms: &[(String, f32)],
    field_weights: &[f32],
    df: &[(i16, String, f64)],
    stats: &[(i16, f64, f64)],
) -> Weighed {
    let fields = field_weights.len();
    let mut n = vec![0.0f64; fields];
    let mut per_len = vec![0.0f64; fields];
    let mut counted = vec![false; fields];
    for &(field, docs, total) in stats {
        let f = field as usize;
        if f < fields {
            counted[f] = true;
            n[f] = docs;
            per_len[f] = K1 * B / (total / docs.max(1.0)).max(1e-9);
        }
    }
    let at: HashMap<&str, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (t.as_str(), i))
        .collect();
    let mut w = vec![vec![0.0f64; terms.len()]; fields];
    for (field, term, df) in df {
        let f = *field as usize;
        let (Some(&i), true) = (at.get(term.as_str()), f < fields) else {
            continue;
        };
        let fw = field_weights[f] as f64;
        // a field without statistics has no documents to score
        if fw <= 0.0 || !counted[f] {
            continue;
        }
        let idf = (1.0 + (n[f] - df + 0.5) / (df + 0.5)).ln();
        w[f][i] = fw * terms[i].1 as f64 * idf * (K1 + 1.0);
    }
    let kept: Vec<usize> = (0..terms.len())
        .filter(|&i| (0..fields).any(|f| w[f][i] != 0.0))
        .collect();
    Weighed {
        terms: kept.iter().map(|&i| terms[i].0.clone()).collect(),
        w: w.iter()
            .map(|col| kept.iter().map(|&i| col[i]).collect())
            .collect(),
        per_len,
        live: (0..fields)
            .filter(|&f| field_weights[f] > 0.0)
            .map(|f| f as i16)
            .collect(),
    }
}

/// The question's terms, each with its weight in the question.
pub(crate) fn weighted_terms(q: &LexicalQuery) -> Vec<(String, f32)> {
    query_terms(&q.text)
        .into_iter()
        .map(|(t, n)| (t, q.weights.term_weight(n)))
        .collect()
}

/// The best documents for `q`: (doc, score). For chunks `doc` is the chunk
/// id; for files, the row of `lex_files` (the caller maps it to a path).
pub(crate) async fn search(
    pool: &sqlx::PgPool,
    repo: i64,
    files: bool,
    q: &LexicalQuery,
) -> Result<Vec<(i64, f32)>> {
    let terms = weighted_terms(q);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = terms.iter().map(|t| t.0.clone()).collect();
    // the statistics first: the document frequencies count every document
    // of the repository, the filters apply to scoring only
    let df: Vec<(i16, String, f64)> = sqlx::query_as(
        "SELECT field, term, df::float8 FROM lex_df
         WHERE repo = $1 AND files = $2 AND term = ANY($3::text[])",
    )
    .bind(repo)
    .bind(files)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    let stats: Vec<(i16, f64, f64)> = sqlx::query_as(
        "SELECT field, n::float8, total::float8 FROM lex_stats WHERE repo = $1 AND files = $2",
    )
    .bind(repo)
    .bind(files)
    .fetch_all(pool)
    .await?;
    let k = weigh(&terms, &weights(q.weights), &df, &stats);
    if k.terms.is_empty() {
        return Ok(Vec::new());
    }
    let languages: Vec<String> = q.languages.iter().map(|l| l.name().to_string()).collect();
    let (table, id) = if files {
        ("lex_files", "doc")
    } else {
        ("chunks", "id")
    };
    let sql = format!(
        "SELECT t.doc, sum((CASE t.field WHEN 0 THEN k.w0 WHEN 1 THEN k.w1 WHEN 2 THEN k.w2 ELSE k.w3 END)
                   * t.tf / (t.tf + $8 + ($9::float8[])[t.field + 1] * t.len))::float4 AS score
         FROM unnest($3::text[], $4::float8[], $5::float8[], $6::float8[], $7::float8[])
              AS k(term, w0, w1, w2, w3)
         JOIN lex_terms t ON t.repo = $1 AND t.files = $2 AND t.term = k.term
         WHERE t.field = ANY($10::smallint[])
           AND (cardinality($11::text[]) = 0
                OR t.doc IN (SELECT {id} FROM {table} WHERE repo = $1 AND language = ANY($11)))
           AND (NOT $13 OR t.doc IN (SELECT {id} FROM {table} WHERE repo = $1 AND path = ANY($12)))
         GROUP BY t.doc ORDER BY score DESC, t.doc LIMIT $14"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(repo)
        .bind(files)
        .bind(&k.terms)
        .bind(&k.w[0])
        .bind(&k.w[1])
        .bind(&k.w[2])
        .bind(&k.w[3])
        .bind(K1_FLAT)
        .bind(&k.per_len)
        .bind(&k.live)
        .bind(&languages)
        .bind(q.paths.clone().unwrap_or_default())
        .bind(q.paths.is_some())
        .bind(q.limit.max(1) as i64)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BM25 as tantivy scores one posting: weight × idf × saturated tf.
    fn textbook(weight: f64, n: f64, df: f64, tf: f64, len: f64, avglen: f64) -> f64 {
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        weight * idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avglen))
    }

    #[test]
    fn weighed_terms_score_a_posting_as_bm25_does() {
        let terms = vec![
            ("alpha".to_string(), 1.0),
            ("beta".to_string(), 2.0),
            ("gone".to_string(), 1.0),
        ];
        let df = vec![
            (0, "alpha".to_string(), 2.0),
            (2, "alpha".to_string(), 1.0),
            (1, "beta".to_string(), 5.0),
            (0, "beta".to_string(), 1.0),
        ];
        let stats = vec![
            (0, 10.0, 100.0),
            (1, 10.0, 20.0),
            (2, 10.0, 30.0),
            (3, 0.0, 0.0),
        ];
        let mut df_doc = df.clone();
        df_doc.push((3, "alpha".to_string(), 1.0));
        let k = weigh(&terms, &[1.0, 0.0, 3.0, 1.0], &df, &stats);
        // a term with no posting in any field is not read at all
        assert_eq!(k.terms, ["alpha", "beta"]);
        assert_eq!(k.live, [0, 2, 3]);
        // the symbol field is off: beta's postings there score nothing
        assert_eq!(k.w[1], [0.0, 0.0]);
        let posting = |f: usize, i: usize, tf: f64, len: f64| {
            k.w[f][i] * tf / (tf + K1_FLAT + k.per_len[f] * len)
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        assert!(close(
            posting(0, 0, 3.0, 12.0),
            textbook(1.0, 10.0, 2.0, 3.0, 12.0, 10.0)
        ));
        assert!(close(
            posting(2, 0, 1.0, 2.0),
            textbook(3.0, 10.0, 1.0, 1.0, 2.0, 3.0)
        ));
        // written twice in the question: its query weight multiplies
        assert!(close(
            posting(0, 1, 1.0, 5.0),
            textbook(2.0, 10.0, 1.0, 1.0, 5.0, 10.0)
        ));
        // a field with no documents scores as if its average length were tiny
        assert_eq!(k.per_len[3], K1 * B / 1e-9);
        // and one without statistics scores nothing
        let k = weigh(&terms, &[1.0, 0.0, 3.0, 1.0], &df_doc, &stats[..3]);
        assert_eq!(k.w[3], [0.0, 0.0]);
        assert!(k.w[0][0] > 0.0);
    }
}
