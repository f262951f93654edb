//! The embedded store's vector search: per model, one index file
//! (`vectors/<model>.vec`, the `ken-vectors` format: exact int8 scan with
//! f32 re-scoring, or IVF lists above [`EXACT_LIMIT`] rows) and its
//! metadata (`vectors/<model>.json`), both replaced by rename. The files are
//! private to this store; the seam speaks of chunk ids and similarities.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ken_vectors::{AnyIndex, FlatIndex, IvfIndex, IvfParams, VectorSet};

use crate::{Result, StoreError, VectorMeta};

/// Above this many rows the approximate (IVF) index is built.
pub const EXACT_LIMIT: usize = 1_000_000;

/// Loaded indexes by model: a store is reopened when a writer commits, so
/// they cannot go stale for long; the writer drops its own on rewrite.
#[derive(Default)]
pub(crate) struct Loaded(Mutex<HashMap<String, Option<Arc<AnyIndex>>>>);

fn other(e: impl std::fmt::Display) -> StoreError {
    StoreError::Other(e.to_string())
}

/// The files of `model`'s index, without extension (a model id
/// `local:all-MiniLM-L6-v2:abc` is the file name `local_all-MiniLM-L6-v2_abc`).
fn base(dir: &Path, model: &str) -> PathBuf {
    let name: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join("vectors").join(name)
}

/// Build `model`'s index from `vectors` (key to vector) for `rows` and
/// write it; returns its metadata.
pub(crate) fn write(
    dir: &Path,
    loaded: &Loaded,
    model: &str,
    rows: &[(u64, String)],
    vectors: &HashMap<String, Vec<f32>>,
    chunks: usize,
    batch_seq: u64,
) -> Result<VectorMeta> {
    let dim = vectors.values().next().map(Vec::len).unwrap_or(0);
    let mut set = VectorSet::new(dim.max(1));
    for (id, key) in rows {
        if let Some(v) = vectors.get(key)
            && v.len() == dim
        {
            set.push(*id, v);
        }
    }
    let index = if set.len() > EXACT_LIMIT {
        AnyIndex::Ivf(IvfIndex::build(&set, IvfParams::default()))
    } else {
        AnyIndex::Flat(FlatIndex::build(&set))
    };
    let meta = VectorMeta::built_now(model, dim, set.len(), chunks, batch_seq);
    let base = base(dir, model);
    std::fs::create_dir_all(base.parent().expect("vectors/ has a parent"))?;
    ken_vectors::write(&base.with_extension("vec"), &index).map_err(other)?;
    let json = serde_json::to_string(&meta).map_err(other)?;
    let tmp = base.with_extension("json.tmp");
    std::fs::write(&tmp, json)?;
    std::fs::rename(tmp, base.with_extension("json"))?;
    loaded
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(model);
    Ok(meta)
}

pub(crate) fn meta(dir: &Path, model: &str) -> Result<Option<VectorMeta>> {
    let Ok(json) = std::fs::read_to_string(base(dir, model).with_extension("json")) else {
        return Ok(None);
    };
    Ok(Some(serde_json::from_str(&json).map_err(other)?))
}

/// `model`'s index, mapped once.
fn index(dir: &Path, loaded: &Loaded, model: &str) -> Result<Option<Arc<AnyIndex>>> {
    let mut map = loaded.0.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = map.get(model) {
        return Ok(found.clone());
    }
    let path = base(dir, model).with_extension("vec");
    let found = if path.exists() {
        Some(Arc::new(ken_vectors::open(&path).map_err(other)?))
    } else {
        None
    };
    map.insert(model.to_string(), found.clone());
    Ok(found)
}

pub(crate) fn chunk_ids(dir: &Path, loaded: &Loaded, model: &str) -> Result<Vec<u64>> {
    let Some(index) = index(dir, loaded, model)? else {
        return Ok(Vec::new());
    };
    let mut ids = index.ids().to_vec();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// `allowed`: the chunk ids a filter lets through (None: all).
pub(crate) fn search(
    dir: &Path,
    loaded: &Loaded,
    model: &str,
    query: &[f32],
    k: usize,
    allowed: Option<&HashSet<u64>>,
) -> Result<Vec<(u64, f32)>> {
    let Some(index) = index(dir, loaded, model)? else {
        return Ok(Vec::new());
    };
    if index.is_empty() || k == 0 {
        return Ok(Vec::new());
    }
    // the index holds unit vectors: a unit query makes dot products cosines
    let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
    let unit: Vec<f32> = query
        .iter()
        .map(|x| x / norm.max(f32::MIN_POSITIVE))
        .collect();
    let query = unit.as_slice();
    if allowed.is_some_and(|a| a.is_empty()) {
        return Ok(Vec::new());
    }
    // a long chunk has several rows, a filter drops some: ask for more
    // until k are left (at worst every row: the index is an exact scan)
    let mut want = k.saturating_mul(2);
    loop {
        let rows = index.search(query, want).map_err(other)?;
        let exhausted = rows.len() < want;
        let mut seen = HashSet::new();
        let hits: Vec<(u64, f32)> = rows
            .into_iter()
            .filter(|n| allowed.is_none_or(|a| a.contains(&n.id)))
            .filter(|n| seen.insert(n.id))
            .take(k)
            .map(|n| (n.id, n.score))
            .collect();
        if hits.len() >= k || exhausted {
            return Ok(hits);
        }
        want = want.saturating_mul(2);
    }
}
