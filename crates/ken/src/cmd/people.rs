use anyhow::{Result, bail};
use ken_engine::time::{format_date, parse_time};
use ken_engine::who::{LogSearchRequest, log_search as search_log, now};
use ken_engine::{EngineError, Settings, home, people as engine_people};
use ken_store::EmbeddedStore;
use serde_json::json;

use crate::cli::{LogSearchArgs, PeopleArgs, WhoArgs};
use crate::output::Output;

pub fn who(settings: Settings, a: WhoArgs, out: &Output) -> Result<i32> {
    let query = a.query.join(" ");
    if query.trim().is_empty() {
        bail!(EngineError::Usage(
            "give a topic, path or symbol, e.g. `ken who \"payment retries\"`".into()
        ));
    }
    let r = ken_engine::who::who(&settings, &query, &a.repos, a.limit.max(1))?;
    if out.json {
        out.print_json(&json!(r));
        return Ok(0);
    }
    if r.people.is_empty() {
        outln!("nobody found for {query:?} (is the history indexed? run `ken index`)");
        return Ok(0);
    }
    outln!("{}", out.dim(&format!("{query:?} read as a {}", r.read_as)));
    for p in &r.people {
        let email = p
            .emails
            .first()
            .map(|e| format!(" <{e}>"))
            .unwrap_or_default();
        outln!(
            "{}. {}{}  {}",
            p.rank,
            out.bold(&p.name),
            email,
            out.dim(&format!("score {:.3}", p.score))
        );
        for e in p.evidence.iter().take(3) {
            let what = e.symbol.as_deref().unwrap_or(&e.path);
            let when = e.when.map(format_date).unwrap_or_default();
            outln!(
                "     {}  {:.0}% of the lines · last change {} {}",
                out.cyan(&if e.symbol.is_some() {
                    format!("{} ({})", what, e.path)
                } else {
                    what.to_string()
                }),
                e.share * 100.0,
                e.last_commit
                    .as_deref()
                    .map(|s| &s[..s.len().min(10)])
                    .unwrap_or(""),
                when
            );
        }
    }
    Ok(0)
}

pub fn people(settings: Settings, a: PeopleArgs, out: &Output) -> Result<i32> {
    let mut all = Vec::new();
    for (name, dir) in home::select_repos(&settings.home, &a.repos)? {
        let store = EmbeddedStore::open(&dir)?;
        let ids = engine_people::identities(&settings.home, &store)?;
        for p in engine_people::people(&store, ids, a.bots)? {
            all.push((name.clone(), p));
        }
    }
    if out.json {
        let people: Vec<_> = all
            .iter()
            .map(|(repo, p)| json!({"repo": repo, "person": p}))
            .collect();
        out.print_json(&json!({"people": people}));
        return Ok(0);
    }
    for (repo, p) in &all {
        let bot = if p.bot { " [bot]" } else { "" };
        outln!(
            "{}{}  {} commits{}  {}",
            out.bold(&p.name),
            bot,
            p.commits,
            p.last_commit_time
                .map(|t| format!(", last {}", format_date(t)))
                .unwrap_or_default(),
            out.dim(&format!("[{repo}] id {}", p.id))
        );
        let mut aliases: Vec<String> = p.emails.clone();
        aliases.extend(p.names.iter().filter(|n| **n != p.name).cloned());
        aliases.extend(p.handles.iter().map(|h| format!("@{h}")));
        aliases.extend(p.external.iter().map(|(k, v)| format!("{k}:{v}")));
        if !aliases.is_empty() {
            outln!("    {}", out.dim(&aliases.join(", ")));
        }
    }
    Ok(0)
}

pub fn log_search(settings: Settings, a: LogSearchArgs, out: &Output) -> Result<i32> {
    let req = LogSearchRequest {
        query: a.query.join(" "),
        repos: a.repos,
        limit: a.limit.max(1),
        author: a.author,
        since: a
            .since
            .as_deref()
            .map(|t| parse_time(t, now()))
            .transpose()?,
        until: a
            .until
            .as_deref()
            .map(|t| parse_time(t, now()))
            .transpose()?,
    };
    let hits = search_log(&settings, &req)?;
    if out.json {
        out.print_json(&json!({"query": req.query, "results": hits}));
        return Ok(0);
    }
    if hits.is_empty() {
        outln!("no commits found");
    }
    for h in &hits {
        outln!(
            "{}  {}  {}  {}",
            out.yellow(&h.sha[..h.sha.len().min(10)]),
            format_date(h.when),
            out.bold(&h.author),
            h.summary
        );
        if !h.files.is_empty() {
            let shown: Vec<&str> = h.files.iter().take(4).map(String::as_str).collect();
            let more = if h.files.len() > 4 {
                format!(" (+{})", h.files.len() - 4)
            } else {
                String::new()
            };
            outln!("    {}", out.dim(&format!("{}{more}", shown.join(", "))));
        }
    }
    Ok(0)
}
