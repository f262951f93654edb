//! Dumps, per evaluation query, every raw retrieval list as files in order
//! (whole-file BM25, chunk BM25, dense, exact symbols) with their scores, so
//! fusion rules can be compared offline (scripts/fusion_sim.py).
//!
//!     cargo run --release -p ken-engine --example signal_dump -- \
//!         HOME MODEL_DIR QUERIES.jsonl > signals.jsonl
//!
//! Every index under HOME must already be at the queries' base_sha.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use ken_engine::Settings;
use ken_engine::research::file_prior;
use ken_engine::research::identifiers;
use ken_engine::research::{EmbedderSpec, dense_search, open_embedder};
use ken_store::{DynStore, LexicalQuery, SymbolTier};
use serde_json::json;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [home_dir, model, queries] = &args[..] else {
        anyhow::bail!("usage: signal_dump HOME MODEL_DIR QUERIES.jsonl");
    };
    let mut settings = Settings::new(PathBuf::from(home_dir));
    settings.embedder = EmbedderSpec::Local {
        dir: PathBuf::from(model),
        int8: false,
    };
    let embedder = open_embedder(&settings.embedder)?.expect("embedder");
    let p = &settings.rank;
    let provider = settings.stores()?;
    let mut stores: HashMap<String, DynStore> = HashMap::new();
    for line in std::fs::read_to_string(queries)?.lines() {
        let q: serde_json::Value = serde_json::from_str(line)?;
        let repo = q["repo"].as_str().unwrap_or_default().to_string();
        if !stores.contains_key(&repo) {
            stores.insert(repo.clone(), provider.open(&repo)?);
        }
        let store = &*stores[&repo];
        let text = q["query"].as_str().unwrap_or_default().to_string();
        let lex = LexicalQuery {
            text: text.clone(),
            limit: p.candidates,
            languages: Vec::new(),
            paths: None,
            weights: p.fields,
        };
        let files: Vec<(String, f32)> = store
            .search_files(&LexicalQuery {
                limit: p.candidates / 2,
                ..lex.clone()
            })?
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect();
        let chunk_hits = store.search_chunks(&lex)?;
        let dense = dense_search(store, embedder.as_ref(), &text, p.candidates)?
            .map(|d| d.hits)
            .unwrap_or_default();
        let mut exact: Vec<(u64, f32)> = Vec::new();
        for id in identifiers(&text) {
            for m in store.lookup_symbols(&id.text, 50, id.strong)? {
                if matches!(m.tier, SymbolTier::Exact | SymbolTier::ExactFolded) && id.strong {
                    exact.push((m.chunk_id, 1.0));
                }
            }
        }
        let ids: Vec<u64> = chunk_hits
            .iter()
            .map(|h| h.chunk_id)
            .chain(dense.iter().map(|d| d.0))
            .chain(exact.iter().map(|e| e.0))
            .collect();
        let paths: HashMap<u64, (String, String)> = store
            .chunks(&ids)?
            .into_iter()
            .map(|c| (c.id, (c.path, format!("{:?}", c.kind))))
            .collect();
        let by_file = |list: &[(u64, f32)]| -> Vec<(String, f32)> {
            let mut seen = HashSet::new();
            list.iter()
                .filter_map(|(id, s)| {
                    let (path, _) = paths.get(id)?;
                    seen.insert(path.clone()).then(|| (path.clone(), *s))
                })
                .collect()
        };
        let prior: HashMap<&String, f32> = files
            .iter()
            .map(|f| &f.0)
            .chain(paths.values().map(|v| &v.0))
            .map(|path| {
                let lang = ken_core::Language::from_path(path);
                (path, file_prior(path, lang, p))
            })
            .collect();
        let chunks: Vec<(u64, f32)> = chunk_hits.iter().map(|h| (h.chunk_id, h.score)).collect();
        println!(
            "{}",
            json!({
                "id": q["id"], "repo": repo, "query": text,
                "gold_files": q["gold_files"],
                "file_bm25": files,
                "chunk_bm25": by_file(&chunks),
                "dense": by_file(&dense),
                "exact": by_file(&exact),
                "prior": prior,
                "strong": identifiers(&text).iter().filter(|i| i.strong).count(),
                "dense_chunks": dense.iter().filter_map(|(id, s)| Some((paths.get(id)?.0.clone(), *s))).collect::<Vec<_>>(),
                "bm25_chunks": chunks.iter().filter_map(|(id, s)| Some((paths.get(id)?.0.clone(), *s))).collect::<Vec<_>>(),
            })
        );
    }
    Ok(())
}
