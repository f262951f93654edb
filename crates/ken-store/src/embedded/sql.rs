//! The SQLite half of the embedded store: files, content, chunks, symbols,
//! index state and the write-ahead journal of the lexical index.

use std::path::Path;

use ken_core::{ChunkKind, Language};
use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

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
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
CREATE TABLE IF NOT EXISTS journal (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS facts (path TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS edges (
    src_path TEXT NOT NULL, src_q TEXT NOT NULL, src_nth INTEGER NOT NULL,
    dst_path TEXT NOT NULL, dst_q TEXT NOT NULL, dst_nth INTEGER NOT NULL,
    kind TEXT NOT NULL, line INTEGER NOT NULL, rule TEXT NOT NULL, confidence REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_path);
CREATE TABLE IF NOT EXISTS edge_files (path TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS def_rank (
    path TEXT NOT NULL, qualname TEXT NOT NULL, nth INTEGER NOT NULL, rank REAL NOT NULL,
    PRIMARY KEY (path, qualname, nth)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_rank (path TEXT PRIMARY KEY, rank REAL NOT NULL);
CREATE TABLE IF NOT EXISTS commits (
    sha TEXT PRIMARY KEY, author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    author_time INTEGER NOT NULL, committer_time INTEGER NOT NULL,
    summary TEXT NOT NULL, message TEXT NOT NULL, parents TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS commit_paths (
    commit_id INTEGER NOT NULL, seq INTEGER NOT NULL, path_id INTEGER NOT NULL,
    status NOT NULL, old_path_id INTEGER, PRIMARY KEY (commit_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS commit_paths_path ON commit_paths(path_id);
CREATE VIRTUAL TABLE IF NOT EXISTS commit_text USING fts5(message, paths, content='');
CREATE TABLE IF NOT EXISTS blame (path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, sha TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS blame_path ON blame(path);
CREATE TABLE IF NOT EXISTS blame_files (path TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS blame_pairs (
    sha BLOB NOT NULL, path_id INTEGER NOT NULL, PRIMARY KEY (sha, path_id)
) WITHOUT ROWID;
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

pub(crate) fn open(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // a new database can give pages back (vectors leave the table once the
    // index file holds them); the mode can only be chosen before any table
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    if pages == 0 {
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
        content_hash: r.get(14)?,
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

pub(crate) fn set_ranks(
    conn: &mut Connection,
    defs: &[(ken_graph::DefKey, f32)],
    files: &[(String, f32)],
) -> Result<()> {
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM def_rank", [])?;
    tx.execute("DELETE FROM file_rank", [])?;
    {
        let mut d = tx.prepare_cached(
            "INSERT OR REPLACE INTO def_rank(path, qualname, nth, rank) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (k, r) in defs {
            d.execute(params![k.path, k.qualname, k.nth, r])?;
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

pub(crate) fn file_ranks(conn: &Connection) -> Result<HashMap<String, f32>> {
    let mut stmt = conn.prepare("SELECT path, rank FROM file_rank")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f32>(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub(crate) fn def_ranks(conn: &Connection, path: &str) -> Result<Vec<(String, u32, f32)>> {
    let mut stmt =
        conn.prepare_cached("SELECT qualname, nth, rank FROM def_rank WHERE path = ?1")?;
    let rows = stmt.query_map([path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

// ---- history and authorship ----

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
            let mut paths = String::new();
            for (seq, (path, status, old)) in c.files.iter().enumerate() {
                files.add(&c.sha, rowid, seq, path, status, old.as_deref())?;
                // path words for full-text search: `src/flask/app.py` → `src flask app py`
                paths.push_str(&path.replace(['/', '.', '_', '-'], " "));
                paths.push(' ');
            }
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
        "SELECT {COMMIT_COLUMNS} FROM commits ORDER BY committer_time DESC"
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

/// Change statuses stored as a small number (others as their text).
const STATUSES: [&str; 4] = ["added", "modified", "deleted", "renamed"];

fn status_of(v: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
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

/// Writes the files of commits in the index's layout (see
/// [`legacy_commit_files`]).
struct CommitFilesWriter<'t> {
    legacy: Option<rusqlite::CachedStatement<'t>>,
    paths: PathIds<'t>,
    insert: rusqlite::CachedStatement<'t>,
}

/// Each path's id in `paths`, added when new (within one transaction).
struct PathIds<'t> {
    intern: rusqlite::CachedStatement<'t>,
    lookup: rusqlite::CachedStatement<'t>,
    /// Path ids already looked up in this transaction.
    ids: HashMap<String, i64>,
}

impl<'t> PathIds<'t> {
    fn new(tx: &'t Connection) -> Result<Self> {
        Ok(PathIds {
            intern: tx.prepare_cached("INSERT OR IGNORE INTO paths(path) VALUES (?1)")?,
            lookup: tx.prepare_cached("SELECT id FROM paths WHERE path = ?1")?,
            ids: HashMap::new(),
        })
    }

    fn id(&mut self, path: &str) -> Result<i64> {
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
fn has_table(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .exists([name])?)
}

/// A commit id as stored in `blame_pairs`: its 20 (or 32) bytes, or the
/// text's bytes when it is not hex.
fn sha_bytes(sha: &str) -> Vec<u8> {
    ken_core::decode_hex(sha).unwrap_or_else(|| sha.as_bytes().to_vec())
}

impl<'t> CommitFilesWriter<'t> {
    fn new(tx: &'t Connection) -> Result<Self> {
        let legacy = if legacy_commit_files(tx)? {
            Some(tx.prepare_cached(
                "INSERT INTO commit_files(sha, path, status, old_path) VALUES (?1, ?2, ?3, ?4)",
            )?)
        } else {
            None
        };
        Ok(CommitFilesWriter {
            legacy,
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
        if let Some(stmt) = &mut self.legacy {
            stmt.execute(params![sha, path, status, old])?;
            return Ok(());
        }
        let path_id = self.paths.id(path)?;
        let old_id = old.map(|o| self.paths.id(o)).transpose()?;
        let status: rusqlite::types::Value = match STATUSES.iter().position(|s| *s == status) {
            Some(i) => (i as i64).into(),
            None => status.to_string().into(),
        };
        self.insert
            .execute(params![commit, seq as i64, path_id, status, old_id])?;
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
    // an FTS5 query of plain words joined by OR (quoted: no syntax from the user)
    let words: Vec<String> = ken_core::ident::words(query)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| !ken_core::ident::is_stop_word(w))
        .map(|w| format!("\"{w}\""))
        .collect();
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(if legacy_commit_fts(conn)? {
        "SELECT sha, bm25(commit_fts, 0.0, 1.0, 0.5) FROM commit_fts WHERE commit_fts MATCH ?1 ORDER BY bm25(commit_fts, 0.0, 1.0, 0.5) LIMIT ?2"
    } else {
        "SELECT c.sha, bm25(commit_text, 1.0, 0.5) AS score FROM commit_text JOIN commits c ON c.rowid = commit_text.rowid WHERE commit_text MATCH ?1 ORDER BY score LIMIT ?2"
    })?;
    let rows = stmt.query_map(params![words.join(" OR "), limit as i64], |r| {
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

/// Which of (path, blob id) have no blame for that blob yet.
pub(crate) fn blame_needed(conn: &Connection, files: &[(String, String)]) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT blob_id FROM blame_done WHERE path = ?1")?;
    let mut out = Vec::new();
    for (path, blob) in files {
        let done: Option<String> = stmt.query_row([path], |r| r.get(0)).optional()?;
        if done.as_deref() != Some(blob.as_str()) {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// A file's blame as stored: its commits once, and its ranges as
/// (first line, last line, index of the commit), zstd-compressed JSON.
#[derive(serde::Serialize, serde::Deserialize)]
struct PackedBlame {
    shas: Vec<String>,
    ranges: Vec<(u32, u32, u32)>,
}

fn pack_blame(ranges: &[crate::BlameLines]) -> Result<(Vec<u8>, Vec<String>)> {
    let mut shas: Vec<String> = Vec::new();
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut packed = Vec::with_capacity(ranges.len());
    for r in ranges {
        let i = *index.entry(r.sha.as_str()).or_insert_with(|| {
            shas.push(r.sha.clone());
            shas.len() as u32 - 1
        });
        packed.push((r.start_line, r.end_line, i));
    }
    let value = PackedBlame {
        shas,
        ranges: packed,
    };
    let json = serde_json::to_vec(&value).map_err(|e| StoreError::Other(e.to_string()))?;
    let data = super::texts::compress(&json)
        .map_err(|e| StoreError::Other(format!("compressing blame: {e}")))?;
    Ok((data, value.shas))
}

fn unpack_blame(data: &[u8]) -> Result<Vec<crate::BlameLines>> {
    let bad = |e: String| StoreError::Other(format!("stored blame: {e}"));
    let json = zstd::stream::decode_all(data).map_err(|e| bad(e.to_string()))?;
    let p: PackedBlame = serde_json::from_slice(&json).map_err(|e| bad(e.to_string()))?;
    p.ranges
        .into_iter()
        .map(|(start_line, end_line, i)| {
            Ok(crate::BlameLines {
                start_line,
                end_line,
                sha: p
                    .shas
                    .get(i as usize)
                    .cloned()
                    .ok_or_else(|| bad("a range names no commit".into()))?,
            })
        })
        .collect()
}

/// Forget a file's blame: its packed ranges, its (commit, path) pairs, and
/// the rows an index written before kept in `blame`.
pub(crate) fn delete_blame(tx: &Connection, path: &str) -> Result<()> {
    let old: Option<Vec<u8>> = tx
        .prepare_cached("SELECT data FROM blame_files WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(data) = old {
        let mut del = tx.prepare_cached(
            "DELETE FROM blame_pairs WHERE sha = ?1 AND path_id = (SELECT id FROM paths WHERE path = ?2)",
        )?;
        let mut del_legacy = if has_table(tx, "blame_by_commit")? {
            Some(tx.prepare_cached("DELETE FROM blame_by_commit WHERE sha = ?1 AND path = ?2")?)
        } else {
            None
        };
        let mut seen = HashSet::new();
        for r in unpack_blame(&data)? {
            if seen.insert(r.sha.clone()) {
                del.execute(params![sha_bytes(&r.sha), path])?;
                if let Some(d) = &mut del_legacy {
                    d.execute([&r.sha, path])?;
                }
            }
        }
        tx.prepare_cached("DELETE FROM blame_files WHERE path = ?1")?
            .execute([path])?;
    }
    tx.prepare_cached("DELETE FROM blame WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

pub(crate) fn put_blame(conn: &mut Connection, items: &[crate::FileBlameRecord]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut ins = tx.prepare_cached("INSERT INTO blame_files(path, data) VALUES (?1, ?2)")?;
        let mut pair =
            tx.prepare_cached("INSERT OR IGNORE INTO blame_pairs(sha, path_id) VALUES (?1, ?2)")?;
        let mut paths = PathIds::new(&tx)?;
        let mut done = tx.prepare_cached(
            "INSERT OR REPLACE INTO blame_done(path, blob_id, method) VALUES (?1, ?2, ?3)",
        )?;
        for f in items {
            delete_blame(&tx, &f.path)?;
            let (data, shas) = pack_blame(&f.ranges)?;
            ins.execute(params![f.path, data])?;
            let path_id = paths.id(&f.path)?;
            for sha in &shas {
                pair.execute(params![sha_bytes(sha), path_id])?;
            }
            done.execute(params![f.path, f.blob_id, f.method])?;
        }
    }
    tx.commit()?;
    Ok(())
}

pub(crate) fn blame_of(conn: &Connection, path: &str) -> Result<Vec<crate::BlameLines>> {
    let packed: Option<Vec<u8>> = conn
        .prepare_cached("SELECT data FROM blame_files WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(data) = packed {
        return unpack_blame(&data);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT start_line, end_line, sha FROM blame WHERE path = ?1 ORDER BY start_line",
    )?;
    let rows = stmt.query_map([path], |r| {
        Ok(crate::BlameLines {
            start_line: r.get(0)?,
            end_line: r.get(1)?,
            sha: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Paths with lines last changed by one of `shas`.
pub(crate) fn paths_blamed_on(conn: &Connection, shas: &[String]) -> Result<HashSet<String>> {
    let mut pairs = conn.prepare_cached(
        "SELECT p.path FROM blame_pairs b JOIN paths p ON p.id = b.path_id WHERE b.sha = ?1",
    )?;
    // indexes written before: (sha, path) text pairs, or rows per range
    let mut text_pairs = if has_table(conn, "blame_by_commit")? {
        Some(conn.prepare_cached("SELECT path FROM blame_by_commit WHERE sha = ?1")?)
    } else {
        None
    };
    let mut legacy = conn.prepare_cached("SELECT DISTINCT path FROM blame WHERE sha = ?1")?;
    let old_rows = conn
        .prepare_cached("SELECT 1 FROM blame LIMIT 1")?
        .exists([])?;
    let mut out = HashSet::new();
    for s in shas {
        for p in pairs.query_map([sha_bytes(s)], |r| r.get::<_, String>(0))? {
            out.insert(p?);
        }
        if let Some(stmt) = &mut text_pairs {
            for p in stmt.query_map([s], |r| r.get::<_, String>(0))? {
                out.insert(p?);
            }
        }
        if old_rows {
            for p in legacy.query_map([s], |r| r.get::<_, String>(0))? {
                out.insert(p?);
            }
        }
    }
    Ok(out)
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
        for legacy in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
            if legacy {
                conn.execute_batch(
                    "CREATE VIRTUAL TABLE commit_fts USING fts5(sha UNINDEXED, message, paths);",
                )
                .unwrap();
            }
            assert_eq!(add_commits(&mut conn, &commits).unwrap(), 3);
            assert_eq!(add_commits(&mut conn, &commits[..1]).unwrap(), 0);
            let hits = search_commits(&conn, "session refresh", 10).unwrap();
            let shas: Vec<&str> = hits.iter().map(|(s, _)| s.as_str()).collect();
            assert_eq!(shas, ["c1", "c3"], "legacy: {legacy}");
            assert!(hits[0].1 > hits[1].1);
            let by_path = search_commits(&conn, "retry", 10).unwrap();
            assert_eq!(by_path[0].0, "c2", "legacy: {legacy}");
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
        for legacy in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
            if legacy {
                conn.execute_batch(
                    "CREATE TABLE commit_files (sha TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, old_path TEXT);",
                )
                .unwrap();
            }
            add_commits(&mut conn, &written).unwrap();
            let shas: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
            let got = commits(&conn, &shas, true).unwrap();
            for c in &written {
                assert_eq!(got[&c.sha].files, c.files, "{} legacy: {legacy}", c.sha);
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
            assert_eq!(touching, want, "legacy: {legacy}");
            let interned: i64 = conn
                .query_row("SELECT count(*) FROM paths", [], |r| r.get(0))
                .unwrap();
            assert_eq!(interned, if legacy { 0 } else { 4 }, "each path once");
        }
    }

    #[test]
    fn blame_is_packed_per_file_with_its_commits_and_old_rows_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
        let lines = |a: u32, b: u32, sha: &str| crate::BlameLines {
            start_line: a,
            end_line: b,
            sha: sha.into(),
        };
        // an index written before: rows in `blame`
        conn.execute_batch(
            "INSERT INTO blame(path, start_line, end_line, sha) VALUES ('old.py', 1, 4, 'c1'), ('old.py', 5, 5, 'c2');",
        )
        .unwrap();
        let record = |path: &str, ranges: Vec<crate::BlameLines>| crate::FileBlameRecord {
            path: path.into(),
            blob_id: format!("blob-{path}"),
            method: "exact".into(),
            ranges,
        };
        put_blame(
            &mut conn,
            &[record(
                "a.py",
                vec![lines(1, 2, "c1"), lines(3, 9, "c3"), lines(10, 10, "c1")],
            )],
        )
        .unwrap();
        assert_eq!(
            blame_of(&conn, "a.py").unwrap(),
            vec![lines(1, 2, "c1"), lines(3, 9, "c3"), lines(10, 10, "c1")]
        );
        assert_eq!(
            blame_of(&conn, "old.py").unwrap(),
            vec![lines(1, 4, "c1"), lines(5, 5, "c2")]
        );
        let on = |conn: &Connection, shas: &[&str]| {
            let shas: Vec<String> = shas.iter().map(|s| s.to_string()).collect();
            let mut v: Vec<String> = paths_blamed_on(conn, &shas).unwrap().into_iter().collect();
            v.sort();
            v
        };
        assert_eq!(on(&conn, &["c1"]), ["a.py", "old.py"]);
        assert_eq!(on(&conn, &["c3"]), ["a.py"]);
        // an index of the release before: (sha, path) text pairs
        conn.execute_batch(
            "CREATE TABLE blame_by_commit (sha TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (sha, path)) WITHOUT ROWID;
             INSERT INTO blame_by_commit VALUES ('c3', 'older.py');",
        )
        .unwrap();
        assert_eq!(on(&conn, &["c3"]), ["a.py", "older.py"]);
        conn.execute_batch("DROP TABLE blame_by_commit").unwrap();
        // full commit ids are kept as their 20 bytes
        let sha = "0123456789abcdef0123456789abcdef01234567";
        put_blame(&mut conn, &[record("b.py", vec![lines(1, 3, sha)])]).unwrap();
        assert_eq!(on(&conn, &[sha]), ["b.py"]);
        let stored: i64 = conn
            .query_row("SELECT max(length(sha)) FROM blame_pairs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 20);
        delete_blame(&conn, "b.py").unwrap();
        // blamed again: the old file's rows and the new file's pairs are replaced
        put_blame(
            &mut conn,
            &[
                record("old.py", vec![lines(1, 5, "c4")]),
                record("a.py", vec![lines(1, 10, "c4")]),
            ],
        )
        .unwrap();
        assert_eq!(blame_of(&conn, "old.py").unwrap(), vec![lines(1, 5, "c4")]);
        assert!(on(&conn, &["c1", "c2", "c3"]).is_empty());
        assert_eq!(on(&conn, &["c4"]), ["a.py", "old.py"]);
        delete_blame(&conn, "a.py").unwrap();
        assert!(blame_of(&conn, "a.py").unwrap().is_empty());
        assert_eq!(on(&conn, &["c4"]), ["old.py"]);
    }
}
