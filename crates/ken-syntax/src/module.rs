//! The module chunk: everything of a large code file outside its top-level
//! definitions (imports, constants, statements, comments), so no line is lost.

use std::ops::Range;

use ken_core::{Chunk, ChunkKind, Language};

use crate::ChunkOptions;
use crate::lines::LineIndex;
use crate::window::{new_chunk, window_chunks};

/// Everything outside the top-level definitions, joined in file order, as
/// synthetic `Module` chunks of at most `max_chunk_chars` (a longer single
/// stretch is cut into windows).
pub(crate) fn module_chunks(
    text: &str,
    li: &LineIndex,
    lang: Language,
    top: &[Range<usize>],
    module_doc: Option<String>,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    let mut top = top.to_vec();
    top.sort_by_key(|r| r.start);
    let mut gaps = Vec::new();
    let mut cursor = 0;
    for r in &top {
        if r.start > cursor {
            gaps.extend(trim_gap(text, cursor..r.start));
        }
        cursor = cursor.max(r.end);
    }
    gaps.extend(trim_gap(text, cursor..text.len()));

    let mut out = Vec::new();
    let mut group: Vec<Range<usize>> = Vec::new();
    let mut size = 0;
    for g in gaps {
        let n = text[g.clone()].chars().count();
        if n > opts.max_chunk_chars {
            flush(text, li, lang, &mut group, &mut out);
            size = 0;
            out.extend(window_chunks(text, li, g, lang, ChunkKind::Module, opts));
            continue;
        }
        if size + n > opts.max_chunk_chars {
            flush(text, li, lang, &mut group, &mut out);
            size = 0;
        }
        size += n + 1;
        group.push(g);
    }
    flush(text, li, lang, &mut group, &mut out);
    for c in &mut out {
        c.synthetic = true;
    }
    if let Some(first) = out.first_mut() {
        first.doc = module_doc;
    }
    out
}

fn flush(
    text: &str,
    li: &LineIndex,
    lang: Language,
    group: &mut Vec<Range<usize>>,
    out: &mut Vec<Chunk>,
) {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return;
    };
    let mut joined = String::with_capacity(group.iter().map(|g| g.len() + 1).sum());
    for (i, g) in group.iter().enumerate() {
        if i > 0 {
            joined.push('\n');
        }
        joined.push_str(&text[g.clone()]);
    }
    out.push(new_chunk(
        li,
        first.start..last.end,
        lang,
        ChunkKind::Module,
        joined,
    ));
    group.clear();
}

/// The part of a gap from its first non-blank line (with that line's
/// indentation) to its last non-whitespace byte; `None` if only whitespace.
fn trim_gap(text: &str, gap: Range<usize>) -> Option<Range<usize>> {
    let s = &text[gap.clone()];
    let first = s.find(|c: char| !c.is_whitespace())?;
    let last = s.trim_end().len();
    let line_start = s[..first].rfind('\n').map_or(0, |i| i + 1);
    Some(gap.start + line_start..gap.start + last)
}
