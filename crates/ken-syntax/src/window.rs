//! The line-window splitter: the fallback for unknown languages and parse
//! failures, and the way oversized pieces (huge functions, sections, module
//! text) are cut.

use std::ops::Range;

use ken_core::{Chunk, ChunkKind, FileSyntax, Language};

use crate::ChunkOptions;
use crate::lines::{LineIndex, floor_boundary, longer_than};

/// Cut `text[range]` into windows of `window_lines` lines overlapping by
/// `window_overlap`, each at most `max_window_bytes` bytes (a longer line is
/// cut at character boundaries). Returns absolute byte ranges; windows of
/// only whitespace are dropped. Linear in the size of the range.
pub(crate) fn split(text: &str, range: Range<usize>, opts: &ChunkOptions) -> Vec<Range<usize>> {
    let max_bytes = opts.max_window_bytes;
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut pos = range.start;
    while pos < range.end {
        let end = text[pos..range.end]
            .find('\n')
            .map_or(range.end, |i| pos + i);
        let content_end = if end > pos && text.as_bytes()[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        lines.push(pos..content_end);
        pos = end + 1;
    }
    let mut out = Vec::new();
    let mut push = |r: Range<usize>| {
        if !text[r.clone()].trim().is_empty() {
            out.push(r);
        }
    };
    let too_long = |r: &Range<usize>| r.end - r.start > max_bytes;
    let mut i = 0;
    while i < lines.len() {
        if too_long(&lines[i]) {
            let Range { mut start, end } = lines[i].clone();
            while start < end {
                let mut cut = floor_boundary(text, (start + max_bytes).min(end));
                if cut <= start {
                    cut = (start + 1..=end)
                        .find(|&c| text.is_char_boundary(c))
                        .unwrap_or(end);
                }
                push(start..cut);
                start = cut;
            }
            i += 1;
            continue;
        }
        let start = lines[i].start;
        let mut j = i;
        while j + 1 < lines.len()
            && j + 1 - i < opts.window_lines
            && lines[j + 1].end - start <= max_bytes
        {
            j += 1;
        }
        push(start..lines[j].end);
        if j + 1 >= lines.len() {
            break;
        }
        let taken = j + 1 - i;
        let overlap = if too_long(&lines[j + 1]) {
            0
        } else {
            opts.window_overlap.min(taken / 2)
        };
        i = (j + 1 - overlap).max(i + 1);
    }
    out
}

/// A chunk holding exactly `text[range]`.
pub(crate) fn slice_chunk(
    text: &str,
    li: &LineIndex,
    range: Range<usize>,
    language: Language,
    kind: ChunkKind,
) -> Chunk {
    let t = text[range.clone()].to_string();
    new_chunk(li, range, language, kind, t)
}

/// A chunk over `range` of the file holding `text` (which is the slice
/// itself, or assembled for synthetic chunks).
pub(crate) fn new_chunk(
    li: &LineIndex,
    range: Range<usize>,
    language: Language,
    kind: ChunkKind,
    text: String,
) -> Chunk {
    Chunk {
        kind,
        language,
        symbol: None,
        qualname: None,
        signature: None,
        doc: None,
        start_line: li.first_line(range.start),
        end_line: li.last_line(range.start, range.end),
        start_byte: range.start as u32,
        end_byte: range.end as u32,
        text,
        synthetic: false,
        trivial: false,
        cell: None,
    }
}

/// Window chunks of `text[range]`.
pub(crate) fn window_chunks(
    text: &str,
    li: &LineIndex,
    range: Range<usize>,
    language: Language,
    kind: ChunkKind,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    split(text, range, opts)
        .into_iter()
        .map(|r| slice_chunk(text, li, r, language, kind))
        .collect()
}

/// One `File` chunk for a small file, line windows for a larger one; no
/// chunk at all for a file of only whitespace.
pub(crate) fn whole_or_windows(
    text: &str,
    language: Language,
    limit_chars: usize,
    opts: &ChunkOptions,
) -> FileSyntax {
    let li = LineIndex::new(text);
    let mut out = FileSyntax::default();
    if text.trim().is_empty() {
        return out;
    }
    if longer_than(text, limit_chars) {
        out.chunks = window_chunks(text, &li, 0..text.len(), language, ChunkKind::Window, opts);
    } else {
        out.chunks.push(slice_chunk(
            text,
            &li,
            0..text.len(),
            language,
            ChunkKind::File,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(lines: usize, overlap: usize, bytes: usize) -> ChunkOptions {
        ChunkOptions {
            window_lines: lines,
            window_overlap: overlap,
            max_window_bytes: bytes,
            ..ChunkOptions::default()
        }
    }

    #[test]
    fn windows_overlap_and_cover_every_line() {
        let text: String = (1..=25).map(|i| format!("line {i}\n")).collect();
        let ws = split(&text, 0..text.len(), &opts(10, 3, 10_000));
        let li = LineIndex::new(&text);
        let spans: Vec<(u32, u32)> = ws
            .iter()
            .map(|r| (li.first_line(r.start), li.last_line(r.start, r.end)))
            .collect();
        assert_eq!(spans, [(1, 10), (8, 17), (15, 24), (22, 25)]);
    }

    #[test]
    fn long_lines_are_cut_at_char_boundaries() {
        let text = "é".repeat(1000); // 2000 bytes, one line
        let ws = split(&text, 0..text.len(), &opts(60, 10, 101));
        assert!(ws.iter().all(|r| r.end - r.start <= 101));
        assert_eq!(
            ws.iter().map(|r| r.end - r.start).sum::<usize>(),
            text.len()
        );
        for r in &ws {
            assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        }
    }

    #[test]
    fn byte_cap_bounds_windows_of_many_lines() {
        let text: String = (0..200).map(|_| format!("{}\n", "x".repeat(99))).collect();
        let ws = split(&text, 0..text.len(), &opts(60, 10, 1000));
        assert!(ws.iter().all(|r| r.end - r.start <= 1000));
        assert_eq!(ws.last().unwrap().end, text.len() - 1);
    }

    #[test]
    fn whitespace_only_windows_are_dropped_and_crlf_trimmed() {
        let text = "a\r\n\r\n   \r\n\r\nb\r\n";
        let ws = split(text, 0..text.len(), &opts(1, 0, 100));
        let got: Vec<&str> = ws.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(got, ["a", "b"]);
    }
}
