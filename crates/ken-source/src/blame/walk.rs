//! Blame many files of one commit with a single walk of history.
//!
//! gix's `blame::file` walks history once per file, reading the same
//! commits and trees again for every file. Here one walk serves them all:
//! commits are popped newest first (by committer time, as git and gix do),
//! each commit is diffed once against each parent that some file still
//! needs, and every file whose unblamed lines suspect that commit is
//! advanced with gix-blame's own hunk logic ([`super::hunks`]). The result
//! is gix's for each file (checked on every source file of four real
//! repositories), with two deliberate differences, both git's behaviour:
//! - a file that appears in a commit is looked for among the files that
//!   commit deleted only (git's `single_follow` rename search), where gix
//!   first pairs all added and deleted files of the commit, which costs
//!   seconds per file on commits that move thousands of files;
//! - a root commit is blamed for whatever still suspects it; gix only does
//!   so when nothing else is queued, and otherwise loses those lines.

use std::collections::{BinaryHeap, HashMap};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::FindExt;
use smallvec::SmallVec;

use super::hunks::{
    BlameEntry, UnblamedHunk, blob_changes_from_data, coalesce_blame_entries, process_changes,
};
use crate::SourceError;
use crate::error::git_err;

/// One file being blamed.
pub(super) struct FileState {
    /// The path in the blamed commit.
    path: BString,
    hunks: Vec<UnblamedHunk>,
    out: Vec<BlameEntry>,
    /// Time spent on this file alone (blob diffs, rename searches).
    spent: Duration,
    /// Set when the file's budget ran out: its remaining lines went to
    /// the oldest commits reached.
    pub(super) truncated: bool,
    /// Set when reading its history failed.
    pub(super) error: Option<SourceError>,
    /// Set when an older version's blob is missing (a partial clone, a
    /// damaged mirror): the lines it would have explained went to the
    /// commit that replaced it.
    pub(super) missing_objects: bool,
    /// Set when some lines came from a known blame that was not exact.
    pub(super) inherited_approximation: bool,
}

impl FileState {
    /// A file of `lines` lines at `commit`.
    pub(super) fn new(path: &str, lines: u32, commit: ObjectId) -> FileState {
        let hunks = if lines == 0 {
            Vec::new()
        } else {
            vec![UnblamedHunk::new(0..lines, commit)]
        };
        FileState {
            path: path.into(),
            hunks,
            out: Vec::new(),
            spent: Duration::ZERO,
            truncated: false,
            error: None,
            missing_objects: false,
            inherited_approximation: false,
        }
    }

    /// `(first line, line count, commit)` per range, 0-based, in file order.
    pub(super) fn finish(self) -> Vec<(u32, u32, ObjectId)> {
        let mut out = self.out;
        out.sort_by_key(|e| e.start_in_blamed_file);
        coalesce_blame_entries(out)
            .into_iter()
            .map(|e| (e.start_in_blamed_file, e.len.get(), e.commit_id))
            .collect()
    }

    /// Give every unblamed line to the first commit it suspects.
    fn give_up(&mut self) {
        for hunk in self.hunks.drain(..) {
            if let Some(&(commit, _)) = hunk.suspects.first()
                && let Some(e) = BlameEntry::from_unblamed_hunk(&hunk, commit)
            {
                self.out.push(e);
            }
        }
        self.truncated = true;
    }

    /// The file's path in `commit`, if some of its lines suspect it.
    fn path_ref(&self, commit: &ObjectId) -> Option<&BStr> {
        let hunk = self.hunks.iter().find(|h| h.has_suspect(commit))?;
        Some(
            hunk.source_file_name
                .as_ref()
                .unwrap_or(&self.path)
                .as_bstr(),
        )
    }

    /// Time spent on this file's own work.
    pub(super) fn spent(&self) -> Duration {
        self.spent
    }

    fn suspects(&self, commit: &ObjectId) -> bool {
        self.hunks.iter().any(|h| h.has_suspect(commit))
    }

    /// Attribute every hunk that suspects `commit` as `known` says (the
    /// blame of this file at `commit`, which covers all its lines there).
    fn take_known(&mut self, commit: ObjectId, known: &KnownFile) {
        let mut rest = Vec::with_capacity(self.hunks.len());
        for hunk in self.hunks.drain(..) {
            let Some(range) = hunk.get_range(&commit).cloned() else {
                rest.push(hunk);
                continue;
            };
            let first = known
                .ranges
                .partition_point(|&(start, len, _)| start + len <= range.start);
            for (i, &(start, len, c)) in known.ranges.iter().enumerate().skip(first) {
                if start >= range.end {
                    break;
                }
                let from = start.max(range.start);
                let to = (start + len).min(range.end);
                let Some(len) = NonZeroU32::new(to - from) else {
                    continue;
                };
                self.out.push(BlameEntry {
                    start_in_blamed_file: hunk.range_in_blamed_file.start + (from - range.start),
                    // The line in `c`'s own version is not known: a stand-in
                    // that keeps lines of one known range adjacent and
                    // different known ranges apart when coalesced.
                    start_in_source_file: from + i as u32,
                    len,
                    commit_id: c,
                });
            }
        }
        self.hunks = rest;
        self.inherited_approximation |= known.approximate;
    }

    /// Blame `commit` for every hunk that suspects it.
    fn blame_on(&mut self, commit: ObjectId) {
        let mut rest = Vec::with_capacity(self.hunks.len());
        for hunk in self.hunks.drain(..) {
            match BlameEntry::from_unblamed_hunk(&hunk, commit) {
                Some(e) => self.out.push(e),
                None => rest.push(hunk),
            }
        }
        self.hunks = rest;
    }
}

/// A [`super::KnownBlame`] checked and parsed for the walk.
pub(super) struct Known {
    commit: ObjectId,
    files: HashMap<BString, KnownFile>,
}

/// One file of [`Known`]: 0-based `(first line, lines, commit)` ranges that
/// cover lines `0..lines` in order.
pub(super) struct KnownFile {
    blob: ObjectId,
    ranges: Vec<(u32, u32, ObjectId)>,
    lines: u32,
    approximate: bool,
}

impl Known {
    /// `None` when the commit is not a sha; files whose ranges do not
    /// cover their lines one after another are left out.
    pub(super) fn new(known: &super::KnownBlame) -> Option<Known> {
        let commit = ObjectId::from_hex(known.commit.as_bytes()).ok()?;
        let files = known
            .files
            .iter()
            .filter_map(|(path, f)| Some((BString::from(path.as_str()), KnownFile::new(f)?)))
            .collect();
        Some(Known { commit, files })
    }
}

impl KnownFile {
    fn new(f: &super::KnownFile) -> Option<KnownFile> {
        let blob = ObjectId::from_hex(f.blob.as_bytes()).ok()?;
        let mut ranges = Vec::with_capacity(f.ranges.len());
        let mut next = 1u32;
        for r in &f.ranges {
            if r.start_line != next || r.end_line < r.start_line {
                return None;
            }
            let commit = ObjectId::from_hex(r.commit.as_bytes()).ok()?;
            ranges.push((r.start_line - 1, r.lines(), commit));
            next = r.end_line + 1;
        }
        Some(KnownFile {
            blob,
            ranges,
            lines: next - 1,
            approximate: f.approximate,
        })
    }
}

struct CommitData {
    tree: ObjectId,
    parents: SmallVec<[ObjectId; 2]>,
    time: i64,
}

/// A changed entry between a parent and a commit (blobs and links only).
#[derive(Clone, Copy)]
enum Delta {
    Added(ObjectId),
    /// Deleted, with whether it was a blob (a rename candidate).
    Deleted(ObjectId, bool),
    Modified {
        old: ObjectId,
        new: ObjectId,
    },
}

/// A tree entry: name, mode, id.
type Entry = (BString, gix::objs::tree::EntryMode, ObjectId);

/// Is there a path in `paths` (sorted) below the directory `dir` (ending in `/`)?
fn leads_to(paths: &[BString], dir: &BStr) -> bool {
    let at = paths.partition_point(|p| p.as_bstr() < dir);
    paths.get(at).is_some_and(|p| p.starts_with(dir))
}

/// Files at most this many at one commit get tree diffs restricted to
/// their paths; more, and one full diff is cheaper than the bookkeeping.
const RESTRICT_BELOW: usize = 32;

/// The diffs of one commit against its parents, made on first use.
struct Diffs {
    /// The paths that restricted diffs cover (sorted), or `None` for full
    /// diffs.
    only: Option<Vec<BString>>,
    restricted: Vec<Option<HashMap<BString, Delta>>>,
    full: Vec<Option<HashMap<BString, Delta>>>,
}

impl Diffs {
    fn new(parents: usize, only: Option<Vec<BString>>) -> Diffs {
        Diffs {
            only,
            restricted: vec![None; parents],
            full: vec![None; parents],
        }
    }
}

/// The walk's reusable state.
pub(super) struct Walker<'r> {
    repo: &'r gix::Repository,
    /// Blame known at one commit: walks end there.
    pub(super) known: Option<&'r Known>,
    algorithm: gix::diff::blob::Algorithm,
    resource_cache: gix::diff::blob::Platform,
    commits: HashMap<ObjectId, CommitData>,
    diff_state: gix::diff::tree::State,
    lhs: Vec<u8>,
    rhs: Vec<u8>,
    blob_old: Vec<u8>,
    blob_new: Vec<u8>,
}

impl<'r> Walker<'r> {
    pub(super) fn new(repo: &'r gix::Repository) -> Result<Self, SourceError> {
        Ok(Walker {
            repo,
            known: None,
            algorithm: repo.diff_algorithm().map_err(git_err)?,
            resource_cache: repo.diff_resource_cache_for_tree_diff().map_err(git_err)?,
            commits: HashMap::new(),
            diff_state: Default::default(),
            lhs: Vec::new(),
            rhs: Vec::new(),
            blob_old: Vec::new(),
            blob_new: Vec::new(),
        })
    }

    /// Blame `files` (all of commit `start`). A file whose own work passes
    /// `file_budget` is given up on; so is every file once `deadline`
    /// passes.
    pub(super) fn run(
        &mut self,
        start: ObjectId,
        files: &mut [FileState],
        file_budget: Option<Duration>,
        deadline: Option<Instant>,
    ) -> Result<(), SourceError> {
        let mut queue: BinaryHeap<(i64, ObjectId)> = BinaryHeap::new();
        let mut interest: HashMap<ObjectId, Vec<usize>> = HashMap::new();
        let waiting: Vec<usize> = (0..files.len())
            .filter(|&i| !files[i].hunks.is_empty())
            .collect();
        if waiting.is_empty() {
            return Ok(());
        }
        interest.insert(start, waiting);
        queue.push((self.commit(start)?.time, start));

        while let Some((_, commit)) = queue.pop() {
            let Some(mut todo) = interest.remove(&commit) else {
                continue;
            };
            if deadline.is_some_and(|d| Instant::now() > d) {
                break;
            }
            todo.sort_unstable();
            todo.dedup();
            if let Some(known) = self.known.filter(|k| k.commit == commit) {
                todo.retain(|&f| !self.take_known(&mut files[f], commit, known));
                if todo.is_empty() {
                    continue;
                }
            }
            let parents = self.commit(commit)?.parents.clone();
            if parents.is_empty() {
                // A root commit introduced whatever is still unblamed.
                for &f in &todo {
                    files[f].blame_on(commit);
                }
                continue;
            }
            let only = (todo.len() < RESTRICT_BELOW).then(|| {
                let mut paths: Vec<BString> = todo
                    .iter()
                    .filter_map(|&f| files[f].path_ref(&commit).map(BStr::to_owned))
                    .collect();
                paths.sort();
                paths.dedup();
                paths
            });
            let mut diffs = Diffs::new(parents.len(), only);
            for &f in &todo {
                let file = &mut files[f];
                let heirs = match self.advance(file, commit, &parents, &mut diffs) {
                    Ok(heirs) => heirs,
                    Err(e) => {
                        // One file's failure is its own.
                        file.hunks.clear();
                        file.error = Some(e);
                        continue;
                    }
                };
                if file_budget.is_some_and(|b| file.spent > b) && !file.hunks.is_empty() {
                    file.give_up();
                    continue;
                }
                for p in heirs {
                    let list = interest.entry(p).or_default();
                    if list.is_empty() {
                        let time = self.commit(p)?.time;
                        queue.push((time, p));
                    }
                    list.push(f);
                }
            }
        }
        for f in files.iter_mut().filter(|f| !f.hunks.is_empty()) {
            f.give_up();
        }
        Ok(())
    }

    /// Attribute `file`'s lines that suspect `commit` from the known blame
    /// there, if it has the file at this path and of this blob. False when
    /// it does not (the file goes on walking).
    fn take_known(&mut self, file: &mut FileState, commit: ObjectId, known: &Known) -> bool {
        let Some(path) = file.path_ref(&commit) else {
            return false;
        };
        let Some(k) = known.files.get(path) else {
            return false;
        };
        // every hunk that suspects `commit` looks for the same path, within its lines
        let one_path = file
            .hunks
            .iter()
            .filter(|h| h.has_suspect(&commit))
            .all(|h| {
                h.source_file_name.as_ref().unwrap_or(&file.path).as_bstr() == path
                    && h.get_range(&commit).is_some_and(|r| r.end <= k.lines)
            });
        if !one_path || self.blob_at(commit, path).ok().flatten() != Some(k.blob) {
            return false;
        }
        file.take_known(commit, k);
        true
    }

    /// The blob at `path` in `commit`'s tree.
    fn blob_at(&mut self, commit: ObjectId, path: &BStr) -> Result<Option<ObjectId>, SourceError> {
        let tree = self.commit(commit)?.tree;
        let Ok(path) = path.to_str() else {
            return Ok(None);
        };
        let tree = self.repo.find_tree(tree).map_err(git_err)?;
        let entry = tree.lookup_entry_by_path(path).map_err(git_err)?;
        Ok(entry.filter(|e| !e.mode().is_tree()).map(|e| e.object_id()))
    }

    /// Pass `file`'s hunks that suspect `commit` on to its parents, or
    /// blame `commit` for them: gix-blame's step, for one file. Returns
    /// the parents that now hold some of its hunks. The time spent on
    /// diffs and rename searches is charged to the file.
    fn advance(
        &mut self,
        file: &mut FileState,
        commit: ObjectId,
        parents: &[ObjectId],
        diffs: &mut Diffs,
    ) -> Result<SmallVec<[ObjectId; 2]>, SourceError> {
        // Unchanged against a parent: that parent alone inherits the blame.
        let mut unchanged_in = None;
        {
            let Some(path) = file.path_ref(&commit) else {
                return Ok(SmallVec::new());
            };
            for (i, &parent) in parents.iter().enumerate() {
                let same = match self.delta(commit, parents, i, diffs)?.get(path) {
                    None => true,
                    Some(Delta::Modified { old, new }) => old == new,
                    Some(_) => false,
                };
                if same {
                    unchanged_in = Some(parent);
                    break;
                }
            }
        }
        if let Some(parent) = unchanged_in {
            for hunk in &mut file.hunks {
                hunk.pass_blame(commit, parent);
            }
            return Ok(SmallVec::from_slice(&[parent]));
        }
        let path = file.path_ref(&commit).expect("checked above").to_owned();

        let started = Instant::now();
        let heirs = self.advance_changed(file, commit, parents, diffs, path.as_ref());
        file.spent += started.elapsed();
        heirs
    }

    /// [`Walker::advance`] for a file `commit` changed.
    fn advance_changed(
        &mut self,
        file: &mut FileState,
        commit: ObjectId,
        parents: &[ObjectId],
        diffs: &mut Diffs,
        path: &BStr,
    ) -> Result<SmallVec<[ObjectId; 2]>, SourceError> {
        let more_than_one_parent = parents.len() > 1;
        for (i, &parent) in parents.iter().enumerate() {
            let delta = self.delta(commit, parents, i, diffs)?.get(path).copied();
            match delta {
                None | Some(Delta::Deleted(..)) => {
                    // Not reached: the file is in `commit` and differs.
                    for hunk in &mut file.hunks {
                        hunk.clone_blame(commit, parent);
                    }
                }
                Some(Delta::Modified { old, new }) => match self.blob_changes(old, new) {
                    Ok(changes) => {
                        let hunks = std::mem::take(&mut file.hunks);
                        file.hunks = process_changes(hunks, changes, commit, parent);
                    }
                    Err(_) if !self.repo.has_object(old) => {
                        // The history stops where the objects stop.
                        file.missing_objects = true;
                        file.blame_on(commit);
                        if file.hunks.is_empty() {
                            return Ok(SmallVec::new());
                        }
                    }
                    Err(e) => return Err(e),
                },
                Some(Delta::Added(new)) => {
                    let deleted: Vec<(BString, ObjectId)> = self
                        .full_delta(commit, parents, i, diffs)?
                        .iter()
                        .filter_map(|(p, d)| match d {
                            Delta::Deleted(id, true) => Some((p.clone(), *id)),
                            _ => None,
                        })
                        .collect();
                    // A failed search (a missing blob in a partial clone)
                    // is no rename.
                    let rename = self
                        .find_rename(path.as_bstr(), new, &deleted)
                        .unwrap_or(None);
                    match rename {
                        Some((source_path, source_id)) => {
                            let changes = self.blob_changes(source_id, new)?;
                            let hunks = std::mem::take(&mut file.hunks);
                            file.hunks = process_changes(hunks, changes, commit, parent);
                            for hunk in &mut file.hunks {
                                if hunk.has_suspect(&parent) {
                                    hunk.source_file_name = Some(source_path.clone());
                                }
                            }
                        }
                        None if more_than_one_parent => {
                            // Added against this parent: it comes from another.
                        }
                        None => {
                            file.blame_on(commit);
                            if file.hunks.is_empty() {
                                return Ok(SmallVec::new());
                            }
                        }
                    }
                }
            }
        }

        // Hunks no parent took are `commit`'s; the others forget it.
        let mut rest = Vec::with_capacity(file.hunks.len());
        for mut hunk in file.hunks.drain(..) {
            if hunk.suspects.len() == 1
                && let Some(e) = BlameEntry::from_unblamed_hunk(&hunk, commit)
            {
                file.out.push(e);
                continue;
            }
            hunk.remove_blame(commit);
            rest.push(hunk);
        }
        file.hunks = rest;
        Ok(parents
            .iter()
            .copied()
            .filter(|p| file.suspects(p))
            .collect())
    }

    /// The changes between parent `i` and `commit` (at least for the
    /// paths of this step), diffed on first use.
    fn delta<'d>(
        &mut self,
        commit: ObjectId,
        parents: &[ObjectId],
        i: usize,
        diffs: &'d mut Diffs,
    ) -> Result<&'d HashMap<BString, Delta>, SourceError> {
        let Some(only) = &diffs.only else {
            return self.full_delta(commit, parents, i, diffs);
        };
        if diffs.restricted[i].is_none() {
            let new_tree = self.commit(commit)?.tree;
            let old_tree = self.commit(parents[i])?.tree;
            let mut out = HashMap::new();
            let mut prefix = BString::default();
            self.diff_level(Some(old_tree), Some(new_tree), &mut prefix, only, &mut out)?;
            diffs.restricted[i] = Some(out);
        }
        Ok(diffs.restricted[i].as_ref().expect("just set"))
    }

    /// All the changes between parent `i` and `commit`.
    fn full_delta<'d>(
        &mut self,
        commit: ObjectId,
        parents: &[ObjectId],
        i: usize,
        diffs: &'d mut Diffs,
    ) -> Result<&'d HashMap<BString, Delta>, SourceError> {
        if diffs.full[i].is_none() {
            let new_tree = self.commit(commit)?.tree;
            let old_tree = self.commit(parents[i])?.tree;
            diffs.full[i] = Some(self.diff_trees(old_tree, new_tree)?);
        }
        Ok(diffs.full[i].as_ref().expect("just set"))
    }

    /// Diff two trees (either may be absent) below `prefix`, entering only
    /// directories on the way to `paths` and recording only `paths`.
    fn diff_level(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        prefix: &mut BString,
        paths: &[BString],
        out: &mut HashMap<BString, Delta>,
    ) -> Result<(), SourceError> {
        let (a, b) = (self.entries(old)?, self.entries(new)?);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let (ea, eb) = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    i += 1;
                    j += 1;
                    (Some(x), Some(y))
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    i += 1;
                    (Some(x), None)
                }
                (Some(x), None) => {
                    i += 1;
                    (Some(x), None)
                }
                (_, y) => {
                    j += 1;
                    (None, y)
                }
            };
            if let (Some(x), Some(y)) = (ea, eb)
                && x.1 == y.1
                && x.2 == y.2
            {
                continue;
            }
            let name = &ea.or(eb).expect("one side").0;
            let len = prefix.len();
            prefix.extend_from_slice(name);
            fn tree(e: Option<&Entry>) -> Option<ObjectId> {
                e.filter(|e| e.1.is_tree()).map(|e| e.2)
            }
            fn blob(e: Option<&Entry>) -> Option<&Entry> {
                e.filter(|e| !e.1.is_tree())
            }
            let (ta, tb) = (tree(ea), tree(eb));
            if ta.is_some() || tb.is_some() {
                prefix.push(b'/');
                if leads_to(paths, prefix.as_bstr()) {
                    self.diff_level(ta, tb, prefix, paths, out)?;
                }
                prefix.truncate(len + name.len());
            }
            let (ba, bb) = (blob(ea), blob(eb));
            if (ba.is_some() || bb.is_some()) && paths.binary_search(prefix).is_ok() {
                let delta = match (ba, bb) {
                    (None, Some(n)) => Delta::Added(n.2),
                    (Some(o), None) => Delta::Deleted(o.2, o.1.is_blob()),
                    (Some(o), Some(n)) => Delta::Modified { old: o.2, new: n.2 },
                    (None, None) => unreachable!("checked above"),
                };
                out.insert(prefix.clone(), delta);
            }
            prefix.truncate(len);
        }
        Ok(())
    }

    /// A tree's entries sorted by name (absent: none).
    fn entries(&mut self, tree: Option<ObjectId>) -> Result<Vec<Entry>, SourceError> {
        let Some(id) = tree else {
            return Ok(Vec::new());
        };
        let iter = self
            .repo
            .objects
            .find_tree_iter(&id, &mut self.lhs)
            .map_err(git_err)?;
        let mut out = Vec::new();
        for e in iter {
            let e = e.map_err(git_err)?;
            out.push((e.filename.to_owned(), e.mode, e.oid.to_owned()));
        }
        out.sort_by(|x, y| x.0.cmp(&y.0));
        Ok(out)
    }

    fn diff_trees(
        &mut self,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<HashMap<BString, Delta>, SourceError> {
        use gix::diff::tree::recorder::Change;
        let objects = &self.repo.objects;
        let lhs = objects
            .find_tree_iter(&old, &mut self.lhs)
            .map_err(git_err)?;
        let rhs = objects
            .find_tree_iter(&new, &mut self.rhs)
            .map_err(git_err)?;
        let mut recorder = gix::diff::tree::Recorder::default();
        gix::diff::tree(lhs, rhs, &mut self.diff_state, objects, &mut recorder).map_err(git_err)?;
        let mut out = HashMap::with_capacity(recorder.records.len());
        for change in recorder.records {
            match change {
                Change::Addition {
                    entry_mode,
                    oid,
                    path,
                    ..
                } if !entry_mode.is_tree() => {
                    out.insert(path, Delta::Added(oid));
                }
                Change::Deletion {
                    entry_mode,
                    oid,
                    path,
                    ..
                } if !entry_mode.is_tree() => {
                    out.insert(path, Delta::Deleted(oid, entry_mode.is_blob()));
                }
                Change::Modification {
                    previous_entry_mode,
                    previous_oid,
                    entry_mode,
                    oid,
                    path,
                } => {
                    // A tree replaced by a file (or back) is an addition
                    // (or deletion) of the file.
                    let delta = match (previous_entry_mode.is_tree(), entry_mode.is_tree()) {
                        (false, false) => Delta::Modified {
                            old: previous_oid,
                            new: oid,
                        },
                        (true, false) => Delta::Added(oid),
                        (false, true) => {
                            Delta::Deleted(previous_oid, previous_entry_mode.is_blob())
                        }
                        (true, true) => continue,
                    };
                    out.insert(path, delta);
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The deleted file `path` (now `id`) was renamed from, if any: an
    /// identical one first, else the most similar one of at least 50%
    /// (gix's rename tracker, given this one destination).
    fn find_rename(
        &mut self,
        path: &BStr,
        id: ObjectId,
        deleted: &[(BString, ObjectId)],
    ) -> Result<Option<(BString, ObjectId)>, SourceError> {
        use gix::diff::tree::visit::Change;
        if deleted.is_empty() {
            return Ok(None);
        }
        let mode = gix::objs::tree::EntryKind::Blob.into();
        let mut tracker = gix::diff::rewrites::Tracker::new(gix::diff::Rewrites::default());
        tracker.try_push_change(
            Change::Addition {
                entry_mode: mode,
                oid: id,
                relation: None,
            },
            path,
        );
        for (p, oid) in deleted {
            tracker.try_push_change(
                Change::Deletion {
                    entry_mode: mode,
                    oid: *oid,
                    relation: None,
                },
                p.as_bstr(),
            );
        }
        let mut found = None;
        tracker
            .emit(
                |dest, source| {
                    if let Some(source) = source
                        && dest.location == path
                    {
                        found = Some((source.location.to_owned(), source.id));
                        return std::ops::ControlFlow::Break(());
                    }
                    std::ops::ControlFlow::Continue(())
                },
                &mut self.resource_cache,
                &self.repo.objects,
                |_push| Ok::<_, std::convert::Infallible>(()),
            )
            .map_err(git_err)?;
        self.resource_cache.clear_resource_cache_keep_allocation();
        Ok(found)
    }

    /// The line changes from blob `old` to blob `new`.
    fn blob_changes(
        &mut self,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<Vec<super::hunks::Change>, SourceError> {
        let objects = &self.repo.objects;
        let old = objects
            .find_blob(&old, &mut self.blob_old)
            .map_err(git_err)?
            .data;
        let new = objects
            .find_blob(&new, &mut self.blob_new)
            .map_err(git_err)?
            .data;
        Ok(blob_changes_from_data(old, new, self.algorithm))
    }

    /// A commit's tree, parents and time, read once. Parents missing from
    /// the repository (the boundary of a shallow clone) are left out, so
    /// the boundary is blamed for what is older, as git does.
    fn commit(&mut self, id: ObjectId) -> Result<&CommitData, SourceError> {
        use gix::objs::Exists;
        if !self.commits.contains_key(&id) {
            let c = self.repo.find_commit(id).map_err(git_err)?;
            let decoded = c.decode().map_err(git_err)?;
            let data = CommitData {
                tree: decoded.tree(),
                parents: decoded
                    .parents()
                    .filter(|p| self.repo.objects.exists(p))
                    .collect(),
                time: decoded.committer().map(|s| s.seconds()).unwrap_or_default(),
            };
            self.commits.insert(id, data);
        }
        Ok(&self.commits[&id])
    }
}
