//! Plain data crossing the storage seam.

use ken_core::{ChunkKind, FileSyntax, Language};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What is indexed, as recorded after the last complete run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexState {
    /// The repository's name as the user gave it (`flask`, `pallets/flask`).
    pub name: Option<String>,
    /// The commit whose files are indexed (HEAD for a working tree).
    pub commit: Option<String>,
    /// Committer time of that commit (seconds since the epoch).
    pub commit_time: Option<i64>,
    /// True when the working tree was indexed (uncommitted edits included).
    pub worktree: bool,
    /// Where the repository came from (a path, or a URL without credentials).
    pub source: Option<String>,
    /// The branch this index follows when it is not the source's default
    /// (`ken index --branch`, `branches = [...]`): its name is `NAME@BRANCH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the last run finished (seconds since the epoch).
    pub indexed_at: Option<i64>,
    /// A run started towards this commit and has not finished.
    pub pending: Option<String>,
    /// Files of the snapshot left out before reading (by path, size, link,
    /// missing object...), by reason, with a few example paths. Files left
    /// out after reading (binary, generated) are rows of the store.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, LeftOut>,
    /// The fusion learned from this repository's history (`ken tune`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking: Option<TunedRanking>,
    /// The commit the stored blame was last completed at: the next run
    /// blames only what changed since, walking history back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blamed_at: Option<String>,
    /// An embedding run started and has not finished (a time budget, a
    /// stop, a kill): `ken serve` and `ken worker` queue the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub embedding_unfinished: bool,
    /// The SCIP index the code graph follows (none: resolution by name only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scip: Option<ScipState>,
    /// The query map dense retrieval learned from this repository's
    /// history (the engine's adapt.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<DenseAdapter>,
}

/// A query-side map for one embedding model, learned from a repository's
/// past commits: `q ↦ normalize(q + U·Vᵀ·q)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DenseAdapter {
    /// The embedding model whose queries it maps.
    pub model: String,
    /// The indexed commit it was learned at.
    pub commit: Option<String>,
    /// Commits the history held then (a much longer history is learned again).
    pub commits: u64,
    /// Committer time of the newest commit it may have learned from.
    pub until: Option<i64>,
    /// Past commits it learned from, and how many of the newest were held out.
    pub questions: usize,
    pub heldout: usize,
    /// File MRR@10 of the vector search on the held-out questions, with
    /// the plain query and with the map.
    pub heldout_plain: f64,
    pub heldout_adapted: f64,
    /// The map is used (it did better held out).
    pub adopted: bool,
    pub dim: usize,
    pub rank: usize,
    /// Passes over the questions (chosen on the held-out ones).
    pub epochs: usize,
    pub took_ms: u64,
    /// U then V, `dim × rank` f32 little-endian each, in base64; empty
    /// when not adopted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub weights: String,
}

/// A SCIP index read into the code graph, as it was when read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScipState {
    /// Where it was read from (a path, or `index.scip at COMMIT`).
    pub source: String,
    /// The tool that wrote it, with its version.
    pub tool: String,
    /// Files it described when read (a file changed since is resolved by name).
    pub files: usize,
    /// When it was read (seconds since the epoch).
    pub read_at: i64,
}

/// Ranking constants learned from a repository's own history: past commit
/// messages as questions, the files they changed as answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TunedRanking {
    /// The indexed commit it was learned at.
    pub commit: Option<String>,
    /// Commits the history held then (a much longer history is learned again).
    pub commits: u64,
    /// Committer time of the newest commit it may have learned from.
    pub until: Option<i64>,
    /// Questions asked, and how many had an answer among the candidates.
    pub questions: usize,
    pub answerable: usize,
    /// The signals it was learned with: `lexical` or `hybrid`.
    pub mode: String,
    /// MRR@10 on the questions with the default constants and the learned ones.
    pub mrr_default: f64,
    pub mrr_learned: f64,
    /// The same on questions each fit did not see (two folds).
    pub heldout_default: f64,
    pub heldout_learned: f64,
    /// The learned constants are used (they did no worse held out).
    pub adopted: bool,
    /// How strongly the fit was pulled toward the defaults: the weight of
    /// the defaults in questions (chosen on the held-out questions).
    #[serde(default)]
    pub prior: f64,
    /// Constant name → value (the names of `--param`); empty when not adopted.
    pub params: BTreeMap<String, f32>,
    pub took_ms: u64,
    /// Questions it learned from that carried code or a traceback: what
    /// was learned is used for such a question only when they were many.
    #[serde(default)]
    pub code_questions: usize,
    /// What the repository's documentation taught: its section headings
    /// as questions, for the questions that read like them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<DocsRanking>,
    /// The documentation was read for questions (`learned_docs` was on);
    /// `docs` is `None` then when it had too few.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub docs_read: bool,
}

/// Ranking constants for questions like the repository's documentation
/// asks (section headings → the code their cross-references name), and
/// the router that tells such a question from one like a commit message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocsRanking {
    /// Sections read as questions, how many had an answer among the
    /// candidates, and the pages they came from.
    pub questions: usize,
    pub answerable: usize,
    pub pages: usize,
    /// MRR@10 on sections of pages each fit did not see (two folds by
    /// page): the constants, what the commits taught, the documentation's
    /// own fit.
    pub heldout_default: f64,
    pub heldout_commits: f64,
    pub heldout_learned: f64,
    /// Which of the three serves questions like these: `default`,
    /// `commits` or `docs` (the best held out; ties: the first).
    pub chosen: String,
    /// Constant name → value for such questions (empty: the constants).
    pub params: BTreeMap<String, f32>,
    /// The router: word → weight of the log-odds that a question reads
    /// like a section heading rather than a commit message; the empty word
    /// is the bias.
    pub router: BTreeMap<String, f32>,
    /// Share of questions the router put on the right side, held out.
    pub router_heldout: f64,
    pub took_ms: u64,
}

/// How many files were left out for one reason, and a few of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub count: u64,
    pub examples: Vec<String>,
}

/// A file the index knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    /// Git blob id of the content that was indexed.
    pub id: String,
    pub language: Language,
    pub size: u64,
    /// Why it was not indexed (binary, generated...), if it was not.
    pub skip: Option<String>,
}

/// One file to (re)write: its content and what the syntax layer made of it,
/// or only the reason it is skipped.
#[derive(Debug, Clone)]
pub struct FileUpdate {
    pub path: String,
    pub id: String,
    pub language: Language,
    pub size: u64,
    pub content: FileContent,
}

#[derive(Debug, Clone)]
pub enum FileContent {
    Indexed { text: String, syntax: FileSyntax },
    Skipped { reason: String },
}

/// Files to replace and files to delete, applied atomically.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub upserts: Vec<FileUpdate>,
    pub deletes: Vec<String>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty()
    }

    /// Every path the batch touches: the replaced ones, then the deleted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.upserts
            .iter()
            .map(|u| u.path.as_str())
            .chain(self.deletes.iter().map(String::as_str))
    }

    /// How many chunks the batch writes (the ids a store reserves).
    pub fn chunk_count(&self) -> u64 {
        self.upserts
            .iter()
            .map(|u| match &u.content {
                FileContent::Indexed { syntax, .. } => syntax.chunks.len() as u64,
                FileContent::Skipped { .. } => 0,
            })
            .sum()
    }
}

/// A lexical query with its filters.
#[derive(Debug, Clone, Default)]
pub struct LexicalQuery {
    pub text: String,
    pub limit: usize,
    /// Only these languages (empty: all).
    pub languages: Vec<Language>,
    /// Only these paths (None: all).
    pub paths: Option<Vec<String>>,
    pub weights: FieldWeights,
}

/// Which chunks a search may return (the default: all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkFilter {
    /// Only these languages (empty: all).
    pub languages: Vec<Language>,
    /// Only chunks of these paths (None: all).
    pub paths: Option<Vec<String>>,
}

impl ChunkFilter {
    /// Does it let every chunk through?
    pub fn is_all(&self) -> bool {
        self.languages.is_empty() && self.paths.is_none()
    }
}

/// Per-field weights of the BM25 query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    pub body: f32,
    pub symbol: f32,
    pub path: f32,
    pub doc: f32,
    /// How a term written several times in the query counts (BM25's `k3`):
    /// `(k3 + 1) n / (k3 + n)` for `n` times, so once is always 1 and many
    /// times at most `k3 + 1`. 0: every term once, however often written.
    pub qtf: f32,
}

impl FieldWeights {
    /// The weight of a query term written `n` times.
    pub fn term_weight(&self, n: u32) -> f32 {
        if self.qtf <= 0.0 || n <= 1 {
            1.0
        } else {
            let n = n as f32;
            (self.qtf + 1.0) * n / (self.qtf + n)
        }
    }
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            body: 1.0,
            symbol: 1.0,
            path: 3.0,
            doc: 1.0,
            qtf: 1.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalHit {
    pub chunk_id: u64,
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileHit {
    pub path: String,
    pub score: f32,
}

/// How a symbol matched the identifier looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SymbolTier {
    /// The name (or qualified name) equals the identifier, case and all.
    Exact,
    /// Equal ignoring case and `_`/`-` separators.
    ExactFolded,
    Prefix,
    Substring,
}

impl SymbolTier {
    pub fn name(self) -> &'static str {
        match self {
            SymbolTier::Exact | SymbolTier::ExactFolded => "exact",
            SymbolTier::Prefix => "prefix",
            SymbolTier::Substring => "substring",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SymbolMatch {
    pub tier: SymbolTier,
    pub name: String,
    pub qualname: String,
    pub kind: ChunkKind,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The smallest chunk that holds the whole definition.
    pub chunk_id: u64,
}

/// A chunk as stored, with its text.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChunk {
    pub id: u64,
    pub path: String,
    pub language: Language,
    pub kind: ChunkKind,
    pub symbol: Option<String>,
    pub qualname: Option<String>,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub trivial: bool,
    pub cell: Option<u32>,
    pub content_hash: String,
    /// The text is assembled (module chunk, skeleton, notebook cell) rather
    /// than the file's bytes from `start_byte` to `end_byte`.
    pub synthetic: bool,
    pub text: String,
}

/// Counts for `ken status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub files: u64,
    /// Every file of the snapshot that is not indexed: the sum of `skipped`.
    pub skipped_files: u64,
    /// Those files by reason (the same counts `ken index` reports).
    pub skipped: BTreeMap<String, u64>,
    pub chunks: u64,
    pub symbols: u64,
    pub bytes: u64,
}

/// What a vector index was built from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VectorMeta {
    pub model: String,
    pub dim: usize,
    /// Vectors in the index (a long chunk has several: its windows).
    pub rows: usize,
    /// Chunks the index had when it was built.
    pub chunks: usize,
    /// The store's batch sequence when it was built: older means stale.
    pub batch_seq: u64,
    /// Seconds since the epoch.
    pub built_at: i64,
}

impl VectorMeta {
    /// The metadata of an index built now.
    pub fn built_now(
        model: &str,
        dim: usize,
        rows: usize,
        chunks: usize,
        batch_seq: u64,
    ) -> VectorMeta {
        VectorMeta {
            model: model.to_string(),
            dim,
            rows,
            chunks,
            batch_seq,
            built_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
        }
    }
}

/// A commit as the history tables keep it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitRecord {
    pub sha: String,
    pub author_name: String,
    pub author_email: String,
    pub author_time: i64,
    pub committer_time: i64,
    pub summary: String,
    pub message: String,
    pub parents: Vec<String>,
    /// (path, status, old path) of the files it changed.
    pub files: Vec<(String, String, Option<String>)>,
}

/// Lines `start_line..=end_line` of a file were last changed by `sha`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlameLines {
    pub start_line: u32,
    pub end_line: u32,
    pub sha: String,
}

/// One file's blame, for the blob it was computed on.
#[derive(Debug, Clone, PartialEq)]
pub struct FileBlameRecord {
    pub path: String,
    pub blob_id: String,
    /// `exact`, `partial` or `last-change`.
    pub method: String,
    pub ranges: Vec<BlameLines>,
}
