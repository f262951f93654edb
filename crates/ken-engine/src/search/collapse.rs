//! The collapsing stage: candidates in final order, a chunk dropped when
//! it contains, or is contained in, a better one of the same file (files
//! mode: one chunk per file), cut at the limit.

use std::collections::{HashMap, HashSet};

use ken_store::StoredChunk;

use super::Candidate;

/// Order the scored candidates (pinned first by their position, then by
/// fused score, ties by id) and keep the first `limit` that survive the
/// collapse.
pub(super) fn collapse(
    mut scored: Vec<(u64, Candidate)>,
    chunks: &HashMap<u64, StoredChunk>,
    files: bool,
    limit: usize,
) -> Vec<(u64, Candidate)> {
    scored.sort_by(|a, b| {
        let key = |c: &Candidate| c.pinned.map(|(_, pos)| pos);
        match (key(&a.1), key(&b.1)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.1.fused.total_cmp(&a.1.fused).then(a.0.cmp(&b.0)),
        }
    });
    let mut kept: Vec<(u64, Candidate)> = Vec::new();
    let mut seen_files: HashSet<&str> = HashSet::new();
    for (id, c) in scored {
        let chunk = &chunks[&id];
        if files {
            if !seen_files.insert(chunk.path.as_str()) {
                continue;
            }
        } else if kept.iter().any(|(kid, _)| overlaps(&chunks[kid], chunk)) {
            continue;
        }
        kept.push((id, c));
        if kept.len() >= limit {
            break;
        }
    }
    kept
}

fn overlaps(a: &StoredChunk, b: &StoredChunk) -> bool {
    a.path == b.path
        && ((a.start_line <= b.start_line && a.end_line >= b.end_line)
            || (b.start_line <= a.start_line && b.end_line >= a.end_line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ken_core::{ChunkKind, Language};
    use ken_store::SymbolTier;

    fn chunk(id: u64, path: &str, lines: (u32, u32)) -> StoredChunk {
        StoredChunk {
            id,
            path: path.into(),
            start_line: lines.0,
            end_line: lines.1,
            language: Language::Python,
            kind: ChunkKind::Function,
            symbol: None,
            qualname: None,
            signature: None,
            doc: None,
            start_byte: 0,
            end_byte: 0,
            trivial: false,
            cell: None,
            content_hash: String::new(),
            synthetic: false,
            text: String::new(),
        }
    }

    fn cand(fused: f32, pinned: Option<usize>) -> Candidate {
        Candidate {
            fused,
            pinned: pinned.map(|p| (SymbolTier::Exact, p)),
            ..Candidate::default()
        }
    }

    #[test]
    fn pins_lead_and_a_chunk_inside_a_better_one_is_dropped() {
        let chunks: HashMap<u64, StoredChunk> = [
            chunk(1, "a.py", (1, 50)),  // a class
            chunk(2, "a.py", (10, 20)), // its method
            chunk(3, "b.py", (1, 5)),
            chunk(4, "a.py", (60, 70)),
        ]
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
        let scored = vec![
            (1, cand(0.5, None)),
            (2, cand(0.9, None)),
            (3, cand(0.1, Some(0))),
            (4, cand(0.4, None)),
        ];
        let ids = |kept: Vec<(u64, Candidate)>| kept.iter().map(|k| k.0).collect::<Vec<_>>();
        assert_eq!(ids(collapse(scored.clone(), &chunks, false, 10)), [3, 2, 4]);
        assert_eq!(ids(collapse(scored.clone(), &chunks, false, 2)), [3, 2]);
        // files mode: one chunk per file, the best
        assert_eq!(ids(collapse(scored, &chunks, true, 10)), [3, 2]);
    }
}
