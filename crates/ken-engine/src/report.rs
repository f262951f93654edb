//! `ken report`: what the index already holds (commits
//! with their files, blame, the code graph, identities), the period's
//! diffs read from git for its commits only (no history walk), secrets
//! scanned in the indexed files and in the lines the period added, and the
//! imported tickets — gathered into a `ken_report::ReportInput`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use ken_core::{ChunkKind, Ticket};
use ken_report::secrets::Scanner;
use ken_report::{
    ClassIn, CommitIn, FileChangeIn, FileIn, HunkIn, Period, PersonIn, Report, ReportInput,
    ReportParams, SecretOrigin,
};
use ken_source::{DiffOptions, FileDiff, GitRepo};
use ken_store::{BlameLines, ChunkStore, CommitRecord, FileRecord, GraphStore, HistoryStore};

use crate::repo::OpenRepo;
use crate::time::parse_time;
use crate::{EngineError, Result, Settings};

/// What to report on.
#[derive(Debug, Clone, Default)]
pub struct ReportRequest {
    pub repo: Option<String>,
    /// A date, an age, `all`, or a commit (the period starts after it).
    pub since: Option<String>,
    /// A date, an age, or a commit (the period ends with it). Default: the
    /// indexed commit.
    pub until: Option<String>,
    pub top: Option<usize>,
    /// Ask the configured chat model for a written summary.
    pub narrative: bool,
}

/// Default period: 30 days up to the indexed commit.
const DEFAULT_DAYS: i64 = 30;

/// The period's bounds, from what the user wrote. Ages (`30d`, `1y`) count
/// back from the indexed commit, the index's "now" (from the clock for a
/// folder outside git).
pub fn resolve_period(
    req: &ReportRequest,
    git: Option<&GitRepo>,
    indexed_time: Option<i64>,
    now: i64,
) -> Result<Period> {
    let now = indexed_time.map_or(now, |t| t + 1);
    let bound = |s: &str| -> Result<i64> {
        match parse_time(s, now) {
            Ok(t) => Ok(t),
            Err(e) => match git.and_then(|g| g.resolve(s).ok()) {
                // A commit: the period starts after it, or ends with it.
                Some(c) => Ok(c.time + 1),
                None => Err(e.with_hint(
                    "give a date (2024-05-01), an age (30d, 2w, 6m, 1y), `all`, or a commit of the repository",
                )),
            },
        }
    };
    let until = match req.until.as_deref() {
        Some(s) => bound(s)?,
        None => now,
    };
    let since = match req.since.as_deref() {
        Some("all") => i64::MIN / 4,
        Some(s) => bound(s)?,
        None => until - DEFAULT_DAYS * 86_400,
    };
    if since >= until {
        return Err(EngineError::bad_input(format!(
            "the period is empty: it starts ({}) at or after its end ({})",
            crate::time::format_date(since),
            crate::time::format_date(until)
        ))
        .with_hint("{--since} must come before {--until}"));
    }
    Ok(Period {
        since,
        until,
        since_label: req
            .since
            .clone()
            .unwrap_or_else(|| format!("{DEFAULT_DAYS} days before the end")),
        until_label: req.until.clone().unwrap_or_else(|| match indexed_time {
            Some(_) => "the indexed commit".to_string(),
            None => "now".to_string(),
        }),
    })
}

/// The git repository an index was built from, if it is still readable.
pub fn source_repo(settings: &Settings, repo: &OpenRepo) -> Option<GitRepo> {
    let source = repo.state.source.as_deref()?;
    let path = if ken_source::is_url(source) {
        crate::home::clone_dir(&settings.home, &repo.name)
    } else {
        PathBuf::from(source)
    };
    GitRepo::open(&path).ok()
}

/// Build a report of one repository.
pub fn report(
    settings: &Settings,
    repo: &OpenRepo,
    tickets: Vec<Ticket>,
    req: &ReportRequest,
    now: i64,
) -> Result<Report> {
    let git = source_repo(settings, repo);
    let mut period = resolve_period(req, git.as_ref(), repo.state.commit_time, now)?;
    let store = &*repo.store;
    // The indexed files, read once: skipped ones, code figures, secrets.
    let file_records = store.files()?;
    let skipped = file_records
        .iter()
        .filter(|f| f.skip.is_some())
        .map(|f| f.path.clone())
        .collect();
    let mut notes = Vec::new();
    let mut people = People::new(repo);
    let mut records = store.all_commits()?;
    // Files of every commit up to the period's end (god objects count them).
    let shas: Vec<String> = records
        .iter()
        .filter(|c| c.committer_time < period.until)
        .map(|c| c.sha.clone())
        .collect();
    let with_files = store.commits(&shas, true)?;
    for r in &mut records {
        if let Some(full) = with_files.get(&r.sha) {
            r.files = full.files.clone();
        }
    }
    // `--since all`: the period starts with the oldest commit.
    if req.since.as_deref() == Some("all") {
        let oldest = records.iter().map(|c| c.committer_time).min();
        period.since = oldest.unwrap_or(period.until - 1).min(period.until - 1);
    }
    if records.is_empty() {
        notes.push(if git.is_none() {
            "no history: the index is of a folder outside git, so only the secrets in its files are reported".to_string()
        } else {
            "no history in the index yet: run `ken index` again to finish it".to_string()
        });
    }
    let in_period: Vec<&CommitRecord> = records
        .iter()
        .filter(|c| c.committer_time >= period.since && c.committer_time < period.until)
        .collect();
    let diffs = match &git {
        Some(g) => period_diffs(g, &in_period),
        None => {
            if repo.state.source.is_some() && !in_period.is_empty() {
                notes.push(
                    "the repository's git objects are not readable here: lines added and removed are unknown"
                        .to_string(),
                );
            }
            HashMap::new()
        }
    };
    let scanner = Scanner::new();
    let mut diff_secrets = Vec::new();
    let mut commits = Vec::with_capacity(records.len());
    for r in &records {
        let person = people.of(&r.author_name, &r.author_email);
        let files = match diffs.get(&r.sha) {
            Some(files) => {
                for f in files.iter().filter(|f| scanner.wants_path(&f.file.path)) {
                    let lines = f.added_lines.iter().map(|(n, t)| (*n, t.as_str()));
                    for hit in scanner.scan_lines(&f.file.path, lines) {
                        diff_secrets.push((r.sha.clone(), hit));
                    }
                }
                files.iter().map(change_of_diff).collect()
            }
            None => r
                .files
                .iter()
                .map(|(path, status, old)| FileChangeIn {
                    path: path.clone(),
                    old_path: old.clone(),
                    status: status.clone(),
                    added: None,
                    removed: None,
                    hunks: Vec::new(),
                })
                .collect(),
        };
        commits.push(CommitIn {
            sha: r.sha.clone(),
            person,
            author_time: r.author_time,
            committer_time: r.committer_time,
            summary: r.summary.clone(),
            message: r.message.clone(),
            parents: r.parents.len(),
            files,
        });
    }
    let persons: HashMap<&str, &str> = commits
        .iter()
        .map(|c| (c.sha.as_str(), c.person.as_str()))
        .collect();
    let (files, classes, blame) = code_figures(store, &file_records, &persons)?;
    if blame.is_empty() && !files.is_empty() {
        notes.push("no blame in the index yet: ownership and god objects wait for it (`ken status` shows its progress)".to_string());
    }
    let head_secrets = head_secrets(store, &file_records, &scanner, &blame, &persons)?;
    let input = ReportInput {
        repo: repo.name.clone(),
        indexed_commit: repo.state.commit.clone(),
        period,
        commits,
        people: people.list,
        files,
        skipped,
        classes,
        head_secrets,
        diff_secrets,
        tickets,
        notes,
    };
    let params = ReportParams {
        top: req.top.unwrap_or(10).clamp(1, 100),
        ..ReportParams::default()
    };
    Ok(ken_report::build(&input, &params))
}

fn change_of_diff(f: &FileDiff) -> FileChangeIn {
    FileChangeIn {
        path: f.file.path.clone(),
        old_path: f.file.old_path.clone(),
        status: f.file.status.name().to_string(),
        added: f.file.insertions,
        removed: f.file.deletions,
        hunks: f
            .hunks
            .iter()
            .map(|h| HunkIn {
                old_start: h.old_start,
                old_len: h.old_len,
                new_start: h.new_start,
                new_len: h.new_len,
            })
            .collect(),
    }
}

/// The period's commits diffed on two threads (the machine's cores).
fn period_diffs(git: &GitRepo, commits: &[&CommitRecord]) -> HashMap<String, Vec<FileDiff>> {
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    let opts = DiffOptions {
        added_text: true,
        ..DiffOptions::default()
    };
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let per = shas.len().div_ceil(threads).max(1);
    let mut out = HashMap::with_capacity(shas.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = shas
            .chunks(per)
            .map(|part| {
                let git = git.clone();
                s.spawn(move || (part, git.commit_diffs(part, &opts)))
            })
            .collect();
        for h in handles {
            if let Ok((part, diffs)) = h.join() {
                for (sha, d) in part.iter().zip(diffs) {
                    // A commit whose objects are missing keeps its file list.
                    if let Ok(d) = d {
                        out.insert(sha.to_string(), d);
                    }
                }
            }
        }
    });
    out
}

/// People by identity, collected as commits are read.
struct People<'a> {
    repo: &'a OpenRepo,
    seen: HashSet<String>,
    list: Vec<PersonIn>,
}

impl<'a> People<'a> {
    fn new(repo: &'a OpenRepo) -> People<'a> {
        People {
            repo,
            seen: HashSet::new(),
            list: Vec::new(),
        }
    }

    fn of(&mut self, name: &str, email: &str) -> String {
        let p = self.repo.ids.resolve(name, email);
        if self.seen.insert(p.id.clone()) {
            self.list.push(PersonIn {
                id: p.id.clone(),
                name: p.display_name.clone(),
                email: email.to_string(),
                bot: p.is_bot,
            });
        }
        p.id
    }
}

type Blame = HashMap<String, Vec<BlameLines>>;

/// Files and classes of the indexed commit with their figures, and the blame read.
fn code_figures(
    store: &(impl GraphStore + HistoryStore + ?Sized),
    records: &[FileRecord],
    persons: &HashMap<&str, &str>,
) -> Result<(Vec<FileIn>, Vec<ClassIn>, Blame)> {
    let paths: Vec<String> = records
        .iter()
        .filter(|f| f.skip.is_none())
        .map(|f| f.path.clone())
        .collect();
    let blame = store.blame_of_paths(&paths)?;
    let blame: Blame = blame.into_iter().filter(|(_, b)| !b.is_empty()).collect();
    // Fan-in: distinct other files referring to a file, or to a class or its members.
    let edges = store.edges()?;
    let mut file_in: HashMap<&str, HashSet<&str>> = HashMap::new();
    // path → qualname → referring files
    let mut def_in: HashMap<&str, HashMap<&str, HashSet<&str>>> = HashMap::new();
    for e in &edges {
        if e.from.path == e.to.path {
            continue;
        }
        file_in.entry(&e.to.path).or_default().insert(&e.from.path);
        def_in
            .entry(&e.to.path)
            .or_default()
            .entry(&e.to.qualname)
            .or_default()
            .insert(&e.from.path);
    }
    let owners = |path: &str, lo: u32, hi: u32| -> (Vec<(String, u32)>, u32) {
        let mut by: HashMap<&str, u32> = HashMap::new();
        let mut shas = HashSet::new();
        for b in blame.get(path).into_iter().flatten() {
            let (s, e) = (b.start_line.max(lo), b.end_line.min(hi));
            if s > e {
                continue;
            }
            shas.insert(b.sha.as_str());
            let who = persons.get(b.sha.as_str()).copied().unwrap_or("unknown");
            *by.entry(who).or_default() += e - s + 1;
        }
        let mut v: Vec<(String, u32)> = by.into_iter().map(|(p, n)| (p.to_string(), n)).collect();
        v.sort();
        (v, shas.len() as u32)
    };
    let lines_of = |path: &str| -> u32 {
        blame
            .get(path)
            .and_then(|b| b.iter().map(|r| r.end_line).max())
            .unwrap_or(0)
    };
    let mut files = Vec::with_capacity(paths.len());
    for p in &paths {
        let (o, commits) = owners(p, 1, u32::MAX);
        files.push(FileIn {
            path: p.clone(),
            lines: lines_of(p),
            fan_in: file_in.get(p.as_str()).map_or(0, |s| s.len() as u32),
            owners: o,
            blame_commits: commits,
        });
    }
    let mut classes = Vec::new();
    for facts in store.graph_facts(None)? {
        for d in &facts.definitions {
            if !matches!(
                d.kind,
                ChunkKind::Class | ChunkKind::Struct | ChunkKind::Trait | ChunkKind::Interface
            ) {
                continue;
            }
            // References to the class and to its members.
            let prefix_dot = format!("{}.", d.qualname);
            let prefix_colons = format!("{}::", d.qualname);
            let mut from: HashSet<&str> = HashSet::new();
            for (qual, srcs) in def_in.get(facts.path.as_str()).into_iter().flatten() {
                if *qual == d.qualname
                    || qual.starts_with(&prefix_dot)
                    || qual.starts_with(&prefix_colons)
                {
                    from.extend(srcs.iter().copied());
                }
            }
            let (o, commits) = owners(&facts.path, d.start_line, d.end_line);
            classes.push(ClassIn {
                path: facts.path.clone(),
                name: d.qualname.clone(),
                start_line: d.start_line,
                end_line: d.end_line,
                fan_in: from.len() as u32,
                owners: o,
                commits,
            });
        }
    }
    Ok((files, classes, blame))
}

/// Secrets in the indexed files, each with the commit that last changed its line.
fn head_secrets(
    store: &dyn ChunkStore,
    records: &[FileRecord],
    scanner: &Scanner,
    blame: &Blame,
    persons: &HashMap<&str, &str>,
) -> Result<Vec<(ken_report::secrets::SecretHit, Option<SecretOrigin>)>> {
    let mut out = Vec::new();
    for f in records {
        if f.skip.is_some() || !scanner.wants_path(&f.path) {
            continue;
        }
        let Some(text) = store.file_text(&f.path)? else {
            continue;
        };
        for hit in scanner.scan_text(&f.path, &text) {
            // A key's header line rarely changes when the key does: blame
            // its first body line.
            let line = hit.line + u32::from(hit.rule == "private-key");
            let origin = blame.get(&f.path).and_then(|b| {
                b.iter()
                    .find(|r| r.start_line <= line && line <= r.end_line)
                    .map(|r| SecretOrigin {
                        sha: r.sha.clone(),
                        person: persons
                            .get(r.sha.as_str())
                            .unwrap_or(&"unknown")
                            .to_string(),
                    })
            });
            out.push((hit, origin));
        }
    }
    Ok(out)
}

/// Ask the chat model for a written summary and check every statement.
pub fn narrate(chat: &dyn ken_llm::ChatModel, report: &mut Report) -> Result<()> {
    use ken_llm::message::Message;
    let (system, user) = ken_report::narrative::prompt(report);
    let reply = chat
        .complete(&[Message::system(system), Message::user(user)])
        .map_err(|e| EngineError::unavailable(format!("the chat model failed: {e}")))?;
    let model = reply
        .model
        .clone()
        .unwrap_or_else(|| "chat model".to_string());
    report.narrative = Some(ken_report::narrative::check(report, &model, &reply.text));
    Ok(())
}
