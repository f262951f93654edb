//! `ken`: the command line. Parses arguments, resolves settings, calls the
//! engine, renders the outcome and maps errors to exit codes — nothing else.

/// `println!` for our output: when the reader goes away (`ken people | head`)
/// stop quietly with success instead of panicking. SIGPIPE itself stays
/// ignored (Rust's default) because git transports write to child processes
/// whose early exit must surface as an error, not kill us.
macro_rules! outln {
    () => {
        $crate::output::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod cli;
mod cmd;
mod config;
mod output;
mod progress;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
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
