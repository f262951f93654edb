//! The embedded provider: one directory per repository under a root
//! (`$KEN_HOME/repos/<key>/`), each an [`EmbeddedStore`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::EmbeddedStore;
use crate::{DynStore, Result, StoreError, StoreProvider};

/// Repositories' indexes as directories under one root.
#[derive(Debug, Clone)]
pub struct EmbeddedProvider {
    root: PathBuf,
    /// The last listing of `root`, kept while the root is unchanged (a
    /// question across repositories lists them; a thousand directories
    /// each looked into cost more than the rest of a warm search's routing).
    listing: Arc<Mutex<Option<Listing>>>,
}

/// The root's directories as last read, and when the root last changed.
#[derive(Debug)]
struct Listing {
    changed: SystemTime,
    /// Directories holding an index.
    held: Vec<String>,
    /// Directories without one yet (looked into again at every listing:
    /// an index is created inside a directory that already exists).
    waiting: Vec<String>,
}

/// A root changed this recently is read again at the next listing: a file
/// system's times are coarse, so a directory added in the same tick as the
/// listing would not change the root's time again.
const SETTLED: Duration = Duration::from_secs(2);

impl EmbeddedProvider {
    /// Indexes under `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> EmbeddedProvider {
        EmbeddedProvider {
            root: root.into(),
            listing: Arc::new(Mutex::new(None)),
        }
    }

    /// Read the root's directories again, keeping what was read when the
    /// root has settled.
    fn read_root(&self, changed: SystemTime) -> Result<Vec<String>> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let (mut held, mut waiting) = (Vec::new(), Vec::new());
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if EmbeddedStore::exists(&e.path()) {
                held.push(name);
            } else if e.file_type().is_ok_and(|t| t.is_dir()) {
                waiting.push(name);
            }
        }
        held.sort();
        let settled = SystemTime::now()
            .duration_since(changed)
            .is_ok_and(|age| age >= SETTLED);
        let mut listing = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        *listing = settled.then(|| Listing {
            changed,
            held: held.clone(),
            waiting,
        });
        Ok(held)
    }

    /// The directory of a repository's index.
    pub fn dir(&self, key: &str) -> PathBuf {
        self.root.join(dir_name(key))
    }
}

impl StoreProvider for EmbeddedProvider {
    fn key_of(&self, name: &str) -> String {
        dir_name(name)
    }

    /// The directories holding an index, read again only when the root
    /// changed since the last listing (a directory added or removed) or
    /// one listed without an index has one now.
    fn list(&self) -> Result<Vec<String>> {
        let changed = match std::fs::metadata(&self.root) {
            Ok(m) => m.modified()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        {
            let mut listing = self.listing.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(l) = listing.as_mut().filter(|l| l.changed == changed) {
                let (now, still): (Vec<String>, Vec<String>) = std::mem::take(&mut l.waiting)
                    .into_iter()
                    .partition(|name| EmbeddedStore::exists(&self.root.join(name)));
                l.waiting = still;
                if !now.is_empty() {
                    l.held.extend(now);
                    l.held.sort();
                }
                return Ok(l.held.clone());
            }
        }
        self.read_root(changed)
    }

    fn exists(&self, key: &str) -> Result<bool> {
        Ok(EmbeddedStore::exists(&self.dir(key)))
    }

    fn open(&self, key: &str) -> Result<DynStore> {
        Ok(Box::new(EmbeddedStore::open(&self.dir(key))?))
    }

    fn open_for_writing(&self, key: &str) -> Result<DynStore> {
        Ok(Box::new(EmbeddedStore::open_for_writing(&self.dir(key))?))
    }

    fn remove(&self, key: &str) -> Result<()> {
        let dir = self.dir(key);
        if !dir.exists() {
            return Ok(());
        }
        // the writer lease: refuse while an indexer runs
        let writer = EmbeddedStore::open_for_writing(&dir)?;
        drop(writer);
        std::fs::remove_dir_all(&dir).map_err(StoreError::from)
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    /// `fleet-2/` beside the repositories' root (`$KEN_HOME/fleet-2`).
    /// A collection of an earlier schema is removed: it is rebuilt in the
    /// new one from the repositories' own indexes.
    fn fleet(&self) -> Result<Option<std::sync::Arc<dyn crate::Fleet>>> {
        for old in super::fleet::OLD_FLEET_DIRS {
            let old = self.root.with_file_name(old);
            if old.is_dir() {
                // best effort: an old collection left behind costs disk only
                let _ = std::fs::remove_dir_all(&old);
            }
        }
        let dir = self.root.with_file_name(super::fleet::FLEET_DIR);
        Ok(Some(std::sync::Arc::new(super::EmbeddedFleet::open(&dir)?)))
    }
}

/// A file-system-safe directory name for a repository name
/// (`pallets/flask` → `pallets__flask`); a safe name maps to itself.
pub fn dir_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => out.push(c),
            '/' => out.push_str("__"),
            _ => out.push('-'),
        }
    }
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, 'r');
    }
    out
}

/// Bytes of every file under `dir`.
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_dirs() {
        assert_eq!(dir_name("flask"), "flask");
        assert_eq!(dir_name("pallets/flask"), "pallets__flask");
        assert_eq!(dir_name("pallets__flask"), "pallets__flask");
        assert_eq!(dir_name("a b"), "a-b");
        assert_eq!(dir_name(".."), "r..");
        assert_eq!(dir_name(""), "r");
    }

    #[test]
    fn a_collection_of_an_earlier_schema_is_removed_when_the_collection_opens() {
        let home = tempfile::tempdir().unwrap();
        let p = EmbeddedProvider::new(home.path().join("repos"));
        let old = home.path().join("fleet");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("meta.json"), "{}").unwrap();
        let fleet = p
            .fleet()
            .unwrap()
            .expect("the embedded store has a collection");
        assert!(!old.exists(), "the old collection is gone");
        assert!(home.path().join(super::super::FLEET_DIR).is_dir());
        assert!(
            fleet.reflected().unwrap().is_empty(),
            "the new one starts empty"
        );
    }

    /// Set `dir`'s modification time back, as if it settled long ago.
    fn settle(dir: &Path) {
        let f = std::fs::File::open(dir).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    }

    #[test]
    fn a_listing_is_kept_while_the_root_is_unchanged() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("repos");
        let p = EmbeddedProvider::new(&root);
        assert!(p.list().unwrap().is_empty(), "no root yet");
        drop(p.open_for_writing("web").unwrap());
        std::fs::create_dir_all(root.join("math")).unwrap();
        // just changed: read, not kept
        assert_eq!(p.list().unwrap(), ["web"]);
        assert!(p.listing.lock().unwrap().is_none());
        settle(&root);
        assert_eq!(p.list().unwrap(), ["web"]);
        assert!(p.listing.lock().unwrap().is_some(), "settled: kept");
        // an index created inside a directory listed without one
        drop(p.open_for_writing("math").unwrap());
        assert_eq!(p.list().unwrap(), ["math", "web"]);
        // a directory added or removed changes the root
        drop(p.open_for_writing("cli").unwrap());
        assert_eq!(p.list().unwrap(), ["cli", "math", "web"]);
        settle(&root);
        assert_eq!(p.list().unwrap(), ["cli", "math", "web"]);
        p.remove("math").unwrap();
        assert_eq!(p.list().unwrap(), ["cli", "web"]);
        // a clone shares what was read
        settle(&root);
        assert_eq!(p.list().unwrap(), ["cli", "web"]);
        let q = p.clone();
        drop(q.open_for_writing("docs").unwrap());
        assert_eq!(p.list().unwrap(), ["cli", "docs", "web"]);
    }
}
