//! What a question names: people, periods of time, symbols, paths and
//! revisions, pulled out by rules (no model).

use ken_core::Language;
use ken_core::ident::looks_like_identifier;
use serde::{Deserialize, Serialize};

use crate::time::{
    DAY, civil_from_days, days_from_civil, format_date, midnight, month_number, weekday,
};

/// A period of time named in a question, resolved against `now`.
/// `since` is inclusive, `until` exclusive; Unix seconds, UTC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeRange {
    /// The words as written (`last sprint`, `2w`, `since March`).
    pub text: String,
    pub since: i64,
    pub until: i64,
    /// `YYYY-MM-DD` of `since` and of the last day included, for display.
    pub from_date: String,
    pub to_date: String,
}

impl TimeRange {
    fn new(text: String, since: i64, until: i64) -> TimeRange {
        TimeRange {
            text,
            since,
            until,
            from_date: format_date(since),
            to_date: format_date((until - 1).max(since)),
        }
    }
}

/// Everything a question names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slots {
    pub people: Vec<String>,
    pub times: Vec<TimeRange>,
    /// Identifiers (`parse_config`, `AppContext.push`, `` `run` ``).
    pub symbols: Vec<String>,
    /// Paths and file names (`src/app.py`, `utils.py`, `src/api/`).
    pub paths: Vec<String>,
    /// Revisions named as a boundary (`since v2.0`, `since the last release`).
    pub revisions: Vec<String>,
}

/// How the calendar is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Calendar {
    pub now: i64,
    pub sprint_days: i64,
}

/// A question's words, lower-cased, contractions expanded, identifiers and
/// paths replaced by `<id>` so their parts never read as English cues.
#[derive(Debug, Clone)]
pub(crate) struct Words {
    pub words: Vec<String>,
    /// The same words as written (case kept), for names.
    pub original: Vec<String>,
}

const CONTRACTIONS: &[(&str, &[&str])] = &[
    ("who's", &["who", "is"]),
    ("what's", &["what", "is"]),
    ("where's", &["where", "is"]),
    ("when's", &["when", "is"]),
    ("how's", &["how", "is"]),
    ("it's", &["it", "is"]),
    ("that's", &["that", "is"]),
    ("there's", &["there", "is"]),
    ("isn't", &["is", "not"]),
    ("doesn't", &["does", "not"]),
    ("don't", &["do", "not"]),
    ("didn't", &["did", "not"]),
    ("wasn't", &["was", "not"]),
    ("hasn't", &["has", "not"]),
    ("haven't", &["have", "not"]),
    ("can't", &["can", "not"]),
    ("won't", &["will", "not"]),
    ("i'm", &["i", "am"]),
    ("i'd", &["i", "would"]),
    ("what've", &["what", "have"]),
    ("who've", &["who", "have"]),
];

impl Words {
    pub(crate) fn new(question: &str) -> Words {
        let mut words = Vec::new();
        let mut original = Vec::new();
        for raw in tokens(question) {
            if raw.is_code {
                words.push("<id>".to_string());
                original.push(raw.text.clone());
                continue;
            }
            let lower = raw.text.to_lowercase().replace('’', "'");
            if let Some((_, exp)) = CONTRACTIONS.iter().find(|(c, _)| *c == lower) {
                for e in *exp {
                    words.push(e.to_string());
                    original.push(e.to_string());
                }
                continue;
            }
            let lower = lower.strip_suffix("'s").unwrap_or(&lower).to_string();
            words.push(lower);
            original.push(
                raw.text
                    .trim_end_matches("'s")
                    .trim_end_matches("’s")
                    .to_string(),
            );
        }
        Words { words, original }
    }

    /// Does the pattern match somewhere? Pattern tokens: a word, `a|b`
    /// alternatives, `*` one word, `~N` a gap of 0..=N words; a leading `^`
    /// anchors at the first word.
    pub(crate) fn has(&self, pattern: &str) -> bool {
        let (anchored, pattern) = match pattern.strip_prefix('^') {
            Some(p) => (true, p),
            None => (false, pattern),
        };
        let pat: Vec<&str> = pattern.split_whitespace().collect();
        let starts = if anchored { 0..1 } else { 0..self.words.len() };
        starts.into_iter().any(|s| self.match_at(&pat, s))
    }

    fn match_at(&self, pat: &[&str], i: usize) -> bool {
        let Some((first, rest)) = pat.split_first() else {
            return true;
        };
        if let Some(n) = first.strip_prefix('~') {
            let n: usize = n.parse().unwrap_or(3);
            return (0..=n)
                .any(|skip| i + skip <= self.words.len() && self.match_at(rest, i + skip));
        }
        let Some(w) = self.words.get(i) else {
            return false;
        };
        let ok = *first == "*" || first.split('|').any(|alt| alt == w);
        ok && self.match_at(rest, i + 1)
    }
}

struct Token {
    text: String,
    /// An identifier, a path or a backticked span.
    is_code: bool,
}

fn tokens(q: &str) -> Vec<Token> {
    let mut out = Vec::new();
    // Backticked spans are code, whatever they hold.
    for (k, part) in q.split('`').enumerate() {
        if k % 2 == 1 {
            if !part.trim().is_empty() {
                out.push(Token {
                    text: part.trim().to_string(),
                    is_code: true,
                });
            }
            continue;
        }
        for w in part.split_whitespace() {
            let t = w.trim_matches(|c: char| {
                matches!(
                    c,
                    '?' | '!' | ',' | ';' | '"' | '“' | '”' | '(' | ')' | '[' | ']' | '{' | '}'
                )
            });
            let t = t.trim_end_matches(['.', ':']);
            if t.is_empty() {
                continue;
            }
            out.push(Token {
                text: t.to_string(),
                is_code: is_code_word(t),
            });
        }
    }
    out
}

/// `parse_config`, `AppContext.push`, `Engine::search`, `fetch()`, `src/a.py`,
/// `--dry-run`, `utils.py`.
fn is_code_word(t: &str) -> bool {
    let core = t.trim_end_matches("()").trim_end_matches("'s");
    if t.ends_with("()") || t.starts_with("--") || core.contains("::") || core.contains('/') {
        return true;
    }
    if core.contains('=') {
        return true;
    }
    if let Some((a, b)) = core.rsplit_once('.')
        && !a.is_empty()
        && !b.is_empty()
        && b.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !b.chars().all(|c| c.is_ascii_digit())
    {
        return true; // `utils.py`, `Session.commit`, not `3.7`
    }
    looks_like_identifier(core) && !is_plain_word(core)
}

/// Capitalised product names that look like camelCase (`GraphQL`, `OAuth`).
fn is_plain_word(w: &str) -> bool {
    #[rustfmt::skip]
    const PLAIN: &[&str] = &[
        "GraphQL", "OAuth", "JavaScript", "TypeScript", "GitHub", "GitLab", "PostgreSQL", "MySQL",
        "SQLite", "WebSocket", "WebSockets", "iOS", "macOS", "PyPI", "YAML", "JSON", "README",
        "DevOps", "LaTeX", "NumPy", "PyTorch", "FastAPI",
    ];
    PLAIN.iter().any(|p| p.eq_ignore_ascii_case(w))
}

/// Symbols and paths named in the question.
pub(crate) fn code_names(question: &str, vocabulary: &[String]) -> (Vec<String>, Vec<String>) {
    let mut symbols = Vec::new();
    let mut paths = Vec::new();
    let push = |v: &mut Vec<String>, s: String| {
        if !s.is_empty() && !v.contains(&s) {
            v.push(s);
        }
    };
    for t in tokens(question) {
        let word = t.text.trim_end_matches("'s").to_string();
        if looks_like_path(&word) {
            push(&mut paths, word);
        } else if t.is_code {
            if word.starts_with("--") {
                push(&mut symbols, word);
            } else {
                push(&mut symbols, word.trim_end_matches("()").to_string());
            }
        } else if vocabulary
            .iter()
            .any(|v| v.len() > 2 && v.eq_ignore_ascii_case(&word))
        {
            push(&mut symbols, word);
        }
    }
    (symbols, paths)
}

fn looks_like_path(w: &str) -> bool {
    if w.contains("::") || w.ends_with("()") || w.contains(' ') {
        return false;
    }
    if w.contains('/') && !w.starts_with("http") {
        return true;
    }
    match w.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            Language::from_path(w) != Language::Text
                || matches!(
                    ext.to_ascii_lowercase().as_str(),
                    "txt"
                        | "cfg"
                        | "ini"
                        | "lock"
                        | "sql"
                        | "html"
                        | "css"
                        | "env"
                        | "xml"
                        | "proto"
                )
        }
        _ => matches!(w, "Dockerfile" | "Makefile" | "Jenkinsfile" | "Procfile"),
    }
}

/// Capitalised words that are not names.
#[rustfmt::skip]
const NOT_NAMES: &[&str] = &[
    "i", "a", "an", "the", "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    "is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could",
    "should", "would", "will", "list", "show", "find", "tell", "explain", "summarize", "give",
    "walk", "any", "anyone", "someone", "somebody", "everything", "nothing", "if", "in", "on",
    "at", "since", "before", "after", "from", "by", "for", "of", "to", "and", "or", "but", "not",
    "api", "apis", "http", "https", "json", "sql", "ci", "cd", "pr", "prs", "readme", "rust",
    "python", "go", "java", "tls", "ssl", "html", "css", "url", "lru", "rest", "docker", "graphql",
    "oauth", "jwt", "cli", "ui", "ux", "db", "orm", "aws", "gcp", "k8s", "kubernetes", "linux",
    "windows", "mac", "postgres", "postgresql", "redis", "mysql", "sqlite", "flask", "django",
    "react", "node", "github", "gitlab", "git", "head", "main", "master", "todo", "fixme", "ok",
    "okay", "hi", "hey", "please", "thanks", "january", "february", "march", "april", "may",
    "june", "july", "august", "september", "october", "november", "december", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday", "today", "yesterday", "also", "then",
    "there", "this", "that", "these", "those", "it", "we", "you", "my", "our", "your", "their",
    "he", "she", "they", "rpc", "grpc", "io", "os", "id", "ids", "utc", "unicode", "markdown",
    "yaml", "toml", "webhook", "webhooks", "lgtm", "qa", "oom", "eof", "bug", "fix", "ken",
    "kenning",
];

/// Verbs after which a capitalised first word is a name (`Ahmed fixed …`).
#[rustfmt::skip]
const PAST_VERBS: &[&str] = &[
    "fixed", "changed", "wrote", "added", "removed", "merged", "committed", "broke", "touched",
    "worked", "did", "pushed", "reverted", "shipped", "said", "owns", "knows", "maintains",
];

/// People named in the question: any of `known` (case-insensitive, whole
/// words, full name or first name), `@handles`, and capitalised words that
/// are not sentence-initial (or are, followed by a past-tense verb) and not
/// common words, products or months.
pub(crate) fn people(w: &Words, known: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let lower_q = format!(" {} ", w.words.join(" "));
    for name in known {
        let n = name.trim().to_lowercase();
        let first = n.split_whitespace().next().unwrap_or("");
        if !n.is_empty()
            && (lower_q.contains(&format!(" {n} "))
                || first.len() > 2 && lower_q.contains(&format!(" {first} ")))
            && !out.contains(name)
        {
            out.push(name.clone());
        }
    }
    let orig = &w.original;
    let mut i = 0;
    while i < orig.len() {
        let t = &orig[i];
        if let Some(h) = t.strip_prefix('@')
            && !h.is_empty()
        {
            push_name(&mut out, h.to_string(), known);
            i += 1;
            continue;
        }
        if is_name_word(t) {
            let initial = i == 0;
            let mut j = i + 1;
            while j < orig.len() && is_name_word(&orig[j]) {
                j += 1;
            }
            let next = orig.get(j).map(|s| s.to_lowercase()).unwrap_or_default();
            let ok = !initial || PAST_VERBS.contains(&next.as_str());
            if ok {
                push_name(&mut out, orig[i..j].join(" "), known);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn push_name(out: &mut Vec<String>, name: String, known: &[String]) {
    let lower = name.to_lowercase();
    let covered = out.iter().any(|o| {
        let ol = o.to_lowercase();
        ol == lower || ol.split_whitespace().next() == Some(lower.as_str())
    });
    let canonical = known
        .iter()
        .find(|k| k.eq_ignore_ascii_case(&name))
        .cloned()
        .unwrap_or(name);
    if !covered {
        out.push(canonical);
    }
}

fn is_name_word(t: &str) -> bool {
    let mut chars = t.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_uppercase()
        && t.chars().count() >= 2
        && t.chars()
            .skip(1)
            .all(|c| c.is_lowercase() || c == '-' || c == '\'')
        && !NOT_NAMES.contains(&t.to_lowercase().as_str())
}

fn number_word(w: &str) -> Option<i64> {
    const N: [&str; 13] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    if let Ok(n) = w.parse::<i64>() {
        return (0..10_000).contains(&n).then_some(n);
    }
    match w {
        "a" | "an" | "last" | "past" => Some(1),
        "couple" | "few" => Some(if w == "couple" { 2 } else { 3 }),
        _ => N.iter().position(|x| *x == w).map(|p| p as i64),
    }
}

/// (unit length in seconds, calendar months) of a unit word.
fn unit(w: &str) -> Option<(i64, i64)> {
    let w = w.trim_end_matches('s');
    Some(match w {
        "hour" | "hr" | "h" => (3600, 0),
        "day" | "d" => (DAY, 0),
        "week" | "wk" | "w" => (7 * DAY, 0),
        "month" | "mo" | "m" => (0, 1),
        "year" | "yr" | "y" => (0, 12),
        _ => return None,
    })
}

/// Unix seconds `months` calendar months before `t` (day clamped).
fn months_before(t: i64, months: i64) -> i64 {
    let days = t.div_euclid(DAY);
    let secs = t.rem_euclid(DAY);
    let (y, m, d) = civil_from_days(days);
    let total = i64::from(y) * 12 + i64::from(m) - 1 - months;
    let (ny, nm) = (total.div_euclid(12) as i32, total.rem_euclid(12) as u32 + 1);
    let d = d.min(crate::time::month_len(ny, nm));
    days_from_civil(ny, nm, d) * DAY + secs
}

fn span_before(now: i64, n: i64, (secs, months): (i64, i64)) -> i64 {
    if months > 0 {
        months_before(now, n * months)
    } else {
        now - n * secs
    }
}

/// Periods of time in a question.
pub(crate) fn times(w: &Words, cal: &Calendar) -> Vec<TimeRange> {
    let ws = &w.words;
    let now = cal.now;
    let today = now.div_euclid(DAY) * DAY;
    let (y, m, _) = civil_from_days(now.div_euclid(DAY));
    let monday = today - i64::from(weekday(now.div_euclid(DAY))) * DAY;
    let sprint = cal.sprint_days.max(1) * DAY;
    let mut out: Vec<TimeRange> = Vec::new();
    let get = |i: usize| ws.get(i).map(String::as_str).unwrap_or("");
    let mut i = 0;
    while i < ws.len() {
        let w0 = get(i);
        let (w1, w2, w3) = (get(i + 1), get(i + 2), get(i + 3));
        let mut found: Option<(usize, i64, i64)> = None; // (words used, since, until)
        match w0 {
            "today" => found = Some((1, today, now)),
            "yesterday" => found = Some((1, today - DAY, today)),
            "recently" | "lately" => found = Some((1, now - 30 * DAY, now)),
            "this" | "current" => match w1 {
                "week" => found = Some((2, monday, now)),
                "month" => found = Some((2, midnight(y, m, 1), now)),
                "year" => found = Some((2, midnight(y, 1, 1), now)),
                "sprint" => found = Some((2, now - sprint, now)),
                _ => {}
            },
            "last" | "past" | "previous" | "prior" => {
                let calendar = w0 != "past";
                match w1 {
                    "week" if calendar => found = Some((2, monday - 7 * DAY, monday)),
                    "month" if calendar => {
                        let (py, pm) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
                        found = Some((2, midnight(py, pm, 1), midnight(y, m, 1)));
                    }
                    "year" if calendar => {
                        found = Some((2, midnight(y - 1, 1, 1), midnight(y, 1, 1)))
                    }
                    "sprint" => found = Some((2, now - 2 * sprint, now - sprint)),
                    "sprints" => {}
                    _ => {
                        if let Some(u) = unit(w1) {
                            found = Some((2, span_before(now, 1, u), now));
                        } else if let (Some(n), "sprint" | "sprints") = (number_word(w1), w2) {
                            found = Some((3, now - n * sprint, now));
                        } else if let (Some(n), Some(u)) = (number_word(w1), unit(w2)) {
                            found = Some((3, span_before(now, n, u), now));
                        } else if w1 == "couple"
                            && w2 == "of"
                            && let Some(u) = unit(w3)
                        {
                            found = Some((4, span_before(now, 2, u), now));
                        } else if w1 == "few"
                            && let Some(u) = unit(w2)
                        {
                            found = Some((3, span_before(now, 3, u), now));
                        } else if let Some(d) = weekday_number(w1) {
                            // The most recent such day before today.
                            let mut back = (i64::from(weekday(today / DAY)) - d + 7) % 7;
                            if back == 0 {
                                back = 7;
                            }
                            let day = today - back * DAY;
                            found = Some((2, day, day + DAY));
                        }
                    }
                }
            }
            // `from last sprint` is the period itself: left to the next word.
            "since" | "after" => {
                if let Some((used, t)) = point(ws, i + 1, now, today) {
                    found = Some((used + 1, t, now));
                }
            }
            "before" | "until" => {
                if let Some((used, t)) = point(ws, i + 1, now, today) {
                    found = Some((used + 1, 0, t));
                }
            }
            "in" | "during" | "on" => {
                if let Some((used, s, u)) = period(ws, i + 1, now, today) {
                    found = Some((used + 1, s, u));
                } else if let Some((n, u)) = compact(w1) {
                    found = Some((2, span_before(now, n, u), now));
                }
            }
            _ => {
                if let Some((n, u)) = compact(w0) {
                    found = Some((1, span_before(now, n, u), now));
                } else if let (Some(n), Some(u), "ago") = (number_word(w0), unit(w1), w2) {
                    let t = span_before(now, n, u);
                    found = Some((3, t.div_euclid(DAY) * DAY, now));
                } else if let Some((used, s, u)) = period(ws, i, now, today)
                    .filter(|_| month_number(w0).is_some() || w0.len() == 10)
                {
                    found = Some((used, s, u));
                }
            }
        }
        match found {
            Some((used, since, until)) if until > since => {
                let text = w.original[i..(i + used).min(ws.len())].join(" ");
                out.push(TimeRange::new(text, since, until));
                i += used;
            }
            _ => i += 1,
        }
    }
    out
}

fn weekday_number(w: &str) -> Option<i64> {
    const D: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    D.iter().position(|d| *d == w).map(|p| p as i64)
}

/// `2w`, `10d`, `3mo`, `1y`, `12h`.
fn compact(w: &str) -> Option<(i64, (i64, i64))> {
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits == w.len() {
        return None;
    }
    let n: i64 = w[..digits].parse().ok()?;
    let u = unit(&w[digits..])?;
    Some((n, u))
}

/// A point in time at `ws[i..]`: `March`, `March 3`, `March 2024`,
/// `2024-03-01`, `Monday`, `yesterday`, `last week`... → (words used, secs).
fn point(ws: &[String], i: usize, now: i64, today: i64) -> Option<(usize, i64)> {
    let w = ws.get(i)?.as_str();
    if w == "yesterday" {
        return Some((1, today - DAY));
    }
    if w == "today" {
        return Some((1, today));
    }
    if let Some(d) = weekday_number(w) {
        // The most recent such day, today included.
        let back = (i64::from(weekday(today / DAY)) - d + 7) % 7;
        return Some((1, today - back * DAY));
    }
    if matches!(w, "last" | "the") {
        // `since last week`, `since the last sprint`
        let k = if w == "the" && ws.get(i + 1).map(String::as_str) == Some("last") {
            i + 1
        } else {
            i
        };
        if ws.get(k).map(String::as_str) == Some("last") {
            let cal = Calendar {
                now,
                sprint_days: 14,
            };
            let sub = Words {
                words: ws[k..].to_vec(),
                original: ws[k..].to_vec(),
            };
            let t = times(&sub, &cal).into_iter().next()?;
            let used = k - i + t.text.split_whitespace().count();
            return Some((used, t.since));
        }
        return None;
    }
    let (used, since, _) = period(ws, i, now, today)?;
    Some((used, since))
}

/// A calendar period at `ws[i..]`: `March` (the latest March not in the
/// future), `March 2024`, `March 3`, `2024`, `2024-03-01`, a weekday.
fn period(ws: &[String], i: usize, now: i64, today: i64) -> Option<(usize, i64, i64)> {
    let w = ws.get(i)?.as_str();
    let (y, m, _) = civil_from_days(now.div_euclid(DAY));
    if let Some(d) = iso_date(w) {
        return Some((1, d, d + DAY));
    }
    if let Some(d) = weekday_number(w) {
        let mut back = (i64::from(weekday(today / DAY)) - d + 7) % 7;
        if back == 0 {
            back = 7;
        }
        let day = today - back * DAY;
        return Some((1, day, day + DAY));
    }
    if w.len() == 4
        && let Ok(year) = w.parse::<i32>()
        && (1990..=y + 1).contains(&year)
    {
        return Some((1, midnight(year, 1, 1), midnight(year + 1, 1, 1)));
    }
    let month = month_number(w)
        .filter(|_| w != "may" || ws.get(i + 1).is_some_and(|n| n.parse::<u32>().is_ok()))?;
    let next = ws.get(i + 1).map(String::as_str).unwrap_or("");
    let next = next.trim_end_matches(|c: char| c.is_alphabetic()); // 3rd → 3
    if let Ok(n) = next.parse::<u32>() {
        if (1..=31).contains(&n) {
            let yy = if (month, n) > (m, civil_from_days(now.div_euclid(DAY)).2) {
                y - 1
            } else {
                y
            };
            let d = midnight(yy, month, n.min(crate::time::month_len(yy, month)));
            return Some((2, d, d + DAY));
        }
        if (1990..=2100).contains(&n) {
            let yy = n as i32;
            let (ny, nm) = if month == 12 {
                (yy + 1, 1)
            } else {
                (yy, month + 1)
            };
            return Some((2, midnight(yy, month, 1), midnight(ny, nm, 1)));
        }
    }
    let yy = if month > m { y - 1 } else { y };
    let (ny, nm) = if month == 12 {
        (yy + 1, 1)
    } else {
        (yy, month + 1)
    };
    Some((
        1,
        midnight(yy, month, 1),
        midnight(ny, nm, 1).min(now.max(midnight(yy, month, 1) + DAY)),
    ))
}

fn iso_date(w: &str) -> Option<i64> {
    let p: Vec<&str> = w.split('-').collect();
    if p.len() != 3 || p[0].len() != 4 {
        return None;
    }
    let (y, m, d) = (p[0].parse().ok()?, p[1].parse().ok()?, p[2].parse().ok()?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then(|| midnight(y, m, d))
}

/// `since v2.0`, `since the last release`, `since 1a2b3c4` → the revision words.
fn revision(ws: &[String], original: &[String], i: usize) -> Option<String> {
    let w = ws.get(i)?.as_str();
    let orig = original.get(i)?;
    let looks_version = w.starts_with('v') && w[1..].starts_with(|c: char| c.is_ascii_digit())
        || w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.');
    let looks_sha = w.len() >= 7
        && w.len() <= 40
        && w.chars().all(|c| c.is_ascii_hexdigit())
        && w.chars().any(|c| c.is_ascii_digit());
    if looks_version || looks_sha || w == "<id>" && orig.chars().any(|c| c.is_ascii_digit()) {
        return Some(orig.clone());
    }
    let rest: Vec<&str> = ws[i..].iter().take(4).map(String::as_str).collect();
    for phrase in [
        ["the", "last", "release"].as_slice(),
        &["the", "latest", "release"],
        &["the", "previous", "release"],
        &["last", "release"],
        &["the", "last", "deploy"],
        &["the", "last", "tag"],
        &["the", "refactor"],
        &["the", "rewrite"],
        &["the", "migration"],
        &["the", "push"],
        &["the", "merge"],
        &["the", "last", "merge"],
    ] {
        if rest.len() >= phrase.len() && rest[..phrase.len()] == *phrase {
            return Some(original[i..i + phrase.len()].join(" "));
        }
    }
    None
}

/// Revisions named as boundaries (`since v2.0`, `since the last release`).
pub(crate) fn revisions(w: &Words) -> Vec<String> {
    let mut out = Vec::new();
    for (i, word) in w.words.iter().enumerate() {
        if matches!(word.as_str(), "since" | "after" | "before")
            && let Some(r) = revision(&w.words, &w.original, i + 1)
        {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Wednesday 2024-06-12 15:00 UTC.
    const NOW: i64 = 1_718_204_400;

    fn t(q: &str) -> Vec<(String, String, String)> {
        let cal = Calendar {
            now: NOW,
            sprint_days: 14,
        };
        times(&Words::new(q), &cal)
            .into_iter()
            .map(|r| (r.text, r.from_date, r.to_date))
            .collect()
    }

    fn one(text: &str, from: &str, to: &str) -> Vec<(String, String, String)> {
        vec![(text.into(), from.into(), to.into())]
    }

    #[test]
    fn time_expressions_resolve_against_now() {
        assert_eq!(format_date(NOW), "2024-06-12");
        assert_eq!(
            t("what changed last week?"),
            one("last week", "2024-06-03", "2024-06-09")
        );
        assert_eq!(
            t("commits in the past week"),
            one("past week", "2024-06-05", "2024-06-12")
        );
        assert_eq!(
            t("what was done in 2w"),
            one("in 2w", "2024-05-29", "2024-06-12")
        );
        assert_eq!(
            t("changes since March"),
            one("since March", "2024-03-01", "2024-06-12")
        );
        assert_eq!(
            t("since march 3rd"),
            one("since march 3rd", "2024-03-03", "2024-06-12")
        );
        assert_eq!(
            t("rewritten in November?"),
            one("in November", "2023-11-01", "2023-11-30")
        );
        assert_eq!(
            t("the bug from last sprint"),
            one("last sprint", "2024-05-15", "2024-05-29")
        );
        assert_eq!(
            t("in the last two sprints"),
            one("last two sprints", "2024-05-15", "2024-06-12")
        );
        assert_eq!(
            t("in the last 3 days"),
            one("last 3 days", "2024-06-09", "2024-06-12")
        );
        assert_eq!(
            t("touched yesterday"),
            one("yesterday", "2024-06-11", "2024-06-11")
        );
        assert_eq!(
            t("last Friday"),
            one("last Friday", "2024-06-07", "2024-06-07")
        );
        assert_eq!(
            t("since Monday"),
            one("since Monday", "2024-06-10", "2024-06-12")
        );
        assert_eq!(
            t("this month"),
            one("this month", "2024-06-01", "2024-06-12")
        );
        assert_eq!(
            t("last month"),
            one("last month", "2024-05-01", "2024-05-31")
        );
        assert_eq!(
            t("since 2024-01-15"),
            one("since 2024-01-15", "2024-01-15", "2024-06-12")
        );
        assert_eq!(
            t("over the past month"),
            one("past month", "2024-05-12", "2024-06-12")
        );
        assert_eq!(
            t("3 days ago"),
            one("3 days ago", "2024-06-09", "2024-06-12")
        );
        assert_eq!(
            t("changed recently"),
            one("recently", "2024-05-13", "2024-06-12")
        );
        assert_eq!(
            t("since last year"),
            one("since last year", "2023-01-01", "2024-06-12")
        );
        assert_eq!(t("how does the cache work"), vec![]);
        assert_eq!(t("may I ask who owns it"), vec![]);
    }

    #[test]
    fn revisions_are_kept_apart() {
        assert_eq!(revisions(&Words::new("changes since v2.0")), ["v2.0"]);
        assert_eq!(
            revisions(&Words::new("modified since the last release?")),
            ["the last release"]
        );
    }

    #[test]
    fn names_symbols_and_paths() {
        let w = Words::new("did Ahmed fix the auth bug from last sprint?");
        assert_eq!(people(&w, &[]), ["Ahmed"]);
        let w = Words::new("Is Maria Lopez the best person to ask about GraphQL?");
        assert_eq!(people(&w, &[]), ["Maria Lopez"]);
        let w = Words::new("what did @jdoe and sarah work on this week?");
        assert_eq!(
            people(&w, &["Sarah Connor".to_string()]),
            ["Sarah Connor", "jdoe"]
        );
        let w = Words::new("What changed in the API last March?");
        assert!(people(&w, &[]).is_empty());
        let (s, p) = code_names(
            "who calls parse_config or `run` in src/app.py and AppContext.push() via utils.py?",
            &["Scheduler".to_string()],
        );
        assert_eq!(s, ["parse_config", "run", "AppContext.push"]);
        assert_eq!(p, ["src/app.py", "utils.py"]);
        let (s, _) = code_names("how does the scheduler work", &["Scheduler".to_string()]);
        assert_eq!(s, ["scheduler"]);
    }

    #[test]
    fn word_patterns() {
        let w = Words::new("Who's the go-to person for `Session.commit`?");
        assert_eq!(
            w.words,
            ["who", "is", "the", "go-to", "person", "for", "<id>"]
        );
        assert!(w.has("^who ~2 go-to"));
        assert!(w.has("person|people for"));
        assert!(!w.has("commit"));
        assert!(!w.has("^the"));
    }
}
