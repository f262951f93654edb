//! `ken`: the command line. Parses arguments, resolves settings, calls the
//! engine, renders the outcome and maps errors to exit codes — nothing else.

mod cli;
mod cmd;
mod config;
mod output;
mod progress;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Like other command-line tools, stop quietly when the reader of our
    // output goes away (`ken people | head`) instead of failing to print.
    #[cfg(unix)]
    // SAFETY: restoring the default action of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    let out = output::Output::new(args.global.json, args.global.color);
    let code = match cmd::run(args, &out) {
        Ok(code) => code,
        Err(e) => {
            out.error(&e);
            cmd::exit_code(&e)
        }
    };
    std::process::exit(code);
}
