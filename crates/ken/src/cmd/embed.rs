use anyhow::{Result, bail};
use ken_engine::{EngineError, Settings, semantic};
use serde_json::json;

use crate::cli::EmbedArgs;
use crate::output::Output;

pub fn run(settings: Settings, a: EmbedArgs, out: &Output) -> Result<i32> {
    let Some(embedder) = semantic::open_embedder(&settings.embedder)? else {
        bail!(EngineError::Usage(
            "no embedding model: run `ken model install`, or set KEN_EMBED_MODEL_DIR or KEN_EMBED_BASE_URL".into()
        ));
    };
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let map = |e: ken_embed::EmbedError| -> anyhow::Error {
        if e.is_user_error() {
            EngineError::Usage(e.to_string()).into()
        } else {
            EngineError::Internal(e.to_string()).into()
        }
    };
    let vectors = if a.query {
        texts
            .iter()
            .map(|t| embedder.embed_query(t))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(map)?
    } else {
        embedder.embed_documents(&texts).map_err(map)?
    };
    if out.json {
        out.print_json(&json!({"model": embedder.id(), "dim": embedder.dim(), "vectors": vectors}));
    } else {
        outln!("model {} · {} dimensions", embedder.id(), embedder.dim());
        for (t, v) in a.texts.iter().zip(&vectors) {
            let head: Vec<String> = v.iter().take(5).map(|x| format!("{x:.4}")).collect();
            outln!("{:?}: [{}, …]", t, head.join(", "));
        }
    }
    Ok(0)
}
