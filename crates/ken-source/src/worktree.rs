//! Listing a working tree as it is on disk, uncommitted edits included.

use std::path::Path;

use ignore::WalkBuilder;

use crate::git::blob_id;
use crate::{Entry, ListOptions, Listing, SkipReason, SourceError, filter, ignore_rules};

/// Every file under `root` that git would not ignore (`.gitignore`,
/// `.git/info/exclude`, global excludes), minus `.kenignore` matches and the
/// filters of [`filter`]. Symbolic links are never followed.
///
/// Ids are git blob ids computed from the content, so a file unchanged since
/// the last commit has the same id as in that commit.
pub fn list_worktree(root: &Path, opts: &ListOptions) -> Result<Listing, SourceError> {
    if !root.is_dir() {
        return Err(SourceError::NoSuchPath(root.to_path_buf()));
    }
    let kenignore = std::fs::read_to_string(root.join(".kenignore"))
        .ok()
        .map(|t| ignore_rules::matcher(&t));
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .parents(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut listing = Listing::default();
    for item in walker {
        let entry = match item {
            Ok(e) => e,
            Err(e) => {
                let path = match &e {
                    ignore::Error::WithPath { path, .. } => path.display().to_string(),
                    other => other.to_string(),
                };
                listing.skipped.push((path, SkipReason::Unreadable));
                continue;
            }
        };
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_dir() {
            continue;
        }
        let rel = match entry.path().strip_prefix(root) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let Some(path) = rel.to_str().map(|s| s.replace('\\', "/")) else {
            listing
                .skipped
                .push((rel.to_string_lossy().into_owned(), SkipReason::BadPath));
            continue;
        };
        let reason = if ft.is_symlink() {
            Some(SkipReason::Symlink)
        } else if !ft.is_file() {
            continue;
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
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > opts.limit_for(&path) {
            listing.skipped.push((path, SkipReason::TooLarge));
            continue;
        }
        match std::fs::read(entry.path()) {
            Ok(bytes) => listing.entries.push(Entry {
                path,
                id: blob_id(&bytes),
                size: bytes.len() as u64,
            }),
            Err(_) => listing.skipped.push((path, SkipReason::Unreadable)),
        }
    }
    listing.entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(listing)
}

/// Read a working-tree file (relative path) without following a final symlink.
pub fn read_worktree_file(root: &Path, path: &str) -> Result<Vec<u8>, SourceError> {
    let full = root.join(path);
    std::fs::read(&full).map_err(|source| SourceError::Io { path: full, source })
}
