//! The storage seam.
//!
//! A [`StoreProvider`] keeps every repository's index: it lists them, opens
//! one for reading, opens one for writing under the writer lease (one
//! writer per repository), and removes one. [`EmbeddedProvider`] keeps them
//! as directories under `$KEN_HOME/repos`.
//!
//! A [`Store`] holds one repository's index, in five parts: the index as a
//! whole and its writes ([`IndexStore`]), chunks with lexical and symbol
//! search ([`ChunkStore`]), the code graph ([`GraphStore`]), history and
//! blame ([`HistoryStore`]), embeddings with vector search inside the
//! store ([`VectorStore`]). Data is scoped by repository; each
//! implementation's private formats stay behind these traits. The
//! embedded implementation ([`EmbeddedStore`]: tantivy + SQLite in one
//! directory) is the default; [`PgStore`] keeps every repository in one
//! PostgreSQL database with pgvector. Both pass one conformance suite
//! (`tests/conformance/`). The job queue, tokens and webhook deliveries are
//! the [`Home`] trait.
//!
//! Writes arrive in batches of whole files ([`Batch`]); each batch is atomic:
//! after a crash at any point the store shows the state before or after the
//! batch, never a mixture, and the next writer finishes or redoes it.

mod embedded;
mod error;
mod fleet;
mod home;
mod postgres;
mod private;
mod provider;
mod symbols;
pub mod tokenizer;
mod types;

pub use embedded::{EmbeddedFleet, EmbeddedProvider, EmbeddedStore, FLEET_DIR, dir_name};
pub use error::StoreError;
pub use fleet::{Fleet, FleetCommit, FleetDoc, FleetHit, FleetUpdate, Reflected};
pub use home::{Home, HomeStore, JobRecord, JobState, NewJob, RemoteHead, TokenRecord};
pub use postgres::{PgHome, PgProvider, PgStore};
pub use provider::{DynStore, StoreProvider};
pub use types::*;

pub type Result<T> = std::result::Result<T, StoreError>;

/// One repository's index: every part the engine needs. Implemented for
/// anything that implements the parts; the engine holds a `dyn Store` and
/// passes a narrower part (`&dyn HistoryStore`, ...) to code that needs
/// only that.
pub trait Store: IndexStore + ChunkStore + GraphStore + HistoryStore + VectorStore {}

impl<T: IndexStore + ChunkStore + GraphStore + HistoryStore + VectorStore + ?Sized> Store for T {}

/// The index as a whole: its version, state and files, and writing batches of whole files.
pub trait IndexStore {
    /// A number that changes whenever a writer (of this process or
    /// another) commits anything to this index: readers compare it to know
    /// when to reopen.
    fn data_version(&self) -> Result<u64>;
    /// The batch sequence number: it grows with every committed batch
    /// (derived indexes record the one they reflect).
    fn batch_seq(&self) -> Result<u64>;
    /// Counts for status reports.
    fn stats(&self) -> Result<Stats>;
    /// Where the index is, for people (a directory, a database and a
    /// repository id).
    fn location(&self) -> String;
    /// Bytes the index takes (where repositories share tables, as in
    /// PostgreSQL, an estimate of this one's share: its text, postings and
    /// vectors).
    fn size_bytes(&self) -> Result<u64>;
    /// The index state (which commit is indexed, counts...).
    fn state(&self) -> Result<IndexState>;
    /// Record the index state; called once a run has written every batch.
    fn set_state(&mut self, state: &IndexState) -> Result<()>;
    /// Every file the index knows, indexed or skipped.
    fn files(&self) -> Result<Vec<FileRecord>>;
    /// Replace and delete whole files, atomically.
    fn write_batch(&mut self, batch: Batch) -> Result<()>;
    /// Housekeeping after a run (drop unreferenced content, merge segments).
    fn finish(&mut self) -> Result<()>;
}

/// Chunks, their text, and finding them: BM25 over chunks and files, symbol look-ups.
pub trait ChunkStore {
    /// BM25 over chunks.
    fn search_chunks(&self, query: &LexicalQuery) -> Result<Vec<LexicalHit>>;
    /// BM25 over whole files.
    fn search_files(&self, query: &LexicalQuery) -> Result<Vec<FileHit>>;
    /// Definitions whose name matches `ident`: exact, then (when `partial`)
    /// prefix, then substring.
    fn lookup_symbols(&self, ident: &str, limit: usize, partial: bool) -> Result<Vec<SymbolMatch>>;
    /// [`Store::lookup_symbols`] for several identifiers, `(ident,
    /// partial)` each, answered in order; a store with round trips runs
    /// them at once.
    fn lookup_symbols_many(
        &self,
        idents: &[(String, bool)],
        limit: usize,
    ) -> Result<Vec<Vec<SymbolMatch>>> {
        idents
            .iter()
            .map(|(ident, partial)| self.lookup_symbols(ident, limit, *partial))
            .collect()
    }
    /// Chunks by id, in the order asked (unknown ids are left out).
    fn chunks(&self, ids: &[u64]) -> Result<Vec<StoredChunk>>;
    /// Chunks by id without their text (`text` is empty), for ranking.
    fn chunk_heads(&self, ids: &[u64]) -> Result<Vec<StoredChunk>>;
    /// The first chunk of each file, without its text, in the order of
    /// `paths` (files without chunks are left out).
    fn first_chunk_heads(&self, paths: &[String]) -> Result<Vec<StoredChunk>>;
    /// Every chunk of a file, in file order.
    fn chunks_of_file(&self, path: &str) -> Result<Vec<StoredChunk>>;
    /// The indexed content of a file.
    fn file_text(&self, path: &str) -> Result<Option<String>>;
    /// The id of every chunk.
    fn chunk_ids(&self) -> Result<Vec<u64>>;
    /// Every chunk, in id order (for embedding and rebuilding derived indexes).
    fn all_chunks(&self) -> Result<Vec<StoredChunk>>;
}

/// The code graph: definitions and references per file, resolved edges, PageRank, the saved symbol index.
pub trait GraphStore {
    /// Definitions and references of the given files (all files when None).
    fn graph_facts(&self, paths: Option<&[String]>) -> Result<Vec<ken_core::FileFacts>>;
    /// Replace the edges written in `paths` (every edge when None).
    fn replace_edges(&mut self, paths: Option<&[String]>, edges: &[ken_core::Edge]) -> Result<()>;
    /// Every resolved edge.
    fn edges(&self) -> Result<Vec<ken_core::Edge>>;
    /// Replace the PageRank of definitions and files.
    fn set_ranks(
        &mut self,
        defs: &[(ken_core::DefKey, f32)],
        files: &[(String, f32)],
    ) -> Result<()>;
    /// PageRank of every file (normalised so the mean is 1).
    fn file_ranks(&self) -> Result<std::collections::HashMap<String, f32>>;
    /// PageRank of a file's definitions: (qualname, nth, rank).
    fn def_ranks(&self, path: &str) -> Result<Vec<(String, u32, f32)>>;
    /// The saved symbol index, as the graph layer wrote it (JSON; the
    /// store does not read it), and the batch sequence it reflects.
    fn graph_index(&self) -> Result<Option<(u64, String)>>;
    fn save_graph_index(&mut self, seq: u64, index_json: &str) -> Result<()>;
}

/// A commit's author (name, email), author time and committer time.
pub type CommitTime = (String, String, i64, i64);

/// Commits as [`HistoryStore::commit_heads`] gives them: message, summary
/// and parents left empty.
pub(crate) fn heads_only(
    mut commits: std::collections::HashMap<String, CommitRecord>,
) -> std::collections::HashMap<String, CommitRecord> {
    for c in commits.values_mut() {
        c.message.clear();
        c.summary.clear();
        c.parents.clear();
    }
    commits
}

/// History and blame: commits with their files, commit search, per-line blame.
pub trait HistoryStore {
    /// Commits known, and the newest committer time.
    fn commit_stats(&self) -> Result<(u64, Option<i64>)>;
    /// Add commits not yet known (with their changed files); returns how many were new.
    fn add_commits(&mut self, commits: &[CommitRecord]) -> Result<usize>;
    /// Commits by sha (unknown ones left out), optionally with their files.
    fn commits(
        &self,
        shas: &[String],
        with_files: bool,
    ) -> Result<std::collections::HashMap<String, CommitRecord>>;
    /// Commits by sha (unknown ones left out) with who made them and when
    /// only: their message, summary, parents and files are left empty. What
    /// showing authorship needs, read without the messages (a store keeping
    /// them compressed in blocks skips unpacking a block per commit).
    fn commit_heads(
        &self,
        shas: &[String],
    ) -> Result<std::collections::HashMap<String, CommitRecord>> {
        Ok(heads_only(self.commits(shas, false)?))
    }
    /// Every commit, newest first, without files.
    fn all_commits(&self) -> Result<Vec<CommitRecord>>;
    /// Each distinct author (name, email), by their newest commit, newest first.
    fn commit_authors(&self) -> Result<Vec<(String, String)>>;
    /// Every commit's author (name, email), author time and committer
    /// time, in no particular order: who was active when, without reading
    /// messages.
    fn commit_times(&self) -> Result<Vec<CommitTime>>;
    /// Full-text search over commit messages and changed paths: (sha, score).
    fn search_commits(&self, query: &str, limit: usize) -> Result<Vec<(String, f32)>>;
    /// (sha, path) of the commits that changed any of `paths`.
    fn commits_touching(&self, paths: &[String]) -> Result<Vec<(String, String)>>;
    /// The files of (path, blob id) whose blame is missing or for another blob.
    fn blame_needed(&self, files: &[(String, String)]) -> Result<Vec<String>>;
    /// Store the blame of files, atomically.
    fn put_blame(&mut self, items: &[FileBlameRecord]) -> Result<()>;
    /// A file's blame, in line order.
    fn blame_of(&self, path: &str) -> Result<Vec<BlameLines>>;
    /// For each of `paths` that has a blame: the blob it is of and how it
    /// was made (`exact`, `partial`, `last-change`, `uncommitted`).
    fn blame_done_of(
        &self,
        paths: &[String],
    ) -> Result<std::collections::HashMap<String, (String, String)>>;
    /// The blame of several files at once (files without blame map to an
    /// empty list); a store with round trips answers it in one.
    fn blame_of_paths(
        &self,
        paths: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<BlameLines>>> {
        paths
            .iter()
            .map(|p| Ok((p.clone(), self.blame_of(p)?)))
            .collect()
    }
    /// Paths with lines last changed by one of `shas`.
    fn paths_blamed_on(&self, shas: &[String]) -> Result<std::collections::HashSet<String>>;
}

/// Embeddings: the vector cache (by text hash and model) and vector search over chunks.
pub trait VectorStore {
    /// Which of `keys` (hashes of embedded texts) already have a vector for `model`.
    fn vector_keys_present(
        &self,
        model: &str,
        keys: &[String],
    ) -> Result<std::collections::HashSet<String>>;
    /// Models with vectors in the cache.
    fn vector_models(&self) -> Result<Vec<String>>;
    /// Add vectors to the cache of `model`, atomically.
    fn put_vectors(&mut self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()>;
    /// Cached vectors of `model` by key (missing keys are left out).
    fn get_vectors(
        &self,
        model: &str,
        keys: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<f32>>>;
    /// Make `model`'s vector search hold exactly `rows`: (chunk id, cache
    /// key) pairs, each searched by the key's cached vector (a key with no
    /// cached vector is left out). `chunks` and `batch_seq` are recorded in
    /// the returned [`VectorMeta`]. Atomic: searches see the old rows or
    /// the new ones.
    fn index_vectors(
        &mut self,
        model: &str,
        rows: &[(u64, String)],
        chunks: usize,
        batch_seq: u64,
    ) -> Result<VectorMeta>;
    /// What `model`'s vector search holds (None: never indexed).
    fn vector_meta(&self, model: &str) -> Result<Option<VectorMeta>>;
    /// The chunk ids `model`'s vector search holds, ascending, each once.
    fn vector_chunk_ids(&self, model: &str) -> Result<Vec<u64>>;
    /// The `k` chunks nearest to `query` by cosine similarity among those
    /// `filter` lets through: (chunk id, similarity), best first, each
    /// chunk once (by its best row). A filter is applied inside the search
    /// (a narrow filter still gets its `k` nearest, not what is left of
    /// the unfiltered `k`). An unfiltered search may be approximate (an
    /// HNSW graph): see the conformance suite for the recall each store
    /// keeps.
    fn search_vectors(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(u64, f32)>>;
}
