//! The files each commit changed, both ways round, with each path once in
//! `paths`:
//! - by commit: a commit's list of (path, status, old path) packed as
//!   small numbers, in `file_blocks` beside its message;
//! - by path: `path_commits` holds, per path, the `history` rows of the
//!   commits that changed it, ascending, as LEB128 gaps.
//!
//! A row per (commit, file) with an index by path took about 28 bytes a
//! file on express; this takes about 3 bytes of payload (5 with pages). Indexes written with that table
//! (`commit_paths`) are moved to this layout when opened
//! ([`move_commit_paths`]).

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, OptionalExtension, params};

use super::STATUSES;
use super::blocks::{BlockWriter, Blocks, Table};
use crate::embedded::codec::{PathIds, has_table, hex_text};
use crate::embedded::texts::{get_varint, put_varint};
use crate::{Result, StoreError};

/// The status code of a status given as text (not one of [`STATUSES`]).
const OTHER: u64 = 4;

/// One changed file with its path and old path as `paths` ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileIds {
    pub path: i64,
    pub status: String,
    pub old: Option<i64>,
}

/// A commit's files as one value: per file, `path << 4 | status << 1 |
/// has_old` (LEB128), then the status text when it is not one of
/// [`STATUSES`] (length, bytes), then the old path's id when there is one.
pub(super) fn pack_files(files: &[FileIds]) -> Vec<u8> {
    let mut out = Vec::with_capacity(files.len() * 3);
    for f in files {
        let code = STATUSES
            .iter()
            .position(|s| *s == f.status)
            .map_or(OTHER, |i| i as u64);
        put_varint(
            &mut out,
            (f.path as u64) << 4 | code << 1 | u64::from(f.old.is_some()),
        );
        if code == OTHER {
            put_varint(&mut out, f.status.len() as u64);
            out.extend_from_slice(f.status.as_bytes());
        }
        if let Some(old) = f.old {
            put_varint(&mut out, old as u64);
        }
    }
    out
}

pub(super) fn unpack_files(data: &[u8]) -> Result<Vec<FileIds>> {
    let bad = || StoreError::Other("stored commit files: a value is cut".into());
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let head = get_varint(data, &mut at).ok_or_else(bad)?;
        let code = (head >> 1) & 0b111;
        let status = match STATUSES.get(code as usize) {
            Some(s) => s.to_string(),
            None => {
                let n = get_varint(data, &mut at).ok_or_else(bad)? as usize;
                let text = data.get(at..at.saturating_add(n)).ok_or_else(bad)?;
                at += n;
                String::from_utf8_lossy(text).into_owned()
            }
        };
        let old = if head & 1 == 1 {
            Some(get_varint(data, &mut at).ok_or_else(bad)? as i64)
        } else {
            None
        };
        out.push(FileIds {
            path: (head >> 4) as i64,
            status,
            old,
        });
    }
    Ok(out)
}

/// Row ids, ascending, as LEB128 gaps (the first from zero).
fn pack_rows(rows: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 2);
    let mut last = 0;
    for &r in rows {
        put_varint(&mut out, (r - last) as u64);
        last = r;
    }
    out
}

pub(super) fn unpack_rows(data: &[u8]) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut last = 0i64;
    while at < data.len() {
        let gap = get_varint(data, &mut at)
            .ok_or_else(|| StoreError::Other("stored commits of a path: a value is cut".into()))?;
        last = last.saturating_add(gap as i64);
        out.push(last);
    }
    Ok(out)
}

/// The files of commits being added in one transaction: their blocks, and
/// the rows to add to each path's list once all are in.
pub(super) struct FilesWriter<'t> {
    paths: PathIds<'t>,
    blocks: BlockWriter,
    by_path: BTreeMap<i64, Vec<i64>>,
}

impl<'t> FilesWriter<'t> {
    pub(super) fn new(tx: &'t Connection) -> Result<Self> {
        Ok(FilesWriter {
            paths: PathIds::new(tx)?,
            blocks: BlockWriter::new(Table::Files),
            by_path: BTreeMap::new(),
        })
    }

    /// Add the files of `history` row `id` (rows come in ascending order).
    pub(super) fn add(
        &mut self,
        tx: &Connection,
        id: i64,
        files: &[(String, String, Option<String>)],
    ) -> Result<()> {
        let mut ids = Vec::with_capacity(files.len());
        for (path, status, old) in files {
            let path = self.paths.id(path)?;
            let old = old.as_deref().map(|o| self.paths.id(o)).transpose()?;
            ids.push(FileIds {
                path,
                status: status.clone(),
                old,
            });
        }
        self.add_ids(tx, id, ids)
    }

    fn add_ids(&mut self, tx: &Connection, id: i64, files: Vec<FileIds>) -> Result<()> {
        for f in &files {
            let rows = self.by_path.entry(f.path).or_default();
            if rows.last() != Some(&id) {
                rows.push(id);
            }
        }
        self.blocks.push(tx, id, pack_files(&files))
    }

    /// Store what is left of the blocks and extend each path's list.
    pub(super) fn finish(mut self, tx: &Connection) -> Result<()> {
        self.blocks.write(tx)?;
        let mut read = tx.prepare_cached("SELECT data FROM path_commits WHERE path_id = ?1")?;
        let mut write = tx
            .prepare_cached("INSERT OR REPLACE INTO path_commits(path_id, data) VALUES (?1, ?2)")?;
        for (path, new) in std::mem::take(&mut self.by_path) {
            let stored: Option<Vec<u8>> = read.query_row([path], |r| r.get(0)).optional()?;
            let mut rows = match stored {
                Some(data) => unpack_rows(&data)?,
                None => Vec::new(),
            };
            rows.extend(new);
            rows.sort_unstable();
            rows.dedup();
            write.execute(params![path, pack_rows(&rows)])?;
        }
        Ok(())
    }
}

/// Reads commits' files by `history` row, paths resolved once each.
pub(super) struct FilesReader<'c> {
    conn: &'c Connection,
    blocks: Blocks<'c>,
    paths: HashMap<i64, String>,
}

impl<'c> FilesReader<'c> {
    pub(super) fn new(conn: &'c Connection) -> Self {
        FilesReader {
            conn,
            blocks: Blocks::new(conn, Table::Files),
            paths: HashMap::new(),
        }
    }

    fn path(&mut self, id: i64) -> Result<String> {
        if let Some(p) = self.paths.get(&id) {
            return Ok(p.clone());
        }
        let path: String = self
            .conn
            .prepare_cached("SELECT path FROM paths WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::Other(format!("stored history: path {id} is missing")))?;
        self.paths.insert(id, path.clone());
        Ok(path)
    }

    /// Row `id`'s files as (path, status, old path).
    pub(super) fn get(&mut self, id: i64) -> Result<Vec<(String, String, Option<String>)>> {
        let files = unpack_files(self.blocks.get(id)?)?;
        files
            .into_iter()
            .map(|f| {
                let old = f.old.map(|o| self.path(o)).transpose()?;
                Ok((self.path(f.path)?, f.status, old))
            })
            .collect()
    }
}

/// (sha, path) of commits that changed any of `paths`.
pub(super) fn commits_touching(
    conn: &Connection,
    paths: &[String],
) -> Result<Vec<(String, String)>> {
    let mut rows_of = conn.prepare_cached(
        "SELECT pc.data FROM paths p JOIN path_commits pc ON pc.path_id = p.id WHERE p.path = ?1",
    )?;
    let mut lists = Vec::new();
    for p in paths {
        if let Some(data) = rows_of
            .query_row([p], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        {
            lists.push((p, unpack_rows(&data)?));
        }
    }
    let wanted: usize = lists.iter().map(|(_, rows)| rows.len()).sum();
    let mut shas = RowShas::new(conn, wanted)?;
    let mut out = Vec::with_capacity(wanted);
    for (p, rows) in lists {
        for row in rows {
            if let Some(sha) = shas.get(row)? {
                out.push((sha, p.clone()));
            }
        }
    }
    Ok(out)
}

/// History rows' commit ids: one look-up per row for a few rows, one pass
/// over the history table for many (a file's churn reads thousands).
enum RowShas<'c> {
    Each(rusqlite::CachedStatement<'c>),
    All(HashMap<i64, String>),
}

/// Rows wanted past which one pass over the history table is cheaper.
const ROWS_PER_PASS: usize = 256;

impl<'c> RowShas<'c> {
    fn new(conn: &'c Connection, wanted: usize) -> Result<RowShas<'c>> {
        if wanted < ROWS_PER_PASS {
            return Ok(RowShas::Each(
                conn.prepare_cached("SELECT sha FROM history WHERE id = ?1")?,
            ));
        }
        let mut stmt = conn.prepare_cached("SELECT id, sha FROM history")?;
        let all = stmt
            .query_map([], |r| Ok((r.get(0)?, hex_text(r.get_ref(1)?))))?
            .collect::<std::result::Result<_, _>>()?;
        Ok(RowShas::All(all))
    }

    fn get(&mut self, row: i64) -> Result<Option<String>> {
        Ok(match self {
            RowShas::Each(stmt) => stmt
                .query_row([row], |r| Ok(hex_text(r.get_ref(0)?)))
                .optional()?,
            RowShas::All(all) => all.get(&row).cloned(),
        })
    }
}

/// Move an index's `commit_paths` rows (the layout before this one) into
/// file blocks and path lists, in one transaction, and drop the table.
/// Nothing to do for indexes without it, or whose history is still in a
/// `commits` table (which reads `commit_paths` itself).
pub(crate) fn move_commit_paths(conn: &mut Connection) -> Result<()> {
    if !has_table(conn, "commit_paths")? || has_table(conn, "commits")? {
        return Ok(());
    }
    let tx = conn.transaction()?;
    {
        let mut files: BTreeMap<i64, Vec<FileIds>> = BTreeMap::new();
        let mut stmt = tx.prepare(
            "SELECT commit_id, path_id, status, old_path_id FROM commit_paths ORDER BY commit_id, seq",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            files.entry(r.get(0)?).or_default().push(FileIds {
                path: r.get(1)?,
                status: super::status_of(r.get_ref(2)?),
                old: r.get(3)?,
            });
        }
        drop(rows);
        let ids: Vec<i64> = tx
            .prepare("SELECT id FROM history ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        let mut w = FilesWriter::new(&tx)?;
        for id in ids {
            w.add_ids(&tx, id, files.remove(&id).unwrap_or_default())?;
        }
        w.finish(&tx)?;
    }
    tx.execute_batch("DROP TABLE commit_paths")?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lists_and_row_lists_pack_and_come_back() {
        let lists = [
            vec![],
            vec![FileIds {
                path: 1,
                status: "added".into(),
                old: None,
            }],
            vec![
                FileIds {
                    path: 70_000,
                    status: "renamed".into(),
                    old: Some(3),
                },
                FileIds {
                    path: 0,
                    status: "typechange".into(),
                    old: None,
                },
                FileIds {
                    path: 5,
                    status: "".into(),
                    old: Some(0),
                },
            ],
        ];
        for files in &lists {
            assert_eq!(&unpack_files(&pack_files(files)).unwrap(), files);
        }
        // a small path with a known status takes one byte
        assert_eq!(pack_files(&lists[1]).len(), 1);
        assert!(unpack_files(&[0x80]).is_err(), "a cut number");
        assert!(unpack_files(&[(4 << 1), 9, b'a']).is_err(), "a cut status");
        for rows in [vec![], vec![1], vec![1, 2, 3, 900, 901, 70_000]] {
            assert_eq!(unpack_rows(&pack_rows(&rows)).unwrap(), rows);
        }
        assert_eq!(pack_rows(&[1, 2, 3]).len(), 3);
        assert!(unpack_rows(&[0xff]).is_err());
    }
}
