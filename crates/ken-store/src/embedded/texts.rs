//! File text in the `blobs` table, stored once per content and compressed.
//!
//! New rows hold the file's bytes as a zstd frame (a BLOB); indexes written
//! before hold plain TEXT, which is still read. A chunk's text is never
//! stored apart from its file's (except synthetic chunks): it is cut from
//! the file's bytes by its byte offsets, with one decompression per file
//! per read (see [`FileTexts`]).

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};

use crate::{Result, StoreError};

/// zstd level for file text: measured on sympy, level 3 keeps the write
/// cost well under the parse cost and level 9 saved under 10 % more.
const LEVEL: i32 = 3;

/// `bytes` as one zstd frame at the store's level, with a compression
/// context kept per thread (making one per value cost as much as
/// compressing a small file).
pub(crate) fn compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Compressor::new(LEVEL)?);
        }
        match c.as_mut() {
            Some(ctx) => ctx.compress(bytes),
            None => zstd::bulk::compress(bytes, LEVEL),
        }
    })
}

/// Frames claiming more than this are read by the streaming decoder, which
/// grows its output as it goes instead of allocating the claim up front.
const MOST_AT_ONCE: usize = 1 << 30;

/// The bytes of zstd frames, with a decompression context kept per thread.
/// zstd's `decode_all` makes a context per call, and making one (a large
/// zeroed allocation) took a fifth of a warm server's time over many
/// repositories. A frame that does not record its size (none written here
/// do) is read into the bound zstd gives for it, or by the streaming path.
pub(crate) fn decompress(data: &[u8]) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let Some(size) = zstd::bulk::Decompressor::upper_bound(data).filter(|n| *n <= MOST_AT_ONCE)
    else {
        return zstd::stream::decode_all(data);
    };
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Decompressor::new()?);
        }
        match c.as_mut() {
            Some(ctx) => ctx.decompress(data, size),
            None => zstd::stream::decode_all(data),
        }
    })
}

/// Append `n` as LEB128: seven bits a byte, low bits first.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The LEB128 number at `*at` in `bytes`, moving `*at` past it; None when
/// it is cut short or longer than 64 bits.
pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// The stored form of a file's text.
pub(crate) fn pack(text: &str) -> Result<Vec<u8>> {
    compress(text.as_bytes()).map_err(|e| StoreError::Other(format!("compressing file text: {e}")))
}

/// A file's bytes from its stored form: a zstd BLOB, or TEXT from before.
pub(crate) fn unpack(v: ValueRef<'_>) -> Result<Vec<u8>> {
    match v {
        ValueRef::Text(t) => Ok(t.to_vec()),
        ValueRef::Blob(b) => decompress(b)
            .map_err(|e| StoreError::Other(format!("stored file text is damaged: {e}"))),
        ValueRef::Null => Ok(Vec::new()),
        _ => Err(StoreError::Other(
            "stored file text has the wrong type".into(),
        )),
    }
}

/// Texts shorter than this stay plain: zstd saves little on them.
const PACK_FROM: usize = 96;

/// The stored form of a chunk's long text fields (its docstring, or the
/// text of a chunk not cut from its file): zstd from [`PACK_FROM`] bytes.
pub(crate) fn pack_field(text: Option<&str>) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match text {
        None => Value::Null,
        Some(t) if t.len() >= PACK_FROM => match compress(t.as_bytes()) {
            Ok(z) if z.len() < t.len() => Value::Blob(z),
            _ => Value::Text(t.to_string()),
        },
        Some(t) => Value::Text(t.to_string()),
    }
}

/// A field stored by [`pack_field`] (or plain text, as before).
pub(crate) fn unpack_field(r: &rusqlite::Row<'_>, col: usize) -> rusqlite::Result<Option<String>> {
    match r.get_ref(col)? {
        ValueRef::Null => Ok(None),
        ValueRef::Text(t) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(b) => match decompress(b) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) => Err(rusqlite::Error::FromSqlConversionFailure(
                col,
                rusqlite::types::Type::Blob,
                Box::new(e),
            )),
        },
        other => Err(rusqlite::Error::InvalidColumnType(
            col,
            "text".into(),
            other.data_type(),
        )),
    }
}

/// The bytes of the blob `id`, if stored.
pub(crate) fn blob_bytes(conn: &Connection, id: &str) -> Result<Option<Vec<u8>>> {
    let mut stmt = conn.prepare_cached("SELECT text FROM blobs WHERE id = ?1")?;
    let mut rows = stmt.query([id])?;
    match rows.next()? {
        Some(r) => Ok(Some(unpack(r.get_ref(0)?)?)),
        None => Ok(None),
    }
}

/// The text of the indexed file at `path`.
pub(crate) fn file_text(conn: &Connection, path: &str) -> Result<Option<String>> {
    let id: Option<String> = conn
        .query_row("SELECT blob_id FROM files WHERE path = ?1", [path], |r| {
            r.get(0)
        })
        .optional()?;
    let Some(id) = id else { return Ok(None) };
    Ok(blob_bytes(conn, &id)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Files' bytes read during one query, each decompressed once (rows come
/// file by file, so a few recent files are enough: at most [`KEPT`] are
/// held, however many the query reads).
#[derive(Default)]
pub(crate) struct FileTexts {
    files: HashMap<String, Arc<Vec<u8>>>,
}

const KEPT: usize = 64;

impl FileTexts {
    /// Bytes `start..end` of blob `id` as text (invalid UTF-8 replaced;
    /// offsets past the end clamped), or "" when the blob is missing.
    pub(crate) fn cut(
        &mut self,
        conn: &Connection,
        id: &str,
        start: i64,
        end: i64,
    ) -> Result<String> {
        let bytes = match self.files.get(id) {
            Some(b) => Arc::clone(b),
            None => {
                let b = Arc::new(blob_bytes(conn, id)?.unwrap_or_default());
                if self.files.len() >= KEPT {
                    self.files.clear();
                }
                self.files.insert(id.to_string(), Arc::clone(&b));
                b
            }
        };
        let start = (start.max(0) as usize).min(bytes.len());
        let end = (end.max(0) as usize).clamp(start, bytes.len());
        Ok(String::from_utf8_lossy(&bytes[start..end]).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE blobs (id TEXT PRIMARY KEY, text TEXT NOT NULL);
             CREATE TABLE files (path TEXT PRIMARY KEY, blob_id TEXT NOT NULL);",
        )
        .unwrap();
        c
    }

    /// One context per thread reads every frame: what was written, a frame
    /// without its size (as a streaming encoder writes it), an empty one,
    /// and many in a row; damaged bytes are an error, not a panic.
    #[test]
    fn frames_read_back_through_one_context() {
        let long = "def parse(line):\n    return line.split()\n".repeat(500);
        for text in ["", "short", long.as_str()] {
            let packed = compress(text.as_bytes()).unwrap();
            assert_eq!(decompress(&packed).unwrap(), text.as_bytes());
        }
        let streamed = {
            use std::io::Write;
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            e.write_all(long.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        assert!(matches!(
            zstd::zstd_safe::get_frame_content_size(&streamed),
            Ok(None)
        ));
        assert_eq!(decompress(&streamed).unwrap(), long.as_bytes());
        for i in 0..100 {
            let text = format!("value {i} {long}");
            assert_eq!(
                decompress(&compress(text.as_bytes()).unwrap()).unwrap(),
                text.as_bytes()
            );
        }
        let mut damaged = compress(long.as_bytes()).unwrap();
        let mid = damaged.len() / 2;
        damaged.truncate(mid);
        assert!(decompress(&damaged).is_err());
        assert!(decompress(b"not zstd at all").is_err());
    }

    #[test]
    fn packed_and_old_text_rows_read_the_same() {
        let c = db();
        let text = "fn main() {\n    println!(\"héllo\");\n}\n";
        c.execute(
            "INSERT INTO blobs VALUES ('new', ?1)",
            [pack(text).unwrap()],
        )
        .unwrap();
        c.execute("INSERT INTO blobs VALUES ('old', ?1)", [text])
            .unwrap();
        c.execute(
            "INSERT INTO files VALUES ('a.rs', 'new'), ('b.rs', 'old')",
            [],
        )
        .unwrap();
        assert_eq!(file_text(&c, "a.rs").unwrap().as_deref(), Some(text));
        assert_eq!(file_text(&c, "b.rs").unwrap().as_deref(), Some(text));
        assert_eq!(file_text(&c, "c.rs").unwrap(), None);
        let mut cache = FileTexts::default();
        for id in ["new", "old"] {
            assert_eq!(cache.cut(&c, id, 16, 34).unwrap(), "println!(\"héllo\")");
            // Offsets past the end are clamped, a missing blob is empty.
            assert_eq!(cache.cut(&c, id, 36, 500).unwrap(), "}\n");
        }
        assert_eq!(cache.cut(&c, "gone", 0, 4).unwrap(), "");
    }

    #[test]
    fn long_fields_are_packed_short_ones_and_old_rows_stay_text() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (n INTEGER, v TEXT)")
            .unwrap();
        let long = "Return the simplified expression. ".repeat(10);
        let rows = [None, Some("short doc"), Some(long.as_str())];
        for (n, v) in rows.iter().enumerate() {
            c.execute(
                "INSERT INTO t VALUES (?1, ?2)",
                rusqlite::params![n as i64, pack_field(*v)],
            )
            .unwrap();
        }
        c.execute("INSERT INTO t VALUES (3, ?1)", [long.as_str()])
            .unwrap();
        let kind: String = c
            .query_row("SELECT typeof(v) FROM t WHERE n = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kind, "blob", "a long field is compressed");
        let mut stmt = c.prepare("SELECT v FROM t ORDER BY n").unwrap();
        let got: Vec<Option<String>> = stmt
            .query_map([], |r| unpack_field(r, 0))
            .unwrap()
            .map(|x| x.unwrap())
            .collect();
        let want: Vec<Option<String>> = [None, Some("short doc"), Some(&long), Some(&long)]
            .iter()
            .map(|x| x.map(str::to_string))
            .collect();
        assert_eq!(got, want);
        c.execute("INSERT INTO t VALUES (4, ?1)", [vec![9u8; 8]])
            .unwrap();
        let bad = c.query_row("SELECT v FROM t WHERE n = 4", [], |r| unpack_field(r, 0));
        assert!(bad.is_err(), "a damaged field is an error");
    }

    #[test]
    fn varints_round_trip_and_cut_ones_are_none() {
        let mut out = Vec::new();
        let numbers = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        for n in numbers {
            put_varint(&mut out, n);
        }
        let mut at = 0;
        for n in numbers {
            assert_eq!(get_varint(&out, &mut at), Some(n));
        }
        assert_eq!(at, out.len());
        assert_eq!(get_varint(&[0x80], &mut 0), None);
        assert_eq!(get_varint(&[0xff; 11], &mut 0), None);
    }

    #[test]
    fn a_damaged_blob_is_an_error_not_a_panic() {
        let c = db();
        c.execute("INSERT INTO blobs VALUES ('x', ?1)", [vec![1u8, 2, 3]])
            .unwrap();
        assert!(blob_bytes(&c, "x").is_err());
    }
}
