//! The SQLite half of the embedded store: files, content, chunks, symbols,
//! index state and the write-ahead journal of the lexical index.

use std::path::Path;

use ken_core::{ChunkKind, Language};
use std::collections::{HashMap, HashSet};

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OptionalExtension, params};

use super::texts;
use crate::{
    FileRecord, IndexState, Result, Stats, StoreError, StoredChunk, SymbolMatch, SymbolTier,
};

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

/// Fold an identifier for case- and separator-insensitive comparison.
pub fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

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

pub(crate) fn files(conn: &Connection) -> Result<Vec<FileRecord>> {
    let mut stmt =
        conn.prepare("SELECT path, blob_id, language, size, skip FROM files ORDER BY path")?;
    let rows = stmt.query_map([], |r| {
        let lang: String = r.get(2)?;
        Ok(FileRecord {
            path: r.get(0)?,
            id: r.get(1)?,
            language: Language::parse(&lang).unwrap_or(Language::Text),
            size: r.get::<_, i64>(3)? as u64,
            skip: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub(crate) fn stats(conn: &Connection) -> Result<Stats> {
    let count =
        |sql: &str| -> Result<u64> { Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
    let mut skipped: std::collections::BTreeMap<String, u64> = read_state(conn)?
        .left_out
        .into_iter()
        .map(|(reason, l)| (reason, l.count))
        .collect();
    let mut stmt =
        conn.prepare("SELECT skip, count(*) FROM files WHERE skip IS NOT NULL GROUP BY skip")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (reason, n) = row?;
        *skipped.entry(reason).or_default() += n as u64;
    }
    Ok(Stats {
        files: count("SELECT count(*) FROM files WHERE skip IS NULL")?,
        skipped_files: skipped.values().sum(),
        skipped,
        chunks: count("SELECT count(*) FROM chunks")?,
        symbols: count("SELECT count(*) FROM symbols")?,
        bytes: count("SELECT coalesce(sum(size), 0) FROM files WHERE skip IS NULL")?,
    })
}

// A chunk's text is its stored text (synthetic chunks) or its bytes of the
// file, cut out by [`with_text`] (the file's blob id is the last column).
const CHUNK_COLUMNS: &str =
    "c.id, c.path, c.language, c.kind, c.symbol, c.qualname, c.signature, c.doc,
    c.start_line, c.end_line, c.start_byte, c.end_byte, c.trivial, c.cell, c.content_hash,
    c.text IS NOT NULL, c.text, CASE WHEN c.text IS NULL THEN f.blob_id END";

/// [`CHUNK_COLUMNS`] without the text.
const HEAD_COLUMNS: &str =
    "c.id, c.path, c.language, c.kind, c.symbol, c.qualname, c.signature, c.doc,
    c.start_line, c.end_line, c.start_byte, c.end_byte, c.trivial, c.cell, c.content_hash,
    c.text IS NOT NULL, NULL";

fn chunk_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredChunk> {
    let lang: String = r.get(2)?;
    let kind: String = r.get(3)?;
    Ok(StoredChunk {
        id: r.get::<_, i64>(0)? as u64,
        path: r.get(1)?,
        language: Language::parse(&lang).unwrap_or(Language::Text),
        kind: ChunkKind::parse(&kind).unwrap_or(ChunkKind::Window),
        symbol: r.get(4)?,
        qualname: r.get(5)?,
        signature: r.get(6)?,
        doc: super::texts::unpack_field(r, 7)?,
        start_line: r.get(8)?,
        end_line: r.get(9)?,
        start_byte: r.get(10)?,
        end_byte: r.get(11)?,
        trivial: r.get::<_, i64>(12)? != 0,
        cell: r.get(13)?,
        content_hash: hex_text(r.get_ref(14)?),
        synthetic: r.get(15)?,
        text: super::texts::unpack_field(r, 16)?.unwrap_or_default(),
    })
}

/// Rows of [`CHUNK_COLUMNS`] as chunks with their text, each file's text
/// read and decompressed once.
fn with_text(
    conn: &Connection,
    stmt: &mut rusqlite::Statement<'_>,
    params: impl rusqlite::Params,
) -> Result<Vec<StoredChunk>> {
    let rows = stmt.query_map(params, |r| {
        Ok((chunk_from_row(r)?, r.get::<_, Option<String>>(17)?))
    })?;
    let mut files = super::texts::FileTexts::default();
    let mut out = Vec::new();
    for row in rows {
        let (mut chunk, blob) = row?;
        if let Some(blob) = blob {
            chunk.text = files.cut(conn, &blob, chunk.start_byte as i64, chunk.end_byte as i64)?;
        }
        out.push(chunk);
    }
    Ok(out)
}

/// Ids as one JSON array parameter: a statement per id would be prepared
/// again for every value (SQLite does so when a bound value may change the
/// plan, as with STAT4 on an indexed column), and each would be a read
/// transaction of its own.
fn id_array(ids: &[u64]) -> String {
    let mut s = String::with_capacity(ids.len() * 8 + 2);
    s.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&id.to_string());
    }
    s.push(']');
    s
}

pub(crate) fn chunks_by_id(conn: &Connection, ids: &[u64]) -> Result<Vec<StoredChunk>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {CHUNK_COLUMNS} FROM json_each(?1) j JOIN chunks c ON c.id = j.value
         JOIN files f ON f.path = c.path ORDER BY j.key"
    ))?;
    with_text(conn, &mut stmt, [id_array(ids)])
}

/// Chunks by id without their text (ranking needs only where they are).
pub(crate) fn chunk_heads_by_id(conn: &Connection, ids: &[u64]) -> Result<Vec<StoredChunk>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HEAD_COLUMNS} FROM json_each(?1) j JOIN chunks c ON c.id = j.value ORDER BY j.key"
    ))?;
    let rows = stmt.query_map([id_array(ids)], chunk_from_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The first chunk of each file, without its text, in the order of `paths`
/// (files without chunks are left out).
pub(crate) fn first_chunk_heads(conn: &Connection, paths: &[String]) -> Result<Vec<StoredChunk>> {
    let list = serde_json::to_string(paths).map_err(|e| StoreError::Other(e.to_string()))?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HEAD_COLUMNS} FROM json_each(?1) j JOIN chunks c ON c.id = (
             SELECT id FROM chunks c2 WHERE c2.path = j.value
             ORDER BY c2.start_byte, c2.end_byte DESC LIMIT 1)
         ORDER BY j.key"
    ))?;
    let rows = stmt.query_map([list], chunk_from_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub(crate) fn all_chunks(conn: &Connection) -> Result<Vec<StoredChunk>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.path = c.path ORDER BY c.id"
    ))?;
    with_text(conn, &mut stmt, [])
}

fn f32s_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn blob_to_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Which of `keys` have a vector for `model`.
pub(crate) fn vector_keys_present(
    conn: &Connection,
    model: &str,
    keys: &[String],
) -> Result<HashSet<String>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM vectors WHERE model = ?1 AND key = ?2")?;
    let mut out = HashSet::new();
    for k in keys {
        if stmt.exists(params![model, k])? {
            out.insert(k.clone());
        }
    }
    Ok(out)
}

pub(crate) fn put_vectors(
    conn: &mut Connection,
    model: &str,
    items: &[(String, Vec<f32>)],
) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT OR REPLACE INTO vectors(model, key, data) VALUES (?1, ?2, ?3)",
        )?;
        for (k, v) in items {
            stmt.execute(params![model, k, f32s_to_blob(v)])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Drop `keys`' vectors of `model` from the table (the index file holds
/// them), and give the freed pages back where the database allows it.
pub(crate) fn forget_vectors(conn: &mut Connection, model: &str, keys: &[String]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let held: Vec<String> = tx
            .prepare_cached("SELECT key FROM vectors WHERE model = ?1")?
            .query_map([model], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        let in_file: HashSet<&str> = keys.iter().map(String::as_str).collect();
        if held.iter().all(|k| in_file.contains(k.as_str())) {
            // the usual case: the file holds everything (one statement)
            tx.prepare_cached("DELETE FROM vectors WHERE model = ?1")?
                .execute([model])?;
        } else {
            let mut stmt =
                tx.prepare_cached("DELETE FROM vectors WHERE model = ?1 AND key = ?2")?;
            for k in held.iter().filter(|k| in_file.contains(k.as_str())) {
                stmt.execute(params![model, k])?;
            }
        }
    }
    tx.commit()?;
    give_back_pages(conn)
}

/// Return free pages to the file system: databases created since
/// incremental vacuum was turned on (see [`open`]) shrink, older ones keep
/// their free pages for later writes.
pub(crate) fn give_back_pages(conn: &Connection) -> Result<()> {
    let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if mode == 2 {
        let mut stmt = conn.prepare("PRAGMA incremental_vacuum")?;
        let mut rows = stmt.query([])?;
        while rows.next()?.is_some() {}
    }
    Ok(())
}

pub(crate) fn get_vectors(
    conn: &Connection,
    model: &str,
    keys: &[String],
) -> Result<HashMap<String, Vec<f32>>> {
    let mut stmt = conn.prepare_cached("SELECT data FROM vectors WHERE model = ?1 AND key = ?2")?;
    let mut out = HashMap::with_capacity(keys.len());
    for k in keys {
        if let Some(b) = stmt
            .query_row(params![model, k], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        {
            out.insert(k.clone(), blob_to_f32s(&b));
        }
    }
    Ok(out)
}

pub(crate) fn chunks_of_file(conn: &Connection, path: &str) -> Result<Vec<StoredChunk>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.path = c.path
         WHERE c.path = ?1 ORDER BY c.start_byte, c.end_byte DESC"
    ))?;
    with_text(conn, &mut stmt, [path])
}

pub(crate) fn lookup_symbols(
    conn: &Connection,
    ident: &str,
    limit: usize,
    partial: bool,
) -> Result<Vec<SymbolMatch>> {
    let Some(mut look) = crate::symbols::SymbolLookup::new(ident, limit, partial) else {
        return Ok(Vec::new());
    };
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<SymbolMatch> {
        let kind: String = r.get(2)?;
        Ok(SymbolMatch {
            tier: SymbolTier::Substring,
            name: r.get(0)?,
            qualname: r.get(1)?,
            kind: ChunkKind::parse(&kind).unwrap_or(ChunkKind::Function),
            path: r.get(3)?,
            start_line: r.get(4)?,
            end_line: r.get(5)?,
            chunk_id: r.get::<_, i64>(6)? as u64,
        })
    };
    const COLS: &str = "name, qualname, kind, path, start_line, end_line, chunk_id";
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM symbols WHERE {} = ?1 ORDER BY ({} = ?3) DESC LIMIT ?2",
        look.exact_column(),
        look.case_column()
    ))?;
    let rows: Vec<SymbolMatch> = stmt
        .query_map(
            params![look.exact_key(), limit as i64, look.exact_text()],
            row,
        )?
        .collect::<rusqlite::Result<_>>()?;
    look.exact(rows);
    for (tier, pattern) in look.partial_tiers() {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM symbols WHERE folded LIKE ?1 ESCAPE '\\' ORDER BY length(folded) LIMIT ?2"
        ))?;
        let rows: Vec<SymbolMatch> = stmt
            .query_map(params![pattern, look.limit() as i64], row)?
            .collect::<rusqlite::Result<_>>()?;
        if !look.partial(tier, rows) {
            break;
        }
    }
    Ok(look.finish())
}

// ---- the code graph ----

pub(crate) fn graph_facts(
    conn: &Connection,
    paths: Option<&[String]>,
) -> Result<Vec<ken_graph::FileFacts>> {
    let mut out = Vec::new();
    match paths {
        None => {
            let mut stmt = conn.prepare("SELECT json FROM facts ORDER BY path")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                out.push(unpack_facts(r.get_ref(0)?)?);
            }
        }
        Some(paths) => {
            let mut stmt = conn.prepare_cached("SELECT json FROM facts WHERE path = ?1")?;
            for p in paths {
                let mut rows = stmt.query([p])?;
                if let Some(r) = rows.next()? {
                    out.push(unpack_facts(r.get_ref(0)?)?);
                }
            }
        }
    }
    Ok(out)
}

/// A file's graph facts as stored: JSON compressed with zstd (a BLOB).
/// Indexes written before kept plain JSON text; [`unpack_facts`] reads both.
pub(crate) fn pack_facts(facts: &ken_graph::FileFacts) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(facts).map_err(|e| StoreError::Other(e.to_string()))?;
    super::texts::compress(&json).map_err(|e| StoreError::Other(format!("compressing facts: {e}")))
}

fn unpack_facts(v: rusqlite::types::ValueRef<'_>) -> Result<ken_graph::FileFacts> {
    use rusqlite::types::ValueRef;
    let bad = |e: String| StoreError::Other(format!("stored graph facts: {e}"));
    match v {
        ValueRef::Blob(b) => {
            let json = zstd::stream::decode_all(b).map_err(|e| bad(e.to_string()))?;
            serde_json::from_slice(&json).map_err(|e| bad(e.to_string()))
        }
        ValueRef::Text(t) => serde_json::from_slice(t).map_err(|e| bad(e.to_string())),
        _ => Err(bad("neither JSON nor compressed JSON".to_string())),
    }
}

/// Replace the edges written in `paths` (all edges when `paths` is None).
/// The edges written in one file are stored together, compressed
/// (`edge_files`); the `edges` table holds those of indexes written before,
/// read and replaced the same way.
pub(crate) fn replace_edges(
    conn: &mut Connection,
    paths: Option<&[String]>,
    edges: &[ken_graph::Edge],
) -> Result<()> {
    let tx = conn.transaction()?;
    {
        match paths {
            None => {
                tx.execute("DELETE FROM edges", [])?;
                tx.execute("DELETE FROM edge_files", [])?;
            }
            Some(paths) => {
                let mut del = tx.prepare_cached("DELETE FROM edges WHERE src_path = ?1")?;
                let mut del_files = tx.prepare_cached("DELETE FROM edge_files WHERE path = ?1")?;
                for p in paths {
                    del.execute([p])?;
                    del_files.execute([p])?;
                }
            }
        }
        let mut by_file: std::collections::BTreeMap<&str, Vec<&ken_graph::Edge>> =
            std::collections::BTreeMap::new();
        for e in edges {
            by_file.entry(e.from.path.as_str()).or_default().push(e);
        }
        let mut ins =
            tx.prepare_cached("INSERT OR REPLACE INTO edge_files(path, data) VALUES (?1, ?2)")?;
        for (path, list) in by_file {
            ins.execute(params![path, pack_edges(&list)?])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// One file's edges without the path they share: (from qualname, from nth,
/// to path, to qualname, to nth, kind, line, rule, confidence).
type EdgeRow = (String, u32, String, String, u32, String, u32, String, f32);

fn pack_edges(list: &[&ken_graph::Edge]) -> Result<Vec<u8>> {
    let rows: Vec<EdgeRow> = list
        .iter()
        .map(|e| {
            (
                e.from.qualname.clone(),
                e.from.nth,
                e.to.path.clone(),
                e.to.qualname.clone(),
                e.to.nth,
                e.kind.name().to_string(),
                e.line,
                e.rule.name().to_string(),
                e.confidence,
            )
        })
        .collect();
    let json = serde_json::to_vec(&rows).map_err(|e| StoreError::Other(e.to_string()))?;
    super::texts::compress(&json).map_err(|e| StoreError::Other(format!("compressing edges: {e}")))
}

fn edge_of(path: &str, r: EdgeRow) -> ken_graph::Edge {
    let (from_q, from_nth, to_path, to_q, to_nth, kind, line, rule, confidence) = r;
    ken_graph::Edge {
        from: ken_graph::DefKey::new(path, from_q, from_nth),
        to: ken_graph::DefKey::new(to_path, to_q, to_nth),
        kind: ken_core::RefKind::parse(&kind).unwrap_or(ken_core::RefKind::Call),
        path: path.to_string(),
        line,
        rule: ken_graph::Rule::parse(&rule).unwrap_or(ken_graph::Rule::UniqueGlobal),
        confidence,
    }
}

pub(crate) fn edges(conn: &Connection) -> Result<Vec<ken_graph::Edge>> {
    let mut stmt = conn.prepare(
        "SELECT src_path, src_q, src_nth, dst_path, dst_q, dst_nth, kind, line, rule, confidence FROM edges",
    )?;
    let rows = stmt.query_map([], |r| {
        let src_path: String = r.get(0)?;
        let row: EdgeRow = (
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
        );
        Ok(edge_of(&src_path, row))
    })?;
    let mut out: Vec<ken_graph::Edge> = rows.collect::<std::result::Result<_, _>>()?;
    let bad = |e: String| StoreError::Other(format!("stored edges: {e}"));
    let mut stmt = conn.prepare("SELECT path, data FROM edge_files ORDER BY path")?;
    let mut files = stmt.query([])?;
    while let Some(r) = files.next()? {
        let path: String = r.get(0)?;
        let data = r.get_ref(1)?.as_blob().map_err(|e| bad(e.to_string()))?;
        let json = zstd::stream::decode_all(data).map_err(|e| bad(e.to_string()))?;
        let rows: Vec<EdgeRow> = serde_json::from_slice(&json).map_err(|e| bad(e.to_string()))?;
        out.extend(rows.into_iter().map(|row| edge_of(&path, row)));
    }
    Ok(out)
}

/// Replace every rank: definitions' ranks packed per file (see
/// [`pack_def_ranks`]), files' ranks a row each. An index written before
/// kept a row per definition in `def_rank`; that table goes, since every
/// rank is written again here.
pub(crate) fn set_ranks(
    conn: &mut Connection,
    defs: &[(ken_graph::DefKey, f32)],
    files: &[(String, f32)],
) -> Result<()> {
    let tx = conn.transaction()?;
    if has_table(&tx, "def_rank")? {
        tx.execute("DROP TABLE def_rank", [])?;
    }
    tx.execute("DELETE FROM def_ranks", [])?;
    tx.execute("DELETE FROM file_rank", [])?;
    {
        let mut by_path: std::collections::BTreeMap<&str, Vec<(&str, u32, f32)>> =
            Default::default();
        for (k, r) in defs {
            by_path
                .entry(k.path.as_str())
                .or_default()
                .push((k.qualname.as_str(), k.nth, *r));
        }
        let mut d =
            tx.prepare_cached("INSERT OR REPLACE INTO def_ranks(path, data) VALUES (?1, ?2)")?;
        for (path, ranks) in &by_path {
            d.execute(params![path, pack_def_ranks(ranks)?])?;
        }
        let mut f =
            tx.prepare_cached("INSERT OR REPLACE INTO file_rank(path, rank) VALUES (?1, ?2)")?;
        for (p, r) in files {
            f.execute(params![p, r])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// A file's definition ranks as one compressed value: for each, its
/// qualified name's length (LEB128) and bytes, its `nth` (LEB128) and its
/// rank (f32, little-endian).
fn pack_def_ranks(ranks: &[(&str, u32, f32)]) -> Result<Vec<u8>> {
    let mut raw = Vec::new();
    for (qualname, nth, rank) in ranks {
        texts::put_varint(&mut raw, qualname.len() as u64);
        raw.extend_from_slice(qualname.as_bytes());
        texts::put_varint(&mut raw, u64::from(*nth));
        raw.extend_from_slice(&rank.to_le_bytes());
    }
    texts::compress(&raw).map_err(|e| StoreError::Other(format!("compressing ranks: {e}")))
}

fn unpack_def_ranks(data: &[u8]) -> Result<Vec<(String, u32, f32)>> {
    let bad = |why: &str| StoreError::Other(format!("stored ranks: {why}"));
    let raw = zstd::stream::decode_all(data).map_err(|e| bad(&e.to_string()))?;
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let len = texts::get_varint(&raw, &mut at).ok_or_else(|| bad("a length is cut"))?;
        let name = raw
            .get(at..at.saturating_add(len as usize))
            .ok_or_else(|| bad("a name is cut"))?;
        at += name.len();
        let nth = texts::get_varint(&raw, &mut at).ok_or_else(|| bad("a number is cut"))?;
        let rank = raw.get(at..at + 4).ok_or_else(|| bad("a rank is cut"))?;
        at += 4;
        out.push((
            String::from_utf8_lossy(name).into_owned(),
            u32::try_from(nth).map_err(|_| bad("a number is too large"))?,
            f32::from_le_bytes([rank[0], rank[1], rank[2], rank[3]]),
        ));
    }
    Ok(out)
}

pub(crate) fn file_ranks(conn: &Connection) -> Result<HashMap<String, f32>> {
    let mut stmt = conn.prepare("SELECT path, rank FROM file_rank")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f32>(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The ranks of a file's definitions: (qualified name, nth, rank).
pub(crate) fn def_ranks(conn: &Connection, path: &str) -> Result<Vec<(String, u32, f32)>> {
    let packed: Option<Vec<u8>> = conn
        .prepare_cached("SELECT data FROM def_ranks WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(data) = packed {
        return unpack_def_ranks(&data);
    }
    if !has_table(conn, "def_rank")? {
        return Ok(Vec::new());
    }
    let mut stmt =
        conn.prepare_cached("SELECT qualname, nth, rank FROM def_rank WHERE path = ?1")?;
    let rows = stmt.query_map([path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

// ---- shared by history and blame ----

/// Each path's id in `paths`, added when new (within one transaction).
pub(crate) struct PathIds<'t> {
    intern: rusqlite::CachedStatement<'t>,
    lookup: rusqlite::CachedStatement<'t>,
    /// Path ids already looked up in this transaction.
    ids: HashMap<String, i64>,
}

impl<'t> PathIds<'t> {
    pub(crate) fn new(tx: &'t Connection) -> Result<Self> {
        Ok(PathIds {
            intern: tx.prepare_cached("INSERT OR IGNORE INTO paths(path) VALUES (?1)")?,
            lookup: tx.prepare_cached("SELECT id FROM paths WHERE path = ?1")?,
            ids: HashMap::new(),
        })
    }

    pub(crate) fn id(&mut self, path: &str) -> Result<i64> {
        if let Some(id) = self.ids.get(path) {
            return Ok(*id);
        }
        self.intern.execute([path])?;
        let id = self.lookup.query_row([path], |r| r.get(0))?;
        self.ids.insert(path.to_string(), id);
        Ok(id)
    }
}

/// Whether the database has table `name` (layouts of older indexes).
pub(crate) fn has_table(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .exists([name])?)
}

/// Whether `s` is lowercase hex of whole bytes, as git writes object ids:
/// only then do its raw bytes give it back exactly.
pub(crate) fn is_lower_hex(s: &str) -> bool {
    s.len().is_multiple_of(2) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// An id written in hex (a commit, a content hash) as stored: its raw
/// bytes when it is lowercase hex, else its text (SQLite keeps the two
/// apart, so neither is mistaken for the other). [`hex_text`] gives it
/// back, and reads ids stored as text by indexes written before.
pub(crate) fn hex_value(id: &str) -> Value {
    match ken_core::decode_hex(id) {
        Some(bytes) if is_lower_hex(id) => Value::Blob(bytes),
        _ => Value::Text(id.to_string()),
    }
}

pub(crate) fn hex_text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Blob(b) => ken_core::encode_hex(b),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    }
}

/// The ids of the chunks `filter` lets through (paths through the path
/// index; an empty list lets nothing through).
pub(crate) fn chunk_ids_where(
    conn: &Connection,
    filter: &crate::ChunkFilter,
) -> Result<HashSet<u64>> {
    let languages: Vec<&str> = filter.languages.iter().map(|l| l.name()).collect();
    let languages =
        serde_json::to_string(&languages).map_err(|e| StoreError::Other(e.to_string()))?;
    let paths = filter
        .paths
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::Other(e.to_string()))?;
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM chunks
         WHERE (?2 = '[]' OR language IN (SELECT value FROM json_each(?2)))
           AND (?1 IS NULL OR path IN (SELECT value FROM json_each(?1)))",
    )?;
    let ids = stmt.query_map(params![paths, languages], |r| r.get::<_, i64>(0))?;
    ids.map(|id| Ok(id? as u64)).collect()
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

    #[test]
    fn folding() {
        assert_eq!(fold("parse_config"), "parseconfig");
        assert_eq!(fold("ParseConfig"), "parseconfig");
        assert_eq!(fold("Flask.do_teardown"), "flask.doteardown");
    }

    #[test]
    fn facts_are_stored_compressed_and_old_json_rows_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("index.sqlite")).unwrap();
        let def = ken_core::Definition {
            name: "load".into(),
            qualname: "Config.load".into(),
            kind: ken_core::ChunkKind::Method,
            start_line: 3,
            end_line: 9,
            signature: Some("def load(self, path)".into()),
        };
        let facts = |path: &str| {
            ken_graph::FileFacts::new(
                path,
                ken_core::Language::Python,
                vec![def.clone()],
                Vec::new(),
            )
        };
        let packed = pack_facts(&facts("a.py")).unwrap();
        let json = serde_json::to_string(&facts("b.py")).unwrap();
        conn.execute(
            "INSERT INTO facts(path, json) VALUES ('a.py', ?1)",
            [&packed],
        )
        .unwrap();
        conn.execute("INSERT INTO facts(path, json) VALUES ('b.py', ?1)", [&json])
            .unwrap();
        assert!(
            packed.len() < json.len(),
            "{} vs {}",
            packed.len(),
            json.len()
        );
        let all = graph_facts(&conn, None).unwrap();
        assert_eq!(all, vec![facts("a.py"), facts("b.py")]);
        let one = graph_facts(&conn, Some(&["b.py".to_string()])).unwrap();
        assert_eq!(one, vec![facts("b.py")]);
    }

    #[test]
    fn edges_are_stored_per_file_compressed_and_old_rows_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
        let edge = |from: &str, to: &str, line: u32| ken_graph::Edge {
            from: ken_graph::DefKey::new(from, "main", 0),
            to: ken_graph::DefKey::new(to, "load", 1),
            kind: ken_core::RefKind::Call,
            path: from.to_string(),
            line,
            rule: ken_graph::Rule::UniqueGlobal,
            confidence: 0.5,
        };
        // an index written before: its edges are rows of `edges`
        conn.execute(
            "INSERT INTO edges(src_path, src_q, src_nth, dst_path, dst_q, dst_nth, kind, line, rule, confidence)
             VALUES ('old.py', 'main', 0, 'a.py', 'load', 1, 'call', 7, ?1, 0.5)",
            [ken_graph::Rule::UniqueGlobal.name()],
        )
        .unwrap();
        replace_edges(
            &mut conn,
            Some(&["b.py".into()]),
            &[edge("b.py", "a.py", 3), edge("b.py", "c.py", 4)],
        )
        .unwrap();
        replace_edges(
            &mut conn,
            Some(&["c.py".into()]),
            &[edge("c.py", "a.py", 9)],
        )
        .unwrap();
        let all = edges(&conn).unwrap();
        assert_eq!(
            all,
            vec![
                edge("old.py", "a.py", 7),
                edge("b.py", "a.py", 3),
                edge("b.py", "c.py", 4),
                edge("c.py", "a.py", 9)
            ]
        );
        // replacing a file's edges replaces them in either table
        replace_edges(
            &mut conn,
            Some(&["old.py".into(), "b.py".into()]),
            &[edge("b.py", "a.py", 5)],
        )
        .unwrap();
        assert_eq!(
            edges(&conn).unwrap(),
            vec![edge("b.py", "a.py", 5), edge("c.py", "a.py", 9)]
        );
        replace_edges(&mut conn, None, &[]).unwrap();
        assert!(edges(&conn).unwrap().is_empty());
    }

    #[test]
    fn ranks_are_packed_per_file_and_an_old_table_is_read_then_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
        // an index written before: a row per definition
        conn.execute_batch(
            "CREATE TABLE def_rank (path TEXT NOT NULL, qualname TEXT NOT NULL, nth INTEGER NOT NULL,
                 rank REAL NOT NULL, PRIMARY KEY (path, qualname, nth)) WITHOUT ROWID;
             INSERT INTO def_rank VALUES ('a.py', 'Old.run', 0, 0.5);",
        )
        .unwrap();
        assert_eq!(
            def_ranks(&conn, "a.py").unwrap(),
            [("Old.run".into(), 0, 0.5)]
        );
        let key = |path: &str, qualname: &str, nth: u32| ken_graph::DefKey {
            path: path.into(),
            qualname: qualname.into(),
            nth,
        };
        let defs = [
            (key("a.py", "Session.refresh", 0), 0.25),
            (key("a.py", "Session.refresh", 1), 1e-7),
            (key("a.py", "naïve_ünïcode", 300), 3.5),
            (key("b/c.py", "main", 0), 0.0),
        ];
        set_ranks(&mut conn, &defs, &[("a.py".into(), 0.75)]).unwrap();
        assert!(!has_table(&conn, "def_rank").unwrap(), "the old table goes");
        let mut got = def_ranks(&conn, "a.py").unwrap();
        got.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)));
        assert_eq!(
            got,
            [
                ("Session.refresh".to_string(), 0, 0.25),
                ("Session.refresh".to_string(), 1, 1e-7),
                ("naïve_ünïcode".to_string(), 300, 3.5),
            ]
        );
        assert_eq!(
            def_ranks(&conn, "b/c.py").unwrap(),
            [("main".into(), 0, 0.0)]
        );
        assert!(def_ranks(&conn, "none.py").unwrap().is_empty());
        assert_eq!(file_ranks(&conn).unwrap()["a.py"], 0.75);
        // ranks written again replace every file's
        set_ranks(&mut conn, &defs[3..], &[]).unwrap();
        assert!(def_ranks(&conn, "a.py").unwrap().is_empty());
        assert!(unpack_def_ranks(b"damaged").is_err());
    }
}
