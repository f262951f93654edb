//! Helpers shared by the integration tests: fixtures and the invariants
//! every `FileSyntax` must satisfy.

#![allow(dead_code)]

use ken_core::{Chunk, ChunkKind, Definition, FileSyntax, Language};
use ken_syntax::{ChunkOptions, parse_file};

/// This crate's directory, read when the test runs (cargo sets it), so a
/// test binary built from another checkout sharing the target directory
/// still finds this checkout's fixtures.
pub fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string())
}

/// The text of `tests/fixtures/NAME`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", manifest_dir());
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parse with default options and check the invariants.
pub fn parse(path: &str, text: &str) -> FileSyntax {
    let fs = parse_file(path, text, &ChunkOptions::default());
    check_invariants(path, text, &fs);
    fs
}

/// 1-based line of a byte, from precomputed line starts.
fn line_of(starts: &[usize], byte: usize) -> u32 {
    starts.partition_point(|&s| s <= byte) as u32
}

/// What must hold for any file: exact slices, consistent lines and bytes,
/// the right language, definitions inside the file, references on a line
/// of the file and inside the definition they name as `from`.
pub fn check_invariants(path: &str, text: &str, fs: &FileSyntax) {
    let lang = Language::from_path(path);
    let lines = text.split('\n').count() as u32;
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    for c in &fs.chunks {
        let what = format!(
            "{path}: {:?} {:?} {}-{}",
            c.kind, c.qualname, c.start_line, c.end_line
        );
        assert_eq!(c.language, lang, "{what}");
        assert!(c.start_line >= 1 && c.start_line <= c.end_line, "{what}");
        assert!(c.start_byte <= c.end_byte, "{what}");
        if lang == Language::Notebook && c.kind == ChunkKind::Cell {
            continue; // lines and bytes of cells are in the code view
        }
        assert!(c.end_line <= lines, "{what}: past the last line {lines}");
        assert!((c.end_byte as usize) <= text.len(), "{what}");
        if !c.synthetic {
            let slice = &text[c.start_byte as usize..c.end_byte as usize];
            assert_eq!(c.text, slice, "{what}: text is not the slice");
            assert_eq!(
                c.start_line,
                line_of(&starts, c.start_byte as usize),
                "{what}: start line"
            );
            let last = (c.end_byte as usize).max(c.start_byte as usize + 1) - 1;
            assert_eq!(c.end_line, line_of(&starts, last), "{what}: end line");
        }
        if let Some(sig) = &c.signature {
            assert!(sig.chars().count() <= 300, "{what}: signature too long");
            assert!(!sig.contains('\n'), "{what}: signature not collapsed");
        }
    }
    for r in &fs.references {
        let what = format!("{path}: {r:?}");
        assert!(!r.name.is_empty() && r.line >= 1, "{what}");
        if lang == Language::Notebook {
            continue; // lines are in the code view
        }
        assert!(r.line <= lines, "{what}: past the last line {lines}");
        if let Some(from) = &r.from {
            let inside = fs
                .definitions
                .iter()
                .any(|d| &d.qualname == from && d.start_line <= r.line && r.line <= d.end_line);
            assert!(inside, "{what}: not inside {from}");
        }
    }
    for d in &fs.definitions {
        if lang == Language::Notebook {
            continue; // lines are in the code view
        }
        assert!(
            !d.name.is_empty() && !d.qualname.is_empty(),
            "{path}: {d:?}"
        );
        assert!(d.qualname.ends_with(&d.name), "{path}: {d:?}");
        assert!(
            d.start_line >= 1 && d.start_line <= d.end_line && d.end_line <= lines,
            "{path}: {d:?}"
        );
    }
}

/// Every non-blank line of a file is in some chunk covering it (lines
/// longer than a window are cut across windows and not checked).
pub fn check_no_line_lost(path: &str, text: &str, fs: &FileSyntax) {
    for (i, line) in text.split('\n').enumerate() {
        let n = i as u32 + 1;
        let t = line.trim();
        if t.is_empty() || t.len() > ChunkOptions::default().max_window_bytes {
            continue;
        }
        let found = fs
            .chunks
            .iter()
            .any(|c| c.start_line <= n && n <= c.end_line && c.text.contains(t));
        assert!(found, "{path}: line {n} is in no chunk: {t:?}");
    }
}

/// The chunk of `kind` named `qualname`.
pub fn chunk<'a>(fs: &'a FileSyntax, qualname: &str, kind: ChunkKind) -> &'a Chunk {
    fs.chunks
        .iter()
        .find(|c| c.qualname.as_deref() == Some(qualname) && c.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} chunk {qualname}; chunks: {:#?}", summary(fs)))
}

/// Any chunk named `qualname`.
pub fn chunk_named<'a>(fs: &'a FileSyntax, qualname: &str) -> Option<&'a Chunk> {
    fs.chunks
        .iter()
        .find(|c| c.qualname.as_deref() == Some(qualname))
}

/// The (first) definition named `qualname`.
pub fn def<'a>(fs: &'a FileSyntax, qualname: &str) -> &'a Definition {
    fs.definitions
        .iter()
        .find(|d| d.qualname == qualname)
        .unwrap_or_else(|| panic!("no definition {qualname}; definitions: {:#?}", defs(fs)))
}

/// `kind start-end qualname` of every chunk.
pub fn summary(fs: &FileSyntax) -> Vec<String> {
    fs.chunks
        .iter()
        .map(|c| {
            format!(
                "{} {}-{} {}",
                c.kind,
                c.start_line,
                c.end_line,
                c.qualname.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

/// `kind start-end qualname` of every definition.
pub fn defs(fs: &FileSyntax) -> Vec<String> {
    fs.definitions
        .iter()
        .map(|d| format!("{} {}-{} {}", d.kind, d.start_line, d.end_line, d.qualname))
        .collect()
}

/// Lines `start..=end` (1-based) of `text`.
pub fn lines(text: &str, start: u32, end: u32) -> String {
    text.split('\n')
        .skip(start as usize - 1)
        .take((end - start + 1) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}
