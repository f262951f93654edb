//! The last stage: the kept candidates read whole, made hits (an exact
//! definition inside a larger chunk shown as itself), annotated with their
//! authors.

use std::collections::HashMap;

use ken_core::{ChunkKind, Hit};
use ken_source::Identities;
use ken_store::{Store, StoredChunk};

use super::Candidate;
use crate::{Result, people};

/// Read the kept candidates whole and make them hits, with their authors
/// when `identities` are given. A chunk deleted by a writer since the
/// ranking is left out.
pub(super) fn annotate(
    store: &dyn Store,
    repo: &str,
    commit: Option<&str>,
    kept: Vec<(u64, Candidate)>,
    identities: Option<&Identities>,
) -> Result<Vec<Hit>> {
    let kept_ids: Vec<u64> = kept.iter().map(|(id, _)| *id).collect();
    let whole: HashMap<u64, StoredChunk> = store
        .chunks(&kept_ids)?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let mut authorship = identities.map(|ids| people::Authorship::new(store, ids));
    if let Some(a) = authorship.as_mut() {
        let ranges: Vec<(String, u32, u32)> = kept
            .iter()
            .filter_map(|(id, _)| whole.get(id))
            .map(|c| (c.path.clone(), c.start_line, c.end_line))
            .collect();
        a.prefetch(&ranges)?;
    }
    let mut hits = Vec::with_capacity(kept.len());
    for (id, c) in kept {
        let Some(chunk) = whole.get(&id) else {
            continue; // deleted by a writer since the ranking: left out
        };
        let mut hit = to_hit(repo, commit, chunk, &c);
        if let Some(a) = authorship.as_mut() {
            hit.authors = a.shares(&hit.path, hit.start_line, hit.end_line)?;
        }
        hits.push(hit);
    }
    Ok(hits)
}

const SNIPPET_LINES: usize = 8;

fn to_hit(repo: &str, commit: Option<&str>, chunk: &StoredChunk, c: &Candidate) -> Hit {
    // An exact hit inside a larger chunk (a small file kept whole) is shown
    // as the definition itself: its lines, its name.
    let narrowed = c.definition.as_ref().filter(|d| {
        !chunk.synthetic
            && d.start_line >= chunk.start_line
            && d.end_line <= chunk.end_line
            && (d.start_line, d.end_line) != (chunk.start_line, chunk.end_line)
    });
    let (start_line, end_line, symbol, kind, body): (u32, u32, Option<String>, ChunkKind, String) =
        match narrowed {
            Some(d) => {
                let skip = (d.start_line - chunk.start_line) as usize;
                let take = (d.end_line - d.start_line + 1) as usize;
                let body: Vec<&str> = chunk.text.lines().skip(skip).take(take).collect();
                (
                    d.start_line,
                    d.end_line,
                    Some(d.qualname.clone()),
                    d.kind,
                    body.join("\n"),
                )
            }
            None => (
                chunk.start_line,
                chunk.end_line,
                chunk.qualname.clone().or_else(|| chunk.symbol.clone()),
                chunk.kind,
                chunk.text.clone(),
            ),
        };
    let snippet: String = body
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take(SNIPPET_LINES)
        .map(|l| {
            if l.len() > 200 {
                &l[..l.floor_char_boundary(200)]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Hit {
        chunk_id: chunk.id,
        repo: repo.to_string(),
        path: chunk.path.clone(),
        start_line,
        end_line,
        language: chunk.language,
        kind,
        symbol,
        signature: if narrowed.is_some() {
            None
        } else {
            chunk.signature.clone()
        },
        doc: if narrowed.is_some() {
            None
        } else {
            chunk.doc.clone()
        },
        score: c.fused + if c.pinned.is_some() { 1.0 } else { 0.0 },
        pinned: c.pinned.is_some(),
        signals: c.signals.clone(),
        commit: commit.map(str::to_string),
        authors: Vec::new(),
        snippet,
        cell: chunk.cell,
    }
}
