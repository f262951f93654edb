//! The layout of `$KEN_HOME`: `repos/<name>/` holds one repository's index,
//! `clones/<name>/` the clones of repositories given by URL.

use std::path::{Path, PathBuf};

use ken_store::{EmbeddedStore, Store};

use crate::{EngineError, Result};

/// A file-system-safe directory name for a repository name
/// (`pallets/flask` → `pallets__flask`).
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

pub fn index_dir(home: &Path, name: &str) -> PathBuf {
    home.join("repos").join(dir_name(name))
}

pub fn clone_dir(home: &Path, name: &str) -> PathBuf {
    home.join("clones").join(dir_name(name))
}

/// Every indexed repository: (name, index directory).
pub fn list_repos(home: &Path) -> Result<Vec<(String, PathBuf)>> {
    let dir = home.join("repos");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if !EmbeddedStore::exists(&path) {
            continue;
        }
        let name = EmbeddedStore::open(&path)
            .ok()
            .and_then(|s| s.state().ok())
            .and_then(|s| s.name)
            .unwrap_or_else(|| e.file_name().to_string_lossy().into_owned());
        out.push((name, path));
    }
    out.sort();
    Ok(out)
}

/// The repositories a command should look at: the named ones (each must
/// exist), or all of them.
pub fn select_repos(home: &Path, names: &[String]) -> Result<Vec<(String, PathBuf)>> {
    let all = list_repos(home)?;
    if all.is_empty() {
        return Err(EngineError::Usage(format!(
            "nothing is indexed under {} yet: run `ken index PATH` first",
            home.display()
        )));
    }
    if names.is_empty() {
        return Ok(all);
    }
    let mut out = Vec::new();
    for n in names {
        match all
            .iter()
            .find(|(name, _)| name == n || dir_name(name) == dir_name(n))
        {
            Some(r) => out.push(r.clone()),
            None => {
                let known: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
                return Err(EngineError::Usage(format!(
                    "no repository named `{n}` is indexed (indexed: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_dirs() {
        assert_eq!(dir_name("flask"), "flask");
        assert_eq!(dir_name("pallets/flask"), "pallets__flask");
        assert_eq!(dir_name("a b"), "a-b");
        assert_eq!(dir_name(".."), "r..");
        assert_eq!(dir_name(""), "r");
    }
}
