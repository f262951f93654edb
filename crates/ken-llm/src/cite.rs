//! Citations: found in an answer, checked against the context actually given,
//! and attached to the claims they support.
//!
//! Accepted forms: `[path:12-30]`, `[path:12]`, `[path#L12-L30]`,
//! `[path#L12]`, `[path:L12-L30]`, en dashes, backticks inside or around the
//! brackets (`` [`a.py:3`] ``, `` `[a.py:3]` ``), several in one bracket
//! separated by `,` or `;`, and a backticked bare location whose path has a
//! `/` or a `.` (`` `src/a.py:3-9` ``). Brackets right after an identifier
//! (`items[i:3]`), brackets whose parts are not all locations, and anything
//! inside fenced code are not citations.
//!
//! Nothing is ever dropped: every claim is kept, and every citation found is
//! reported, valid or not; the answer text is never rewritten.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::split;

/// A citation as written in an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCitation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The location as written (`./a.py#L3-L9`).
    pub raw: String,
    /// Byte range in the answer of the bracket (or code span) holding it;
    /// several citations of one bracket share it.
    pub span: Range<usize>,
}

/// A range of a file the answer was allowed to cite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRange {
    /// When set, `repo/path` and `repo:path` are accepted too.
    pub repo: Option<String>,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// A checked citation (`ken ask --json`: `{"path","start_line","end_line","valid"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// The cited path, normalised (`./a.py` → `a.py`).
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Inside one block of the given context.
    pub valid: bool,
    /// For a notebook: the cell the cited lines are in (set by the caller,
    /// who knows the notebook's cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
    /// The location as written in the answer.
    #[serde(skip)]
    pub raw: String,
}

/// How well a claim is supported (`"verified"`, `"unverified"`, `"invalid"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimStatus {
    /// Has citations, all valid.
    Verified,
    /// Has no citation.
    Unverified,
    /// At least one citation points outside the given context.
    Invalid,
}

/// One sentence, bullet or table row of an answer, with its citations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The claim as written, citations and list markers included.
    pub text: String,
    pub status: ClaimStatus,
    pub citations: Vec<Citation>,
    /// Byte range in the answer.
    #[serde(skip)]
    pub span: Range<usize>,
}

/// An answer cut into checked claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedAnswer {
    pub text: String,
    pub claims: Vec<Claim>,
}

/// How good an answer's citations are; compare with `>` (higher is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AnswerScore {
    pub verified: usize,
    pub unverified: usize,
    pub invalid: usize,
    pub invalid_citations: usize,
}

impl AnswerScore {
    /// Verified claims minus twice the invalid ones: one fabricated
    /// reference costs more than one supported claim earns.
    pub fn value(&self) -> i64 {
        self.verified as i64 - 2 * self.invalid as i64
    }
}

impl PartialOrd for AnswerScore {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AnswerScore {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.value()
            .cmp(&other.value())
            .then(other.invalid_citations.cmp(&self.invalid_citations))
            .then(other.unverified.cmp(&self.unverified))
            .then(self.verified.cmp(&other.verified))
    }
}

impl CheckedAnswer {
    /// Claims with this status.
    pub fn count(&self, status: ClaimStatus) -> usize {
        self.claims.iter().filter(|c| c.status == status).count()
    }

    /// Citations outside the given context, in order of appearance.
    pub fn invalid_citations(&self) -> Vec<&Citation> {
        self.claims
            .iter()
            .flat_map(|c| &c.citations)
            .filter(|c| !c.valid)
            .collect()
    }

    /// Counts for comparing two answers.
    pub fn score(&self) -> AnswerScore {
        AnswerScore {
            verified: self.count(ClaimStatus::Verified),
            unverified: self.count(ClaimStatus::Unverified),
            invalid: self.count(ClaimStatus::Invalid),
            invalid_citations: self.invalid_citations().len(),
        }
    }
}

/// Every citation in `text` (outside fenced code), in order.
pub fn parse_citations(text: &str) -> Vec<ParsedCitation> {
    let fences = split::fenced_ranges(text);
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(f) = fences.iter().find(|f| f.contains(&i)) {
            i = f.end.max(i + 1);
            continue;
        }
        match bytes[i] {
            b'`' => {
                let run = count_run(bytes, i, b'`');
                let Some(close) = find_closing_run(text, i + run, run) else {
                    i += run;
                    continue;
                };
                let inner = &text[i + run..close];
                let span = i..close + run;
                let t = inner.trim();
                if t.starts_with('[') && t.ends_with(']') {
                    if let Some(items) = parse_bracket(&t[1..t.len() - 1]) {
                        push_items(&mut out, items, span);
                    }
                } else if let Some(item) = parse_item(t)
                    && (item.0.contains('/') || item.0.contains('.'))
                {
                    push_items(&mut out, vec![item], span);
                }
                i = close + run;
            }
            b'[' => {
                let prev = text[..i].chars().next_back();
                let glued =
                    prev.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ')' | ']'));
                let close = text[i + 1..]
                    .find([']', '[', '\n'])
                    .map(|k| i + 1 + k)
                    .filter(|&k| bytes[k] == b']');
                match close {
                    Some(close) if !glued => {
                        if let Some(items) = parse_bracket(&text[i + 1..close]) {
                            push_items(&mut out, items, i..close + 1);
                            i = close + 1;
                            continue;
                        }
                        i += 1;
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn push_items(
    out: &mut Vec<ParsedCitation>,
    items: Vec<(String, u32, u32, String)>,
    span: Range<usize>,
) {
    for (path, start_line, end_line, raw) in items {
        out.push(ParsedCitation {
            path,
            start_line,
            end_line,
            raw,
            span: span.clone(),
        });
    }
}

fn count_run(bytes: &[u8], i: usize, b: u8) -> usize {
    bytes[i..].iter().take_while(|&&x| x == b).count()
}

/// The start of the next backtick run of exactly `run` on the same line.
fn find_closing_run(text: &str, from: usize, run: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut j = from;
    while j < bytes.len() && bytes[j] != b'\n' {
        if bytes[j] == b'`' {
            let r = count_run(bytes, j, b'`');
            if r == run {
                return Some(j);
            }
            j += r;
        } else {
            j += 1;
        }
    }
    None
}

/// The items of a bracket's content, if all of them are locations.
fn parse_bracket(inner: &str) -> Option<Vec<(String, u32, u32, String)>> {
    let items: Vec<&str> = inner.split([',', ';']).map(str::trim).collect();
    if items.is_empty() || items.iter().any(|s| s.is_empty()) {
        return None;
    }
    items.into_iter().map(parse_item).collect()
}

/// `path:12-30`, `path:12`, `path#L12-L30`, `path:L12` (backticks and quotes
/// around it ignored) → (path, start, end, raw).
fn parse_item(item: &str) -> Option<(String, u32, u32, String)> {
    let s = item
        .trim()
        .trim_matches('`')
        .trim()
        .trim_matches(|c| c == '"' || c == '\'');
    let (path, spec) = match s.rfind("#L").or_else(|| s.rfind("#l")) {
        Some(k) => (&s[..k], &s[k + 1..]),
        None => {
            let k = s.rfind(':')?;
            (&s[..k], &s[k + 1..])
        }
    };
    let (start, end) = parse_lines(spec)?;
    let path = path.trim();
    let ok_path = !path.is_empty()
        && !path.contains("://")
        && path.chars().any(|c| c.is_alphabetic())
        && !path.chars().any(|c| {
            c.is_whitespace() || matches!(c, '[' | ']' | '(' | ')' | '<' | '>' | '{' | '}' | '`')
        });
    ok_path.then(|| (path.to_string(), start, end, s.to_string()))
}

/// `12`, `12-30`, `L12-L30`, `12–30`, `12 - 30`, `12..30`.
fn parse_lines(spec: &str) -> Option<(u32, u32)> {
    let s = spec.trim();
    let s = s.strip_prefix(['L', 'l']).unwrap_or(s);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let start: u32 = s[..digits].parse().ok()?;
    let rest = s[digits..].trim_start();
    if rest.is_empty() {
        return Some((start, start));
    }
    let rest = ["..", "-", "–", "—"]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))?
        .trim_start();
    let rest = rest.strip_prefix(['L', 'l']).unwrap_or(rest);
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((start, rest.parse().ok()?))
}

/// A path as the index writes it: `/` separators, no `./`, no leading `/`.
pub fn normalize_path(p: &str) -> String {
    let p = p.trim().replace('\\', "/");
    let parts: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    parts.join("/")
}

fn path_matches(cited: &str, src: &SourceRange) -> bool {
    let path = normalize_path(&src.path);
    if cited == path {
        return true;
    }
    match &src.repo {
        Some(repo) => cited == format!("{repo}/{path}") || cited == format!("{repo}:{path}"),
        None => false,
    }
}

fn is_valid(path: &str, start: u32, end: u32, sources: &[SourceRange]) -> bool {
    start >= 1
        && start <= end
        && sources
            .iter()
            .any(|s| path_matches(path, s) && s.start_line <= start && end <= s.end_line)
}

/// Cut `answer` into claims and check every citation against `sources`.
pub fn validate(answer: &str, sources: &[SourceRange]) -> CheckedAnswer {
    let parsed = parse_citations(answer);
    let spans: Vec<Range<usize>> = parsed.iter().map(|c| c.span.clone()).collect();
    let claims = split::split(answer, &spans)
        .into_iter()
        .map(|span| {
            let citations: Vec<Citation> = parsed
                .iter()
                .filter(|c| c.span.start >= span.start && c.span.end <= span.end)
                .map(|c| {
                    let path = normalize_path(&c.path);
                    Citation {
                        valid: is_valid(&path, c.start_line, c.end_line, sources),
                        path,
                        start_line: c.start_line,
                        end_line: c.end_line,
                        raw: c.raw.clone(),
                        cell: None,
                    }
                })
                .collect();
            let status = if citations.is_empty() {
                ClaimStatus::Unverified
            } else if citations.iter().all(|c| c.valid) {
                ClaimStatus::Verified
            } else {
                ClaimStatus::Invalid
            };
            Claim {
                text: answer[span.clone()].to_string(),
                status,
                citations,
                span,
            }
        })
        .collect();
    CheckedAnswer {
        text: answer.to_string(),
        claims,
    }
}

/// Why a citation is invalid, in words.
fn why_invalid(c: &Citation, sources: &[SourceRange]) -> String {
    if c.start_line == 0 {
        return "line numbers start at 1".into();
    }
    if c.start_line > c.end_line {
        return "the range is reversed".into();
    }
    let ranges: Vec<String> = sources
        .iter()
        .filter(|s| path_matches(&c.path, s))
        .map(|s| format!("{}-{}", s.start_line, s.end_line))
        .collect();
    if ranges.is_empty() {
        format!("`{}` is not among the source blocks", c.path)
    } else {
        format!("`{}` is given only for lines {}", c.path, ranges.join(", "))
    }
}

/// The follow-up message asking for a corrected answer, when some citations
/// point outside the context (`None` when all are valid). Send it after the
/// original messages and the assistant's answer, once.
pub fn retry_message(answer: &CheckedAnswer, sources: &[SourceRange]) -> Option<String> {
    let invalid = answer.invalid_citations();
    if invalid.is_empty() {
        return None;
    }
    let mut m = String::from(
        "Some citations in your answer point outside the source blocks you were given:\n",
    );
    let mut seen = Vec::new();
    for c in invalid {
        let loc = format!("[{}]", c.raw);
        if seen.contains(&loc) {
            continue;
        }
        m.push_str(&format!("- {loc}: {}\n", why_invalid(c, sources)));
        seen.push(loc);
    }
    let unverified = answer.count(ClaimStatus::Unverified);
    if unverified > 0 {
        m.push_str(&format!("Also, {unverified} claim(s) had no citation.\n"));
    }
    m.push_str(
        "Answer the question again. Cite only as [path:start-end], copying the path from a block header and keeping the lines inside that block's range. Leave out any claim the blocks do not support, or say \"I don't know\".",
    );
    Some(m)
}

/// The better of two checked answers (see [`AnswerScore`]); on a tie, the first.
pub fn pick_better(first: CheckedAnswer, second: CheckedAnswer) -> CheckedAnswer {
    if second.score() > first.score() {
        second
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locs(text: &str) -> Vec<(String, u32, u32)> {
        parse_citations(text)
            .into_iter()
            .map(|c| (c.path, c.start_line, c.end_line))
            .collect()
    }

    fn l(p: &str, a: u32, b: u32) -> (String, u32, u32) {
        (p.to_string(), a, b)
    }

    #[test]
    fn every_written_form_parses() {
        assert_eq!(locs("x [src/a.py:12-30] y"), [l("src/a.py", 12, 30)]);
        assert_eq!(locs("x [src/a.py:12]"), [l("src/a.py", 12, 12)]);
        assert_eq!(locs("x [src/a.py#L12-L30]"), [l("src/a.py", 12, 30)]);
        assert_eq!(locs("x [src/a.py#L7]"), [l("src/a.py", 7, 7)]);
        assert_eq!(locs("x [a.rs:L3-L4]"), [l("a.rs", 3, 4)]);
        assert_eq!(locs("x [a.rs:3–4]"), [l("a.rs", 3, 4)]);
        assert_eq!(locs("x [`a.rs:3-4`]"), [l("a.rs", 3, 4)]);
        assert_eq!(locs("x `[a.rs:3-4]`"), [l("a.rs", 3, 4)]);
        assert_eq!(locs("in `src/a.rs:9`"), [l("src/a.rs", 9, 9)]);
        assert_eq!(
            locs("x [a.py:1-2, b/c.go:5; `d.ts#L1-L3`]"),
            [l("a.py", 1, 2), l("b/c.go", 5, 5), l("d.ts", 1, 3)]
        );
        assert_eq!(locs("[Makefile:3]"), [l("Makefile", 3, 3)]);
        assert_eq!(locs("[./src/a.py:3]"), [l("./src/a.py", 3, 3)]);
    }

    #[test]
    fn look_alikes_are_not_citations() {
        for t in [
            "items[i:3] and arr[1:2]",
            "a [link](http://x) and [1, 2]",
            "see [http://localhost:8080]",
            "at [12:30] today",
            "[a.py:1-2, not a location]",
            "```\nx = [a.py:1-2]\n```",
            "`x = d[k:3]`",
            "[a.py:1-2",
            "[a.py: three]",
        ] {
            assert_eq!(locs(t), [], "{t}");
        }
    }

    fn src(path: &str, a: u32, b: u32) -> SourceRange {
        SourceRange {
            repo: Some("flask".into()),
            path: path.into(),
            start_line: a,
            end_line: b,
        }
    }

    #[test]
    fn claims_are_marked_and_nothing_is_dropped() {
        let sources = [src("src/app.py", 10, 40), src("src/cli.py", 1, 20)];
        let answer = "The app starts in `run` [./src/app.py:12-20]. It reads flags [src/cli.py:3, src/app.py:38-45]. It also logs.";
        let checked = validate(answer, &sources);
        let st: Vec<ClaimStatus> = checked.claims.iter().map(|c| c.status).collect();
        assert_eq!(
            st,
            [
                ClaimStatus::Verified,
                ClaimStatus::Invalid,
                ClaimStatus::Unverified
            ]
        );
        assert_eq!(checked.claims[0].citations[0].path, "src/app.py");
        let inv = checked.invalid_citations();
        assert_eq!(inv.len(), 1);
        assert_eq!(inv[0].raw, "src/app.py:38-45");
        assert!(
            checked.claims[1].citations[0].valid,
            "the valid one is kept too"
        );
        let json = serde_json::to_value(&checked.claims[1]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"text": "It reads flags [src/cli.py:3, src/app.py:38-45].",
                "status": "invalid",
                "citations": [
                    {"path": "src/cli.py", "start_line": 3, "end_line": 3, "valid": true},
                    {"path": "src/app.py", "start_line": 38, "end_line": 45, "valid": false}]})
        );
    }

    #[test]
    fn paths_and_ranges_are_checked_exactly() {
        let sources = [src("src/app.py", 10, 40), src("src/app.py", 60, 70)];
        let ok = |c: &str| validate(c, &sources).claims[0].status == ClaimStatus::Verified;
        assert!(ok("a [src/app.py:10-40]"));
        assert!(ok("a [src/app.py:65]"));
        assert!(ok("a [flask/src/app.py:65]"), "repo-qualified");
        assert!(ok("a [./src//app.py:65]"));
        assert!(!ok("a [src/app.py:35-65]"), "spans two blocks");
        assert!(!ok("a [src/app.py:9-12]"));
        assert!(!ok("a [app.py:12]"), "a suffix is not the path");
        assert!(!ok("a [src/app.py:30-20]"));
        assert!(!ok("a [src/app.py:0]"));
    }

    #[test]
    fn retry_message_lists_each_invalid_citation_with_the_reason() {
        let sources = [src("src/app.py", 10, 40)];
        let checked = validate(
            "A [src/app.py:12]. B [src/app.py:50-60]. C [src/db.py:1-3]. D.",
            &sources,
        );
        let m = retry_message(&checked, &sources).unwrap();
        assert!(
            m.contains("- [src/app.py:50-60]: `src/app.py` is given only for lines 10-40"),
            "{m}"
        );
        assert!(
            m.contains("- [src/db.py:1-3]: `src/db.py` is not among the source blocks"),
            "{m}"
        );
        assert!(!m.contains("[src/app.py:12]"), "{m}");
        assert!(m.contains("1 claim(s) had no citation"), "{m}");
        let fine = validate("A [src/app.py:12].", &sources);
        assert_eq!(retry_message(&fine, &sources), None);
    }

    #[test]
    fn odd_input_never_panics_and_keeps_every_byte() {
        const PIECES: [&str; 24] = [
            "[",
            "]",
            "`",
            "```",
            "\n",
            "\n\n",
            ". ",
            "é",
            "漢字",
            "a.py:3",
            ":",
            "-",
            "#L2",
            "- ",
            "1. ",
            "| x |",
            "e.g. ",
            "[a.py:1-2]",
            "`[b.rs:3]`",
            "Word",
            "?",
            "!\"",
            "(",
            "~~~",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..next() % 24 {
                text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let checked = validate(&text, &[src("a.py", 1, 5)]);
            let kept: String = checked.claims.iter().map(|c| c.text.as_str()).collect();
            let squash = |s: &str| s.split_whitespace().collect::<String>();
            assert_eq!(squash(&kept), squash(&text), "{text:?}");
        }
    }

    #[test]
    fn the_better_answer_wins() {
        let sources = [src("a.py", 1, 10)];
        let bad = validate("X [a.py:1]. Y [a.py:50].", &sources);
        let fixed = validate("X [a.py:1]. Y [a.py:5].", &sources);
        let idk = validate("I don't know.", &sources);
        let mostly = validate("X [a.py:1]. Y [a.py:2]. Z [a.py:3]. W [b.py:1].", &sources);
        assert_eq!(pick_better(bad.clone(), fixed.clone()), fixed);
        assert_eq!(pick_better(fixed.clone(), bad.clone()), fixed);
        assert_eq!(pick_better(bad.clone(), idk.clone()), idk, "1 - 2 < 0");
        assert_eq!(
            pick_better(idk.clone(), mostly.clone()),
            mostly,
            "3 - 2 > 0"
        );
        assert_eq!(pick_better(fixed.clone(), fixed.clone()), fixed);
    }
}
