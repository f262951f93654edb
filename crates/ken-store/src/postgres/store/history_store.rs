//! The HistoryStore of PostgreSQL: commits, their files, blame.

use std::collections::{HashMap, HashSet};

use sqlx::Row;
use sqlx::postgres::PgRow;

use super::super::bump;
use super::super::lexical::{CommitPostings, K1_FLAT, commit_text, weigh};
use super::*;
use crate::embedded::lexical::query_terms;
use crate::{BlameLines, CommitRecord, FileBlameRecord, HistoryStore, Result};

/// A file a commit changed: (path, status, old path).
type ChangedFile = (String, String, Option<String>);

/// The new commits' newest time (`commit_stats.newest`: its count `n` is
/// the messages' count, kept by `CommitPostings`) and their authors'
/// newest times (`authors`), migration 16.
async fn add_newest_and_authors(
    tx: &mut sqlx::PgConnection,
    repo: i64,
    new: &[&CommitRecord],
) -> Result<()> {
    let Some(newest) = new.iter().map(|c| c.committer_time).max() else {
        return Ok(());
    };
    sqlx::query("UPDATE commit_stats SET newest = greatest(newest, $2) WHERE repo = $1")
        .bind(repo)
        .bind(newest)
        .execute(&mut *tx)
        .await?;
    let mut last: std::collections::BTreeMap<(&str, &str), i64> = Default::default();
    for c in new {
        let t = last
            .entry((c.author_name.as_str(), c.author_email.as_str()))
            .or_insert(c.committer_time);
        *t = (*t).max(c.committer_time);
    }
    sqlx::query(
        "INSERT INTO authors(repo, name, email, newest)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int8[])
         ON CONFLICT (repo, name, email) DO UPDATE SET newest = greatest(authors.newest, excluded.newest)",
    )
    .bind(repo)
    .bind(last.keys().map(|k| k.0).collect::<Vec<_>>())
    .bind(last.keys().map(|k| k.1).collect::<Vec<_>>())
    .bind(last.values().copied().collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    Ok(())
}

impl HistoryStore for PgStore {
    fn commit_stats(&self) -> Result<(u64, Option<i64>)> {
        self.read(|pool, repo| async move {
            // kept by the writer (migration 16): a server opening one of
            // a thousand repositories reads a row, not its every commit
            let r = sqlx::query("SELECT n, newest FROM commit_stats WHERE repo = $1")
                .bind(repo)
                .fetch_optional(&pool)
                .await?;
            Ok(r.map_or((0, None), |r| (r.get::<i64, _>(0) as u64, r.get(1))))
        })
    }

    fn add_commits(&mut self, commits: &[CommitRecord]) -> Result<usize> {
        let mut commits = commits.to_vec();
        // git refuses a NUL in a message, other tools may not: kept as
        // U+001A like a file's (`without_nul`), so one odd commit does not
        // fail the history
        for c in &mut commits {
            for text in [
                &mut c.author_name,
                &mut c.author_email,
                &mut c.summary,
                &mut c.message,
            ] {
                without_nul(text);
            }
            for (path, status, old) in &mut c.files {
                without_nul(path);
                without_nul(status);
                without_nul_opt(old);
            }
        }
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            let shas: Vec<String> = commits.iter().map(|c| c.sha.clone()).collect();
            let known: HashSet<String> =
                sqlx::query("SELECT sha FROM commits WHERE repo = $1 AND sha = ANY($2)")
                    .bind(repo)
                    .bind(&shas)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
            let mut seen = HashSet::new();
            let new: Vec<&CommitRecord> = commits
                .iter()
                .filter(|c| !known.contains(&c.sha) && seen.insert(c.sha.clone()))
                .collect();
            // every new commit in one statement, and their files in one
            // more: a history of thousands is two round trips, not two per
            // commit
            let docs: HashMap<String, i64> = sqlx::query(
                "INSERT INTO commits(repo, sha, author_name, author_email, author_time, committer_time,
                                     summary, message, parents)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::int8[],
                                          $6::int8[], $7::text[], $8::text[], $9::text[])
                 RETURNING sha, doc",
            )
            .bind(repo)
            .bind(new.iter().map(|c| c.sha.as_str()).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.author_name.as_str()).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.author_email.as_str()).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.author_time).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.committer_time).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.summary.as_str()).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.message.as_str()).collect::<Vec<_>>())
            .bind(new.iter().map(|c| c.parents.join(" ")).collect::<Vec<_>>())
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
            let files: Vec<(&str, &ChangedFile)> = new
                .iter()
                .flat_map(|c| c.files.iter().map(move |f| (c.sha.as_str(), f)))
                .collect();
            let shas: Vec<&str> = files.iter().map(|(sha, _)| *sha).collect();
            let paths: Vec<&str> = files.iter().map(|(_, f)| f.0.as_str()).collect();
            let statuses: Vec<&str> = files.iter().map(|(_, f)| f.1.as_str()).collect();
            let olds: Vec<Option<&str>> = files.iter().map(|(_, f)| f.2.as_deref()).collect();
            sqlx::query(
                "INSERT INTO commit_files(repo, sha, path, status, old_path)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])",
            )
            .bind(repo)
            .bind(&shas)
            .bind(&paths)
            .bind(&statuses)
            .bind(&olds)
            .execute(&mut *tx)
            .await?;
            let mut postings = CommitPostings::default();
            for c in &new {
                postings.add(
                    repo,
                    (docs[&c.sha], &c.sha),
                    commit_text(&c.summary, &c.message),
                    c.files.iter().map(|f| f.0.as_str()),
                );
            }
            postings.insert(&mut tx).await?;
            add_newest_and_authors(&mut tx, repo, &new).await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(new.len())
        })
    }

    fn commits(&self, shas: &[String], with_files: bool) -> Result<HashMap<String, CommitRecord>> {
        let shas = pg_texts(shas);
        self.read(move |pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COMMIT_COLUMNS} FROM commits WHERE repo = $1 AND sha = ANY($2)"
            )))
            .bind(repo)
            .bind(&shas)
            .fetch_all(&pool)
            .await?;
            let mut out: HashMap<String, CommitRecord> =
                rows.iter().map(commit_from_row).map(|c| (c.sha.clone(), c)).collect();
            if with_files {
                let rows = sqlx::query(
                    "SELECT sha, path, status, old_path FROM commit_files WHERE repo = $1 AND sha = ANY($2)",
                )
                .bind(repo)
                .bind(&shas)
                .fetch_all(&pool)
                .await?;
                for r in rows {
                    if let Some(c) = out.get_mut(&r.get::<String, _>(0)) {
                        c.files.push((r.get(1), r.get(2), r.get(3)));
                    }
                }
            }
            Ok(out)
        })
    }

    /// Who made each commit and when: five columns, no message or parents.
    fn commit_heads(&self, shas: &[String]) -> Result<HashMap<String, CommitRecord>> {
        let shas = pg_texts(shas);
        self.read(move |pool, repo| async move {
            let rows = sqlx::query(
                "SELECT sha, author_name, author_email, author_time, committer_time
                 FROM commits WHERE repo = $1 AND sha = ANY($2)",
            )
            .bind(repo)
            .bind(&shas)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| {
                    let c = CommitRecord {
                        sha: r.get(0),
                        author_name: r.get(1),
                        author_email: r.get(2),
                        author_time: r.get(3),
                        committer_time: r.get(4),
                        ..CommitRecord::default()
                    };
                    (c.sha.clone(), c)
                })
                .collect())
        })
    }

    fn all_commits(&self) -> Result<Vec<CommitRecord>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COMMIT_COLUMNS} FROM commits WHERE repo = $1 ORDER BY committer_time DESC"
            )))
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(commit_from_row).collect())
        })
    }

    fn commit_times(&self) -> Result<Vec<crate::CommitTime>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT author_name, author_email, author_time, committer_time FROM commits WHERE repo = $1",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect())
        })
    }

    fn commit_authors(&self) -> Result<Vec<(String, String)>> {
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT name, email FROM authors WHERE repo = $1 ORDER BY newest DESC, name, email",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    /// As the embedded store searches them: the messages' BM25 (over the
    /// repository's own commits) for the best few times `limit`, plus, for
    /// each word of the question that is a word of a changed path,
    /// [`PATH_WEIGHT`] times that word's idf over the commits.
    fn search_commits(&self, query: &str, limit: usize) -> Result<Vec<(String, f32)>> {
        let terms: Vec<String> = query_terms(query).into_iter().map(|(t, _)| t).collect();
        let words = commit_query_words(query);
        if (terms.is_empty() && words.is_empty()) || limit == 0 {
            return Ok(Vec::new());
        }
        self.read(move |pool, repo| async move {
            // the statistics first (see `lexical::Weighed`)
            let df: Vec<(i16, String, f64)> = sqlx::query_as(
                "SELECT 0::int2, term, df::float8 FROM commit_df
                 WHERE repo = $1 AND field = 0 AND term = ANY($2::text[])",
            )
            .bind(repo)
            .bind(&terms)
            .fetch_all(&pool)
            .await?;
            let stats: Vec<(i16, f64, f64)> = sqlx::query_as(
                "SELECT 0::int2, n::float8, total::float8 FROM commit_stats WHERE repo = $1",
            )
            .bind(repo)
            .fetch_all(&pool)
            .await?;
            let once: Vec<(String, f32)> = terms.iter().map(|t| (t.clone(), 1.0)).collect();
            let k = weigh(&once, &[1.0], &df, &stats);
            let messages = sqlx::query(
                "SELECT t.doc, sum(k.w * t.tf / (t.tf + $4 + $5 * t.len))::float8
                 FROM unnest($2::text[], $3::float8[]) AS k(term, w)
                 JOIN commit_terms t ON t.repo = $1 AND t.term = k.term
                 WHERE t.field = 0
                 GROUP BY t.doc ORDER BY 2 DESC, t.doc LIMIT $6",
            )
            .bind(repo)
            .bind(&k.terms)
            .bind(&k.w[0])
            .bind(K1_FLAT)
            .bind(k.per_len[0])
            .bind((limit * 4).max(50) as i64)
            .fetch_all(&pool)
            .await?;
            let paths = sqlx::query(
                "WITH w AS (SELECT term, df::float8 AS n FROM commit_df
                            WHERE repo = $1 AND field = 1 AND term = ANY($2::text[])),
                      total AS (SELECT n::float8 AS n FROM commit_stats WHERE repo = $1)
                 SELECT t.doc, sum($3 * greatest(ln((total.n - w.n + 0.5) / (w.n + 0.5)), 1e-6))::float8
                 FROM commit_terms t JOIN w ON w.term = t.term CROSS JOIN total
                 WHERE t.repo = $1 AND t.field = 1
                 GROUP BY t.doc",
            )
            .bind(repo)
            .bind(&words)
            .bind(PATH_WEIGHT)
            .fetch_all(&pool)
            .await?;
            let mut scores: HashMap<i64, f64> = HashMap::new();
            for r in messages.iter().chain(&paths) {
                *scores.entry(r.get(0)).or_default() += r.get::<f64, _>(1);
            }
            let mut ranked: Vec<(i64, f64)> = scores.into_iter().collect();
            // ties: the commit stored first (history is stored newest first)
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            ranked.truncate(limit);
            let docs: Vec<i64> = ranked.iter().map(|r| r.0).collect();
            let sha_of: HashMap<i64, String> =
                sqlx::query("SELECT doc, sha FROM commits WHERE doc = ANY($1)")
                    .bind(&docs)
                    .fetch_all(&pool)
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
            Ok(ranked
                .into_iter()
                .filter_map(|(doc, score)| Some((sha_of.get(&doc)?.clone(), score as f32)))
                .collect())
        })
    }

    fn commits_touching(&self, paths: &[String]) -> Result<Vec<(String, String)>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT sha, path FROM commit_files WHERE repo = $1 AND path = ANY($2)",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn blame_needed(&self, files: &[(String, String)]) -> Result<Vec<String>> {
        let files = files.to_vec();
        if self.repo.is_none() {
            return Ok(files.into_iter().map(|f| f.0).collect());
        }
        self.read(|pool, repo| async move {
            let (paths, blobs): (Vec<String>, Vec<String>) = files.into_iter().unzip();
            let rows = sqlx::query(
                "SELECT a.path FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS a(path, blob, n)
                 LEFT JOIN blame_done d ON d.repo = $1 AND d.path = a.path
                 WHERE d.blob_id IS DISTINCT FROM a.blob ORDER BY a.n",
            )
            .bind(repo)
            .bind(&paths)
            .bind(&blobs)
            .fetch_all(&pool)
            .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn put_blame(&mut self, items: &[FileBlameRecord]) -> Result<()> {
        let items = items.to_vec();
        self.write(|pool, repo| async move {
            let mut tx = pool.begin().await?;
            let paths: Vec<String> = items.iter().map(|f| f.path.clone()).collect();
            sqlx::query("DELETE FROM blame WHERE repo = $1 AND path = ANY($2)")
                .bind(repo)
                .bind(&paths)
                .execute(&mut *tx)
                .await?;
            let mut cols: (Vec<String>, Vec<i32>, Vec<i32>, Vec<String>) = Default::default();
            for f in &items {
                for r in &f.ranges {
                    cols.0.push(f.path.clone());
                    cols.1.push(r.start_line as i32);
                    cols.2.push(r.end_line as i32);
                    cols.3.push(r.sha.clone());
                }
            }
            sqlx::query(
                "INSERT INTO blame(repo, path, start_line, end_line, sha)
                 SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::text[])",
            )
            .bind(repo)
            .bind(&cols.0)
            .bind(&cols.1)
            .bind(&cols.2)
            .bind(&cols.3)
            .execute(&mut *tx)
            .await?;
            let blobs: Vec<String> = items.iter().map(|f| f.blob_id.clone()).collect();
            let methods: Vec<String> = items.iter().map(|f| f.method.clone()).collect();
            sqlx::query(
                "INSERT INTO blame_done(repo, path, blob_id, method)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])
                 ON CONFLICT (repo, path) DO UPDATE SET blob_id = excluded.blob_id, method = excluded.method",
            )
            .bind(repo)
            .bind(&paths)
            .bind(&blobs)
            .bind(&methods)
            .execute(&mut *tx)
            .await?;
            bump(&mut tx, repo).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn blame_of(&self, path: &str) -> Result<Vec<BlameLines>> {
        let path = pg_text(path);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT start_line, end_line, sha FROM blame WHERE repo = $1 AND path = $2 ORDER BY start_line",
            )
            .bind(repo)
            .bind(&path)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| BlameLines {
                    start_line: r.get::<i32, _>(0) as u32,
                    end_line: r.get::<i32, _>(1) as u32,
                    sha: r.get(2),
                })
                .collect())
        })
    }

    fn blame_done_of(&self, paths: &[String]) -> Result<HashMap<String, (String, String)>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT path, blob_id, method FROM blame_done WHERE repo = $1 AND path = ANY($2)",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect())
        })
    }

    fn blame_of_paths(&self, paths: &[String]) -> Result<HashMap<String, Vec<BlameLines>>> {
        let paths = pg_texts(paths);
        self.read(|pool, repo| async move {
            let rows = sqlx::query(
                "SELECT path, start_line, end_line, sha FROM blame
                 WHERE repo = $1 AND path = ANY($2) ORDER BY path, start_line",
            )
            .bind(repo)
            .bind(&paths)
            .fetch_all(&pool)
            .await?;
            let mut out: HashMap<String, Vec<BlameLines>> =
                paths.iter().map(|p| (p.clone(), Vec::new())).collect();
            for r in rows {
                out.entry(r.get(0)).or_default().push(BlameLines {
                    start_line: r.get::<i32, _>(1) as u32,
                    end_line: r.get::<i32, _>(2) as u32,
                    sha: r.get(3),
                });
            }
            Ok(out)
        })
    }

    fn paths_blamed_on(&self, shas: &[String]) -> Result<HashSet<String>> {
        let shas = pg_texts(shas);
        self.read(|pool, repo| async move {
            let rows =
                sqlx::query("SELECT DISTINCT path FROM blame WHERE repo = $1 AND sha = ANY($2)")
                    .bind(repo)
                    .bind(&shas)
                    .fetch_all(&pool)
                    .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }
}

const COMMIT_COLUMNS: &str =
    "sha, author_name, author_email, author_time, committer_time, summary, message, parents";

fn commit_from_row(r: &PgRow) -> CommitRecord {
    CommitRecord {
        sha: r.get(0),
        author_name: r.get(1),
        author_email: r.get(2),
        author_time: r.get(3),
        committer_time: r.get(4),
        summary: r.get(5),
        message: r.get(6),
        parents: r
            .get::<String, _>(7)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        files: Vec::new(),
    }
}

/// How much a path word counts against a message word (as in the
/// embedded store).
const PATH_WEIGHT: f64 = 0.5;

/// The words of a question matched against the words of changed paths
/// (lowercase, stop words and words with punctuation left out), each once.
fn commit_query_words(query: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ken_core::ident::words(query)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| !ken_core::ident::is_stop_word(w))
        .filter(|w| w.chars().all(|c| c.is_alphanumeric()))
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn commit_query_words_are_each_once_in_order() {
        assert_eq!(
            super::commit_query_words("Fix the parser: the parser drops a fix, see parser.rs"),
            ["fix", "parser", "drops", "see", "rs"]
        );
    }
}
