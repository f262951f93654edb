//! Line attribution: which commit last changed each line of a file.
//!
//! What it matches: plain `git blame <commit> -- <path>`. git follows a
//! file across whole-file renames by default (that is gix's blame with
//! `rewrites: Some(Default::default())`: a file appearing in a commit is
//! paired with a deleted one at least 50% similar); it neither detects
//! lines moved inside a file (`-M`) nor copied from other files (`-C`),
//! and whitespace counts (no `-w`). Lines are diffed with Myers (git's
//! default, or `diff.algorithm` from the repository's config) with gix's
//! slider post-processing. `tests/blame_vs_git.rs` compares the output
//! with `git blame --porcelain`.
//!
//! How: the hunk logic is gix-blame's ([`hunks`]), driven by one history
//! walk shared by all the files of a batch ([`walk`]) instead of one walk
//! per file. Batches are split over threads, each with its own walk and
//! object cache, as runs of neighbouring paths of about equal lines (a
//! walk diffs only the trees that lead to its own files).
//!
//! Budgets ([`BlameOptions`]): a file of more than `max_lines` lines is
//! attributed wholesale to the last commit that changed it; a file whose
//! own work (diffs, rename searches) passes `time_budget`, or any file still
//! unfinished when `batch_budget` runs out, gets its remaining lines
//! attributed to the oldest commits the walk reached for them (like the
//! boundary commits of `git blame --since`). Both are flagged in
//! [`FileBlame::method`].
//!
//! Incremental ([`KnownBlame`]): the blame of files at an earlier commit
//! (the one an index was last blamed at) ends the walk there. A file whose
//! walk reaches that commit with the same blob takes the known ranges for
//! the lines it still has to attribute, so moving an index forward diffs
//! only the commits in between, not the file's whole history. Each line
//! gets the commit a full walk gives it; where several known ranges of one
//! commit come together (the lines between them deleted since), they stay
//! separate ranges where git would join them.

mod hunks;
mod walk;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::error::git_err;
use crate::{GitRepo, SourceError};
use walk::{FileState, Walker};

/// Lines `start_line..=end_line` (1-based, inclusive, in the file at the
/// blamed commit) were last changed by `commit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameRange {
    pub start_line: u32,
    pub end_line: u32,
    /// Full hex sha of the commit.
    pub commit: String,
}

impl BlameRange {
    /// How many lines the range covers.
    pub fn lines(&self) -> u32 {
        self.end_line + 1 - self.start_line
    }
}

/// Budgets for [`GitRepo::blame_files_with`].
#[derive(Debug, Clone)]
pub struct BlameOptions {
    /// Files with more lines than this are attributed to their last change.
    pub max_lines: u32,
    /// Work allowed on one file (its diffs and rename searches; the walk
    /// itself is shared and not counted). `None`: no limit.
    pub time_budget: Option<Duration>,
    /// Wall-clock time allowed for the whole batch. `None`: no limit.
    pub batch_budget: Option<Duration>,
    /// Worker threads, each walking history for its share of the files;
    /// 0 means one per available core, at most 4.
    pub threads: usize,
    /// Blame already known at an earlier commit: walks end there.
    pub known: Option<Arc<KnownBlame>>,
}

/// The blame of files at one commit, from an earlier run.
#[derive(Debug, Clone, Default)]
pub struct KnownBlame {
    /// The commit it is of (full hex sha).
    pub commit: String,
    /// By path at that commit.
    pub files: HashMap<String, KnownFile>,
}

/// One file's blame at [`KnownBlame::commit`].
#[derive(Debug, Clone)]
pub struct KnownFile {
    /// The blob it is of (hex): used only where the file there is this blob.
    pub blob: String,
    /// Every line, in order, as [`GitRepo::blame_files_with`] gave them.
    pub ranges: Vec<BlameRange>,
    /// It was itself not exact (a budget ran out): so is what takes it.
    pub approximate: bool,
}

impl Default for BlameOptions {
    fn default() -> Self {
        BlameOptions {
            max_lines: 20_000,
            time_budget: Some(Duration::from_secs(5)),
            batch_budget: None,
            threads: 0,
            known: None,
        }
    }
}

/// How a file's lines were attributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlameMethod {
    /// Line by line, as `git blame` does.
    Exact,
    /// Line by line until the budget ran out; lines not attributed by then
    /// went to the oldest commit reached on their history.
    Partial(FallbackReason),
    /// Every line to the last commit that changed the file.
    LastChange(FallbackReason),
}

/// Why the exact blame was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackReason {
    TooManyLines {
        lines: u32,
    },
    OverTime,
    /// Older versions of the file are not in the object database.
    MissingObjects,
    /// Lines came from a [`KnownBlame`] that was itself not exact.
    Inherited,
}

/// The blame of one file of a batch.
#[derive(Debug)]
pub struct FileBlame {
    pub path: String,
    pub ranges: Result<Vec<BlameRange>, SourceError>,
    pub method: BlameMethod,
    /// Time spent on this file alone (the shared walk is not counted).
    pub elapsed: Duration,
}

/// The files of a batch in `threads` shares of about equal lines, each a
/// run of neighbouring paths: a walk diffs only the trees that lead to its
/// own files, so a thread whose files share directories walks fewer trees
/// than one holding a sample of the whole repository.
fn split_by_directory(
    paths: &[&str],
    mut walk: Vec<(usize, u32)>,
    threads: usize,
) -> Vec<Vec<(usize, u32)>> {
    walk.sort_by(|a, b| paths[a.0].cmp(paths[b.0]));
    // a file costs its lines, and something for being walked at all
    let cost = |lines: u32| u64::from(lines) + 100;
    let total: u64 = walk.iter().map(|&(_, l)| cost(l)).sum();
    let mut shares: Vec<Vec<(usize, u32)>> = vec![Vec::new(); threads];
    let mut done = 0u64;
    for f in walk {
        let t = ((done * threads as u64) / total.max(1)).min(threads as u64 - 1) as usize;
        shares[t].push(f);
        done += cost(f.1);
    }
    shares.retain(|s| !s.is_empty());
    shares
}

impl GitRepo {
    /// Blame one file at `commit` (any revision), with no budget.
    pub fn blame_file(&self, commit: &str, path: &str) -> Result<Vec<BlameRange>, SourceError> {
        let repo = self.blame_handle();
        let id = self.commit_id(&repo, commit)?;
        let lines = line_count(&repo, id, path)?;
        let mut files = vec![FileState::new(path, lines, id)];
        Walker::new(&repo)?.run(id, &mut files, None, None)?;
        let file = files.pop().expect("one file");
        Ok(ranges(file.finish()))
    }

    /// Blame many files of one commit with the default budgets
    /// ([`BlameOptions::default`]). Results are in the order of `paths`.
    /// [`GitRepo::blame_files_with`] also tells which files fell back.
    pub fn blame_files<S: AsRef<str>>(
        &self,
        commit: &str,
        paths: &[S],
    ) -> Vec<(String, Result<Vec<BlameRange>, SourceError>)> {
        self.blame_files_with(commit, paths, &BlameOptions::default())
            .into_iter()
            .map(|b| (b.path, b.ranges))
            .collect()
    }

    /// Blame many files of one commit within `opts`' budgets. One bad file
    /// never stops the batch: its error is in its own result. Results are
    /// in the order of `paths`.
    pub fn blame_files_with<S: AsRef<str>>(
        &self,
        commit: &str,
        paths: &[S],
        opts: &BlameOptions,
    ) -> Vec<FileBlame> {
        let paths: Vec<&str> = paths.iter().map(AsRef::as_ref).collect();
        let started = Instant::now();
        let deadline = opts.batch_budget.map(|b| started + b);
        let repo = self.blame_handle();
        let commit_id = match self.commit_id(&repo, commit) {
            Ok(id) => id,
            Err(e) => {
                let msg = e.to_string();
                return paths
                    .iter()
                    .map(|p| failed(p, SourceError::Git(msg.clone())))
                    .collect();
            }
        };
        let mut out: Vec<Option<FileBlame>> = (0..paths.len()).map(|_| None).collect();
        // Sizes first: missing files fail, huge ones take the cheap road.
        let mut walk: Vec<(usize, u32)> = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            match line_count(&repo, commit_id, path) {
                Err(e) => out[i] = Some(failed(path, e)),
                Ok(lines) if lines > opts.max_lines => {
                    let t = Instant::now();
                    out[i] = Some(FileBlame {
                        path: path.to_string(),
                        ranges: last_change_ranges(&repo, commit_id, path, lines),
                        method: BlameMethod::LastChange(FallbackReason::TooManyLines { lines }),
                        elapsed: t.elapsed(),
                    });
                }
                Ok(lines) => walk.push((i, lines)),
            }
        }
        let threads = match opts.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
            n => n,
        }
        .clamp(1, walk.len().max(1));
        let known = opts.known.as_deref().and_then(walk::Known::new);
        let shares = split_by_directory(&paths, walk, threads);
        let done: Vec<Vec<(usize, FileBlame)>> = std::thread::scope(|s| {
            let handles: Vec<_> = shares
                .iter()
                .map(|share| {
                    s.spawn(|| {
                        self.walk_share(
                            commit_id,
                            &paths,
                            share,
                            known.as_ref(),
                            opts.time_budget,
                            deadline,
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("blame worker panicked"))
                .collect()
        });
        for (i, b) in done.into_iter().flatten() {
            out[i] = Some(b);
        }
        out.into_iter()
            .map(|b| b.expect("every path blamed"))
            .collect()
    }

    /// One thread's files, blamed with one walk.
    fn walk_share(
        &self,
        commit: ObjectId,
        paths: &[&str],
        share: &[(usize, u32)],
        known: Option<&walk::Known>,
        file_budget: Option<Duration>,
        deadline: Option<Instant>,
    ) -> Vec<(usize, FileBlame)> {
        let repo = self.blame_handle();
        let mut files: Vec<FileState> = share
            .iter()
            .map(|&(i, lines)| FileState::new(paths[i], lines, commit))
            .collect();
        let outcome = Walker::new(&repo).and_then(|mut w| {
            w.known = known;
            w.run(commit, &mut files, file_budget, deadline)
        });
        if let Err(e) = outcome {
            let msg = e.to_string();
            return share
                .iter()
                .map(|&(i, _)| (i, failed(paths[i], SourceError::Git(msg.clone()))))
                .collect();
        }
        share
            .iter()
            .zip(files)
            .map(|(&(i, _), mut file)| {
                if let Some(e) = file.error.take() {
                    return (i, failed(paths[i], e));
                }
                let method = if file.truncated {
                    BlameMethod::Partial(FallbackReason::OverTime)
                } else if file.missing_objects {
                    BlameMethod::Partial(FallbackReason::MissingObjects)
                } else if file.inherited_approximation {
                    BlameMethod::Partial(FallbackReason::Inherited)
                } else {
                    BlameMethod::Exact
                };
                let elapsed = file.spent();
                let blame = FileBlame {
                    path: paths[i].to_string(),
                    ranges: Ok(ranges(file.finish())),
                    method,
                    elapsed,
                };
                (i, blame)
            })
            .collect()
    }

    /// gix's own `blame::file` (one history walk per file, gix's rename
    /// tracking), for comparisons in tests and benchmarks.
    #[doc(hidden)]
    pub fn blame_file_gix(&self, commit: &str, path: &str) -> Result<Vec<BlameRange>, SourceError> {
        let repo = self.blame_handle();
        let id = self.commit_id(&repo, commit)?;
        let options = gix::repository::blame_file::Options {
            diff_algorithm: None,
            ranges: gix::blame::BlameRanges::WholeFile,
            since: None,
            rewrites: Some(gix::diff::Rewrites::default()),
        };
        let outcome = repo
            .blame_file(path.as_bytes().as_bstr(), id, options)
            .map_err(|e| SourceError::Git(format!("blame of {path}: {e:#}")))?;
        Ok(outcome
            .entries
            .iter()
            .map(|e| BlameRange {
                start_line: e.start_in_blamed_file + 1,
                end_line: e.start_in_blamed_file + e.len.get(),
                commit: e.commit_id.to_string(),
            })
            .collect())
    }

    /// A repository handle for blame: commits, trees and blobs are read
    /// again along the walk, so a large object cache pays off.
    fn blame_handle(&self) -> gix::Repository {
        let mut repo = self.local();
        repo.object_cache_size(64 * 1024 * 1024);
        repo
    }
}

fn failed(path: &str, e: SourceError) -> FileBlame {
    FileBlame {
        path: path.to_string(),
        ranges: Err(e),
        method: BlameMethod::Exact,
        elapsed: Duration::ZERO,
    }
}

fn ranges(entries: Vec<(u32, u32, ObjectId)>) -> Vec<BlameRange> {
    entries
        .into_iter()
        .map(|(start, len, commit)| BlameRange {
            start_line: start + 1,
            end_line: start + len,
            commit: commit.to_string(),
        })
        .collect()
}

/// Lines of `path` at `commit`, counted as blame counts them.
fn line_count(repo: &gix::Repository, commit: ObjectId, path: &str) -> Result<u32, SourceError> {
    let id = entry_at(repo, commit, path)?.ok_or_else(|| no_such_file(commit, path))?;
    let blob = repo.find_blob(id).map_err(git_err)?;
    Ok(count_lines(&blob.data))
}

/// The fallback for huge files: all `lines` lines to the last change.
fn last_change_ranges(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
    lines: u32,
) -> Result<Vec<BlameRange>, SourceError> {
    let sha = last_change(repo, commit, path)?;
    Ok(vec![BlameRange {
        start_line: 1,
        end_line: lines,
        commit: sha.to_string(),
    }])
}

/// The most recent commit on the first-parent chain from `commit` where the
/// blob at `path` differs from the first parent's (or the file appears).
fn last_change(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
) -> Result<ObjectId, SourceError> {
    let mut current = commit;
    let blob = entry_at(repo, current, path)?.ok_or_else(|| no_such_file(commit, path))?;
    loop {
        let c = repo.find_commit(current).map_err(git_err)?;
        let Some(parent) = c.parent_ids().next().map(|p| p.detach()) else {
            return Ok(current);
        };
        match entry_at(repo, parent, path)? {
            Some(b) if b == blob => current = parent,
            _ => return Ok(current),
        }
    }
}

/// The object id of `path` in `commit`'s tree.
fn entry_at(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
) -> Result<Option<ObjectId>, SourceError> {
    let tree = repo
        .find_commit(commit)
        .map_err(git_err)?
        .tree()
        .map_err(git_err)?;
    let entry = tree.lookup_entry_by_path(path).map_err(git_err)?;
    Ok(entry.map(|e| e.object_id()))
}

/// Lines as blame tokenizes them: a last line without a newline counts.
fn count_lines(data: &[u8]) -> u32 {
    let newlines = data.iter().filter(|&&b| b == b'\n').count();
    let unterminated = usize::from(!data.is_empty() && !data.ends_with(b"\n"));
    (newlines + unterminated) as u32
}

fn no_such_file(commit: ObjectId, path: &str) -> SourceError {
    SourceError::NoSuchFile {
        path: path.to_string(),
        rev: commit.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{count_lines, split_by_directory};

    #[test]
    fn shares_are_runs_of_neighbouring_paths_of_about_equal_lines() {
        let paths = [
            "src/b/two.py",
            "docs/a.md",
            "src/a/one.py",
            "src/b/three.py",
            "tests/t.py",
            "src/a/four.py",
        ];
        let walk: Vec<(usize, u32)> = (0..paths.len()).map(|i| (i, 1000)).collect();
        let shares = split_by_directory(&paths, walk.clone(), 2);
        let names: Vec<Vec<&str>> = shares
            .iter()
            .map(|s| s.iter().map(|(i, _)| paths[*i]).collect())
            .collect();
        assert_eq!(
            names,
            [
                vec!["docs/a.md", "src/a/four.py", "src/a/one.py"],
                vec!["src/b/three.py", "src/b/two.py", "tests/t.py"],
            ]
        );
        // one big file weighs as much as many small ones
        let mut lopsided = walk.clone();
        lopsided[1].1 = 20_000; // docs/a.md
        let shares = split_by_directory(&paths, lopsided, 2);
        assert_eq!(shares[0].len(), 1);
        assert_eq!(shares[1].len(), 5);
        // more threads than files: no empty share; every file in one
        let shares = split_by_directory(&paths[..2], walk[..2].to_vec(), 4);
        assert!(shares.iter().all(|s| !s.is_empty()));
        assert_eq!(shares.iter().map(Vec::len).sum::<usize>(), 2);
        assert!(split_by_directory(&paths, Vec::new(), 2).is_empty());
    }

    #[test]
    fn counts_lines_like_blame() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }
}
