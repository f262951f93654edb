//! Reading commits, trees and blobs from a git object database.

use std::path::{Path, PathBuf};

use crate::error::git_err;
use crate::{Entry, ListOptions, Listing, SkipReason, SourceError, filter, ignore_rules};

/// A commit, as much of it as the index records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub sha: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub summary: String,
    pub author_name: String,
    pub author_email: String,
}

/// An opened repository (bare or with a working tree). Cheap to share
/// between threads: each call takes a thread-local handle.
#[derive(Clone)]
pub struct GitRepo {
    repo: gix::ThreadSafeRepository,
    git_dir: PathBuf,
    workdir: Option<PathBuf>,
}

impl std::fmt::Debug for GitRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitRepo")
            .field("git_dir", &self.git_dir)
            .field("workdir", &self.workdir)
            .finish()
    }
}

impl GitRepo {
    /// Open the repository at `path`: a working tree's root (or any folder
    /// inside it), or a `.git` / bare git directory.
    pub fn open(path: &Path) -> Result<GitRepo, SourceError> {
        if !path.exists() {
            return Err(SourceError::NoSuchPath(path.to_path_buf()));
        }
        let repo = gix::ThreadSafeRepository::discover(path)
            .map_err(|_| SourceError::NotARepository(path.to_path_buf()))?;
        let local = repo.to_thread_local();
        let git_dir = local.git_dir().to_path_buf();
        let workdir = local.workdir().map(Path::to_path_buf);
        Ok(GitRepo {
            repo,
            git_dir,
            workdir,
        })
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The working tree, if the repository has one.
    pub fn workdir(&self) -> Option<&Path> {
        self.workdir.as_deref()
    }

    pub(crate) fn local(&self) -> gix::Repository {
        let mut r = self.repo.to_thread_local();
        // Blob reads of a whole tree: a larger object cache pays off.
        r.object_cache_size_if_unset(16 * 1024 * 1024);
        r
    }

    /// Resolve a revision (`HEAD`, a branch, a tag, a full or short sha) to a commit.
    pub fn resolve(&self, rev: &str) -> Result<CommitInfo, SourceError> {
        let repo = self.local();
        let unknown = || SourceError::UnknownRev {
            rev: rev.to_string(),
            repo: self.git_dir.display().to_string(),
        };
        if rev == "HEAD" && repo.head_id().is_err() {
            return Err(SourceError::EmptyRepository(
                self.git_dir.display().to_string(),
            ));
        }
        let id = repo.rev_parse_single(rev).map_err(|_| unknown())?;
        let commit = id
            .object()
            .map_err(git_err)?
            .peel_to_commit()
            .map_err(|_| unknown())?;
        commit_info(&commit)
    }

    /// The id of the commit `rev` names (peeling tags), or `UnknownRev`.
    pub(crate) fn commit_id(
        &self,
        repo: &gix::Repository,
        rev: &str,
    ) -> Result<gix::ObjectId, SourceError> {
        let unknown = || SourceError::UnknownRev {
            rev: rev.to_string(),
            repo: self.git_dir.display().to_string(),
        };
        let id = repo.rev_parse_single(rev).map_err(|_| unknown())?;
        let commit = id
            .object()
            .map_err(|_| unknown())?
            .peel_to_commit()
            .map_err(|_| unknown())?;
        Ok(commit.id)
    }

    /// The branch a symbolic reference points at (`HEAD` → `main` in a
    /// repository, `refs/remotes/origin/HEAD` → `main` in a clone), if it
    /// is one.
    pub fn branch_of(&self, symbolic: &str) -> Option<String> {
        let repo = self.local();
        let r = repo.find_reference(symbolic).ok()?;
        match r.target() {
            gix::refs::TargetRef::Symbolic(n) => {
                let full = n.as_bstr().to_string();
                ["refs/remotes/origin/", "refs/heads/"]
                    .iter()
                    .find_map(|p| full.strip_prefix(p).map(str::to_string))
            }
            gix::refs::TargetRef::Object(_) => None,
        }
    }

    /// The commit HEAD points at, or `None` in a repository with no commits.
    pub fn head(&self) -> Result<Option<CommitInfo>, SourceError> {
        let repo = self.local();
        match repo.head_commit() {
            Ok(c) => commit_info(&c).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Every file of a commit's tree, filtered by path and size.
    /// Content-based filters (binary, generated markers) are the reader's job.
    pub fn list_commit(&self, sha: &str, opts: &ListOptions) -> Result<Listing, SourceError> {
        let repo = self.local();
        let tree = commit_tree(&repo, sha)?;
        let records = tree.traverse().breadthfirst.files().map_err(git_err)?;
        let kenignore = records
            .iter()
            .find(|e| e.filepath == ".kenignore" && e.mode.is_blob())
            .and_then(|e| repo.find_blob(e.oid).ok())
            .map(|b| ignore_rules::matcher(&String::from_utf8_lossy(&b.data)));

        let mut listing = Listing::default();
        for rec in records {
            if rec.mode.is_tree() {
                continue;
            }
            let Ok(path) = String::from_utf8(rec.filepath.to_vec()) else {
                listing.skipped.push((
                    String::from_utf8_lossy(&rec.filepath).into_owned(),
                    SkipReason::BadPath,
                ));
                continue;
            };
            let reason = if rec.mode.is_commit() {
                Some(SkipReason::Submodule)
            } else if rec.mode.is_link() {
                Some(SkipReason::Symlink)
            } else if kenignore
                .as_ref()
                .is_some_and(|m| ignore_rules::is_ignored(m, &path))
            {
                Some(SkipReason::Ignored)
            } else {
                filter::skip_by_path(&path)
            };
            if let Some(r) = reason {
                listing.skipped.push((path, r));
                continue;
            }
            // A missing object (a partial or shallow clone) is a skip, not a failure.
            let Ok(size) = repo.find_header(rec.oid).map(|h| h.size()) else {
                listing.skipped.push((path, SkipReason::MissingObject));
                continue;
            };
            if size > opts.limit_for(&path) {
                listing.skipped.push((path, SkipReason::TooLarge));
                continue;
            }
            listing.entries.push(Entry {
                path,
                id: rec.oid.to_string(),
                size,
            });
        }
        listing.entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(listing)
    }

    /// The bytes of the file at `path` in commit `sha` (None: there is
    /// no such file, or it is not a regular file).
    pub fn file_at(&self, sha: &str, path: &str) -> Result<Option<Vec<u8>>, SourceError> {
        let repo = self.local();
        let tree = commit_tree(&repo, sha)?;
        let Some(entry) = tree.lookup_entry_by_path(path).map_err(git_err)? else {
            return Ok(None);
        };
        if !entry.mode().is_blob() {
            return Ok(None);
        }
        let blob = repo.find_blob(entry.object_id()).map_err(git_err)?;
        Ok(Some(blob.data.clone()))
    }

    /// The bytes of a blob.
    pub fn read_blob(&self, id: &str) -> Result<Vec<u8>, SourceError> {
        let repo = self.local();
        let oid = gix::ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        let blob = repo.find_blob(oid).map_err(git_err)?;
        Ok(blob.data.clone())
    }

    /// Is `ancestor` an ancestor of (or equal to) `descendant`?
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, SourceError> {
        if ancestor == descendant {
            return Ok(true);
        }
        let repo = self.local();
        let a = gix::ObjectId::from_hex(ancestor.as_bytes()).map_err(git_err)?;
        let d = gix::ObjectId::from_hex(descendant.as_bytes()).map_err(git_err)?;
        let base = repo.merge_base(a, d).map_err(git_err)?;
        Ok(base.is_some_and(|b| b.detach() == a))
    }
}

fn commit_info(commit: &gix::Commit<'_>) -> Result<CommitInfo, SourceError> {
    let decoded = commit.decode().map_err(git_err)?;
    let author = decoded.author().map_err(git_err)?;
    let time = commit.time().map(|t| t.seconds).unwrap_or(0);
    let summary = decoded.message_summary().to_string();
    Ok(CommitInfo {
        sha: commit.id.to_string(),
        time,
        summary,
        author_name: author.name.to_string(),
        author_email: author.email.to_string(),
    })
}

/// The git blob id of `bytes` (what `git hash-object` prints).
/// The tree of the commit `sha` names.
fn commit_tree<'r>(repo: &'r gix::Repository, sha: &str) -> Result<gix::Tree<'r>, SourceError> {
    repo.rev_parse_single(sha)
        .map_err(git_err)?
        .object()
        .map_err(git_err)?
        .peel_to_commit()
        .map_err(git_err)?
        .tree()
        .map_err(git_err)
}

pub fn blob_id(bytes: &[u8]) -> String {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .map(|id| id.to_string())
        .unwrap_or_default()
}
