//! A question read once. Every later stage of a search (each repository's
//! parameters and report reading, the symbol lists, the pins, routing
//! across repositories) reads the [`Question`] value; none reads the text
//! again for its shape.

use ken_core::ident;

use crate::issue::{self, IssueQuery};

/// What a question is, read from its text once.
#[derive(Debug, Clone)]
pub struct Question {
    /// As asked.
    pub text: String,
    /// Its identifiers, in order ([`identifiers`]): the symbol lists, the
    /// pins, routing.
    pub idents: Vec<QueryIdent>,
    /// One name (`Handler`, `Flask.run`, `` `parse_config` ``): pinned
    /// definitions are ordered by the name alone.
    pub lookup: bool,
    /// Long enough to be read as a bug report (several lines, a code
    /// block, or more than `issue_words` words; [`issue::is_issue`]).
    pub report: bool,
    /// The report parsed as written (None: not a report): title, code,
    /// frames, paths, modules.
    pub parsed: Option<IssueQuery>,
    /// A report with code in it (a code block, an indented or `>>>` line,
    /// a traceback): what was learned from commit messages may not apply
    /// (`RankParams::for_question`).
    pub has_code: bool,
}

impl Question {
    /// Read `text`; more than `issue_words` words make a report
    /// (`RankParams::issue_words`).
    pub fn read(text: &str, issue_words: usize) -> Question {
        let report = issue::is_issue(text, issue_words);
        let parsed = report.then(|| issue::parse(text));
        let has_code = parsed.as_ref().is_some_and(|q| !q.code.trim().is_empty());
        Question {
            text: text.to_string(),
            idents: identifiers(text),
            lookup: is_lookup(text),
            report,
            parsed,
            has_code,
        }
    }
}

/// A query that is one name (`Handler`, `Flask.run`, `` `parse_config` ``).
fn is_lookup(query: &str) -> bool {
    let q = query.trim().trim_matches('`');
    !q.is_empty() && !q.contains(char::is_whitespace)
}

/// An identifier found in a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryIdent {
    pub text: String,
    /// Shaped like code (`parse_config`, `AppContext`, `Flask.run`, `` `x` ``),
    /// or the only content word of a short query: its exact hits are pinned.
    pub strong: bool,
}

/// Words that frame a question about code without saying what it is about.
const FILLER: &[&str] = &[
    "called",
    "class",
    "code",
    "declared",
    "define",
    "defined",
    "definition",
    "explain",
    "find",
    "function",
    "functions",
    "implement",
    "implementation",
    "implemented",
    "implements",
    "is",
    "located",
    "look",
    "lookup",
    "me",
    "method",
    "methods",
    "purpose",
    "show",
    "struct",
    "symbol",
    "type",
    "work",
    "works",
];

fn is_filler(w: &str) -> bool {
    ident::is_stop_word(w) || FILLER.contains(&w)
}

/// The identifiers of a query, in order, without duplicates.
pub fn identifiers(query: &str) -> Vec<QueryIdent> {
    let mut out: Vec<QueryIdent> = Vec::new();
    let push = |text: &str, strong: bool, out: &mut Vec<QueryIdent>| {
        let text = text.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        if text.len() < 2 {
            return;
        }
        if let Some(existing) = out.iter_mut().find(|q| q.text == text) {
            existing.strong |= strong;
        } else {
            out.push(QueryIdent {
                text: text.to_string(),
                strong,
            });
        }
    };
    // `quoted` names
    for (i, part) in query.split('`').enumerate() {
        if i % 2 == 1 && !part.trim().is_empty() && !part.contains(' ') {
            push(part.trim_end_matches("()"), true, &mut out);
        }
    }
    // tokens with code punctuation: a.b, a::b, f()
    for tok in query.split_whitespace() {
        let t = tok.trim_matches(|c: char| {
            matches!(c, ',' | ';' | '?' | '!' | '"' | '\'' | '`' | '(' | ')')
        });
        let t = t.trim_end_matches("()");
        let dotted = (t.contains('.') || t.contains("::"))
            && t.split(['.', ':'])
                .filter(|s| !s.is_empty())
                .all(|s| s.chars().all(|c| c.is_alphanumeric() || c == '_'))
            && t.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && !t.ends_with('.');
        if dotted {
            push(t, true, &mut out);
            // the last part alone, too (`Flask.run` → `run` is weak on its own)
            if let Some(last) = t.rsplit(['.', ':']).next() {
                push(last, false, &mut out);
            }
        }
    }
    let words: Vec<&str> = ident::words(query).map(|(_, w)| w).collect();
    let content: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !is_filler(&w.to_lowercase()))
        .collect();
    let short = content.len() <= 2;
    for w in &words {
        let short_content_word =
            short && content.contains(w) && w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit());
        if ident::looks_like_identifier(w) || short_content_word {
            push(w, true, &mut out);
        } else if !is_filler(&w.to_lowercase()) && w.len() >= 4 {
            // any other content word may still name a symbol: a weak signal
            push(w, false, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strong(q: &str) -> Vec<String> {
        identifiers(q)
            .into_iter()
            .filter(|i| i.strong)
            .map(|i| i.text)
            .collect()
    }

    #[test]
    fn finds_identifiers_anywhere() {
        assert_eq!(strong("what does AppContext do"), ["AppContext"]);
        assert_eq!(strong("AppContext"), ["AppContext"]);
        assert_eq!(strong("stream_with_context"), ["stream_with_context"]);
        assert_eq!(strong("what does debug do"), ["debug"]);
        assert_eq!(strong("where is `parse_config` defined?"), ["parse_config"]);
        assert_eq!(strong("call Flask.run() twice"), ["Flask.run"]);
        assert_eq!(
            strong("fix crash in parseConfig when the file is empty"),
            ["parseConfig"]
        );
        assert!(strong("all teardown callbacks are called despite errors").is_empty());
    }

    #[test]
    fn weak_words_are_kept_as_hints() {
        let ids = identifiers("all teardown callbacks are called despite errors");
        let weak: Vec<_> = ids
            .iter()
            .filter(|i| !i.strong)
            .map(|i| i.text.as_str())
            .collect();
        assert_eq!(weak, ["teardown", "callbacks", "despite", "errors"]);
    }

    #[test]
    fn a_lookup_is_one_name() {
        assert!(is_lookup("Handler"));
        assert!(is_lookup(" `Flask.run` "));
        assert!(!is_lookup("fix has_match for the summary printer"));
        assert!(!is_lookup("  "));
    }

    #[test]
    fn a_question_is_read_once_for_every_stage() {
        let p = crate::params::RankParams::default();
        let q = Question::read("where is `parse_config` defined?", p.issue_words);
        assert!(!q.report && !q.has_code && !q.lookup && q.parsed.is_none());
        assert_eq!(q.idents[0].text, "parse_config");
        assert!(Question::read("Flask.run", p.issue_words).lookup);
        let report = "Crash on save\n\nSaving fails:\n\n```\nTraceback (most recent call last):\n  File \"src/app/save.py\", line 3, in save\nKeyError: 'x'\n```\n";
        let q = Question::read(report, p.issue_words);
        assert!(q.report && q.has_code);
        let parsed = q.parsed.as_ref().unwrap();
        assert_eq!(parsed.title, "Crash on save");
        assert_eq!(parsed.frames[0].path, "src/app/save.py");
        let prose = "one\ntwo\nthree lines of plain prose";
        let q = Question::read(prose, p.issue_words);
        assert!(q.report && !q.has_code);
    }
}
