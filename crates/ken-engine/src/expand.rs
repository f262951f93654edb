//! Offline query expansion from a repository's own vocabulary: identifiers
//! of the symbol table that contain the query's words.

use std::collections::HashMap;

use ken_core::ident;
use ken_store::ChunkStore;

/// Up to `max` symbol names sharing sub-words with the query, the ones that
/// share the most (and the rarest) first. Words the query already has are
/// not repeated.
pub fn vocabulary_expansion<'a, S: ChunkStore + ?Sized + 'a>(
    stores: impl Iterator<Item = &'a S>,
    query: &str,
    max: usize,
) -> Vec<String> {
    let words: Vec<String> = ident::words(query)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| w.len() >= 4 && !ident::is_stop_word(w))
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let mut score: HashMap<String, f32> = HashMap::new();
    for store in stores {
        for w in &words {
            let Ok(matches) = store.lookup_symbols(w, 30, true) else {
                continue;
            };
            let n = matches.len().max(1) as f32;
            for m in matches {
                if words.iter().any(|q| q.eq_ignore_ascii_case(&m.name)) {
                    continue;
                }
                let subs = ident::split_identifier(&m.name);
                let shared = words
                    .iter()
                    .filter(|q| subs.iter().any(|s| s == *q))
                    .count() as f32;
                if shared > 0.0 {
                    *score.entry(m.name.clone()).or_default() += shared / n.sqrt();
                }
            }
        }
    }
    let mut ranked: Vec<(String, f32)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(max).map(|(n, _)| n).collect()
}
