//! Search results with the score of every signal that found them, and filters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ChunkKind, Language};

/// One signal's opinion of a hit: its 1-based rank in that signal's list and
/// the raw score there (BM25 score, cosine, tier...).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    pub rank: u32,
    pub score: f32,
}

/// Every signal's opinion, by signal name (`exact`, `prefix`, `substring`,
/// `bm25`, `dense`, `graph`, `prior`...). Kept on every hit so ranking is debuggable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals(pub BTreeMap<String, Signal>);

impl Signals {
    pub fn set(&mut self, name: &str, rank: u32, score: f32) {
        self.0.insert(name.to_string(), Signal { rank, score });
    }
    pub fn get(&self, name: &str) -> Option<Signal> {
        self.0.get(name).copied()
    }
}

/// An author's share of a chunk's lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorShare {
    pub name: String,
    pub share: f32,
}

/// A ranked chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub chunk_id: u64,
    pub repo: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub language: Language,
    pub kind: ChunkKind,
    pub symbol: Option<String>,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub score: f32,
    /// True when an exact symbol match pinned this hit above the fused rest.
    pub pinned: bool,
    pub signals: Signals,
    pub commit: Option<String>,
    pub authors: Vec<AuthorShare>,
    pub snippet: String,
    /// For a notebook: the cell (0-based index among all its cells) the
    /// lines are in. Lines count the notebook's code view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
}

/// Restrictions on what a search may return. Empty fields restrict nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filters {
    /// Repository names.
    pub repos: Vec<String>,
    /// Branches (`branch:`): only the indexes that follow one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<String>,
    pub languages: Vec<Language>,
    /// Path globs (`src/**/*.py`); a hit must match one of them.
    pub path_globs: Vec<String>,
    /// Only code whose lines were last changed by this person (any alias).
    pub author: Option<String>,
    /// Only code last changed at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Only code last changed at or before this time.
    pub until: Option<i64>,
}
