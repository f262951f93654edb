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
        path: repo.store.location(),
        state: repo.state.clone(),
        stats: repo.store.stats()?,
        index_bytes: repo.store.size_bytes()?,
        embeddings: repo.coverage(variant)?,
    })
}
