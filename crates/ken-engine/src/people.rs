//! The people layer in the index: commit history with changed files,
//! per-file blame at the indexed commit (only for changed files), and the
//! questions built on them — who wrote a chunk, who knows a topic, which
//! commits match a query.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use ken_core::AuthorShare;
use ken_source::{
    BlameMethod, BlameOptions, BlameRange, GitRepo, Identities, KnownBlame, KnownFile, LogOptions,
    PersonRef,
};
use ken_store::{BlameLines, ChunkStore, CommitRecord, FileBlameRecord, HistoryStore, IndexStore};
use serde::Serialize;

use crate::{EngineError, Result};

/// What the people step of an index run did.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PeopleReport {
    pub commits_added: usize,
    pub files_blamed: usize,
    /// Files blamed with a fallback (too long, over the time budget).
    pub fallbacks: usize,
    pub seconds: f64,
}

/// Files blamed per store transaction. Each batch walks the history again
/// (once per thread), so fewer, larger batches are faster (BENCHMARKS.md §13,
/// §20: sympy's 2,046 files in one batch instead of three); a killed index
/// loses at most one batch.
const BLAME_BATCH: usize = 4000;
/// Overlap kept when walking only new history (clock skew between commits).
const HISTORY_OVERLAP_SECS: i64 = 14 * 24 * 3600;

/// Record new history up to `commit` and blame the files (path, blob id)
/// whose blame is missing or stale. Resumable: every batch is committed.
pub fn update_people(
    store: &mut (impl HistoryStore + IndexStore + ?Sized),
    repo: &GitRepo,
    commit: &str,
    files: &[(String, String)],
) -> Result<PeopleReport> {
    let started = Instant::now();
    let mut report = PeopleReport::default();
    let (known, newest) = store.commit_stats()?;
    let log_opts = LogOptions {
        from: commit.to_string(),
        since: if known > 0 {
            newest.map(|t| t - HISTORY_OVERLAP_SECS)
        } else {
            None
        },
        with_files: true,
        ..LogOptions::default()
    };
    let needed = store.blame_needed(files)?;
    let blob: HashMap<&str, &str> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_str()))
        .collect();
    let opts = BlameOptions {
        known: known_blame(store, commit, &needed)?.map(std::sync::Arc::new),
        ..BlameOptions::default()
    };
    let batches: Vec<&[String]> = needed.chunks(BLAME_BATCH).collect();
    // The history walk runs beside the first blame batch, which reads
    // nothing the walk stores: the core a blame thread leaves idle walks.
    // Blame is stored after the history (it names commits by their rows).
    let (log, mut first) = std::thread::scope(|s| {
        let log = s.spawn(|| repo.log(log_opts));
        let first = batches
            .first()
            .map(|batch| repo.blame_files_with(commit, batch, &opts));
        (log.join(), first)
    });
    let log = log.map_err(|_| EngineError::internal("the history walk panicked"))??;
    let records: Vec<CommitRecord> = log
        .into_iter()
        .map(|c| CommitRecord {
            sha: c.meta.sha,
            author_name: c.meta.author_name,
            author_email: c.meta.author_email,
            author_time: c.meta.author_time,
            committer_time: c.meta.committer_time,
            summary: c.meta.summary,
            message: c.meta.message,
            parents: c.meta.parents,
            files: c
                .files
                .into_iter()
                .map(|f| (f.path, f.status.name().to_string(), f.old_path))
                .collect(),
        })
        .collect();
    for chunk in records.chunks(5000) {
        report.commits_added += store.add_commits(chunk)?;
    }
    drop(records);

    for batch in batches {
        let blamed = match first.take() {
            Some(blamed) => blamed,
            None => repo.blame_files_with(commit, batch, &opts),
        };
        let mut records = Vec::with_capacity(blamed.len());
        for fb in blamed {
            let method = match fb.method {
                BlameMethod::Exact => "exact",
                BlameMethod::Partial(_) => "partial",
                BlameMethod::LastChange(_) => "last-change",
            };
            if method != "exact" {
                report.fallbacks += 1;
            }
            // a file git cannot blame (not in the commit) gets an empty blame
            let mut ranges = fb.ranges.unwrap_or_default();
            if is_notebook(&fb.path)
                && let Some(id) = blob.get(fb.path.as_str())
            {
                ranges = notebook_blame(repo, id, ranges);
            }
            records.push(FileBlameRecord {
                blob_id: blob
                    .get(fb.path.as_str())
                    .copied()
                    .unwrap_or_default()
                    .to_string(),
                path: fb.path,
                method: method.to_string(),
                ranges: ranges
                    .into_iter()
                    .map(|r| BlameLines {
                        start_line: r.start_line,
                        end_line: r.end_line,
                        sha: r.commit,
                    })
                    .collect(),
            });
        }
        report.files_blamed += records.len();
        store.put_blame(&records)?;
    }
    let mut state = store.state()?;
    if state.blamed_at.as_deref() != Some(commit) {
        state.blamed_at = Some(commit.to_string());
        store.set_state(&state)?;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// A notebook's stored text is its code view (ken_syntax::notebook_code), and
/// chunks count its lines.
fn is_notebook(path: &str) -> bool {
    ken_core::Language::from_path(path) == ken_core::Language::Notebook
}

/// A notebook's blame, which git gives in lines of its raw JSON, in lines of
/// its code view: each code-view line gets the commit of the raw line it
/// comes from (`ken_syntax::notebook_raw_lines`). A notebook that is not
/// valid JSON is stored as it is, and so is its blame; one whose blob cannot
/// be read keeps the raw lines too.
fn notebook_blame(repo: &GitRepo, blob: &str, ranges: Vec<BlameRange>) -> Vec<BlameRange> {
    let Ok(bytes) = repo.read_blob(blob) else {
        return ranges;
    };
    let text = String::from_utf8_lossy(&bytes);
    match ken_syntax::notebook_raw_lines(&text) {
        Some(map) => code_view_blame(&ranges, &map),
        None => ranges,
    }
}

/// Blame of raw lines (`ranges`) as blame of the lines `raw_line_of` maps
/// to them (element `i` is for line `i + 1`): consecutive lines of one
/// commit make one range; a line whose raw line has no blame gets none.
fn code_view_blame(ranges: &[BlameRange], raw_line_of: &[u32]) -> Vec<BlameRange> {
    let mut sorted: Vec<&BlameRange> = ranges.iter().collect();
    sorted.sort_by_key(|r| r.start_line);
    let commit_of = |raw: u32| {
        let i = sorted.partition_point(|r| r.start_line <= raw);
        let r = sorted.get(i.checked_sub(1)?)?;
        (raw <= r.end_line).then_some(r.commit.as_str())
    };
    let mut out: Vec<BlameRange> = Vec::new();
    for (i, &raw) in raw_line_of.iter().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let Some(commit) = commit_of(raw) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.end_line + 1 == line && last.commit == commit => {
                last.end_line = line;
            }
            _ => out.push(BlameRange {
                start_line: line,
                end_line: line,
                commit: commit.to_string(),
            }),
        }
    }
    out
}

/// The stored blame of the files about to be blamed again, as it was at the
/// commit the blame was last completed at: their walks end there (a file
/// blamed since, by a run that stopped, is of another blob there and walks
/// on). `None` when there is none, or it is of this commit. A notebook's
/// stored blame counts code-view lines, not the raw lines a walk follows:
/// notebooks are blamed from the start.
fn known_blame(
    store: &(impl HistoryStore + IndexStore + ?Sized),
    commit: &str,
    paths: &[String],
) -> Result<Option<KnownBlame>> {
    let Some(at) = store.state()?.blamed_at.filter(|c| c != commit) else {
        return Ok(None);
    };
    if paths.is_empty() {
        return Ok(None);
    }
    let done = store.blame_done_of(paths)?;
    let usable: Vec<String> = paths
        .iter()
        .filter(|p| {
            !is_notebook(p)
                && done
                    .get(*p)
                    .is_some_and(|(_, method)| method != "uncommitted" && method != "last-change")
        })
        .cloned()
        .collect();
    let mut ranges = store.blame_of_paths(&usable)?;
    let files = usable
        .into_iter()
        .filter_map(|path| {
            let (blob, method) = done.get(&path)?.clone();
            let ranges = ranges.remove(&path)?;
            let file = KnownFile {
                blob,
                ranges: ranges
                    .into_iter()
                    .map(|r| BlameRange {
                        start_line: r.start_line,
                        end_line: r.end_line,
                        commit: r.sha,
                    })
                    .collect(),
                approximate: method != "exact",
            };
            Some((path, file))
        })
        .collect();
    Ok(Some(KnownBlame { commit: at, files }))
}

/// The identity resolver for a repository: its `.mailmap`, then
/// `$KEN_HOME/identities.toml`, then the repository's `.ken/identities.toml`.
pub fn identities(home: &Path, store: &(impl ChunkStore + ?Sized)) -> Result<Identities> {
    let mailmap = store.file_text(".mailmap")?;
    let mut files: Vec<(String, String)> = Vec::new();
    let global = home.join("identities.toml");
    if let Ok(text) = std::fs::read_to_string(&global) {
        files.push((global.display().to_string(), text));
    }
    if let Some(text) = store.file_text(".ken/identities.toml")? {
        files.push((".ken/identities.toml".to_string(), text));
    }
    let labelled: Vec<(&str, &str)> = files
        .iter()
        .map(|(l, t)| (l.as_str(), t.as_str()))
        .collect();
    Identities::from_labelled(mailmap.as_deref(), &labelled)
        .map_err(|e| EngineError::bad_input(e.to_string()))
}

/// [`identities`] with every commit author of the history observed, so
/// that people seen only in commits can be found by any alias, and authors
/// who are one person (the same name, a noreply handle) resolve as one.
/// Only commits at or before `until` (the indexed commit's time) count:
/// an index moved back to an older commit still holds the history after
/// it, and its authors are not known yet at that commit.
pub fn observed_identities(
    home: &Path,
    store: &(impl ChunkStore + HistoryStore + ?Sized),
    until: Option<i64>,
) -> Result<Identities> {
    let mut ids = identities(home, store)?;
    for (name, email) in authors_until(store, until)? {
        ids.observe(&name, &email);
    }
    Ok(ids)
}

/// Each distinct author of the commits at or before `until`, by their
/// newest commit, newest first (as [`HistoryStore::commit_authors`]).
fn authors_until(
    store: &(impl HistoryStore + ?Sized),
    until: Option<i64>,
) -> Result<Vec<(String, String)>> {
    let newest = store.commit_stats()?.1;
    let Some(until) = until.filter(|u| newest.is_some_and(|n| n > *u)) else {
        return Ok(store.commit_authors()?);
    };
    let mut last: HashMap<(String, String), i64> = HashMap::new();
    for (name, email, _, committed) in store.commit_times()? {
        if committed <= until {
            let t = last.entry((name, email)).or_insert(committed);
            *t = (*t).max(committed);
        }
    }
    let mut authors: Vec<((String, String), i64)> = last.into_iter().collect();
    authors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(authors.into_iter().map(|(a, _)| a).collect())
}

/// Authorship of line ranges, with caches (one per query).
pub struct Authorship<'a> {
    store: &'a dyn HistoryStore,
    ids: &'a Identities,
    blame: HashMap<String, Vec<BlameLines>>,
    commits: HashMap<String, CommitRecord>,
}

/// Who wrote a range: people by line count, and the newest change.
#[derive(Debug, Clone, Default)]
pub struct RangeAuthors {
    /// (person, lines, newest author time of their lines, their newest commit)
    pub people: Vec<(PersonRef, u32, i64, String)>,
    pub lines: u32,
    pub last_commit: Option<String>,
    pub last_time: Option<i64>,
}

impl<'a> Authorship<'a> {
    pub fn new(store: &'a dyn HistoryStore, ids: &'a Identities) -> Authorship<'a> {
        Authorship {
            store,
            ids,
            blame: HashMap::new(),
            commits: HashMap::new(),
        }
    }

    fn commit(&mut self, sha: &str) -> Result<Option<CommitRecord>> {
        if !self.commits.contains_key(sha) {
            let found = self.store.commit_heads(&[sha.to_string()])?;
            match found.into_values().next() {
                Some(c) => {
                    self.commits.insert(sha.to_string(), c);
                }
                None => return Ok(None),
            }
        }
        Ok(self.commits.get(sha).cloned())
    }

    /// Read at once what [`Authorship::range`] will need for these
    /// (path, start, end) ranges: their files' blame and their commits.
    pub fn prefetch(&mut self, ranges: &[(String, u32, u32)]) -> Result<()> {
        let mut paths: Vec<String> = ranges
            .iter()
            .map(|r| r.0.clone())
            .filter(|p| !self.blame.contains_key(p))
            .collect();
        paths.sort();
        paths.dedup();
        if !paths.is_empty() {
            self.blame.extend(self.store.blame_of_paths(&paths)?);
        }
        let mut shas: Vec<String> = Vec::new();
        for (path, start, end) in ranges {
            for b in self.blame.get(path).into_iter().flatten() {
                if b.end_line >= *start
                    && b.start_line <= *end
                    && !self.commits.contains_key(&b.sha)
                {
                    shas.push(b.sha.clone());
                }
            }
        }
        shas.sort();
        shas.dedup();
        if !shas.is_empty() {
            self.commits.extend(self.store.commit_heads(&shas)?);
        }
        Ok(())
    }

    /// Authors of `path` lines `start..=end` at the indexed commit.
    pub fn range(&mut self, path: &str, start: u32, end: u32) -> Result<RangeAuthors> {
        if !self.blame.contains_key(path) {
            let b = self.store.blame_of(path)?;
            self.blame.insert(path.to_string(), b);
        }
        let ranges: Vec<BlameLines> = self.blame[path]
            .iter()
            .filter(|r| r.end_line >= start && r.start_line <= end)
            .cloned()
            .collect();
        // the range's commits in one read
        let mut missing: Vec<String> = ranges
            .iter()
            .filter(|r| !self.commits.contains_key(&r.sha))
            .map(|r| r.sha.clone())
            .collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            self.commits.extend(self.store.commit_heads(&missing)?);
        }
        let mut per: HashMap<String, (PersonRef, u32, i64, String)> = HashMap::new();
        let mut out = RangeAuthors::default();
        for r in ranges {
            let lines = r.end_line.min(end) + 1 - r.start_line.max(start);
            let Some(c) = self.commit(&r.sha)? else {
                continue;
            };
            let person = self.ids.resolve(&c.author_name, &c.author_email);
            let e = per
                .entry(person.id.clone())
                .or_insert((person, 0, i64::MIN, String::new()));
            e.1 += lines;
            if c.author_time > e.2 {
                e.2 = c.author_time;
                e.3 = c.sha.clone();
            }
            out.lines += lines;
            if out.last_time.is_none_or(|t| c.author_time > t) {
                out.last_time = Some(c.author_time);
                out.last_commit = Some(c.sha.clone());
            }
        }
        let mut people: Vec<_> = per.into_values().collect();
        people.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
        out.people = people;
        Ok(out)
    }

    /// Authors as search results show them: bots left out, shares of the range's lines.
    pub fn shares(&mut self, path: &str, start: u32, end: u32) -> Result<Vec<AuthorShare>> {
        let r = self.range(path, start, end)?;
        let total = r.lines.max(1) as f32;
        Ok(r.people
            .iter()
            .filter(|(p, ..)| !p.is_bot)
            .map(|(p, lines, ..)| AuthorShare {
                name: p.display_name.clone(),
                share: (*lines as f32 / total * 1000.0).round() / 1000.0,
            })
            .collect())
    }
}

/// Evidence that a person knows some code.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub path: String,
    pub symbol: Option<String>,
    /// Share of the code's lines they last changed.
    pub share: f32,
    pub last_commit: Option<String>,
    /// When they last changed it (seconds since the epoch).
    pub when: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WhoPerson {
    pub rank: usize,
    pub id: String,
    pub name: String,
    pub emails: Vec<String>,
    pub score: f32,
    pub evidence: Vec<Evidence>,
}

/// A piece of code the question is about, with how much it matters.
#[derive(Debug, Clone)]
pub struct Target {
    pub path: String,
    pub symbol: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub weight: f32,
}

/// Half-life of authorship: knowledge of code fades as it ages.
const HALF_LIFE_DAYS: f64 = 365.0;

fn recency(now: i64, when: i64) -> f32 {
    let days = ((now - when).max(0) as f64) / 86_400.0;
    (0.5f64).powf(days / HALF_LIFE_DAYS) as f32
}

/// Commits that addressed something like a question, each with its weight:
/// its match relative to the best one, times how much one similar past
/// commit (at full match, made today) counts against a whole target's lines
/// (`RankParams::w_who_similar`).
pub type SimilarCommits = [(String, f32)];

/// How long a commit counts toward being active in a repository lately.
const ACTIVE_HALF_LIFE_DAYS: f64 = 90.0;

/// The people most active in the repository lately, by person id: each
/// commit before `now` counts by its age (half-life
/// [`ACTIVE_HALF_LIFE_DAYS`]), the most active person gets `w`, bots none.
pub fn active_authors(
    store: &dyn HistoryStore,
    ids: &Identities,
    now: i64,
    w: f32,
) -> Result<Vec<(PersonRef, f32)>> {
    if w <= 0.0 {
        return Ok(Vec::new());
    }
    let mut by: HashMap<String, (PersonRef, f64)> = HashMap::new();
    for (name, email, authored, committed) in store.commit_times()? {
        if committed > now {
            continue;
        }
        let p = ids.resolve(&name, &email);
        if p.is_bot {
            continue;
        }
        let days = ((now - authored).max(0) as f64) / 86_400.0;
        by.entry(p.id.clone()).or_insert_with(|| (p, 0.0)).1 +=
            0.5f64.powf(days / ACTIVE_HALF_LIFE_DAYS);
    }
    let best = by.values().map(|v| v.1).fold(0.0, f64::max);
    if best <= 0.0 {
        return Ok(Vec::new());
    }
    let mut out: Vec<(PersonRef, f32)> = by
        .into_values()
        .map(|(p, a)| (p, (w as f64 * a / best) as f32))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
    Ok(out)
}

/// Rank the people who know `targets`: recency-weighted line ownership,
/// plus their commits that touched the targets' files, plus the commits
/// that addressed similar questions before (`similar`, recency-weighted),
/// plus how active each has been lately (`active`, by person id, from
/// [`active_authors`]). Bots are left out.
pub fn rank_people(
    store: &dyn HistoryStore,
    ids: &Identities,
    targets: &[Target],
    similar: &SimilarCommits,
    active: &[(PersonRef, f32)],
    now: i64,
    limit: usize,
) -> Result<Vec<WhoPerson>> {
    let mut auth = Authorship::new(store, ids);
    let mut score: HashMap<String, f32> = HashMap::new();
    let mut who: HashMap<String, PersonRef> = HashMap::new();
    let mut evidence: HashMap<String, Vec<Evidence>> = HashMap::new();
    for t in targets {
        let r = auth.range(&t.path, t.start_line, t.end_line)?;
        let total = r.lines.max(1) as f32;
        for (p, lines, when, sha) in &r.people {
            if p.is_bot {
                continue;
            }
            let share = *lines as f32 / total;
            *score.entry(p.id.clone()).or_default() += t.weight * share * recency(now, *when);
            who.entry(p.id.clone()).or_insert_with(|| p.clone());
            evidence.entry(p.id.clone()).or_default().push(Evidence {
                path: t.path.clone(),
                symbol: t.symbol.clone(),
                share: (share * 1000.0).round() / 1000.0,
                last_commit: Some(sha.clone()),
                when: Some(*when),
            });
        }
    }
    // commits touching the files, each a little evidence of knowing them
    let mut file_weight: BTreeMap<&str, f32> = BTreeMap::new();
    for t in targets {
        let w = file_weight.entry(t.path.as_str()).or_default();
        *w = w.max(t.weight);
    }
    let paths: Vec<String> = file_weight.keys().map(|p| p.to_string()).collect();
    let touching = store.commits_touching(&paths)?;
    let shas: Vec<String> = touching.iter().map(|(s, _)| s.clone()).collect();
    let commits = store.commits(&shas, false)?;
    for (sha, path) in &touching {
        let Some(c) = commits.get(sha) else { continue };
        if c.committer_time > now {
            continue; // newer than the indexed commit
        }
        let p = ids.resolve(&c.author_name, &c.author_email);
        if p.is_bot {
            continue;
        }
        let w = file_weight.get(path.as_str()).copied().unwrap_or(0.0);
        *score.entry(p.id.clone()).or_default() += 0.1 * w * recency(now, c.author_time);
        who.entry(p.id.clone()).or_insert(p);
    }
    // who addressed similar questions before
    let shas: Vec<String> = similar.iter().map(|(s, _)| s.clone()).collect();
    let found = store.commits(&shas, true)?;
    for (sha, weight) in similar {
        let Some(c) = found.get(sha) else { continue };
        if c.committer_time > now {
            continue;
        }
        let p = ids.resolve(&c.author_name, &c.author_email);
        if p.is_bot {
            continue;
        }
        *score.entry(p.id.clone()).or_default() += weight * recency(now, c.author_time);
        evidence.entry(p.id.clone()).or_default().push(Evidence {
            path: c.files.first().map(|f| f.0.clone()).unwrap_or_default(),
            symbol: None,
            share: 0.0,
            last_commit: Some(sha.clone()),
            when: Some(c.author_time),
        });
        who.entry(p.id.clone()).or_insert(p);
    }
    // who is active lately adds to what the evidence above found, and
    // may bring in someone it did not
    for (p, a) in active {
        *score.entry(p.id.clone()).or_default() += a;
        who.entry(p.id.clone()).or_insert_with(|| p.clone());
    }
    let mut ranked: Vec<(String, f32)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(limit);
    Ok(ranked
        .into_iter()
        .enumerate()
        .map(|(i, (id, s))| {
            let p = &who[&id];
            let person = ids.person(&id);
            let mut ev = evidence.remove(&id).unwrap_or_default();
            ev.sort_by(|a, b| b.share.total_cmp(&a.share).then(b.when.cmp(&a.when)));
            ev.truncate(5);
            WhoPerson {
                rank: i + 1,
                id: id.clone(),
                name: p.display_name.clone(),
                emails: person.map(|x| x.emails.clone()).unwrap_or_default(),
                score: (s * 10_000.0).round() / 10_000.0,
                evidence: ev,
            }
        })
        .collect())
}

/// People seen in the history, with their aliases and commit counts.
#[derive(Debug, Clone, Serialize)]
pub struct PersonSummary {
    pub id: String,
    pub name: String,
    pub emails: Vec<String>,
    pub names: Vec<String>,
    pub handles: Vec<String>,
    pub external: BTreeMap<String, String>,
    pub bot: bool,
    pub commits: u64,
    pub last_commit_time: Option<i64>,
}

pub fn people(
    store: &dyn HistoryStore,
    mut ids: Identities,
    include_bots: bool,
) -> Result<Vec<PersonSummary>> {
    let commits = store.all_commits()?;
    for c in &commits {
        ids.observe(&c.author_name, &c.author_email);
    }
    // counted once everyone is observed: a later identity can join two
    // authors into one person
    let mut counts: HashMap<String, (u64, i64)> = HashMap::new();
    for c in &commits {
        let p = ids.resolve(&c.author_name, &c.author_email);
        let e = counts.entry(p.id).or_insert((0, i64::MIN));
        e.0 += 1;
        e.1 = e.1.max(c.author_time);
    }
    let mut out: Vec<PersonSummary> = ids
        .people()
        .iter()
        .filter(|p| include_bots || !p.is_bot)
        .map(|p| {
            let (n, last) = counts.get(&p.id).copied().unwrap_or((0, i64::MIN));
            PersonSummary {
                id: p.id.clone(),
                name: p.name.clone(),
                emails: p.emails.clone(),
                names: p.names.clone(),
                handles: p.handles.clone(),
                external: p.external.clone(),
                bot: p.is_bot,
                commits: n,
                last_commit_time: (last != i64::MIN).then_some(last),
            }
        })
        .collect();
    out.sort_by(|a, b| b.commits.cmp(&a.commits).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// The shas of commits by people matching `who` (any alias), within times.
pub fn commits_by(
    store: &(impl HistoryStore + ?Sized),
    ids: &Identities,
    who: Option<&str>,
    since: Option<i64>,
    until: Option<i64>,
) -> Result<Vec<String>> {
    let commits = store.all_commits()?;
    let wanted: Option<HashSet<String>> = match who {
        Some(q) => {
            // people seen only in commits can be found by any alias too
            let mut seen = ids.clone();
            for c in &commits {
                seen.observe(&c.author_name, &c.author_email);
            }
            let found: HashSet<String> = seen.find(q).into_iter().map(|p| p.id).collect();
            Some(found)
        }
        None => None,
    };
    let mut out = Vec::new();
    for c in commits {
        if since.is_some_and(|s| c.author_time < s) || until.is_some_and(|u| c.author_time > u) {
            continue;
        }
        if let Some(w) = &wanted {
            let p = ids.resolve(&c.author_name, &c.author_email);
            if !w.contains(&p.id)
                && !matches_loosely(who.unwrap_or(""), &c.author_name, &c.author_email)
            {
                continue;
            }
        }
        out.push(c.sha);
    }
    Ok(out)
}

/// An author query matches a commit identity by name or email words.
fn matches_loosely(q: &str, name: &str, email: &str) -> bool {
    let q = q.to_lowercase();
    if q.is_empty() {
        return false;
    }
    let name = name.to_lowercase();
    let email = email.to_lowercase();
    name == q
        || email == q
        || name.split_whitespace().any(|w| w == q)
        || email.split('@').next() == Some(q.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::git;
    use ken_store::{EmbeddedStore, IndexStore};

    fn files_at(repo: &GitRepo, sha: &str) -> Vec<(String, String)> {
        repo.list_commit(sha, &Default::default())
            .unwrap()
            .entries
            .into_iter()
            .map(|e| (e.path, e.id))
            .collect()
    }

    /// The `n`th commit, by `name` at time `t`, with no files.
    fn commit(n: usize, name: &str, t: i64) -> CommitRecord {
        CommitRecord {
            sha: format!("{n:040}"),
            author_name: name.into(),
            author_email: format!("{}@example.com", name.to_lowercase()),
            author_time: t,
            committer_time: t,
            summary: "change".into(),
            message: "change".into(),
            parents: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Lately outweighs long ago: many old commits count less than a few
    /// recent ones, commits after `now` and bots not at all, and the most
    /// active person gets the whole weight.
    #[test]
    fn the_most_active_lately_is_not_the_most_active_ever() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = EmbeddedStore::open_for_writing(dir.path()).unwrap();
        let day = 86_400;
        let now = 1_000 * day;
        let mut commits = Vec::new();
        // Old Timer: twenty commits two years ago; Newcomer: three this month
        for i in 0..20 {
            commits.push(commit(i, "Old Timer", now - 730 * day));
        }
        for i in 20..23 {
            commits.push(commit(i, "Newcomer", now - 10 * day));
        }
        commits.push(commit(23, "dependabot[bot]", now - day));
        commits.push(commit(24, "Future", now + day));
        store.add_commits(&commits).unwrap();
        let ids = Identities::default();
        let active = active_authors(&store, &ids, now, 2.0).unwrap();
        let names: Vec<&str> = active
            .iter()
            .map(|(p, _)| p.display_name.as_str())
            .collect();
        assert_eq!(names, ["Newcomer", "Old Timer"], "{active:?}");
        assert_eq!(active[0].1, 2.0);
        assert!(active[1].1 < 0.1, "{active:?}");
        assert!(active_authors(&store, &ids, now, 0.0).unwrap().is_empty());
    }

    /// An index moved back to an older commit still holds the later
    /// history: its authors are not observed until the index reaches them.
    #[test]
    fn authors_after_the_indexed_commit_are_not_observed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = EmbeddedStore::open_for_writing(dir.path()).unwrap();
        store
            .add_commits(&[
                commit(1, "Ada", 100),
                commit(2, "Bob", 300),
                commit(3, "Cy", 200),
            ])
            .unwrap();
        let names = |until| -> Vec<String> {
            authors_until(&store, until)
                .unwrap()
                .into_iter()
                .map(|a| a.0)
                .collect()
        };
        assert_eq!(names(Some(250)), ["Cy", "Ada"]);
        assert_eq!(names(Some(400)), ["Bob", "Cy", "Ada"]);
        assert_eq!(names(None), ["Bob", "Cy", "Ada"]);
    }

    /// Each line's commit, in order.
    fn lines(store: &dyn HistoryStore, path: &str) -> Vec<String> {
        store
            .blame_of(path)
            .unwrap()
            .into_iter()
            .flat_map(|r| (r.start_line..=r.end_line).map(move |_| r.sha.clone()))
            .collect()
    }

    /// Moving an index forward blames the changed files from the blame
    /// stored at the commit blamed last (the walk ends there) and gives
    /// what a fresh index gives; the stored blame is really what is used.
    #[test]
    fn blame_moves_forward_from_the_commit_blamed_last() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut app: Vec<String> = (1..=30)
            .map(|i| format!("def f{i}(): return {i}"))
            .collect();
        let write =
            |lines: &[String]| std::fs::write(d.join("app.py"), lines.join("\n") + "\n").unwrap();
        git(d, &["init", "-q", "-b", "main"], "2024-01-01T10:00:00");
        write(&app);
        std::fs::write(d.join("README.md"), "# app\n").unwrap();
        git(d, &["add", "-A"], "2024-01-01T10:00:00");
        git(d, &["commit", "-q", "-m", "first"], "2024-01-01T10:00:00");
        app[4] = "def f5(): return 50".into();
        write(&app);
        git(d, &["commit", "-q", "-am", "second"], "2024-01-02T10:00:00");
        let a = git(d, &["rev-parse", "HEAD"], "2024-01-02T10:00:00");
        app.insert(10, "def g(): return 0".into());
        app[20] = "def f20(): return 200".into();
        write(&app);
        git(d, &["commit", "-q", "-am", "third"], "2024-01-03T10:00:00");
        let b = git(d, &["rev-parse", "HEAD"], "2024-01-03T10:00:00");
        let repo = GitRepo::open(d).unwrap();

        let fresh_dir = tempfile::tempdir().unwrap();
        let mut fresh = EmbeddedStore::open_for_writing(fresh_dir.path()).unwrap();
        update_people(&mut fresh, &repo, &b, &files_at(&repo, &b)).unwrap();

        let moved_dir = tempfile::tempdir().unwrap();
        let mut moved = EmbeddedStore::open_for_writing(moved_dir.path()).unwrap();
        update_people(&mut moved, &repo, &a, &files_at(&repo, &a)).unwrap();
        assert_eq!(
            moved.state().unwrap().blamed_at.as_deref(),
            Some(a.as_str())
        );
        let report = update_people(&mut moved, &repo, &b, &files_at(&repo, &b)).unwrap();
        assert_eq!(report.files_blamed, 1, "only app.py changed");
        assert_eq!(
            moved.state().unwrap().blamed_at.as_deref(),
            Some(b.as_str())
        );
        assert_eq!(lines(&moved, "app.py"), lines(&fresh, "app.py"));
        assert_eq!(lines(&moved, "README.md"), lines(&fresh, "README.md"));

        // The stored blame decides: one made up at A shows through in the
        // lines that reach A, and the lines changed after A keep their commit.
        let tampered_dir = tempfile::tempdir().unwrap();
        let mut tampered = EmbeddedStore::open_for_writing(tampered_dir.path()).unwrap();
        let at_a = files_at(&repo, &a);
        update_people(&mut tampered, &repo, &a, &at_a).unwrap();
        let blob = at_a.iter().find(|(p, _)| p == "app.py").unwrap().1.clone();
        let fake = "f".repeat(40);
        tampered
            .put_blame(&[FileBlameRecord {
                path: "app.py".into(),
                blob_id: blob,
                method: "exact".into(),
                ranges: vec![BlameLines {
                    start_line: 1,
                    end_line: 30,
                    sha: fake.clone(),
                }],
            }])
            .unwrap();
        update_people(&mut tampered, &repo, &b, &files_at(&repo, &b)).unwrap();
        let got = lines(&tampered, "app.py");
        for (i, sha) in lines(&fresh, "app.py").iter().enumerate() {
            let want = if *sha == b { &b } else { &fake };
            assert_eq!(&got[i], want, "line {}", i + 1);
        }
    }

    /// A notebook's blame counts the lines of its code view, each line the
    /// commit that wrote it, also when the index moves forward.
    #[test]
    fn a_notebooks_blame_counts_code_view_lines() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let notebook = |cells: &[&str]| {
            let cells: Vec<serde_json::Value> = cells
                .iter()
                .map(|code| {
                    let source: Vec<String> =
                        code.split_inclusive('\n').map(str::to_string).collect();
                    serde_json::json!({"cell_type": "code", "execution_count": 1,
                        "metadata": {}, "outputs": [], "source": source})
                })
                .collect();
            let nb = serde_json::json!({"cells": cells, "metadata": {}, "nbformat": 4});
            std::fs::write(
                d.join("nb.ipynb"),
                serde_json::to_string_pretty(&nb).unwrap(),
            )
            .unwrap();
        };
        let (one, two) = ("a = 1\nb = 2\n", "def f():\n    return a + b\n");
        git(d, &["init", "-q", "-b", "main"], "2024-01-01T10:00:00");
        notebook(&[one]);
        git(d, &["add", "-A"], "2024-01-01T10:00:00");
        git(d, &["commit", "-q", "-m", "first"], "2024-01-01T10:00:00");
        let a = git(d, &["rev-parse", "HEAD"], "2024-01-01T10:00:00");
        notebook(&[one, two]);
        git(d, &["commit", "-q", "-am", "second"], "2024-01-02T10:00:00");
        let b = git(d, &["rev-parse", "HEAD"], "2024-01-02T10:00:00");
        let repo = GitRepo::open(d).unwrap();
        // code view: a = 1, b = 2, a blank line, def f():, return a + b
        let want = [a.as_str(), a.as_str(), a.as_str(), b.as_str(), b.as_str()];
        let dir = tempfile::tempdir().unwrap();
        let mut store = EmbeddedStore::open_for_writing(dir.path()).unwrap();
        update_people(&mut store, &repo, &b, &files_at(&repo, &b)).unwrap();
        assert_eq!(lines(&store, "nb.ipynb"), want);
        let dir = tempfile::tempdir().unwrap();
        let mut moved = EmbeddedStore::open_for_writing(dir.path()).unwrap();
        update_people(&mut moved, &repo, &a, &files_at(&repo, &a)).unwrap();
        assert_eq!(lines(&moved, "nb.ipynb"), [a.as_str(), a.as_str()]);
        update_people(&mut moved, &repo, &b, &files_at(&repo, &b)).unwrap();
        assert_eq!(lines(&moved, "nb.ipynb"), want);
    }

    #[test]
    fn raw_blame_becomes_code_view_blame() {
        let range = |start_line, end_line, commit: &str| BlameRange {
            start_line,
            end_line,
            commit: commit.to_string(),
        };
        let raw = [range(1, 3, "a"), range(7, 9, "c"), range(4, 6, "b")];
        // lines 1-2 from raw 2 and 3, line 3 from raw 5, 4 from raw 6, 5 from
        // raw 20 (no blame), 6 and 7 from raw 7 and 1
        let got = code_view_blame(&raw, &[2, 3, 5, 6, 20, 7, 1]);
        assert_eq!(
            got,
            [
                range(1, 2, "a"),
                range(3, 4, "b"),
                range(6, 6, "c"),
                range(7, 7, "a")
            ]
        );
        assert!(code_view_blame(&[], &[1, 2]).is_empty());
    }
}
