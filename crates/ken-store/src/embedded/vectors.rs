//! The embedded store's vector search: per model, one index file
//! (`vectors/<model>.vec`, the `ken-vectors` format: an exact int8 scan,
//! or IVF lists above [`EXACT_LIMIT`] rows), the key of each of its rows
//! (`vectors/<model>.keys`) and its metadata (`vectors/<model>.json`), each
//! replaced by rename. The files are private to this store; the seam speaks
//! of chunk ids and similarities.
//!
//! The index file is the only lasting copy of the vectors: the `vectors`
//! table holds those embedded since the index was last built (a killed run
//! loses at most a batch), and once they are in the file they leave the
//! table. Looking a vector up by key reads the table, then the file.

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
/// write it; returns its metadata and the keys now held by the file.
pub(crate) fn write(
    dir: &Path,
    loaded: &Loaded,
    model: &str,
    rows: &[(u64, String)],
    vectors: &HashMap<String, Vec<f32>>,
    chunks: usize,
    batch_seq: u64,
) -> Result<(VectorMeta, Vec<String>)> {
    let dim = vectors.values().next().map(Vec::len).unwrap_or(0);
    let mut set = VectorSet::new(dim.max(1));
    let mut set_keys: Vec<&str> = Vec::new();
    for (id, key) in rows {
        if let Some(v) = vectors.get(key)
            && v.len() == dim
        {
            set.push(*id, v);
            set_keys.push(key);
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
    let order = index
        .source_rows()
        .ok_or_else(|| other("a new vector index has its rows' order"))?;
    let keys: Vec<String> = order
        .iter()
        .map(|&r| set_keys[r as usize].to_string())
        .collect();
    write_keys(&base.with_extension("keys"), index.ids(), &keys)?;
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
    Ok((meta, keys))
}

const KEYS_MAGIC: &str = "kenkeys1";

/// A fingerprint of an index's ids, to tell whether a key file belongs to it.
fn fingerprint(ids: &[u64]) -> u64 {
    // FNV-1a over the ids' bytes
    let mut h: u64 = 0xcbf29ce484222325;
    for b in ids.iter().flat_map(|id| id.to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

/// The key file: a header line (magic, rows, fingerprint of the ids), then
/// each row's key, compressed.
fn write_keys(path: &Path, ids: &[u64], keys: &[String]) -> Result<()> {
    let mut text = format!("{KEYS_MAGIC} {} {:016x}\n", keys.len(), fingerprint(ids));
    for k in keys {
        text.push_str(k);
        text.push('\n');
    }
    let packed = super::texts::compress(text.as_bytes()).map_err(other)?;
    let tmp = path.with_extension("keys.tmp");
    std::fs::write(&tmp, packed)?;
    std::fs::rename(tmp, path)?;
    Ok(())
}

/// The vectors `model`'s index file holds, by cache key.
pub(crate) struct FileVectors {
    index: Arc<AnyIndex>,
    /// The row of each key (the first, where several rows share a key).
    rows: HashMap<String, usize>,
}

impl FileVectors {
    /// None when there is no index, it has no key file (written before
    /// they existed), or the key file is of another build.
    pub(crate) fn open(dir: &Path, loaded: &Loaded, model: &str) -> Result<Option<FileVectors>> {
        let Some(index) = index(dir, loaded, model)? else {
            return Ok(None);
        };
        let Ok(packed) = std::fs::read(base(dir, model).with_extension("keys")) else {
            return Ok(None);
        };
        let Ok(text) = super::texts::decompress(packed.as_slice()) else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&text);
        let mut lines = text.lines();
        let header = format!(
            "{KEYS_MAGIC} {} {:016x}",
            index.len(),
            fingerprint(index.ids())
        );
        if lines.next() != Some(header.as_str()) {
            return Ok(None);
        }
        let mut rows = HashMap::with_capacity(index.len());
        for (row, key) in lines.enumerate() {
            rows.entry(key.to_string()).or_insert(row);
        }
        Ok(Some(FileVectors { index, rows }))
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.rows.contains_key(key)
    }

    /// The vectors of `keys` the file holds: int8 rows times their scale,
    /// made unit length again as the index's rows are (so a rebuild from
    /// them quantizes to the same rows).
    pub(crate) fn get(&self, keys: &[String]) -> HashMap<String, Vec<f32>> {
        keys.iter()
            .filter_map(|k| Some((k.clone(), self.vector(*self.rows.get(k)?)?)))
            .collect()
    }

    /// The vectors the file holds for keys not in `keep`: a rebuild for
    /// `keep` would drop them, so they go back to the table (content seen
    /// before stays cached: moving the index back to an older commit embeds
    /// nothing again).
    pub(crate) fn dropped(&self, keep: &HashSet<&str>) -> Vec<(String, Vec<f32>)> {
        let mut out: Vec<(String, Vec<f32>)> = self
            .rows
            .iter()
            .filter(|(k, _)| !keep.contains(k.as_str()))
            .filter_map(|(k, row)| Some((k.clone(), self.vector(*row)?)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    fn vector(&self, row: usize) -> Option<Vec<f32>> {
        let mut v = self.index.vector(row)?;
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Some(v)
    }
}

/// The models with an index file.
pub(crate) fn models(dir: &Path) -> Result<Vec<String>> {
    let Ok(entries) = std::fs::read_dir(dir.join("vectors")) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json")
            && let Ok(json) = std::fs::read_to_string(&p)
            && let Ok(meta) = serde_json::from_str::<VectorMeta>(&json)
        {
            out.push(meta.model);
        }
    }
    Ok(out)
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
