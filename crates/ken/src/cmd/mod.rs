//! One module per command; each returns the process exit code.

mod ask;
mod embed;
mod eval;
mod index;
mod model;
mod people;
mod search;
mod status;
mod structure;

use anyhow::Result;
use ken_engine::EngineError;
use ken_engine::graph::Walk;

use crate::cli::{Cli, Command};
use crate::config;
use crate::output::Output;

pub fn run(cli: Cli, out: &Output) -> Result<i32> {
    let env = config::Env::read();
    // `ken model` must work when no model is installed yet
    let choice = match cli.command {
        Command::Model(_) => Some(crate::cli::EmbedderChoice::Off),
        _ => cli.global.embedder,
    };
    let settings = config::settings(cli.global.home.as_deref(), &env, choice)?;
    let quiet = cli.global.quiet;
    match cli.command {
        Command::Index(a) => index::run(settings, a, out, quiet),
        Command::Search(a) => search::run(settings, a, out),
        Command::Ask(a) => ask::run(settings, a, out),
        Command::Eval(a) => eval::run(settings, a, out, quiet),
        Command::Status(a) => status::run(settings, a, out),
        Command::Who(a) => people::who(settings, a, out),
        Command::People(a) => people::people(settings, a, out),
        Command::LogSearch(a) => people::log_search(settings, a, out),
        Command::Callers(a) => structure::run(settings, a, Walk::Callers, out),
        Command::Callees(a) => structure::run(settings, a, Walk::Callees, out),
        Command::Impact(a) => {
            structure::run(settings, a.target, Walk::Impact { max_depth: a.depth }, out)
        }
        Command::Embed(a) => embed::run(settings, a, out),
        Command::Model(m) => model::run(settings, &env, m, out),
    }
}

/// Exit codes: 2 for the user's errors (bad input, unknown names), 3 when
/// the index is busy, 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<EngineError>() {
        Some(engine) => engine.exit_code(),
        None => 1,
    }
}
