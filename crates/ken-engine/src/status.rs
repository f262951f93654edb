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
    /// History and blame progress.
    pub people: PeopleProgress,
    /// The issue templates whose lines are left out of bug reports.
    pub issue_templates: Vec<String>,
}

/// How far history and blame have come (they run after the lexical index,
/// so searches work before they finish).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PeopleProgress {
    /// Commits in the index's history.
    pub commits: u64,
    /// Indexed files whose blame is stored for their current content.
    pub files_blamed: usize,
    /// Indexed files (not skipped).
    pub files: usize,
}

impl PeopleProgress {
    /// Blame is missing for some files (a run is under way or was stopped).
    pub fn partial(&self) -> bool {
        self.commits > 0 && self.files_blamed < self.files
    }
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
        people: repo.people_progress()?,
        issue_templates: repo.template()?.files().to_vec(),
    })
}
