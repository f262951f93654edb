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

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_json(text: &str) -> Res<Vec<Ticket>> {
    let value: Value = serde_json::from_str(text).map_err(TicketError::Json)?;
    match &value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| json_ticket(i, v))
            .collect(),
        Value::Object(_) => Ok(vec![json_ticket(0, &value)?]),
        other => Err(TicketError::JsonShape {
            found: json_kind(other),
        }),
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The strings, or the `key` of objects, of a JSON array (or single value).
fn names(v: Option<&Value>, key: &str) -> Vec<String> {
    let one = |x: &Value| match x {
        Value::Object(m) => m.get(key).and_then(scalar),
        x => scalar(x),
    };
    let all: Vec<String> = match v {
        Some(Value::Array(a)) => a.iter().filter_map(one).collect(),
        Some(x) => one(x).into_iter().collect(),
        None => Vec::new(),
    };
    all.into_iter().filter(|s| !s.is_empty()).collect()
}

/// The first of `keys` holding a date; null and empty strings count as absent.
fn json_date(o: &Map<String, Value>, index: usize, keys: &[&str]) -> Res<Option<i64>> {
    for &k in keys {
        let bad = |v: &str| TicketError::Record {
            index,
            message: bad_date(&format!("`{k}`"), v),
        };
        let date = match o.get(k) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s.trim().is_empty() => continue,
            Some(Value::String(s)) => parse_date(s).ok_or_else(|| bad(s)),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(|| bad(&n.to_string())),
            Some(v) => Err(bad(json_kind(v))),
        };
        return date.map(Some);
    }
    Ok(None)
}

fn json_ticket(index: usize, v: &Value) -> Res<Ticket> {
    let err = |message| TicketError::Record { index, message };
    let Value::Object(o) = v else {
        return Err(err(format!(
            "is {}, expected an object with a `number`",
            json_kind(v)
        )));
    };
    // The REST API's `id` is an internal one: `number` comes first.
    let id = ["number", "key", "id"]
        .iter()
        .find_map(|k| o.get(*k).and_then(scalar));
    let id = id.map(|s| clean_id(&s)).filter(|s| !s.is_empty());
    let id =
        id.ok_or_else(|| err("has no `number` (or `id`, `key`); every ticket needs one".into()))?;
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let opened = json_date(o, index, &["createdAt", "created_at", "opened"])?;
    let closed = match json_date(o, index, &["closedAt", "closed_at", "closed"])? {
        None => json_date(o, index, &["mergedAt", "merged_at"])?,
        closed => closed,
    };
    let state = match text(&["state", "status"]) {
        Some(s) => map_state(&s),
        None if closed.is_some() => "closed",
        None => "open",
    };
    let url = text(&["html_url", "url"]);
    let pull = text(&["kind"]).is_some_and(|k| k == "pull")
        || [
            "mergedAt",
            "merged_at",
            "commits",
            "headRefName",
            "pull_request",
        ]
        .iter()
        .any(|k| o.contains_key(*k))
        || url.as_deref().is_some_and(|u| u.contains("/pull/"));
    let mut assignees = names(o.get("assignees"), "login");
    if assignees.is_empty() {
        assignees = names(o.get("assignee"), "login");
    }
    let mut links = names(o.get("closedByPullRequestsReferences"), "number");
    links.extend(names(o.get("commits"), "oid"));
    links.extend(names(o.get("links"), "id"));
    Ok(Ticket {
        id,
        title: text(&["title", "summary"]).unwrap_or_default(),
        body: text(&["body", "description"]).unwrap_or_default(),
        state: state.to_string(),
        kind: if pull { "pull" } else { "issue" }.to_string(),
        labels: names(o.get("labels"), "name"),
        assignees,
        author: names(o.get("author").or(o.get("user")), "login")
            .into_iter()
            .next(),
        opened,
        closed,
        url,
        links,
    })
}

/// The records of an RFC 4180 text, each with the (1-based) line it starts
/// on. Blank lines are skipped; text after a closing quote is kept.
fn csv_records(text: &str, sep: char) -> Res<Vec<(usize, Vec<String>)>> {
    let (mut records, mut fields, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut line, mut start_line, mut quote_line) = (1, 1, 1);
    let (mut in_quotes, mut at_start) = (false, true);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.next_if_eq(&'"').is_some() => field.push('"'),
                '"' => in_quotes = false,
                '\r' if chars.peek() == Some(&'\n') => {}
                _ => {
                    line += usize::from(c == '\n');
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if at_start => (in_quotes, quote_line) = (true, line),
            '\r' | '\n' => {
                if c == '\r' {
                    chars.next_if_eq(&'\n');
                }
                fields.push(std::mem::take(&mut field));
                end_record(&mut records, &mut fields, start_line);
                line += 1;
                (start_line, at_start) = (line, true);
                continue;
            }
            c if c == sep => {
                fields.push(std::mem::take(&mut field));
                at_start = true;
                continue;
            }
            c => field.push(c),
        }
        at_start = false;
    }
    if in_quotes {
        let message = "a quoted field is never closed (a quote inside one is written `\"\"`)";
        return Err(TicketError::Csv {
            line: quote_line,
            message: message.into(),
        });
    }
    fields.push(field);
    end_record(&mut records, &mut fields, start_line);
    Ok(records)
}

/// Keeps a record unless it is a blank line.
fn end_record(records: &mut Vec<(usize, Vec<String>)>, fields: &mut Vec<String>, line: usize) {
    if fields.len() == 1 && fields[0].trim().is_empty() {
        fields.clear();
    } else {
        records.push((line, std::mem::take(fields)));
    }
}

/// Trimmed, de-duplicated, non-empty parts of `s` split on `seps` (where
/// `' '` stands for any white space).
fn split_list(s: &str, seps: &[char]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let split = |c: char| seps.contains(&c) || (seps.contains(&' ') && c.is_whitespace());
    for part in s.split(split).map(str::trim).filter(|p| !p.is_empty()) {
        if !out.iter().any(|p| p == part) {
            out.push(part.to_string());
        }
    }
    out
}

fn parse_csv(text: &str) -> Res<Vec<Ticket>> {
    let first = text.lines().next().unwrap_or("");
    let sep = [',', '\t', ';']
        .into_iter()
        .find(|&c| first.contains(c))
        .unwrap_or(',');
    let records = csv_records(text, sep)?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Err(TicketError::EmptyCsv);
    };
    // Header names compare in lower case with only letters and digits kept.
    let norm_header = |h: &String| -> String {
        h.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let names: Vec<String> = header.iter().map(norm_header).collect();
    let col = |aliases: &str| {
        aliases
            .split(' ')
            .find_map(|a| names.iter().position(|n| n == a))
    };
    let cols = |aliases: &str| -> Vec<usize> {
        (0..names.len())
            .filter(|&i| aliases.split(' ').any(|a| a == names[i]))
            .collect()
    };
    let (id_col, title_col) = (col("id key issuekey number"), col("title summary subject"));
    let (Some(id_col), Some(title_col)) = (id_col, title_col) else {
        let missing = [(id_col, "`id`"), (title_col, "`title`")].into_iter();
        let missing: Vec<&str> = missing
            .filter_map(|(c, n)| c.is_none().then_some(n))
            .collect();
        let found: Vec<String> = header.iter().map(|h| format!("`{}`", h.trim())).collect();
        let found = if found.is_empty() {
            "none".into()
        } else {
            found.join(", ")
        };
        return Err(TicketError::MissingColumns {
            missing: missing.join(" and "),
            found,
        });
    };
    let state_col = col("state status");
    let opened_col = col("opened created createdat openedat");
    let closed_col = col("closed closedat resolved resolvedat resolutiondate");
    let (body_col, url_col) = (col("body description"), col("url htmlurl"));
    let (type_col, author_col) = (col("type issuetype kind"), col("author reporter creator"));
    let (label_cols, assignee_cols) = (cols("labels label tags"), cols("assignee assignees"));
    let link_cols = cols("links commits");
    let mut tickets = Vec::with_capacity(rows.len());
    for &(line, ref row) in rows {
        let get = |c: Option<usize>| c.and_then(|c| row.get(c)).map_or("", |s| s.trim());
        let id = clean_id(get(Some(id_col)));
        if id.is_empty() {
            let message = format!(
                "the `{}` cell is empty; every row needs an id",
                header[id_col]
            );
            return Err(TicketError::Csv { line, message });
        }
        let date = |c: Option<usize>| -> Res<Option<i64>> {
            let (Some(c), v) = (c, get(c)) else {
                return Ok(None);
            };
            if v.is_empty() {
                return Ok(None);
            }
            let message = || bad_date(&format!("column `{}`", header[c].trim()), v);
            parse_date(v).map(Some).ok_or_else(|| TicketError::Csv {
                line,
                message: message(),
            })
        };
        let (opened, closed) = (date(opened_col)?, date(closed_col)?);
        let multi = |cs: &[usize], seps: &[char]| {
            let joined: Vec<&str> = cs.iter().map(|&c| get(Some(c))).collect();
            split_list(&joined.join(&seps[0].to_string()), seps)
        };
        let mut labels = multi(&label_cols, &[';', ',', '|']);
        let kind = get(type_col).to_lowercase();
        let has_bug = labels.iter().any(|l| l.eq_ignore_ascii_case("bug"));
        if (kind.contains("bug") || kind.contains("defect")) && !has_bug {
            labels.push("bug".into());
        }
        let state = match get(state_col) {
            "" if closed.is_some() => "closed",
            s => map_state(s),
        };
        let url = Some(get(url_col).to_string()).filter(|u| !u.is_empty());
        let pull = kind.contains("pull")
            || kind.contains("merge request")
            || kind == "pr"
            || url.as_deref().is_some_and(|u| u.contains("/pull/"));
        tickets.push(Ticket {
            id,
            title: get(Some(title_col)).to_string(),
            body: get(body_col).to_string(),
            state: state.into(),
            kind: if pull { "pull" } else { "issue" }.into(),
            labels,
            assignees: multi(&assignee_cols, &[';', ',', '|']),
            author: Some(get(author_col).to_string()).filter(|a| !a.is_empty()),
            opened,
            closed,
            url,
            links: multi(&link_cols, &[' ', ';', ','])
                .iter()
                .map(|l| clean_id(l))
                .collect(),
        });
    }
    Ok(tickets)
}

fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// Unix seconds of `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|±HH:MM]`
/// (no offset: UTC) or plain unix seconds.
fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(n) = digits(s) {
        return Some(n);
    }
    if !s.is_ascii() || s.len() < 10 || &s[4..5] != "-" || &s[7..8] != "-" {
        return None;
    }
    let (y, mo, d) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match mo {
        2 => 28 + i64::from(leap),
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&mo) || !(1..=month_days).contains(&d) {
        return None;
    }
    let day = days_from_civil(y as i32, mo as u32, d as u32) * 86_400;
    let Some(rest) = s[10..].strip_prefix(['T', 't', ' ']) else {
        return s[10..].is_empty().then_some(day);
    };
    let (h, mi) = (digits(rest.get(..2)?)?, digits(rest.get(3..5)?)?);
    if &rest[2..3] != ":" || h > 23 || mi > 59 {
        return None;
    }
    let (mut rest, mut sec) = (&rest[5..], 0);
    if let Some(r) = rest.strip_prefix(':') {
        (sec, rest) = (digits(r.get(..2)?)?, &r[2..]);
        if let Some(r) = rest.strip_prefix(['.', ',']) {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            (n > 0 && sec <= 60).then_some(())?;
            rest = &r[n..];
        }
    }
    let offset = match rest.trim_start() {
        "" | "Z" | "z" | "UTC" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let o = o.strip_prefix(['+', '-'])?;
            let (oh, om) = match o.len() {
                5 if &o[2..3] == ":" => (digits(&o[..2])?, digits(&o[3..])?),
                4 => (digits(&o[..2])?, digits(&o[2..])?),
                2 => (digits(o)?, 0),
                _ => return None,
            };
            (oh < 24 && om < 60).then_some(sign * (oh * 3600 + om * 60))?
        }
    };
    (sec <= 60).then_some(day + h * 3600 + mi * 60 + sec - offset)
}

/// A reference to a ticket in a commit message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketRef {
    /// `123` or `PROJ-101`.
    pub id: String,
    /// Whether a closing keyword precedes it: `fixes/closes/resolves #123`.
    pub closes: bool,
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid regex")
}

static URL_RE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\bhttps?://[^\s/]+/[\w.-]+/[\w.-]+/(?:-/)?(?:issues|pulls?|merge_requests)/(\d+)\b")
});
static HASH_RE: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)(?:\bGH-|#)(\d+)\b"));
static KEY_RE: LazyLock<Regex> = LazyLock::new(|| regex(r"\b([A-Za-z][A-Za-z0-9]{1,9})-(\d+)\b"));
static CLOSE_RE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?"));

/// Prefixes of `WORD-123` that name standards, encodings and the like.
const NOT_TICKETS: &str = "UTF UCS SHA MD ISO IEC IEEE RFC PEP JEP KEP BIP EIP ERC PSR CVE CWE \
    HTTP HTTPS TLS SSL AES RSA DES CRC BASE ECMA ES WIN X86 ARM AMD COVID CP ANSI IPV FIPS LTS \
    UTC GMT GPL LGPL AGPL MPL BSD APACHE OAUTH SQL";

/// Whether `#digits` at `start..end` looks like a ticket reference.
fn plausible_hash(msg: &str, start: usize, end: usize, number: &str) -> bool {
    let before = &msg[..start];
    // `&#123;`, `##1`, `#007`/`#000`, `owner/repo#12` (another repository) or a URL fragment.
    let word_before = before.rsplit(char::is_whitespace).next().unwrap_or("");
    if before.ends_with(['&', '#']) || number.starts_with('0') || word_before.contains('/') {
        return false;
    }
    // A CSS colour: `color: #333;`.
    let css = before.trim_end().ends_with(':') && msg[end..].trim_start().starts_with(';');
    !(css && matches!(number.len(), 3 | 4 | 6 | 8))
}

/// References in `message`; Jira-style keys in any case when `any_case`
/// (upper-cased, without the deny-list, for matching known tickets).
fn scan(message: &str, any_case: bool) -> Vec<TicketRef> {
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for c in URL_RE.captures_iter(message) {
        if let (Some(m), Some(n)) = (c.get(0), c.get(1)) {
            found.push((m.start(), m.end(), n.as_str().to_string()));
        }
    }
    for c in HASH_RE.captures_iter(message) {
        if let (Some(m), Some(n)) = (c.get(0), c.get(1))
            && !n.as_str().starts_with('0')
            && (!m.as_str().starts_with('#')
                || plausible_hash(message, m.start(), m.end(), n.as_str()))
        {
            found.push((m.start(), m.end(), n.as_str().to_string()));
        }
    }
    for c in KEY_RE.captures_iter(message) {
        let (Some(m), Some(prefix), Some(n)) = (c.get(0), c.get(1), c.get(2)) else {
            continue;
        };
        let upper = prefix.as_str().to_ascii_uppercase();
        let after = &message[m.end()..];
        let version = after
            .strip_prefix('.')
            .is_some_and(|r| r.starts_with(char::is_numeric));
        let denied = !any_case
            && (upper != prefix.as_str() || NOT_TICKETS.split_whitespace().any(|w| w == upper));
        if !(version || denied || upper == "GH") {
            found.push((m.start(), m.end(), format!("{upper}-{}", n.as_str())));
        }
    }
    found.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1)));
    let mut refs: Vec<(usize, usize, String)> = Vec::new();
    for f in found {
        if refs.last().is_none_or(|r| f.0 >= r.1) {
            refs.push(f);
        }
    }
    // A closing keyword closes the list of references right after it.
    let mut closes = vec![false; refs.len()];
    for k in CLOSE_RE.find_iter(message) {
        let (mut pos, first) = (k.end(), refs.partition_point(|r| r.0 < k.end()));
        for (i, r) in refs.iter().enumerate().skip(first) {
            let gap =
                message[pos..r.0].trim_matches(|c: char| c.is_whitespace() || ",:".contains(c));
            if !(gap.is_empty() || gap.eq_ignore_ascii_case("and") || gap == "&") {
                break;
            }
            (closes[i], pos) = (true, r.1);
        }
    }
    let mut out: Vec<TicketRef> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for ((_, _, id), c) in refs.into_iter().zip(closes) {
        match index.get(&id) {
            Some(&i) => out[i].closes |= c,
            None => {
                index.insert(id.clone(), out.len());
                out.push(TicketRef { id, closes: c });
            }
        }
    }
    out
}

/// References in a commit message: `#123`, `GH-123`, `(#456)`, `Merge pull
/// request #456 from …`, `fixes #123`, `closes: #1, #2`, GitHub (and GitLab)
/// issue/pull URLs, and upper-case Jira-style keys `PROJ-101`. Not hex
/// colours, headings, `&#123;`, `owner/repo#1` (another repository), `#0…`,
/// `UTF-8`/`SHA-256`/`ISO-8601`/`CVE-2021-1234`-style words, or versions.
/// Ordered by first appearance, de-duplicated by id (`closes` if any
/// occurrence closes).
pub fn references(message: &str) -> Vec<TicketRef> {
    scan(message, false)
}

/// Commits ↔ tickets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Links {
    /// commit sha → ticket ids it is linked to (known tickets only), in order.
    /// Commits linked to nothing are absent.
    pub by_commit: HashMap<String, Vec<String>>,
    /// ticket id → commit shas linked to it, in the order of `commits` given.
    pub by_ticket: HashMap<String, Vec<String>>,
}

fn norm(id: &str) -> String {
    clean_id(id).to_ascii_lowercase()
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Links commits `(sha, full message)` to tickets: (1) by references in the
/// message to a known ticket id (Jira-style keys in any case); (2) through the
/// tracker's links: a ticket whose `links` names an id links every commit
/// linked to that id (issue 12 closed by PR 40: "Add x (#40)" → 40 and 12),
/// and a ticket whose `links` holds a commit sha (full, or a prefix of ≥ 7 hex
/// digits) links that commit. Unknown ids are not linked.
pub fn link_commits(commits: &[(&str, &str)], tickets: &[Ticket]) -> Links {
    let known: HashMap<String, &str> = tickets.iter().map(|t| (norm(&t.id), &t.id[..])).collect();
    // linked id or sha → the tickets naming it; sha prefixes by their first 7 digits.
    let mut via: HashMap<String, Vec<&str>> = HashMap::new();
    let mut by_sha7: HashMap<String, Vec<(String, &str)>> = HashMap::new();
    for t in tickets {
        for l in t
            .links
            .iter()
            .map(|l| norm(l))
            .filter(|l| !l.is_empty() && *l != norm(&t.id))
        {
            if l.len() >= 7 && l.bytes().all(|b| b.is_ascii_hexdigit()) {
                by_sha7
                    .entry(l[..7].to_string())
                    .or_default()
                    .push((l.clone(), &t.id));
            }
            via.entry(l).or_default().push(&t.id);
        }
    }
    let mut links = Links::default();
    for &(sha, message) in commits {
        let mut direct: Vec<String> = scan(message, true).iter().map(|r| norm(&r.id)).collect();
        let sha_l = sha.trim().to_ascii_lowercase();
        for (link, tid) in sha_l
            .get(..7)
            .and_then(|k| by_sha7.get(k))
            .into_iter()
            .flatten()
        {
            if sha_l.starts_with(link.as_str()) || link.starts_with(&sha_l) {
                direct.push(norm(tid));
            }
        }
        let mut ids: Vec<String> = Vec::new();
        for d in &direct {
            if let Some(t) = known.get(d) {
                push_unique(&mut ids, t);
            }
            via.get(d)
                .into_iter()
                .flatten()
                .for_each(|t| push_unique(&mut ids, t));
        }
        for id in &ids {
            let shas = links.by_ticket.entry(id.clone()).or_default();
            if shas.last().is_none_or(|s| s != sha) {
                shas.push(sha.to_string());
            }
        }
        if !ids.is_empty() {
            let entry = links.by_commit.entry(sha.to_string()).or_default();
            ids.iter().for_each(|id| push_unique(entry, id));
        }
    }
    links
}

static STOP_WORDS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    "a about after all also am an and any are as at be been before being but by can could did do \
     does for from get got had has have he her his how i if in into is it its just me my no not of \
     on or our she should so some than that the their them then there these they this those to too \
     us very was we were what when where which who why will with would yet you your"
        .split_whitespace()
        .collect()
});

/// A light English stemmer (plurals, -ed, -ing), for queries and tickets alike.
fn stem(mut t: String) -> String {
    let n = t.len();
    if !t.is_ascii() || n < 4 {
        return t;
    }
    if n > 4 && t.ends_with("ies") {
        t.replace_range(n - 3.., "y");
    } else if n > 4
        && ["sses", "xes", "ches", "shes", "zes"]
            .iter()
            .any(|s| t.ends_with(s))
    {
        t.truncate(n - 2);
    } else if t.ends_with('s') && !["ss", "us", "is"].iter().any(|s| t.ends_with(s)) {
        t.truncate(n - 1);
    } else if n > 5 && t.ends_with("ing") {
        t.truncate(n - 3);
    } else if n > 4 && t.ends_with("ed") {
        t.truncate(n - 2);
    }
    t
}

/// Lower-case tokens split on non-alphanumerics and camelCase, stop words
/// and one-letter tokens dropped, stemmed.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..=chars.len() {
            // `parseHTTPRequest` → parse, HTTP, Request; `v2Api` → v2, Api.
            let hump = |i: usize| {
                let (prev, next) = (chars[i - 1], chars.get(i + 1));
                prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next.is_some_and(|c| c.is_lowercase()))
            };
            if i == chars.len() || (chars[i].is_uppercase() && hump(i)) {
                let t = chars[start..i].iter().collect::<String>().to_lowercase();
                if t.chars().count() > 1 && !STOP_WORDS.contains(t.as_str()) {
                    out.push(stem(t));
                }
                start = i;
            }
        }
    }
    out
}

/// Tickets matching a free-text question, best first: BM25 (k1 1.2, b 0.75)
/// over title (weighted ×2), body and labels; a ticket whose id the question
/// mentions (`#12`, `PROJ-101`, any case) ranks above all others, in order of
/// mention. Returns (index into `tickets`, score), at most `limit`, only
/// scores > 0.
pub fn search_tickets(tickets: &[Ticket], question: &str, limit: usize) -> Vec<(usize, f32)> {
    const K1: f32 = 1.2;
    const B: f32 = 0.75;
    let mut docs: Vec<(HashMap<String, f32>, f32)> = Vec::with_capacity(tickets.len());
    for t in tickets {
        let (mut tf, mut len) = (HashMap::<String, f32>::new(), 0.0);
        let fields = [
            (&t.title[..], 2.0),
            (&t.body[..], 1.0),
            (&t.labels.join(" "), 1.0),
        ];
        for (text, weight) in fields {
            for tok in tokens(text) {
                *tf.entry(tok).or_default() += weight;
                len += weight;
            }
        }
        docs.push((tf, len));
    }
    let avg = (docs.iter().map(|d| d.1).sum::<f32>() / docs.len().max(1) as f32).max(1e-6);
    let mut query = tokens(question);
    query.sort();
    query.dedup();
    let n = docs.len() as f32;
    let mut scores = vec![0.0f32; docs.len()];
    for term in &query {
        let df = docs.iter().filter(|d| d.0.contains_key(term)).count() as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (score, (tf, len)) in scores.iter_mut().zip(&docs) {
            if let Some(&f) = tf.get(term) {
                *score += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg));
            }
        }
    }
    let top = scores.iter().copied().fold(0.0f32, f32::max);
    let mentions = scan(question, true);
    for (rank, r) in mentions.iter().enumerate() {
        let id = norm(&r.id);
        for (i, t) in tickets.iter().enumerate() {
            if norm(&t.id) == id && scores[i] <= top {
                scores[i] = top + 1.0 + (mentions.len() - rank) as f32;
            }
        }
    }
    let mut ranked: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
    ranked.retain(|s| s.1 > 0.0);
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tickets/");
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
