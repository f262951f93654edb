//! From a [`ReportInput`] to a [`Report`]: one module per section, sharing
//! one [`Ctx`] of look-ups built once.

mod god;
mod hot;
mod owners;
mod people;
mod secrets;
mod summary;
mod tickets;
mod timeline;

use std::collections::{HashMap, HashSet};

use ken_core::time::format_date;

use crate::input::{CommitIn, PersonIn, ReportInput};
use crate::model::{CommitRef, PeriodOut, PersonName, Report, SCHEMA_VERSION};
use crate::tickets::{Links, link_commits};

/// The knobs of a report.
#[derive(Debug, Clone)]
pub struct ReportParams {
    /// Items per ranked list.
    pub top: usize,
    /// Directory depth of areas and ownership (`src/auth` is depth 2).
    pub dir_depth: usize,
    /// A person with no commit in this many days before the period's end
    /// has stopped committing.
    pub inactive_days: i64,
}

impl Default for ReportParams {
    fn default() -> Self {
        ReportParams {
            top: 10,
            dir_depth: 2,
            inactive_days: 180,
        }
    }
}

/// Build the report. Deterministic: the same input gives the same report.
pub fn build(input: &ReportInput, params: &ReportParams) -> Report {
    let ctx = Ctx::new(input, params);
    let mut notes = input.notes.clone();
    if ctx.period.is_empty() {
        notes.push("no commit in the period".to_string());
    }
    let (timeline, timeline_unit) = timeline::timeline(&ctx);
    Report {
        schema: SCHEMA_VERSION,
        repo: input.repo.clone(),
        indexed_commit: input.indexed_commit.clone(),
        period: PeriodOut {
            since: format_date(input.period.since),
            until: format_date(input.period.until),
            since_ts: input.period.since,
            until_ts: input.period.until,
            since_label: input.period.since_label.clone(),
            until_label: input.period.until_label.clone(),
        },
        summary: summary::summary(&ctx),
        hot_files: hot::hot_files(&ctx),
        god_objects: god::god_objects(&ctx),
        ownership: owners::ownership(&ctx),
        secrets: secrets::findings(&ctx),
        people: people::activity(&ctx),
        tickets: tickets::section(&ctx),
        timeline,
        timeline_unit,
        narrative: None,
        notes,
    }
}

/// Look-ups shared by the sections.
pub(crate) struct Ctx<'a> {
    pub input: &'a ReportInput,
    pub params: &'a ReportParams,
    pub people: HashMap<&'a str, &'a PersonIn>,
    /// Indexes into `input.commits` of the period's commits, oldest first.
    pub period: Vec<usize>,
    /// Commits up to the period's end touching each path: index list.
    pub links: Links,
    /// Whether each commit (by index) fixes something.
    pub fixes: Vec<bool>,
    /// Each person's newest commit time up to the period's end.
    pub last_commit: HashMap<&'a str, i64>,
    /// Index into `input.commits` by sha.
    pub by_sha: HashMap<&'a str, usize>,
}

impl<'a> Ctx<'a> {
    fn new(input: &'a ReportInput, params: &'a ReportParams) -> Ctx<'a> {
        let people = input.people.iter().map(|p| (p.id.as_str(), p)).collect();
        let mut period: Vec<usize> = (0..input.commits.len())
            .filter(|&i| {
                let t = input.commits[i].committer_time;
                t >= input.period.since && t < input.period.until
            })
            .collect();
        // Oldest first; the input is newest first, so ties keep parents first.
        period.sort_by_key(|&i| (input.commits[i].committer_time, std::cmp::Reverse(i)));
        let messages: Vec<(&str, &str)> = input
            .commits
            .iter()
            .map(|c| (c.sha.as_str(), c.message.as_str()))
            .collect();
        let links = if input.tickets.is_empty() {
            Links::default()
        } else {
            link_commits(&messages, &input.tickets)
        };
        let bug_tickets: HashSet<&str> = input
            .tickets
            .iter()
            .filter(|t| t.is_bug())
            .map(|t| t.id.as_str())
            .collect();
        let fixes = input
            .commits
            .iter()
            .map(|c| {
                is_fix_message(&c.message)
                    || links
                        .by_commit
                        .get(&c.sha)
                        .is_some_and(|ts| ts.iter().any(|t| bug_tickets.contains(t.as_str())))
            })
            .collect();
        let mut last_commit: HashMap<&str, i64> = HashMap::new();
        for c in &input.commits {
            if c.committer_time < input.period.until {
                let e = last_commit.entry(c.person.as_str()).or_insert(i64::MIN);
                *e = (*e).max(c.author_time);
            }
        }
        let by_sha = input
            .commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.sha.as_str(), i))
            .collect();
        Ctx {
            input,
            params,
            people,
            period,
            links,
            fixes,
            last_commit,
            by_sha,
        }
    }

    pub fn commit(&self, i: usize) -> &'a CommitIn {
        &self.input.commits[i]
    }

    pub fn name(&self, id: &str) -> PersonName {
        PersonName {
            id: id.to_string(),
            name: self
                .people
                .get(id)
                .map_or_else(|| id.to_string(), |p| p.name.clone()),
        }
    }

    pub fn is_bot(&self, id: &str) -> bool {
        self.people.get(id).is_some_and(|p| p.bot)
    }

    /// The directory of a path at the report's depth (`.` for the root).
    pub fn area(&self, path: &str) -> String {
        area_of(path, self.params.dir_depth)
    }

    /// Whether a person has stopped committing by the period's end.
    pub fn inactive(&self, id: &str) -> bool {
        let cutoff = self.input.period.until - self.params.inactive_days * 86_400;
        self.last_commit.get(id).is_none_or(|&t| t < cutoff)
    }

    pub fn tickets_of(&self, sha: &str) -> Vec<String> {
        self.links.by_commit.get(sha).cloned().unwrap_or_default()
    }

    pub fn commit_ref(&self, i: usize, role: &str) -> CommitRef {
        let c = self.commit(i);
        let (added, removed) = c.files.iter().fold((0u32, 0u32), |(a, r), f| {
            (
                a.saturating_add(f.added.unwrap_or(0)),
                r.saturating_add(f.removed.unwrap_or(0)),
            )
        });
        CommitRef {
            sha: c.sha.clone(),
            summary: c.summary.clone(),
            author: self.name(&c.person),
            date: format_date(c.committer_time),
            lines_added: added,
            lines_removed: removed,
            role: role.to_string(),
            tickets: self.tickets_of(&c.sha),
        }
    }
}

/// The directory of `path` cut at `depth` components (`.` for the root).
pub(crate) fn area_of(path: &str, depth: usize) -> String {
    let dirs: Vec<&str> = path.split('/').collect();
    let n = (dirs.len() - 1).min(depth);
    if n == 0 {
        ".".to_string()
    } else {
        dirs[..n].join("/")
    }
}

/// Whether a commit message says it fixes something: a word such as fix,
/// bug, hotfix, crash, regression, revert, or a closing ticket reference.
pub fn is_fix_message(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        matches!(
            w,
            "fix"
                | "fixes"
                | "fixed"
                | "fixing"
                | "bug"
                | "bugs"
                | "bugfix"
                | "hotfix"
                | "crash"
                | "crashes"
                | "regression"
                | "revert"
                | "broken"
                | "fault"
                | "defect"
                | "workaround"
        )
    })
}

/// Round to two decimals, so reports compare exactly.
pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests;
