//! One file per index, memory-mapped for reading.
//!
//! Layout (little-endian, sections 8-byte aligned):
//! `"KENVEC1\0"`, u32 dim, u32 kind (0 flat, 1 ivf), u64 rows, u32 lists, u32 probes (IVF),
//! ids (u64 × rows), scales (f32 × rows), int8 rows (dim × rows),
//! f32 rows (dim × rows), then for IVF: centroids (f32 × lists × dim) and
//! list offsets (u64 × (lists + 1)). IVF rows are stored list by list.

use std::io::Write;
use std::path::Path;

use memmap2::Mmap;

use crate::{FlatIndex, IvfIndex, Result, VectorError};

const MAGIC: &[u8; 8] = b"KENVEC1\0";
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
    pub fn new(dim: usize, rows: usize, lists: usize) -> Layout {
        let ids = HEADER;
        let scales = pad8(ids + 8 * rows);
        let q = pad8(scales + 4 * rows);
        let f = pad8(q + dim * rows);
        let centroids = pad8(f + 4 * dim * rows);
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
            f,
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
    pub fn f(&self) -> &[f32] {
        match self {
            Storage::Owned { f, .. } => f,
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
    let l = Layout::new(dim, rows, lists);
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
    put(bytes_of(s.f()), l.f, &mut out)?;
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
    if map.len() < HEADER || &map[..8] != MAGIC {
        return Err(bad("not a ken vector file"));
    }
    let u32_at =
        |i: usize| u32::from_le_bytes(map[i..i + 4].try_into().unwrap_or_default()) as usize;
    let dim = u32_at(8);
    let kind = u32_at(12);
    let rows = u64::from_le_bytes(map[16..24].try_into().unwrap_or_default()) as usize;
    let lists = u32_at(24);
    let nprobe = u32_at(28);
    let l = Layout::new(dim, rows, if kind == 1 { lists } else { 0 });
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
