//! Hot files: the period's churn × its fixes × how often a change was
//! followed by a fix to the same lines.
//!
//! The last factor follows each line through the period's diffs, oldest
//! commit first: a commit's hunks say which lines of the parent it
//! replaced; a replaced line written earlier in the period by another
//! commit means that change was followed by a change to the same lines,
//! and when the later commit is a fix, by a fix. Lines older than the
//! period are not tracked (their origin is not in the period).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{Ctx, round2};
use crate::input::HunkIn;
use crate::model::HotFile;

/// Lines `start..start + len` (1-based) were written by commit `origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seg {
    pub start: u32,
    pub len: u32,
    pub origin: usize,
}

/// Apply one commit's hunks to a file's tracked segments. Returns the
/// origins whose lines the hunks replaced, and the segments after.
pub(crate) fn apply(segs: &[Seg], hunks: &[HunkIn], commit: usize) -> (BTreeSet<usize>, Vec<Seg>) {
    let mut hunks = hunks.to_vec();
    hunks.sort_by_key(|h| h.old_start);
    let mut touched = BTreeSet::new();
    let mut out = Vec::with_capacity(segs.len() + hunks.len());
    for seg in segs {
        // Cut the segment at every hunk boundary, drop what a hunk covers,
        // shift the rest by the hunks before it.
        let mut pieces = vec![(seg.start, seg.start + seg.len)];
        for h in &hunks {
            let (a, b) = (h.old_start, h.old_start + h.old_len);
            let mut next = Vec::with_capacity(pieces.len() + 1);
            for (s, e) in pieces {
                if h.old_len > 0 && s < b && a < e {
                    touched.insert(seg.origin);
                    if s < a {
                        next.push((s, a));
                    }
                    if b < e {
                        next.push((b, e));
                    }
                } else if h.old_len == 0 && s < a && a < e {
                    next.push((s, a));
                    next.push((a, e));
                } else {
                    next.push((s, e));
                }
            }
            pieces = next;
        }
        for (s, e) in pieces {
            let delta: i64 = hunks
                .iter()
                .filter(|h| h.old_start + h.old_len <= s && !(h.old_len > 0 && h.old_start >= e))
                .map(|h| i64::from(h.new_len) - i64::from(h.old_len))
                .sum();
            let start = (i64::from(s) + delta).max(1) as u32;
            out.push(Seg {
                start,
                len: e - s,
                origin: seg.origin,
            });
        }
    }
    for h in &hunks {
        if h.new_len > 0 {
            out.push(Seg {
                start: h.new_start,
                len: h.new_len,
                origin: commit,
            });
        }
    }
    out.sort_by_key(|s| s.start);
    (touched, out)
}

#[derive(Default)]
struct FileStats<'a> {
    commits: Vec<usize>,
    authors: HashSet<&'a str>,
    churn: u64,
    fixes: u32,
    /// (change, fix) pairs: the fix replaced lines the change wrote.
    fixed_changes: BTreeMap<usize, BTreeSet<usize>>,
    bug_tickets: BTreeSet<String>,
}

pub(super) fn hot_files(ctx: &Ctx<'_>) -> Vec<HotFile> {
    let bugs: HashSet<&str> = ctx
        .input
        .tickets
        .iter()
        .filter(|t| t.is_bug())
        .map(|t| t.id.as_str())
        .collect();
    let mut stats: HashMap<String, FileStats<'_>> = HashMap::new();
    let mut lines: HashMap<String, Vec<Seg>> = HashMap::new();
    for &i in &ctx.period {
        let c = ctx.commit(i);
        if c.is_merge() {
            continue;
        }
        let fix = ctx.fixes[i];
        let tickets = ctx.tickets_of(&c.sha);
        for f in &c.files {
            if let Some(old) = &f.old_path
                && let Some(segs) = lines.remove(old)
            {
                lines.insert(f.path.clone(), segs);
            }
            let st = stats.entry(f.path.clone()).or_default();
            st.commits.push(i);
            st.authors.insert(c.person.as_str());
            st.churn += u64::from(f.added.unwrap_or(0)) + u64::from(f.removed.unwrap_or(0));
            if fix {
                st.fixes += 1;
            }
            for t in &tickets {
                if bugs.contains(t.as_str()) {
                    st.bug_tickets.insert(t.clone());
                }
            }
            if f.status == "deleted" {
                lines.remove(&f.path);
                continue;
            }
            let segs = lines.entry(f.path.clone()).or_default();
            let (touched, after) = apply(segs, &f.hunks, i);
            *segs = after;
            if fix {
                for origin in touched.into_iter().filter(|&o| o != i) {
                    st.fixed_changes.entry(origin).or_default().insert(i);
                }
            }
        }
    }
    let mut hot: Vec<HotFile> = stats
        .into_iter()
        .filter(|(path, s)| {
            (s.churn > 0 || s.fixes > 0)
                && !ctx.input.skipped.contains(path)
                && !crate::secrets::is_machine_written(path)
        })
        .map(|(path, s)| {
            let followed = s.fixed_changes.len() as u32;
            let score = (1.0 + (1.0 + s.churn as f64).ln())
                * (1.0 + f64::from(s.fixes) + s.bug_tickets.len() as f64)
                * (1.0 + f64::from(followed));
            let mut evidence: Vec<(usize, &str)> = Vec::new();
            for (change, fixes) in &s.fixed_changes {
                evidence.push((*change, "change"));
                for f in fixes {
                    evidence.push((*f, "fix-of-change"));
                }
            }
            for &i in &s.commits {
                if ctx.fixes[i] {
                    evidence.push((i, "fix"));
                }
            }
            let mut seen = HashSet::new();
            evidence.retain(|(i, _)| seen.insert(*i));
            evidence.sort_by_key(|(i, _)| std::cmp::Reverse(ctx.commit(*i).committer_time));
            evidence.truncate(6);
            HotFile {
                id: String::new(),
                path,
                score: round2(score),
                commits: s.commits.len() as u32,
                authors: s.authors.len() as u32,
                churn: s.churn,
                fix_commits: s.fixes,
                changes_followed_by_fix: followed,
                bug_tickets: s.bug_tickets.into_iter().collect(),
                evidence: evidence
                    .into_iter()
                    .map(|(i, role)| ctx.commit_ref(i, role))
                    .collect(),
            }
        })
        .collect();
    hot.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.churn.cmp(&a.churn))
            .then_with(|| a.path.cmp(&b.path))
    });
    hot.truncate(ctx.params.top);
    for (n, h) in hot.iter_mut().enumerate() {
        h.id = format!("H{}", n + 1);
    }
    hot
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: u32, old_len: u32, new_start: u32, new_len: u32) -> HunkIn {
        HunkIn {
            old_start,
            old_len,
            new_start,
            new_len,
        }
    }

    #[test]
    fn lines_are_followed_through_later_hunks() {
        // Commit 0 writes lines 10-14 of a file.
        let (t, segs) = apply(&[], &[hunk(10, 0, 10, 5)], 0);
        assert!(t.is_empty());
        assert_eq!(
            segs,
            vec![Seg {
                start: 10,
                len: 5,
                origin: 0
            }]
        );
        // Commit 1 inserts 3 lines at the top: commit 0's lines move down.
        let (t, segs) = apply(&segs, &[hunk(1, 0, 1, 3)], 1);
        assert!(t.is_empty());
        assert_eq!(
            segs,
            vec![
                Seg {
                    start: 1,
                    len: 3,
                    origin: 1
                },
                Seg {
                    start: 13,
                    len: 5,
                    origin: 0
                }
            ]
        );
        // Commit 2 replaces line 15 (commit 0's third line) by two lines.
        let (t, segs) = apply(&segs, &[hunk(15, 1, 15, 2)], 2);
        assert_eq!(t.into_iter().collect::<Vec<_>>(), vec![0]);
        assert_eq!(
            segs,
            vec![
                Seg {
                    start: 1,
                    len: 3,
                    origin: 1
                },
                Seg {
                    start: 13,
                    len: 2,
                    origin: 0
                },
                Seg {
                    start: 15,
                    len: 2,
                    origin: 2
                },
                Seg {
                    start: 17,
                    len: 2,
                    origin: 0
                },
            ]
        );
        // Commit 3 deletes lines 2-3 (commit 1's) and inserts one line inside commit 0's lines.
        let (t, segs) = apply(&segs, &[hunk(2, 2, 1, 0), hunk(14, 0, 12, 1)], 3);
        assert_eq!(t.into_iter().collect::<Vec<_>>(), vec![1]);
        assert_eq!(
            segs,
            vec![
                Seg {
                    start: 1,
                    len: 1,
                    origin: 1
                },
                Seg {
                    start: 11,
                    len: 1,
                    origin: 0
                },
                Seg {
                    start: 12,
                    len: 1,
                    origin: 3
                },
                Seg {
                    start: 13,
                    len: 1,
                    origin: 0
                },
                Seg {
                    start: 14,
                    len: 2,
                    origin: 2
                },
                Seg {
                    start: 16,
                    len: 2,
                    origin: 0
                },
            ]
        );
    }
}
