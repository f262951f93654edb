//! What the fusion learner sees, for offline study of how it learns: per
//! repository, the questions its history asks (up to MAX) and an
//! evaluation set's questions asked of the index as it stands, each with
//! every candidate file's ranks in each list and its history counts, one
//! JSON line each.
//!
//!     cargo run --release -p ken-engine --example tune_dump -- \
//!         HOME MODEL_DIR|off QUERIES.jsonl MAX > examples.jsonl
//!
//! Every index under HOME must already be at the queries' base_sha.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ken_engine::Settings;
use ken_engine::research::{EmbedderSpec, SearchEnv, dump_examples, load_vectors, open_embedder};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [home, model, queries, max] = &args[..] else {
        anyhow::bail!("usage: tune_dump HOME MODEL_DIR|off QUERIES.jsonl MAX");
    };
    let max: usize = max.parse()?;
    let mut settings = Settings::new(PathBuf::from(home));
    let embedder = if model == "off" {
        None
    } else {
        settings.embedder = EmbedderSpec::Local {
            dir: PathBuf::from(model),
            int8: true,
        };
        open_embedder(&settings.embedder)?
    };
    let mut by_repo: BTreeMap<String, Vec<(String, String, Vec<String>)>> = BTreeMap::new();
    for line in std::fs::read_to_string(queries)?.lines() {
        let q: serde_json::Value = serde_json::from_str(line)?;
        let gold = q["gold_files"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|g| g.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        by_repo
            .entry(q["repo"].as_str().unwrap_or_default().into())
            .or_default()
            .push((
                q["id"].as_str().unwrap_or_default().into(),
                q["query"].as_str().unwrap_or_default().into(),
                gold,
            ));
    }
    let provider = settings.stores()?;
    for (repo, extra) in &by_repo {
        let store = provider.open(repo)?;
        let state = store.state()?;
        let vectors = match &embedder {
            Some(e) => load_vectors(&*store, e.id(), &state)?,
            None => None,
        };
        let env = SearchEnv {
            rank: &settings.rank,
            embedder: embedder.as_deref(),
            vectors: vectors.as_ref(),
            identities: None,
            churn: None,
            template: None,
        };
        for mut v in dump_examples(&*store, env, state.commit_time, max, extra)? {
            v["repo"] = repo.as_str().into();
            println!("{v}");
        }
    }
    Ok(())
}
