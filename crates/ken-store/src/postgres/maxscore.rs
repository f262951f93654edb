//! The best documents of every repository for a question, exactly as one
//! pass over every posting ranks them, without reading every posting of
//! its common words (MaxScore, in two SQL statements). The collection's
//! two searches use it: commit messages (`message_terms`, each message once
//! however many repositories hold its commit) and whole files
//! (`file_terms`, each file once), each through a [`Postings`].
//!
//! A posting scores `w · tf / (tf + K1_FLAT + per_len · len)`, which is
//! below `w`: a term can add at most its weights (one per field it may be
//! found in) to a document. So once some `limit` documents are known to
//! score at least θ, a document that holds only terms whose weights sum
//! below θ cannot be among the best, and those terms' postings need not be
//! read, except to finish the score of a document found through another
//! term (an index probe by term and document: `message_terms_docs`,
//! migration 14, and `file_terms_docs`, migration 15).
//!
//! 1. **A bound.** The rarest terms, just enough of them to hold `limit`
//!    documents, are scored; their best `limit` documents get their whole
//!    score (probes for the other terms). The lowest of those scores is θ,
//!    a lower bound of the `limit`-th best score overall.
//! 2. **The pass.** The terms sorted by weight, heaviest first, are split
//!    where the weights left (`rest`) sum below θ. Only the postings of
//!    the heavy terms are read; a document whose heavy part plus `rest`
//!    stays below θ is dropped; the others get their whole score.
//!
//! Common words of a question over hundreds of repositories (fix, add,
//! test: a fifth of all messages each) are the bulk of its postings and
//! the smallest weights, so most of what one pass would read is skipped.

use std::collections::HashMap;

use super::lexical::{self, K1_FLAT, Weighed, weigh, weighted_terms};
use crate::{LexicalQuery, Result};

/// Questions whose terms have fewer postings than this are scored in one
/// pass: two statements would cost more than they skip.
pub(crate) const ONE_PASS: f64 = 20_000.0;

/// A table of postings the collection searches: `t`'s rows that count,
/// each a (term, doc, field, tf, len) of a document numbered across every
/// repository.
pub(crate) struct Postings {
    /// The table, as `t`.
    table: &'static str,
    /// The rows that count, written as the predicate of the partial index
    /// that serves them (by term, and by term and document).
    rows: &'static str,
    /// What a posting of `t` adds for a term of `k` (weights `w0`–`w3` by
    /// field): `$11` is `K1_FLAT`, `$12` each field's `per_len`. It reads
    /// only the columns the index holds, so the index alone answers.
    score: &'static str,
    /// Each (field, term)'s document frequency, summed over repositories,
    /// for the terms `$1`.
    df: &'static str,
    /// Each field's (documents, total length), summed over repositories.
    stats: &'static str,
    /// The fields' weights for a question.
    fields: fn(&LexicalQuery) -> Vec<f32>,
}

/// Commit messages, each once however many repositories hold its commit
/// (`message_terms`, migration 14), with the statistics of every copy.
pub(crate) const COMMIT_MESSAGES: Postings = Postings {
    table: "message_terms t",
    rows: "true",
    score: "k.w0 * t.tf / (t.tf + $11 + ($12::float8[])[1] * t.len)",
    df: "SELECT 0::int2, term, sum(df)::float8 FROM commit_df
         WHERE field = 0 AND term = ANY($1::text[]) GROUP BY term",
    stats: "SELECT 0::int2, coalesce(sum(n), 0)::float8, coalesce(sum(total), 0)::float8
            FROM commit_stats",
    fields: |_| vec![1.0],
};

/// Whole files, each once however many repositories hold the same blob
/// at the same path (`file_terms`, migration 15), in the fields that count
/// (`$13`), with the statistics of every copy.
pub(crate) const WHOLE_FILES: Postings = Postings {
    table: "file_terms t",
    rows: "t.field = ANY($13::int2[])",
    score: "(CASE t.field WHEN 0 THEN k.w0 WHEN 1 THEN k.w1 WHEN 2 THEN k.w2 ELSE k.w3 END)
            * t.tf / (t.tf + $11 + ($12::float8[])[t.field + 1] * t.len)",
    df: "SELECT field, term, sum(df)::float8 FROM lex_df
         WHERE files AND term = ANY($1::text[]) GROUP BY field, term",
    stats: "SELECT field, sum(n)::float8, sum(total)::float8 FROM lex_stats
            WHERE files GROUP BY field",
    fields: |q| lexical::weights(q.weights).to_vec(),
};

impl Postings {
    /// `q`'s terms weighed over every repository's postings (the summed
    /// frequencies and statistics), with each term's document frequency;
    /// None when no term is in any document. The frequencies are read
    /// first, see `lexical::Weighed`.
    pub(crate) async fn weigh(
        &self,
        pool: &sqlx::PgPool,
        q: &LexicalQuery,
    ) -> Result<Option<(Weighed, HashMap<String, f64>)>> {
        let terms = weighted_terms(q);
        if terms.is_empty() {
            return Ok(None);
        }
        let words: Vec<String> = terms.iter().map(|t| t.0.clone()).collect();
        let df: Vec<(i16, String, f64)> =
            sqlx::query_as(self.df).bind(&words).fetch_all(pool).await?;
        let stats: Vec<(i16, f64, f64)> = sqlx::query_as(self.stats).fetch_all(pool).await?;
        let k = weigh(&terms, &(self.fields)(q), &df, &stats);
        if k.terms.is_empty() {
            return Ok(None);
        }
        Ok(Some((k, documents(&df))))
    }

    /// Each document's score over the heavy terms (`$1`, weights
    /// `$2`–`$5`), rounded to float4 when `float4` (as the final scores are).
    fn partial(&self, float4: bool) -> String {
        let cast = if float4 { "::float4" } else { "" };
        format!(
            "SELECT t.doc, sum({score}){cast} AS part
             FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[])
                  AS k(term, w0, w1, w2, w3)
             JOIN {table} ON t.term = k.term AND {rows}
             GROUP BY t.doc",
            score = self.score,
            table = self.table,
            rows = self.rows
        )
    }

    /// What the light terms (`$6`, weights `$7`–`$10`) add to document
    /// `doc`, looked up by term and document.
    fn light_part(&self, doc: &str) -> String {
        format!(
            "coalesce((SELECT sum({score})
             FROM unnest($6::text[], $7::float8[], $8::float8[], $9::float8[], $10::float8[])
                  AS k(term, w0, w1, w2, w3)
             JOIN {table} ON t.term = k.term AND {rows} AND t.doc = {doc}), 0)",
            score = self.score,
            table = self.table,
            rows = self.rows
        )
    }

    /// The best `$14` documents of the heavy terms, scored whole.
    fn bound_sql(&self) -> String {
        format!(
            "WITH p AS ({partial} ORDER BY part DESC, t.doc LIMIT $14)
             SELECT p.doc, p.part + {light} FROM p",
            partial = self.partial(false),
            light = self.light_part("p.doc")
        )
    }

    /// The heavy terms' documents that may still reach θ (`$16`, with the
    /// skipped weights `$15`), scored whole: the best `$14`.
    fn pass_sql(&self) -> String {
        format!(
            "WITH p AS ({partial}),
             c AS (SELECT doc, part FROM p WHERE part + $15 >= $16),
             s AS (SELECT c.doc, c.part + {light} AS score FROM c)
             SELECT doc, score::float4 FROM s ORDER BY score::float4 DESC, doc LIMIT $14",
            partial = self.partial(false),
            light = self.light_part("c.doc")
        )
    }

    /// Every posting of every term (all heavy), scored in one pass.
    fn one_pass_sql(&self) -> String {
        format!(
            "{partial} ORDER BY part DESC, t.doc LIMIT $14",
            partial = self.partial(true)
        )
    }
}

/// Each term's documents: the most of any field's (a document may hold a
/// term in several fields, so the sum would count it twice).
fn documents(df: &[(i16, String, f64)]) -> HashMap<String, f64> {
    let mut out: HashMap<String, f64> = HashMap::new();
    for (_, term, n) in df {
        let e = out.entry(term.clone()).or_default();
        *e = e.max(*n);
    }
    out
}

/// What a skipped document stays below θ by, relatively: more than a
/// float4's rounding, so that no skipped document ties the last one kept
/// once scores are rounded to float4 (as one pass ranks them).
const MARGIN: f64 = 1e-6;

/// The most term `i` can add to a document: its weights in every field.
fn upper(k: &Weighed, i: usize) -> f64 {
    k.w.iter().map(|col| col[i]).sum()
}

/// The order in which terms are taken: heaviest (rarest) first.
fn by_weight(k: &Weighed, df: &HashMap<String, f64>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..k.terms.len()).collect();
    let df_of = |i: usize| df.get(&k.terms[i]).copied().unwrap_or(0.0);
    order.sort_by(|&a, &b| {
        upper(k, b)
            .total_cmp(&upper(k, a))
            .then(df_of(a).total_cmp(&df_of(b)))
            .then(a.cmp(&b))
    });
    order
}

/// How many of `order`'s terms the bound scores: the fewest whose
/// postings add up to `limit` documents (at least one term).
fn bound_terms(order: &[usize], k: &Weighed, df: &HashMap<String, f64>, limit: i64) -> usize {
    let mut held = 0.0;
    for (n, &i) in order.iter().enumerate() {
        held += df.get(&k.terms[i]).copied().unwrap_or(0.0);
        if held >= limit as f64 {
            return n + 1;
        }
    }
    order.len()
}

/// How many of `order`'s terms must be read so that the weights of the
/// rest sum below `theta` (all of them when `theta` is 0), and that sum.
fn heavy_terms(order: &[usize], k: &Weighed, theta: f64) -> (usize, f64) {
    let room = theta * (1.0 - MARGIN);
    let mut rest = 0.0;
    let mut cut = order.len();
    for (n, &i) in order.iter().enumerate().rev() {
        if rest + upper(k, i) >= room {
            break;
        }
        rest += upper(k, i);
        cut = n;
    }
    (cut, if cut == order.len() { 0.0 } else { rest })
}

/// Terms and their weights by field (four columns, 0 past `k`'s fields).
type Part = (Vec<String>, [Vec<f64>; 4]);

fn split(order: &[usize], k: &Weighed, at: usize) -> [Part; 2] {
    let part = |idx: &[usize]| -> Part {
        let column = |f: usize| {
            idx.iter()
                .map(|&i| k.w.get(f).map_or(0.0, |col| col[i]))
                .collect()
        };
        (
            idx.iter().map(|&i| k.terms[i].clone()).collect(),
            [column(0), column(1), column(2), column(3)],
        )
    };
    [part(&order[..at]), part(&order[at..])]
}

/// The `limit` best documents for the weighed terms: (doc, score), best
/// first, ties by document; the same as one pass over every posting.
/// Terms with fewer than `one_pass_below` postings in all are scored in one
/// pass. Also returns how many terms' postings the pass skipped.
pub(crate) async fn best(
    pool: &sqlx::PgPool,
    postings: &Postings,
    k: &Weighed,
    df: &HashMap<String, f64>,
    limit: i64,
    one_pass_below: f64,
) -> Result<(Vec<(i64, f32)>, usize)> {
    let order = by_weight(k, df);
    let all = split(&order, k, order.len());
    let read: f64 = k.terms.iter().filter_map(|t| df.get(t)).sum();
    let first = bound_terms(&order, k, df, limit);
    if read < one_pass_below || first == order.len() {
        let rows = scored(pool, &postings.one_pass_sql(), &all, k, limit, None).await?;
        return Ok((rows, 0));
    }
    let bound: Vec<(i64, f64)> = scored(
        pool,
        &postings.bound_sql(),
        &split(&order, k, first),
        k,
        limit,
        None,
    )
    .await?;
    let theta = if (bound.len() as i64) < limit {
        0.0
    } else {
        bound.iter().map(|b| b.1).fold(f64::INFINITY, f64::min)
    };
    let (cut, rest) = heavy_terms(&order, k, theta);
    if cut == order.len() {
        let rows = scored(pool, &postings.one_pass_sql(), &all, k, limit, None).await?;
        return Ok((rows, 0));
    }
    let rows: Vec<(i64, f32)> = scored(
        pool,
        &postings.pass_sql(),
        &split(&order, k, cut),
        k,
        limit,
        Some((rest, theta * (1.0 - MARGIN))),
    )
    .await?;
    Ok((rows, order.len() - cut))
}

/// Run one of the statements: `$1`–`$10` the split's heavy and light terms
/// with their weights by field, `$11`–`$13` BM25's constants and the
/// fields that count, `$14` the limit, and `$15`, `$16` the skipped weights
/// and θ (0 when not given). Every statement is bound alike; each reads
/// what it needs.
async fn scored<O>(
    pool: &sqlx::PgPool,
    sql: &str,
    [(heavy, hw), (light, lw)]: &[Part; 2],
    k: &Weighed,
    limit: i64,
    bound: Option<(f64, f64)>,
) -> Result<Vec<O>>
where
    O: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    let (rest, theta) = bound.unwrap_or((0.0, 0.0));
    Ok(sqlx::query_as::<_, O>(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(heavy)
        .bind(&hw[0])
        .bind(&hw[1])
        .bind(&hw[2])
        .bind(&hw[3])
        .bind(light)
        .bind(&lw[0])
        .bind(&lw[1])
        .bind(&lw[2])
        .bind(&lw[3])
        .bind(K1_FLAT)
        .bind(&k.per_len)
        .bind(&k.live)
        .bind(limit)
        .bind(rest)
        .bind(theta)
        .fetch_all(pool)
        .await?)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn weighed(w: &[f64]) -> Weighed {
        Weighed {
            terms: (0..w.len()).map(|i| format!("t{i}")).collect(),
            w: vec![w.to_vec()],
            per_len: vec![0.1],
            live: vec![0],
        }
    }

    #[test]
    fn terms_go_heaviest_first_and_the_light_ones_sum_below_the_bound() {
        let k = weighed(&[1.0, 8.0, 2.0, 5.0]);
        let df: HashMap<String, f64> = [("t0", 900.0), ("t1", 5.0), ("t2", 400.0), ("t3", 60.0)]
            .into_iter()
            .map(|(t, n)| (t.to_string(), n))
            .collect();
        let order = by_weight(&k, &df);
        assert_eq!(order, [1, 3, 2, 0]);
        // 5 + 60 documents do not hold 100; with t2 they do
        assert_eq!(bound_terms(&order, &k, &df, 100), 3);
        assert_eq!(bound_terms(&order, &k, &df, 10), 2);
        assert_eq!(bound_terms(&order, &k, &df, 10_000), 4);
        // θ 3.5: t0 and t2 (1 + 2) may be skipped, not t3
        assert_eq!(heavy_terms(&order, &k, 3.5), (2, 3.0));
        // θ exactly 3: 1 + 2 is not below it
        assert_eq!(heavy_terms(&order, &k, 3.0), (3, 1.0));
        // no bound: everything is read
        assert_eq!(heavy_terms(&order, &k, 0.0), (4, 0.0));
        let [(heavy, hw), (light, lw)] = split(&order, &k, 2);
        assert_eq!(heavy, ["t1", "t3"]);
        assert_eq!(
            hw,
            [vec![8.0, 5.0], vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]]
        );
        assert_eq!(light, ["t2", "t0"]);
        assert_eq!(lw[0], [2.0, 1.0]);
    }

    #[test]
    fn a_term_found_in_several_fields_may_add_each_field_s_weight() {
        // t0 weighs 3 in the body and 4 in paths: it may add 7
        let k = Weighed {
            terms: vec!["t0".into(), "t1".into()],
            w: vec![
                vec![3.0, 5.0],
                vec![0.0, 0.0],
                vec![4.0, 0.0],
                vec![0.0, 1.0],
            ],
            per_len: vec![0.1; 4],
            live: vec![0, 2, 3],
        };
        let df: HashMap<String, f64> = documents(&[
            (0, "t0".into(), 40.0),
            (2, "t0".into(), 70.0),
            (0, "t1".into(), 90.0),
        ]);
        assert_eq!(df["t0"], 70.0, "the most of any field, not the sum");
        assert_eq!(by_weight(&k, &df), [0, 1]);
        // θ 6.5: t1 (6) may be skipped; θ 6: it may not
        assert_eq!(heavy_terms(&[0, 1], &k, 6.5), (1, 6.0));
        assert_eq!(heavy_terms(&[0, 1], &k, 6.0), (2, 0.0));
    }

    /// Commit messages with words as common as a fleet's (`fix` in half of
    /// them, `test` in a quarter) down to words in a few, from a fixed seed.
    pub(crate) fn messages(n: usize, seed: u64) -> Vec<String> {
        const WORDS: [(&str, u64); 12] = [
            ("fix", 50),
            ("test", 25),
            ("add", 20),
            ("error", 12),
            ("request", 10),
            ("session", 6),
            ("plugin", 5),
            ("teardown", 3),
            ("callback", 2),
            ("cookie", 2),
            ("redirect", 1),
            ("zeroconf", 1),
        ];
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let mut words: Vec<&str> = Vec::new();
                for (w, percent) in WORDS {
                    for _ in 0..=next() % 2 {
                        if next() % 100 < percent {
                            words.push(w);
                        }
                    }
                }
                // lengths vary: BM25's length normalisation takes part
                for _ in 0..next() % 6 {
                    words.push("the");
                    words.push("code");
                }
                words.join(" ")
            })
            .collect()
    }

    /// `n` commits of [`messages`] by one author, ids and times by seed
    /// and position.
    pub(crate) fn commits(n: usize, seed: u64) -> Vec<crate::CommitRecord> {
        messages(n, seed)
            .into_iter()
            .enumerate()
            .map(|(i, m)| crate::CommitRecord {
                sha: format!("{seed:02}{i:038}"),
                author_name: "Ada".into(),
                author_email: "ada@example.com".into(),
                author_time: i as i64,
                committer_time: i as i64,
                summary: m.clone(),
                message: m,
                parents: Vec::new(),
                files: Vec::new(),
            })
            .collect()
    }

    /// Each question's best 5 and 100 from `postings`, with common words
    /// skipped (whatever the postings' count) and in one pass: the lists
    /// must be identical and full. Returns how many terms were skipped in
    /// all, and how many lists were compared.
    fn same_as_one_pass(
        p: &crate::PgProvider,
        postings: &'static Postings,
        questions: &[&str],
    ) -> (usize, usize) {
        let pool = p.pg.pool.clone();
        let questions: Vec<String> = questions.iter().map(|q| q.to_string()).collect();
        p.pg.run(async move {
            let mut skipped = 0;
            let mut compared = 0;
            for text in questions {
                for limit in [5i64, 100] {
                    let q = LexicalQuery {
                        text: text.clone(),
                        limit: limit as usize,
                        ..Default::default()
                    };
                    let (k, df) = postings.weigh(&pool, &q).await?.unwrap();
                    let (whole, _) = best(&pool, postings, &k, &df, limit, f64::INFINITY).await?;
                    let (pruned, n) = best(&pool, postings, &k, &df, limit, 0.0).await?;
                    assert_eq!(pruned, whole, "{text:?}, the best {limit}");
                    assert_eq!(whole.len() as i64, limit, "{text:?}");
                    skipped += n;
                    compared += 1;
                }
            }
            Ok((skipped, compared))
        })
        .unwrap()
    }

    #[test]
    fn skipping_common_words_ranks_as_one_pass_does() {
        let db = super::super::test_db::Db::new();
        let p = crate::PgProvider::connect(&db.url()).unwrap();
        for (name, seed) in [("acme/web", 7u64), ("acme/api", 11)] {
            let mut w = crate::StoreProvider::open_for_writing(&p, name).unwrap();
            w.add_commits(&commits(1500, seed)).unwrap();
            w.set_state(&crate::IndexState {
                name: Some(name.into()),
                ..Default::default()
            })
            .unwrap();
            w.finish().unwrap();
        }
        let questions = [
            "fix the teardown callback error",
            "fix test error",
            "add a plugin for redirect cookies",
            "fix session cookie on redirect in request",
            "zeroconf test fix add",
            "teardown teardown fix",
            "test error request session plugin fix add",
        ];
        let (skipped, compared) = same_as_one_pass(&p, &COMMIT_MESSAGES, &questions);
        assert_eq!(compared, 14);
        assert!(skipped >= 7, "common words are skipped: {skipped}");
    }

    /// Python files whose paths, function names, docstrings and bodies take
    /// their words from `messages`: every field holds common and rare words.
    pub(crate) fn files(n: usize, seed: u64) -> Vec<crate::FileUpdate> {
        let texts = messages(3 * n, seed);
        (0..n)
            .map(|i| {
                let word = |j: usize, at: usize| {
                    texts[3 * i + j]
                        .split(' ')
                        .nth(at)
                        .unwrap_or("misc")
                        .to_string()
                };
                let path = format!("pkg/{}_{i}.py", word(0, 0));
                let text = format!(
                    "def {}_{}_{i}():\n    \"\"\"{}\"\"\"\n    return \"{}\"\n",
                    word(1, 0),
                    word(2, 1),
                    texts[3 * i + 1],
                    // words repeated: a posting's score comes near its weight
                    texts[3 * i + 2]
                        .split(' ')
                        .map(|w| format!("{w} ").repeat(1 + (i * 7 + w.len()) % 12))
                        .collect::<String>()
                );
                let syntax =
                    ken_syntax::parse_file(&path, &text, &ken_syntax::ChunkOptions::default());
                crate::FileUpdate {
                    path: path.clone(),
                    id: format!("blob-{seed}-{i}"),
                    language: ken_core::Language::from_path(&path),
                    size: text.len() as u64,
                    content: crate::FileContent::Indexed { text, syntax },
                }
            })
            .collect()
    }

    #[test]
    fn skipping_common_words_in_files_ranks_as_one_pass_does() {
        let db = super::super::test_db::Db::new();
        let p = crate::PgProvider::connect(&db.url()).unwrap();
        for (name, seed) in [("acme/web", 5u64), ("acme/api", 13)] {
            let mut w = crate::StoreProvider::open_for_writing(&p, name).unwrap();
            w.write_batch(crate::Batch {
                upserts: files(800, seed),
                deletes: Vec::new(),
            })
            .unwrap();
            w.finish().unwrap();
        }
        let questions = [
            "fix the teardown callback error",
            "fix test error",
            "add a plugin for redirect cookies",
            "session cookie redirect request fix",
            "zeroconf test fix add",
            "test error request session plugin fix add",
        ];
        let pool = p.pg.pool.clone();
        let q = LexicalQuery {
            text: questions[0].into(),
            ..Default::default()
        };
        let (k, _) =
            p.pg.run(async move { WHOLE_FILES.weigh(&pool, &q).await })
                .unwrap()
                .unwrap();
        assert!(k.live.len() > 1, "several fields count");
        let (skipped, compared) = same_as_one_pass(&p, &WHOLE_FILES, &questions);
        assert_eq!(compared, 12);
        assert!(skipped >= 6, "common words are skipped: {skipped}");
    }
}
