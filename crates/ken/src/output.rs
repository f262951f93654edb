//! Rendering: colours on a terminal only, JSON shapes defined once here.

use std::io::{IsTerminal, Write};

use ken_core::Hit;
use serde_json::{Value, json};

use crate::cli::ColorChoice;

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

    /// Print a JSON value on one line.
    pub fn print_json(&self, v: &Value) {
        let mut out = std::io::stdout().lock();
        let r = serde_json::to_writer(&mut out, v)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out));
        if let Err(e) = r {
            stop_if_closed(&e);
        }
    }

    pub fn error(&self, e: &anyhow::Error) {
        let msg = format!("{e:#}");
        if self.json {
            let v = json!({"error": msg});
            eprintln!("{v}");
        } else {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let label = if color {
                "\x1b[31;1merror:\x1b[0m"
            } else {
                "error:"
            };
            eprintln!("{label} {msg}");
        }
    }
}

/// A search result in the DESIGN.md §2 shape.
pub fn hit_json(rank: usize, h: &Hit) -> Value {
    let signals: serde_json::Map<String, Value> = h
        .signals
        .0
        .iter()
        .map(|(k, s)| (k.clone(), json!({"rank": s.rank, "score": round(s.score)})))
        .collect();
    json!({
        "rank": rank,
        "repo": h.repo,
        "path": h.path,
        "start_line": h.start_line,
        "end_line": h.end_line,
        "language": h.language.name(),
        "kind": h.kind.name(),
        "symbol": h.symbol,
        "score": round(h.score),
        "pinned": h.pinned,
        "signals": signals,
        "commit": h.commit,
        "authors": h.authors.iter().map(|a| json!({"name": a.name, "share": round(a.share)})).collect::<Vec<_>>(),
        "snippet": h.snippet,
    })
}

fn round(x: f32) -> f64 {
    (x as f64 * 10000.0).round() / 10000.0
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
