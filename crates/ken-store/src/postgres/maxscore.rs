//! The best commit messages of every repository for a question, exactly
//! as one pass over every posting ranks them, without reading every
//! posting of its common words (MaxScore, in two SQL statements).
//!
//! A posting scores `w · tf / (tf + K1_FLAT + per_len · len)`, which is
//! below `w`: a term can add at most its weight to a document. So once
//! some `limit` documents are known to score at least θ, a document that
//! holds only terms whose weights sum below θ cannot be among the best,
//! and those terms' postings need not be read, except to finish the score
//! of a document found through another term (an index probe by term and
//! document, `commit_terms_message_docs`, migration 12).
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

use super::lexical::{K1_FLAT, Weighed, weigh, weighted_terms};
use crate::{LexicalQuery, Result};

/// Questions whose terms have fewer postings than this are scored in one
/// pass: two statements would cost more than they skip.
pub(crate) const ONE_PASS: f64 = 20_000.0;

/// `q`'s terms weighed over every repository's commit messages (the
/// summed `commit_df` and `commit_stats`), with each term's document
/// frequency; None when no term is in any message.
pub(crate) async fn weigh_commits(
    pool: &sqlx::PgPool,
    q: &LexicalQuery,
) -> Result<Option<(Weighed, HashMap<String, f64>)>> {
    let terms = weighted_terms(q);
    if terms.is_empty() {
        return Ok(None);
    }
    let words: Vec<String> = terms.iter().map(|t| t.0.clone()).collect();
    let df: Vec<(i16, String, f64)> = sqlx::query_as(
        "SELECT 0::int2, term, sum(df)::float8 FROM commit_df
         WHERE field = 0 AND term = ANY($1::text[]) GROUP BY term",
    )
    .bind(&words)
    .fetch_all(pool)
    .await?;
    let stats: Vec<(i16, f64, f64)> = sqlx::query_as(
        "SELECT 0::int2, coalesce(sum(n), 0)::float8, coalesce(sum(total), 0)::float8
         FROM commit_stats",
    )
    .fetch_all(pool)
    .await?;
    let k = weigh(&terms, &[1.0], &df, &stats);
    if k.terms.is_empty() {
        return Ok(None);
    }
    let df = df.into_iter().map(|(_, t, n)| (t, n)).collect();
    Ok(Some((k, df)))
}

/// What a skipped document stays below θ by, relatively: more than a
/// float4's rounding, so that no skipped document ties the last one kept
/// once scores are rounded to float4 (as one pass ranks them).
const MARGIN: f64 = 1e-6;

/// The order in which terms are taken: heaviest (rarest) first.
fn by_weight(k: &Weighed, df: &HashMap<String, f64>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..k.terms.len()).collect();
    let df_of = |i: usize| df.get(&k.terms[i]).copied().unwrap_or(0.0);
    order.sort_by(|&a, &b| {
        k.w[0][b]
            .total_cmp(&k.w[0][a])
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
        if rest + k.w[0][i] >= room {
            break;
        }
        rest += k.w[0][i];
        cut = n;
    }
    (cut, if cut == order.len() { 0.0 } else { rest })
}

fn split(order: &[usize], k: &Weighed, at: usize) -> [(Vec<String>, Vec<f64>); 2] {
    let part = |idx: &[usize]| {
        (
            idx.iter().map(|&i| k.terms[i].clone()).collect(),
            idx.iter().map(|&i| k.w[0][i]).collect(),
        )
    };
    [part(&order[..at]), part(&order[at..])]
}

/// Each document's score over the heavy terms (`$1`, weights `$2`).
macro_rules! partial {
    () => {
        "SELECT t.doc, sum(k.w * t.tf / (t.tf + $3 + $4 * t.len)) AS part
         FROM unnest($1::text[], $2::float8[]) AS k(term, w)
         JOIN commit_terms t ON t.term = k.term AND t.field = 0
         GROUP BY t.doc"
    };
}

/// What the light terms (`$5`, weights `$6`) add to document `$doc`,
/// looked up by term and document.
macro_rules! light_part {
    ($doc:literal) => {
        concat!(
            "coalesce((SELECT sum(r.w * t.tf / (t.tf + $3 + $4 * t.len))
             FROM unnest($5::text[], $6::float8[]) AS r(term, w)
             JOIN commit_terms t ON t.term = r.term AND t.field = 0 AND t.doc = ",
            $doc,
            "), 0)"
        )
    };
}

/// The `limit` best commit documents for the weighed terms: (doc, score),
/// best first, ties by document; the same as one pass over every posting.
/// Terms with fewer than `one_pass_below` postings in all are scored in one
/// pass. Also returns how many terms' postings the pass skipped.
pub(crate) async fn best_commits(
    pool: &sqlx::PgPool,
    k: &Weighed,
    df: &HashMap<String, f64>,
    limit: i64,
    one_pass_below: f64,
) -> Result<(Vec<(i64, f32)>, usize)> {
    let postings: f64 = k.terms.iter().filter_map(|t| df.get(t)).sum();
    let order = by_weight(k, df);
    let first = bound_terms(&order, k, df, limit);
    if postings < one_pass_below || first == order.len() {
        return Ok((one_pass(pool, k, limit).await?, 0));
    }
    let bound: Vec<(i64, f64)> = scored(
        pool,
        // the best `limit` documents of the heavy terms, scored whole
        concat!(
            "WITH p AS (",
            partial!(),
            " ORDER BY part DESC, t.doc LIMIT $7) SELECT p.doc, p.part + ",
            light_part!("p.doc"),
            " FROM p"
        ),
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
        return Ok((one_pass(pool, k, limit).await?, 0));
    }
    let rows: Vec<(i64, f32)> = scored(
        pool,
        // the heavy terms' documents that may still reach θ, scored whole
        concat!(
            "WITH p AS (",
            partial!(),
            "), c AS (SELECT doc, part FROM p WHERE part + $8 >= $9),",
            " s AS (SELECT c.doc, c.part + ",
            light_part!("c.doc"),
            " AS score FROM c)",
            " SELECT doc, score::float4 FROM s ORDER BY score::float4 DESC, doc LIMIT $7"
        ),
        &split(&order, k, cut),
        k,
        limit,
        Some((rest, theta * (1.0 - MARGIN))),
    )
    .await?;
    Ok((rows, order.len() - cut))
}

/// Run one of the two statements: `$1`–`$6` the split's heavy and light
/// terms with their weights and BM25's constants, `$7` the limit, and
/// `$8`, `$9` the skipped weights and θ when given.
async fn scored<O>(
    pool: &sqlx::PgPool,
    sql: &'static str,
    [(heavy, hw), (light, lw)]: &[(Vec<String>, Vec<f64>); 2],
    k: &Weighed,
    limit: i64,
    bound: Option<(f64, f64)>,
) -> Result<Vec<O>>
where
    O: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    let mut q = sqlx::query_as::<_, O>(sql)
        .bind(heavy)
        .bind(hw)
        .bind(K1_FLAT)
        .bind(k.per_len[0])
        .bind(light)
        .bind(lw)
        .bind(limit);
    if let Some((rest, theta)) = bound {
        q = q.bind(rest).bind(theta);
    }
    Ok(q.fetch_all(pool).await?)
}

/// Every posting of every term, scored in one pass.
async fn one_pass(pool: &sqlx::PgPool, k: &Weighed, limit: i64) -> Result<Vec<(i64, f32)>> {
    Ok(sqlx::query_as(
        "SELECT t.doc, sum(k.w * t.tf / (t.tf + $3 + $4 * t.len))::float4 AS score
         FROM unnest($1::text[], $2::float8[]) AS k(term, w)
         JOIN commit_terms t ON t.term = k.term AND t.field = 0
         GROUP BY t.doc ORDER BY score DESC, t.doc LIMIT $5",
    )
    .bind(&k.terms)
    .bind(&k.w[0])
    .bind(K1_FLAT)
    .bind(k.per_len[0])
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            (heavy, hw),
            (vec!["t1".into(), "t3".into()], vec![8.0, 5.0])
        );
        assert_eq!(
            (light, lw),
            (vec!["t2".into(), "t0".into()], vec![2.0, 1.0])
        );
    }

    /// Commit messages with words as common as a fleet's (`fix` in half of
    /// them, `test` in a quarter) down to words in a few, from a fixed seed.
    fn messages(n: usize, seed: u64) -> Vec<String> {
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

    #[test]
    fn skipping_common_words_ranks_as_one_pass_does() {
        let db = super::super::test_db::Db::new();
        let p = crate::PgProvider::connect(&db.url()).unwrap();
        for (name, seed) in [("acme/web", 7u64), ("acme/api", 11)] {
            let mut w = crate::StoreProvider::open_for_writing(&p, name).unwrap();
            let commits: Vec<crate::CommitRecord> = messages(1500, seed)
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
                .collect();
            w.add_commits(&commits).unwrap();
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
        let pool = p.pg.pool.clone();
        let (skipped, compared) =
            p.pg.run(async move {
                let mut skipped = 0;
                let mut compared = 0;
                for text in questions {
                    for limit in [5i64, 100] {
                        let q = LexicalQuery {
                            text: text.into(),
                            limit: limit as usize,
                            ..Default::default()
                        };
                        let (k, df) = weigh_commits(&pool, &q).await?.unwrap();
                        let whole = one_pass(&pool, &k, limit).await?;
                        let (pruned, n) = best_commits(&pool, &k, &df, limit, 0.0).await?;
                        assert_eq!(pruned, whole, "{text:?}, the best {limit}");
                        assert_eq!(whole.len() as i64, limit, "{text:?}");
                        skipped += n;
                        compared += 1;
                    }
                }
                Ok((skipped, compared))
            })
            .unwrap();
        assert_eq!(compared, 14);
        assert!(skipped >= 7, "common words are skipped: {skipped}");
    }
}
