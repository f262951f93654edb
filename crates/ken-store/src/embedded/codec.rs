//! Encodings every table shares: path ids, ids written in hex, and
//! whether a table exists (layouts of older indexes).

use std::collections::HashMap;

use rusqlite::Connection;
use rusqlite::types::{Value, ValueRef};

use crate::Result;

/// Ids as one JSON array parameter: a statement per id would be prepared
/// again for every value (SQLite does so when a bound value may change the
/// plan, as with STAT4 on an indexed column), and each would be a read
/// transaction of its own.
pub(crate) fn id_array(ids: &[u64]) -> String {
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
