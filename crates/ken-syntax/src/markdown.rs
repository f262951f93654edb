//! Markdown: one section per heading (ATX `#` and setext), ignoring `#`
//! lines inside fenced code blocks and front matter.

use ken_core::{ChunkKind, FileSyntax, Language};

use crate::ChunkOptions;
use crate::lines::{LineIndex, collapse_ws, longer_than};
use crate::window::{slice_chunk, whole_or_windows, window_chunks};

pub(crate) fn chunk_markdown(text: &str, opts: &ChunkOptions) -> FileSyntax {
    if !longer_than(text, opts.whole_file_chars) {
        return whole_or_windows(text, Language::Markdown, opts.whole_file_chars, opts);
    }
    let li = LineIndex::new(text);
    let mut sections = vec![(0usize, None)];
    sections.extend(headings(text).into_iter().map(|(at, h)| (at, Some(h))));
    let mut out = FileSyntax::default();
    for (i, (start, heading)) in sections.iter().enumerate() {
        let end = sections.get(i + 1).map_or(text.len(), |s| s.0);
        if end <= *start {
            continue;
        }
        let end = start + text[*start..end].trim_end().len();
        if text[*start..end].trim().is_empty() {
            continue;
        }
        let mut chunks = if longer_than(&text[*start..end], opts.max_chunk_chars) {
            window_chunks(
                text,
                &li,
                *start..end,
                Language::Markdown,
                ChunkKind::Section,
                opts,
            )
        } else {
            vec![slice_chunk(
                text,
                &li,
                *start..end,
                Language::Markdown,
                ChunkKind::Section,
            )]
        };
        for c in &mut chunks {
            c.symbol = heading.clone();
        }
        out.chunks.extend(chunks);
    }
    out
}

/// (byte offset where the heading's section starts, heading text).
fn headings(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut front_matter = text.starts_with("---\n") || text.starts_with("---\r\n");
    // The previous line, when it could be a setext heading's text.
    let mut paragraph: Option<(usize, &str)> = None;
    let mut offset = 0;
    for (n, raw) in text.split('\n').enumerate() {
        let start = offset;
        offset += raw.len() + 1;
        let line = raw.trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = line.trim();
        if front_matter {
            if n > 0 && (t == "---" || t == "...") {
                front_matter = false;
            }
            continue;
        }
        if let Some((c, len)) = fence {
            let run = t.bytes().take_while(|&b| b == c).count();
            if indent < 4 && run >= len && t[run..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if indent >= 4 {
            paragraph = if t.is_empty() {
                None
            } else {
                paragraph.or(Some((start, t)))
            };
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            let c = t.as_bytes()[0];
            fence = Some((c, t.bytes().take_while(|&b| b == c).count()));
            paragraph = None;
            continue;
        }
        if let Some(h) = atx(t) {
            out.push((start, h));
            paragraph = None;
            continue;
        }
        if let Some((p_start, p_text)) = paragraph
            && !t.is_empty()
            && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
        {
            out.push((p_start, collapse_ws(p_text, 300)));
            paragraph = None;
            continue;
        }
        paragraph = if t.is_empty() || is_block_start(t) {
            None
        } else {
            Some((start, t))
        };
    }
    out
}

/// Lines that start a list item, quote or table: not a setext heading's text.
fn is_block_start(t: &str) -> bool {
    let ordered = t.split_once(['.', ')']).is_some_and(|(n, rest)| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(' ')
    });
    ordered || t.starts_with(['>', '|']) || ["- ", "* ", "+ "].iter().any(|m| t.starts_with(m))
}

/// `## Title ##` → `Title`.
fn atx(t: &str) -> Option<String> {
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim();
    let closed = rest.trim_end_matches('#');
    let title = if closed.is_empty() || closed.ends_with([' ', '\t']) {
        closed
    } else {
        rest
    };
    Some(collapse_ws(title, 300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_atx_and_setext_headings_outside_fences() {
        let text =
            "intro\n# One\ntext\n```sh\n# not a heading\n```\nTwo\n===\n## Three ##\n#hashtag\n";
        let hs: Vec<String> = headings(text).into_iter().map(|(_, h)| h).collect();
        assert_eq!(hs, ["One", "Two", "Three"]);
    }

    #[test]
    fn front_matter_is_not_a_heading() {
        let text = "---\ntitle: x\n---\n# Real\n- item\n---\n1. step\n===\n";
        let hs: Vec<String> = headings(text).into_iter().map(|(_, h)| h).collect();
        assert_eq!(hs, ["Real"]);
    }
}
