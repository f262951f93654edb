//! History: commit metadata, the commit log with changed files, and the
//! files changed between two commits.
//!
//! Changed files come from tree diffs with rename detection (git's
//! defaults: a deleted and an added file at least 50% similar are a rename;
//! no copy detection), as `git log --name-status` shows them.
//!
//! Merges: with `first_parent`, a merge is diffed against its first parent,
//! so it carries everything its branch brought in (the mainline view, as
//! `git log --first-parent -m`). Without it, the branch's own commits are in
//! the log too, so a merge lists only the files it changed relative to
//! *every* parent — conflict resolutions and "evil" edits — like git's
//! combined diff (`git log -c --name-status`); a clean merge lists none.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::FindExt;

use crate::error::git_err;
use crate::{GitRepo, SourceError};

/// What a commit records about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMeta {
    pub sha: String,
    pub parents: Vec<String>,
    pub author_name: String,
    pub author_email: String,
    /// Seconds since the epoch.
    pub author_time: i64,
    /// Seconds since the epoch.
    pub committer_time: i64,
    /// The message's first paragraph, on one line.
    pub summary: String,
    /// The whole message.
    pub message: String,
}

impl CommitMeta {
    /// More than one parent.
    pub fn is_merge(&self) -> bool {
        self.parents.len() > 1
    }
}

/// What to walk. `since`/`until` compare committer times (as `git log
/// --since/--until` do); the walk stops once only older commits remain.
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// Where to start: a branch, tag, sha, `HEAD`…
    pub from: String,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub max: Option<usize>,
    pub first_parent: bool,
    /// Diff each commit to list its changed files.
    pub with_files: bool,
    /// Also count inserted and deleted lines per file (reads and diffs
    /// blobs: several times slower than the file list alone).
    pub with_stats: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            from: "HEAD".to_string(),
            since: None,
            until: None,
            max: None,
            first_parent: false,
            with_files: false,
            with_stats: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

impl ChangeStatus {
    /// `added`, `modified`, `deleted` or `renamed`: as the history tables keep it.
    pub fn name(self) -> &'static str {
        match self {
            ChangeStatus::Added => "added",
            ChangeStatus::Modified => "modified",
            ChangeStatus::Deleted => "deleted",
            ChangeStatus::Renamed => "renamed",
        }
    }
}

/// A file a commit changed. `old_path` is set for renames only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub old_path: Option<String>,
    pub status: ChangeStatus,
    /// Lines inserted and deleted; `None` when not counted (no `with_stats`)
    /// or for binary files.
    pub insertions: Option<u32>,
    pub deletions: Option<u32>,
}

/// A commit of the log, with the files it changed when asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedCommit {
    pub meta: CommitMeta,
    pub files: Vec<ChangedFile>,
    /// Sums over `files` when stats were counted.
    pub insertions: Option<u64>,
    pub deletions: Option<u64>,
}

impl GitRepo {
    /// Metadata of the given commits (full or short shas, or any
    /// revision). Unknown ones are left out of the map, which is keyed by
    /// the strings given.
    pub fn commit_meta<S: AsRef<str>>(&self, shas: &[S]) -> HashMap<String, CommitMeta> {
        let repo = self.local();
        let mut out = HashMap::with_capacity(shas.len());
        for sha in shas {
            let sha = sha.as_ref();
            if out.contains_key(sha) {
                continue;
            }
            let id = match ObjectId::from_hex(sha.as_bytes()) {
                Ok(id) => id,
                Err(_) => match self.commit_id(&repo, sha) {
                    Ok(id) => id,
                    Err(_) => continue,
                },
            };
            if let Ok(meta) = read_meta(&repo, id) {
                out.insert(sha.to_string(), meta);
            }
        }
        out
    }

    /// Walk history from `opts.from`, newest first (by committer time).
    pub fn log(&self, opts: LogOptions) -> Result<Vec<LoggedCommit>, SourceError> {
        let repo = self.local();
        let tip = self.commit_id(&repo, &opts.from)?;
        let order = gix::revision::walk::Sorting::ByCommitTimeCutoff {
            order: gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            seconds: opts.since.unwrap_or(i64::MIN),
        };
        let mut walk = repo.rev_walk([tip]).sorting(order);
        if opts.first_parent {
            walk = walk.first_parent_only();
        }
        let mut differ = Differ::new(&repo, opts.with_stats)?;
        let mut out = Vec::new();
        for info in walk.all().map_err(git_err)? {
            if opts.max.is_some_and(|m| out.len() >= m) {
                break;
            }
            let info = info.map_err(git_err)?;
            let commit = repo.find_commit(info.id).map_err(git_err)?;
            let meta = meta_of(&commit)?;
            if opts.until.is_some_and(|u| meta.committer_time > u) {
                continue;
            }
            let files = if opts.with_files {
                let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
                let tree = commit.tree_id().map_err(git_err)?.detach();
                differ.commit_files(tree, &parents, opts.first_parent)?
            } else {
                Vec::new()
            };
            let (insertions, deletions) = if opts.with_stats && opts.with_files {
                (
                    Some(
                        files
                            .iter()
                            .filter_map(|f| f.insertions)
                            .map(u64::from)
                            .sum(),
                    ),
                    Some(
                        files
                            .iter()
                            .filter_map(|f| f.deletions)
                            .map(u64::from)
                            .sum(),
                    ),
                )
            } else {
                (None, None)
            };
            out.push(LoggedCommit {
                meta,
                files,
                insertions,
                deletions,
            });
        }
        Ok(out)
    }

    /// The files that differ between two commits (any revisions), with
    /// renames: what an incremental update has to redo.
    pub fn changed_since(
        &self,
        old_commit: &str,
        new_commit: &str,
    ) -> Result<Vec<ChangedFile>, SourceError> {
        let repo = self.local();
        let tree_of = |rev: &str| -> Result<ObjectId, SourceError> {
            let id = self.commit_id(&repo, rev)?;
            Ok(repo
                .find_commit(id)
                .map_err(git_err)?
                .tree_id()
                .map_err(git_err)?
                .detach())
        };
        let (old, new) = (tree_of(old_commit)?, tree_of(new_commit)?);
        let mut differ = Differ::new(&repo, false)?;
        let mut files = differ.diff(Some(old), new, true)?;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

pub(crate) fn read_meta(repo: &gix::Repository, id: ObjectId) -> Result<CommitMeta, SourceError> {
    meta_of(&repo.find_commit(id).map_err(git_err)?)
}

fn meta_of(commit: &gix::Commit<'_>) -> Result<CommitMeta, SourceError> {
    let c = commit.decode().map_err(git_err)?;
    let author = c.author().map_err(git_err)?.trim();
    let committer = c.committer().map_err(git_err)?;
    let message = c.message.to_str_lossy();
    Ok(CommitMeta {
        sha: commit.id.to_string(),
        parents: c.parents().map(|p| p.to_string()).collect(),
        author_name: author.name.to_str_lossy().into_owned(),
        author_email: author.email.to_str_lossy().into_owned(),
        author_time: author.seconds(),
        committer_time: committer.seconds(),
        summary: c.message_summary().to_str_lossy().into_owned(),
        message: message.trim_end().to_string(),
    })
}

/// Tree diffs with rename tracking, reusing buffers and caches.
pub(crate) struct Differ<'r> {
    repo: &'r gix::Repository,
    resource_cache: gix::diff::blob::Platform,
    state: gix::diff::tree::State,
    stats: bool,
    algorithm: gix::diff::blob::Algorithm,
    lhs: Vec<u8>,
    rhs: Vec<u8>,
}

impl<'r> Differ<'r> {
    pub(crate) fn new(repo: &'r gix::Repository, stats: bool) -> Result<Self, SourceError> {
        Ok(Differ {
            repo,
            resource_cache: repo.diff_resource_cache_for_tree_diff().map_err(git_err)?,
            state: Default::default(),
            stats,
            algorithm: repo.diff_algorithm().map_err(git_err)?,
            lhs: Vec::new(),
            rhs: Vec::new(),
        })
    }

    /// A commit's changed files, merges handled as the module says.
    fn commit_files(
        &mut self,
        tree: ObjectId,
        parents: &[ObjectId],
        first_parent: bool,
    ) -> Result<Vec<ChangedFile>, SourceError> {
        let parent_tree = |p: &ObjectId| -> Result<ObjectId, SourceError> {
            Ok(self
                .repo
                .find_commit(*p)
                .map_err(git_err)?
                .tree_id()
                .map_err(git_err)?
                .detach())
        };
        match parents {
            [] => self.diff(None, tree, true),
            [p] => {
                let pt = parent_tree(p)?;
                self.diff(Some(pt), tree, true)
            }
            [p, ..] if first_parent => {
                let pt = parent_tree(p)?;
                self.diff(Some(pt), tree, true)
            }
            _ => {
                // Combined: keep what differs from every parent. Without
                // rename detection (as git's combined diff): a merge's diff
                // against one parent can hold a whole branch of additions
                // and deletions, and pairing those up is what costs.
                let trees: Vec<ObjectId> =
                    parents.iter().map(parent_tree).collect::<Result<_, _>>()?;
                let mut changes = self.raw(Some(trees[0]), tree, false)?;
                for pt in &trees[1..] {
                    if changes.is_empty() {
                        break;
                    }
                    let other: HashSet<gix::bstr::BString> = self
                        .raw(Some(*pt), tree, false)?
                        .into_iter()
                        .map(|c| c.location().to_owned())
                        .collect();
                    changes.retain(|c| other.contains(c.location()));
                }
                self.files(changes)
            }
        }
    }

    fn diff(
        &mut self,
        old: Option<ObjectId>,
        new: ObjectId,
        renames: bool,
    ) -> Result<Vec<ChangedFile>, SourceError> {
        let changes = self.raw(old, new, renames)?;
        self.files(changes)
    }

    /// The raw changes between two trees (`None`: the empty tree).
    pub(crate) fn raw(
        &mut self,
        old: Option<ObjectId>,
        new: ObjectId,
        renames: bool,
    ) -> Result<Vec<gix::diff::tree_with_rewrites::Change>, SourceError> {
        let kind = new.kind();
        let objects = &self.repo.objects;
        let lhs = match old {
            Some(id) => objects
                .find_tree_iter(&id, &mut self.lhs)
                .map_err(git_err)?,
            None => gix::objs::TreeRefIter::from_bytes(&[], kind),
        };
        let rhs = objects
            .find_tree_iter(&new, &mut self.rhs)
            .map_err(git_err)?;
        let mut changes = Vec::new();
        let options = |renames: bool| gix::diff::tree_with_rewrites::Options {
            location: Some(gix::diff::tree::recorder::Location::Path),
            rewrites: renames.then(gix::diff::Rewrites::default),
        };
        let mut run = |renames: bool, changes: &mut Vec<_>| {
            changes.clear();
            let done = gix::diff::tree_with_rewrites(
                lhs,
                rhs,
                &mut self.resource_cache,
                &mut self.state,
                objects,
                |change| {
                    changes.push(change.into_owned());
                    Ok(std::ops::ControlFlow::Continue(()))
                },
                options(renames),
            );
            self.resource_cache.clear_resource_cache_keep_allocation();
            done
        };
        // Rename detection reads blobs; in a partial clone or a damaged
        // mirror some are missing. The commit's changes are still known
        // from its trees: record them without renames rather than fail.
        if run(renames, &mut changes).is_err() {
            run(false, &mut changes).map_err(git_err)?;
        }
        Ok(changes)
    }

    fn files(
        &mut self,
        changes: Vec<gix::diff::tree_with_rewrites::Change>,
    ) -> Result<Vec<ChangedFile>, SourceError> {
        let mut files = Vec::with_capacity(changes.len());
        for change in changes {
            if let Some(f) = self.changed_file(change)? {
                files.push(f);
            }
        }
        Ok(files)
    }

    pub(crate) fn changed_file(
        &mut self,
        change: gix::diff::tree_with_rewrites::Change,
    ) -> Result<Option<ChangedFile>, SourceError> {
        use gix::diff::tree_with_rewrites::Change;
        let path = |p: &gix::bstr::BString| p.to_str_lossy().into_owned();
        let file = match change {
            Change::Addition {
                location,
                entry_mode,
                id,
                ..
            } => {
                if entry_mode.is_tree() {
                    return Ok(None);
                }
                let counts = self.counts(None, Some(id), entry_mode.is_blob())?;
                changed(path(&location), None, ChangeStatus::Added, counts)
            }
            Change::Deletion {
                location,
                entry_mode,
                id,
                ..
            } => {
                if entry_mode.is_tree() {
                    return Ok(None);
                }
                let counts = self.counts(Some(id), None, entry_mode.is_blob())?;
                changed(path(&location), None, ChangeStatus::Deleted, counts)
            }
            Change::Modification {
                location,
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
            } => {
                if entry_mode.is_tree() && previous_entry_mode.is_tree() {
                    return Ok(None);
                }
                let blobs = entry_mode.is_blob() && previous_entry_mode.is_blob();
                let counts = self.counts(Some(previous_id), Some(id), blobs)?;
                changed(path(&location), None, ChangeStatus::Modified, counts)
            }
            Change::Rewrite {
                source_location,
                source_id,
                entry_mode,
                location,
                id,
                diff,
                ..
            } => {
                if entry_mode.is_tree() {
                    return Ok(None);
                }
                let counts = match diff {
                    Some(d) if self.stats => Some((d.insertions, d.removals)),
                    None if self.stats && source_id == id => Some((0, 0)),
                    _ => self.counts(Some(source_id), Some(id), entry_mode.is_blob())?,
                };
                changed(
                    path(&location),
                    Some(path(&source_location)),
                    ChangeStatus::Renamed,
                    counts,
                )
            }
        };
        Ok(Some(file))
    }

    /// Inserted and deleted lines between two blobs (either may be absent);
    /// `None` when stats are off, for binary files and for non-blobs.
    fn counts(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        blobs: bool,
    ) -> Result<Option<(u32, u32)>, SourceError> {
        if !self.stats || !blobs {
            return Ok(None);
        }
        // A blob missing from the object database (a partial clone, a
        // damaged mirror) leaves the counts unknown, like a binary file.
        let mut old_buf = Vec::new();
        let old_data = match old {
            Some(id) => match self.repo.objects.find_blob(&id, &mut old_buf) {
                Ok(b) => b.data,
                Err(_) => return Ok(None),
            },
            None => &[],
        };
        let mut new_buf = Vec::new();
        let new_data = match new {
            Some(id) => match self.repo.objects.find_blob(&id, &mut new_buf) {
                Ok(b) => b.data,
                Err(_) => return Ok(None),
            },
            None => &[],
        };
        if is_binary(old_data) || is_binary(new_data) {
            return Ok(None);
        }
        let input = gix::diff::blob::InternedInput::new(old_data, new_data);
        let diff = gix::diff::blob::Diff::compute(self.algorithm, &input);
        Ok(Some((diff.count_additions(), diff.count_removals())))
    }
}

fn changed(
    path: String,
    old_path: Option<String>,
    status: ChangeStatus,
    counts: Option<(u32, u32)>,
) -> ChangedFile {
    ChangedFile {
        path,
        old_path,
        status,
        insertions: counts.map(|c| c.0),
        deletions: counts.map(|c| c.1),
    }
}

/// Git's test: a NUL byte in the first 8000 bytes.
fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}
