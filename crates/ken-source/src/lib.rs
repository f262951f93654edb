//! Where code comes from: git commits (read straight from the object
//! database, bare or not), working trees (uncommitted edits included), and
//! clones of remote URLs. Also the file filters that decide what is worth
//! indexing, each skip with its reason; and the people layer: who last
//! changed each line (`blame`), the history with changed files (`log`), and
//! who is who across names, emails and handles (`identity`).
//!
//! This crate reads; it never writes to a repository it did not create.

mod blame;
mod clone;
mod diff;
mod error;
pub mod filter;
mod git;
mod hosts;
pub mod identity;
mod ignore_rules;
mod log;
mod pin;
mod remote;
mod worktree;

pub use blame::{
    BlameMethod, BlameOptions, BlameRange, FallbackReason, FileBlame, KnownBlame, KnownFile,
};
pub use clone::{clone_or_fetch, is_url, redact, repo_name_from_url};
pub use diff::{DiffOptions, FileDiff, LineHunk};
pub use error::SourceError;
pub use filter::{DEFAULT_MAX_FILE_BYTES, SkipReason, skip_by_content, skip_by_path};
pub use git::blob_id;
pub use git::{CommitInfo, GitRepo};
pub use hosts::{HostKind, HostListing, HostQuery, HostRepo, list_repositories};
pub use identity::{Identities, IdentityError, Person, PersonRef};
pub use log::{ChangeStatus, ChangedFile, CommitMeta, LogOptions, LoggedCommit};
pub use remote::{CheckedRemote, RemotePolicy, check_remote, is_public};
pub use worktree::{list_worktree, read_worktree_file};

/// A file to index: its repository-relative path (always `/`-separated), its
/// git blob id (hex; for working-tree files, computed from the content the
/// same way git would, so unchanged files keep the id they have in HEAD), and
/// its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub id: String,
    pub size: u64,
}

/// The files of a snapshot, and the ones left out with why.
#[derive(Debug, Default, Clone)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub skipped: Vec<(String, SkipReason)>,
}

/// What to leave out of a listing.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub max_file_bytes: u64,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

impl ListOptions {
    /// The size over which `path` is left out unread. A notebook's size is
    /// mostly outputs (images as base64) that are never indexed, so it is
    /// read up to [`filter::MAX_NOTEBOOK_BYTES`] and judged by its code
    /// cells once read.
    pub fn limit_for(&self, path: &str) -> u64 {
        if filter::is_notebook(path) {
            self.max_file_bytes.max(filter::MAX_NOTEBOOK_BYTES)
        } else {
            self.max_file_bytes
        }
    }
}
