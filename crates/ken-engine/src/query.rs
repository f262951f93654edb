//! Reading a query: which of its words name code.

use ken_core::ident;

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
}
