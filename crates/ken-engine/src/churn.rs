//! How often each file changed, and how often in a fix: priors of file
//! fusion that the learner (tune.rs) may weigh. Files that changed often,
//! and fixes above all, are where the next change tends to land.

use std::collections::HashMap;
use std::sync::Arc;

use ken_store::{CommitRecord, HistoryStore, IndexState};

use crate::Result;

/// Each file's change times, all changes and fixes apart, sorted.
#[derive(Debug, Default, Clone)]
pub struct FileChurn {
    changes: HashMap<String, Vec<i64>>,
    fixes: HashMap<String, Vec<i64>>,
    /// The time "now" is for recent changes when no time is given: the
    /// newest commit read.
    newest: i64,
}

/// Changes within this many seconds before the question count as recent.
pub const RECENT_SECS: i64 = 365 * 86_400;

/// What history says of one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub changes: u32,
    pub fixes: u32,
    /// Changes in the year before.
    pub recent: u32,
}

impl FileChurn {
    /// The history of `paths` as the store holds it, up to `until` (the
    /// indexed commit's time: a store that moved back may hold newer ones).
    pub fn load(
        store: &dyn HistoryStore,
        paths: &[String],
        until: Option<i64>,
    ) -> Result<FileChurn> {
        let commits = store.all_commits()?;
        Ok(FileChurn::from_history(
            &commits,
            store.commits_touching(paths)?,
            until,
        ))
    }

    /// The same from commits already read and the (sha, path) pairs of the
    /// commits that touched the files.
    pub fn from_history(
        commits: &[CommitRecord],
        touching: Vec<(String, String)>,
        until: Option<i64>,
    ) -> FileChurn {
        let commits: HashMap<&str, (i64, bool)> = commits
            .iter()
            .filter(|c| c.parents.len() <= 1 && until.is_none_or(|t| c.committer_time <= t))
            .map(|c| {
                let fix = ken_report::is_fix_message(&c.message);
                (c.sha.as_str(), (c.committer_time, fix))
            })
            .collect();
        let mut out = FileChurn::default();
        for (sha, path) in touching {
            let Some(&(time, fix)) = commits.get(sha.as_str()) else {
                continue;
            };
            out.newest = out.newest.max(time);
            out.changes.entry(path.clone()).or_default().push(time);
            if fix {
                out.fixes.entry(path).or_default().push(time);
            }
        }
        for v in out.changes.values_mut().chain(out.fixes.values_mut()) {
            v.sort_unstable();
        }
        out
    }

    /// What history says of `path` before `before` (None: all of it, and
    /// "recent" counted back from the newest commit).
    pub fn counts(&self, path: &str, before: Option<i64>) -> Counts {
        let count = |m: &HashMap<String, Vec<i64>>, t: Option<i64>| {
            m.get(path).map_or(0, |v| match t {
                None => v.len(),
                Some(t) => v.partition_point(|x| *x < t),
            }) as u32
        };
        let changes = count(&self.changes, before);
        let from = before.unwrap_or(self.newest + 1) - RECENT_SECS;
        Counts {
            changes,
            fixes: count(&self.fixes, before),
            recent: changes - count(&self.changes, Some(from)).min(changes),
        }
    }

    /// About how many bytes this holds (for bounding what is kept).
    pub fn bytes(&self) -> usize {
        self.changes
            .iter()
            .chain(self.fixes.iter())
            .map(|(path, times)| path.len() + times.len() * 8 + 64)
            .sum()
    }

    #[cfg(test)]
    pub(crate) fn from_parts(changes: &[(&str, i64, bool)]) -> FileChurn {
        let mut out = FileChurn::default();
        for (path, time, fix) in changes {
            out.newest = out.newest.max(*time);
            out.changes.entry(path.to_string()).or_default().push(*time);
            if *fix {
                out.fixes.entry(path.to_string()).or_default().push(*time);
            }
        }
        for v in out.changes.values_mut().chain(out.fixes.values_mut()) {
            v.sort_unstable();
        }
        out
    }
}

/// What a repository's history was when its churn was read: the indexed
/// commit, when a run last finished, how far blame and history got. A
/// churn read under one stamp is the churn of every later opening with the
/// same stamp; a run that has not finished has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    commit: Option<String>,
    indexed_at: Option<i64>,
    blamed_at: Option<String>,
    commits: (u64, Option<i64>),
}

impl Stamp {
    /// The stamp of an index in `state` (None while a run is pending).
    pub fn of(state: &IndexState, store: &dyn HistoryStore) -> Result<Option<Stamp>> {
        if state.pending.is_some() {
            return Ok(None);
        }
        Ok(Some(Stamp {
            commit: state.commit.clone(),
            indexed_at: state.indexed_at,
            blamed_at: state.blamed_at.clone(),
            commits: store.commit_stats()?,
        }))
    }
}

/// Churns of repositories closed since, kept for when they open again
/// (reading one takes every commit: 10–50 ms for a repository of 5,000 to
/// 20,000 commits), the least recently kept dropped first past a budget of
/// bytes.
#[derive(Debug, Default)]
pub struct Shelf {
    kept: HashMap<String, (Stamp, Arc<FileChurn>, usize, u64)>,
    bytes: usize,
    tick: u64,
}

/// Bytes of churn kept for closed repositories.
pub const SHELF_BYTES: usize = 64 << 20;

impl Shelf {
    /// Keep `churn` of the repository `key` read under `stamp`.
    pub fn put(&mut self, key: &str, stamp: Stamp, churn: Arc<FileChurn>) {
        let size = churn.bytes();
        if size > SHELF_BYTES / 4 {
            return;
        }
        self.tick += 1;
        if let Some((_, _, old, _)) = self
            .kept
            .insert(key.to_string(), (stamp, churn, size, self.tick))
        {
            self.bytes -= old;
        }
        self.bytes += size;
        while self.bytes > SHELF_BYTES {
            let Some(oldest) = self
                .kept
                .iter()
                .min_by_key(|(_, (_, _, _, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((_, _, size, _)) = self.kept.remove(&oldest) {
                self.bytes -= size;
            }
        }
    }

    /// The churn kept for `key`, when it was read under `stamp` (taken
    /// off: the repository that asks holds it while open).
    pub fn take(&mut self, key: &str, stamp: &Stamp) -> Option<Arc<FileChurn>> {
        let (kept, churn, size, _) = self.kept.remove(key)?;
        self.bytes -= size;
        (kept == *stamp).then_some(churn)
    }

    /// Is anything kept for `key`?
    pub fn holds(&self, key: &str) -> bool {
        self.kept.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_time() {
        let y = RECENT_SECS;
        let c = FileChurn::from_parts(&[
            ("a", 10, false),
            ("a", 20 + y, true),
            ("a", 30 + y, true),
            ("b", 5, false),
        ]);
        let n = |changes, fixes, recent| Counts {
            changes,
            fixes,
            recent,
        };
        // recent: within a year of the newest commit (30 + y)
        assert_eq!(c.counts("a", None), n(3, 2, 2));
        assert_eq!(c.counts("a", Some(20 + y)), n(1, 0, 0));
        assert_eq!(c.counts("a", Some(21 + y)), n(2, 1, 1));
        assert_eq!(c.counts("a", Some(11 + y / 2)), n(1, 0, 1));
        assert_eq!(c.counts("b", None), n(1, 0, 0));
        assert_eq!(c.counts("nothing", None), n(0, 0, 0));
    }

    fn stamp(commit: &str) -> Stamp {
        Stamp {
            commit: Some(commit.into()),
            indexed_at: Some(1),
            blamed_at: None,
            commits: (3, Some(30)),
        }
    }

    #[test]
    fn the_shelf_gives_back_only_under_the_same_stamp() {
        let churn = Arc::new(FileChurn::from_parts(&[("a.py", 10, true)]));
        let mut shelf = Shelf::default();
        shelf.put("web", stamp("c1"), churn.clone());
        assert!(shelf.holds("web"));
        assert!(shelf.take("web", &stamp("c2")).is_none(), "the index moved");
        assert!(!shelf.holds("web"), "a stale churn is dropped");
        shelf.put("web", stamp("c1"), churn.clone());
        assert!(Arc::ptr_eq(
            &shelf.take("web", &stamp("c1")).unwrap(),
            &churn
        ));
        assert_eq!(shelf.bytes, 0);
    }

    #[test]
    fn the_shelf_drops_the_oldest_past_its_budget() {
        let times: Vec<(&str, i64, bool)> = (0..200_000).map(|t| ("big.py", t, false)).collect();
        let big = Arc::new(FileChurn::from_parts(&times));
        let size = big.bytes();
        assert!(size > 1_000_000 && size < SHELF_BYTES / 4);
        let mut shelf = Shelf::default();
        let fit = SHELF_BYTES / size;
        for i in 0..=fit {
            shelf.put(&format!("r{i}"), stamp("c"), big.clone());
        }
        assert!(shelf.bytes <= SHELF_BYTES);
        assert!(!shelf.holds("r0"), "the first kept went first");
        assert!(shelf.holds(&format!("r{fit}")));
        // the same key again replaces, counted once
        let before = shelf.bytes;
        shelf.put(&format!("r{fit}"), stamp("c"), big.clone());
        assert_eq!(shelf.bytes, before);
        // one churn past a quarter of the budget is not kept at all
        let times: Vec<(&str, i64, bool)> = (0..(SHELF_BYTES / 4 / 8) as i64 + 1)
            .map(|t| ("huge.py", t, false))
            .collect();
        shelf.put("huge", stamp("c"), Arc::new(FileChurn::from_parts(&times)));
        assert!(!shelf.holds("huge"));
    }
}
