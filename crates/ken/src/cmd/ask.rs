use anyhow::{Result, bail};
use ken_engine::ask::{AskRequest, ask};
use ken_engine::{EngineError, Settings};
use ken_llm::{ChatClient, ChatModel, ClaimStatus};
use serde_json::json;

use crate::cli::AskArgs;
use crate::output::{Output, hit_json};

pub fn run(settings: Settings, a: AskArgs, out: &Output) -> Result<i32> {
    let question = a.question.join(" ");
    if question.trim().is_empty() {
        bail!(EngineError::Usage(
            "ask a question, e.g. `ken ask \"how are sessions refreshed?\"`".into()
        ));
    }
    let client = match (&settings.llm, a.offline) {
        (Some(cfg), false) => {
            let mut cfg = cfg.clone();
            if let Some(m) = &a.model {
                cfg.model = m.clone();
            }
            Some(ChatClient::new(cfg).map_err(|e| EngineError::Usage(e.to_string()))?)
        }
        _ => None,
    };
    let req = AskRequest {
        question: question.clone(),
        repos: a.repos,
        limit: a.limit,
        expand: !a.no_expand,
    };
    let stream = client.is_some() && !out.json && !a.no_stream;
    let mut streamed = false;
    let mut print = |delta: &str| {
        streamed = true;
        crate::output::write_raw(delta);
    };
    let model: Option<&dyn ChatModel> = client.as_ref().map(|c| c as &dyn ChatModel);
    let r = ask(
        &settings,
        &req,
        model,
        if stream { Some(&mut print) } else { None },
    )?;
    if out.json {
        let sources: Vec<_> = r
            .sources
            .iter()
            .enumerate()
            .map(|(i, h)| hit_json(i + 1, h))
            .collect();
        out.print_json(&json!({
            "question": r.question,
            "route": r.route,
            "steps": r.steps,
            "answer": r.answer,
            "model": r.model,
            "claims": r.claims,
            "sources": sources,
            "retried": r.retried,
        }));
        return Ok(0);
    }
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
                out.cyan(&format!("{}:{}-{}", h.path, h.start_line, h.end_line)),
                h.symbol.as_deref().unwrap_or("")
            );
        }
    }
    Ok(0)
}
