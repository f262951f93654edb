//! The collection index of a database: its own tables read across every
//! repository. Every repository's files, symbols and commits are already
//! rows of one database, so a question over all of them is one SQL query
//! each (BM25 with the statistics of the whole collection), and there is
//! nothing to keep in step: an update is the stores' own write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sqlx::Row;

use super::Pg;
use super::lexical;
use super::maxscore::{self, COMMIT_MESSAGES, ONE_PASS, WHOLE_FILES};
use super::store::pg_text;
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

/// The best (document, score)s as hits: `sql` joins `$1` documents and
/// `$2` scores to their (repository id, path or commit id, score), at most
/// `$3` of them.
async fn named(
    pool: &sqlx::PgPool,
    best: Vec<(i64, f32)>,
    limit: i64,
    sql: &'static str,
) -> Result<Vec<FleetHit>> {
    let (docs, scores): (Vec<i64>, Vec<f32>) = best.into_iter().unzip();
    let rows = sqlx::query(sql)
        .bind(&docs)
        .bind(&scores)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    hits(pool, &rows).await
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
        let languages: Vec<String> = q.languages.iter().map(|l| l.name().to_string()).collect();
        let limit = q.limit.max(1) as i64;
        let q = q.clone();
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let Some((k, df)) = WHOLE_FILES.weigh(&pool, &q).await? else {
                return Ok(Vec::new());
            };
            if languages.is_empty() {
                // the common words' postings skipped where they cannot
                // change the best `limit` (maxscore.rs); each file scored
                // once, then every copy of the best listed, by score and
                // then in the order the copies were stored, as one pass
                // over every copy would take them
                let (best, _) = maxscore::best(&pool, &WHOLE_FILES, &k, &df, limit, ONE_PASS).await?;
                return named(
                    &pool,
                    best,
                    limit,
                    "WITH b AS (SELECT f.repo, f.path, b.score
                                FROM unnest($1::bigint[], $2::float4[]) AS b(doc, score)
                                JOIN shared_files s ON s.doc = b.doc
                                JOIN lex_files f ON f.path = s.path AND f.blob = s.blob
                                ORDER BY b.score DESC, f.doc LIMIT $3)
                     SELECT repo, path, score FROM b ORDER BY score DESC, repo, path",
                )
                .await;
            }
            let rows = sqlx::query(
                "WITH s AS (
                     SELECT t.doc,
                            sum((CASE t.field WHEN 0 THEN k.w0 WHEN 1 THEN k.w1 WHEN 2 THEN k.w2 ELSE k.w3 END)
                                * t.tf / (t.tf + $6 + ($7::float8[])[t.field + 1] * t.len))::float4 AS score
                     FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[])
                          AS k(term, w0, w1, w2, w3)
                     JOIN file_terms t ON t.term = k.term
                     WHERE t.field = ANY($8::smallint[])
                     GROUP BY t.doc)
                 SELECT f.repo, f.path, s.score FROM s
                 JOIN shared_files d ON d.doc = s.doc AND d.language = ANY($9)
                 JOIN lex_files f ON f.path = d.path AND f.blob = d.blob
                 ORDER BY s.score DESC, f.repo, f.path LIMIT $10",
            )
            .bind(&k.terms)
            .bind(&k.w[0])
            .bind(&k.w[1])
            .bind(&k.w[2])
            .bind(&k.w[3])
            .bind(lexical::K1_FLAT)
            .bind(&k.per_len)
            .bind(&k.live)
            .bind(&languages)
            .bind(limit)
            .fetch_all(&pool)
            .await?;
            hits(&pool, &rows).await
        })
    }

    /// BM25 over every repository's commit messages, with the statistics
    /// of all of them (`commit_df`, `commit_stats`). Each message is scored
    /// once (`message_terms`); its copies, the same commit in other
    /// repositories, score the same, so the best `limit` copies are among
    /// those of the best `limit` messages: first by score, then in the
    /// order they were stored, as one pass over every copy would take them.
    fn search_commits(&self, q: &LexicalQuery) -> Result<Vec<FleetHit>> {
        let q = q.clone();
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let Some((k, df)) = COMMIT_MESSAGES.weigh(&pool, &q).await? else {
                return Ok(Vec::new());
            };
            let limit = q.limit.max(1) as i64;
            let (best, _) =
                maxscore::best(&pool, &COMMIT_MESSAGES, &k, &df, limit, ONE_PASS).await?;
            named(
                &pool,
                best,
                limit,
                "WITH b AS (SELECT c.repo, c.sha, b.score
                            FROM unnest($1::bigint[], $2::float4[]) AS b(doc, score)
                            JOIN messages m ON m.doc = b.doc
                            JOIN commits c ON c.sha = m.sha
                            ORDER BY b.score DESC, c.doc LIMIT $3)
                 SELECT repo, sha, score FROM b ORDER BY score DESC, repo, sha",
            )
            .await
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

#[cfg(test)]
mod tests {
    use super::maxscore::tests::commits;
    use super::*;
    use crate::{CommitRecord, IndexState, StoreProvider};

    fn write(p: &crate::PgProvider, name: &str, commits: &[CommitRecord]) {
        let mut w = p.open_for_writing(name).unwrap();
        w.add_commits(commits).unwrap();
        w.set_state(&IndexState {
            name: Some(name.into()),
            ..Default::default()
        })
        .unwrap();
        w.finish().unwrap();
    }

    type Listed = Vec<(String, String, f32)>;

    /// The search as it was before messages were stored once: one pass
    /// over every copy's postings (`commit_terms`), the best `limit`
    /// copies by score and then by the order they were stored.
    async fn over_every_copy(pool: &sqlx::PgPool, q: &LexicalQuery) -> Result<Listed> {
        let (k, _) = COMMIT_MESSAGES.weigh(pool, q).await?.unwrap();
        let rows = sqlx::query(
            "WITH s AS (SELECT t.doc, sum(k.w0 * t.tf / (t.tf + $3 + ($4::float8[])[1] * t.len))::float4 AS score
                        FROM unnest($1::text[], $2::float8[]) AS k(term, w0)
                        JOIN commit_terms t ON t.term = k.term AND t.field = 0
                        GROUP BY t.doc ORDER BY score DESC, t.doc LIMIT $5)
             SELECT c.repo, c.sha, s.score FROM s JOIN commits c ON c.doc = s.doc
             ORDER BY s.score DESC, c.repo, c.sha",
        )
        .bind(&k.terms)
        .bind(&k.w[0])
        .bind(lexical::K1_FLAT)
        .bind(&k.per_len)
        .bind(q.limit as i64)
        .fetch_all(pool)
        .await?;
        Ok(listed(hits(pool, &rows).await?))
    }

    fn listed(hits: Vec<FleetHit>) -> Listed {
        hits.into_iter()
            .map(|h| (h.repo, h.path, h.score))
            .collect()
    }

    /// Checks a search's hits against the one-pass search over every copy
    /// (`want`) and that the best `limit` came back; returns how many hits
    /// are a further copy of one listed before (the same commit or file in
    /// another repository).
    fn copies_among(got: &Listed, want: &Listed, text: &str, limit: usize) -> usize {
        assert_eq!(got, want, "{text:?}, the best {limit}");
        assert_eq!(got.len(), limit, "{text:?}");
        let mut keys: Vec<&str> = got.iter().map(|h| h.1.as_str()).collect();
        keys.sort();
        keys.dedup();
        got.len() - keys.len()
    }

    /// Each statement's count.
    fn counted<const N: usize>(p: &crate::PgProvider, sqls: [&'static str; N]) -> [i64; N] {
        let pool = p.pg.pool.clone();
        p.pg.run(async move {
            let mut out = [0; N];
            for (n, sql) in out.iter_mut().zip(sqls) {
                *n = sqlx::query_scalar(sql).fetch_one(&pool).await?;
            }
            Ok(out)
        })
        .unwrap()
    }

    /// (messages, their postings, postings of no message, messages no
    /// repository holds)
    fn counts(p: &crate::PgProvider) -> [i64; 4] {
        counted(
            p,
            [
                "SELECT count(*) FROM messages",
                "SELECT count(*) FROM message_terms",
                "SELECT count(*) FROM message_terms t
                 WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.doc = t.doc)",
                "SELECT count(*) FROM messages m
                 WHERE NOT EXISTS (SELECT 1 FROM commits c WHERE c.sha = m.sha)",
            ],
        )
    }

    /// A history held by several repositories (a copy, a repository that
    /// took some of its commits) is scored once per commit, and the search
    /// lists every copy exactly as one pass over every copy's postings
    /// did; a repository's deletion takes only the messages no other holds.
    #[test]
    fn copies_of_a_history_are_scored_once_and_each_listed() {
        let db = super::super::test_db::Db::new();
        let p = crate::PgProvider::connect(&db.url()).unwrap();
        let web = commits(400, 7);
        let mut api = commits(400, 11);
        api.extend_from_slice(&web[100..200]);
        write(&p, "acme/web", &web);
        write(&p, "acme/web-copy", &web[..300]);
        write(&p, "acme/api", &api);
        let [per_message] = counted(
            &p,
            ["SELECT count(*) FROM commit_terms t JOIN commits c ON c.doc = t.doc
              WHERE t.field = 0 AND c.repo = (SELECT min(repo) FROM commits c2 WHERE c2.sha = c.sha)"],
        );
        assert_eq!(counts(&p), [800, per_message, 0, 0]);
        let fleet = p.fleet().unwrap().unwrap();
        let questions = [
            "fix the teardown callback error",
            "fix test error",
            "add a plugin for redirect cookies",
            "zeroconf test fix add",
            "teardown teardown fix",
        ];
        let same_as_every_copy = |p: &crate::PgProvider| {
            let mut copies = 0;
            for text in questions {
                for limit in [5, 100] {
                    let q = LexicalQuery {
                        text: text.into(),
                        limit,
                        ..Default::default()
                    };
                    let pool = p.pg.pool.clone();
                    let q2 = q.clone();
                    let want =
                        p.pg.run(async move { over_every_copy(&pool, &q2).await })
                            .unwrap();
                    let got = listed(fleet.search_commits(&q).unwrap());
                    copies += copies_among(&got, &want, text, limit);
                }
            }
            copies
        };
        assert!(same_as_every_copy(&p) > 100, "copies are listed");
        // the copy goes: every message is still held
        p.remove("acme/web-copy").unwrap();
        assert_eq!(counts(&p), [800, per_message, 0, 0]);
        // the first holder goes: 300 of its messages are held elsewhere
        // (the copies of the others were stored in the same order, so ties
        // fall as before)
        write(&p, "acme/web-copy", &web[..300]);
        p.remove("acme/web").unwrap();
        let [messages, _, orphans, unheld] = counts(&p);
        assert_eq!([messages, orphans, unheld], [700, 0, 0]);
        same_as_every_copy(&p);
        p.remove("acme/web-copy").unwrap();
        p.remove("acme/api").unwrap();
        assert_eq!(counts(&p), [0; 4]);
    }

    /// `n` generated files of `seed`, every third one JavaScript.
    fn files(n: usize, seed: u64) -> Vec<crate::FileUpdate> {
        let mut out = maxscore::tests::files(n, seed);
        for f in out.iter_mut().step_by(3) {
            f.path = f.path.replace(".py", ".js");
            f.language = ken_core::Language::JavaScript;
        }
        out
    }

    fn write_files(
        p: &crate::PgProvider,
        name: &str,
        upserts: &[crate::FileUpdate],
        deletes: &[&str],
    ) {
        let mut w = p.open_for_writing(name).unwrap();
        w.write_batch(crate::Batch {
            upserts: upserts.to_vec(),
            deletes: deletes.iter().map(|d| d.to_string()).collect(),
        })
        .unwrap();
        w.set_state(&IndexState {
            name: Some(name.into()),
            ..Default::default()
        })
        .unwrap();
        w.finish().unwrap();
    }

    /// The files' search as it was before files were stored once: every
    /// copy's postings (`lex_terms`) in one pass, the best `limit` by
    /// score and then in the order they were stored, or, filtered by
    /// language, by score, repository and path.
    async fn files_over_every_copy(
        pool: &sqlx::PgPool,
        q: &LexicalQuery,
        languages: &[&str],
    ) -> Result<Listed> {
        let (k, _) = WHOLE_FILES.weigh(pool, q).await?.unwrap();
        let scored = "SELECT t.doc,
                             sum((CASE t.field WHEN 0 THEN k.w0 WHEN 1 THEN k.w1 WHEN 2 THEN k.w2 ELSE k.w3 END)
                                 * t.tf / (t.tf + $6 + ($7::float8[])[t.field + 1] * t.len))::float4 AS score
                      FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[])
                           AS k(term, w0, w1, w2, w3)
                      JOIN lex_terms t ON t.term = k.term
                      WHERE t.files AND t.field = ANY($8::smallint[])
                      GROUP BY t.doc";
        let sql = if languages.is_empty() {
            format!(
                "WITH s AS ({scored} ORDER BY score DESC, t.doc LIMIT $10)
                 SELECT f.repo, f.path, s.score FROM s JOIN lex_files f ON f.doc = s.doc
                 WHERE cardinality($9::text[]) = 0
                 ORDER BY s.score DESC, f.repo, f.path"
            )
        } else {
            format!(
                "WITH s AS ({scored})
                 SELECT f.repo, f.path, s.score FROM s JOIN lex_files f ON f.doc = s.doc
                 WHERE f.language = ANY($9)
                 ORDER BY s.score DESC, f.repo, f.path LIMIT $10"
            )
        };
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&k.terms)
            .bind(&k.w[0])
            .bind(&k.w[1])
            .bind(&k.w[2])
            .bind(&k.w[3])
            .bind(lexical::K1_FLAT)
            .bind(&k.per_len)
            .bind(&k.live)
            .bind(languages)
            .bind(q.limit as i64)
            .fetch_all(pool)
            .await?;
        Ok(listed(hits(pool, &rows).await?))
    }

    /// (shared files, their postings, postings of no shared file, shared
    /// files no repository holds, (path, blob)s held with no shared file)
    fn file_counts(p: &crate::PgProvider) -> [i64; 5] {
        counted(
            p,
            [
                "SELECT count(*) FROM shared_files",
                "SELECT count(*) FROM file_terms",
                "SELECT count(*) FROM file_terms t
                 WHERE NOT EXISTS (SELECT 1 FROM shared_files s WHERE s.doc = t.doc)",
                "SELECT count(*) FROM shared_files s WHERE NOT EXISTS
                     (SELECT 1 FROM lex_files f WHERE f.path = s.path AND f.blob = s.blob)",
                "SELECT count(*) FROM lex_files f WHERE NOT EXISTS
                     (SELECT 1 FROM shared_files s WHERE f.path = s.path AND f.blob = s.blob)",
            ],
        )
    }

    /// The same blob at the same path in several repositories is scored
    /// once, and the files' search lists every copy exactly as one pass
    /// over every copy's postings did, with and without a language
    /// filter; a push or a deletion drops only what no other repository
    /// holds.
    #[test]
    fn copies_of_files_are_scored_once_and_each_listed() {
        let db = super::super::test_db::Db::new();
        let p = crate::PgProvider::connect(&db.url()).unwrap();
        let web = files(300, 5);
        let mut api = files(200, 13);
        for f in &mut api {
            f.path = format!("api/{}", f.path);
        }
        api.extend_from_slice(&web[100..150]);
        write_files(&p, "acme/web", &web, &[]);
        write_files(&p, "acme/web-copy", &web[..200], &[]);
        write_files(&p, "acme/api", &api, &[]);
        assert_eq!(file_counts(&p)[0], 500);
        assert_eq!(file_counts(&p)[2..], [0, 0, 0]);
        let fleet = p.fleet().unwrap().unwrap();
        let questions = [
            "fix the teardown callback error",
            "add a plugin for redirect cookies",
            "session cookie redirect request fix",
            "zeroconf test fix add",
        ];
        let same_as_every_copy = |p: &crate::PgProvider| {
            let mut copies = 0;
            for text in questions {
                for (limit, languages) in [(5, vec![]), (100, vec![]), (20, vec!["javascript"])] {
                    let q = LexicalQuery {
                        text: text.into(),
                        limit,
                        languages: languages
                            .iter()
                            .map(|l| ken_core::Language::parse(l).unwrap())
                            .collect(),
                        ..Default::default()
                    };
                    let pool = p.pg.pool.clone();
                    let q2 = q.clone();
                    let want = p
                        .pg
                        .run(async move { files_over_every_copy(&pool, &q2, &languages).await })
                        .unwrap();
                    let got = listed(fleet.search(&q).unwrap());
                    copies += copies_among(&got, &want, text, limit);
                }
            }
            copies
        };
        assert!(same_as_every_copy(&p) > 50, "copies are listed");
        // a push to the copy: one file changed, one deleted; the old
        // versions stay, web holds them
        let mut changed = web[0].clone();
        changed.id = "blob-changed".into();
        write_files(&p, "acme/web-copy", &[changed], &[web[1].path.as_str()]);
        assert_eq!(file_counts(&p)[0], 501);
        assert_eq!(file_counts(&p)[2..], [0, 0, 0]);
        same_as_every_copy(&p);
        // the changed file's only holder changes it again: its first
        // version goes
        let mut again = web[0].clone();
        again.id = "blob-changed-again".into();
        write_files(&p, "acme/web-copy", &[again], &[]);
        assert_eq!(file_counts(&p)[0], 501);
        assert_eq!(file_counts(&p)[2..], [0, 0, 0]);
        // the first holder goes: 50 of its files are held elsewhere
        p.remove("acme/web").unwrap();
        assert_eq!(file_counts(&p)[0], 200 + 199);
        assert_eq!(file_counts(&p)[2..], [0, 0, 0]);
        same_as_every_copy(&p);
        p.remove("acme/web-copy").unwrap();
        p.remove("acme/api").unwrap();
        assert_eq!(file_counts(&p), [0; 5]);
    }

    /// Writers storing the same history and files at once (copies
    /// indexed side by side) never wait on one another for ever, and every
    /// message and file held has its one shared copy. A deletion waits for
    /// the writers in flight (here: a connection holding the writers' lock).
    #[test]
    fn copies_written_side_by_side_share_one_copy() {
        let db = super::super::test_db::Db::new();
        let url = db.url();
        let p = crate::PgProvider::connect(&url).unwrap();
        let history = commits(600, 3);
        let tree = files(200, 9);
        write(&p, "acme/old", &history);
        write_files(&p, "acme/old", &tree, &[]);
        let writers: Vec<_> = ["acme/one", "acme/two", "acme/three"]
            .into_iter()
            .map(|name| {
                let (url, history, tree) = (url.clone(), history.clone(), tree.clone());
                std::thread::spawn(move || {
                    let p = crate::PgProvider::connect(&url).unwrap();
                    for part in 0..3 {
                        let (c, f) = (&history[part * 200..], &tree[part * 50..(part + 1) * 50]);
                        write(&p, name, &c[..200]);
                        write_files(&p, name, f, &[]);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(counts(&p)[0], 600);
        assert_eq!(file_counts(&p)[0], 200);
        // a writer in flight holds the lock shared: the deletion waits
        let held = {
            let url = url.clone();
            p.pg.run(async move {
                let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await?;
                sqlx::query("SELECT pg_advisory_lock_shared($1)")
                    .bind(lexical::SHARED_LOCK)
                    .execute(&mut c)
                    .await?;
                Ok(c)
            })
            .unwrap()
        };
        let removal = {
            let url = url.clone();
            std::thread::spawn(move || {
                let p = crate::PgProvider::connect(&url).unwrap();
                p.remove("acme/old").unwrap();
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(700));
        assert!(!removal.is_finished(), "the deletion waited for the writer");
        p.pg.run(async move { Ok(sqlx::Connection::close(held).await?) })
            .unwrap();
        removal.join().unwrap();
        assert_eq!(counts(&p)[0], 600);
        assert_eq!(counts(&p)[2..], [0, 0]);
        assert_eq!(file_counts(&p)[0], 150);
        assert_eq!(file_counts(&p)[2..], [0, 0, 0]);
    }
}
