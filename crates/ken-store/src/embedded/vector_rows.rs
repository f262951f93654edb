//! The vector cache: embeddings by model and content key, kept in the
//! database so a re-index embeds only what changed.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use crate::Result;

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
