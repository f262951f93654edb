//! What is indexed, at which commit.

use std::sync::Arc;

use ken_store::{IndexState, Stats};
use serde::Serialize;

use crate::Result;
use crate::repo::OpenRepo;
use crate::semantic::{Coverage, EmbedText};

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

/// The status of the given repositories.
pub(crate) fn status_repos(repos: &[Arc<OpenRepo>], variant: EmbedText) -> Result<Vec<RepoStatus>> {
    repos.iter().map(|r| status_of(r, variant)).collect()
}

fn status_of(repo: &OpenRepo, variant: EmbedText) -> Result<RepoStatus> {
    Ok(RepoStatus {
        name: repo.name.clone(),
        path: repo.dir.display().to_string(),
        state: repo.state.clone(),
        stats: repo.store.stats()?,
        index_bytes: dir_size(&repo.dir),
        embeddings: repo.coverage(variant)?,
    })
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
