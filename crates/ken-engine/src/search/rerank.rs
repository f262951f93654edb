//! The reranking stage: a cross-encoder (or chat model) reorders the best
//! hits of a search by reading their text.

use ken_core::Hit;
use serde::Serialize;

use super::SearchResponse;

/// The reranking stage of one search.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RerankCost {
    pub model: String,
    /// Hits the model read (the best ones; the rest keep their order).
    pub documents: usize,
    pub ms: u64,
    /// Tokens the model's server counted (a chat model's; None: not reported).
    pub tokens: Option<u64>,
}

/// Reorder the best `top` hits by the reranker's scores of their text. A
/// failing reranker leaves the order as it was and says so in the notes.
pub fn rerank_hits(reranker: &dyn ken_embed::Reranker, resp: &mut SearchResponse, top: usize) {
    let n = resp.hits.len().min(top);
    if n < 2 {
        return;
    }
    let mut head: Vec<Hit> = resp.hits.drain(..n).collect();
    let text = |h: &Hit| {
        let mut t = h.path.clone();
        for part in [&h.symbol, &h.signature, &h.doc].into_iter().flatten() {
            t.push('\n');
            t.push_str(part);
        }
        t.push('\n');
        t.push_str(&h.snippet);
        t
    };
    match ken_embed::rerank_in_place(reranker, &resp.query, &mut head, text) {
        Ok(took) => {
            resp.rerank = Some(RerankCost {
                model: reranker.id().to_string(),
                documents: n,
                ms: took.as_millis() as u64,
                tokens: None,
            });
        }
        Err(e) => resp
            .notes
            .push(format!("reranker failed, results are not reranked: {e}")),
    }
    head.append(&mut resp.hits);
    resp.hits = head;
}
