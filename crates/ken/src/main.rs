//! `ken`: the binary. Every edge lives here and is a thin adapter over one
//! [`ken_engine::Engine`]: the command line (`cli/`), the HTTP API and
//! webhooks (`http/`), the MCP server (`mcp/`). The JSON shapes all three
//! speak are in `wire.rs`; settings are resolved in `config.rs`.

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

mod args;
mod calls;
mod cli;
mod config;
mod http;
mod mcp;
mod output;
mod progress;
mod wire;
mod work;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    unset_empty_variables();
    let args = args::Cli::parse();
    let out = output::Output::new(args.global.json, args.global.color);
    let code = match cli::run(args, &out) {
        Ok(code) => code,
        Err(e) => {
            out.error(&e);
            cli::exit_code(&e)
        }
    };
    std::process::exit(code);
}

/// An empty `KEN_*` variable means unset (`KEN_STORE= ken status`), for
/// the flags clap reads from the environment as for `config::Env`.
fn unset_empty_variables() {
    let empty: Vec<std::ffi::OsString> = std::env::vars_os()
        .filter(|(k, v)| k.to_string_lossy().starts_with("KEN_") && v.is_empty())
        .map(|(k, _)| k)
        .collect();
    for k in empty {
        // SAFETY: called first thing in `main`, before any thread exists.
        unsafe { std::env::remove_var(k) };
    }
}
