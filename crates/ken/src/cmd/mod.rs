//! One module per command; each returns the process exit code.

mod eval;
mod index;
mod search;
mod status;

use anyhow::Result;
use ken_engine::EngineError;

use crate::cli::{Cli, Command};
use crate::config;
use crate::output::Output;

pub fn run(cli: Cli, out: &Output) -> Result<i32> {
    let env = config::Env::read();
    let settings = config::settings(cli.global.home.as_deref(), &env)?;
    let quiet = cli.global.quiet;
    match cli.command {
        Command::Index(a) => index::run(settings, a, out, quiet),
        Command::Search(a) => search::run(settings, a, out),
        Command::Eval(a) => eval::run(settings, a, out, quiet),
        Command::Status(a) => status::run(settings, a, out),
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
