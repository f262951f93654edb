//! What is indexed, at which commit.

use std::sync::Arc;

use ken_store::{IndexState, Stats};
use serde::Serialize;

use crate::Result;
use crate::repo::{OpenRepo, PeopleProgress};
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
    /// What the last poll saw at the source (None: never polled).
    pub remote: Option<ken_store::RemoteHead>,
}

impl RepoStatus {
    /// The recorded source as `who` may see it: a clone URL (kept without
    /// credentials) for anyone who sees the repository, a path on this
    /// machine only for an admin.
    pub fn source_for(&self, who: &crate::access::Principal) -> Option<&str> {
        let source = self.state.source.as_deref()?;
        (who.scope == crate::access::Scope::Admin || ken_source::is_url(source)).then_some(source)
    }
}

/// The status of the given repositories.
pub(crate) fn status_repos(repos: &[Arc<OpenRepo>], variant: EmbedText) -> Result<Vec<RepoStatus>> {
    repos.iter().map(|r| status_of(r, variant)).collect()
}

fn status_of(repo: &OpenRepo, variant: EmbedText) -> Result<RepoStatus> {
    let mut state = repo.state.clone();
    // the learned map's factors are data, not status
    if let Some(a) = state.adapter.as_mut() {
        a.weights.clear();
    }
    Ok(RepoStatus {
        name: repo.name.clone(),
        path: repo.store.location(),
        state,
        stats: repo.store.stats()?,
        index_bytes: repo.store.size_bytes()?,
        embeddings: repo.coverage(variant)?,
        people: repo.people_progress()?,
        issue_templates: repo.template()?.files().to_vec(),
        remote: None,
    })
}
