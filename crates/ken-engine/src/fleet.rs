//! Keeping the collection index (`ken_store::Fleet`) in step with each
//! repository's index: after an index run, the files it changed are
//! written there, or, when the collection does not hold the batch the run
//! started from, every file of the repository. The cost follows the
//! change, never the number of repositories.

use ken_store::{ChunkStore, Fleet, FleetCommit, FleetDoc, FleetUpdate, GraphStore, HistoryStore};
use ken_store::{IndexStore, Reflected};
use serde::{Deserialize, Serialize};

use crate::Result;

/// What one update of the collection index did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FleetReport {
    /// Files written (their documents replaced).
    pub files: u64,
    /// Files whose documents went.
    pub deleted: u64,
    /// Every document of the repository was replaced.
    pub whole: bool,
    /// Commit messages added.
    pub commits: u64,
}

/// Bring `name`'s documents in `fleet` to the store's current batch.
/// `changed` and `deletes` are what the run wrote since batch `seq_before`;
/// a collection that does not reflect `seq_before` gets every file.
pub(crate) fn update(
    fleet: &dyn Fleet,
    name: &str,
    store: &(impl ChunkStore + GraphStore + HistoryStore + IndexStore + ?Sized),
    changed: &[String],
    deletes: &[String],
    seq_before: u64,
) -> Result<Option<FleetReport>> {
    let seq = store.batch_seq()?;
    let reflected = fleet.reflected()?.get(name).copied();
    let (known, newest) = store.commit_stats()?;
    let was = reflected.unwrap_or_default();
    if reflected.is_some() && was.seq == seq && was.commits == known {
        return Ok(None);
    }
    let whole = reflected.map(|r| r.seq) != Some(seq_before);
    let files_changed = whole || was.seq != seq;
    let paths: Vec<String> = if !files_changed {
        Vec::new()
    } else if whole {
        store
            .files()?
            .into_iter()
            .filter(|f| f.skip.is_none())
            .map(|f| f.path)
            .collect()
    } else {
        changed.to_vec()
    };
    // definitions as the graph has them (a small file is one chunk, with
    // no symbol of its own)
    let facts: std::collections::HashMap<String, (ken_core::Language, String)> = store
        .graph_facts(Some(&paths))?
        .into_iter()
        .map(|f| {
            let mut names: Vec<String> = f
                .definitions
                .iter()
                .flat_map(|d| [d.name.clone(), d.qualname.clone()])
                .collect();
            names.sort_unstable();
            names.dedup();
            (f.path, (f.language, names.join(" ")))
        })
        .collect();
    let mut owned: Vec<(String, &str, String, String)> = Vec::with_capacity(paths.len());
    let mut gone: Vec<String> = if whole { Vec::new() } else { deletes.to_vec() };
    for path in paths {
        let Some(text) = store.file_text(&path)? else {
            // skipped by this run: nothing to find there
            gone.push(path);
            continue;
        };
        let (lang, symbols) = match facts.get(&path) {
            Some((lang, names)) => (lang.name(), names.clone()),
            None => (ken_core::Language::from_path(&path).name(), String::new()),
        };
        owned.push((path, lang, text, symbols));
    }
    let docs: Vec<FleetDoc<'_>> = owned
        .iter()
        .map(|(path, lang, body, symbols)| FleetDoc {
            path,
            lang,
            body,
            symbols,
        })
        .collect();
    // the commits no older than the newest the collection holds (those of
    // its last second again: several commits share one), or all of them
    // when it holds none or the repository's files are replaced
    let since = if whole { None } else { was.commits_until };
    let history: Vec<_> = store
        .all_commits()?
        .into_iter()
        .filter(|c| since.is_none_or(|t| c.committer_time >= t))
        .collect();
    let commits: Vec<FleetCommit<'_>> = history
        .iter()
        .map(|c| FleetCommit {
            sha: &c.sha,
            message: if c.message.is_empty() {
                &c.summary
            } else {
                &c.message
            },
        })
        .collect();
    fleet.update(
        FleetUpdate {
            repo: name,
            replace_all: whole,
            deletes: &gone,
            replace_commits: since.is_none(),
            reflects: Reflected {
                seq,
                commits_until: newest.or(was.commits_until),
                commits: known,
            },
        },
        &docs,
        &commits,
    )?;
    Ok(Some(FleetReport {
        files: docs.len() as u64,
        deleted: gone.len() as u64,
        whole,
        commits: commits.len() as u64,
    }))
}
