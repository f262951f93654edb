use anyhow::Result;
use ken_engine::Engine;

use crate::args::StatusArgs;
use crate::calls;
use crate::output::Output;

pub fn run(engine: &Engine, a: StatusArgs, out: &Output) -> Result<i32> {
    let status = calls::Status { repos: a.names };
    let Some(repos) = super::call(engine, &status, out)? else {
        return Ok(0);
    };
    if repos.is_empty() {
        outln!(
            "nothing indexed in {} yet: run `ken index PATH`",
            engine.stores()?.describe()
        );
        return Ok(0);
    }
    for r in repos {
        let at = match (&r.state.commit, r.state.worktree) {
            (Some(c), true) => format!("working tree at {}", &c[..c.len().min(12)]),
            (Some(c), false) => c[..c.len().min(12)].to_string(),
            (None, _) => "working tree".into(),
        };
        let branch = r
            .state
            .branch
            .as_deref()
            .map(|b| format!(" (branch {b})"))
            .unwrap_or_default();
        outln!("{}{branch}  {at}", out.bold(&r.name));
        let skipped = if r.stats.skipped.is_empty() {
            "0 skipped".to_string()
        } else {
            let parts: Vec<String> = r
                .stats
                .skipped
                .iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            format!("{} skipped: {}", r.stats.skipped_files, parts.join(", "))
        };
        outln!(
            "  {} files ({skipped}) · {} chunks · {} symbols · {:.1} MB source · index {:.1} MB",
            r.stats.files,
            r.stats.chunks,
            r.stats.symbols,
            r.stats.bytes as f64 / 1e6,
            r.index_bytes as f64 / 1e6
        );
        outln!("  {}", out.dim(&format!("index at {}", r.path)));
        for e in &r.embeddings {
            outln!(
                "  embeddings ({}): {}/{} chunks embedded · {} vectors in the index{}",
                e.model,
                e.embedded,
                e.chunks,
                e.indexed,
                if e.embedded < e.chunks {
                    " — `ken index`, or `ken serve`/`ken worker` when it starts, finishes it (searches work meanwhile)"
                } else {
                    ""
                }
            );
        }
        if r.people.commits > 0 {
            outln!(
                "  history: {} commits · blame: {}/{} files{}",
                r.people.commits,
                r.people.files_blamed,
                r.people.files,
                if r.people.partial() {
                    " — `ken index` finishes it (people answers are partial until then)"
                } else {
                    ""
                }
            );
        }
        if let Some(t) = &r.state.ranking {
            outln!("  {}", ranking_line(t, engine.settings().rank.learned_docs));
        }
        if let Some(a) = &r.state.adapter {
            outln!("  {}", adapter_line(a));
        }
        if let Some(s) = &r.state.scip {
            outln!(
                "  graph: SCIP index {} ({}) read {}: {} files; files changed since and the rest resolve by name",
                s.source,
                if s.tool.is_empty() {
                    "tool unnamed"
                } else {
                    &s.tool
                },
                ken_engine::format_date(s.read_at),
                s.files
            );
        }
        if !r.issue_templates.is_empty() {
            outln!(
                "  issue templates: {} (a bug report's lines that repeat them are not searched)",
                r.issue_templates.join(", ")
            );
        }
        if let Some(src) = &r.state.source {
            outln!("  source: {src}");
        }
        if let Some(h) = &r.remote {
            let when = ken_engine::format_date(h.polled_at);
            match (&h.head, &h.error) {
                (Some(head), _) if r.state.commit.as_ref() == Some(head) => {
                    outln!("  remote: {} (polled {when})", out.green("up to date"))
                }
                (Some(head), _) => outln!(
                    "  remote: {} at {} (polled {when}; an index job follows it)",
                    out.yellow("moved"),
                    &head[..head.len().min(12)]
                ),
                (None, Some(e)) => outln!(
                    "  remote: {} (polled {when}): {e}",
                    out.yellow("unreadable")
                ),
                (None, None) => outln!("  remote: polled {when}"),
            }
        }
        if let Some(p) = &r.state.pending {
            outln!(
                "  {} an index run towards {p} did not finish: run `ken index` again",
                out.yellow("note:")
            );
        }
    }
    Ok(0)
}

/// The query map dense retrieval learned from history, in one line.
pub fn adapter_line(a: &ken_engine::DenseAdapter) -> String {
    format!(
        "dense queries: a map learned from {} past commits for {}: held-out file MRR@10 {:.3} plain, {:.3} mapped — {}",
        a.questions,
        a.model,
        a.heldout_plain,
        a.heldout_adapted,
        if a.adopted {
            "in use (`dense_adapter = false` in config.toml searches without it)"
        } else {
            "not in use (no better than the plain query)"
        }
    )
}

/// What was learned from history, in one line.
pub fn ranking_line(t: &ken_engine::TunedRanking, docs_in_use: bool) -> String {
    let learned: Vec<String> = t.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "ranking: learned from {} past commits ({} answerable, {}): held-out MRR@10 {:.3} with the defaults, {:.3} learned — {}",
        t.questions,
        t.answerable,
        t.mode,
        t.heldout_default,
        t.heldout_learned,
        if t.adopted && t.code_questions < ken_engine::LEARNED_SHAPE_MIN {
            format!(
                "in use ({}), but not for questions with code or a traceback ({} of its questions had any)",
                learned.join(", "),
                t.code_questions
            )
        } else if t.adopted {
            format!("in use ({})", learned.join(", "))
        } else {
            "not in use (no better than the defaults)".to_string()
        }
    ) + &t
        .docs
        .as_ref()
        .map(|d| docs_line(d, docs_in_use))
        .unwrap_or_default()
}

/// What the documentation taught, as the rest of the ranking line.
fn docs_line(d: &ken_engine::DocsRanking, in_use: bool) -> String {
    let used = match d.chosen.as_str() {
        "docs" => {
            let p: Vec<String> = d.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("its own ({})", p.join(", "))
        }
        "commits" => "what the commits taught".to_string(),
        _ => "the defaults".to_string(),
    };
    let routed = if d.router.is_empty() {
        String::new()
    } else {
        format!(
            "; the router tells them from commit messages {:.0}% of the time held out",
            d.router_heldout * 100.0
        )
    };
    let get = if in_use {
        "get"
    } else {
        "would get (with `learned_docs = true`)"
    };
    format!(
        "; documentation: {} sections of {} pages as questions ({} answerable): held-out MRR@10 {:.3} with the defaults, {:.3} with the commits', {:.3} its own — questions like them {get} {used}{routed}",
        d.questions, d.pages, d.answerable, d.heldout_default, d.heldout_commits, d.heldout_learned,
    )
}
