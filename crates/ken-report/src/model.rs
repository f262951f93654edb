//! The report: what `ken report --format json` prints (schema in
//! docs/report.md). Every finding carries an `id` (`S1`, `H2`, `G1`, `O3`,
//! `X1`, `P4`, `T1`) that a written summary cites.

use serde::{Deserialize, Serialize};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: u32,
    pub repo: String,
    pub indexed_commit: Option<String>,
    pub period: PeriodOut,
    pub summary: Summary,
    pub hot_files: Vec<HotFile>,
    pub god_objects: Vec<GodObject>,
    pub ownership: Vec<DirOwnership>,
    pub secrets: Vec<SecretFinding>,
    pub people: Vec<PersonActivity>,
    /// Present when tickets were imported.
    pub tickets: Option<TicketsSection>,
    /// Commits and lines per week (per month when the period passes two
    /// years) over the period, for the churn chart.
    pub timeline: Vec<Bucket>,
    /// `week` or `month`.
    pub timeline_unit: String,
    /// A written summary by a chat model, each statement checked.
    pub narrative: Option<Narrative>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodOut {
    /// `YYYY-MM-DD` (UTC) and seconds since the epoch; `until` is exclusive.
    pub since: String,
    pub until: String,
    pub since_ts: i64,
    pub until_ts: i64,
    pub since_label: String,
    pub until_label: String,
}

/// A person as the report names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonName {
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub id: String,
    /// Commits in the period, merges included.
    pub commits: u32,
    pub merges: u32,
    /// Distinct human authors (aliases merged) and bots, apart.
    pub authors: u32,
    pub bots: u32,
    pub bot_commits: u32,
    pub lines_added: u64,
    pub lines_removed: u64,
    pub files_changed: u32,
    pub areas: Vec<AreaChange>,
    pub largest_changes: Vec<CommitRef>,
    pub new_files: Vec<String>,
    pub deleted_files: Vec<String>,
    pub new_file_count: u32,
    pub deleted_file_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AreaChange {
    /// A directory (`src/auth`), or `.` for the root.
    pub area: String,
    pub commits: u32,
    pub lines_added: u64,
    pub lines_removed: u64,
    pub authors: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRef {
    pub sha: String,
    pub summary: String,
    pub author: PersonName,
    /// `YYYY-MM-DD` of the commit (committer time, as the period selects).
    pub date: String,
    pub lines_added: u32,
    pub lines_removed: u32,
    /// Why it is evidence: `change`, `fix`, `fix-of-change` (a fix to lines
    /// an earlier change of the period wrote), `large`.
    pub role: String,
    /// Tickets it references (`#12`, `PROJ-101`).
    pub tickets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HotFile {
    pub id: String,
    pub path: String,
    pub score: f64,
    pub commits: u32,
    pub authors: u32,
    /// Lines added + removed in the period.
    pub churn: u64,
    /// Commits of the period that fix something (by message or a linked bug ticket).
    pub fix_commits: u32,
    /// Changes of the period whose lines a later commit of the period fixed.
    pub changes_followed_by_fix: u32,
    /// Bug tickets linked to commits that changed the file (any time).
    pub bug_tickets: Vec<String>,
    pub evidence: Vec<CommitRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GodObject {
    pub id: String,
    /// `file` or `class`.
    pub kind: String,
    pub path: String,
    /// The class's name; None for a file.
    pub name: Option<String>,
    pub lines: u32,
    /// Commits that changed it (a file: its history to the period's end; a
    /// class: distinct commits among its current lines).
    pub commits: u32,
    pub authors: u32,
    pub fan_in: u32,
    pub score: f64,
    pub owners: Vec<OwnerShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnerShare {
    pub person: PersonName,
    pub lines: u32,
    pub share: f64,
    /// The date of their last commit (any file), `YYYY-MM-DD`.
    pub last_commit: Option<String>,
    /// No commit in the last 180 days before the period's end.
    pub inactive: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirOwnership {
    pub id: String,
    pub dir: String,
    pub lines: u64,
    /// Owners by share of current lines (blame), largest first; the top ones.
    pub owners: Vec<OwnerShare>,
    /// The smallest number of people owning at least half the lines.
    pub bus_factor: u32,
    /// Every one of those people has stopped committing.
    pub orphaned: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretFinding {
    pub id: String,
    pub rule: String,
    /// The value, redacted: never more than its first 4 characters.
    pub redacted: String,
    /// SHA-256 of the value, first 12 hex digits: the same secret has the same fingerprint.
    pub fingerprint: String,
    pub path: String,
    pub line: u32,
    /// `head` (in the indexed commit's files) or `diff` (added by a commit of the period).
    pub source: String,
    pub commit: Option<String>,
    pub author: Option<PersonName>,
    /// `high` (a known key format) or `medium` (an assignment with high entropy).
    pub confidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonActivity {
    pub id: String,
    pub person: PersonName,
    pub bot: bool,
    pub commits: u32,
    pub lines_added: u64,
    pub lines_removed: u64,
    /// Directories they changed most, with commit counts.
    pub areas: Vec<(String, u32)>,
    /// Files of the indexed commit where they hold the most lines.
    pub files_owned: u32,
    pub tickets_closed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TicketsSection {
    pub imported: u32,
    /// Tickets opened or closed in the period, with their linked commits.
    pub in_period: Vec<TicketLink>,
    /// Tickets closed in the period with no linked commit.
    pub closed_without_code: Vec<TicketLink>,
    /// Non-merge commits of the period that reference no ticket.
    pub commits_without_ticket: Vec<CommitRef>,
    pub commits_without_ticket_count: u32,
    /// Bug tickets per file, most first.
    pub bugs_per_file: Vec<(String, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TicketLink {
    pub id: String,
    pub ticket: String,
    pub title: String,
    pub state: String,
    pub bug: bool,
    pub opened: Option<String>,
    pub closed: Option<String>,
    pub assignees: Vec<String>,
    pub commits: Vec<CommitRef>,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The first day of the week (a Monday) or month, `YYYY-MM-DD`.
    pub start: String,
    pub commits: u32,
    pub lines_added: u64,
    pub lines_removed: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Narrative {
    pub model: String,
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub text: String,
    /// Finding ids it cites.
    pub cites: Vec<String>,
    /// Every cited id exists and every number in the text is a figure of a cited finding.
    pub valid: bool,
    pub problem: Option<String>,
}
