use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use ken_engine::Engine;
use ken_engine::Job;
use ken_engine::format_date;

use crate::args::JobsCommand;
use crate::calls;
use crate::output::Output;

pub fn run(engine: &Engine, cmd: JobsCommand, out: &Output) -> Result<i32> {
    match cmd {
        JobsCommand::List { limit } => {
            let Some(jobs) = super::call(engine, &calls::Jobs { n: limit }, out)? else {
                return Ok(0);
            };
            if jobs.is_empty() {
                outln!("no jobs");
            }
            for j in &jobs {
                show(j, out);
            }
        }
        JobsCommand::Show { id } => {
            if let Some(j) = super::call(engine, &calls::Job { id }, out)? {
                show(&j, out);
            }
        }
        JobsCommand::Run => {
            let n = engine.run_queued_jobs()?;
            if out.json {
                out.print_value(&serde_json::json!({ "ran": n }));
            } else {
                outln!("{n} jobs run");
            }
        }
    }
    Ok(0)
}

/// `ken worker`: run jobs until SIGTERM or Ctrl-C; a job interrupted by the
/// stop goes back to the queue at its next batch.
pub fn worker(engine: &Engine, quiet: bool) -> Result<i32> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut int)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
            flag.store(true, Ordering::Relaxed);
        })?;
    if !quiet {
        eprintln!(
            "worker {}: taking index jobs from {}",
            std::process::id(),
            engine.stores()?.describe()
        );
    }
    std::thread::scope(|s| {
        if let Some(every) = engine.settings().poll_interval {
            let stop = &*stop;
            s.spawn(move || engine.poll_every(every, stop, &|e| eprintln!("warning: poll: {e}")));
        }
        engine.run_jobs(&stop)
    })?;
    Ok(0)
}

fn show(j: &Job, out: &Output) {
    let rev = j
        .rev
        .as_deref()
        .map(|r| &r[..r.len().min(12)])
        .unwrap_or("-");
    outln!(
        "{}  {:<8} {} @ {}  {}",
        out.bold(&j.id),
        j.state.name(),
        j.repo,
        rev,
        out.dim(&format!("{} · {}", j.origin, format_date(j.created_at)))
    );
    if let Some(p) = &j.progress
        && j.state == ken_engine::JobState::Running
    {
        outln!("    {p}");
    }
    if let Some(e) = &j.error {
        outln!("    {}", out.yellow(e));
    }
}
