//! Files, chunks (their text cut from the file's content, or stored when
//! assembled) and the counts `ken status` shows.

use std::collections::HashSet;

use ken_core::{ChunkKind, Language};
use rusqlite::{Connection, params};

use super::codec::{hex_text, id_array};
use crate::{FileRecord, Result, Stats, StoreError, StoredChunk};

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
    let mut skipped: std::collections::BTreeMap<String, u64> = super::schema::read_state(conn)?
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

pub(crate) fn chunks_of_file(conn: &Connection, path: &str) -> Result<Vec<StoredChunk>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.path = c.path
         WHERE c.path = ?1 ORDER BY c.start_byte, c.end_byte DESC"
    ))?;
    with_text(conn, &mut stmt, [path])
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
