//! Graph facts, edges and ranks: compressed per file, older row layouts
//! still read.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::codec::has_table;
use super::texts;
use crate::{Result, StoreError};

// ---- the code graph ----
pub(crate) fn graph_facts(
    conn: &Connection,
    paths: Option<&[String]>,
) -> Result<Vec<ken_core::FileFacts>> {
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
pub(crate) fn pack_facts(facts: &ken_core::FileFacts) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(facts).map_err(|e| StoreError::Other(e.to_string()))?;
    super::texts::compress(&json).map_err(|e| StoreError::Other(format!("compressing facts: {e}")))
}

fn unpack_facts(v: rusqlite::types::ValueRef<'_>) -> Result<ken_core::FileFacts> {
    use rusqlite::types::ValueRef;
    let bad = |e: String| StoreError::Other(format!("stored graph facts: {e}"));
    match v {
        ValueRef::Blob(b) => {
            let json = texts::decompress(b).map_err(|e| bad(e.to_string()))?;
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
    edges: &[ken_core::Edge],
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
        let mut by_file: std::collections::BTreeMap<&str, Vec<&ken_core::Edge>> =
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

fn pack_edges(list: &[&ken_core::Edge]) -> Result<Vec<u8>> {
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

fn edge_of(path: &str, r: EdgeRow) -> ken_core::Edge {
    let (from_q, from_nth, to_path, to_q, to_nth, kind, line, rule, confidence) = r;
    ken_core::Edge {
        from: ken_core::DefKey::new(path, from_q, from_nth),
        to: ken_core::DefKey::new(to_path, to_q, to_nth),
        kind: ken_core::RefKind::parse(&kind).unwrap_or(ken_core::RefKind::Call),
        path: path.to_string(),
        line,
        rule: ken_core::Rule::parse(&rule).unwrap_or(ken_core::Rule::UniqueGlobal),
        confidence,
    }
}

pub(crate) fn edges(conn: &Connection) -> Result<Vec<ken_core::Edge>> {
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
    let mut out: Vec<ken_core::Edge> = rows.collect::<std::result::Result<_, _>>()?;
    let bad = |e: String| StoreError::Other(format!("stored edges: {e}"));
    let mut stmt = conn.prepare("SELECT path, data FROM edge_files ORDER BY path")?;
    let mut files = stmt.query([])?;
    while let Some(r) = files.next()? {
        let path: String = r.get(0)?;
        let data = r.get_ref(1)?.as_blob().map_err(|e| bad(e.to_string()))?;
        let json = texts::decompress(data).map_err(|e| bad(e.to_string()))?;
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
    defs: &[(ken_core::DefKey, f32)],
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
    let raw = texts::decompress(data).map_err(|e| bad(&e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::schema::open;

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
            ken_core::FileFacts::new(
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
        let edge = |from: &str, to: &str, line: u32| ken_core::Edge {
            from: ken_core::DefKey::new(from, "main", 0),
            to: ken_core::DefKey::new(to, "load", 1),
            kind: ken_core::RefKind::Call,
            path: from.to_string(),
            line,
            rule: ken_core::Rule::UniqueGlobal,
            confidence: 0.5,
        };
        // an index written before: its edges are rows of `edges`
        conn.execute(
            "INSERT INTO edges(src_path, src_q, src_nth, dst_path, dst_q, dst_nth, kind, line, rule, confidence)
             VALUES ('old.py', 'main', 0, 'a.py', 'load', 1, 'call', 7, ?1, 0.5)",
            [ken_core::Rule::UniqueGlobal.name()],
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
        let key = |path: &str, qualname: &str, nth: u32| ken_core::DefKey {
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
