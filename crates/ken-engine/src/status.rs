//! What is indexed, at which commit.

use ken_store::{EmbeddedStore, IndexState, Stats, Store};
use serde::Serialize;

use crate::semantic::{Coverage, coverage};
use crate::{Result, Settings, home};

#[derive(Debug, Clone, Serialize)]
pub struct RepoStatus {
    pub name: String,
    pub path: String,
    #[serde(flatten)]
    pub state: IndexState,
    pub stats: Stats,
    /// Size of the index on disk, in bytes.
    pub index_bytes: u64,
    /// Embedding progress per model.
    pub embeddings: Vec<Coverage>,
}

/// The status of every indexed repository (or the named ones).
pub fn status(settings: &Settings, names: &[String]) -> Result<Vec<RepoStatus>> {
    let repos = if names.is_empty() {
        home::list_repos(&settings.home)?
    } else {
        home::select_repos(&settings.home, names)?
    };
    let mut out = Vec::new();
    for (name, dir) in repos {
        let store = EmbeddedStore::open(&dir)?;
        out.push(RepoStatus {
            name,
            path: dir.display().to_string(),
            state: store.state()?,
            stats: store.stats()?,
            index_bytes: dir_size(&dir),
            embeddings: coverage(&store, settings.embed_text)?,
        });
    }
    Ok(out)
}

/// Total size of the files under `dir`.
pub fn dir_size(dir: &std::path::Path) -> u64 {
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
