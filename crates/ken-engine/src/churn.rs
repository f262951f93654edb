//! How often each file changed, and how often in a fix: priors of file
//! fusion that the learner (tune.rs) may weigh. Files that changed often,
//! and fixes above all, are where the next change tends to land.

use std::collections::HashMap;

use ken_store::Store;

use crate::Result;

/// Each file's change times, all changes and fixes apart, sorted.
#[derive(Debug, Default, Clone)]
pub struct FileChurn {
    changes: HashMap<String, Vec<i64>>,
    fixes: HashMap<String, Vec<i64>>,
}

impl FileChurn {
    /// The history of `paths` as the store holds it, up to `until` (the
    /// indexed commit's time: a store that moved back may hold newer ones).
    pub fn load(store: &dyn Store, paths: &[String], until: Option<i64>) -> Result<FileChurn> {
        let commits: HashMap<String, (i64, bool)> = store
            .all_commits()?
            .into_iter()
            .filter(|c| c.parents.len() <= 1 && until.is_none_or(|t| c.committer_time <= t))
            .map(|c| {
                let fix = ken_report::is_fix_message(&c.message);
                (c.sha, (c.committer_time, fix))
            })
            .collect();
        let mut out = FileChurn::default();
        for (sha, path) in store.commits_touching(paths)? {
            let Some(&(time, fix)) = commits.get(&sha) else {
                continue;
            };
            out.changes.entry(path.clone()).or_default().push(time);
            if fix {
                out.fixes.entry(path).or_default().push(time);
            }
        }
        for v in out.changes.values_mut().chain(out.fixes.values_mut()) {
            v.sort_unstable();
        }
        Ok(out)
    }

    /// Changes and fixes of `path` before `before` (None: all of them).
    pub fn counts(&self, path: &str, before: Option<i64>) -> (u32, u32) {
        let count = |m: &HashMap<String, Vec<i64>>| {
            m.get(path).map_or(0, |v| match before {
                None => v.len(),
                Some(t) => v.partition_point(|x| *x < t),
            }) as u32
        };
        (count(&self.changes), count(&self.fixes))
    }

    #[cfg(test)]
    pub(crate) fn from_parts(changes: &[(&str, i64, bool)]) -> FileChurn {
        let mut out = FileChurn::default();
        for (path, time, fix) in changes {
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
        let c = FileChurn::from_parts(&[
            ("a", 10, false),
            ("a", 20, true),
            ("a", 30, true),
            ("b", 5, false),
        ]);
        assert_eq!(c.counts("a", None), (3, 2));
        assert_eq!(c.counts("a", Some(20)), (1, 0));
        assert_eq!(c.counts("a", Some(21)), (2, 1));
        assert_eq!(c.counts("b", None), (1, 0));
        assert_eq!(c.counts("nothing", None), (0, 0));
    }
}
