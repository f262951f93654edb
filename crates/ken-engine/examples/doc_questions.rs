//! The sections of an indexed repository's documentation the learner reads
//! as questions (tune_docs.rs), one JSON line each: page, heading, query,
//! gold. For checking what it reads against an evaluation set.
//!
//! `cargo run --release -p ken-engine --example doc_questions -- HOME REPO`

use std::path::PathBuf;

use ken_engine::Settings;
use ken_engine::research::{doc_questions, indexed_paths};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(home), Some(repo)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: doc_questions HOME REPO");
    };
    let settings = Settings::new(PathBuf::from(home));
    let store = settings.stores()?.open(&repo)?;
    let paths = indexed_paths(&*store)?;
    for q in doc_questions(&*store, &paths, usize::MAX)? {
        println!(
            "{}",
            serde_json::json!({"page": q.page, "heading": q.heading, "query": q.query, "gold": q.gold})
        );
    }
    Ok(())
}
