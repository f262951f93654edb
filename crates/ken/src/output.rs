//! Rendering: colours on a terminal only, JSON shapes defined once here.

use std::io::{IsTerminal, Write};

use ken_engine::{Edge, EngineError};
use serde::Serialize;
use serde_json::Value;

use crate::args::ColorChoice;
use crate::wire::ErrorBody;

pub struct Output {
    pub json: bool,
    pub color: bool,
}

impl Output {
    pub fn new(json: bool, choice: ColorChoice) -> Output {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Output { json, color }
    }

    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
    pub fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    pub fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    pub fn cyan(&self, t: &str) -> String {
        self.paint("36", t)
    }
    pub fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }

    /// Print a wire shape as one line of JSON.
    pub fn print<T: Serialize>(&self, v: &T) {
        let mut out = std::io::stdout().lock();
        let r = serde_json::to_writer(&mut out, v)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out));
        if let Err(e) = r {
            stop_if_closed(&e);
        }
    }

    /// Print a JSON value on one line.
    pub fn print_value(&self, v: &Value) {
        self.print(v)
    }

    /// An error on standard error: `error: MESSAGE` and `hint: …` on a
    /// terminal, `{"error": {"code", "message", "hint"}}` with `--json`.
    pub fn error(&self, e: &anyhow::Error) {
        let engine = e.downcast_ref::<EngineError>();
        if self.json {
            let body = match engine {
                Some(err) => ErrorBody::from_engine(err, Edge::Cli),
                None => ErrorBody::new("internal", format!("{e:#}"), None),
            };
            eprintln!("{}", serde_json::to_string(&body).unwrap_or_default());
            return;
        }
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let paint = |code: &str, t: &str| {
            if color {
                format!("\x1b[{code}m{t}\x1b[0m")
            } else {
                t.to_string()
            }
        };
        eprintln!("{} {e:#}", paint("31;1", "error:"));
        if let Some(h) = engine.and_then(|e| e.hint_for(Edge::Cli)) {
            eprintln!("{} {h}", paint("33", "hint:"));
        }
    }
}

/// Write formatted text to standard output (see the `outln!` macro).
pub fn write_out(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        stop_if_closed(&e);
    }
}

/// Write raw text to standard output and flush it (streamed answers).
pub fn write_raw(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        stop_if_closed(&e);
    }
}

/// The reader of our output went away: nothing more can be shown, so stop
/// like other command-line tools do. Other write errors are ignored here,
/// as `println!` would have panicked on them.
fn stop_if_closed(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}
