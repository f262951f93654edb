//! Who did what in the period: commits, lines, areas, files owned, tickets closed.

use std::collections::{BTreeMap, HashMap};

use super::Ctx;
use crate::model::PersonActivity;

pub(super) fn activity(ctx: &Ctx<'_>) -> Vec<PersonActivity> {
    #[derive(Default)]
    struct Acc {
        commits: u32,
        added: u64,
        removed: u64,
        areas: BTreeMap<String, u32>,
        tickets: Vec<String>,
    }
    let mut by: HashMap<&str, Acc> = HashMap::new();
    let closed_in_period: HashMap<&str, bool> = ctx
        .input
        .tickets
        .iter()
        .map(|t| {
            let p = &ctx.input.period;
            let closed = t.is_closed() && t.closed.is_some_and(|c| c >= p.since && c < p.until);
            (t.id.as_str(), closed)
        })
        .collect();
    for &i in &ctx.period {
        let c = ctx.commit(i);
        let acc = by.entry(c.person.as_str()).or_default();
        acc.commits += 1;
        let mut areas = Vec::new();
        for f in &c.files {
            acc.added += u64::from(f.added.unwrap_or(0));
            acc.removed += u64::from(f.removed.unwrap_or(0));
            let a = ctx.area(&f.path);
            if !areas.contains(&a) {
                areas.push(a);
            }
        }
        for a in areas {
            *acc.areas.entry(a).or_default() += 1;
        }
        for t in ctx.tickets_of(&c.sha) {
            if closed_in_period.get(t.as_str()) == Some(&true) && !acc.tickets.contains(&t) {
                acc.tickets.push(t);
            }
        }
    }
    // Files of the indexed commit where each person holds the most lines.
    let mut owned: HashMap<&str, u32> = HashMap::new();
    for f in &ctx.input.files {
        if let Some((p, _)) = f
            .owners
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        {
            *owned.entry(p.as_str()).or_default() += 1;
        }
    }
    let mut out: Vec<PersonActivity> = by
        .into_iter()
        .map(|(p, acc)| {
            let mut areas: Vec<(String, u32)> = acc.areas.into_iter().collect();
            areas.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            areas.truncate(3);
            let mut tickets = acc.tickets;
            tickets.sort();
            PersonActivity {
                id: String::new(),
                person: ctx.name(p),
                bot: ctx.is_bot(p),
                commits: acc.commits,
                lines_added: acc.added,
                lines_removed: acc.removed,
                areas,
                files_owned: owned.get(p).copied().unwrap_or(0),
                tickets_closed: tickets,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.bot
            .cmp(&b.bot)
            .then_with(|| b.commits.cmp(&a.commits))
            .then_with(|| a.person.name.cmp(&b.person.name))
    });
    for (n, p) in out.iter_mut().enumerate() {
        p.id = format!("P{}", n + 1);
    }
    out
}
