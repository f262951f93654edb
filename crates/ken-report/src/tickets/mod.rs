//! Tickets from an issue tracker: reading exports (GitHub JSON, CSV), finding
//! ticket references in commit messages, linking commits to tickets, and
//! searching tickets by free text.
//!
//! When an export holds the same id twice, the last record wins; it keeps the
//! position of the first.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use ken_core::Ticket;
use ken_core::time::days_from_civil;
use regex::Regex;
use serde_json::{Map, Value};

mod csv;
mod dates;
mod json;
mod links;
mod search;

use self::csv::*;
use self::dates::*;
use self::json::*;
use self::links::*;
pub use self::links::{Links, TicketRef, link_commits, references};
pub use self::search::search_tickets;
#[cfg(test)]
use self::search::*;

/// Why an export could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TicketError {
    /// The bytes are not UTF-8.
    #[error("the tickets file is not valid UTF-8 (bad byte at offset {offset}); export as UTF-8")]
    NotUtf8 { offset: usize },
    /// The JSON does not parse.
    #[error("the tickets file is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The JSON parses but is neither an array nor an object.
    #[error("the tickets JSON is {found}; expected an array of ticket objects or one object")]
    JsonShape { found: &'static str },
    /// One record (0-based array index) of a JSON export is wrong.
    #[error("JSON record [{index}]: {message}")]
    Record { index: usize, message: String },
    /// The CSV has no header row.
    #[error("the CSV tickets file is empty; expected a header row with columns `id` and `title`")]
    EmptyCsv,
    /// The CSV header lacks a required column.
    #[error(
        "the CSV header lacks the column(s) {missing}; found columns: {found}; \
         required: `id` (or `key`, `number`) and `title` (or `summary`)"
    )]
    MissingColumns { missing: String, found: String },
    /// A CSV record (starting on 1-based `line`) is wrong.
    #[error("CSV line {line}: {message}")]
    Csv { line: usize, message: String },
}

type Res<T> = Result<T, TicketError>;

/// The shape of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketFormat {
    /// JSON if the first non-space byte is `[` or `{`, else CSV.
    Auto,
    /// `gh issue list --json …`, `gh pr list --json …`, the REST API's
    /// issues, or serialised [`Ticket`]s.
    GithubJson,
    /// A CSV with a header row (Jira and spreadsheet exports).
    Csv,
}

/// Reads an issue-tracker export. Auto: JSON if the first non-space byte is
/// `[` or `{`, else CSV. A UTF-8 byte-order mark is skipped; of duplicate
/// ids the last record wins.
pub fn parse_tickets(bytes: &[u8], format: TicketFormat) -> Result<Vec<Ticket>, TicketError> {
    let text = std::str::from_utf8(bytes).map_err(|e| TicketError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json = match format {
        TicketFormat::Auto => matches!(text.trim_start().as_bytes().first(), Some(b'[' | b'{')),
        f => f == TicketFormat::GithubJson,
    };
    let tickets = if json {
        parse_json(text)
    } else {
        parse_csv(text)
    }?;
    let mut out: Vec<Ticket> = Vec::with_capacity(tickets.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for t in tickets {
        match seen.get(&t.id) {
            Some(&i) => out[i] = t,
            None => {
                seen.insert(t.id.clone(), out.len());
                out.push(t);
            }
        }
    }
    Ok(out)
}

fn clean_id(s: &str) -> String {
    s.trim().trim_start_matches('#').trim().to_string()
}

/// `open` or `closed` from a tracker's state or status.
fn map_state(s: &str) -> &'static str {
    const CLOSED: &str =
        "closed|done|resolved|fixed|won't fix|wontfix|merged|completed|complete|cancelled|canceled";
    let s = s.trim().to_lowercase().replace('\u{2019}', "'");
    if CLOSED.split('|').any(|c| c == s) {
        "closed"
    } else {
        "open"
    }
}

fn bad_date(what: &str, value: &str) -> String {
    let v: String = value.chars().take(60).collect();
    format!(
        "{what} holds {v:?}, which is not a date; expected RFC 3339 (2024-05-01T12:34:56Z), \
         YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] or unix seconds"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into())
            + "/tests/data/tickets/";
        std::fs::read(format!("{dir}{name}")).expect("fixture")
    }

    /// One line per ticket: id kind state [labels] @assignees by author
    /// opened..closed -> links | title.
    fn show(bytes: &[u8], format: TicketFormat) -> Vec<String> {
        let date = |d: Option<i64>| d.map_or("-".into(), |d| d.to_string());
        let tickets = parse_tickets(bytes, format).unwrap();
        let show = |t: &Ticket| {
            let (labels, who) = (t.labels.join(","), t.assignees.join(","));
            let by = t.author.as_deref().unwrap_or("-");
            let (opened, closed, links) = (date(t.opened), date(t.closed), t.links.join(","));
            let head = format!("{} {} {} [{labels}] @{who} by {by}", t.id, t.kind, t.state);
            format!("{head} {opened}..{closed} -> {links} | {}", t.title)
        };
        tickets.iter().map(show).collect()
    }

    fn ticket(id: &str, title: &str, labels: &[&str], links: &[&str]) -> Ticket {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        let (state, kind) = ("open".into(), "issue".into());
        let (id, title) = (id.into(), title.into());
        Ticket {
            id,
            title,
            state,
            kind,
            labels: strings(labels),
            links: strings(links),
            ..Default::default()
        }
    }

    fn error(bytes: &[u8], format: TicketFormat) -> String {
        parse_tickets(bytes, format).unwrap_err().to_string()
    }

    #[test]
    fn reads_github_json_issues_pulls_and_rest() {
        assert_eq!(
            show(&fixture("gh_issues.json"), TicketFormat::Auto),
            [
                // createdAt 2024-05-01T12:34:56+02:00, closedAt 2024-05-01T12:34:56.789Z
                "12 issue closed [bug,auth] @alice by bob 1714559696..1714566896 -> 40 | Login fails after token expiry",
                "13 issue open [] @ by - 1714636800..- ->  | Dark mode",
                "14 issue open [] @ by - -..- ->  | Minimal record",
            ]
        );
        // mergedAt stands for closedAt; commits link their shas.
        assert_eq!(
            show(&fixture("gh_prs.json"), TicketFormat::GithubJson),
            [
                "40 pull closed [] @ by alice 1714467600..1714566896 -> \
                 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b,abcdef0123456789abcdef0123456789abcdef01 \
                 | Refresh auth tokens before they expire",
                "41 pull open [] @ by carol 1714726800..- ->  | Dark mode",
            ]
        );
        assert_eq!(
            show(&fixture("rest_issues.json"), TicketFormat::Auto),
            [
                "7 issue open [bug] @ by carol 1709337600..- ->  | Crash on startup",
                "8 pull closed [] @carol by dave 1709510400..1709596800 ->  | Fix crash",
            ]
        );
        let one = br##" {"number": "#3", "title": "x", "state": "OPEN", "kind": "pull"} "##;
        assert_eq!(
            show(one, TicketFormat::Auto),
            ["3 pull open [] @ by - -..- ->  | x"]
        );
        let dup = br#"[{"number": 1, "title": "a"}, {"number": 2}, {"number": 1, "title": "b"}]"#;
        let titles = show(dup, TicketFormat::Auto);
        assert!(
            titles[0].ends_with("| b") && titles.len() == 2,
            "{titles:?}"
        );
    }

    #[test]
    fn json_errors_say_what_is_wrong() {
        let e = error(
            br#"[{"number": 1}, {"title": "no id"}]"#,
            TicketFormat::Auto,
        );
        assert!(e.contains("record [1]") && e.contains("`number`"), "{e}");
        let e = error(
            br#"[{"number": 1, "closedAt": "last week"}]"#,
            TicketFormat::Auto,
        );
        assert!(
            e.contains("`closedAt` holds \"last week\"") && e.contains("RFC 3339"),
            "{e}"
        );
        let e = error(b"42", TicketFormat::GithubJson);
        assert!(e.contains("a number; expected an array"), "{e}");
        assert!(matches!(
            parse_tickets(b"[1,", TicketFormat::Auto),
            Err(TicketError::Json(_))
        ));
        let bad_utf8 = parse_tickets(b"id,title\n\xff,x", TicketFormat::Auto);
        assert!(matches!(bad_utf8, Err(TicketError::NotUtf8 { offset: 9 })));
    }

    #[test]
    fn reads_csv_with_quotes_newlines_bom_crlf_and_jira_keys() {
        let jira = fixture("jira.csv");
        assert!(jira.starts_with(b"\xEF\xBB\xBF") && jira.windows(2).any(|w| w == b"\r\n"));
        assert_eq!(
            show(&jira, TicketFormat::Auto),
            [
                "PROJ-101 issue closed [auth,bug] @alice,bob by - 1709337600..1710926100 \
                 -> 1a2b3c4,PROJ-7 | Login fails, \"token\" expired",
                "12 issue closed [] @ by - 1709632800..- ->  | Crash on start",
                "PROJ-9 issue open [] @ by - -..- ->  | Trailing row",
            ]
        );
        let t = parse_tickets(&jira, TicketFormat::Csv).unwrap();
        assert_eq!(t[0].body, "Steps:\n1. log in\n2. wait");
        let tabs =
            b"Key\tSummary\tStatus\tType\n\"#5\"\t\"A \"\"quoted\"\" one\"\tOpen\tPull Request\n";
        assert_eq!(
            show(tabs, TicketFormat::Csv),
            ["5 pull open [] @ by - -..- ->  | A \"quoted\" one"]
        );
    }

    #[test]
    fn csv_errors_name_columns_and_lines() {
        let e = error(b"key,status,Assignee\nA-1,open,x\n", TicketFormat::Csv);
        assert!(
            e.contains("`title`") && e.contains("found columns: `key`, `status`, `Assignee`"),
            "{e}"
        );
        let e = error(
            b"id,title,closed\n1,a,2024-01-02\n2,b,yesterday\n",
            TicketFormat::Csv,
        );
        assert!(
            e.starts_with("CSV line 3:") && e.contains("column `closed` holds \"yesterday\""),
            "{e}"
        );
        let e = error(b"id,title\n\"multi\nline\",a\n ,b\n", TicketFormat::Csv);
        assert!(
            e.starts_with("CSV line 4:") && e.contains("`id` cell is empty"),
            "{e}"
        );
        let e = error(b"id,title\n1,\"never closed\n", TicketFormat::Csv);
        assert!(e.starts_with("CSV line 2:"), "{e}");
        assert!(matches!(
            parse_tickets(b"  \n", TicketFormat::Auto),
            Err(TicketError::EmptyCsv)
        ));
    }

    #[test]
    fn dates_in_every_accepted_form() {
        assert_eq!(parse_date("2024-05-01T12:34:56Z"), Some(1_714_566_896));
        assert_eq!(
            parse_date("2024-05-01T14:34:56.5+02:00"),
            Some(1_714_566_896)
        );
        assert_eq!(parse_date("2024-05-01 12:34"), Some(1_714_566_840));
        assert_eq!(parse_date("1714566896"), Some(1_714_566_896));
        assert_eq!(parse_date("2024-02-29"), Some(1_709_164_800));
        let bad = "2023-02-29 2024-13-01 2024-05-01T25:00 2024-05-01T12:00+2 05/01/2024 \
                   2024-05-01T12:00:00. 2024-05-01x 2024-05-01T12:00:61";
        for bad in bad.split_whitespace() {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn references_found_in_commit_messages() {
        let refs = |message: &str| -> Vec<String> {
            let show = |r: TicketRef| format!("{}{}", r.id, if r.closes { "!" } else { "" });
            references(message).into_iter().map(show).collect()
        };
        assert_eq!(refs("Add retry (#456)"), ["456"]);
        assert_eq!(
            refs("Merge pull request #456 from alice/fix-login"),
            ["456"]
        );
        assert_eq!(refs("Fixes #123; see GH-124 and #123"), ["123!", "124"]);
        assert_eq!(
            refs("closes: #1, #2 and #3\n\nrelated to #4"),
            ["1!", "2!", "3!", "4"]
        );
        let urls = "resolved https://github.com/o/r/issues/77, see https://github.com/o/r/pull/78";
        assert_eq!(refs(urls), ["77!", "78"]);
        let jira = "PROJ-101: login; Resolves AB2-7. Merge branch 'feature/PROJ-101-x'";
        assert_eq!(refs(jira), ["PROJ-101", "AB2-7!"]);
        assert_eq!(refs("Fix crash (#12)"), ["12"]);
    }

    #[test]
    fn references_ignore_look_alikes() {
        let none = [
            "color: #fff; background: #a1b2c3; border: #333;",
            "# Heading\n## 2. Steps",
            "escape &#123; and &#x1F600;",
            "use UTF-8, SHA-256, ISO-8601, RFC-2616, PEP-8, CVE-2021-1234, HTTP-2 and X-Frame",
            "bump to v1.2.3 (from 1.2.2), LIB-1.2.3",
            "see other/repo#12 and https://example.com/page#34; #007",
            "proj-101 in lower case",
        ];
        for message in none {
            assert_eq!(references(message), [], "{message}");
        }
    }

    #[test]
    fn links_commits_through_refs_pull_requests_and_shas() {
        let full = "abcdef0123456789abcdef0123456789abcdef01";
        let tickets = [
            ticket("12", "Login fails", &["bug"], &["40"]),
            ticket("40", "Fix login", &[], &[full]),
            ticket("13", "Slow start", &[], &["C0FFEE1"]),
            ticket("PROJ-101", "Token refresh", &[], &[]),
        ];
        let commits = [
            ("aaaa", "Fix login redirect (#40)"),
            ("bbbb", "Refactor, mentions #99 and #12"),
            ("c0ffee1234567890", "Speed up start"),
            (full, "wip"),
            ("dddd", "proj-101: refresh tokens early"),
            ("eeee", "Nothing to see (#77)"),
        ];
        let links = link_commits(&commits, &tickets);
        assert_eq!(links.by_commit["aaaa"], ["40", "12"]);
        assert_eq!(links.by_commit["bbbb"], ["12"]);
        assert_eq!(links.by_commit["c0ffee1234567890"], ["13"]);
        assert_eq!(links.by_commit[full], ["40", "12"]);
        assert_eq!(links.by_commit["dddd"], ["PROJ-101"]);
        assert!(!links.by_commit.contains_key("eeee"));
        assert_eq!(links.by_ticket["12"], ["aaaa", "bbbb", full]);
        assert_eq!(links.by_ticket["PROJ-101"], ["dddd"]);
    }

    #[test]
    fn search_ranks_the_auth_bug_first_and_honours_id_mentions() {
        let mut tickets = vec![
            ticket("1", "Auth docs typo", &["docs"], &[]),
            ticket("2", "Crash on startup", &["bug"], &[]),
            ticket("3", "Add dark mode", &["enhancement"], &[]),
            ticket("4", "Auth token refresh bug", &["bug", "auth"], &[]),
            ticket("5", "Refresh button misaligned", &["ui"], &[]),
            ticket("PROJ-7", "Login page slow", &["perf"], &[]),
        ];
        tickets[3].body = "The refreshToken is not renewed, users are logged out.".into();
        let ids = |question: &str, limit: usize| -> Vec<usize> {
            search_tickets(&tickets, question, limit)
                .into_iter()
                .map(|h| h.0)
                .collect()
        };
        assert_eq!(ids("did the auth bug get fixed", 10), [3, 0, 1]);
        assert_eq!(ids("is #3 related to the auth bug?", 2), [2, 3]);
        assert_eq!(ids("what about proj-7", 5), [5]);
        assert_eq!(ids("refresh token", 5)[0], 3);
        assert!(ids("the of and", 5).is_empty() && search_tickets(&[], "auth", 5).is_empty());
        assert!(
            search_tickets(&tickets, "auth bug", 5)
                .iter()
                .all(|h| h.1 > 0.0)
        );
    }

    #[test]
    fn tokens_split_identifiers() {
        let expected = ["parse", "http", "request", "refresh", "token", "v2", "api"];
        assert_eq!(tokens("parseHTTPRequest refresh_tokens v2Api"), expected);
    }

    #[test]
    fn never_panics_on_odd_input() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet = b"[]{}\",:\r\n#-0123456789abcAZ &;/\\\xef\xbb\xbf\xff tT+.";
        for len in 0..400 {
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            };
            let bytes: Vec<u8> = (0..len % 60).map(|_| next()).collect();
            for f in [
                TicketFormat::Auto,
                TicketFormat::GithubJson,
                TicketFormat::Csv,
            ] {
                let _ = parse_tickets(&bytes, f);
                let _ = parse_tickets(&[b"id,title\n".as_slice(), &bytes].concat(), f);
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let t = text.as_str();
            let tickets = [ticket("1", t, &[], &[t])];
            let _ = (
                references(t),
                parse_date(t),
                link_commits(&[(t, t)], &tickets),
            );
            let _ = search_tickets(&tickets, t, 3);
        }
        assert!(parse_tickets("[".repeat(10_000).as_bytes(), TicketFormat::Auto).is_err());
    }
}
