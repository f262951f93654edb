//! Where repositories' indexes live.

use crate::{Result, Store};

/// An open index, as the engine holds it.
pub type DynStore = Box<dyn Store + Send + Sync>;

/// Every repository's index in one place: a home directory, a database.
///
/// A repository is named by its key: any repository name, which the
/// provider maps to its own safe form (`pallets/flask` and
/// `pallets__flask` are the same key in the embedded provider).
pub trait StoreProvider: Send + Sync {
    /// The key a repository name is stored under (what [`StoreProvider::list`] gives).
    fn key_of(&self, name: &str) -> String;
    /// The keys of the repositories that have an index, sorted.
    fn list(&self) -> Result<Vec<String>>;
    /// Does this repository have an index?
    fn exists(&self, key: &str) -> Result<bool>;
    /// Open a repository's index for reading (an empty one if none exists).
    fn open(&self, key: &str) -> Result<DynStore>;
    /// Open a repository's index for writing, creating it if needed. The
    /// returned store holds the writer lease until it is dropped; while
    /// another writer holds it this fails with [`crate::StoreError::Locked`].
    /// An interrupted writer's leftovers are repaired first.
    fn open_for_writing(&self, key: &str) -> Result<DynStore>;
    /// Delete a repository's index (refused while a writer holds it).
    fn remove(&self, key: &str) -> Result<()>;
    /// Where the indexes are, for people.
    fn describe(&self) -> String;
    /// The collection index of every repository here (None: this provider
    /// has none, and a question over several repositories searches each).
    fn fleet(&self) -> Result<Option<std::sync::Arc<dyn crate::Fleet>>> {
        Ok(None)
    }
}
