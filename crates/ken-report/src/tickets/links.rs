//! Ticket references in commit messages, and commits linked to tickets.

use super::*;

/// A reference to a ticket in a commit message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketRef {
    /// `123` or `PROJ-101`.
    pub id: String,
    /// Whether a closing keyword precedes it: `fixes/closes/resolves #123`.
    pub closes: bool,
}

pub(super) fn regex(pattern: &str) -> Regex {
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
pub(super) fn plausible_hash(msg: &str, start: usize, end: usize, number: &str) -> bool {
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
pub(super) fn scan(message: &str, any_case: bool) -> Vec<TicketRef> {
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

pub(super) fn norm(id: &str) -> String {
    clean_id(id).to_ascii_lowercase()
}

pub(super) fn push_unique(v: &mut Vec<String>, s: &str) {
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
