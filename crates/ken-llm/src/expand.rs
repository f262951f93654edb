//! Query expansion with an LLM: rewriting a question into a search query in
//! the repository's own words, and HyDE (a hypothetical code snippet that
//! would answer it, searched for its likeness). Prompts and tolerant parsers.

use ken_core::Language;

use crate::Message;
use crate::message::strip_reasoning;

/// Names passed to the model at most (the best first: the caller orders them).
const MAX_VOCABULARY: usize = 150;
const MAX_VOCABULARY_CHARS: usize = 3000;

fn vocabulary_line(vocabulary: &[String]) -> String {
    let mut s = String::new();
    for (i, v) in vocabulary
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .take(MAX_VOCABULARY)
        .enumerate()
    {
        if s.len() + v.len() > MAX_VOCABULARY_CHARS {
            break;
        }
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(v);
    }
    s
}

/// Messages asking to rewrite `question` into a code-search query, using the
/// repository's own vocabulary (module and symbol names) where it fits.
pub fn rewrite_messages(question: &str, vocabulary: &[String]) -> Vec<Message> {
    let vocab = vocabulary_line(vocabulary);
    let mut system = String::from(
        "You turn a developer's question about a codebase into one search query for a code search engine (BM25 over identifiers and comments, plus embeddings).\n\
         - Keep every identifier, file name and error message from the question exactly.\n\
         - Add the repository's own names that the question most likely refers to, and close synonyms programmers use.\n\
         - Drop filler words (how, does, the, please).\n\
         - Output only the query, on one line, no quotes, no explanation.",
    );
    if !vocab.is_empty() {
        system.push_str("\n\nNames that exist in this repository: ");
        system.push_str(&vocab);
    }
    vec![
        Message::system(system),
        Message::user(format!("Question: {}\nQuery:", question.trim())),
    ]
}

/// The query in a rewrite answer: code fences, `<think>` blocks, labels
/// (`Query:`), quotes and chatter lines ("Sure! Here is…") removed. `None`
/// when nothing usable is left.
pub fn parse_rewrite(answer: &str) -> Option<String> {
    let text = strip_reasoning(answer);
    let text = first_fenced(text).unwrap_or(text);
    for line in text.lines() {
        let mut l = line.trim();
        l = strip_list_marker(l);
        if l.is_empty() || l.starts_with("```") {
            continue;
        }
        if let Some(rest) = strip_label(l) {
            l = rest;
            if l.is_empty() {
                continue;
            }
        } else if is_chatter(l) {
            continue;
        }
        let q = l.trim_matches(|c: char| {
            matches!(c, '"' | '\'' | '`' | '“' | '”' | '*') || c.is_whitespace()
        });
        if q.is_empty() {
            continue;
        }
        let q: String = q.chars().take(300).collect();
        return Some(q);
    }
    None
}

/// Messages asking for a hypothetical snippet that would answer `question`,
/// in `language` when known, using the repository's names when they fit.
pub fn hyde_messages(
    question: &str,
    language: Option<Language>,
    vocabulary: &[String],
) -> Vec<Message> {
    let lang = language
        .map(|l| l.name().to_string())
        .unwrap_or_else(|| "the repository's language".to_string());
    let vocab = vocabulary_line(vocabulary);
    let mut system = format!(
        "You write the code that most likely answers a developer's question about a codebase, as it would appear in that codebase: a function or class of at most 30 lines in {lang}, with realistic names, a docstring or comment, and no explanation. \
         It is used only to search for similar real code, so plausible beats correct. Output one fenced code block and nothing else."
    );
    if !vocab.is_empty() {
        system.push_str("\n\nNames that exist in this repository: ");
        system.push_str(&vocab);
    }
    vec![
        Message::system(system),
        Message::user(format!("Question: {}", question.trim())),
    ]
}

/// The code in a HyDE answer: the first fenced block, or else the text with
/// chatter lines at either end removed. `None` when nothing is left.
pub fn parse_hyde(answer: &str) -> Option<String> {
    let text = strip_reasoning(answer);
    if let Some(code) = first_fenced(text) {
        let code = code.trim_matches('\n');
        return (!code.trim().is_empty()).then(|| code.to_string());
    }
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty() && !is_chatter(l.trim()))?;
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty() && !is_chatter(l.trim()))?;
    let code = lines[start..=end].join("\n");
    (!code.trim().is_empty()).then_some(code)
}

/// The inside of the first fenced block (unclosed: to the end).
fn first_fenced(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
    let body = &after[body_start..];
    Some(match body.find("```") {
        Some(end) => &body[..end],
        None => body,
    })
}

fn strip_list_marker(l: &str) -> &str {
    let t = l.trim_start_matches(['-', '*', '•']).trim_start();
    if t.len() != l.len() {
        return t;
    }
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && l[digits..].starts_with(['.', ')']) {
        return l[digits + 1..].trim_start();
    }
    l
}

/// `Query: x`, `Rewritten query: x`, `Search query - x` → `x`.
fn strip_label(l: &str) -> Option<&str> {
    let lower = l.to_ascii_lowercase();
    for label in [
        "rewritten search query",
        "rewritten query",
        "search query",
        "improved query",
        "query",
        "rewritten",
        "answer",
        "output",
    ] {
        let label_len = label.len();
        if lower.starts_with(label) {
            let rest = l[label_len..].trim_start_matches(|c: char| c == '*' || c.is_whitespace());
            if let Some(r) = rest.strip_prefix([':', '-', '=']) {
                return Some(r.trim_matches(|c: char| c == '*' || c.is_whitespace()));
            }
        }
    }
    None
}

/// "Sure! Here is the rewritten query:", "I hope this helps." and the like.
fn is_chatter(l: &str) -> bool {
    let lower = l.to_ascii_lowercase();
    let starts = [
        "sure",
        "okay",
        "ok,",
        "ok!",
        "certainly",
        "of course",
        "here is",
        "here's",
        "here are",
        "i hope",
        "i would",
        "i'd ",
        "let me",
        "this query",
        "this snippet",
        "this code",
        "the rewritten",
        "the query",
        "note:",
        "explanation",
        "hope this",
    ];
    if starts.iter().any(|s| lower.starts_with(s)) {
        return true;
    }
    // A prose lead-in ("The function would be:"), not `def f(x):` / `class A:`.
    const KEYWORDS: [&str; 12] = [
        "def", "class", "fn", "func", "function", "if", "for", "while", "else", "try", "except",
        "with",
    ];
    let first = lower.split_whitespace().next().unwrap_or("");
    l.ends_with(':')
        && l.split_whitespace().count() >= 3
        && !l.contains(['(', '=', '{', '[', '<'])
        && !KEYWORDS.contains(&first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_prompt_carries_the_vocabulary() {
        let vocab: Vec<String> = ["RetryPolicy", "http_client", "backoff"]
            .map(String::from)
            .to_vec();
        let m = rewrite_messages("where do we retry failed requests?", &vocab);
        assert!(m[0].content.contains("RetryPolicy, http_client, backoff"));
        assert!(m[1].content.contains("where do we retry failed requests?"));
        let many: Vec<String> = (0..1000).map(|i| format!("name_{i}")).collect();
        let m = rewrite_messages("q", &many);
        assert!(m[0].content.len() < 4000);
    }

    #[test]
    fn rewrites_survive_chatter_and_fences() {
        for (answer, want) in [
            (
                "retry backoff RetryPolicy http_client",
                "retry backoff RetryPolicy http_client",
            ),
            (
                "Sure! Here is the rewritten query:\n\n\"retry backoff RetryPolicy\"",
                "retry backoff RetryPolicy",
            ),
            (
                "Query: retry backoff\n\nThis query targets the retry code.",
                "retry backoff",
            ),
            (
                "```\nretry backoff RetryPolicy\n```",
                "retry backoff RetryPolicy",
            ),
            (
                "<think>they mean retries</think>\n**Rewritten query:** `retry backoff`",
                "retry backoff",
            ),
            ("1. retry backoff", "retry backoff"),
        ] {
            assert_eq!(parse_rewrite(answer).as_deref(), Some(want), "{answer:?}");
        }
        assert_eq!(parse_rewrite("Sure!\n\n"), None);
        assert_eq!(parse_rewrite(""), None);
    }

    #[test]
    fn hyde_takes_the_code() {
        let m = hyde_messages("how are requests retried?", Some(Language::Python), &[]);
        assert!(m[0].content.contains("in python"));
        let a = "Here's a plausible snippet:\n```python\ndef retry(fn, attempts=3):\n    ...\n```\nThis retries.";
        assert_eq!(
            parse_hyde(a).as_deref(),
            Some("def retry(fn, attempts=3):\n    ...")
        );
        let bare = "Sure, here it is:\ndef retry(fn):\n    return fn()\nI hope this helps.";
        assert_eq!(
            parse_hyde(bare).as_deref(),
            Some("def retry(fn):\n    return fn()")
        );
        assert_eq!(parse_hyde("```\n\n```"), None);
    }
}
