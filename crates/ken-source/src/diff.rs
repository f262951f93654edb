//! A commit's changes line by line: per file, the hunks against the first
//! parent and, when asked, the text of the lines it added. What a report
//! over a period reads for the period's commits only; the index's history
//! keeps the changed files, not the lines.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::error::git_err;
use crate::log::{ChangedFile, Differ};
use crate::{GitRepo, SourceError};

/// Lines `old_start..old_start + old_len` of the parent's file became
/// `new_start..new_start + new_len` (1-based; an empty side's start is the
/// line before which it sits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineHunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
}

/// A changed file with its hunks. `hunks` is empty and the counts `None`
/// for binary files, blobs over the size limit and missing objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub file: ChangedFile,
    pub hunks: Vec<LineHunk>,
    /// The added lines (number in the new file, text), when asked for.
    pub added_lines: Vec<(u32, String)>,
}

#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    /// Keep the text of added lines.
    pub added_text: bool,
    /// Blobs larger than this are not diffed.
    pub max_blob_bytes: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            added_text: false,
            max_blob_bytes: 1 << 20,
        }
    }
}

impl GitRepo {
    /// The line changes of each commit against its first parent (a root
    /// commit against the empty tree), with renames. A merge commit yields
    /// no files: its lines were written by the commits it merges. A commit
    /// that cannot be read is an error in its slot; the others go on.
    pub fn commit_diffs<S: AsRef<str>>(
        &self,
        shas: &[S],
        opts: &DiffOptions,
    ) -> Vec<Result<Vec<FileDiff>, SourceError>> {
        let repo = self.local();
        let mut differ = match Differ::new(&repo, false) {
            Ok(d) => d,
            Err(e) => {
                let msg = e.to_string();
                return shas
                    .iter()
                    .map(|_| Err(SourceError::Git(msg.clone())))
                    .collect();
            }
        };
        shas.iter()
            .map(|sha| self.one_diff(&repo, &mut differ, sha.as_ref(), opts))
            .collect()
    }

    fn one_diff(
        &self,
        repo: &gix::Repository,
        differ: &mut Differ<'_>,
        sha: &str,
        opts: &DiffOptions,
    ) -> Result<Vec<FileDiff>, SourceError> {
        let id = self.commit_id(repo, sha)?;
        let commit = repo.find_commit(id).map_err(git_err)?;
        let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        if parents.len() > 1 {
            return Ok(Vec::new());
        }
        let tree = commit.tree_id().map_err(git_err)?.detach();
        let old = match parents.first() {
            Some(p) => Some(
                repo.find_commit(*p)
                    .map_err(git_err)?
                    .tree_id()
                    .map_err(git_err)?
                    .detach(),
            ),
            None => None,
        };
        let changes = differ.raw(old, tree, true)?;
        let mut out = Vec::with_capacity(changes.len());
        for change in changes {
            let blobs = blob_pair(&change);
            let Some(file) = differ.changed_file(change)? else {
                continue;
            };
            out.push(detail(repo, file, blobs, opts));
        }
        Ok(out)
    }
}

/// The (old, new) blob ids of a change between blobs; None for trees,
/// submodules and links.
fn blob_pair(
    change: &gix::diff::tree_with_rewrites::Change,
) -> Option<(Option<ObjectId>, Option<ObjectId>)> {
    use gix::diff::tree_with_rewrites::Change;
    match change {
        Change::Addition { entry_mode, id, .. } => {
            entry_mode.is_blob().then_some((None, Some(*id)))
        }
        Change::Deletion { entry_mode, id, .. } => {
            entry_mode.is_blob().then_some((Some(*id), None))
        }
        Change::Modification {
            previous_entry_mode,
            previous_id,
            entry_mode,
            id,
            ..
        } => (entry_mode.is_blob() && previous_entry_mode.is_blob())
            .then_some((Some(*previous_id), Some(*id))),
        Change::Rewrite {
            source_entry_mode,
            source_id,
            entry_mode,
            id,
            ..
        } => (entry_mode.is_blob() && source_entry_mode.is_blob())
            .then_some((Some(*source_id), Some(*id))),
    }
}

fn detail(
    repo: &gix::Repository,
    mut file: ChangedFile,
    blobs: Option<(Option<ObjectId>, Option<ObjectId>)>,
    opts: &DiffOptions,
) -> FileDiff {
    let mut out = FileDiff {
        file: file.clone(),
        hunks: Vec::new(),
        added_lines: Vec::new(),
    };
    let Some((old, new)) = blobs else {
        return out;
    };
    let read = |id: Option<ObjectId>| -> Option<Vec<u8>> {
        match id {
            None => Some(Vec::new()),
            Some(id) => {
                let blob = repo.find_blob(id).ok()?;
                (blob.data.len() <= opts.max_blob_bytes).then(|| blob.data.clone())
            }
        }
    };
    let (Some(old), Some(new)) = (read(old), read(new)) else {
        return out;
    };
    if is_binary(&old) || is_binary(&new) {
        return out;
    }
    let algorithm = gix::diff::blob::Algorithm::Histogram;
    let input = gix::diff::blob::InternedInput::new(old.as_slice(), new.as_slice());
    let mut diff = gix::diff::blob::Diff::compute(algorithm, &input);
    diff.postprocess_lines(&input);
    let (mut added, mut removed) = (0u32, 0u32);
    let new_lines: Vec<&[u8]> = if opts.added_text {
        new.lines_with_terminator().collect()
    } else {
        Vec::new()
    };
    for h in diff.hunks() {
        let hunk = LineHunk {
            old_start: h.before.start + 1,
            old_len: h.before.end - h.before.start,
            new_start: h.after.start + 1,
            new_len: h.after.end - h.after.start,
        };
        added += hunk.new_len;
        removed += hunk.old_len;
        if opts.added_text {
            for n in h.after.clone() {
                if let Some(line) = new_lines.get(n as usize) {
                    let text = line.to_str_lossy();
                    out.added_lines
                        .push((n + 1, text.trim_end_matches(['\n', '\r']).to_string()));
                }
            }
        }
        out.hunks.push(hunk);
    }
    file.insertions = Some(added);
    file.deletions = Some(removed);
    out.file = file;
    out
}

/// Git's test: a NUL byte in the first 8000 bytes.
fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "A")
            .env("GIT_AUTHOR_EMAIL", "a@x.org")
            .env("GIT_COMMITTER_NAME", "A")
            .env("GIT_COMMITTER_EMAIL", "a@x.org")
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn hunks_and_added_lines_of_each_commit() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        std::fs::write(d.join("b.bin"), b"\0\x01\x02").unwrap();
        git(d, &["add", "."]);
        git(d, &["commit", "-q", "-m", "first"]);
        std::fs::write(d.join("a.txt"), "one\nTWO\nthree\nfour\nfive\n").unwrap();
        std::fs::write(d.join("b.bin"), b"\0\x01\x03").unwrap();
        git(d, &["commit", "-q", "-am", "second"]);
        let repo = GitRepo::open(d).unwrap();
        let opts = DiffOptions {
            added_text: true,
            ..Default::default()
        };
        let diffs = repo.commit_diffs(&["HEAD~1", "HEAD"], &opts);
        let first = diffs[0].as_ref().unwrap();
        let a = first.iter().find(|f| f.file.path == "a.txt").unwrap();
        assert_eq!(a.file.insertions, Some(4));
        assert_eq!(a.added_lines.len(), 4);
        let second = diffs[1].as_ref().unwrap();
        let a = second.iter().find(|f| f.file.path == "a.txt").unwrap();
        assert_eq!((a.file.insertions, a.file.deletions), (Some(2), Some(1)));
        assert_eq!(
            a.hunks,
            vec![
                LineHunk {
                    old_start: 2,
                    old_len: 1,
                    new_start: 2,
                    new_len: 1
                },
                LineHunk {
                    old_start: 5,
                    old_len: 0,
                    new_start: 5,
                    new_len: 1
                },
            ]
        );
        assert_eq!(
            a.added_lines,
            vec![(2, "TWO".to_string()), (5, "five".to_string())]
        );
        let b = second.iter().find(|f| f.file.path == "b.bin").unwrap();
        assert!(b.hunks.is_empty() && b.file.insertions.is_none());
        assert!(repo.commit_diffs(&["nope"], &opts)[0].is_err());
    }
}
