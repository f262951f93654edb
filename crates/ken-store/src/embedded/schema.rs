//! The embedded index's SQLite database: its schema, opening (with the
//! migrations of older layouts), meta values and the index state.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::{IndexState, Result, StoreError};

const SCHEMA_VERSION: &str = "1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    blob_id TEXT NOT NULL,
    language TEXT NOT NULL,
    size INTEGER NOT NULL,
    skip TEXT
);
CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    language TEXT NOT NULL,
    symbol TEXT,
    qualname TEXT,
    signature TEXT,
    doc TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    trivial INTEGER NOT NULL,
    cell INTEGER,
    content_hash TEXT NOT NULL,
    text TEXT
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS symbols (
    name TEXT NOT NULL,
    folded TEXT NOT NULL,
    qualname TEXT NOT NULL,
    qual_folded TEXT NOT NULL,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    chunk_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_folded ON symbols(folded);
CREATE INDEX IF NOT EXISTS symbols_qual_folded ON symbols(qual_folded);
CREATE INDEX IF NOT EXISTS symbols_chunk ON symbols(chunk_id);
CREATE TABLE IF NOT EXISTS journal (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS facts (path TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS edges (
    src_path TEXT NOT NULL, src_q TEXT NOT NULL, src_nth INTEGER NOT NULL,
    dst_path TEXT NOT NULL, dst_q TEXT NOT NULL, dst_nth INTEGER NOT NULL,
    kind TEXT NOT NULL, line INTEGER NOT NULL, rule TEXT NOT NULL, confidence REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_path);
CREATE TABLE IF NOT EXISTS edge_files (path TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS def_ranks (path TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS file_rank (path TEXT PRIMARY KEY, rank REAL NOT NULL);
CREATE TABLE IF NOT EXISTS people (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, UNIQUE (name, email)
);
CREATE TABLE IF NOT EXISTS message_blocks (first INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS file_blocks (first INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS path_commits (path_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS blame (path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, sha TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS blame_path ON blame(path);
CREATE TABLE IF NOT EXISTS blame_files (path TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS blame_done (path TEXT PRIMARY KEY, blob_id TEXT NOT NULL, method TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
";

/// Page size of a new database. Most values here (file text, facts,
/// message blocks) are longer than a page and end part-way into their
/// last overflow page; half the default page wastes half as much there.
/// Measured (BENCHMARKS §21): express 2.02 → 1.92 MB without vectors,
/// sympy the same size, indexing time and query latency within the noise.
/// An index keeps the page size it was made with.
const PAGE_SIZE: i64 = 2048;

pub(crate) fn open(path: &Path) -> Result<Connection> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // a new database can give pages back (vectors leave the table once the
    // index file holds them); the mode can only be chosen before any table
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    if pages == 0 {
        // set before anything else writes the header
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(SCHEMA)?;
    let version: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .optional()?;
    match version.as_deref() {
        None => {
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema', ?1)",
                [SCHEMA_VERSION],
            )?;
        }
        Some(SCHEMA_VERSION) => {}
        Some(_) => return Err(StoreError::Incompatible(path.display().to_string())),
    }
    super::history::move_commit_paths(&mut conn)?;
    super::history::compact(&mut conn)?;
    conn.execute_batch(super::history::TABLES)?;
    super::blame::compact(&conn)?;
    Ok(conn)
}

/// Another connection to a database [`open`] has set up.
pub(crate) fn open_more(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // pages read through a shared mapping rather than copied into each
    // connection's cache (a file that shrinks, by incremental vacuum, does
    // so in a WAL checkpoint, which truncates only when no reader holds an
    // older snapshot; a new read transaction sees the new size)
    conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
    Ok(conn)
}

pub(crate) fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub(crate) fn set_meta(conn: &Connection, key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) => conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
            params![key, v],
        )?,
        None => conn.execute("DELETE FROM meta WHERE key = ?1", [key])?,
    };
    Ok(())
}

pub(crate) fn read_state(conn: &Connection) -> Result<IndexState> {
    match get_meta(conn, "state")? {
        Some(json) => serde_json::from_str(&json).map_err(|e| StoreError::Other(e.to_string())),
        None => Ok(IndexState::default()),
    }
}

pub(crate) fn write_state(conn: &Connection, state: &IndexState) -> Result<()> {
    let json = serde_json::to_string(state).map_err(|e| StoreError::Other(e.to_string()))?;
    set_meta(conn, "state", Some(&json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_index_has_small_pages_and_an_old_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let page_size =
            |c: &Connection| -> i64 { c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap() };
        let new = dir.path().join("new.sqlite");
        assert_eq!(page_size(&open(&new).unwrap()), PAGE_SIZE);
        let old = dir.path().join("old.sqlite");
        Connection::open(&old)
            .unwrap()
            .execute_batch("PRAGMA page_size = 4096; CREATE TABLE t (x);")
            .unwrap();
        let conn = open(&old).unwrap();
        assert_eq!(page_size(&conn), 4096);
        let auto: i64 = conn
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap();
        assert_eq!(auto, 0, "an old index keeps its vacuum mode too");
        let auto: i64 = open(&new)
            .unwrap()
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap();
        assert_eq!(auto, 2, "incremental");
    }
}
