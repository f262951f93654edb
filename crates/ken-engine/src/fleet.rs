//! Keeping the collection index (`ken_store::Fleet`) in step with each
//! repository's index: after an index run, the files it changed are
//! written there, or, when the collection does not hold the batch the run
//! started from, every file of the repository. The cost follows the
//! change, never the number of repositories.

use ken_store::{Fleet, FleetDoc, FleetUpdate, Store};
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
}

/// Bring `name`'s documents in `fleet` to the store's current batch.
/// `changed` and `deletes` are what the run wrote since batch `seq_before`;
/// a collection that does not reflect `seq_before` gets every file.
pub(crate) fn update(
    fleet: &dyn Fleet,
    name: &str,
    store: &dyn Store,
    changed: &[String],
    deletes: &[String],
    seq_before: u64,
) -> Result<Option<FleetReport>> {
    let seq = store.batch_seq()?;
    let reflected = fleet.reflected()?.get(name).copied();
    if reflected == Some(seq) {
        return Ok(None);
    }
    let whole = reflected != Some(seq_before);
    let paths: Vec<String> = if whole {
        store
            .files()?
            .into_iter()
            .filter(|f| f.skip.is_none())
            .map(|f| f.path)
            .collect()
    } else {
        changed.to_vec()
    };
    let mut owned: Vec<(String, &str, String, String)> = Vec::with_capacity(paths.len());
    let mut gone: Vec<String> = if whole { Vec::new() } else { deletes.to_vec() };
    for path in paths {
        let chunks = store.chunks_of_file(&path)?;
        let Some(text) = store.file_text(&path)? else {
            // skipped by this run: nothing to find there
            gone.push(path);
            continue;
        };
        let lang = chunks
            .first()
            .map_or_else(|| ken_core::Language::from_path(&path), |c| c.language)
            .name();
        let mut symbols: Vec<&str> = chunks
            .iter()
            .flat_map(|c| [c.symbol.as_deref(), c.qualname.as_deref()])
            .flatten()
            .collect();
        symbols.sort_unstable();
        symbols.dedup();
        let symbols = symbols.join(" ");
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
    fleet.update(
        FleetUpdate {
            repo: name,
            replace_all: whole,
            deletes: &gone,
            seq,
        },
        &docs,
    )?;
    Ok(Some(FleetReport {
        files: docs.len() as u64,
        deleted: gone.len() as u64,
        whole,
    }))
}
