//! `ken repos sync` and `ken repos poll`: finding a host's repositories and
//! keeping every repository fresh without webhooks.

use anyhow::Result;
use ken_engine::{Engine, HostKind, PollReport, Principal, SyncReport, SyncRequest};

use crate::args::{ReposCommand, SyncArgs};
use crate::config::Env;
use crate::output::Output;

pub fn run(engine: &Engine, cmd: ReposCommand, env: &Env, out: &Output) -> Result<i32> {
    match cmd {
        ReposCommand::Sync(a) => sync(engine, a, env, out),
        ReposCommand::Poll => {
            let report = engine.poll(&Principal::local())?;
            if out.json {
                out.print(&report);
            } else {
                show_poll(&report, out);
            }
            Ok(0)
        }
    }
}

fn sync(engine: &Engine, a: SyncArgs, env: &Env, out: &Output) -> Result<i32> {
    let (host, owner, token) = match (a.github, a.gitlab) {
        (Some(org), _) => (HostKind::GitHub, org, env.github_token.clone()),
        (None, Some(group)) => (HostKind::GitLab, group, env.gitlab_token.clone()),
        (None, None) => unreachable!("clap requires --github or --gitlab"),
    };
    let report = engine.sync(
        &SyncRequest {
            host,
            owner,
            api_url: a.api_url,
            token,
            archived: a.archived,
            forks: a.forks,
            dry_run: a.dry_run,
            max_wait: std::time::Duration::from_secs(a.max_wait),
        },
        &Principal::local(),
    )?;
    if out.json {
        out.print(&report);
    } else {
        show_sync(&report, out);
    }
    Ok(0)
}

fn show_sync(r: &SyncReport, out: &Output) {
    for repo in &r.repos {
        let what = match repo.action {
            "queued" => out.green("queued"),
            "skipped" => out.dim("skipped"),
            other => other.to_string(),
        };
        let why = repo
            .why
            .as_deref()
            .map(|w| format!("  {}", out.dim(w)))
            .unwrap_or_default();
        outln!("{what:<8} {}{why}", repo.name);
    }
    let listed = r.repos.len();
    let skipped = r.repos.iter().filter(|x| x.action == "skipped").count();
    let waited = if r.waited_secs > 0 {
        format!(", waited {} s for the rate limit", r.waited_secs)
    } else {
        String::new()
    };
    outln!(
        "{}/{}: {listed} repositories ({} pages{waited}) · {} queued · {skipped} skipped",
        r.host,
        r.owner,
        r.pages,
        r.queued
    );
    if r.queued > 0 {
        outln!(
            "{}",
            out.dim("the jobs run in `ken serve` or `ken worker`, or now with `ken jobs run`")
        );
    }
}

fn show_poll(r: &PollReport, out: &Output) {
    for p in &r.repos {
        let short = |c: &Option<String>| {
            c.as_deref()
                .map(|c| c[..c.len().min(12)].to_string())
                .unwrap_or_else(|| "-".into())
        };
        let what = match p.action {
            "fresh" => out.green("fresh"),
            "queued" => out.yellow("queued"),
            "failed" => out.yellow("failed"),
            other => out.dim(other),
        };
        let why = p
            .why
            .as_deref()
            .map(|w| format!("  {}", out.dim(w)))
            .unwrap_or_default();
        outln!(
            "{what:<8} {}  indexed {} · source {}{why}",
            p.repo,
            short(&p.indexed),
            short(&p.head)
        );
    }
    outln!(
        "{} repositories polled · {} queued",
        r.repos.len(),
        r.queued
    );
}
