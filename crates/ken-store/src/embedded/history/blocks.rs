//! Values of consecutive `history` rows stored together, compressed: one
//! row per block, keyed by the block's first `history` row. Alone, a
//! commit's message or its list of changed files is too short to
//! compress; side by side, messages share most of their words and file
//! lists most of their paths.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::embedded::texts;
use crate::{Result, StoreError};

/// At most this many values, or about this many bytes of them, share a
/// block; reading one value decompresses its whole block.
pub(super) const BLOCK_VALUES: usize = 256;
const BLOCK_BYTES: usize = 64 * 1024;

/// The tables blocks are kept in, each `(first INTEGER PRIMARY KEY, data BLOB)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    /// Commit messages.
    Messages,
    /// Changed files, as [`super::files`] packs them.
    Files,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Messages => "message_blocks",
            Table::Files => "file_blocks",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Table::Messages => "commit messages",
            Table::Files => "commit files",
        }
    }
}

/// Values of consecutive `history` rows on their way to one block.
pub(super) struct BlockWriter {
    table: Table,
    first: i64,
    values: Vec<Vec<u8>>,
    bytes: usize,
}

impl BlockWriter {
    pub(super) fn new(table: Table) -> Self {
        BlockWriter {
            table,
            first: 0,
            values: Vec::new(),
            bytes: 0,
        }
    }

    /// Add row `id`'s value, storing the block first when `id` cannot join
    /// it (it does not follow the block's last row, or the block is full).
    pub(super) fn push(&mut self, tx: &Connection, id: i64, value: Vec<u8>) -> Result<()> {
        let joins = self.values.is_empty()
            || (id == self.first + self.values.len() as i64
                && self.values.len() < BLOCK_VALUES
                && self.bytes < BLOCK_BYTES);
        if !joins {
            self.write(tx)?;
        }
        if self.values.is_empty() {
            self.first = id;
        }
        self.bytes += value.len();
        self.values.push(value);
        Ok(())
    }

    /// Store the block (when it holds any value) and empty it.
    pub(super) fn write(&mut self, tx: &Connection) -> Result<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        let data = pack(self.table, &self.values)?;
        tx.prepare_cached(&format!(
            "INSERT OR REPLACE INTO {}(first, data) VALUES (?1, ?2)",
            self.table.name()
        ))?
        .execute(params![self.first, data])?;
        self.values.clear();
        self.bytes = 0;
        Ok(())
    }
}

/// Values as one compressed value: each its length (LEB128) then its bytes.
pub(super) fn pack<V: AsRef<[u8]>>(table: Table, values: &[V]) -> Result<Vec<u8>> {
    let mut raw = Vec::with_capacity(values.iter().map(|v| v.as_ref().len() + 2).sum());
    for v in values {
        let v = v.as_ref();
        texts::put_varint(&mut raw, v.len() as u64);
        raw.extend_from_slice(v);
    }
    texts::compress(&raw)
        .map_err(|e| StoreError::Other(format!("compressing {}: {e}", table.what())))
}

pub(super) fn unpack(table: Table, data: &[u8]) -> Result<Vec<Vec<u8>>> {
    let bad = |why: &str| StoreError::Other(format!("stored {}: {why}", table.what()));
    let raw = texts::decompress(data).map_err(|e| bad(&e.to_string()))?;
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let n = texts::get_varint(&raw, &mut at).ok_or_else(|| bad("a length is cut"))? as usize;
        let value = raw
            .get(at..at.saturating_add(n))
            .ok_or_else(|| bad("a value runs past the end"))?;
        out.push(value.to_vec());
        at += n;
    }
    Ok(out)
}

/// Reads values by `history` row, each block decompressed once.
pub(super) struct Blocks<'c> {
    conn: &'c Connection,
    table: Table,
    /// Blocks read so far, by their first row.
    blocks: BTreeMap<i64, Vec<Vec<u8>>>,
}

impl<'c> Blocks<'c> {
    pub(super) fn new(conn: &'c Connection, table: Table) -> Self {
        Blocks {
            conn,
            table,
            blocks: BTreeMap::new(),
        }
    }

    /// Read every block at once (for a pass over all commits).
    pub(super) fn load_all(&mut self) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT first, data FROM {}", self.table.name()))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let data = r
                .get_ref(1)?
                .as_blob()
                .map_err(|e| StoreError::Other(format!("stored {}: {e}", self.table.what())))?;
            self.blocks.insert(r.get(0)?, unpack(self.table, data)?);
        }
        Ok(())
    }

    fn cached(&self, id: i64) -> Option<&[u8]> {
        let (first, values) = self.blocks.range(..=id).next_back()?;
        values
            .get(usize::try_from(id - first).ok()?)
            .map(Vec::as_slice)
    }

    /// Row `id`'s value; an error when no block holds it.
    pub(super) fn get(&mut self, id: i64) -> Result<&[u8]> {
        if self.cached(id).is_none() {
            let block: Option<(i64, Vec<u8>)> = self
                .conn
                .prepare_cached(&format!(
                    "SELECT first, data FROM {} WHERE first <= ?1 ORDER BY first DESC LIMIT 1",
                    self.table.name()
                ))?
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            if let Some((first, data)) = block {
                self.blocks.insert(first, unpack(self.table, &data)?);
            }
        }
        self.cached(id).ok_or_else(|| {
            StoreError::Other(format!(
                "stored history: the {} of commit row {id} are missing",
                self.table.what()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_pack_and_come_back_and_damage_is_an_error() {
        let values = ["", "one", &"long ".repeat(100), "naïve ✓"];
        for table in [Table::Messages, Table::Files] {
            let packed = pack(table, &values).unwrap();
            let back = unpack(table, &packed).unwrap();
            assert_eq!(back.len(), values.len());
            for (b, v) in back.iter().zip(values) {
                assert_eq!(b.as_slice(), v.as_bytes());
            }
        }
        // a length that says more bytes follow than do
        let damaged = texts::compress(&[0x05, b'a']).unwrap();
        assert!(unpack(Table::Messages, &damaged).is_err());
        assert!(unpack(Table::Files, b"not zstd").is_err());
    }

    #[test]
    fn blocks_hold_consecutive_rows_and_are_read_back_by_row() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::embedded::schema::open(&dir.path().join("index.sqlite")).unwrap();
        let mut w = BlockWriter::new(Table::Files);
        // rows 1..=300 (two blocks), then a gap, then 400..=401
        let rows: Vec<i64> = (1..=300).chain(400..=401).collect();
        for id in &rows {
            w.push(&conn, *id, id.to_string().into_bytes()).unwrap();
        }
        w.write(&conn).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM file_blocks", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            n, 3,
            "a full block, the rest of the run, the run after the gap"
        );
        let mut r = Blocks::new(&conn, Table::Files);
        for id in rows.iter().rev() {
            assert_eq!(r.get(*id).unwrap(), id.to_string().as_bytes());
        }
        assert!(r.get(350).is_err());
        assert!(r.get(0).is_err());
        let mut all = Blocks::new(&conn, Table::Files);
        all.load_all().unwrap();
        assert_eq!(all.get(257).unwrap(), b"257");
    }
}
