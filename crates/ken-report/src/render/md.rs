//! The report as Markdown: for terminals and pull-request comments.

use std::fmt::Write;

use super::short;
use crate::model::{CommitRef, OwnerShare, Report};

/// Escape what Markdown tables and inline text would read as markup.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '#' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// `1 commit`, `2 commits`.
fn plural(n: u32, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn owners(list: &[OwnerShare]) -> String {
    list.iter()
        .map(|o| {
            let mark = if o.inactive { " (inactive)" } else { "" };
            format!("{} {}{mark}", esc(&o.person.name), pct(o.share))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn commit_line(c: &CommitRef) -> String {
    let tickets = if c.tickets.is_empty() {
        String::new()
    } else {
        format!(" [{}]", esc(&c.tickets.join(", ")))
    };
    format!(
        "`{}` {} {} ({}, +{}/−{}, {}){tickets}",
        short(&c.sha),
        c.date,
        esc(&c.summary),
        esc(&c.author.name),
        c.lines_added,
        c.lines_removed,
        c.role
    )
}

/// Render the report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    header(&mut o, r);
    summary(&mut o, r);
    hot(&mut o, r);
    god(&mut o, r);
    ownership(&mut o, r);
    secrets(&mut o, r);
    people(&mut o, r);
    tickets(&mut o, r);
    if !r.notes.is_empty() {
        let _ = writeln!(o, "## Notes\n");
        for n in &r.notes {
            let _ = writeln!(o, "- {}", esc(n));
        }
        o.push('\n');
    }
    o
}

fn header(o: &mut String, r: &Report) {
    let _ = writeln!(o, "# Kenning report: {}\n", esc(&r.repo));
    let _ = writeln!(
        o,
        "Period: {} → {} (`{}` → `{}`){}\n",
        r.period.since,
        r.period.until,
        esc(&r.period.since_label),
        esc(&r.period.until_label),
        r.indexed_commit
            .as_deref()
            .map(|c| format!(", indexed commit `{}`", short(c)))
            .unwrap_or_default()
    );
    if let Some(n) = &r.narrative {
        let _ = writeln!(o, "## Summary (written by {})\n", esc(&n.model));
        for s in &n.statements {
            let mark = if s.valid {
                String::new()
            } else {
                format!(
                    " ⚠ unchecked: {}",
                    esc(s.problem.as_deref().unwrap_or("not supported"))
                )
            };
            let _ = writeln!(o, "- {} [{}]{mark}", esc(&s.text), s.cites.join(", "));
        }
        o.push('\n');
    }
}

fn summary(o: &mut String, r: &Report) {
    let s = &r.summary;
    let _ = writeln!(o, "## Period summary [{}]\n", s.id);
    let _ = writeln!(
        o,
        "{} ({} merges) by {}; {} made {}. +{} / −{} lines in {}; {}, {} deleted.\n",
        plural(s.commits, "commit"),
        s.merges,
        plural(s.authors, "author"),
        plural(s.bots, "bot"),
        plural(s.bot_commits, "commit"),
        s.lines_added,
        s.lines_removed,
        plural(s.files_changed, "file"),
        plural(s.new_file_count, "new file"),
        s.deleted_file_count
    );
    if !s.areas.is_empty() {
        let _ = writeln!(
            o,
            "| area | commits | + | − | authors |\n|---|---:|---:|---:|---:|"
        );
        for a in &s.areas {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                esc(&a.area),
                a.commits,
                a.lines_added,
                a.lines_removed,
                a.authors
            );
        }
        o.push('\n');
    }
    if !s.largest_changes.is_empty() {
        let _ = writeln!(o, "Largest changes:\n");
        for c in &s.largest_changes {
            let _ = writeln!(o, "- {}", commit_line(c));
        }
        o.push('\n');
    }
    for (title, list, count) in [
        ("New files", &s.new_files, s.new_file_count),
        ("Deleted files", &s.deleted_files, s.deleted_file_count),
    ] {
        if list.is_empty() {
            continue;
        }
        let more = (count as usize).saturating_sub(list.len());
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let names: Vec<String> = list.iter().map(|p| format!("`{p}`")).collect();
        let _ = writeln!(o, "{title}: {}{tail}\n", names.join(", "));
    }
}

fn hot(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## Hot files\n");
    if r.hot_files.is_empty() {
        let _ = writeln!(o, "No file changed in the period.\n");
        return;
    }
    let _ = writeln!(
        o,
        "| id | file | score | commits | authors | churn | fixes | changes followed by a fix | bug tickets |\n|---|---|---:|---:|---:|---:|---:|---:|---|"
    );
    for h in &r.hot_files {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} |",
            h.id,
            h.path,
            h.score,
            h.commits,
            h.authors,
            h.churn,
            h.fix_commits,
            h.changes_followed_by_fix,
            esc(&h.bug_tickets.join(", "))
        );
    }
    o.push('\n');
    for h in r.hot_files.iter().filter(|h| !h.evidence.is_empty()) {
        let _ = writeln!(o, "{} `{}`:", h.id, h.path);
        for c in &h.evidence {
            let _ = writeln!(o, "- {}", commit_line(c));
        }
        o.push('\n');
    }
}

fn god(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## God objects\n");
    if r.god_objects.is_empty() {
        let _ = writeln!(
            o,
            "None: no file or class is large, widely used and changed by many people.\n"
        );
        return;
    }
    let _ = writeln!(
        o,
        "| id | kind | where | lines | commits | authors | fan-in | score | owners |\n|---|---|---|---:|---:|---:|---:|---:|---|"
    );
    for g in &r.god_objects {
        let at = match &g.name {
            Some(n) => format!("`{}` in `{}`", n, g.path),
            None => format!("`{}`", g.path),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            g.id,
            g.kind,
            at,
            g.lines,
            g.commits,
            g.authors,
            g.fan_in,
            g.score,
            owners(&g.owners)
        );
    }
    o.push('\n');
}

fn ownership(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## Ownership and bus factor\n");
    if r.ownership.is_empty() {
        let _ = writeln!(o, "No blame in the index yet.\n");
        return;
    }
    let _ = writeln!(
        o,
        "| id | directory | lines | bus factor | owners | |\n|---|---|---:|---:|---|---|"
    );
    for d in &r.ownership {
        let flag = if d.orphaned { "**orphaned**" } else { "" };
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {flag} |",
            d.id,
            d.dir,
            d.lines,
            d.bus_factor,
            owners(&d.owners)
        );
    }
    o.push('\n');
}

fn secrets(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## Hardcoded secrets\n");
    if r.secrets.is_empty() {
        let _ = writeln!(o, "No hardcoded secret found.\n");
        return;
    }
    let _ = writeln!(
        o,
        "| id | confidence | rule | value (redacted) | fingerprint | where | found in | commit | author |\n|---|---|---|---|---|---|---|---|---|"
    );
    for s in &r.secrets {
        let _ = writeln!(
            o,
            "| {} | {} | {} | `{}` | `{}` | `{}:{}` | {} | {} | {} |",
            s.id,
            s.confidence,
            s.rule,
            s.redacted,
            s.fingerprint,
            s.path,
            s.line,
            s.source,
            s.commit.as_deref().map(short).unwrap_or("—"),
            s.author.as_ref().map_or("—".to_string(), |a| esc(&a.name))
        );
    }
    o.push('\n');
}

fn people(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## People\n");
    if r.people.is_empty() {
        let _ = writeln!(o, "Nobody committed in the period.\n");
        return;
    }
    let _ = writeln!(
        o,
        "| id | person | commits | + | − | areas | files owned | tickets closed |\n|---|---|---:|---:|---:|---|---:|---|"
    );
    for p in &r.people {
        let bot = if p.bot { " (bot)" } else { "" };
        let areas: Vec<String> = p.areas.iter().map(|(a, n)| format!("`{a}` {n}")).collect();
        let _ = writeln!(
            o,
            "| {} | {}{bot} | {} | {} | {} | {} | {} | {} |",
            p.id,
            esc(&p.person.name),
            p.commits,
            p.lines_added,
            p.lines_removed,
            areas.join(", "),
            p.files_owned,
            esc(&p.tickets_closed.join(", "))
        );
    }
    o.push('\n');
}

fn tickets(o: &mut String, r: &Report) {
    let Some(t) = &r.tickets else { return };
    let _ = writeln!(o, "## Tickets\n\n{} tickets imported.\n", t.imported);
    let list = |o: &mut String, title: &str, items: &[crate::model::TicketLink]| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(o, "### {title}\n");
        for l in items {
            let bug = if l.bug { " (bug)" } else { "" };
            let _ = writeln!(
                o,
                "- {} **{}** {}{bug}: {} (opened {}, closed {})",
                l.id,
                esc(&l.ticket),
                esc(&l.title),
                l.state,
                l.opened.as_deref().unwrap_or("—"),
                l.closed.as_deref().unwrap_or("—")
            );
            for c in &l.commits {
                let _ = writeln!(o, "  - {}", commit_line(c));
            }
        }
        o.push('\n');
    };
    list(o, "Tickets of the period", &t.in_period);
    list(o, "Closed with no linked code", &t.closed_without_code);
    if t.commits_without_ticket_count > 0 {
        let _ = writeln!(
            o,
            "### Commits with no ticket ({})\n",
            t.commits_without_ticket_count
        );
        for c in &t.commits_without_ticket {
            let _ = writeln!(o, "- {}", commit_line(c));
        }
        o.push('\n');
    }
    if !t.bugs_per_file.is_empty() {
        let _ = writeln!(o, "### Bug tickets per file\n");
        for (p, n) in &t.bugs_per_file {
            let _ = writeln!(o, "- `{p}`: {n}");
        }
        o.push('\n');
    }
}
