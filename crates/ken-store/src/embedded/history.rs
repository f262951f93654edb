//! History in the embedded store: commits, who wrote them, the files each
//! changed, and full-text search over their messages and paths.
//!
//! The layout, compact because history is most of a large repository's
//! index once file text is compressed:
//! - `history`: a row per commit: its id as raw bytes (text when it is not
//!   lowercase hex), the author as a `people` id, the two times, the
//!   summary only when the message's first line would not give it back,
//!   and the parents' ids packed as raw bytes; looked up by id through an
//!   index of the id's first 4 bytes (a third of the size of an index of
//!   the whole id; the rare rows sharing a prefix are told apart by the
//!   table);
//! - `people`: each (name, e-mail) once;
//! - `message_blocks`: the messages of consecutive `history` rows,
//!   compressed together ([`blocks`]);
//! - `file_blocks`, `path_commits` and `paths`: the files each commit
//!   changed, by commit and by path, each path once (`paths` is shared
//!   with blame; [`files`]);
//! - `commit_text`: contentless FTS5 over messages, keyed by the `history`
//!   row. Changed paths are matched through `paths` and `path_commits`
//!   instead of a second copy of their words per commit ([`path_matches`]).
//!
//! Indexes written before keep a `commits` table instead; [`legacy`] reads
//! and extends them in their own layout.

mod blocks;
mod files;
mod legacy;

use std::collections::{HashMap, HashSet};

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OptionalExtension, params};

use crate::embedded::codec::{has_table, hex_text, hex_value, is_lower_hex};
use crate::embedded::texts;
use crate::{CommitRecord, Result, StoreError};
use blocks::{BlockWriter, Blocks, Table};
pub(crate) use files::move_commit_paths;
use files::{FilesReader, FilesWriter};

/// Whether the index keeps history in the layout written before this one
/// (a `commits` table).
fn legacy(conn: &Connection) -> Result<bool> {
    has_table(conn, "commits")
}

pub(crate) fn commit_stats(conn: &Connection) -> Result<(u64, Option<i64>)> {
    if legacy(conn)? {
        return legacy::commit_stats(conn);
    }
    Ok(conn.query_row(
        "SELECT count(*), max(committer_time) FROM history",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Option<i64>>(1)?)),
    )?)
}

/// Add the commits not yet stored; returns how many were new.
pub(crate) fn add_commits(conn: &mut Connection, commits: &[CommitRecord]) -> Result<usize> {
    if legacy(conn)? {
        return legacy::add_commits(conn, commits);
    }
    let tx = conn.transaction()?;
    let mut added = 0;
    {
        let mut row_of = tx.prepare_cached(&format!("SELECT id FROM history WHERE {BY_SHA}"))?;
        // the rows the new commits will take, so that a parent added in
        // this call can be named by its row too
        let next: i64 = tx.query_row("SELECT coalesce(max(id), 0) + 1 FROM history", [], |r| {
            r.get(0)
        })?;
        let mut fresh: Vec<&CommitRecord> = Vec::new();
        let mut rows: HashMap<&str, i64> = HashMap::new();
        for c in commits {
            if rows.contains_key(c.sha.as_str()) || row_of.exists([hex_value(&c.sha)])? {
                continue;
            }
            rows.insert(&c.sha, next + fresh.len() as i64);
            fresh.push(c);
        }
        let mut ins = tx.prepare_cached(
            "INSERT INTO history(id, sha, author, author_time, committer_time, summary, parents)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut people = PeopleIds::new(&tx)?;
        let mut files = FilesWriter::new(&tx)?;
        let mut ins_text =
            tx.prepare_cached("INSERT INTO commit_text(rowid, message) VALUES (?1, ?2)")?;
        let mut messages = BlockWriter::new(Table::Messages);
        for c in fresh {
            let id = rows[c.sha.as_str()];
            let mut parent_rows = Vec::with_capacity(c.parents.len());
            for p in &c.parents {
                match rows.get(p.as_str()) {
                    Some(r) => parent_rows.push(*r),
                    None => {
                        if let Some(r) =
                            row_of.query_row([hex_value(p)], |r| r.get(0)).optional()?
                        {
                            parent_rows.push(r);
                        }
                    }
                }
            }
            let parents = if parent_rows.len() == c.parents.len() {
                pack_parent_rows(id, &parent_rows)
            } else {
                pack_ids(&c.parents)
            };
            let author = people.id(&c.author_name, &c.author_email)?;
            ins.execute(params![
                id,
                hex_value(&c.sha),
                author,
                c.author_time,
                c.committer_time,
                stored_summary(&c.summary, &c.message),
                parents,
            ])?;
            messages.push(&tx, id, c.message.as_bytes().to_vec())?;
            files.add(&tx, id, &c.files)?;
            ins_text.execute(params![id, c.message])?;
            added += 1;
        }
        messages.write(&tx)?;
        files.finish(&tx)?;
    }
    tx.commit()?;
    Ok(added)
}

/// The tables of this layout (created when missing).
pub(crate) const TABLES: &str = "
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY, sha BLOB NOT NULL, author INTEGER NOT NULL,
    author_time INTEGER NOT NULL, committer_time INTEGER NOT NULL,
    summary TEXT NOT NULL, parents BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS history_sha ON history(substr(sha, 1, 4));
CREATE VIRTUAL TABLE IF NOT EXISTS commit_text USING fts5(message, content='');
";

/// The condition finding the `history` row of the commit id `?1` (as
/// [`hex_value`] stores it) through the `history_sha` index.
const BY_SHA: &str = "substr(sha, 1, 4) = substr(?1, 1, 4) AND sha = ?1";

/// Bring the history of an index written before to this layout, in one
/// transaction: the unique index of whole commit ids gives way to
/// `history_sha`, and the full text drops the words of changed paths.
/// Nothing to do for indexes already in it, or whose history is in a
/// `commits` table (which keep their own layout).
pub(crate) fn compact(conn: &mut Connection) -> Result<()> {
    if legacy(conn)? {
        return Ok(());
    }
    let sql_of = |name: &str| -> Result<String> {
        Ok(conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or_default())
    };
    let unique_ids = sql_of("history")?.contains("UNIQUE");
    let path_words = sql_of("commit_text")?.contains("paths");
    if !unique_ids && !path_words {
        return Ok(());
    }
    let tx = conn.transaction()?;
    if unique_ids {
        tx.execute_batch(
            "ALTER TABLE history RENAME TO history_before;
             DROP INDEX IF EXISTS history_sha;",
        )?;
        tx.execute_batch(TABLES)?;
        tx.execute_batch(
            "INSERT INTO history SELECT id, sha, author, author_time, committer_time, summary, parents
             FROM history_before;
             DROP TABLE history_before;",
        )?;
    }
    if path_words {
        tx.execute_batch("DROP TABLE commit_text")?;
        tx.execute_batch(TABLES)?;
        let mut messages = Blocks::new(&tx, Table::Messages);
        messages.load_all()?;
        let ids: Vec<i64> = tx
            .prepare("SELECT id FROM history ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        let mut ins = tx.prepare("INSERT INTO commit_text(rowid, message) VALUES (?1, ?2)")?;
        for id in ids {
            ins.execute(params![id, message_of(&mut messages, id)?])?;
        }
    }
    tx.commit()?;
    Ok(())
}

const COLUMNS: &str =
    "h.id, h.sha, p.name, p.email, h.author_time, h.committer_time, h.summary, h.parents
     FROM history h JOIN people p ON p.id = h.author";

/// A row of [`COLUMNS`]: the commit with its message (and its summary,
/// which may come from the message) still to fill in, and its parents
/// when they are named by row.
struct StoredCommit {
    id: i64,
    summary: String,
    parent_rows: Option<Vec<i64>>,
    commit: CommitRecord,
}

fn commit_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredCommit> {
    let id = r.get(0)?;
    let (parents, parent_rows) = match unpack_parents(id, r.get_ref(7)?) {
        StoredParents::Ids(ids) => (ids, None),
        StoredParents::Rows(rows) => (Vec::new(), Some(rows)),
    };
    Ok(StoredCommit {
        id,
        summary: r.get(6)?,
        parent_rows,
        commit: CommitRecord {
            sha: hex_text(r.get_ref(1)?),
            author_name: r.get(2)?,
            author_email: r.get(3)?,
            author_time: r.get(4)?,
            committer_time: r.get(5)?,
            parents,
            ..CommitRecord::default()
        },
    })
}

/// The `history` row of commit `sha`, if it is stored there.
pub(crate) fn row_of(conn: &Connection, sha: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(&format!("SELECT id FROM history WHERE {BY_SHA}"))?
        .query_row([hex_value(sha)], |r| r.get(0))
        .optional()?)
}

/// The id of the commit in `history` row `row`, if there is one.
pub(crate) fn sha_of(conn: &Connection, row: i64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT sha FROM history WHERE id = ?1")?
        .query_row([row], |r| Ok(hex_text(r.get_ref(0)?)))
        .optional()?)
}

/// The id of the commit in `history` row `id` (a parent named by row, a
/// full-text hit), which must be there.
fn sha_of_row(conn: &Connection, id: i64) -> Result<String> {
    sha_of(conn, id)?.ok_or_else(|| missing_row(id))
}

/// A commit row named by a parent or the full text that `history` lacks.
fn missing_row(row: i64) -> StoreError {
    StoreError::Other(format!(
        "stored history: commit row {row}, named as a parent or by the full text, is missing"
    ))
}

/// The commits named by `shas` that are stored, by id; with the files each
/// changed when `with_files`.
pub(crate) fn commits(
    conn: &Connection,
    shas: &[String],
    with_files: bool,
) -> Result<HashMap<String, CommitRecord>> {
    if legacy(conn)? {
        return legacy::commits(conn, shas, with_files);
    }
    let mut by_sha = conn.prepare_cached(&format!("SELECT {COLUMNS} WHERE {BY_SHA}"))?;
    let mut files = FilesReader::new(conn);
    let mut messages = Blocks::new(conn, Table::Messages);
    let mut out = HashMap::new();
    for sha in shas {
        let Some(StoredCommit {
            id,
            summary,
            parent_rows,
            commit: mut c,
        }) = by_sha
            .query_row([hex_value(sha)], commit_from_row)
            .optional()?
        else {
            continue;
        };
        for row in parent_rows.unwrap_or_default() {
            c.parents.push(sha_of_row(conn, row)?);
        }
        c.message = message_of(&mut messages, id)?;
        c.summary = read_summary(&summary, &c.message);
        if with_files {
            c.files = files.get(id)?;
        }
        out.insert(c.sha.clone(), c);
    }
    Ok(out)
}

/// The commits named by `shas` that are stored, with who made them and
/// when only (see [`crate::HistoryStore::commit_heads`]): no message block
/// is unpacked and no parent looked up.
pub(crate) fn commit_heads(
    conn: &Connection,
    shas: &[String],
) -> Result<HashMap<String, CommitRecord>> {
    if legacy(conn)? {
        return Ok(crate::heads_only(legacy::commits(conn, shas, false)?));
    }
    let mut by_sha = conn.prepare_cached(&format!(
        "SELECT h.sha, p.name, p.email, h.author_time, h.committer_time
         FROM history h JOIN people p ON p.id = h.author WHERE {BY_SHA}"
    ))?;
    let mut out = HashMap::new();
    for sha in shas {
        let head = by_sha
            .query_row([hex_value(sha)], |r| {
                Ok(CommitRecord {
                    sha: hex_text(r.get_ref(0)?),
                    author_name: r.get(1)?,
                    author_email: r.get(2)?,
                    author_time: r.get(3)?,
                    committer_time: r.get(4)?,
                    ..CommitRecord::default()
                })
            })
            .optional()?;
        if let Some(c) = head {
            out.insert(c.sha.clone(), c);
        }
    }
    Ok(out)
}

/// Every commit, newest first (without files); commits of the same time in
/// the order they were stored, as the layout before gave them (what is
/// learned from history depends on this order).
pub(crate) fn all_commits(conn: &Connection) -> Result<Vec<CommitRecord>> {
    if legacy(conn)? {
        return legacy::all_commits(conn);
    }
    let mut messages = Blocks::new(conn, Table::Messages);
    messages.load_all()?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} ORDER BY h.committer_time DESC, h.id"
    ))?;
    let stored: Vec<StoredCommit> = stmt
        .query_map([], commit_from_row)?
        .collect::<std::result::Result<_, _>>()?;
    let sha_of: HashMap<i64, String> = stored
        .iter()
        .map(|s| (s.id, s.commit.sha.clone()))
        .collect();
    let mut out = Vec::with_capacity(stored.len());
    for s in stored {
        let mut c = s.commit;
        for row in s.parent_rows.into_iter().flatten() {
            let sha = sha_of.get(&row).ok_or_else(|| missing_row(row))?;
            c.parents.push(sha.clone());
        }
        c.message = message_of(&mut messages, s.id)?;
        c.summary = read_summary(&s.summary, &c.message);
        out.push(c);
    }
    Ok(out)
}

/// Every commit's author, author time and committer time.
pub(crate) fn commit_times(conn: &Connection) -> Result<Vec<crate::CommitTime>> {
    let sql = if legacy(conn)? {
        "SELECT author_name, author_email, author_time, committer_time FROM commits"
    } else {
        "SELECT p.name, p.email, h.author_time, h.committer_time
         FROM history h JOIN people p ON p.id = h.author"
    };
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Every (name, e-mail) that authored a commit, most recent first.
pub(crate) fn commit_authors(conn: &Connection) -> Result<Vec<(String, String)>> {
    if legacy(conn)? {
        return legacy::commit_authors(conn);
    }
    let mut stmt = conn.prepare(
        "SELECT p.name, p.email FROM history h JOIN people p ON p.id = h.author \
         GROUP BY h.author ORDER BY MAX(h.committer_time) DESC, p.name, p.email",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Commits whose message or changed paths match `query`, best first: the
/// message's FTS5 BM25 plus, for each word of the question that is a word
/// of a changed path, [`PATH_WEIGHT`] times that word's BM25 weight over
/// commits ([`path_matches`]).
pub(crate) fn search_commits(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<Vec<(String, f32)>> {
    if legacy(conn)? {
        return legacy::search_commits(conn, query, limit);
    }
    let words = query_words(query);
    if words.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let fts = fts_match(&words);
    // a commit just out of the messages' top can still win on its paths
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, bm25(commit_text) FROM commit_text
         WHERE commit_text MATCH ?1 ORDER BY bm25(commit_text) LIMIT ?2",
    )?;
    let mut scores: HashMap<i64, f64> = HashMap::new();
    for r in stmt.query_map(params![fts, (limit * 4).max(50) as i64], |r| {
        Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?))
    })? {
        let (row, score) = r?;
        scores.insert(row, score);
    }
    for (row, score) in path_matches(conn, &words)? {
        *scores.entry(row).or_default() += score;
    }
    let mut ranked: Vec<(i64, f64)> = scores.into_iter().collect();
    // ties: the newer commit (rows are stored newest first)
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(limit);
    ranked
        .into_iter()
        .map(|(row, score)| Ok((sha_of_row(conn, row)?, score as f32)))
        .collect()
}

/// How much a path word counts against a message word (the weight of the
/// path column when path words were kept in the full text).
const PATH_WEIGHT: f64 = 0.5;

/// The commits that changed a file with one of `words` among its path's
/// words (`src/flask/app.py`: src, flask, app, py), by `history` row: per
/// word, [`PATH_WEIGHT`] times FTS5's BM25 weight of a term found in `n`
/// of the `total` commits, once per commit (a commit is not counted
/// longer for changing more files).
fn path_matches(conn: &Connection, words: &[String]) -> Result<HashMap<i64, f64>> {
    let total: i64 = conn.query_row("SELECT count(*) FROM history", [], |r| r.get(0))?;
    let mut paths = conn.prepare_cached(
        "SELECT p.path, pc.data FROM paths p JOIN path_commits pc ON pc.path_id = p.id
         WHERE instr(lower(p.path), ?1) > 0 OR p.path GLOB '*[^ -~]*'",
    )?;
    let mut out: HashMap<i64, f64> = HashMap::new();
    for word in words {
        // (SQLite lowers ASCII only: paths with other letters are all read)
        let mut rows: HashSet<i64> = HashSet::new();
        let mut found = paths.query([word])?;
        while let Some(r) = found.next()? {
            let path: String = r.get(0)?;
            let has_word = path
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w.to_lowercase() == *word);
            if has_word {
                let data: Vec<u8> = r.get(1)?;
                rows.extend(files::unpack_rows(&data)?);
            }
        }
        let n = rows.len() as f64;
        // FTS5's idf, never quite zero
        let idf = ((total as f64 - n + 0.5) / (n + 0.5)).ln().max(1e-6);
        for row in rows {
            *out.entry(row).or_default() += PATH_WEIGHT * idf;
        }
    }
    Ok(out)
}

/// (sha, path) of commits that changed any of `paths`.
pub(crate) fn commits_touching(
    conn: &Connection,
    paths: &[String],
) -> Result<Vec<(String, String)>> {
    if legacy(conn)? {
        return legacy::commits_touching(conn, paths);
    }
    files::commits_touching(conn, paths)
}

fn message_of(blocks: &mut Blocks<'_>, id: i64) -> Result<String> {
    Ok(String::from_utf8_lossy(blocks.get(id)?).into_owned())
}

// ---- the parts of a stored commit ----

/// Commit ids packed as one value: when all are lowercase hex of one
/// length, a byte giving that length in bytes and then their raw bytes;
/// else their text joined by spaces.
fn pack_ids(ids: &[String]) -> Value {
    let width = ids.first().map_or(0, |s| s.len() / 2);
    let packable =
        (1..=255).contains(&width) && ids.iter().all(|s| s.len() == width * 2 && is_lower_hex(s));
    if ids.is_empty() {
        return Value::Blob(Vec::new());
    }
    if !packable {
        return Value::Text(ids.join(" "));
    }
    let mut out = Vec::with_capacity(1 + width * ids.len());
    out.push(width as u8);
    for id in ids {
        out.extend(ken_core::decode_hex(id).unwrap_or_default());
    }
    Value::Blob(out)
}

/// A commit's parents as stored: their ids, or the `history` rows that
/// hold them.
#[derive(Debug, PartialEq)]
enum StoredParents {
    Ids(Vec<String>),
    Rows(Vec<i64>),
}

/// Parents named by their `history` rows, relative to the commit's own
/// row `id` (a parent is nearly always one of the next rows, as history is
/// stored newest first): a 0 byte, which no width of [`pack_ids`] is, then
/// per parent the difference, zigzag LEB128. Two or three bytes where the
/// raw ids take 21 or 41.
fn pack_parent_rows(id: i64, rows: &[i64]) -> Value {
    if rows.is_empty() {
        return Value::Blob(Vec::new());
    }
    let mut out = vec![0u8];
    for r in rows {
        let d = r - id;
        texts::put_varint(&mut out, ((d << 1) ^ (d >> 63)) as u64);
    }
    Value::Blob(out)
}

fn unpack_parents(id: i64, v: ValueRef<'_>) -> StoredParents {
    let ValueRef::Blob([0, rest @ ..]) = v else {
        return StoredParents::Ids(unpack_ids(v));
    };
    let mut rows = Vec::new();
    let mut at = 0;
    while let Some(z) = texts::get_varint(rest, &mut at) {
        let d = (z >> 1) as i64 ^ -((z & 1) as i64);
        rows.push(id.wrapping_add(d));
    }
    StoredParents::Rows(rows)
}

fn unpack_ids(v: ValueRef<'_>) -> Vec<String> {
    match v {
        ValueRef::Blob([]) => Vec::new(),
        ValueRef::Blob([width, rest @ ..]) if *width > 0 => rest
            .chunks(*width as usize)
            .map(ken_core::encode_hex)
            .collect(),
        ValueRef::Text(t) => String::from_utf8_lossy(t)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// What the summary is when a commit stores none: its message's first
/// line, trimmed.
fn summary_of(message: &str) -> &str {
    message.trim_start().lines().next().unwrap_or("").trim()
}

/// A commit's summary as stored: "" when [`summary_of`] gives it back from
/// the message (nearly always: it is the message's first line), a NUL
/// for an empty summary that the message would not give back, else itself.
fn stored_summary<'a>(summary: &'a str, message: &str) -> &'a str {
    if summary_of(message) == summary {
        ""
    } else if summary.is_empty() {
        "\0"
    } else {
        summary
    }
}

fn read_summary(stored: &str, message: &str) -> String {
    match stored {
        "" => summary_of(message).to_string(),
        "\0" => String::new(),
        s => s.to_string(),
    }
}

/// Change statuses stored as a small number (others as their text).
const STATUSES: [&str; 4] = ["added", "modified", "deleted", "renamed"];

fn status_value(status: &str) -> Value {
    match STATUSES.iter().position(|s| *s == status) {
        Some(i) => Value::Integer(i as i64),
        None => Value::Text(status.to_string()),
    }
}

fn status_of(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Integer(i) => STATUSES
            .get(i as usize)
            .copied()
            .unwrap_or("modified")
            .into(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => "modified".into(),
    }
}

/// An FTS5 query of `words` joined by OR, each quoted so that nothing the
/// user typed is FTS5 syntax.
fn fts_match(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The question's plain words, lowercased, without stop words, each once.
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = ken_core::ident::words(query)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| !ken_core::ident::is_stop_word(w))
        .collect();
    let mut seen = HashSet::new();
    words.retain(|w| seen.insert(w.clone()));
    words
}

/// Each (name, e-mail)'s id in `people`, added when new (within one
/// transaction).
struct PeopleIds<'t> {
    intern: rusqlite::CachedStatement<'t>,
    lookup: rusqlite::CachedStatement<'t>,
    ids: HashMap<(String, String), i64>,
}

impl<'t> PeopleIds<'t> {
    fn new(tx: &'t Connection) -> Result<Self> {
        Ok(PeopleIds {
            intern: tx
                .prepare_cached("INSERT OR IGNORE INTO people(name, email) VALUES (?1, ?2)")?,
            lookup: tx.prepare_cached("SELECT id FROM people WHERE name = ?1 AND email = ?2")?,
            ids: HashMap::new(),
        })
    }

    fn id(&mut self, name: &str, email: &str) -> Result<i64> {
        let key = (name.to_string(), email.to_string());
        if let Some(id) = self.ids.get(&key) {
            return Ok(*id);
        }
        self.intern.execute([name, email])?;
        let id = self.lookup.query_row([name, email], |r| r.get(0))?;
        self.ids.insert(key, id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::schema::open;

    /// The layouts history is read and written in: this one, the
    /// `commits` table, and that table with the older files and full text
    /// tables.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Layout {
        Compact,
        Commits,
        Oldest,
    }

    const LAYOUTS: [Layout; 3] = [Layout::Compact, Layout::Commits, Layout::Oldest];

    impl Layout {
        fn open(self) -> (tempfile::TempDir, Connection) {
            let dir = tempfile::tempdir().unwrap();
            let conn = open(&dir.path().join("index.sqlite")).unwrap();
            if self != Layout::Compact {
                // with the full text those indexes were written with
                conn.execute_batch(
                    "DROP TABLE commit_text;
                     CREATE VIRTUAL TABLE commit_text USING fts5(message, paths, content='');",
                )
                .unwrap();
                conn.execute_batch(legacy::TABLE).unwrap();
            }
            if self == Layout::Commits {
                conn.execute_batch(legacy::COMMIT_PATHS).unwrap();
            }
            if self == Layout::Oldest {
                conn.execute_batch(
                    "CREATE VIRTUAL TABLE commit_fts USING fts5(sha UNINDEXED, message, paths);
                     CREATE TABLE commit_files (sha TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, old_path TEXT);",
                )
                .unwrap();
            }
            (dir, conn)
        }
    }

    #[test]
    fn commit_search_without_a_second_copy_of_messages_and_in_old_indexes() {
        let commit = |sha: &str, message: &str, path: &str| crate::CommitRecord {
            sha: sha.into(),
            author_name: "Ada".into(),
            message: message.into(),
            summary: message.into(),
            files: vec![(path.into(), "modified".into(), None)],
            ..crate::CommitRecord::default()
        };
        let mut first = commit("c1", "Fix the session refresh race", "src/auth/session.py");
        // more files than commits: the full text must follow the commit's row
        first
            .files
            .push(("src/auth/tokens.py".into(), "modified".into(), None));
        first
            .files
            .push(("src/auth/store.py".into(), "modified".into(), None));
        let commits = [
            first,
            commit("c2", "Add retries to payments", "src/pay/retry.py"),
            commit("c3", "Document the session store", "docs/store.md"),
        ];
        for layout in LAYOUTS {
            let (_dir, mut conn) = layout.open();
            let legacy = layout == Layout::Oldest;
            assert_eq!(add_commits(&mut conn, &commits).unwrap(), 3);
            assert_eq!(add_commits(&mut conn, &commits[..1]).unwrap(), 0);
            let hits = search_commits(&conn, "session refresh", 10).unwrap();
            let shas: Vec<&str> = hits.iter().map(|(s, _)| s.as_str()).collect();
            assert_eq!(shas, ["c1", "c3"], "{layout:?}");
            assert!(hits[0].1 > hits[1].1);
            let by_path = search_commits(&conn, "retry", 10).unwrap();
            assert_eq!(by_path[0].0, "c2", "{layout:?}");
            let stored: i64 = conn
                .query_row("SELECT count(*) FROM commit_text", [], |r| r.get(0))
                .unwrap_or(0);
            assert_eq!(stored == 3, !legacy);
        }
    }

    #[test]
    fn summaries_are_given_back_from_messages_or_stored() {
        for (summary, message) in [
            ("Fix the parser", "Fix the parser\n\nIt lost a token."),
            ("Fix the parser", "  Fix the parser  \n"),
            ("", ""),
            ("", "\n\nbody only"),
            (
                "Fix the parser and the lexer",
                "Fix the parser\nand the lexer\n\nbody",
            ),
            ("title", "other message"),
        ] {
            let stored = stored_summary(summary, message);
            assert_eq!(read_summary(stored, message), summary, "{message:?}");
        }
        assert_eq!(
            stored_summary("Fix the parser", "Fix the parser\n\nbody"),
            ""
        );
        // an index written before stored every summary: read as it is
        assert_eq!(read_summary("Fix it", "Fix it\n"), "Fix it");
    }

    #[test]
    fn commit_files_keep_each_path_once_and_old_rows_are_still_read() {
        let commit = |sha: &str, files: &[(&str, &str, Option<&str>)]| crate::CommitRecord {
            sha: sha.into(),
            author_name: "Ada".into(),
            message: format!("change {sha}"),
            files: files
                .iter()
                .map(|(p, s, o)| (p.to_string(), s.to_string(), o.map(str::to_string)))
                .collect(),
            ..crate::CommitRecord::default()
        };
        let written = [
            commit(
                "c1",
                &[("src/app.py", "added", None), ("README", "added", None)],
            ),
            commit(
                "c2",
                &[
                    ("src/core.py", "renamed", Some("src/app.py")),
                    ("README", "modified", None),
                    ("odd", "typechange", None),
                ],
            ),
            commit("c3", &[("README", "deleted", None)]),
        ];
        for layout in LAYOUTS {
            let (_dir, mut conn) = layout.open();
            let legacy = layout == Layout::Oldest;
            add_commits(&mut conn, &written).unwrap();
            let shas: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
            let got = commits(&conn, &shas, true).unwrap();
            for c in &written {
                assert_eq!(got[&c.sha].files, c.files, "{} {layout:?}", c.sha);
            }
            let mut touching =
                commits_touching(&conn, &["README".into(), "src/app.py".into()]).unwrap();
            touching.sort();
            let want: Vec<(String, String)> = [
                ("c1", "README"),
                ("c1", "src/app.py"),
                ("c2", "README"),
                ("c3", "README"),
            ]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
            assert_eq!(touching, want, "{layout:?}");
            let interned: i64 = conn
                .query_row("SELECT count(*) FROM paths", [], |r| r.get(0))
                .unwrap();
            assert_eq!(interned, if legacy { 0 } else { 4 }, "each path once");
        }
    }

    /// Commits as git gives them, and some it never does: ids that are
    /// not lowercase hex, odd parents, summaries that are not the first
    /// line, empty and non-ASCII messages.
    fn varied_commits(n: usize) -> Vec<CommitRecord> {
        (0..n)
            .map(|i| {
                let sha = match i % 7 {
                    5 => format!("C{i}"),
                    6 => format!("{:064x}", i),
                    _ => format!("{:040x}", i * 7919 + 1),
                };
                let parents = match i % 5 {
                    0 => vec![],
                    1 => vec![format!("{:040x}", i)],
                    2 => vec![format!("{:040x}", i), format!("{:040x}", i + 1)],
                    3 => vec!["HEAD~1".to_string(), format!("{:040x}", i)],
                    _ => vec![format!("{:040X}", i)],
                };
                let message = match i % 4 {
                    0 => format!("Fix bug {i} in the parser\n\nThe lexer dropped a token."),
                    1 => String::new(),
                    2 => format!("Überarbeitung {i} — naïve café ✓\n"),
                    _ => format!(
                        "Refactor module {i}\n\n{}",
                        "Long body line. ".repeat(i % 40)
                    ),
                };
                CommitRecord {
                    sha,
                    author_name: format!("Author {}", i % 9),
                    author_email: format!("a{}@example.org", i % 11),
                    author_time: 1_600_000_000 + i as i64,
                    committer_time: 1_600_000_000 + (i as i64 * 37) % 1000,
                    summary: if i % 13 == 0 {
                        "another title".into()
                    } else {
                        summary_of(&message).to_string()
                    },
                    message,
                    parents,
                    files: vec![(format!("src/m{}.py", i % 17), "modified".into(), None)],
                }
            })
            .collect()
    }

    #[test]
    fn every_field_of_a_commit_comes_back_in_every_layout() {
        // more than a block of messages, written in three calls
        let written = varied_commits(blocks::BLOCK_VALUES + 140);
        for layout in LAYOUTS {
            let (_dir, mut conn) = layout.open();
            let mut added = 0;
            for part in [&written[..10], &written[10..300], &written[300..]] {
                added += add_commits(&mut conn, part).unwrap();
            }
            assert_eq!(added, written.len(), "{layout:?}");
            assert_eq!(add_commits(&mut conn, &written[5..20]).unwrap(), 0);
            let shas: Vec<String> = written.iter().map(|c| c.sha.clone()).collect();
            let got = commits(&conn, &shas, true).unwrap();
            assert_eq!(got.len(), written.len(), "{layout:?}");
            for c in &written {
                assert_eq!(&got[&c.sha], c, "{layout:?}");
            }
            let all = all_commits(&conn).unwrap();
            assert_eq!(all.len(), written.len());
            assert!(
                all.windows(2)
                    .all(|w| w[0].committer_time >= w[1].committer_time)
            );
            for c in &all {
                let mut want = got[&c.sha].clone();
                want.files.clear();
                assert_eq!(c, &want, "{layout:?}");
            }
            let (count, newest) = commit_stats(&conn).unwrap();
            assert_eq!(count as usize, written.len());
            assert_eq!(newest, written.iter().map(|c| c.committer_time).max());
            let authors = commit_authors(&conn).unwrap();
            let distinct: std::collections::HashSet<(String, String)> = written
                .iter()
                .map(|c| (c.author_name.clone(), c.author_email.clone()))
                .collect();
            assert_eq!(authors.len(), distinct.len(), "{layout:?}");
            let unknown = commits(&conn, &["f00d".to_string(), "nope".to_string()], false);
            assert!(unknown.unwrap().is_empty());
            let touching = commits_touching(&conn, &["src/m3.py".to_string()]).unwrap();
            let want = written
                .iter()
                .filter(|c| c.files[0].0 == "src/m3.py")
                .count();
            assert_eq!(touching.len(), want, "{layout:?}");
            assert!(touching.iter().all(|(sha, _)| got.contains_key(sha)));
            // every path at once (one pass over the history for the many
            // rows) answers as each path alone (a look-up per row)
            let paths: Vec<String> = (0..17).map(|i| format!("src/m{i}.py")).collect();
            let mut every = commits_touching(&conn, &paths).unwrap();
            assert_eq!(every.len(), written.len(), "{layout:?}");
            let mut each: Vec<(String, String)> = paths
                .iter()
                .flat_map(|p| commits_touching(&conn, std::slice::from_ref(p)).unwrap())
                .collect();
            every.sort();
            each.sort();
            assert_eq!(every, each, "{layout:?}");
        }
    }

    #[test]
    fn commit_paths_of_the_layout_before_move_to_file_blocks_when_opened() {
        let written = varied_commits(blocks::BLOCK_VALUES + 40);
        let mut with_files = written.clone();
        with_files[3].files.push((
            "src/new.py".into(),
            "renamed".into(),
            Some("src/old.py".into()),
        ));
        with_files[4].files.clear();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.sqlite");
        let mut conn = open(&db).unwrap();
        add_commits(&mut conn, &with_files).unwrap();
        let shas: Vec<String> = with_files.iter().map(|c| c.sha.clone()).collect();
        let want = commits(&conn, &shas, true).unwrap();
        let touching = |conn: &Connection| {
            let mut t = commits_touching(conn, &["src/m3.py".into(), "src/new.py".into()]).unwrap();
            t.sort();
            t
        };
        let want_touching = touching(&conn);
        assert!(want_touching.len() > 10);
        // the index as the layout before wrote it: a row per changed file
        conn.execute_batch(legacy::COMMIT_PATHS).unwrap();
        for c in &with_files {
            let id: i64 = conn
                .query_row(
                    "SELECT id FROM history WHERE sha = ?1",
                    [hex_value(&c.sha)],
                    |r| r.get(0),
                )
                .unwrap();
            for (seq, (path, status, old)) in c.files.iter().enumerate() {
                let path_id = |p: &str| -> i64 {
                    conn.query_row("SELECT id FROM paths WHERE path = ?1", [p], |r| r.get(0))
                        .unwrap()
                };
                conn.execute(
                    "INSERT INTO commit_paths VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        id,
                        seq as i64,
                        path_id(path),
                        status_value(status),
                        old.as_deref().map(path_id)
                    ],
                )
                .unwrap();
            }
        }
        conn.execute_batch("DELETE FROM file_blocks; DELETE FROM path_commits;")
            .unwrap();
        drop(conn);
        let mut conn = open(&db).unwrap();
        assert!(!has_table(&conn, "commit_paths").unwrap());
        assert_eq!(commits(&conn, &shas, true).unwrap(), want);
        assert_eq!(touching(&conn), want_touching);
        // and history goes on from there
        add_commits(&mut conn, &varied_commits(blocks::BLOCK_VALUES + 60)[290..]).unwrap();
        assert!(touching(&conn).len() > want_touching.len());
    }

    #[test]
    fn history_with_whole_id_index_and_path_words_is_compacted_when_opened() {
        let written = varied_commits(blocks::BLOCK_VALUES + 40);
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.sqlite");
        let mut conn = open(&db).unwrap();
        // the tables as the layout before made them
        conn.execute_batch(
            "DROP TABLE history;
             DROP TABLE commit_text;
             CREATE TABLE history (
                 id INTEGER PRIMARY KEY, sha BLOB NOT NULL UNIQUE, author INTEGER NOT NULL,
                 author_time INTEGER NOT NULL, committer_time INTEGER NOT NULL,
                 summary TEXT NOT NULL, parents BLOB NOT NULL);
             CREATE VIRTUAL TABLE commit_text USING fts5(message, paths, content='');",
        )
        .unwrap();
        // rows written by this layout's code into those tables
        add_commits(&mut conn, &written).unwrap();
        let shas: Vec<String> = written.iter().map(|c| c.sha.clone()).collect();
        let want = commits(&conn, &shas, true).unwrap();
        let want_all = all_commits(&conn).unwrap();
        drop(conn);
        let mut conn = open(&db).unwrap();
        let sql = |name: &str| -> String {
            conn.query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert!(!sql("history").contains("UNIQUE"));
        assert!(sql("history_sha").contains("substr(sha, 1, 4)"));
        assert!(!sql("commit_text").contains("paths"));
        assert_eq!(commits(&conn, &shas, true).unwrap(), want);
        assert_eq!(all_commits(&conn).unwrap(), want_all);
        // the messages were carried over: the full text finds them
        let hits = search_commits(&conn, "bug 8", 3).unwrap();
        assert_eq!(hits[0].0, written[8].sha);
        // lookups by id use the prefix index
        for query in [
            format!("SELECT id FROM history WHERE {BY_SHA}"),
            format!("SELECT {COLUMNS} WHERE {BY_SHA}"),
        ] {
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
                .unwrap()
                .query_map([hex_value(&written[0].sha)], |r| r.get(3))
                .unwrap()
                .collect::<std::result::Result<_, _>>()
                .unwrap();
            assert!(plan.iter().any(|p| p.contains("history_sha")), "{plan:?}");
        }
        // and history goes on from there, known commits kept once
        let more = varied_commits(blocks::BLOCK_VALUES + 60);
        let added = add_commits(&mut conn, &more).unwrap();
        assert_eq!(added, more.len() - written.len());
        // opened again: nothing left to do
        drop(conn);
        let conn = open(&db).unwrap();
        assert_eq!(commits(&conn, &shas, true).unwrap(), want);
    }

    #[test]
    fn commits_found_by_words_of_their_paths_weigh_rare_words_more() {
        let commit = |sha: &str, message: &str, paths: &[&str]| crate::CommitRecord {
            sha: sha.into(),
            author_name: "Ada".into(),
            message: message.into(),
            summary: message.into(),
            files: paths
                .iter()
                .map(|p| (p.to_string(), "modified".into(), None))
                .collect(),
            ..crate::CommitRecord::default()
        };
        let (_dir, mut conn) = Layout::Compact.open();
        let written = [
            commit("c1", "Tidy", &["src/Router/Layer.js", "src/app.js"]),
            commit("c2", "Tidy", &["src/app.js"]),
            commit("c3", "Tidy", &["src/app.js", "docs/Über.md"]),
            commit("c4", "Speed up the layer cache", &["src/cache.js"]),
        ];
        add_commits(&mut conn, &written).unwrap();
        // a word of a path, in any case, but not part of a word
        let hits = search_commits(&conn, "router", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, "c1");
        assert!(search_commits(&conn, "rout", 10).unwrap().is_empty());
        assert_eq!(search_commits(&conn, "über", 10).unwrap()[0].0, "c3");
        // a word in a message and in a path: both count; a word every
        // commit's paths have next to nothing
        let hits = search_commits(&conn, "layer", 10).unwrap();
        let mut shas: Vec<&str> = hits.iter().map(|(s, _)| s.as_str()).collect();
        shas.sort();
        assert_eq!(shas, ["c1", "c4"]);
        let src = search_commits(&conn, "src", 10).unwrap();
        assert!(src.iter().all(|(_, s)| *s < 1e-3), "{src:?}");
        assert!(search_commits(&conn, "the a", 10).unwrap().is_empty());
        assert!(search_commits(&conn, "router", 0).unwrap().is_empty());
    }

    #[test]
    fn parents_stored_in_history_are_named_by_row_and_come_back() {
        // a chain walked newest first, with a merge, stored in two calls
        // (the second holds the oldest commits, so its parents come later)
        // and then a newer commit on top
        let sha = |i: usize| format!("{:040x}", i * 104_729 + 7);
        let commit = |i: usize, parents: Vec<String>| CommitRecord {
            sha: sha(i),
            author_name: "Ada".into(),
            message: format!("change {i}"),
            committer_time: 1_700_000_000 - i as i64,
            parents,
            ..CommitRecord::default()
        };
        let mut chain: Vec<CommitRecord> = (1..30)
            .map(|i| commit(i, if i == 29 { vec![] } else { vec![sha(i + 1)] }))
            .collect();
        chain[4].parents.push(sha(20)); // a merge of an older commit
        chain[6].parents.push("f".repeat(40)); // a parent never stored
        let newest = commit(0, vec![sha(1)]);
        let (_dir, mut conn) = Layout::Compact.open();
        add_commits(&mut conn, &chain[..12]).unwrap();
        add_commits(&mut conn, &chain[12..]).unwrap();
        add_commits(&mut conn, std::slice::from_ref(&newest)).unwrap();
        let mut all: Vec<CommitRecord> = chain.clone();
        all.push(newest);
        let shas: Vec<String> = all.iter().map(|c| c.sha.clone()).collect();
        let got = commits(&conn, &shas, false).unwrap();
        for c in &all {
            assert_eq!(got[&c.sha].parents, c.parents, "{}", c.message);
        }
        for c in all_commits(&conn).unwrap() {
            assert_eq!(got[&c.sha].parents, c.parents);
        }
        let by_row: i64 = conn
            .query_row(
                "SELECT count(*) FROM history WHERE substr(parents, 1, 1) = x'00'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        // all but the root, the commit with an unknown parent, and the two
        // of the first call with a parent that came only in the second (the
        // last of the call, and the merge)
        assert_eq!(by_row, all.len() as i64 - 4);
        for (id, rows) in [(5, vec![6]), (9, vec![3, 900, 9]), (1, vec![])] {
            let v = pack_parent_rows(id, &rows);
            let want = if rows.is_empty() {
                StoredParents::Ids(vec![])
            } else {
                StoredParents::Rows(rows)
            };
            assert_eq!(unpack_parents(id, (&v).into()), want);
        }
    }

    #[test]
    fn the_compact_layout_is_smaller_than_the_commits_table() {
        let written = varied_commits(2000);
        let mut pages = Vec::new();
        for layout in [Layout::Compact, Layout::Commits] {
            let (_dir, mut conn) = layout.open();
            add_commits(&mut conn, &written).unwrap();
            conn.execute_batch("VACUUM").unwrap();
            let n: i64 = conn
                .query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap();
            pages.push(n);
        }
        // ids, parents and people as small values, messages compressed
        assert!(
            pages[0] * 10 < pages[1] * 7,
            "compact {} pages, commits table {}",
            pages[0],
            pages[1]
        );
    }

    #[test]
    fn ids_pack_and_come_back() {
        let hex = "4b825dc642cb6eb9a060e54bf8d69288fbee4904".to_string();
        assert!(matches!(hex_value(&hex), Value::Blob(ref b) if b.len() == 20));
        for text in ["ABCD", "c1", "", "xyz", "abc"] {
            let v = hex_value(text);
            assert_eq!(hex_text((&v).into()), text, "{text:?}");
        }
        assert_eq!(hex_text((&hex_value(&hex)).into()), hex);
        for ids in [
            vec![],
            vec![hex.clone()],
            vec![hex.clone(), "0".repeat(40)],
            vec![hex.clone(), "abcd".into()],
            vec!["feature~2".into()],
            vec!["ABCD".into()],
        ] {
            assert_eq!(unpack_ids((&pack_ids(&ids)).into()), ids, "{ids:?}");
        }
    }
}
