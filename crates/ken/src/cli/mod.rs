//! The command line: parse arguments, build the one [`Engine`], call it and
//! render the outcome (text on a terminal, the wire shapes with `--json`);
//! errors become exit codes here and nowhere else.

mod ask;
mod embed;
mod eval;
mod index;
mod jobs;
mod model;
mod people;
mod report;
mod repos;
mod search;
mod status;
mod structure;
mod token;

use anyhow::Result;
use ken_engine::Walk;
use ken_engine::{Engine, EngineError, ErrorKind, Principal};

use crate::args::{Cli, Command, EmbedderChoice};
use crate::calls::Call;
use crate::config;
use crate::output::Output;

pub fn run(cli: Cli, out: &Output) -> Result<i32> {
    let env = config::Env::read();
    // `ken model` must work when no model is installed yet
    let choice = match cli.command {
        Command::Model(_) => Some(EmbedderChoice::Off),
        _ => cli.global.embedder,
    };
    let mut settings = config::settings(cli.global.home.as_deref(), &env, choice)?;
    if let Some(url) = &cli.global.store {
        settings.store = Some(url.clone());
    }
    let quiet = cli.global.quiet;
    match cli.command {
        Command::Model(m) => return model::run(settings, &env, m, out),
        Command::Serve(a) => {
            let server = config::server_config(&settings.home, &env)?;
            return crate::http::serve(Engine::new(settings), server, a, out);
        }
        Command::Mcp => return crate::mcp::serve_stdio(Engine::new(settings)),
        _ => {}
    }
    let engine = Engine::new(settings);
    match cli.command {
        Command::Index(a) => index::run(&engine, a, out, quiet),
        Command::Search(a) => search::run(&engine, a, out),
        Command::Ask(a) => ask::run(&engine, a, out),
        Command::Eval(a) => eval::run(&engine, a, out, quiet),
        Command::Status(a) => status::run(&engine, a, out),
        Command::Who(a) => people::who(&engine, a, out),
        Command::People(a) => people::people(&engine, a, out),
        Command::LogSearch(a) => people::log_search(&engine, a, out),
        Command::Callers(a) => structure::run(&engine, a, Walk::Callers, out),
        Command::Callees(a) => structure::run(&engine, a, Walk::Callees, out),
        Command::References(a) => structure::run(&engine, a, Walk::References, out),
        Command::Impact(a) => {
            structure::run(&engine, a.target, Walk::Impact { max_depth: a.depth }, out)
        }
        Command::Embed(a) => embed::run(&engine, a, out),
        Command::Report(a) => report::report(&engine, a, out),
        Command::Tickets(t) => report::tickets(&engine, t, out),
        Command::Token(t) => token::run(&engine, t, out),
        Command::Jobs(j) => jobs::run(&engine, j, out),
        Command::Repos(r) => repos::run(&engine, r, &env, out),
        Command::Worker => jobs::worker(&engine, quiet),
        Command::Model(_) | Command::Serve(_) | Command::Mcp => unreachable!("handled above"),
    }
}

/// Run a capability as the local user. With `--json` its wire shape is
/// printed and None returned; else the engine's answer, for the command to
/// print for people.
fn call<C: Call>(engine: &Engine, call: &C, out: &Output) -> Result<Option<C::Answer>> {
    let who = Principal::local();
    let answer = call.run(engine, &who)?;
    if out.json {
        out.print(&call.wire(&answer, &who));
        return Ok(None);
    }
    Ok(Some(answer))
}

/// Exit codes: 2 for the user's errors (bad input, unknown names), 3 when
/// the index is busy, 4 when a service is unavailable, 1 for ours.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<EngineError>().map(EngineError::kind) {
        Some(ErrorKind::BadInput | ErrorKind::NotFound | ErrorKind::Forbidden) => 2,
        Some(ErrorKind::Busy) => 3,
        Some(ErrorKind::Unavailable) => 4,
        Some(ErrorKind::Internal) | None => 1,
    }
}
