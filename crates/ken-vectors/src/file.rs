//! One file per index, memory-mapped for reading.
//!
//! Layout (little-endian, sections 8-byte aligned):
//! `"KENVEC2\0"`, u32 dim, u32 kind (0 flat, 1 ivf), u64 rows, u32 lists, u32 probes (IVF),
//! ids (u64 × rows), scales (f32 × rows), int8 rows (dim × rows), then for
//! IVF: centroids (f32 × lists × dim) and list offsets (u64 × (lists + 1)).
//! IVF rows are stored list by list. The rows are kept only in int8, with
//! a scale each: candidates are re-scored against the f32 query.
//!
//! Files written before (`"KENVEC1\0"`) also hold every row in f32, after
//! the int8 rows; they are still read, and re-score in f32.

use std::io::Write;
use std::path::Path;

use memmap2::Mmap;

use crate::{FlatIndex, IvfIndex, Result, VectorError};

const MAGIC: &[u8; 8] = b"KENVEC2\0";
/// The earlier format, with an f32 copy of every row.
const MAGIC_F32: &[u8; 8] = b"KENVEC1\0";
const HEADER: usize = 32;

fn pad8(x: usize) -> usize {
    x.div_ceil(8) * 8
}

/// Section offsets for `rows` rows of `dim` dimensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub dim: usize,
    pub rows: usize,
    pub lists: usize,
    ids: usize,
    scales: usize,
    q: usize,
    f: usize,
    centroids: usize,
    offsets: usize,
    end: usize,
}

impl Layout {
    /// `f32`: whether the rows are also stored in f32 (the earlier format).
    pub fn new(dim: usize, rows: usize, lists: usize, f32: bool) -> Layout {
        let ids = HEADER;
        let scales = pad8(ids + 8 * rows);
        let q = pad8(scales + 4 * rows);
        let f = pad8(q + dim * rows);
        let f_rows = if f32 { rows } else { 0 };
        let centroids = pad8(f + 4 * dim * f_rows);
        let offsets = pad8(centroids + 4 * dim * lists);
        let end = if lists > 0 {
            offsets + 8 * (lists + 1)
        } else {
            centroids
        };
        Layout {
            dim,
            rows,
            lists,
            ids,
            scales,
            q,
            f: if f32 { f } else { 0 },
            centroids,
            offsets,
            end,
        }
    }
}

/// Row storage: owned (just built) or mapped (opened from a file).
pub(crate) enum Storage {
    Owned {
        ids: Vec<u64>,
        scales: Vec<f32>,
        q: Vec<i8>,
        f: Vec<f32>,
        centroids: Vec<f32>,
        offsets: Vec<u64>,
    },
    Mapped {
        map: Mmap,
        layout: Layout,
    },
}

fn cast<T>(bytes: &[u8]) -> &[T] {
    assert_eq!(
        bytes.as_ptr() as usize % std::mem::align_of::<T>(),
        0,
        "misaligned section"
    );
    // SAFETY: the section is aligned for T (checked), its length is a multiple
    // of size_of::<T>() by construction, and T is a plain number type.
    unsafe {
        std::slice::from_raw_parts(
            bytes.as_ptr() as *const T,
            bytes.len() / std::mem::size_of::<T>(),
        )
    }
}

impl Storage {
    pub fn ids(&self) -> &[u64] {
        match self {
            Storage::Owned { ids, .. } => ids,
            Storage::Mapped { map, layout: l } => cast(&map[l.ids..l.ids + 8 * l.rows]),
        }
    }
    pub fn scales(&self) -> &[f32] {
        match self {
            Storage::Owned { scales, .. } => scales,
            Storage::Mapped { map, layout: l } => cast(&map[l.scales..l.scales + 4 * l.rows]),
        }
    }
    pub fn q(&self) -> &[i8] {
        match self {
            Storage::Owned { q, .. } => q,
            Storage::Mapped { map, layout: l } => cast(&map[l.q..l.q + l.dim * l.rows]),
        }
    }
    /// The rows in f32: empty unless the index was read from a file of
    /// the earlier format.
    pub fn f(&self) -> &[f32] {
        match self {
            Storage::Owned { f, .. } => f,
            Storage::Mapped { layout: l, .. } if l.f == 0 => &[],
            Storage::Mapped { map, layout: l } => cast(&map[l.f..l.f + 4 * l.dim * l.rows]),
        }
    }
    pub fn centroids(&self) -> &[f32] {
        match self {
            Storage::Owned { centroids, .. } => centroids,
            Storage::Mapped { map, layout: l } => {
                cast(&map[l.centroids..l.centroids + 4 * l.dim * l.lists])
            }
        }
    }
    pub fn offsets(&self) -> &[u64] {
        match self {
            Storage::Owned { offsets, .. } => offsets,
            Storage::Mapped { map, layout: l } if l.lists > 0 => {
                cast(&map[l.offsets..l.offsets + 8 * (l.lists + 1)])
            }
            Storage::Mapped { .. } => &[],
        }
    }
}

/// An index opened from a file.
pub enum AnyIndex {
    Flat(FlatIndex),
    Ivf(IvfIndex),
}

impl AnyIndex {
    pub fn len(&self) -> usize {
        match self {
            AnyIndex::Flat(f) => f.len(),
            AnyIndex::Ivf(i) => i.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn dim(&self) -> usize {
        match self {
            AnyIndex::Flat(f) => f.dim(),
            AnyIndex::Ivf(i) => i.dim(),
        }
    }
    /// Row `row`'s vector (its int8 values times its scale, or its f32
    /// values in a file of the earlier format); None past the end.
    pub fn vector(&self, row: usize) -> Option<Vec<f32>> {
        let (s, dim) = match self {
            AnyIndex::Flat(f) => (&f.storage, f.dim()),
            AnyIndex::Ivf(i) => (&i.storage, i.dim()),
        };
        if row >= s.ids().len() {
            return None;
        }
        let f = s.f();
        if !f.is_empty() {
            return Some(f[row * dim..(row + 1) * dim].to_vec());
        }
        let scale = s.scales()[row];
        Some(
            s.q()[row * dim..(row + 1) * dim]
                .iter()
                .map(|&x| x as f32 * scale)
                .collect(),
        )
    }

    /// For an index just built from a set: the set's row each row holds
    /// (None for an index read from a file).
    pub fn source_rows(&self) -> Option<Vec<u32>> {
        match self {
            AnyIndex::Flat(f) if matches!(f.storage, Storage::Owned { .. }) => {
                Some((0..f.len() as u32).collect())
            }
            AnyIndex::Ivf(i) if !i.source.is_empty() || i.is_empty() => Some(i.source.clone()),
            _ => None,
        }
    }

    /// The ids of every row.
    pub fn ids(&self) -> &[u64] {
        match self {
            AnyIndex::Flat(f) => f.storage.ids(),
            AnyIndex::Ivf(i) => i.storage.ids(),
        }
    }
    /// The `k` nearest ids (approximate for IVF, with its default probes).
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<crate::Neighbor>> {
        match self {
            AnyIndex::Flat(f) => f.search(query, k),
            AnyIndex::Ivf(i) => i.search(query, k, i.default_nprobe()),
        }
    }
}

/// Write an index to `path` atomically (a temporary file, then a rename).
pub fn write(path: &Path, index: &AnyIndex) -> Result<()> {
    let (dim, s, kind, nprobe) = match index {
        AnyIndex::Flat(f) => (f.dim(), &f.storage, 0u32, 0u32),
        AnyIndex::Ivf(i) => (i.dim(), &i.storage, 1u32, i.default_nprobe() as u32),
    };
    let rows = s.ids().len();
    let lists = if kind == 1 {
        s.offsets().len().saturating_sub(1)
    } else {
        0
    };
    let l = Layout::new(dim, rows, lists, false);
    let tmp = path.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    let mut written = 0usize;
    let mut put =
        |bytes: &[u8], at: usize, out: &mut std::io::BufWriter<std::fs::File>| -> Result<()> {
            out.write_all(&vec![0u8; at - written])?;
            out.write_all(bytes)?;
            written = at + bytes.len();
            Ok(())
        };
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(dim as u32).to_le_bytes());
    header.extend_from_slice(&kind.to_le_bytes());
    header.extend_from_slice(&(rows as u64).to_le_bytes());
    header.extend_from_slice(&(lists as u32).to_le_bytes());
    header.extend_from_slice(&nprobe.to_le_bytes());
    put(&header, 0, &mut out)?;
    put(bytes_of(s.ids()), l.ids, &mut out)?;
    put(bytes_of(s.scales()), l.scales, &mut out)?;
    put(bytes_of(s.q()), l.q, &mut out)?;
    if lists > 0 {
        put(bytes_of(s.centroids()), l.centroids, &mut out)?;
        put(bytes_of(s.offsets()), l.offsets, &mut out)?;
    }
    // the layout rounds the end up (a dimension that is not a multiple of
    // four leaves the last section short of it): pad to it
    put(&[], l.end, &mut out)?;
    debug_assert_eq!(written, l.end);
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn bytes_of<T>(v: &[T]) -> &[u8] {
    // SAFETY: any initialised slice of plain numbers can be viewed as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// Map an index file.
pub fn open(path: &Path) -> Result<AnyIndex> {
    let bad = |why: &str| VectorError::Format(path.display().to_string(), why.to_string());
    let file = std::fs::File::open(path)?;
    // SAFETY: the file is only replaced by rename, never modified in place,
    // so the mapping stays valid while we hold it.
    let map = unsafe { Mmap::map(&file)? };
    if map.len() < HEADER || (&map[..8] != MAGIC && &map[..8] != MAGIC_F32) {
        return Err(bad("not a ken vector file"));
    }
    let f32 = &map[..8] == MAGIC_F32;
    let u32_at =
        |i: usize| u32::from_le_bytes(map[i..i + 4].try_into().unwrap_or_default()) as usize;
    let dim = u32_at(8);
    let kind = u32_at(12);
    let rows = u64::from_le_bytes(map[16..24].try_into().unwrap_or_default()) as usize;
    let lists = u32_at(24);
    let nprobe = u32_at(28);
    let l = Layout::new(dim, rows, if kind == 1 { lists } else { 0 }, f32);
    if map.len() != l.end || dim == 0 {
        return Err(bad("truncated or corrupt"));
    }
    let storage = Storage::Mapped { map, layout: l };
    Ok(match kind {
        0 => AnyIndex::Flat(FlatIndex::from_storage(dim, storage)),
        1 => AnyIndex::Ivf(IvfIndex::from_storage(dim, storage, nprobe)),
        _ => return Err(bad("unknown index kind")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{VectorSet, synthetic};

    /// A flat index in the earlier format (int8 and f32 rows), as files
    /// written before this one were.
    fn write_f32_format(path: &Path, set: &VectorSet) {
        let flat = FlatIndex::build(set);
        let (dim, rows) = (set.dim, set.len());
        let l = Layout::new(dim, rows, 0, true);
        let mut bytes = vec![0u8; l.end];
        bytes[..8].copy_from_slice(MAGIC_F32);
        bytes[8..12].copy_from_slice(&(dim as u32).to_le_bytes());
        bytes[16..24].copy_from_slice(&(rows as u64).to_le_bytes());
        let mut put = |at: usize, b: &[u8]| bytes[at..at + b.len()].copy_from_slice(b);
        put(l.ids, bytes_of(flat.storage.ids()));
        put(l.scales, bytes_of(flat.storage.scales()));
        put(l.q, bytes_of(flat.storage.q()));
        put(l.f, bytes_of(&set.data));
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn files_of_the_f32_format_still_open_and_rescore_in_f32() {
        let dir = tempfile::tempdir().unwrap();
        let set = synthetic(500, 24, 10, 0.5, 4);
        let old = dir.path().join("old.vec");
        write_f32_format(&old, &set);
        let index = open(&old).unwrap();
        assert_eq!((index.len(), index.dim()), (500, 24));
        assert_eq!(
            index.vector(3).unwrap(),
            set.row(3),
            "f32 rows are read back"
        );
        let hits = index.search(set.row(42), 3).unwrap();
        assert_eq!(hits[0].id, set.ids[42]);
        assert!(
            (hits[0].score - 1.0).abs() < 1e-5,
            "f32 re-score: {}",
            hits[0].score
        );

        // written again, the same index keeps int8 rows only: smaller, and
        // the vectors within int8 rounding of the originals
        let new = dir.path().join("new.vec");
        write(&new, &index).unwrap();
        let small = open(&new).unwrap();
        let (a, b) = (
            std::fs::metadata(&old).unwrap().len(),
            std::fs::metadata(&new).unwrap().len(),
        );
        assert!(b * 3 < a, "{b} bytes against {a}");
        for r in [0, 3, 499] {
            let v = small.vector(r).unwrap();
            let max = set.row(r).iter().fold(0f32, |m, x| m.max(x.abs()));
            for (x, y) in v.iter().zip(set.row(r)) {
                assert!((x - y).abs() <= max / 254.0 + 1e-6, "{x} vs {y}");
            }
        }
        assert_eq!(small.vector(500), None);
        assert_eq!(small.search(set.row(42), 1).unwrap()[0].id, set.ids[42]);
    }

    #[test]
    fn a_new_index_says_which_row_of_its_set_each_row_holds() {
        let dir = tempfile::tempdir().unwrap();
        let set = synthetic(2000, 16, 20, 0.5, 8);
        let params = crate::IvfParams {
            lists: Some(16),
            ..Default::default()
        };
        for index in [
            AnyIndex::Flat(FlatIndex::build(&set)),
            AnyIndex::Ivf(IvfIndex::build(&set, params)),
        ] {
            let source = index.source_rows().unwrap();
            assert_eq!(source.len(), 2000);
            for (row, &from) in source.iter().enumerate() {
                let from = from as usize;
                assert_eq!(index.ids()[row], set.ids[from]);
                let v = index.vector(row).unwrap();
                let close = v
                    .iter()
                    .zip(set.row(from))
                    .all(|(x, y)| (x - y).abs() < 0.02);
                assert!(close, "row {row} holds the set's row {from}");
            }
            let path = dir.path().join("i.vec");
            write(&path, &index).unwrap();
            assert!(
                open(&path).unwrap().source_rows().is_none(),
                "unknown once written"
            );
        }
    }
}
