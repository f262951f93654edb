//! The embedded provider: one directory per repository under a root
//! (`$KEN_HOME/repos/<key>/`), each an [`EmbeddedStore`].

use std::path::{Path, PathBuf};

use super::EmbeddedStore;
use crate::{DynStore, Result, StoreError, StoreProvider};

/// Repositories' indexes as directories under one root.
#[derive(Debug, Clone)]
pub struct EmbeddedProvider {
    root: PathBuf,
}

impl EmbeddedProvider {
    /// Indexes under `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> EmbeddedProvider {
        EmbeddedProvider { root: root.into() }
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

    fn list(&self) -> Result<Vec<String>> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter(|e| EmbeddedStore::exists(&e.path()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        Ok(out)
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

    /// `fleet/` beside the repositories' root (`$KEN_HOME/fleet`).
    fn fleet(&self) -> Result<Option<std::sync::Arc<dyn crate::Fleet>>> {
        let dir = self.root.with_file_name("fleet");
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
}
