//! `ken report` and `ken tickets`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use ken_engine::ReportRequest;
use ken_engine::TicketFormat;
use ken_engine::{Access, Engine, EngineError, Principal};

use crate::args::{ReportArgs, TicketsCommand};
use crate::calls::{self, Call};
use crate::output::Output;

pub fn report(engine: &Engine, a: ReportArgs, out: &Output) -> Result<i32> {
    let format = if out.json { "json" } else { a.format.as_str() };
    if format == "pdf" && a.out.is_none() {
        return Err(EngineError::bad_input("a PDF report needs a file to go to")
            .with_hint("add --out report.pdf")
            .into());
    }
    let req = ReportRequest {
        repo: a.repo.clone(),
        since: a.since.clone(),
        until: a.until.clone(),
        top: Some(a.top),
        narrative: a.summary,
    };
    let report = calls::Report { req }.run(engine, &Principal::local())?;
    let text = match format {
        "json" => serde_json::to_string_pretty(&report)? + "\n",
        "html" | "pdf" => ken_engine::render::html(&report),
        _ => ken_engine::render::markdown(&report),
    };
    match (&a.out, format) {
        (Some(path), "pdf") => {
            let browser = print_pdf(&text, path)?;
            if !out.json {
                eprintln!("wrote {} (printed by {browser})", path.display());
            }
        }
        (Some(path), _) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        (None, _) => {
            for line in text.lines() {
                outln!("{line}");
            }
        }
    }
    Ok(0)
}

/// A headless Chromium (or Chrome) on the PATH.
fn find_browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Print HTML to PDF with a headless browser's print-to-PDF; returns which browser.
fn print_pdf(html: &str, dest: &Path) -> Result<String> {
    let Some(browser) = find_browser() else {
        return Err(
            EngineError::unavailable("no headless browser to print the PDF with")
                .with_hint("install chromium, or use --format html and print it from a browser")
                .into(),
        );
    };
    let dir = tempfile::tempdir()?;
    let page = dir.path().join("report.html");
    std::fs::write(&page, html)?;
    let dest_abs = std::path::absolute(dest)?;
    let status = Command::new(&browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-pdf-header-footer",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--print-to-pdf={}", dest_abs.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .with_context(|| format!("cannot run {}", browser.display()))?;
    if !status.success() || !dest_abs.is_file() {
        bail!("{} could not print the PDF ({status})", browser.display());
    }
    Ok(browser.display().to_string())
}

pub fn tickets(engine: &Engine, t: TicketsCommand, out: &Output) -> Result<i32> {
    match t {
        TicketsCommand::Import { file, repo, format } => {
            let bytes = if file.as_os_str() == "-" {
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)?;
                b
            } else {
                std::fs::read(&file).map_err(|e| {
                    EngineError::bad_input(format!("cannot read {}: {e}", file.display()))
                })?
            };
            let format = match format.as_str() {
                "github" => TicketFormat::GithubJson,
                "csv" => TicketFormat::Csv,
                _ => TicketFormat::Auto,
            };
            let r = engine.import_tickets(repo.as_deref(), &bytes, format, &Access::All)?;
            if out.json {
                out.print_value(&serde_json::json!({
                    "repo": r.repo,
                    "read": r.read,
                    "added": r.added,
                    "replaced": r.replaced,
                    "tickets_linked": r.linked,
                    "commits_linked": r.commits_linked,
                }));
            } else {
                outln!(
                    "{}: read {} tickets ({} new, {} replaced); {} tickets are linked to {} commits",
                    r.repo,
                    r.read,
                    r.added,
                    r.replaced,
                    r.linked,
                    r.commits_linked
                );
            }
        }
        TicketsCommand::List { repo, state } => {
            let (name, list) = engine.tickets(repo.as_deref(), &Access::All)?;
            let list: Vec<_> = list
                .into_iter()
                .filter(|t| state.as_deref().is_none_or(|s| t.ticket.state == s))
                .collect();
            if out.json {
                let v: Vec<serde_json::Value> = list
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "ticket": t.ticket,
                            "commits": t.commits.iter().map(|c| serde_json::json!({
                                "sha": c.sha, "summary": c.summary, "author": c.author_name,
                                "date": ken_engine::format_date(c.author_time),
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                out.print_value(&serde_json::json!({"repo": name, "tickets": v}));
                return Ok(0);
            }
            if list.is_empty() {
                outln!("no ticket imported for {name} (run `ken tickets import FILE`)");
            }
            for t in &list {
                outln!(
                    "{} {} {}",
                    out.bold(&format!("#{}", t.ticket.id.trim_start_matches('#'))),
                    out.dim(&format!("[{}]", t.ticket.state)),
                    t.ticket.title
                );
                for c in t.commits.iter().take(5) {
                    outln!(
                        "    {} {} {}",
                        out.dim(c.sha.get(..10).unwrap_or(&c.sha)),
                        c.summary,
                        out.dim(&format!("({})", c.author_name))
                    );
                }
            }
        }
    }
    Ok(0)
}
