//! The scope stage: what a search may return, from its path globs and its
//! people and time filters.

use std::collections::HashSet;

use globset::{Glob, GlobSetBuilder};
use ken_core::Filters;
use ken_store::{HistoryStore, IndexStore};

use super::{SearchEnv, SearchRequest};
use crate::{EngineError, Result, people};

/// What a search may return: the paths the path globs allow, narrowed to
/// code whose lines come from commits matching the people and time
/// filters (whose shas are returned too); None: no limit.
#[allow(clippy::type_complexity)]
pub(super) fn scope(
    store: &(impl HistoryStore + IndexStore + ?Sized),
    req: &SearchRequest,
    env: SearchEnv<'_>,
    notes: &mut Vec<String>,
) -> Result<(Option<Vec<String>>, Option<HashSet<String>>)> {
    let mut allowed = allowed_paths(store, &req.filters)?;
    // people and time filters: only code whose lines come from matching commits
    let people_filter = match (&req.filters.author, req.filters.since, req.filters.until) {
        (None, None, None) => None,
        (author, since, until) => {
            let Some(ids) = env.identities else {
                return Err(EngineError::internal("author filters need identities"));
            };
            let shas: HashSet<String> =
                people::commits_by(store, ids, author.as_deref(), since, until)?
                    .into_iter()
                    .collect();
            let list: Vec<String> = shas.iter().cloned().collect();
            let paths = store.paths_blamed_on(&list)?;
            allowed = Some(match allowed {
                Some(a) => a.into_iter().filter(|p| paths.contains(p)).collect(),
                None => paths.into_iter().collect(),
            });
            if shas.is_empty() {
                notes.push("no commits match the author/time filters".into());
            }
            Some(shas)
        }
    };
    Ok((allowed, people_filter))
}

/// Resolve path globs to the set of indexed paths they allow.
fn allowed_paths(
    store: &(impl IndexStore + ?Sized),
    filters: &Filters,
) -> Result<Option<Vec<String>>> {
    if filters.path_globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in &filters.path_globs {
        let glob = Glob::new(g)
            .map_err(|e| EngineError::bad_input(format!("bad glob `{g}` in {{--path}}: {e}")))?;
        b.add(glob);
        // `src/` or `src` means everything under it too
        if !g.contains('*') {
            let dir = format!("{}/**", g.trim_end_matches('/'));
            if let Ok(glob) = Glob::new(&dir) {
                b.add(glob);
            }
        }
    }
    let set = b
        .build()
        .map_err(|e| EngineError::bad_input(e.to_string()))?;
    Ok(Some(
        store
            .files()?
            .into_iter()
            .filter(|f| f.skip.is_none() && set.is_match(&f.path))
            .map(|f| f.path)
            .collect(),
    ))
}
