//! SQLite connections shared by the threads of one process.
//!
//! A `rusqlite::Connection` may move between threads but not be used by two
//! at once, so a store keeps idle connections in a pool: each call takes
//! one (opening another when none is idle) and gives it back when done.
//! This makes [`super::EmbeddedStore`] `Sync`: a server holds one open store
//! per repository and serves concurrent requests from it.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;

use crate::Result;

/// Idle connections kept for reuse; more may be open while busy.
const MAX_IDLE: usize = 16;

pub(crate) struct Pool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// The connection that watches for other writers (`PRAGMA data_version`
    /// is relative to the connection that asks).
    watch: Mutex<Option<Connection>>,
}

impl Pool {
    /// Open the index database (creating or checking its schema).
    pub fn open(path: &Path) -> Result<Pool> {
        Ok(Pool::with_first(path, super::schema::open(path)?))
    }

    /// A pool for the database at `path`, whose first connection `first`
    /// has set it up.
    pub fn with_first(path: &Path, first: Connection) -> Pool {
        Pool {
            path: path.to_path_buf(),
            idle: Mutex::new(vec![first]),
            watch: Mutex::new(None),
        }
    }

    pub fn get(&self) -> Result<Conn<'_>> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(c) => c,
            None => super::schema::open_more(&self.path)?,
        };
        Ok(Conn {
            pool: self,
            conn: Some(conn),
        })
    }

    /// A number that changes whenever another connection (of this process
    /// or another) commits to the database.
    pub fn data_version(&self) -> Result<u64> {
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        if watch.is_none() {
            *watch = Some(super::schema::open_more(&self.path)?);
        }
        let conn = watch.as_ref().expect("opened above");
        let v: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok(v as u64)
    }
}

/// A connection taken from the pool; returned to it when dropped.
pub(crate) struct Conn<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
}

impl Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("present until drop")
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("present until drop")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        // a connection left inside a transaction (a panic mid-way) is not reused
        if !conn.is_autocommit() {
            return;
        }
        let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_reused_and_writes_of_others_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::open(&dir.path().join("x.sqlite")).unwrap();
        let v0 = pool.data_version().unwrap();
        {
            let a = pool.get().unwrap();
            let b = pool.get().unwrap(); // a second one while the first is busy
            a.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')", [])
                .unwrap();
            let v: String = b
                .query_row("SELECT value FROM meta WHERE key = 'k'", [], |r| r.get(0))
                .unwrap();
            assert_eq!(v, "v");
        }
        assert_eq!(pool.idle.lock().unwrap().len(), 2);
        assert_ne!(
            pool.data_version().unwrap(),
            v0,
            "a commit changes the version"
        );
        let v1 = pool.data_version().unwrap();
        assert_eq!(pool.data_version().unwrap(), v1, "no commit, no change");
    }
}
