use anyhow::Result;
use ken_engine::ClaimStatus;
use ken_engine::{AskObserver, AskRequest};
use ken_engine::{Engine, Principal};

use crate::args::AskArgs;
use crate::calls::{self, Call};
use crate::output::Output;

/// Prints the answer as it arrives.
struct Printer {
    stream: bool,
    streamed: bool,
}

impl AskObserver for Printer {
    fn delta(&mut self, text: &str) {
        self.streamed = true;
        crate::output::write_raw(text);
    }
    fn streams(&self) -> bool {
        self.stream
    }
}

pub fn run(engine: &Engine, a: AskArgs, out: &Output) -> Result<i32> {
    let ask = calls::Ask {
        req: AskRequest {
            question: a.question.join(" "),
            repos: a.repos,
            limit: a.limit,
            expand: !a.no_expand,
            model: a.model,
            offline: a.offline,
            rerank: a.rerank.then_some(true),
        },
    };
    let mut printer = Printer {
        stream: !out.json && !a.no_stream,
        streamed: false,
    };
    let who = Principal::local();
    let r = ask.observed(engine, &who, &mut printer)?;
    if out.json {
        out.print(&ask.wire(&r, &who));
        return Ok(0);
    }
    let streamed = printer.streamed;
    if streamed {
        outln!();
        if r.replaced_stream {
            outln!(
                "\n{}",
                out.yellow(
                    "The answer above cited code outside its context; the corrected answer:"
                )
            );
            outln!("{}", r.answer);
        }
    } else {
        outln!("{}", r.answer);
    }
    if r.model.is_some() {
        outln!();
        for c in &r.claims {
            let (mark, label) = match c.status {
                ClaimStatus::Verified => (out.green("✓"), "verified"),
                ClaimStatus::Unverified => (out.yellow("?"), "unverified (no citation)"),
                ClaimStatus::Invalid => (out.paint("31", "✗"), "invalid citation"),
            };
            let text: String = c.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let short: String = text.chars().take(90).collect();
            outln!("{mark} {} {}", short, out.dim(&format!("— {label}")));
        }
    }
    if !r.sources.is_empty() {
        outln!("\n{}", out.dim("sources:"));
        for h in r.sources.iter().take(8) {
            outln!(
                "  {}  {}",
                out.cyan(&format!(
                    "{}:{}-{}{}",
                    h.path,
                    h.start_line,
                    h.end_line,
                    h.cell.map(|n| format!(" (cell {n})")).unwrap_or_default()
                )),
                h.symbol.as_deref().unwrap_or("")
            );
        }
    }
    Ok(0)
}
