use anyhow::Result;
use ken_engine::Engine;
use ken_engine::format_date;

use crate::args::{LogSearchArgs, PeopleArgs, WhoArgs};
use crate::calls;
use crate::output::Output;

pub fn who(engine: &Engine, a: WhoArgs, out: &Output) -> Result<i32> {
    let who = calls::Who {
        query: a.query.join(" "),
        repos: a.repos,
        n: a.limit,
    };
    let Some(r) = super::call(engine, &who, out)? else {
        return Ok(0);
    };
    let query = &who.query;
    for n in &r.notes {
        outln!("{}", out.dim(&format!("note: {n}")));
    }
    for t in &r.tickets {
        let state = match (t.state.as_str(), t.closed) {
            ("closed", Some(c)) => format!("closed {}", format_date(c)),
            _ => t.state.clone(),
        };
        outln!(
            "{} {} {}",
            out.bold(&format!("ticket #{}", t.id)),
            out.dim(&format!("[{state}]")),
            t.title
        );
        if t.commits.is_empty() {
            outln!("     {}", out.dim("no linked commit"));
        }
        for c in &t.commits {
            outln!(
                "     {} {} by {}: {} {}",
                out.cyan(&c.sha[..c.sha.len().min(10)]),
                format_date(c.when),
                out.bold(&c.author),
                c.summary,
                out.dim(&format!("({})", c.files.join(", ")))
            );
        }
    }
    if r.people.is_empty() {
        if r.notes.is_empty() {
            outln!("nobody found for {query:?} (is the history indexed? run `ken index`)");
        } else {
            outln!("nobody found for {query:?}");
        }
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

pub fn people(engine: &Engine, a: PeopleArgs, out: &Output) -> Result<i32> {
    let people = calls::People {
        repos: a.repos,
        bots: a.bots,
    };
    let Some(all) = super::call(engine, &people, out)? else {
        return Ok(0);
    };
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

pub fn log_search(engine: &Engine, a: LogSearchArgs, out: &Output) -> Result<i32> {
    let log = calls::LogSearch {
        query: a.query.join(" "),
        repos: a.repos,
        n: a.limit,
        author: a.author,
        since: a.since,
        until: a.until,
    };
    let Some(hits) = super::call(engine, &log, out)? else {
        return Ok(0);
    };
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
