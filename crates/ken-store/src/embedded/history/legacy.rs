//! History as indexes written before the compact layout keep it: a
//! `commits` table with a row of text per commit (hex ids, names and
//! e-mails, the whole message, parents as text), and within those, two
//! older layouts still: `commit_files` (a row of text per changed file)
//! and `commit_fts` (full text with its own copy of every message). Such
//! indexes are read and extended in their own layout.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::{fts_match, query_words, read_summary, status_of, status_value, stored_summary};
use crate::embedded::codec::{PathIds, has_table};
use crate::{Result, StoreError};

/// The table such indexes keep commits in.
#[cfg(test)]
pub(super) const TABLE: &str = "CREATE TABLE commits (
    sha TEXT PRIMARY KEY, author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    author_time INTEGER NOT NULL, committer_time INTEGER NOT NULL,
    summary TEXT NOT NULL, message TEXT NOT NULL, parents TEXT NOT NULL
);";

/// The files of commits as such indexes keep them, a row per file, and as
/// the compact layout kept them before [`super::files`].
#[cfg(test)]
pub(super) const COMMIT_PATHS: &str = "CREATE TABLE commit_paths (
    commit_id INTEGER NOT NULL, seq INTEGER NOT NULL, path_id INTEGER NOT NULL,
    status NOT NULL, old_path_id INTEGER, PRIMARY KEY (commit_id, seq)
) WITHOUT ROWID;
CREATE INDEX commit_paths_path ON commit_paths(path_id);";

pub(crate) fn commit_stats(conn: &Connection) -> Result<(u64, Option<i64>)> {
    Ok(conn.query_row(
        "SELECT count(*), max(committer_time) FROM commits",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Option<i64>>(1)?)),
    )?)
}

pub(crate) fn add_commits(conn: &mut Connection, commits: &[crate::CommitRecord]) -> Result<usize> {
    let tx = conn.transaction()?;
    let mut added = 0;
    {
        let mut exists = tx.prepare_cached("SELECT 1 FROM commits WHERE sha = ?1")?;
        let mut ins = tx.prepare_cached(
            "INSERT INTO commits(sha, author_name, author_email, author_time, committer_time, summary, message, parents)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut files = CommitFilesWriter::new(&tx)?;
        let legacy = legacy_commit_fts(&tx)?;
        let mut ins_fts = if legacy {
            tx.prepare_cached("INSERT INTO commit_fts(sha, message, paths) VALUES (?1, ?2, ?3)")?
        } else {
            tx.prepare_cached("INSERT INTO commit_text(rowid, message, paths) VALUES (?1, ?2, ?3)")?
        };
        for c in commits {
            if exists.exists([&c.sha])? {
                continue;
            }
            ins.execute(params![
                c.sha,
                c.author_name,
                c.author_email,
                c.author_time,
                c.committer_time,
                stored_summary(&c.summary, &c.message),
                c.message,
                c.parents.join(" ")
            ])?;
            let rowid = tx.last_insert_rowid();
            for (seq, (path, status, old)) in c.files.iter().enumerate() {
                files.add(&c.sha, rowid, seq, path, status, old.as_deref())?;
            }
            let paths = path_words(&c.files);
            if legacy {
                ins_fts.execute(params![c.sha, c.message, paths])?;
            } else {
                ins_fts.execute(params![rowid, c.message, paths])?;
            }
            added += 1;
        }
    }
    tx.commit()?;
    Ok(added)
}

fn commit_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<crate::CommitRecord> {
    let parents: String = r.get(7)?;
    Ok(crate::CommitRecord {
        sha: r.get(0)?,
        author_name: r.get(1)?,
        author_email: r.get(2)?,
        author_time: r.get(3)?,
        committer_time: r.get(4)?,
        summary: read_summary(
            r.get_ref(5)?.as_str().unwrap_or(""),
            r.get_ref(6)?.as_str().unwrap_or(""),
        ),
        message: r.get(6)?,
        parents: parents.split_whitespace().map(str::to_string).collect(),
        files: Vec::new(),
    })
}

const COMMIT_COLUMNS: &str =
    "sha, author_name, author_email, author_time, committer_time, summary, message, parents";

pub(crate) fn commits(
    conn: &Connection,
    shas: &[String],
    with_files: bool,
) -> Result<HashMap<String, crate::CommitRecord>> {
    let list = serde_json::to_string(shas).map_err(|e| StoreError::Other(e.to_string()))?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COMMIT_COLUMNS} FROM commits WHERE sha IN (SELECT value FROM json_each(?1))"
    ))?;
    let mut out: HashMap<String, crate::CommitRecord> = stmt
        .query_map([&list], commit_from_row)?
        .map(|c| c.map(|c| (c.sha.clone(), c)))
        .collect::<std::result::Result<_, _>>()?;
    if with_files {
        let mut files = conn.prepare_cached(if legacy_commit_files(conn)? {
            "SELECT sha, path, status, old_path FROM commit_files
             WHERE sha IN (SELECT value FROM json_each(?1)) ORDER BY rowid"
        } else {
            "SELECT c.sha, p.path, cp.status, o.path FROM commits c
             JOIN commit_paths cp ON cp.commit_id = c.rowid JOIN paths p ON p.id = cp.path_id
             LEFT JOIN paths o ON o.id = cp.old_path_id
             WHERE c.sha IN (SELECT value FROM json_each(?1)) ORDER BY cp.commit_id, cp.seq"
        })?;
        let rows = files.query_map([&list], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get(1)?, status_of(r.get_ref(2)?), r.get(3)?),
            ))
        })?;
        for row in rows {
            let (sha, f) = row?;
            if let Some(c) = out.get_mut(&sha) {
                c.files.push(f);
            }
        }
    }
    Ok(out)
}

/// Every commit, newest first (without files).
pub(crate) fn all_commits(conn: &Connection) -> Result<Vec<crate::CommitRecord>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COMMIT_COLUMNS} FROM commits ORDER BY committer_time DESC, rowid"
    ))?;
    let rows = stmt.query_map([], commit_from_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub(crate) fn commit_authors(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT author_name, author_email FROM commits GROUP BY author_name, author_email \
         ORDER BY MAX(committer_time) DESC, author_name, author_email",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Whether the index keeps the files of commits the old way (`commit_files`,
/// a row of text per file with the sha and path repeated, and two indexes
/// over them). Indexes written since keep each path once (`paths`) and a
/// commit's files as (commit row, position, path id, status) in
/// `commit_paths`.
fn legacy_commit_files(conn: &Connection) -> Result<bool> {
    has_table(conn, "commit_files")
}

/// Writes the files of commits in the index's layout (see
/// [`legacy_commit_files`]).
enum CommitFilesWriter<'t> {
    Text(rusqlite::CachedStatement<'t>),
    Paths {
        paths: PathIds<'t>,
        insert: rusqlite::CachedStatement<'t>,
    },
}

impl<'t> CommitFilesWriter<'t> {
    fn new(tx: &'t Connection) -> Result<Self> {
        if legacy_commit_files(tx)? {
            return Ok(CommitFilesWriter::Text(tx.prepare_cached(
                "INSERT INTO commit_files(sha, path, status, old_path) VALUES (?1, ?2, ?3, ?4)",
            )?));
        }
        Ok(CommitFilesWriter::Paths {
            paths: PathIds::new(tx)?,
            insert: tx.prepare_cached(
                "INSERT OR REPLACE INTO commit_paths(commit_id, seq, path_id, status, old_path_id)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
        })
    }

    fn add(
        &mut self,
        sha: &str,
        commit: i64,
        seq: usize,
        path: &str,
        status: &str,
        old: Option<&str>,
    ) -> Result<()> {
        match self {
            CommitFilesWriter::Text(stmt) => {
                stmt.execute(params![sha, path, status, old])?;
            }
            CommitFilesWriter::Paths { paths, insert } => {
                let path_id = paths.id(path)?;
                let old_id = old.map(|o| paths.id(o)).transpose()?;
                insert.execute(params![
                    commit,
                    seq as i64,
                    path_id,
                    status_value(status),
                    old_id
                ])?;
            }
        }
        Ok(())
    }
}

/// Whether the index keeps commit full text the old way (`commit_fts`,
/// which holds its own copy of every message). Indexes written since use
/// `commit_text`, a contentless FTS5 table keyed by the commit's rowid.
fn legacy_commit_fts(conn: &Connection) -> Result<bool> {
    has_table(conn, "commit_fts")
}

/// Commits whose message or changed paths match `query` (FTS5 BM25), best first.
pub(crate) fn search_commits(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<Vec<(String, f32)>> {
    let words = query_words(query);
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let words = fts_match(&words);
    let mut stmt = conn.prepare_cached(if legacy_commit_fts(conn)? {
        "SELECT sha, bm25(commit_fts, 0.0, 1.0, 0.5) FROM commit_fts WHERE commit_fts MATCH ?1 ORDER BY bm25(commit_fts, 0.0, 1.0, 0.5) LIMIT ?2"
    } else {
        "SELECT c.sha, bm25(commit_text, 1.0, 0.5) AS score FROM commit_text JOIN commits c ON c.rowid = commit_text.rowid WHERE commit_text MATCH ?1 ORDER BY score LIMIT ?2"
    })?;
    let rows = stmt.query_map(params![words, limit as i64], |r| {
        Ok((r.get::<_, String>(0)?, -(r.get::<_, f64>(1)? as f32)))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// (sha, path) of commits that changed any of `paths`.
pub(crate) fn commits_touching(
    conn: &Connection,
    paths: &[String],
) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(if legacy_commit_files(conn)? {
        "SELECT sha, path FROM commit_files WHERE path = ?1"
    } else {
        "SELECT c.sha, p.path FROM paths p JOIN commit_paths cp ON cp.path_id = p.id
         JOIN commits c ON c.rowid = cp.commit_id WHERE p.path = ?1"
    })?;
    let mut out = Vec::new();
    for p in paths {
        let rows = stmt.query_map([p], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

/// The words of changed paths for full-text search: `src/flask/app.py` →
/// `src flask app py`.
fn path_words(files: &[(String, String, Option<String>)]) -> String {
    let mut out = String::new();
    for (path, _, _) in files {
        out.push_str(&path.replace(['/', '.', '_', '-'], " "));
        out.push(' ');
    }
    out
}
