//! How often each file changed, and how often in a fix: priors of file
//! fusion that the learner (tune.rs) may weigh. Files that changed often,
//! and fixes above all, are where the next change tends to land.

use std::collections::HashMap;

use ken_store::{CommitRecord, HistoryStore};

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
}
