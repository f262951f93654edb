//! An open repository: its store, opened once for reading, with what every
//! query of it needs loaded once too (identities, the vector index of the
//! engine's model, the code graph). The engine keeps one per repository
//! and replaces it when a writer commits (see [`OpenRepo::is_current`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ken_source::Identities;
use ken_store::{DynStore, IndexState, StoreProvider};
use serde::Serialize;

use crate::churn::{FileChurn, Stamp};
use crate::graph::{LoadedGraph, load_graph};
use crate::issue_template::IssueTemplate;
use crate::params::RankParams;
use crate::question::Question;
use crate::semantic::{self, Coverage, EmbedText, VectorView};
use crate::{Result, people};

/// How far history and blame have come (they run after the lexical index,
/// so searches work before they finish).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PeopleProgress {
    /// Commits in the index's history.
    pub commits: u64,
    /// Indexed files whose blame is stored for their current content.
    pub files_blamed: usize,
    /// Indexed files (not skipped).
    pub files: usize,
}

impl PeopleProgress {
    /// Blame is missing for some files (a run is under way or was stopped).
    pub fn partial(&self) -> bool {
        self.commits > 0 && self.files_blamed < self.files
    }
}

/// How often an open repository asks its store whether a writer committed.
const CHECK_EVERY: Duration = Duration::from_millis(200);

pub struct OpenRepo {
    pub name: String,
    pub store: DynStore,
    /// The index state when it was opened.
    pub state: IndexState,
    /// Identities: `.mailmap`, `$KEN_HOME/identities.toml`, the repository's own.
    pub ids: Identities,
    /// The store's data version when it was opened.
    version: u64,
    opened: Instant,
    /// Milliseconds after `opened` of the last version check.
    checked_ms: AtomicU64,
    vectors: Mutex<HashMap<String, Option<Arc<VectorView>>>>,
    graph: OnceLock<Arc<LoadedGraph>>,
    coverage: OnceLock<Vec<Coverage>>,
    people: OnceLock<PeopleProgress>,
    /// The churn, with the stamp of the history it was read from (None:
    /// read while a run was pending, never shelved).
    churn: OnceLock<(Arc<FileChurn>, Option<Stamp>)>,
    template: OnceLock<Arc<IssueTemplate>>,
}

impl OpenRepo {
    /// Open the index of `key` for reading; `key` names it when its state
    /// does not (an index whose first run has not finished).
    pub fn open(home: &Path, stores: &dyn StoreProvider, key: &str) -> Result<OpenRepo> {
        let store = stores.open(key)?;
        // read the version first: a commit after this point makes us stale
        let version = store.data_version()?;
        let state = store.state()?;
        let ids = people::observed_identities(home, &*store, state.commit_time)?;
        Ok(OpenRepo {
            name: state.name.clone().unwrap_or_else(|| key.into()),
            store,
            state,
            ids,
            version,
            opened: Instant::now(),
            checked_ms: AtomicU64::new(0),
            vectors: Mutex::new(HashMap::new()),
            graph: OnceLock::new(),
            coverage: OnceLock::new(),
            people: OnceLock::new(),
            churn: OnceLock::new(),
            template: OnceLock::new(),
        })
    }

    /// False once a writer has committed since this was opened (checked at
    /// most every 200 ms; errors count as stale so the caller reopens).
    pub fn is_current(&self) -> bool {
        let now = self.opened.elapsed().as_millis() as u64;
        let last = self.checked_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < CHECK_EVERY.as_millis() as u64 && last != 0 {
            return true;
        }
        self.checked_ms.store(now.max(1), Ordering::Relaxed);
        matches!(self.store.data_version(), Ok(v) if v == self.version)
    }

    /// The time searches of this repository count ages from: its indexed
    /// commit's time (so results do not change as the clock moves).
    pub fn now(&self) -> i64 {
        self.state.commit_time.unwrap_or_else(crate::time::now)
    }

    /// The vector index of `model` (None: nothing embedded with it yet).
    pub fn vectors(&self, model: &str) -> Result<Option<Arc<VectorView>>> {
        let mut cache = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = cache.get(model) {
            return Ok(v.clone());
        }
        let view = semantic::load_vectors(&*self.store, model, &self.state)?.map(Arc::new);
        cache.insert(model.to_string(), view.clone());
        Ok(view)
    }

    /// Embedding coverage of every model with vectors (computed once: it
    /// reads every chunk).
    /// History and blame progress, counted once per opened version.
    pub fn people_progress(&self) -> Result<PeopleProgress> {
        if let Some(p) = self.people.get() {
            return Ok(*p);
        }
        let files: Vec<(String, String)> = self
            .store
            .files()?
            .into_iter()
            .filter(|f| f.skip.is_none())
            .map(|f| (f.path, f.id))
            .collect();
        let commits = self.store.commit_stats()?.0;
        let missing = if commits == 0 {
            files.len()
        } else {
            self.store.blame_needed(&files)?.len()
        };
        let p = PeopleProgress {
            commits,
            files_blamed: files.len() - missing.min(files.len()),
            files: files.len(),
        };
        Ok(*self.people.get_or_init(|| p))
    }

    pub fn coverage(&self, variant: EmbedText) -> Result<Vec<Coverage>> {
        if let Some(c) = self.coverage.get() {
            return Ok(c.clone());
        }
        let c = semantic::coverage(&*self.store, variant)?;
        Ok(self.coverage.get_or_init(|| c).clone())
    }

    /// File history for the churn and fix priors, loaded on first use and
    /// only when `rank` weighs them.
    pub fn churn(&self, rank: &RankParams) -> Result<Option<Arc<FileChurn>>> {
        if !rank.uses_history() {
            return Ok(None);
        }
        if let Some((c, _)) = self.churn.get() {
            return Ok(Some(c.clone()));
        }
        // the stamp first: history written meanwhile makes it older than
        // the churn, which only misses a later reuse
        let stamp = self.stamp()?;
        let c = Arc::new(load_churn(&*self.store)?);
        Ok(Some(self.churn.get_or_init(|| (c, stamp)).0.clone()))
    }

    /// The churn read so far with the stamp it was read under (None: not
    /// yet asked for, or read while a run was pending).
    pub(crate) fn stamped_churn(&self) -> Option<(Stamp, Arc<FileChurn>)> {
        let (churn, stamp) = self.churn.get()?;
        Some((stamp.clone()?, churn.clone()))
    }

    /// Start with `churn`, read by an earlier opening of the same index
    /// under `stamp`, the stamp of this one.
    pub(crate) fn seed_churn(&self, stamp: Stamp, churn: Arc<FileChurn>) {
        let _ = self.churn.set((churn, Some(stamp)));
    }

    /// What the index's history is now (None while a run is pending).
    pub(crate) fn stamp(&self) -> Result<Option<Stamp>> {
        Stamp::of(&self.state, &*self.store)
    }

    /// The repository's issue templates, read on first use.
    pub fn template(&self) -> Result<Arc<IssueTemplate>> {
        if let Some(t) = self.template.get() {
            return Ok(t.clone());
        }
        let t = Arc::new(IssueTemplate::load(&*self.store)?);
        Ok(self.template.get_or_init(|| t).clone())
    }

    /// The templates a search of `query` reads it without: none for a
    /// question too short to be a bug report ([`Question::report`]) or with
    /// `issue_template_out` off, so other searches never read them.
    pub fn template_for(
        &self,
        question: &Question,
        rank: &RankParams,
    ) -> Result<Option<Arc<IssueTemplate>>> {
        if !rank.issue_template_out || !question.report {
            return Ok(None);
        }
        self.template().map(Some)
    }

    /// The code graph, loaded on first use.
    pub fn graph(&self) -> Result<Arc<LoadedGraph>> {
        if let Some(g) = self.graph.get() {
            return Ok(g.clone());
        }
        let g = Arc::new(load_graph(&*self.store)?);
        Ok(self.graph.get_or_init(|| g).clone())
    }
}

/// The history of every indexed file, for the churn and fix priors.
pub fn load_churn(store: &dyn ken_store::Store) -> Result<FileChurn> {
    FileChurn::load(store, &indexed_paths(store)?, store.state()?.commit_time)
}

/// The paths of the files the index holds (skipped files left out).
pub fn indexed_paths(store: &dyn ken_store::Store) -> Result<Vec<String>> {
    Ok(store
        .files()?
        .into_iter()
        .filter(|f| f.skip.is_none())
        .map(|f| f.path)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ken_core::{FileSyntax, Language};
    use ken_store::{
        Batch, BlameLines, CommitRecord, EmbeddedProvider, FileBlameRecord, FileContent, FileUpdate,
    };

    fn file(path: &str, id: &str) -> FileUpdate {
        FileUpdate {
            path: path.to_string(),
            id: id.to_string(),
            language: Language::Python,
            size: 2,
            content: FileContent::Indexed {
                text: "x = 1\n".to_string(),
                syntax: FileSyntax::default(),
            },
        }
    }

    #[test]
    fn people_progress_counts_what_blame_covers() {
        let home = tempfile::tempdir().unwrap();
        let provider = EmbeddedProvider::new(home.path().join("repos"));
        {
            let mut w = provider.open_for_writing("shop").unwrap();
            w.write_batch(Batch {
                upserts: vec![file("a.py", "aaa"), file("b.py", "bbb")],
                deletes: Vec::new(),
            })
            .unwrap();
            w.add_commits(&[CommitRecord {
                sha: "c1".into(),
                author_name: "Ada".into(),
                author_email: "ada@example.com".into(),
                ..CommitRecord::default()
            }])
            .unwrap();
            w.put_blame(&[FileBlameRecord {
                path: "a.py".into(),
                blob_id: "aaa".into(),
                method: "exact".into(),
                ranges: vec![BlameLines {
                    start_line: 1,
                    end_line: 1,
                    sha: "c1".into(),
                }],
            }])
            .unwrap();
        }
        let repo = OpenRepo::open(home.path(), &provider, "shop").unwrap();
        let p = repo.people_progress().unwrap();
        assert_eq!((p.commits, p.files_blamed, p.files), (1, 1, 2));
        assert!(p.partial());
    }
}
