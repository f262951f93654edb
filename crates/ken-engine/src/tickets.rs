//! `ken tickets`: tickets imported from an issue tracker's export, linked
//! to the commits that name them, and the tickets a question is about (for
//! `ken who` and `ken ask`).

use std::collections::{HashMap, HashSet};

use ken_core::Ticket;
use ken_store::CommitRecord;
use serde::Serialize;

use crate::repo::OpenRepo;
use crate::{EngineError, Result};

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketImport {
    pub repo: String,
    pub read: usize,
    pub added: usize,
    pub replaced: usize,
    /// Tickets (of all imported so far) with at least one linked commit.
    pub linked: usize,
    /// Commits of the index linked to any ticket.
    pub commits_linked: usize,
}

pub fn import_tickets(
    home: &dyn ken_store::Home,
    repo: &OpenRepo,
    key: &str,
    bytes: &[u8],
    format: ken_report::tickets::TicketFormat,
) -> Result<TicketImport> {
    let tickets = ken_report::tickets::parse_tickets(bytes, format).map_err(|e| {
        EngineError::bad_input(format!("cannot read the ticket export: {e}")).with_hint(
            "give the JSON of `gh issue list --json number,title,body,state,labels,assignees,author,createdAt,closedAt,url,closedByPullRequestsReferences`, or a CSV with columns id,title,state,labels,assignee,opened,closed",
        )
    })?;
    if tickets.is_empty() {
        return Err(EngineError::bad_input("the export holds no ticket"));
    }
    let (added, replaced) = home.put_tickets(key, &tickets, crate::time::now())?;
    let linked = linked_tickets(repo, home.tickets(key)?)?;
    let mut commits = HashSet::new();
    for t in &linked {
        commits.extend(t.commits.iter().map(|c| c.sha.clone()));
    }
    Ok(TicketImport {
        repo: repo.name.clone(),
        read: tickets.len(),
        added,
        replaced,
        linked: linked.iter().filter(|t| !t.commits.is_empty()).count(),
        commits_linked: commits.len(),
    })
}

/// A ticket with its linked commits (newest first).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkedTicket {
    pub ticket: Ticket,
    pub commits: Vec<CommitRecord>,
}

/// Every ticket with the commits linked to it.
pub fn linked_tickets(repo: &OpenRepo, tickets: Vec<Ticket>) -> Result<Vec<LinkedTicket>> {
    let commits = repo.store.all_commits()?;
    let messages: Vec<(&str, &str)> = commits
        .iter()
        .map(|c| (c.sha.as_str(), c.message.as_str()))
        .collect();
    let links = ken_report::tickets::link_commits(&messages, &tickets);
    let by_sha: HashMap<&str, &CommitRecord> =
        commits.iter().map(|c| (c.sha.as_str(), c)).collect();
    Ok(tickets
        .into_iter()
        .map(|t| {
            let commits = links
                .by_ticket
                .get(&t.id)
                .into_iter()
                .flatten()
                .filter_map(|s| by_sha.get(s.as_str()).map(|c| (*c).clone()))
                .collect();
            LinkedTicket { ticket: t, commits }
        })
        .collect())
}

/// A ticket a question is about, with the commits that addressed it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TicketEvidence {
    pub repo: String,
    pub id: String,
    pub title: String,
    pub state: String,
    pub bug: bool,
    pub opened: Option<i64>,
    pub closed: Option<i64>,
    pub url: Option<String>,
    /// Linked commits, newest first: (sha, summary, author, when, files).
    pub commits: Vec<TicketCommit>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TicketCommit {
    pub sha: String,
    pub summary: String,
    pub author: String,
    pub when: i64,
    pub files: Vec<String>,
}

/// Whether a question is about tickets: it names one (`#12`, `PROJ-101`)
/// or speaks of bugs, issues, tickets, reports or fixes.
pub fn asks_about_tickets(question: &str) -> bool {
    if !ken_report::tickets::references(question).is_empty() {
        return true;
    }
    question
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| {
            matches!(
                w,
                "bug"
                    | "bugs"
                    | "issue"
                    | "issues"
                    | "ticket"
                    | "tickets"
                    | "reported"
                    | "fixed"
                    | "fix"
                    | "fixes"
                    | "resolved"
                    | "closed"
                    | "regression"
            )
        })
}

/// The tickets of one repository that best match a question (at most `limit`).
pub fn ticket_evidence(
    repo: &OpenRepo,
    tickets: Vec<Ticket>,
    question: &str,
    limit: usize,
) -> Result<Vec<TicketEvidence>> {
    let hits = ken_report::tickets::search_tickets(&tickets, question, limit);
    if hits.is_empty() {
        return Ok(Vec::new());
    }
    let chosen: Vec<Ticket> = hits.iter().map(|(i, _)| tickets[*i].clone()).collect();
    let linked = linked_tickets(repo, chosen)?;
    let shas: Vec<String> = linked
        .iter()
        .flat_map(|t| t.commits.iter().map(|c| c.sha.clone()))
        .collect();
    let with_files = repo.store.commits(&shas, true)?;
    Ok(linked
        .into_iter()
        .map(|l| TicketEvidence {
            repo: repo.name.clone(),
            id: l.ticket.id.clone(),
            title: l.ticket.title.clone(),
            state: l.ticket.state.clone(),
            bug: l.ticket.is_bug(),
            opened: l.ticket.opened,
            closed: l.ticket.closed,
            url: l.ticket.url.clone(),
            commits: l
                .commits
                .iter()
                .map(|c| TicketCommit {
                    sha: c.sha.clone(),
                    summary: c.summary.clone(),
                    author: repo
                        .ids
                        .resolve(&c.author_name, &c.author_email)
                        .display_name,
                    when: c.author_time,
                    files: with_files
                        .get(&c.sha)
                        .map(|f| f.files.iter().map(|(p, _, _)| p.clone()).collect())
                        .unwrap_or_default(),
                })
                .collect(),
        })
        .collect())
}

/// The tickets as lines of text (for an answer's context and the extractive answer).
pub fn ticket_lines(evidence: &[TicketEvidence]) -> Vec<String> {
    let mut lines = Vec::new();
    for t in evidence {
        let when = match (t.state.as_str(), t.closed) {
            ("closed", Some(c)) => format!("closed {}", crate::time::format_date(c)),
            _ => t.state.clone(),
        };
        let kind = if t.bug { ", bug" } else { "" };
        lines.push(format!(
            "Ticket #{} ({when}{kind}): {}",
            t.id.trim_start_matches('#'),
            t.title
        ));
        if t.commits.is_empty() {
            lines.push("  no linked commit".to_string());
        }
        for c in &t.commits {
            lines.push(format!(
                "  commit {} on {} by {}: {} ({})",
                &c.sha[..c.sha.len().min(10)],
                crate::time::format_date(c.when),
                c.author,
                c.summary,
                c.files.join(", ")
            ));
        }
    }
    lines
}
