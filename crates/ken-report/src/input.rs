//! What a report is computed from: the index's commits, blame, graph and
//! people, the period's diffs, and the imported tickets. The engine
//! gathers these; nothing here reads a store or a repository.

use ken_core::Ticket;

/// The period a report covers: commits with `since <= time < until`
/// (committer time, seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub since: i64,
    pub until: i64,
    /// How the user wrote the bounds (`2024-05-01`, `30d`, a sha).
    pub since_label: String,
    pub until_label: String,
}

/// A person, identity-resolved (aliases merged, bots told apart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonIn {
    pub id: String,
    pub name: String,
    pub email: String,
    pub bot: bool,
}

/// A range of lines a commit changed, 1-based: `old_start..old_start+old_len`
/// in the parent's file became `new_start..new_start+new_len`. An empty
/// side has length 0 and its start is the line before which it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkIn {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
}

/// A file a commit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChangeIn {
    pub path: String,
    /// The path before a rename.
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: String,
    /// Lines added and removed; `None` when unknown (binary, missing objects,
    /// or a commit outside the period, whose diff is not read).
    pub added: Option<u32>,
    pub removed: Option<u32>,
    /// Against the first parent; empty outside the period.
    pub hunks: Vec<HunkIn>,
}

/// A commit known to the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitIn {
    pub sha: String,
    /// `PersonIn::id` of its author.
    pub person: String,
    pub author_time: i64,
    pub committer_time: i64,
    pub summary: String,
    pub message: String,
    pub parents: usize,
    pub files: Vec<FileChangeIn>,
}

impl CommitIn {
    pub fn is_merge(&self) -> bool {
        self.parents > 1
    }
}

/// A file of the indexed commit.
#[derive(Debug, Clone, PartialEq)]
pub struct FileIn {
    pub path: String,
    pub lines: u32,
    /// Incoming references from other files in the code graph.
    pub fan_in: u32,
    /// Lines per person (`PersonIn::id`) by blame; empty without blame.
    pub owners: Vec<(String, u32)>,
    /// Distinct commits among the file's current lines (blame).
    pub blame_commits: u32,
}

/// A class-like definition (class, struct, trait, interface…) of the indexed commit.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassIn {
    pub path: String,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
    pub fan_in: u32,
    /// Lines per person among its lines (blame).
    pub owners: Vec<(String, u32)>,
    /// Distinct commits among its lines (blame).
    pub commits: u32,
}

/// A possible secret found by the scanner (see `secrets`).
pub use crate::secrets::SecretHit;

/// Where a secret found in the indexed commit's files came from (blame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretOrigin {
    pub sha: String,
    pub person: String,
}

/// Everything a report reads.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub repo: String,
    /// The commit the index reflects (None for a folder outside git).
    pub indexed_commit: Option<String>,
    pub period: Period,
    /// Every commit the index knows, newest first; those in the period carry
    /// line counts and hunks.
    pub commits: Vec<CommitIn>,
    pub people: Vec<PersonIn>,
    pub files: Vec<FileIn>,
    /// Paths of the indexed commit the index left out (generated, binary,
    /// too large): not ranked as hot files.
    pub skipped: std::collections::BTreeSet<String>,
    pub classes: Vec<ClassIn>,
    /// Secrets in the indexed commit's files, each with the commit that
    /// last changed its line when blame knows it.
    pub head_secrets: Vec<(SecretHit, Option<SecretOrigin>)>,
    /// Secrets in lines the period's commits added: (commit sha, hit).
    pub diff_secrets: Vec<(String, SecretHit)>,
    pub tickets: Vec<Ticket>,
    /// Notes on what the inputs lack (no blame yet, no git objects…).
    pub notes: Vec<String>,
}
