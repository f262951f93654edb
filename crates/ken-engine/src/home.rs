//! The layout of `$KEN_HOME`: `repos/<name>/` holds one repository's index,
//! `clones/<name>/` the clones of repositories given by URL.

use std::path::{Path, PathBuf};

use ken_store::EmbeddedStore;

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

/// The directories of `home/repos` that hold an index: (directory name, path).
pub fn index_dirs(home: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(home.join("repos")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(_, p)| EmbeddedStore::exists(p))
        .collect();
    out.sort();
    out
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
