//! Tickets and code: the period's tickets with their commits, tickets
//! closed with no code, commits with no ticket, bug tickets per file.

use std::collections::{BTreeMap, BTreeSet};

use ken_core::time::format_date;

use super::Ctx;
use crate::model::{CommitRef, TicketLink, TicketsSection};

pub(super) fn section(ctx: &Ctx<'_>) -> Option<TicketsSection> {
    let tickets = &ctx.input.tickets;
    if tickets.is_empty() {
        return None;
    }
    let p = &ctx.input.period;
    let within = |t: Option<i64>| t.is_some_and(|t| t >= p.since && t < p.until);
    let index = &ctx.by_sha;
    let link = |t: &ken_core::Ticket| -> TicketLink {
        let shas = ctx.links.by_ticket.get(&t.id).cloned().unwrap_or_default();
        let mut commits: Vec<CommitRef> = Vec::new();
        let mut files = BTreeSet::new();
        for sha in &shas {
            if let Some(&i) = index.get(sha.as_str()) {
                let role = if ctx.fixes[i] { "fix" } else { "change" };
                commits.push(ctx.commit_ref(i, role));
                files.extend(ctx.commit(i).files.iter().map(|f| f.path.clone()));
            }
        }
        TicketLink {
            id: String::new(),
            ticket: t.id.clone(),
            title: t.title.clone(),
            state: t.state.clone(),
            bug: t.is_bug(),
            opened: t.opened.map(format_date),
            closed: t.closed.map(format_date),
            assignees: t.assignees.clone(),
            commits,
            files: files.into_iter().take(20).collect(),
        }
    };
    let issues = || tickets.iter().filter(|t| t.kind != "pull");
    let mut in_period: Vec<TicketLink> = issues()
        .filter(|t| within(t.opened) || within(t.closed))
        .map(link)
        .collect();
    let mut closed_without_code: Vec<TicketLink> = issues()
        .filter(|t| t.is_closed() && within(t.closed))
        .map(link)
        .filter(|l| l.commits.is_empty())
        .collect();
    let orphans: Vec<usize> = ctx
        .period
        .iter()
        .copied()
        .filter(|&i| {
            let c = ctx.commit(i);
            !c.is_merge() && !ctx.is_bot(&c.person) && ctx.tickets_of(&c.sha).is_empty()
        })
        .collect();
    let mut bugs: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for t in tickets.iter().filter(|t| t.is_bug()) {
        for sha in ctx.links.by_ticket.get(&t.id).into_iter().flatten() {
            if let Some(&i) = index.get(sha.as_str()) {
                for f in &ctx.commit(i).files {
                    bugs.entry(f.path.clone())
                        .or_default()
                        .insert(t.id.as_str());
                }
            }
        }
    }
    let mut bugs_per_file: Vec<(String, u32)> =
        bugs.into_iter().map(|(p, t)| (p, t.len() as u32)).collect();
    bugs_per_file.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    bugs_per_file.truncate(ctx.params.top);
    let order = |v: &mut Vec<TicketLink>| {
        v.sort_by_key(|l| natural(&l.ticket));
    };
    order(&mut in_period);
    order(&mut closed_without_code);
    let mut n = 0;
    for l in in_period.iter_mut().chain(closed_without_code.iter_mut()) {
        n += 1;
        l.id = format!("T{n}");
    }
    let newest_first: Vec<CommitRef> = orphans
        .iter()
        .rev()
        .take(ctx.params.top)
        .map(|&i| ctx.commit_ref(i, "change"))
        .collect();
    Some(TicketsSection {
        imported: tickets.len() as u32,
        in_period,
        closed_without_code,
        commits_without_ticket_count: orphans.len() as u32,
        commits_without_ticket: newest_first,
        bugs_per_file,
    })
}

/// Ticket ids in natural order: `PROJ-9` before `PROJ-10`, `9` before `10`.
fn natural(id: &str) -> (String, u64, String) {
    let digits = id.len() - id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (head, tail) = id.split_at(id.len() - digits);
    (head.to_string(), tail.parse().unwrap_or(0), id.to_string())
}
