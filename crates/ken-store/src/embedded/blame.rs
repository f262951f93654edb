//! Blame in the embedded store: per file, which commit last changed each
//! range of lines (`blame_files`), and which blob of the file that blame
//! is of (`blame_done`).
//!
//! A file's blame is packed as its commits once, named by their `history`
//! rows, then its ranges ([`pack`]): a few bytes a range, where the ids
//! as text took 40 each. A file naming a commit that `history` does not
//! hold (an index whose history is in the layout before) keeps its
//! commits' ids, as zstd-compressed JSON, which is also how indexes
//! written before stored every file. Blame by commit is not stored twice:
//! [`paths_blamed_on`] reads every file's commits.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::codec::has_table;
use super::history;
use super::texts::{self, get_varint, put_varint};
use crate::{BlameLines, FileBlameRecord, Result, StoreError};

/// Bring the blame of an index written before to this layout: its
/// by-commit copy (`blame_pairs`) goes; its files' JSON stays readable.
pub(crate) fn compact(conn: &Connection) -> Result<()> {
    if has_table(conn, "blame_pairs")? {
        conn.execute_batch("DROP TABLE blame_pairs")?;
    }
    Ok(())
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

/// (blob id, method) of the blame of each of `paths` that has one.
pub(crate) fn blame_done_of(
    conn: &Connection,
    paths: &[String],
) -> Result<HashMap<String, (String, String)>> {
    let mut stmt = conn.prepare_cached("SELECT blob_id, method FROM blame_done WHERE path = ?1")?;
    let mut out = HashMap::new();
    for path in paths {
        let done: Option<(String, String)> = stmt
            .query_row([path], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some(done) = done {
            out.insert(path.clone(), done);
        }
    }
    Ok(out)
}

/// Forget a file's blame: its packed ranges, and the rows an index
/// written before kept in `blame` and `blame_by_commit`.
pub(crate) fn delete_blame(tx: &Connection, path: &str) -> Result<()> {
    let old: Option<Vec<u8>> = tx
        .prepare_cached("SELECT data FROM blame_files WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(data) = old {
        if has_table(tx, "blame_by_commit")? {
            let mut del =
                tx.prepare_cached("DELETE FROM blame_by_commit WHERE sha = ?1 AND path = ?2")?;
            for sha in Commits::of(&data)?.shas(tx)? {
                del.execute([&sha, path])?;
            }
        }
        tx.prepare_cached("DELETE FROM blame_files WHERE path = ?1")?
            .execute([path])?;
    }
    tx.prepare_cached("DELETE FROM blame WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

pub(crate) fn put_blame(conn: &mut Connection, items: &[FileBlameRecord]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut ins = tx.prepare_cached("INSERT INTO blame_files(path, data) VALUES (?1, ?2)")?;
        let mut done = tx.prepare_cached(
            "INSERT OR REPLACE INTO blame_done(path, blob_id, method) VALUES (?1, ?2, ?3)",
        )?;
        let mut rows: HashMap<String, Option<i64>> = HashMap::new();
        for f in items {
            delete_blame(&tx, &f.path)?;
            let mut row_of = |sha: &str| -> Result<Option<i64>> {
                if let Some(r) = rows.get(sha) {
                    return Ok(*r);
                }
                let r = history::row_of(&tx, sha)?;
                rows.insert(sha.to_string(), r);
                Ok(r)
            };
            let data = pack(&f.ranges, &mut row_of)?;
            ins.execute(params![f.path, data])?;
            done.execute(params![f.path, f.blob_id, f.method])?;
        }
    }
    tx.commit()?;
    Ok(())
}

pub(crate) fn blame_of(conn: &Connection, path: &str) -> Result<Vec<BlameLines>> {
    let packed: Option<Vec<u8>> = conn
        .prepare_cached("SELECT data FROM blame_files WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(data) = packed {
        return unpack(conn, &data);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT start_line, end_line, sha FROM blame WHERE path = ?1 ORDER BY start_line",
    )?;
    let rows = stmt.query_map([path], |r| {
        Ok(BlameLines {
            start_line: r.get(0)?,
            end_line: r.get(1)?,
            sha: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Paths with lines last changed by one of `shas`: every file's commits
/// are read (they come first in its packed blame), which costs about what
/// a lookup per commit would for an author of thousands of commits, and
/// keeps no second copy of the blame by commit.
pub(crate) fn paths_blamed_on(conn: &Connection, shas: &[String]) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    if shas.is_empty() {
        return Ok(out);
    }
    let wanted: HashSet<&str> = shas.iter().map(String::as_str).collect();
    let mut wanted_rows = HashSet::new();
    for s in shas {
        wanted_rows.extend(history::row_of(conn, s)?);
    }
    let mut packed = conn.prepare_cached("SELECT path, data FROM blame_files")?;
    let mut rows = packed.query([])?;
    while let Some(r) = rows.next()? {
        let data: Vec<u8> = r.get(1)?;
        let hit = match Commits::of(&data)? {
            Commits::Rows(rows) => rows.iter().any(|r| wanted_rows.contains(r)),
            Commits::Shas(shas) => shas.iter().any(|s| wanted.contains(s.as_str())),
        };
        if hit {
            out.insert(r.get(0)?);
        }
    }
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
    for s in shas {
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

// ---- the packed form ----

/// First byte of a blame packed by `history` rows, as is; [`ZSTD_ROWS`]
/// when that was compressed (whichever is smaller). Neither begins a zstd
/// frame, which the JSON form is.
const ROWS: u8 = 1;
const ZSTD_ROWS: u8 = 2;

/// The JSON form: the commits' ids once, and the ranges as (first line,
/// last line, index of the commit), zstd-compressed.
#[derive(serde::Serialize, serde::Deserialize)]
struct PackedBlame {
    shas: Vec<String>,
    ranges: Vec<(u32, u32, u32)>,
}

fn bad(e: impl std::fmt::Display) -> StoreError {
    StoreError::Other(format!("stored blame is damaged: {e}"))
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

/// A file's blame as stored: by `history` rows when `row_of` knows every
/// commit it names — the commit count, each commit's row as the difference
/// from the one before, then per range the gap from the end of the one
/// before, its length less one and its commit's index (zigzag LEB128) —
/// else as JSON.
fn pack(
    ranges: &[BlameLines],
    row_of: &mut dyn FnMut(&str) -> Result<Option<i64>>,
) -> Result<Vec<u8>> {
    let mut shas: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, u64> = HashMap::new();
    let mut packed = Vec::with_capacity(ranges.len());
    for r in ranges {
        let i = *index.entry(r.sha.as_str()).or_insert_with(|| {
            shas.push(&r.sha);
            shas.len() as u64 - 1
        });
        packed.push((r.start_line, r.end_line, i));
    }
    let mut rows = Vec::with_capacity(shas.len());
    for sha in &shas {
        match row_of(sha)? {
            Some(r) => rows.push(r),
            None => return pack_json(shas, packed),
        }
    }
    let mut out = vec![ROWS];
    put_varint(&mut out, rows.len() as u64);
    let mut prev = 0i64;
    for r in rows {
        put_varint(&mut out, zigzag(r.wrapping_sub(prev)));
        prev = r;
    }
    let mut end = 0i64;
    for (start, last, i) in packed {
        put_varint(&mut out, zigzag(i64::from(start) - end - 1));
        put_varint(&mut out, zigzag(i64::from(last) - i64::from(start)));
        put_varint(&mut out, i);
        end = i64::from(last);
    }
    let compressed = texts::compress(&out[1..]).map_err(bad)?;
    if compressed.len() + 1 < out.len() {
        let mut z = vec![ZSTD_ROWS];
        z.extend(compressed);
        return Ok(z);
    }
    Ok(out)
}

fn pack_json(shas: Vec<&str>, ranges: Vec<(u32, u32, u64)>) -> Result<Vec<u8>> {
    let value = PackedBlame {
        shas: shas.into_iter().map(str::to_string).collect(),
        ranges: ranges
            .into_iter()
            .map(|(a, b, i)| (a, b, i as u32))
            .collect(),
    };
    let json = serde_json::to_vec(&value).map_err(bad)?;
    texts::compress(&json).map_err(bad)
}

/// The commits a packed blame names, each once.
enum Commits {
    Rows(Vec<i64>),
    Shas(Vec<String>),
}

impl Commits {
    fn of(data: &[u8]) -> Result<Commits> {
        Ok(match Body::of(data)? {
            Body::Rows(bytes) => Commits::Rows(read_rows(&bytes, &mut 0)?),
            Body::Json(p) => Commits::Shas(p.shas),
        })
    }

    fn shas(self, conn: &Connection) -> Result<Vec<String>> {
        match self {
            Commits::Shas(s) => Ok(s),
            Commits::Rows(rows) => rows.into_iter().map(|r| sha_of(conn, r)).collect(),
        }
    }
}

/// A packed blame opened: its varints, or its JSON.
enum Body<'d> {
    Rows(Cow<'d, [u8]>),
    Json(PackedBlame),
}

impl Body<'_> {
    fn of(data: &[u8]) -> Result<Body<'_>> {
        match data.split_first() {
            Some((&ROWS, rest)) => Ok(Body::Rows(Cow::Borrowed(rest))),
            Some((&ZSTD_ROWS, rest)) => Ok(Body::Rows(Cow::Owned(
                texts::decompress(rest).map_err(bad)?,
            ))),
            _ => {
                let json = texts::decompress(data).map_err(bad)?;
                Ok(Body::Json(serde_json::from_slice(&json).map_err(bad)?))
            }
        }
    }
}

fn read_rows(bytes: &[u8], at: &mut usize) -> Result<Vec<i64>> {
    let next = |at: &mut usize| get_varint(bytes, at).ok_or_else(|| bad("cut short"));
    let n = next(at)?;
    if n > bytes.len() as u64 {
        return Err(bad("too many commits"));
    }
    let mut rows = Vec::with_capacity(n as usize);
    let mut prev = 0i64;
    for _ in 0..n {
        prev = prev.wrapping_add(unzigzag(next(at)?));
        rows.push(prev);
    }
    Ok(rows)
}

fn sha_of(conn: &Connection, row: i64) -> Result<String> {
    history::sha_of(conn, row)?.ok_or_else(|| bad(format!("no commit in history row {row}")))
}

fn unpack(conn: &Connection, data: &[u8]) -> Result<Vec<BlameLines>> {
    let bytes = match Body::of(data)? {
        Body::Json(p) => {
            return p
                .ranges
                .into_iter()
                .map(|(start_line, end_line, i)| {
                    Ok(BlameLines {
                        start_line,
                        end_line,
                        sha: p
                            .shas
                            .get(i as usize)
                            .cloned()
                            .ok_or_else(|| bad("a range names no commit"))?,
                    })
                })
                .collect();
        }
        Body::Rows(bytes) => bytes,
    };
    let mut at = 0;
    let shas: Vec<String> = read_rows(&bytes, &mut at)?
        .into_iter()
        .map(|r| sha_of(conn, r))
        .collect::<Result<_>>()?;
    let line = |v: i64| u32::try_from(v).map_err(|_| bad("a line out of range"));
    let mut out = Vec::new();
    let mut end = 0i64;
    while at < bytes.len() {
        let mut next = || get_varint(&bytes, &mut at).ok_or_else(|| bad("cut short"));
        let start = end.wrapping_add(1).wrapping_add(unzigzag(next()?));
        let last = start.wrapping_add(unzigzag(next()?));
        let sha = usize::try_from(next()?)
            .ok()
            .and_then(|i| shas.get(i))
            .ok_or_else(|| bad("a range names no commit"))?;
        out.push(BlameLines {
            start_line: line(start)?,
            end_line: line(last)?,
            sha: sha.clone(),
        });
        end = last;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::schema::open;

    #[test]
    fn blame_by_commit_of_the_layout_before_is_dropped_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.sqlite");
        let conn = open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE blame_pairs (sha BLOB NOT NULL, path_id INTEGER NOT NULL,
                 PRIMARY KEY (sha, path_id)) WITHOUT ROWID;
             INSERT INTO blame_pairs VALUES (x'01', 1);",
        )
        .unwrap();
        drop(conn);
        let conn = open(&db).unwrap();
        assert!(!has_table(&conn, "blame_pairs").unwrap());
    }

    #[test]
    fn blame_is_packed_per_file_with_its_commits_and_old_rows_still_read() {
        for with_history in [false, true] {
            blame_round_trip(with_history);
        }
    }

    /// Blame of commits `history` holds (packed by row) or does not (as JSON).
    fn blame_round_trip(with_history: bool) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        if with_history {
            let commits: Vec<crate::CommitRecord> = ["c4", "c3", "c2", sha, "c1"]
                .iter()
                .map(|s| crate::CommitRecord {
                    sha: s.to_string(),
                    message: format!("change {s}"),
                    ..crate::CommitRecord::default()
                })
                .collect();
            history::add_commits(&mut conn, &commits).unwrap();
        }
        let first_byte = |conn: &Connection, path: &str| -> u8 {
            conn.query_row(
                "SELECT substr(data, 1, 1) FROM blame_files WHERE path = ?1",
                [path],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .unwrap()[0]
        };
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
        let packed = first_byte(&conn, "a.py");
        assert_eq!(packed == ROWS, with_history, "{packed}");
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
        put_blame(&mut conn, &[record("b.py", vec![lines(1, 3, sha)])]).unwrap();
        assert_eq!(on(&conn, &[sha]), ["b.py"]);
        delete_blame(&conn, "b.py").unwrap();
        assert!(on(&conn, &[sha]).is_empty());
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

    #[test]
    fn long_blame_packs_by_row_compressed_and_damage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("index.sqlite")).unwrap();
        let one = crate::CommitRecord {
            sha: "c1".into(),
            ..crate::CommitRecord::default()
        };
        history::add_commits(&mut conn, &[one]).unwrap();
        assert_eq!(
            unpack(&conn, &[ROWS, 1, 2, 0, 0, 0]).unwrap(),
            [BlameLines {
                start_line: 1,
                end_line: 1,
                sha: "c1".into()
            }]
        );
        // rows 1..=40 as the history of this test
        let mut rows = |sha: &str| -> Result<Option<i64>> {
            Ok(sha.strip_prefix('c').and_then(|n| n.parse().ok()))
        };
        let ranges: Vec<BlameLines> = (0..400u32)
            .map(|i| BlameLines {
                start_line: i * 3 + 1,
                end_line: i * 3 + 3,
                sha: format!("c{}", 1 + (i * 7) % 40),
            })
            .collect();
        let data = pack(&ranges, &mut rows).unwrap();
        assert_eq!(data[0], ZSTD_ROWS);
        // a range count well under the 20 bytes an id takes, per commit
        assert!(data.len() < 400, "{} bytes", data.len());
        let Commits::Rows(mut named) = Commits::of(&data).unwrap() else {
            panic!("packed by row")
        };
        named.sort();
        assert_eq!(named, (1..=40).collect::<Vec<i64>>());
        // a commit history does not hold: the whole file as JSON
        let mut with_unknown = ranges.clone();
        with_unknown[5].sha = "unknown".into();
        let json = pack(&with_unknown, &mut rows).unwrap();
        assert!(matches!(Commits::of(&json).unwrap(), Commits::Shas(s) if s.len() == 41));
        for damaged in [
            vec![ROWS],
            vec![ROWS, 5, 2],
            vec![ROWS, 1, 2, 0, 0, 9],
            vec![
                ROWS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            vec![ZSTD_ROWS, 1, 2, 3],
            b"not zstd".to_vec(),
        ] {
            assert!(unpack(&conn, &damaged).is_err(), "{damaged:?}");
        }
        // a row no history holds is an error too
        assert!(unpack(&conn, &[ROWS, 1, 4, 0, 0, 0]).is_err());
    }
}
