//! The pinning stage: a strong identifier's exact definitions go above
//! everything fused, by tier, then as the question's shape says.

use std::collections::HashMap;

use ken_core::{ChunkKind, is_test_path};
use ken_store::{GraphStore, StoredChunk, SymbolTier};

use super::Candidate;
use crate::Result;
use crate::params::RankParams;
use crate::question::Question;

/// Pin true exact hits: a strong identifier's exact matches, ordered by
/// tier then by how well the rest of the query agrees.
pub(super) fn pin_exact(
    store: &dyn GraphStore,
    question: &Question,
    exact_order: &[(u64, SymbolTier, bool)],
    scored: &mut [(u64, Candidate)],
    chunks: &HashMap<u64, StoredChunk>,
    p: &RankParams,
) -> Result<()> {
    let mut pinned: Vec<(u64, SymbolTier, f32)> = Vec::new();
    for (id, tier, strong) in exact_order {
        if *strong && let Some((_, c)) = scored.iter().find(|(i, _)| i == id) {
            pinned.push((*id, *tier, c.fused));
        }
    }
    // Case-exact matches win; folded ones (`app_context` for `AppContext`)
    // are pinned only when nothing matches exactly.
    if pinned.iter().any(|(_, t, _)| *t == SymbolTier::Exact) {
        pinned.retain(|(_, t, _)| *t == SymbolTier::Exact);
    }
    // ties: the definition the code graph ranks highest (PageRank of its
    // definition), and code before tests
    let mut graph_rank: HashMap<u64, f32> = HashMap::new();
    if pinned.len() > 1 {
        let mut by_path: HashMap<String, Vec<(String, u32, f32)>> = HashMap::new();
        for (id, _, _) in &pinned {
            let Some((_, c)) = scored.iter().find(|(i, _)| i == id) else {
                continue;
            };
            let Some(d) = &c.definition else { continue };
            if !by_path.contains_key(&d.path) {
                by_path.insert(d.path.clone(), store.def_ranks(&d.path)?);
            }
            let rank = by_path[&d.path]
                .iter()
                .filter(|(q, _, _)| *q == d.qualname)
                .map(|(_, _, r)| *r)
                .fold(0.0f32, f32::max);
            graph_rank.insert(*id, rank);
        }
    }
    order_pins(&mut pinned, question.lookup, |id| Pin {
        module: chunks.get(&id).is_some_and(|c| c.kind == ChunkKind::Module),
        test: chunks.get(&id).is_some_and(|c| is_test_path(&c.path)),
        graph: graph_rank.get(&id).copied().unwrap_or(0.0),
    });
    pinned.truncate(p.max_pinned);
    for (pos, (id, tier, _)) in pinned.iter().enumerate() {
        if let Some((_, c)) = scored.iter_mut().find(|(i, _)| i == id) {
            c.pinned = Some((*tier, pos));
        }
    }
    Ok(())
}

/// What orders pinned hits of the same tier.
struct Pin {
    /// A module chunk (it only holds a definition too small to be a chunk
    /// of its own, such as a one-line struct).
    module: bool,
    /// In a test file.
    test: bool,
    /// PageRank of the definition in the code graph.
    graph: f32,
}

/// Pinned exact hits: by tier; then definition chunks before module chunks.
/// For a bare name (a look-up: the name is all the evidence there is) code
/// comes before tests and the definition the graph ranks highest first; in
/// a sentence the other words decide, through the fused score.
fn order_pins(pinned: &mut [(u64, SymbolTier, f32)], lookup: bool, pin: impl Fn(u64) -> Pin) {
    pinned.sort_by(|a, b| {
        let (pa, pb) = (pin(a.0), pin(b.0));
        let by_name = a.1.cmp(&b.1).then(pa.module.cmp(&pb.module));
        if lookup {
            by_name
                .then(pa.test.cmp(&pb.test))
                .then(pb.graph.total_cmp(&pa.graph))
                .then(b.2.total_cmp(&a.2))
        } else {
            by_name.then(b.2.total_cmp(&a.2))
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_go_by_tier_then_definitions_before_modules_then_score() {
        let mut pins = vec![
            (1, SymbolTier::Exact, 0.9), // module chunk, best score
            (2, SymbolTier::Exact, 0.1), // the impl
            (3, SymbolTier::ExactFolded, 1.0),
            (4, SymbolTier::Exact, 0.5),
        ];
        order_pins(&mut pins, true, |id| Pin {
            module: id == 1,
            test: false,
            graph: 0.0,
        });
        let ids: Vec<u64> = pins.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![4, 2, 1, 3]);
    }

    #[test]
    fn among_equal_pins_code_beats_tests_and_the_graph_decides() {
        let mut pins = vec![
            (1, SymbolTier::Exact, 0.9), // a test, best score
            (2, SymbolTier::Exact, 0.1), // code, central in the graph
            (3, SymbolTier::Exact, 0.5), // code, peripheral
        ];
        let pin = |id| Pin {
            module: false,
            test: id == 1,
            graph: if id == 2 { 3.0 } else { 0.5 },
        };
        let mut lookup = pins.clone();
        order_pins(&mut lookup, true, pin);
        let ids: Vec<u64> = lookup.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![2, 3, 1]);
        // in a sentence the fused score (the other words) decides
        order_pins(&mut pins, false, pin);
        let ids: Vec<u64> = pins.iter().map(|p| p.0).collect();
        assert_eq!(ids, vec![1, 3, 2]);
    }
}
