//! The collection index: every repository's files in one lexical index, so
//! a question asked of a whole fleet is scored on one scale (collection-wide
//! term statistics) and answered by one search, not one per repository.
//!
//! It is derived data, like each store's own lexical index: the stores are
//! the source of truth, and the collection records, per repository, the
//! batch sequence of the index it reflects ([`Fleet::reflected`]), so a
//! reader knows which repositories it can route and which it must search
//! directly, and a writer knows whether an update may be applied as a
//! difference or must replace the repository's documents.

use std::collections::BTreeMap;

use crate::{LexicalQuery, Result};

/// One file of one repository, as the collection indexes it.
#[derive(Debug, Clone, Copy)]
pub struct FleetDoc<'a> {
    pub path: &'a str,
    pub lang: &'a str,
    pub body: &'a str,
    /// The names of the definitions the file holds, separated by spaces.
    pub symbols: &'a str,
}

/// One commit message of one repository (its history says what the
/// repository is about in the words its people use).
#[derive(Debug, Clone, Copy)]
pub struct FleetCommit<'a> {
    pub sha: &'a str,
    pub message: &'a str,
}

/// What the collection holds of one repository.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reflected {
    /// The batch sequence of the repository's index its files reflect.
    pub seq: u64,
    /// The newest committer time of the commits it holds (None: none).
    pub commits_until: Option<i64>,
    /// How many commits the repository's index knew when they were written.
    #[serde(default)]
    pub commits: u64,
}

/// A file (or, from [`Fleet::search_commits`], a commit: `path` is its id)
/// the collection search found.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetHit {
    pub repo: String,
    pub path: String,
    pub score: f32,
}

/// What one update of a repository's documents does.
#[derive(Debug, Clone, Copy)]
pub struct FleetUpdate<'a> {
    pub repo: &'a str,
    /// Drop every document of the repository first (its documents are not
    /// a known earlier state of the index).
    pub replace_all: bool,
    /// Paths whose documents go.
    pub deletes: &'a [String],
    /// Drop the repository's commits first (the commits given are all of them).
    pub replace_commits: bool,
    /// What the collection holds of the repository after this update.
    pub reflects: Reflected,
}

/// The collection index of every repository of a provider.
pub trait Fleet: Send + Sync {
    /// Each repository the collection holds, and what of it.
    fn reflected(&self) -> Result<BTreeMap<String, Reflected>>;
    /// Bring one repository's documents up to date: `update.deletes` go,
    /// `docs` replace the documents of their paths, `commits` are added,
    /// atomically with the record. Waits while another process writes the
    /// collection.
    fn update(
        &self,
        update: FleetUpdate<'_>,
        docs: &[FleetDoc<'_>],
        commits: &[FleetCommit<'_>],
    ) -> Result<()>;
    /// See what writers (of any process) have committed, now.
    fn refresh(&self) -> Result<()> {
        Ok(())
    }
    /// Drop a repository's documents.
    fn remove(&self, repo: &str) -> Result<()>;
    /// The best files for `query` across every repository (`query.paths`
    /// and `query.languages` filter as in a store's own search).
    fn search(&self, query: &LexicalQuery) -> Result<Vec<FleetHit>>;
    /// The best commit messages for `query.text` across every repository.
    fn search_commits(&self, query: &LexicalQuery) -> Result<Vec<FleetHit>>;
    /// The files of each repository that define a symbol named exactly
    /// `name` (case as written), at most `limit`.
    fn defining(&self, name: &str, limit: usize) -> Result<Vec<FleetHit>>;
}
